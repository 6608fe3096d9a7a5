#!/usr/bin/env python3
"""selftest.py - checks truth.py and recall.py.

  scripts/oracle/selftest.py [--dir /tmp/pocketdex-oracle-selftest] [--licenses DIR]

1. tokenizer unit checks (HTML stripping, casefold, digits, stopwords, bad UTF-8)
2. builds a synthetic corpus (real-looking texts + edited copies, an HTML copy,
   German text, invalid UTF-8, nested dirs, a symlink, a .jsonl twin), runs
   truth.py --min 0.05 and compares every pair against a naive pure-Python
   brute force (own tokenizer, dict tf-idf, all-pairs loop, set Jaccard)
3. same brute-force comparison on /usr/share/common-licenses
4. recall.py on a hand-made pairs/hits pair with hand-computed expected numbers
Exits non-zero on the first failure.
"""
from __future__ import annotations

import argparse
import html
import itertools
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import truth  # noqa: E402

PY = sys.executable

EN = [
    """The harbour town woke slowly that morning. Fishing boats returned with the tide,
their hulls heavy with mackerel and cod, while gulls circled above the market square.
Shopkeepers rolled up their shutters and the baker set out trays of warm bread.""",
    """Railway engineers in the nineteenth century faced a difficult problem: how to carry
heavy locomotives across wide rivers without building bridges that would collapse under
their own weight. Iron girders, and later steel trusses, offered a practical answer.""",
    """Photosynthesis converts light energy into chemical energy. Chlorophyll molecules in
the leaves absorb sunlight, and the plant uses that energy to combine carbon dioxide and
water into glucose, releasing oxygen as a by-product of the reaction.""",
    """The committee reviewed the quarterly budget and noted that spending on maintenance
had exceeded the forecast by twelve percent. Members agreed to postpone the purchase of
new vehicles until the auditors had finished their examination of the accounts.""",
    """Medieval monasteries preserved many classical manuscripts. Monks copied texts by hand
in cold scriptoria, decorating initial letters with gold leaf and vivid pigments ground
from minerals, plants and occasionally insects imported from distant lands.""",
    """A good sourdough starter needs flour, water, patience and a stable temperature.
Feed it every day, discard part of it before each feeding, and within a week the bubbles
and the sour smell will tell you that wild yeast and bacteria have settled in.""",
]
DE = [
    """Die Straße vor dem alten Rathaus wurde im Frühjahr vollständig erneuert. Anwohner
beklagten sich über den Lärm der Baumaschinen, doch nach drei Monaten konnten Fußgänger
und Radfahrer die breiten Gehwege und die neuen Bäume genießen.""",
    """Im Mittelalter war die Hanse ein mächtiger Bund von Kaufleuten und Städten. Schiffe
brachten Getreide, Pelze, Wachs und Salz über die Ostsee, und in Lübeck, Danzig und
Bergen entstanden prächtige Kontore mit eigenen Gesetzen und Gerichten.""",
]


def fail(msg: str):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def ok(msg: str):
    print(f"ok: {msg}")


# ----------------------------------------------------------------------------
# 1. tokenizer unit checks


def unit_checks():
    stop = frozenset({"the", "and", "of"})
    cw = truth.content_words
    cases = [
        ("The cat and THE Dog", ["cat", "dog"]),
        ("Straße STRASSE strasse", ["strasse", "strasse", "strasse"]),
        ("año 2024 1999x x_1 __ 3.14 42", ["año", "1999x", "x_1"]),
        ("naïve café résumé", ["naïve", "café", "résumé"]),
        ("Grüße aus Köln; ÜBER-Größe", ["grüsse", "aus", "köln", "über", "grösse"]),
        ("Ωμέγα δέλτα", ["ωμέγα", "δέλτα"]),
        ("of of the", []),
    ]
    for text, want in cases:
        got = cw(text, stop)
        if got != want:
            fail(f"content_words({text!r}) = {got}, want {want}")
    h = ("<!DOCTYPE html><html><head><title>Page Title</title><style>p{color:red} bodytext</style>"
         "<script>var hidden = 'secretword';</script></head><body><p>Hello&nbsp;<b>big</b>"
         "<i>world</i> &amp; caf&eacute;</p><!-- comment word --><br/>end</body></html>")
    if not truth.looks_like_html(None, h) or truth.looks_like_html("x.txt", "plain <b>text</b>"):
        fail("looks_like_html")
    if not truth.looks_like_html("x.HTM", "no tags at all"):
        fail("looks_like_html by extension")
    got = cw(truth.strip_html(h), stop)
    want = ["page", "title", "hello", "big", "world", "café", "end"]
    if got != want:
        fail(f"strip_html -> {got}, want {want}")
    bad = b"caf\xc3\xa9 \xff\xfe broken\xc3 bytes".decode("utf-8", errors="replace")
    if cw(bad, stop) != ["café", "broken", "bytes"]:
        fail(f"invalid utf-8 -> {cw(bad, stop)}")
    ok("tokenizer / HTML / casefold / invalid UTF-8 unit checks")


