"""IndexBuilder and Index against the command line: the same bytes, the same hits."""

import errno
import os
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pytest

import pocketdex
from conftest import QUERIES, SAMPLES, json_lines


def build(tmp_path: Path, ids, texts, name="py.pdx", n=None, **kw) -> Path:
    b = pocketdex.IndexBuilder(**kw)
    n = len(ids) if n is None else n
    assert b.add_batch(ids, texts) == n
    out = tmp_path / name
    stats = b.write(out)
    assert stats["docs"] == n and stats["bytes"] == out.stat().st_size
    return out


def test_a_python_build_is_the_cli_build_byte_for_byte(tmp_path, cli, samples):
    ids, texts = samples
    cli("build", str(SAMPLES), "-o", str(tmp_path / "cli.pdx"), "-q")
    py = build(tmp_path, ids, texts)
    assert py.read_bytes() == (tmp_path / "cli.pdx").read_bytes()
    # One at a time, and with a size hint, the same file.
    b = pocketdex.IndexBuilder(size_hint=len(ids))
    for i, t in zip(ids, texts):
        assert b.add(i, t) is not None
    b.write(tmp_path / "one.pdx")
    assert (tmp_path / "one.pdx").read_bytes() == py.read_bytes()
    # to_bytes() is the file write() writes.
    b = pocketdex.IndexBuilder()
    b.add_batch(ids, texts)
    assert b.to_bytes() == py.read_bytes()


def test_arrow_columns_give_the_same_index_as_lists(tmp_path, samples):
    ids, texts = samples
    lists = build(tmp_path, ids, texts, "lists.pdx").read_bytes()
    half = len(texts) // 2
    variants = {
        "string": (pa.array(ids), pa.array(texts)),
        "large_string": (pa.array(ids, pa.large_string()), pa.array(texts, pa.large_string())),
        "string_view": (pa.array(ids, pa.string_view()), pa.array(texts, pa.string_view())),
        # Chunk boundaries that differ between the columns.
        "chunked": (
            pa.chunked_array([ids[:7], ids[7:]]),
            pa.chunked_array([texts[:half], texts[half:]]),
        ),
        "iterables": (iter(ids), (t for t in texts)),
    }
    for name, (i, t) in variants.items():
        assert build(tmp_path, i, t, f"{name}.pdx", n=len(ids)).read_bytes() == lists, name


def test_queries_answer_as_the_cli_does(tmp_path, cli, samples):
    ids, texts = samples
    path = build(tmp_path, ids, texts)
    index = pocketdex.Index(path)
    assert len(index) == len(ids) and ids[0] in index and "no-such-id" not in index
    queries = sorted(QUERIES.glob("*.txt"))
    assert queries
    for q in queries:
        want = [
            {k: v for k, v in r.items() if k not in ("type", "query")}
            for r in json_lines(cli("query", str(path), str(q), "--json", ok=(0, 1)))
            if r.get("type") == "hit"
        ]
        text = q.read_text()
        got = [h.to_dict() for h in index.query(text)]
        assert got == want, q.name
    # High-similarity search, as `query --similar`.
    q = QUERIES / "edited.txt"
    want = [
        {k: v for k, v in r.items() if k not in ("type", "query")}
        for r in json_lines(cli("query", str(path), str(q), "--similar", "--json", ok=(0, 1)))
        if r.get("type") == "hit"
    ]
    assert [h.to_dict() for h in index.query(q.read_text(), similar=True)] == want
    assert len(want) >= 1
    # The edited sample finds its original first.
    hits = index.query((QUERIES / "edited.txt").read_text())
    assert hits[0].id == "Jupiter.txt" and hits[0].rank == 1 and 0.9 < hits[0].score <= 1


def test_query_batch_is_query_in_order(tmp_path, samples):
    ids, texts = samples
    index = pocketdex.Index(build(tmp_path, ids, texts))
    batch = texts[:40] + [None, "", "<p>" + texts[3] + "</p>"]
    answers = index.query_batch(batch, top=5, threshold=0.3)
    assert len(answers) == len(batch)
    for text, hits in zip(batch, answers):
        assert hits == (index.query(text, top=5, threshold=0.3) if text is not None else [])
    # Every sample finds itself with score 1 (identical copies aside, by rank).
    for i, hits in enumerate(answers[:40]):
        assert ids[i] in [h.id for h in hits if h.score == 1.0]
    # Markup is removed, as the CLI removes it from files.
    assert answers[-1][0].id == ids[3]
    assert index.query_batch(pa.array(texts[:40]), top=5, threshold=0.3) == answers[:40]


