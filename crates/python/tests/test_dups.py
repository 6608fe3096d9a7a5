"""dups against the command line's `dups --json`, on the sample documents with planted copies."""

import random

import pyarrow as pa
import pytest

import pocketdex
from conftest import SAMPLES, json_lines


def planted(ids, texts, seed=7):
    """The samples plus, for every fifth, a copy with 3% of its words replaced, and one exact
    copy: the groups to find."""
    rng = random.Random(seed)
    out_ids, out_texts = list(ids), list(texts)
    for i in range(0, len(ids), 5):
        words = texts[i].split()
        for _ in range(max(1, len(words) * 3 // 100)):
            words[rng.randrange(len(words))] = rng.choice(["alpha", "beta", "gamma"])
        out_ids.append(ids[i] + "~copy")
        out_texts.append(" ".join(words))
    out_ids.append(ids[1] + "~same")
    out_texts.append(texts[1])
    return out_ids, out_texts


@pytest.mark.parametrize("method", [m for m, _, _ in pocketdex.methods()])
def test_dups_finds_what_the_cli_finds(tmp_path, cli, samples, method):
    import json

    import pyarrow.parquet as pq

    ids, texts = planted(*samples)
    jsonl = tmp_path / "docs.jsonl"
    with open(jsonl, "w") as out:
        for i, t in zip(ids, texts):
            out.write(json.dumps({"id": i, "text": t}) + "\n")
    rows = tmp_path / "rows.parquet"
    groups = json_lines(
        cli("dups", str(jsonl), "--method", method, "--json", "-q", "--output", str(rows), ok=(0, 1))
    )
    want = sorted(sorted(r["members"]) for r in groups if r["type"] == "group")
    found = pocketdex.dups(ids, pa.array(texts), method=method)
    assert sorted(sorted(c.members) for c in found.clusters) == want
    # The per-document rows are the CLI's Parquet file, column for column and type for type.
    assert found.to_arrow().equals(pq.read_table(rows))
    # The exact copy is always found; each cluster's representative comes first in the input.
    assert any({ids[1], ids[1] + "~same"} <= set(c.members) for c in found.clusters)
    for c in found.clusters:
        assert c.representative == c.members[0] and c.rows == sorted(c.rows)
        assert [ids[r] for r in c.rows] == c.members
        assert all(s >= found.threshold for _, _, s in c.pairs)
        assert [found.is_duplicate[r] for r in c.rows] == [False] + [True] * (len(c) - 1)
    assert sum(found.keep) == len(ids) - sum(len(c) - 1 for c in found.clusters)


def test_dups_finds_planted_copies_with_minhash_and_fuzzy(samples):
    ids, texts = planted(*samples)
    for method in ("minhash", "fuzzy"):
        found = pocketdex.dups(ids, texts, method=method, threshold=0.7)
        pairs = {frozenset((a, b)) for c in found.clusters for a, b, _ in c.pairs}
        planted_pairs = {frozenset((i[: -len("~copy")], i)) for i in ids if i.endswith("~copy")}
        # Brute force would find each; the methods' candidates must too (a 3% edit scores > 0.8).
        assert len(planted_pairs & pairs) >= 0.95 * len(planted_pairs), method


def test_dups_errors():
    with pytest.raises(ValueError, match="unknown method"):
        pocketdex.dups(["a"], ["x"], method="nope")
    with pytest.raises(ValueError, match="one length"):
        pocketdex.dups(["a", "b"], ["x"])
    found = pocketdex.dups(["a", "b"], ["", "Short text of a few words only."], method="minhash")
    assert found.clusters == [] and found.keep == [True, True]
    assert found.set_aside == [("a", "empty")]


def test_rows_without_text_weigh_nothing_as_the_cli_skips_them(samples):
    # A null or empty row is set aside and kept, but counts in no method's collection (the
    # fuzzy method weighs terms by it): the other rows score as without it, as `dups` does.
    ids, texts = samples
    ids, texts = ids[:60], texts[:60]
    edited = texts[5].split()
    edited[3] = edited[9] = "zebra"
    ids, texts = ids + ["edited"], texts + [" ".join(edited)]
    plain = pocketdex.dups(ids, texts, method="fuzzy", threshold=0.5)
    with_gaps = pocketdex.dups(["x"] + ids + ["y", "z"], [None] + texts + ["", "<p></p>"], method="fuzzy", threshold=0.5)
    assert [c.pairs for c in with_gaps.clusters] == [c.pairs for c in plain.clusters] != []
    assert [c.rows for c in with_gaps.clusters] == [[r + 1 for r in c.rows] for c in plain.clusters]
    assert with_gaps.set_aside == [("x", "no text (a null)"), ("y", "empty"), ("z", "no text (empty after removing markup)")]
    assert with_gaps.keep[0] and with_gaps.keep[-2:] == [True, True] and not with_gaps.keep[-3]
    assert len(with_gaps.to_arrow()) == len(ids) + 3


def test_the_readme_example_deduplicates_a_parquet_file(tmp_path, samples):
    import subprocess
    import sys
    from pathlib import Path

    import pyarrow.parquet as pq

    ids, texts = planted(*samples)
    pq.write_table(pa.table({"id": ids, "text": texts}), tmp_path / "docs.parquet")
    example = Path(__file__).resolve().parents[1] / "examples" / "dedup_parquet.py"
    subprocess.run(
        [sys.executable, str(example), str(tmp_path / "docs.parquet"), str(tmp_path / "out.parquet")],
        check=True,
    )
    kept = pq.read_table(tmp_path / "out.parquet").column("id").to_pylist()
    found = pocketdex.dups(ids, texts)
    assert kept == [i for i, k in zip(ids, found.keep) if k]
    assert len(kept) < len(ids) and ids[1] in kept and ids[1] + "~same" not in kept