# ----------------------------------------------------------------------------
# 2. synthetic corpus


def edit_words(text: str, rng: random.Random, p_del=0.0, p_sub=0.0) -> str:
    words = text.split()
    pool = "river lantern copper meadow violin granite orbit pepper saddle tunnel".split()
    out = []
    for w in words:
        r = rng.random()
        if r < p_del:
            continue
        if r < p_del + p_sub:
            out.append(rng.choice(pool))
        else:
            out.append(w)
    return " ".join(out)


def build_corpus(root: str) -> None:
    if os.path.exists(root):
        shutil.rmtree(root)
    rng = random.Random(7)

    def w(rel, data):
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)

    # originals: 2-3 paragraphs each
    origs = {}
    for i in range(len(EN)):
        txt = "\n\n".join([EN[i], EN[(i + 1) % len(EN)]]) if i % 2 else EN[i]
        origs[f"en/orig{i}.txt"] = txt
    origs["de/rathaus.txt"] = DE[0] + "\n\n" + DE[1]
    origs["de/hanse.txt"] = DE[1]
    for k, v in origs.items():
        w(k, v)
    t0, t1 = origs["en/orig0.txt"], origs["en/orig1.txt"]
    w("copies/exact/orig0.txt", t0)
    w("copies/del5.txt", edit_words(t1, rng, p_del=0.05))
    w("copies/del20.txt", edit_words(t1, rng, p_del=0.20))
    w("copies/sub10.txt", edit_words(t1, rng, p_sub=0.10))
    w("copies/sub40.txt", edit_words(t1, rng, p_sub=0.40))
    w("copies/half.txt", " ".join(t1.split()[: len(t1.split()) // 2]))
    w("copies/appended.txt", origs["en/orig3.txt"] + "\n\n" + EN[4] + "\n\n" + EN[5])
    paras = origs["en/orig3.txt"].split("\n\n")
    w("copies/shuffled.txt", "\n\n".join(reversed(paras)))
    w("copies/upper.txt", origs["en/orig4.txt"].upper())
    w("html/orig2.html",
      "<!DOCTYPE html>\n<html><head><style>.x { zebra: quokka; }</style>"
      "<script>function platypus(){ return 'narwhal axolotl'; }</script></head><body>\n"
      + "".join(f"<p>{html.escape(p)}</p>\n" for p in origs["en/orig2.txt"].split("\n\n"))
      + "</body></html>\n")
    w("html/orig2-noext", "<html><body><div>" + html.escape(origs["en/orig2.txt"]) + "</div></body></html>")
    w("bad/orig5-latin1.txt", origs["en/orig5.txt"].encode("utf-8").replace(b"flour", b"fl\xf6ur\xff"))
    w("de/rathaus-edit.txt", edit_words(origs["de/rathaus.txt"], rng, p_sub=0.1).replace("Straße", "STRASSE"))
    w("tiny/empty.txt", "")
    w("tiny/stop-only.txt", "the and of The AND")
    w("tiny/numbers.txt", "42 1999 3.14159")
    w("tiny/two-words.txt", "mackerel harbour")
    w("tiny/two-words-copy.txt", "Mackerel, harbour!")
    os.symlink("../en/orig0.txt", os.path.join(root, "copies", "link-to-orig0.txt"))
    # jsonl twin of part of the corpus
    with open(root + ".jsonl", "w", encoding="utf-8") as f:
        for k in sorted(origs):
            f.write(json.dumps({"id": k, "text": origs[k]}, ensure_ascii=False) + "\n")
        f.write(json.dumps({"id": "j/titled", "title": "Harbour", "text": t0}) + "\n")
        f.write(json.dumps({"id": "j/html", "text": "<html><body><p>" + html.escape(t0) + "</p></body></html>"}) + "\n")


# ----------------------------------------------------------------------------
# brute force (independent of truth.py internals)


def bf_strip_html(text: str) -> str:
    text = re.sub(r"(?is)<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->", " ", text)
    text = re.sub(r"<[^>]*>", " ", text)
    return html.unescape(text)


def bf_tokens(text: str, stop) -> list[str]:
    toks = [t.casefold() for t in re.findall(r"\w+", text)]
    return [t for t in toks if t not in stop and re.search(r"[^\W\d_]", t)]


def bf_docs(inp: str, stop, follow=False):
    docs = {}
    if inp.endswith(".jsonl"):
        for line in open(inp, encoding="utf-8"):
            if line.strip():
                o = json.loads(line)
                t = o.get("text", "")
                if o.get("title"):
                    t = o["title"] + "\n" + t
                if re.search(r"(?i)<(!doctype\s+html|html|head|body)\b", t[:4096]):
                    t = bf_strip_html(t)
                docs[str(o["id"])] = bf_tokens(t, stop)
        return docs
    for dp, _, names in os.walk(inp, followlinks=follow):
        for n in names:
            p = os.path.join(dp, n)
            if os.path.islink(p) and not follow:
                continue
            t = open(p, "rb").read().decode("utf-8", errors="replace")
            if n.lower().endswith((".html", ".htm")) or re.search(r"(?i)<(!doctype\s+html|html|head|body)\b", t[:4096]):
                t = bf_strip_html(t)
            docs[os.path.relpath(p, inp).replace(os.sep, "/")] = bf_tokens(t, stop)
    return docs


def bf_pairs(docs: dict, min_cos: float):
    n = len(docs)
    df = Counter()
    for toks in docs.values():
        df.update(set(toks))
    vecs = {}
    for d, toks in docs.items():
        v = {t: c * math.log(n / df[t]) for t, c in Counter(toks).items()}
        v = {t: x for t, x in v.items() if x != 0}
        norm = math.sqrt(sum(x * x for x in v.values()))
        vecs[d] = {t: x / norm for t, x in v.items()} if norm else {}

    def shingles(toks):
        if not toks:
            return set()
        if len(toks) < 3:
            return {tuple(toks)}
        return {tuple(toks[i:i + 3]) for i in range(len(toks) - 2)}

    out = {}
    for a, b in itertools.combinations(sorted(docs), 2):
        va, vb = vecs[a], vecs[b]
        cos = sum(x * vb.get(t, 0.0) for t, x in va.items())
        if cos >= min_cos - 1e-9:
            sa, sb = shingles(docs[a]), shingles(docs[b])
            jac = len(sa & sb) / len(sa | sb) if (sa or sb) else 0.0
            out[(a, b)] = (cos, jac)
    return out


def read_pairs(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        next(f)
        for line in f:
            a, b, c, j = line.rstrip("\n").split("\t")
            if not a < b:
                fail(f"{path}: pair not ordered: {a} {b}")
            out[(a, b)] = (float(c), float(j))
    return out


def compare(inp: str, work: str, stopfile: str, min_cos: float, extra=(), label=""):
    out = os.path.join(work, f"pairs-{label}.tsv")
    cmd = [PY, os.path.join(HERE, "truth.py"), inp, "--stopwords", stopfile,
           "--min", str(min_cos), "-o", out, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        fail(f"{' '.join(cmd)}\n{r.stderr}")
    got = read_pairs(out)
    stop = truth.load_stopwords(argparse.Namespace(no_stopwords=False, stopwords=stopfile, lang="en"))[0]
    docs = bf_docs(inp, stop, follow="--follow-symlinks" in extra)
    want = bf_pairs(docs, min_cos)
    if set(got) != set(want):
        fail(f"{label}: pair sets differ: only truth.py {sorted(set(got) - set(want))[:5]}, "
             f"only brute force {sorted(set(want) - set(got))[:5]}")
    worst_c = max((abs(got[k][0] - want[k][0]) for k in got), default=0)
    worst_j = max((abs(got[k][1] - want[k][1]) for k in got), default=0)
    if worst_c > 2e-6 or worst_j > 2e-6:
        fail(f"{label}: values differ (max |dcos| {worst_c}, |djac| {worst_j})")
    # the .docs side file must agree on token counts
    with open(out + ".docs", encoding="utf-8") as f:
        next(f)
        toks = {l.split("\t")[0]: int(l.split("\t")[1]) for l in f}
    if toks != {d: len(t) for d, t in docs.items()}:
        fail(f"{label}: .docs token counts differ from brute force")
    ok(f"{label}: {len(docs)} docs, {len(got)} pairs with cosine >= {min_cos} identical to brute force "
       f"(max |dcos| {worst_c:.1e}, |djac| {worst_j:.1e})")
    return got


def expect(pairs, a, b, lo, hi, what="cosine"):
    k = (a, b) if a < b else (b, a)
    if k not in pairs:
        if lo > 0:
            fail(f"missing pair {k}")
        return
    v = pairs[k][0 if what == "cosine" else 1]
    if not (lo <= v <= hi):
        fail(f"{what}{k} = {v}, expected in [{lo}, {hi}]")


# ----------------------------------------------------------------------------
# 4. recall.py on hand-made data


def recall_check(work: str):
    pairs = os.path.join(work, "hand.tsv")
    with open(pairs, "w") as f:
        f.write("a\tb\tcosine\tjaccard3\n")
        f.write("A\tB\t0.990000\t0.9\n")   # found both ways
        f.write("A\tC\t0.920000\t0.5\n")   # found only A->C
        f.write("B\tC\t0.850000\t0.4\n")   # not found
        f.write("C\tD\t0.550000\t0.1\n")   # found D->C ; C queried, D not
        f.write("E\tG\t0.970000\t0.8\n")   # neither queried -> excluded
        f.write("A\tweird\\tid\t0.650000\t0.2\n")  # escaped id, found A->weird<TAB>id
    with open(pairs + ".docs", "w") as f:
        f.write("id\ttokens\tterms\thtml\n")
        for d in ["A", "B", "C", "D", "E", "weird\\tid"]:
            f.write(f"{d}\t10\t10\t0\n")
    hits = os.path.join(work, "hand.jsonl")
    P = "data/dev/x/"
    rows = [
        {"type": "hit", "query": P + "A", "id": "A", "score": 1.0},
        {"type": "hit", "query": P + "A", "id": "B", "score": 0.95},
        {"type": "hit", "query": P + "A", "id": "C", "score": 0.85},
        {"type": "hit", "query": P + "A", "id": "weird\tid", "score": 0.5},
        {"type": "hit", "query": P + "A", "id": "F", "score": 0.92},      # false hit (not in truth)
        {"type": "hit", "query": P + "A", "id": "B", "score": 0.95},      # duplicate line
        {"type": "summary", "query": P + "A", "hits": 5},                # ignored, no id
        {"query": P + "B", "id": "A", "score": 0.97},                     # no type: still a hit
        {"type": "hit", "query": P + "B", "id": "B", "score": 0.96},      # self second
        {"type": "hit", "query": P + "C", "id": "C", "score": 1.0},
        {"type": "hit", "query": "./" + P + "D", "id": "C", "score": 0.6},
        {"type": "hit", "query": P + "D", "id": "D", "score": 1.0},
        {"type": "stats", "elapsed_ms": 3},
    ]
    with open(hits, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
        f.write("not json\n")
    r = subprocess.run([PY, os.path.join(HERE, "recall.py"), "--pairs", pairs, "--hits", hits,
                        "--strip-prefix", P, "--json", "--show", "3"], capture_output=True, text=True)
    if r.returncode:
        fail(f"recall.py: {r.stderr}")
    j = json.loads(r.stdout)
    c = j["counts"]
    checks = [
        (c["queries"], 4), (c["hit_lines"], 11), (c["ignored_lines"], 2), (c["bad_json_lines"], 1),
        (c["distinct_non_self_hits"], 6), (c["queries_not_in_truth_docs"], 0),
        (j["self_first"]["self_first"], 2), (j["self_first"]["self_anywhere"], 4),
        # pairs with >=1 queried endpoint: AB AC BC CD A-weird = 5; either-found: AB AC CD Aw = 4
        (j["recall"]["all"]["either_den"], 5), (j["recall"]["all"]["either"], 4),
        # both endpoints queried: AB AC BC CD = 4; both ways: AB only
        (j["recall"]["all"]["both_den"], 4), (j["recall"]["all"]["both"], 1),
        (j["recall"][">=0.95"]["either"], 1), (j["recall"][">=0.95"]["either_den"], 1),
        (j["recall"][">=0.90"]["either"], 2), (j["recall"][">=0.90"]["either_den"], 2),
        (j["recall"]["[0.80,0.90)"]["either"], 0), (j["recall"]["[0.80,0.90)"]["either_den"], 1),
        (j["recall"]["[0.50,0.60)"]["either"], 1), (j["recall"]["[0.60,0.70)"]["either"], 1),
        # non-self distinct hits: A->B(.95) A->C(.85) A->weird(.5) A->F(.92) B->A(.97) D->C(.6)
        (j["precision"]["all"]["hits"], 6), (j["precision"]["all"]["cos>=0.8"], 3),
        (j["precision"]["all"]["cos>=0.5"], 5),
        (j["precision"]["score>=0.9"]["hits"], 3), (j["precision"]["score>=0.9"]["cos>=0.8"], 2),
        (j["precision"]["0.8<=score<0.9"]["hits"], 1), (j["precision"]["0.8<=score<0.9"]["cos>=0.8"], 1),
        (j["precision"]["score<0.8"]["hits"], 2), (j["precision"]["score<0.8"]["cos>=0.8"], 0),
        (j["precision"]["score<0.8"]["cos>=0.5"], 2), (j["precision"]["all"]["unknown_id"], 1),
        (j["missed_pairs"][0]["a"], "A"), (j["missed_pairs"][0]["b"], "C"),
        (j["missed_pairs"][0]["found"], "a->b only"), (j["false_hits"][0]["id"], "F"),
    ]
    for i, (got, want) in enumerate(checks):
        if got != want:
            fail(f"recall.py check #{i}: got {got!r}, want {want!r}\n{json.dumps(j, indent=1)}")
    # --k 2: A keeps only A,B ; so A->C lost
    r = subprocess.run([PY, os.path.join(HERE, "recall.py"), "--pairs", pairs, "--hits", hits,
                        "--strip-prefix", P, "--json", "--k", "2"], capture_output=True, text=True)
    j = json.loads(r.stdout)
    if (j["recall"]["all"]["either"], j["recall"][">=0.90"]["either"]) != (2, 1):
        fail(f"--k 2: {j['recall']['all']}")
    # --strip-suffix: same hits with ".txt" appended to every query path
    hits2 = os.path.join(work, "hand-suffix.jsonl")
    with open(hits2, "w") as f:
        for r in rows:
            r = dict(r)
            if "query" in r:
                r["query"] += ".txt"
            f.write(json.dumps(r) + "\n")
        f.write("not json\n")
    r = subprocess.run([PY, os.path.join(HERE, "recall.py"), "--pairs", pairs, "--hits", hits2,
                        "--strip-prefix", P, "--strip-suffix", ".txt", "--json"], capture_output=True, text=True)
    j2 = json.loads(r.stdout)
    r = subprocess.run([PY, os.path.join(HERE, "recall.py"), "--pairs", pairs, "--hits", hits,
                        "--strip-prefix", P, "--json"], capture_output=True, text=True)
    j1 = json.loads(r.stdout)
    for j in (j1, j2):
        j.pop("hits_file")
    if j1 != j2:
        fail("--strip-suffix changes the result")
    # table output runs
    r = subprocess.run([PY, os.path.join(HERE, "recall.py"), "--pairs", pairs, "--hits", hits,
                        "--strip-prefix", P, "--show", "2"], capture_output=True, text=True)
    if r.returncode or "self-first: 2/4" not in r.stdout:
        fail(f"table output:\n{r.stdout}{r.stderr}")
    ok(f"recall.py: {len(checks) + 3} hand-computed checks match (incl. --k, escaping, prefixes, suffix)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/pocketdex-oracle-selftest")
    ap.add_argument("--licenses", default="/usr/share/common-licenses")
    ap.add_argument("--stopwords", default=None, help="default: reference-corpus/stopwords/en.txt")
    args = ap.parse_args()
    repo = os.path.normpath(os.path.join(HERE, "..", ".."))
    stop_en = args.stopwords or os.path.join(repo, "reference-corpus", "stopwords", "en.txt")
    if not os.path.isfile(stop_en):
        stop_en = os.path.join(args.dir + "-stop.txt")
        with open(stop_en, "w") as f:
            f.write("the\nand\nof\na\nto\nin\nis\nthat\nwith\nby\nas\nfor\nit\nits\n")
    os.makedirs(args.dir + "-work", exist_ok=True)
    work = args.dir + "-work"

    unit_checks()
    build_corpus(args.dir)
    syn = compare(args.dir, work, stop_en, 0.05, label="synthetic")
    compare(args.dir, work, stop_en, 0.5, label="synthetic-min0.5")
    compare(args.dir, work, stop_en, 0.05, extra=["--follow-symlinks"], label="synthetic-symlinks")
    compare(args.dir + ".jsonl", work, stop_en, 0.01, label="jsonl")
    # sanity on graded similarities of the synthetic edits
    expect(syn, "en/orig0.txt", "copies/exact/orig0.txt", 0.999999, 1.0)
    expect(syn, "en/orig2.txt", "html/orig2.html", 0.999999, 1.0)
    expect(syn, "en/orig2.txt", "html/orig2-noext", 0.999999, 1.0)
    expect(syn, "en/orig3.txt", "copies/shuffled.txt", 0.999999, 1.0)
    expect(syn, "en/orig4.txt", "copies/upper.txt", 0.999999, 1.0)
    expect(syn, "tiny/two-words.txt", "tiny/two-words-copy.txt", 0.999999, 1.0)
    expect(syn, "tiny/two-words.txt", "tiny/two-words-copy.txt", 1.0, 1.0, "jaccard")
    expect(syn, "en/orig3.txt", "copies/shuffled.txt", 0.5, 0.99, "jaccard")
    expect(syn, "en/orig1.txt", "copies/del5.txt", 0.9, 0.999)
    expect(syn, "en/orig1.txt", "copies/sub40.txt", 0.1, 0.9)
    expect(syn, "en/orig5.txt", "bad/orig5-latin1.txt", 0.9, 0.9999)
    expect(syn, "de/rathaus.txt", "de/rathaus-edit.txt", 0.8, 0.99)
    a = syn[("copies/del5.txt", "en/orig1.txt")][0]
    b = syn[("copies/del20.txt", "en/orig1.txt")][0]
    c = syn[("copies/sub10.txt", "en/orig1.txt")][0]
    d = syn[("copies/sub40.txt", "en/orig1.txt")][0]
    if not (a > b and c > d):
        fail(f"edits not graded: del5 {a} del20 {b} sub10 {c} sub40 {d}")
    ok(f"graded edits: del5 {a:.3f} > del20 {b:.3f}; sub10 {c:.3f} > sub40 {d:.3f}; "
       f"HTML copies, exact copy, shuffled, upper-cased = 1.0")

    if os.path.isdir(args.licenses):
        lic = compare(args.licenses, work, stop_en, 0.01, label="common-licenses")
        for x, y in [("GPL-1", "GPL-2"), ("GPL-2", "GPL-3"), ("LGPL-2", "LGPL-2.1"),
                     ("LGPL-2.1", "LGPL-3"), ("GFDL-1.2", "GFDL-1.3"), ("MPL-1.1", "MPL-2.0"),
                     ("Apache-2.0", "GPL-3"), ("BSD", "GPL-3")]:
            k = (x, y) if x < y else (y, x)
            print(f"    {x:>10} vs {y:<10} cosine {lic.get(k, (0, 0))[0]:.3f}  jaccard3 {lic.get(k, (0, 0))[1]:.3f}")
        expect(lic, "LGPL-2", "LGPL-2.1", 0.9, 1.0)
        expect(lic, "GFDL-1.2", "GFDL-1.3", 0.9, 1.0)
        expect(lic, "GPL-1", "GPL-2", 0.8, 0.95)
        expect(lic, "GPL-2", "GPL-3", 0.3, 0.6)
    recall_check(work)
    print("ALL OK")


if __name__ == "__main__":
    main()