def test_queries_run_in_parallel_threads(tmp_path, samples):
    """The GIL is released: four Python threads querying at once get the answers one gets."""
    ids, texts = samples
    index = pocketdex.Index(build(tmp_path, ids, texts))
    want = index.query_batch(texts)
    got = [None] * 4

    def work(k):
        got[k] = [index.query(t) for t in texts]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g == want for g in got)


def _in_a_forked_child(args):
    """A forked worker's parallel calls: a query batch, a build and dups (plain data back)."""
    path, texts, out = args
    index = pocketdex.Index(path)
    hits = [[h.id for h in hs] for hs in index.query_batch(texts)]
    b = pocketdex.IndexBuilder()
    b.add_batch([str(i) for i in range(len(texts))], texts)
    b.write(out)
    groups = len(pocketdex.dups(list(range(len(texts))), texts))
    return hits, groups


def test_processes_forked_after_a_parallel_call_still_work(tmp_path, samples):
    """multiprocessing's fork (Linux's default before Python 3.14) after the parent ran a
    parallel call: the child has the parent's memory but not its threads. It hung for ever
    while the calls ran on rayon's global pool."""
    import multiprocessing

    ids, texts = samples
    path = build(tmp_path, ids, texts)
    index = pocketdex.Index(path)
    want = [[h.id for h in hs] for hs in index.query_batch(texts)]
    groups = len(pocketdex.dups(list(range(len(texts))), texts))
    pool = multiprocessing.get_context("fork").Pool(2)
    try:
        jobs = [(str(path), texts, str(tmp_path / f"child{k}.pdx")) for k in range(4)]
        answers = pool.map_async(_in_a_forked_child, jobs).get(timeout=120)
    finally:
        pool.terminate()
    for k, (hits, g) in enumerate(answers):
        assert hits == want and g == groups
        assert (tmp_path / f"child{k}.pdx").stat().st_size > 0


def _queried_in_a_child(job):
    path, text = job
    return pocketdex.Index(path).query(text, top=3)


def test_hits_fingerprints_and_clusters_pickle_as_values(tmp_path, samples):
    """Results come back from multiprocessing's workers (and Spark's) by pickle: they could
    not be pickled at all."""
    import copy
    import multiprocessing
    import pickle

    ids, texts = samples
    path = build(tmp_path, ids, texts)
    index = pocketdex.Index(path)
    hits = index.query(texts[0], top=3)
    assert hits and pickle.loads(pickle.dumps(hits)) == hits
    assert copy.copy(hits[0]) == hits[0] and len({hits[0], copy.deepcopy(hits[0])}) == 1
    fp = pocketdex.fingerprint(texts[0])
    again = pickle.loads(pickle.dumps(fp))
    assert again == fp and again.similarity(fp) == 1.0
    clusters = pocketdex.dups(ids[:3] + ["copy"], texts[:3] + [texts[0]]).clusters
    assert clusters and pickle.loads(pickle.dumps(clusters)) == clusters
    assert len({fp, again}) == 1
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.map(_queried_in_a_child, [(str(path), texts[0])]) == [hits]
    with pytest.raises(ValueError, match="path is fuzzy, short, exact or similar"):
        pocketdex.Hit("a", 1.0, 1, 1, "elsewhere")
    # Equal hits hash alike, whatever the sign of a zero.
    zero, minus_zero = pocketdex.Hit("x", 0.0, 1, 1, "fuzzy"), pocketdex.Hit("x", -0.0, 1, 1, "fuzzy")
    assert zero == minus_zero and hash(zero) == hash(minus_zero) and len({zero, minus_zero}) == 1


def test_ids_are_ints_of_any_size_but_not_bools(tmp_path, samples):
    ids, texts = samples
    b = pocketdex.IndexBuilder()
    b.add(2**200, texts[0])
    b.add(-(2**70), texts[1])
    import enum

    class Shelf(enum.IntEnum):
        TOP = 7

    b.add(Shelf.TOP, texts[3])
    with pytest.raises(TypeError, match="an id is a str or an int, not bool"):
        b.add(True, texts[2])
    path = tmp_path / "ints.pdx"
    b.write(path)
    index = pocketdex.Index(path)
    assert str(2**200) in index and str(-(2**70)) in index and "1" not in index
    assert "7" in index and len(index) == 3


def test_an_index_set_and_shards_answer_as_one_index(tmp_path, cli, samples):
    ids, texts = samples
    set_dir = tmp_path / "archive.set"
    cli("add", str(set_dir), str(SAMPLES), "-q")
    index = pocketdex.Index(set_dir)
    assert len(index) == len(ids)
    info = index.info()
    assert info["live_documents"] == len(ids) and info["segments"]
    edited = (QUERIES / "edited.txt").read_text()
    want = [
        r["id"]
        for r in json_lines(cli("query", str(set_dir), str(QUERIES / "edited.txt"), "--json"))
        if r.get("type") == "hit"
    ]
    assert [h.id for h in index.query(edited)] == want
    # Shards from the set's schema, adopted by a new set: the same answers as one build.
    schema = pocketdex.create_set(tmp_path / "sharded.set", expected_docs=1_000_000)
    files = []
    for k, lo in enumerate(range(0, len(ids), 70)):
        b = pocketdex.IndexBuilder.like(schema, segment=True)
        b.add_batch(ids[lo : lo + 70], texts[lo : lo + 70])
        files.append(tmp_path / f"shard{k}.pdx")
        files[-1].write_bytes(b.to_bytes())
    assert pocketdex.adopt_segments(tmp_path / "sharded.set", files) == len(ids)
    one = build(tmp_path, ids, texts, "one.pdx", idf="language", expected_docs=1_000_000)
    sharded, single = pocketdex.Index(tmp_path / "sharded.set"), pocketdex.Index(one)
    assert sharded.query_batch(texts, threshold=0.2) == single.query_batch(texts, threshold=0.2)
    cli("merge", str(tmp_path / "sharded.set"), "-o", str(tmp_path / "merged.pdx"))
    assert (tmp_path / "merged.pdx").read_bytes() == one.read_bytes()
    # Adopting an id twice changes nothing.
    with pytest.raises(pocketdex.DuplicateIdError, match=repr(ids[0]).replace("'", '"')):
        pocketdex.adopt_segments(tmp_path / "sharded.set", files[:1])
    assert len(pocketdex.Index(tmp_path / "sharded.set")) == len(ids)
    # A shard of other parameters is refused.
    other = pocketdex.IndexBuilder()
    other.add_batch(["x"], [texts[0]])
    other.write(tmp_path / "other.pdx")
    with pytest.raises(ValueError, match="not a segment"):
        pocketdex.adopt_segments(tmp_path / "sharded.set", [tmp_path / "other.pdx"])


def test_several_paths_are_queried_as_one(tmp_path, samples):
    ids, texts = samples
    a = build(tmp_path, ids[:150], texts[:150], "a.pdx", idf="language", expected_docs=1000)
    b = build(tmp_path, ids[150:], texts[150:], "b.pdx", idf="language", expected_docs=1000)
    one = build(tmp_path, ids, texts, "one.pdx", idf="language", expected_docs=1000)
    both = pocketdex.Index([a, str(b)])
    assert len(both) == len(ids)
    answers = both.query_batch(texts)
    # As one index of all their documents answers, but that each hit names its index.
    unnamed = [[pocketdex.Hit(h.id, h.score, h.rank, h.codes, h.path, h.title) for h in hits]
               for hits in answers]
    assert unnamed == pocketdex.Index(one).query_batch(texts)
    held = {h.index: set() for hits in answers for h in hits}
    for hits in answers:
        for h in hits:
            held[h.index].add(h.id)
    assert held == {str(a): set(ids[:150]), str(b): set(ids[150:])}
    assert answers[0][0].to_dict()["index"] == str(a)
    assert "index=" in repr(answers[0][0]) and pickle.loads(pickle.dumps(answers[0][0])) == answers[0][0]
    assert all(h.index is None for h in pocketdex.Index(a).query(texts[0]))
    assert [i["documents"] for i in both.info()["indexes"]] == [150, len(ids) - 150]
    # A list of one path is a list too: its info has `indexes`, as for more.
    assert [i["documents"] for i in pocketdex.Index([a]).info()["indexes"]] == [150]
    assert pocketdex.Index(a).info()["documents"] == 150
    # The same index twice would answer each hit twice.
    with pytest.raises(ValueError, match="are the same index"):
        pocketdex.Index([a, tmp_path / "." / "a.pdx"])
    # The idf table copied from an index: the same weights, the same file.
    copied = build(tmp_path, ids, texts, "copied.pdx", idf=str(one), expected_docs=1000)
    assert copied.read_bytes() == one.read_bytes()


def test_fingerprints_are_the_index_codes(tmp_path, samples):
    ids, texts = samples
    index = pocketdex.Index(build(tmp_path, ids, texts, idf="language", expected_docs=1_000_000))
    fp = index.fingerprint(texts[0])
    assert fp.codes and len(fp.sketch) == 3 and fp.terms > 0
    assert fp.codes == pocketdex.fingerprint(texts[0]).codes
    assert pocketdex.Fingerprinter().fingerprint_batch([texts[0], None])[0].codes == fp.codes
    # A near copy shares a code, and the sketches estimate the query's score.
    edited = (QUERIES / "edited.txt").read_text()
    jupiter = texts[ids.index("Jupiter.txt")]
    a, b = pocketdex.fingerprint(jupiter), pocketdex.fingerprint(edited)
    assert set(a.codes) & set(b.codes)
    assert a.similarity(b) == index.query(edited)[0].score
    unrelated = pocketdex.fingerprint(texts[ids.index("Mozart.txt")] if "Mozart.txt" in ids else texts[1])
    assert a.similarity(unrelated) < 0.5


def test_errors_are_python_exceptions_with_the_cli_messages(tmp_path, cli, samples):
    ids, texts = samples
    with pytest.raises(FileNotFoundError, match="No such file") as e:
        pocketdex.Index(tmp_path / "missing.pdx")
    # Python's own form: "[Errno 2] No such file or directory: 'PATH'", the name once.
    assert str(e.value) == f"[Errno 2] No such file or directory: '{tmp_path / 'missing.pdx'}'"
    assert e.value.errno == errno.ENOENT and e.value.filename == str(tmp_path / "missing.pdx")
    (tmp_path / "text.pdx").write_text("not an index")
    with pytest.raises(pocketdex.CorruptIndexError, match="bad magic"):
        pocketdex.Index(tmp_path / "text.pdx")
    (tmp_path / "dir").mkdir()
    with pytest.raises(ValueError, match="not an index set"):
        pocketdex.Index(tmp_path / "dir")
    # Advice names the Python call, not the command line's.
    with pytest.raises(FileNotFoundError, match=r"does not exist; create one with pocketdex\.add\(path, ids, texts\) \(or, for shards, pocketdex\.create_set\(path\)\): '"):
        pocketdex.adopt_segments(tmp_path / "no.set", [tmp_path / "text.pdx"])
    with pytest.raises(ValueError, match="unknown language"):
        pocketdex.IndexBuilder(lang="xx")
    with pytest.raises(ValueError, match="idf must be"):
        pocketdex.IndexBuilder(idf="nowhere")
    german = build(tmp_path, ids[:40], texts[:40], "de.pdx", lang="de")
    with pytest.raises(ValueError, match=r"idf=.*de\.pdx: that index is in language de, not en"):
        pocketdex.IndexBuilder(idf=str(german))
    with pytest.raises(TypeError):
        pocketdex.IndexBuilder(no_such_param=1)
    b = pocketdex.IndexBuilder()
    with pytest.raises(ValueError, match="one length"):
        b.add_batch(ids[:3], texts[:2])
    with pytest.raises(TypeError, match="not one str"):
        b.add_batch("abc", "def")
    with pytest.raises(TypeError, match="str"):
        b.add_batch([1.5], ["text"])
    assert b.add("empty", "   \n") is None and b.skipped == [("empty", "empty")]
    with pytest.raises(ValueError, match="no documents to index"):
        b.write(tmp_path / "empty.pdx")
    assert not (tmp_path / "empty.pdx").exists()
    b.add(7, texts[0])
    b.write(tmp_path / "seven.pdx")
    with pytest.raises(ValueError, match="written already"):
        b.add("x", "y")
    assert "7" in pocketdex.Index(tmp_path / "seven.pdx")
    # An int id is looked up as add() named it: in decimal.
    assert 7 in pocketdex.Index(tmp_path / "seven.pdx")
    assert 8 not in pocketdex.Index(tmp_path / "seven.pdx")
    # What cannot be an id is not in it, as a dict answers.
    assert None not in pocketdex.Index(tmp_path / "seven.pdx")
    assert 2.5 not in pocketdex.Index(tmp_path / "seven.pdx")
    index = pocketdex.Index(tmp_path / "seven.pdx")
    with pytest.raises(ValueError, match="top"):
        index.query("x", top=0)
    with pytest.raises(ValueError, match="threshold"):
        index.query("x", threshold=2)


def test_a_write_to_an_unwritable_path_keeps_the_documents(tmp_path, samples):
    ids, texts = samples
    b = pocketdex.IndexBuilder()
    b.add_batch(ids, texts)
    # As `pocketdex build` reports an unwritable output before reading any document: the
    # builder keeps what was added, to write elsewhere.
    # A missing directory is what Python's own open() says it is: FileNotFoundError, errno and
    # file name set.
    with pytest.raises(FileNotFoundError, match="does not exist") as e:
        b.write(tmp_path / "no-such-dir" / "x.pdx")
    assert e.value.errno == errno.ENOENT and e.value.filename == str(tmp_path / "no-such-dir" / "x.pdx")
    (tmp_path / "plain").write_text("")
    with pytest.raises(NotADirectoryError, match="is a file, not a directory"):
        b.write(tmp_path / "plain" / "x.pdx")
    with pytest.raises(FileNotFoundError, match=r"idf=.*no-such\.pdx does not exist"):
        pocketdex.IndexBuilder(idf=tmp_path / "no-such.pdx")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        pocketdex.adopt_segments(tmp_path / "no-such.set", [tmp_path / "x.pdx"])
    assert len(b) == len(ids)
    assert b.write(tmp_path / "x.pdx")["docs"] == len(ids)
    assert len(pocketdex.Index(tmp_path / "x.pdx")) == len(ids)


def test_a_public_key_refuses_what_its_key_did_not_sign(tmp_path, cli, samples):
    """As `--public-key`: the signed file opens, an unsigned one, another key's and a set do
    not (SignatureError); the key is a file's path or its text."""
    ids, texts = samples
    path = build(tmp_path, ids, texts)
    unsigned = build(tmp_path, ids, texts, "unsigned.pdx")
    cli("keygen", "-o", str(tmp_path / "k"))
    cli("keygen", "-o", str(tmp_path / "other"))
    cli("sign", str(path), "--key", str(tmp_path / "k.key"))
    key = tmp_path / "k.pub"
    for trusted in [key, str(key), key.read_text(), key.read_text().split()[-1]]:
        index = pocketdex.Index(path, public_key=trusted)
        assert [h.id for h in index.query(texts[0])][:1] == [ids[0]]
    with pytest.raises(pocketdex.SignatureError):
        pocketdex.Index(unsigned, public_key=key)
    with pytest.raises(pocketdex.SignatureError):
        pocketdex.Index(path, public_key=tmp_path / "other.pub")
    with pytest.raises(pocketdex.SignatureError, match="not signed"):
        pocketdex.Index([path, unsigned], public_key=key)
    pocketdex.create_set(tmp_path / "s.set")
    with pytest.raises(pocketdex.SignatureError, match="index sets are not signed"):
        pocketdex.Index(tmp_path / "s.set", public_key=key)
    with pytest.raises(FileNotFoundError, match="no such file"):
        pocketdex.Index(path, public_key=tmp_path / "nope.pub")
    with pytest.raises(ValueError):
        pocketdex.Index(path, public_key="pocketdex-public-key-ed25519 123")


def test_a_resolution_of_three_numbers_is_the_cli_one(tmp_path, cli, samples):
    ids, texts = samples
    # As `build --resolution B,S,R[,Y]`: the rows of the similar path may be left out.
    cli("build", str(SAMPLES), "-o", str(tmp_path / "cli.pdx"), "-q", "--resolution", "4,1,2")
    three = build(tmp_path, ids, texts, "three.pdx", resolution=(4, 1, 2))
    four = build(tmp_path, ids, texts, "four.pdx", resolution=(4, 1, 2, None))
    assert three.read_bytes() == four.read_bytes() == (tmp_path / "cli.pdx").read_bytes()
    with pytest.raises(TypeError):
        pocketdex.IndexBuilder(resolution=(4, 1))  # type: ignore[arg-type]


def test_a_damaged_index_never_answers_wrongly(tmp_path, samples):
    ids, texts = samples
    path = build(tmp_path, ids, texts)
    data = bytearray(path.read_bytes())
    want = pocketdex.Index(path).query_batch(texts)
    # Flip one byte in each of many places: every query either answers as before or raises.
    step = max(len(data) // 97, 1)
    wrong = 0
    for at in range(64, len(data), step):
        bad = bytearray(data)
        bad[at] ^= 0x41
        (tmp_path / "bad.pdx").write_bytes(bytes(bad))
        try:
            index = pocketdex.Index(tmp_path / "bad.pdx")
        except pocketdex.CorruptIndexError:
            continue
        with pytest.raises(pocketdex.CorruptIndexError):
            index.verify()
        for text, hits in zip(texts, want):
            try:
                got = index.query(text)
            except pocketdex.CorruptIndexError:
                continue
            wrong += got != hits
    assert wrong == 0


def test_a_damaged_segment_is_a_corrupt_index(tmp_path, cli, samples):
    """A set's damaged segment raises CorruptIndexError, as a damaged file does, naming it."""
    ids, texts = samples
    set_dir = tmp_path / "archive.set"
    cli("add", str(set_dir), str(SAMPLES), "-q")
    segment = next(set_dir.glob("seg-*.pdx"))
    data = bytearray(segment.read_bytes())
    for at in (len(data) // 2, len(data) - 200, 200):
        bad = bytearray(data)
        bad[at] ^= 0x41
        segment.write_bytes(bytes(bad))
        with pytest.raises(pocketdex.CorruptIndexError, match=segment.name):
            pocketdex.Index(set_dir).verify()
    segment.write_bytes(bytes(data))
    pocketdex.Index(set_dir).verify()


def test_info_reads_the_file_opened_after_a_change_of_directory(tmp_path, samples, monkeypatch):
    ids, texts = samples
    build(tmp_path, ids, texts)
    monkeypatch.chdir(tmp_path)
    index = pocketdex.Index("py.pdx")
    monkeypatch.chdir("/")
    info = index.info()
    assert info["documents"] == len(ids) and info["file"] == "py.pdx"


def hit_sets(index, texts):
    """Per text, its hits as a set of (id, score): the same whatever numbers the documents got."""
    return [sorted((h.id, h.score) for h in hits) for hits in index.query_batch(texts)]


def test_threads_sharing_a_builder_take_turns(tmp_path, samples):
    """One builder fed from a thread pool: the calls wait for each other (no "Already
    borrowed"), and the index holds every document, as one fed the same batches in turn."""
    ids, texts = samples
    batches = [(ids[k::12], texts[k::12]) for k in range(12)]
    one = pocketdex.IndexBuilder()
    for i, t in batches:
        one.add_batch(i, t)
    one.write(tmp_path / "one.pdx")
    want = pocketdex.Index(tmp_path / "one.pdx")

    shared = pocketdex.IndexBuilder()
    singly = pocketdex.IndexBuilder()
    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(lambda b: shared.add_batch(*b), batches)) == len(ids)
        numbers = list(pool.map(singly.add, ids, texts))
    # Each add got a number of its own.
    assert sorted(numbers) == list(range(len(ids)))
    for name, b in (("batches", shared), ("singly", singly)):
        assert len(b) == len(ids) and b.skipped == []
        b.write(tmp_path / f"{name}.pdx")
        index = pocketdex.Index(tmp_path / f"{name}.pdx")
        assert len(index) == len(ids) and all(i in index for i in ids), name
        assert hit_sets(index, texts) == hit_sets(want, texts), name


def test_a_write_racing_adds_comes_before_or_after_each(tmp_path, samples):
    """A write (or to_bytes) from one thread while others add: each add either comes first and
    is in the index, or finds the builder written; nothing else is raised."""
    ids, texts = samples
    for finish in ("write", "to_bytes"):
        b = pocketdex.IndexBuilder()
        b.add_batch(ids[:20], texts[:20])
        start = threading.Barrier(5)
        added = []

        def add_singly(k):
            start.wait()
            for i, t in zip(ids[20 + k : 100 : 2], texts[20 + k : 100 : 2]):
                try:
                    b.add(i, t)
                    added.append(i)
                except ValueError as e:
                    assert "written already" in str(e)

        def add_batches(k):
            start.wait()
            for lo in range(100 + k * 10, len(ids), 20):
                batch = (ids[lo : lo + 10], texts[lo : lo + 10])
                try:
                    assert b.add_batch(*batch) == len(batch[0])
                    added.extend(batch[0])
                except ValueError as e:
                    assert "written already" in str(e)

        path = tmp_path / f"{finish}.pdx"

        def finish_it():
            start.wait()
            if finish == "write":
                b.write(path)
            else:
                path.write_bytes(b.to_bytes())

        with ThreadPoolExecutor(5) as pool:
            jobs = [pool.submit(add_singly, 0), pool.submit(add_singly, 1)]
            jobs += [pool.submit(add_batches, 0), pool.submit(add_batches, 1)]
            jobs.append(pool.submit(finish_it))
            for j in jobs:
                j.result()
        index = pocketdex.Index(path)
        # Exactly the documents added before the write, the batches whole.
        assert sorted(ids[:20] + added) == sorted(i for i in ids if i in index)
        assert len(index) == 20 + len(added)
        with pytest.raises(ValueError, match="written already"):
            b.add("late", "a text")


def test_a_builder_used_from_inside_its_own_call_refuses(samples):
    """An iterator given to add_batch that calls the builder again (the same thread): an error
    for that call, not a wait for itself; the rows before it are added."""
    ids, texts = samples
    b = pocketdex.IndexBuilder()
    seen = []

    def inner_texts():
        yield texts[0]
        seen.append(repr(b))
        b.add("inner", texts[1])
        yield texts[2]

    with pytest.raises(RuntimeError, match="in use"):
        b.add_batch(["a", "b"], inner_texts())
    assert seen == ["<pocketdex.IndexBuilder: in use>"]
    assert len(b) == 1 and b.add("c", texts[3]) == 1


def test_paths_may_be_str_or_path_like(tmp_path, samples, monkeypatch):
    """Every parameter that takes a path takes a str or any os.PathLike, to the same effect."""
    ids, texts = samples

    class Fspath:
        """An os.PathLike that is not a pathlib.Path."""

        def __init__(self, path):
            self.path = str(path)

        def __fspath__(self):
            return self.path

    kw = dict(idf="language", expected_docs=1000)
    # write(path)
    paths = [tmp_path / "w.pdx", str(tmp_path / "ws.pdx"), Fspath(tmp_path / "wf.pdx")]
    for path in paths:
        b = pocketdex.IndexBuilder(**kw)
        b.add_batch(ids[:150], texts[:150])
        b.write(path)
    index = tmp_path / "w.pdx"
    data = index.read_bytes()
    assert (tmp_path / "ws.pdx").read_bytes() == data == (tmp_path / "wf.pdx").read_bytes()
    # idf=: the path of an index to copy the table from.
    full = build(tmp_path, ids, texts, "full.pdx", **kw).read_bytes()
    for idf in (index, str(index), Fspath(index)):
        copied = build(tmp_path, ids, texts, "idf.pdx", idf=idf, expected_docs=1000)
        assert copied.read_bytes() == full
    # A PathLike is always a path, even one named as a keyword; a str is the keyword.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="collection is none of them"):
        pocketdex.IndexBuilder(idf=Path("collection"))
    german = build(tmp_path, ids[:40], texts[:40], "de.pdx", lang="de")
    os.symlink(german, tmp_path / "language")
    with pytest.raises(ValueError, match="that index is in language de, not en"):
        pocketdex.IndexBuilder(idf=Path("language"))
    assert build(tmp_path, ids, texts, "kw.pdx", **kw).read_bytes() == full
    with pytest.raises(TypeError, match="idf must be .* or the path of an index file"):
        pocketdex.IndexBuilder(idf=3)  # type: ignore[arg-type]
    # like(index): an index file, or a set.
    for like in (index, str(index), Fspath(index)):
        b = pocketdex.IndexBuilder.like(like)
        b.add_batch(ids[:150], texts[:150])
        assert b.to_bytes() == data
    # Index(path), and a list of paths.
    want = pocketdex.Index(str(index)).query_batch(texts)
    for path in (index, Fspath(index), [index], [Fspath(index)]):
        assert pocketdex.Index(path).query_batch(texts) == want
    want = pocketdex.Index(tmp_path / "full.pdx").query_batch(texts)
    # create_set(path), IndexBuilder.like(set), adopt_segments(path, files).
    for name, make in (("str", str), ("path", Path), ("fspath", Fspath)):
        set_dir = tmp_path / f"{name}.set"
        pocketdex.create_set(make(set_dir), expected_docs=1000)
        shards = []
        for k, lo in enumerate((0, 150)):
            b = pocketdex.IndexBuilder.like(make(set_dir), segment=True)
            b.add_batch(ids[lo : lo + 150], texts[lo : lo + 150])
            shards.append(tmp_path / f"{name}-{k}.pdx")
            shards[-1].write_bytes(b.to_bytes())
        assert pocketdex.adopt_segments(make(set_dir), [make(s) for s in shards[:1]]) == 150
        assert pocketdex.adopt_segments(make(set_dir), make(shards[1])) == len(ids)
        assert pocketdex.Index(make(set_dir)).query_batch(texts) == want


def test_similar_on_an_index_without_the_similar_path_warns(tmp_path, samples):
    # As `query --similar` warns: such an index finds with similar=True what it finds without.
    ids, texts = samples
    b = pocketdex.IndexBuilder(similar_bands=0)
    b.add_batch(ids, texts)
    b.write(tmp_path / "plain.pdx")
    index = pocketdex.Index(tmp_path / "plain.pdx")
    text = texts[0]
    with pytest.warns(UserWarning, match="no similar path"):
        similar = index.query(text, similar=True)
    with pytest.warns(UserWarning, match="no similar path"):
        index.query_batch([text], similar=True)
    assert [h.id for h in similar] == [h.id for h in index.query(text, threshold=0.4)]


def test_write_never_replaces_a_file_that_is_not_an_index(tmp_path, samples):
    ids, texts = samples
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me")
    b = pocketdex.IndexBuilder()
    b.add_batch(ids[:5], texts[:5])
    with pytest.raises(ValueError, match="exists and is not a pocketdex index"):
        b.write(notes)
    assert notes.read_text() == "keep me"
    # The builder is kept, and an index is written over an index.
    b.write(tmp_path / "a.pdx")
    again = pocketdex.IndexBuilder()
    again.add_batch(ids[:5], texts[:5])
    assert again.write(tmp_path / "a.pdx")["docs"] == 5


def test_indexes_of_other_settings_are_noted_when_opened_together(tmp_path, samples):
    import warnings

    ids, texts = samples
    # Shards built alike (the language's idf, the same expected size) answer as one index:
    # nothing to say.
    en = build(tmp_path, ids[:150], texts[:150], "en.pdx", idf="language", expected_docs=1000)
    en2 = build(tmp_path, ids[150:], texts[150:], "en2.pdx", idf="language", expected_docs=1000)
    de = build(tmp_path, ids[150:], texts[150:], "de.pdx", lang="de", idf="language", expected_docs=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pocketdex.Index([en, en2])
    with pytest.warns(UserWarning, match="built with other settings"):
        both = pocketdex.Index([en, de])
    assert both.query(texts[0])[0].id == ids[0]
