#!/usr/bin/env python3
"""run.py - pocketdex side by side with datasketch MinHashLSH and rensa RMinHashLSH.

Same collection, same ground truth (scripts/oracle/truth.py), same content words.

Usage:
  scripts/compare/run.py INPUT [--lang en|de] [--out DIR] [--pairs PAIRS.tsv]
                         [--pocketdex BIN] [--repeat N] [--no-ds05] [--similar]

INPUT is a directory (every regular file below it; id = path relative to INPUT)
or a .jsonl file with one {"id","text","title"?} per line - read exactly as
truth.py reads it (truth.py's own functions are imported, not copied).

Setup of the MinHash tools (as in shared/notes/anchors.md): the content words of
truth.py (\\w+, casefold, stopwords and letterless tokens dropped, HTML
stripped), word 3-shingles over them ("w1 w2 w3"; a doc with 1-2 content words
gets one shingle of those words, a doc with none is not indexed), 128
permutations, integer keys (so no names are in the pickles):
  datasketch  MinHash(num_perm=128) via update_batch, MinHashLSH(threshold=0.8)
              (b=9, r=13) and, unless --no-ds05, a second index threshold=0.5
  rensa       RMinHash(num_perm=128, seed=42), RMinHashLSH(threshold=0.8,
              num_perm=128, num_bands=16)
Every doc is queried against its own tool's index; all candidates the LSH
returns (self excluded) are hits, scored with the estimated Jaccard of the two
signatures (scoring is timed apart from querying).

pocketdex: `pocketdex build INPUT -o DIR/pocketdex.pdx` and
`pocketdex query DIR/pocketdex.pdx INPUT --json --top 1000 --threshold 0.5`.

--similar (high-similarity search) replaces the tools above with: datasketch
MinHashLSH over content-word sets at threshold 0.3 and 0.5 plus over word
3-shingles at 0.3 (same signing), and pocketdex built with its defaults and with
--expected-docs 2000000, each queried with `--threshold 0 --top 10` with and
without `query --similar`. Recall per cosine bucket [0.5,0.6) .. >=0.9,
hits and candidates per query, index bytes per doc, and for pocketdex the share
of hits with score >= 0.7 whose cosine is >= 0.6.

Truth: cosine buckets come from pairs.tsv; the J >= 0.8 set (recall and the
extra "precision (J>=0.8)" column) is exact word-3-shingle Jaccard over ALL
pairs, computed here with sparse products, because pairs.tsv lists only pairs
with cosine >= 0.5 and licence-like texts can have J >= 0.8 at lower cosine.
Where both exist the values are checked against pairs.tsv's jaccard3.

Outputs in DIR (default /tmp/pocketdex-compare/<input name>):
  pairs.tsv(.docs)          truth.py INPUT --min 0.5
  <tool>.hits.jsonl         {"query","id","score"} per hit, self excluded
  compare.md, compare.json  the table and everything measured
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import subprocess
import sys
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
ORACLE = os.path.join(REPO, "scripts", "oracle")
sys.path.insert(0, ORACLE)
sys.dont_write_bytecode = True  # leave no __pycache__ in scripts/oracle

import truth  # noqa: E402  (scripts/oracle/truth.py, imported unchanged)
from recall import load_pairs  # noqa: E402  (scripts/oracle/recall.py)

NUM_PERM = 128


def log(msg: str) -> None:
    print(f"[compare] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------
# corpus -> content words -> word 3-shingles (truth.py's own functions)


def load_corpus(inp: str, lang: str):
    """(ids, content words per doc, text bytes, stopword source), read as truth.py reads."""
    stop, stop_src = truth.load_stopwords(
        SimpleNamespace(no_stopwords=False, stopwords=None, lang=lang))
    ids, words, nbytes = [], [], 0
    seen = set()
    for did, name, text in truth.iter_docs(inp, "include", False):
        if did in seen:  # truth.py keeps the first of duplicate ids
            continue
        seen.add(did)
        nbytes += len(text.encode("utf-8", errors="replace"))
        if truth.looks_like_html(name, text):
            text = truth.strip_html(text)
        ids.append(did)
        words.append(truth.content_words(text, stop))
    return ids, words, nbytes, stop_src


def shingles3(words: list[str]) -> list[str]:
    """Distinct word 3-shingles; 1-2 words give one shingle of them, none gives none (as truth.py)."""
    if len(words) < 3:
        return [" ".join(words)] if words else []
    return list({" ".join(words[i:i + 3]) for i in range(len(words) - 2)})


def exact_jaccard_pairs(ids, shingles, thr: float, chunk_cells: int = 4_000_000):
    """Every unordered pair (a < b) with exact word-3-shingle Jaccard >= thr -> J.

    All pairs, whatever their cosine: chunked scipy.sparse products of the binary
    doc x shingle matrix (intersection sizes), as truth.py does for cosine.
    """
    import numpy as np
    import scipy.sparse as sp

    vocab: dict[str, int] = {}
    indptr = [0]
    cols = []
    for sh in shingles:
        cols.extend(vocab.setdefault(x, len(vocab)) for x in sh)
        indptr.append(len(cols))
    n = len(ids)
    X = sp.csr_matrix((np.ones(len(cols), dtype=np.int32), np.asarray(cols, dtype=np.int64),
                       np.asarray(indptr, dtype=np.int64)), shape=(n, len(vocab)))
    size = np.diff(X.indptr).astype(np.float64)
    XT = sp.csc_matrix(X.T)
    rows = max(1, min(n, chunk_cells // max(n, 1)))
    out = {}
    for s in range(0, n, rows):
        e = min(n, s + rows)
        blk = (X[s:e] @ XT[:, s:]).tocoo()
        r = blk.row.astype(np.int64) + s
        c = blk.col.astype(np.int64) + s
        keep = c > r
        r, c, inter = r[keep], c[keep], blk.data[keep].astype(np.float64)
        jac = inter / (size[r] + size[c] - inter)
        keep = jac >= thr - 1e-9
        for i, j, v in zip(r[keep].tolist(), c[keep].tolist(), jac[keep].tolist()):
            a, b = ids[i], ids[j]
            out[(a, b) if a < b else (b, a)] = v
    return out


# ----------------------------------------------------------------------------
# MinHash tools


def write_hits(path: str, ids, hits) -> int:
    n = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for q, o, s in hits:
            f.write(json.dumps({"query": ids[q], "id": ids[o], "score": round(s, 4)},
                               ensure_ascii=False) + "\n")
            n += 1
    return n


def timed(fn, repeat: int):
    """Runs fn() `repeat` times; returns (fastest wall time in s, last result)."""
    best, res = None, None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        res = fn()
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best, res


def run_datasketch(ids, shingles, out: str, thresholds, repeat: int = 1, tag: str = "", feature: str | None = None):
    """One MinHashLSH per threshold over the same signatures of `shingles` (any set of strings per
    doc). Files and rows are named datasketch<tag>[-t<thr>]; `feature` names the sets in the label."""
    import datasketch
    from datasketch import MinHash, MinHashLSH

    live = [i for i, s in enumerate(shingles) if s]

    def sign():
        sigs = {}
        for i in live:
            m = MinHash(num_perm=NUM_PERM)
            m.update_batch([s.encode("utf-8") for s in shingles[i]])
            sigs[i] = m
        return sigs

    t_sign, sigs = timed(sign, repeat)

    results = []
    for thr in thresholds:
        def insert():
            lsh = MinHashLSH(threshold=thr, num_perm=NUM_PERM)
            for i in live:
                lsh.insert(i, sigs[i])
            return lsh

        t_insert, lsh = timed(insert, repeat)
        t_query, cands = timed(lambda: [(i, lsh.query(sigs[i])) for i in live], repeat)
        t_score, hits = timed(
            lambda: [(i, o, sigs[i].jaccard(sigs[o])) for i, c in cands for o in c if o != i], 1)

        size = len(pickle.dumps(lsh, protocol=pickle.HIGHEST_PROTOCOL))
        name = f"datasketch{tag}" + ("" if thr == 0.8 else f"-t{thr}")
        over = f" over {feature}" if feature else ""
        path = os.path.join(out, f"{name}.hits.jsonl")
        write_hits(path, ids, hits)
        results.append(dict(
            tool=name, label=f"datasketch {datasketch.__version__} MinHashLSH{over} t={thr} (b={lsh.b}, r={lsh.r})",
            version=datasketch.__version__, params=dict(num_perm=NUM_PERM, threshold=thr, b=lsh.b, r=lsh.r,
                                                       hash="sha1_hash32 (default)", seed=1,
                                                       feature=feature or "word 3-shingles"),
            docs=len(ids), indexed=len(live), sign_s=t_sign, insert_s=t_insert, query_s=t_query,
            score_s=t_score, index_bytes=size, index_bytes_note="len(pickle.dumps(lsh)), int keys",
            hits_file=path, hits=hits))
    return results


def run_rensa(ids, shingles, out: str, repeat: int = 1):
    import importlib.metadata as md
    from rensa import RMinHash, RMinHashLSH

    version = md.version("rensa")
    live = [i for i, s in enumerate(shingles) if s]

    def sign():
        sigs = {}
        for i in live:
            m = RMinHash(num_perm=NUM_PERM, seed=42)
            m.update(shingles[i])
            sigs[i] = m
        return sigs

    t_sign, sigs = timed(sign, repeat)

    def insert():
        lsh = RMinHashLSH(threshold=0.8, num_perm=NUM_PERM, num_bands=16)
        for i in live:
            lsh.insert(i, sigs[i])
        return lsh

    t_insert, lsh = timed(insert, repeat)
    t_query, cands = timed(lambda: [(i, lsh.query(sigs[i])) for i in live], repeat)
    t_score, hits = timed(
        lambda: [(i, o, sigs[i].jaccard(sigs[o])) for i, c in cands for o in c if o != i], 1)

    try:
        size = len(pickle.dumps(lsh, protocol=pickle.HIGHEST_PROTOCOL))
        note = "len(pickle.dumps(lsh)), int keys"
    except Exception as e:  # noqa: BLE001
        size, note = None, f"not picklable: {e}"
    path = os.path.join(out, "rensa.hits.jsonl")
    write_hits(path, ids, hits)
    return [dict(
        tool="rensa", label=f"rensa {version} RMinHashLSH t=0.8, 16 bands (r=8)",
        version=version, params=dict(num_perm=NUM_PERM, seed=42, threshold=0.8, num_bands=16, rows=NUM_PERM // 16),
        docs=len(ids), indexed=len(live), sign_s=t_sign, insert_s=t_insert, query_s=t_query,
        score_s=t_score, index_bytes=size, index_bytes_note=note, hits_file=path, hits=hits)]


# ----------------------------------------------------------------------------
# pocketdex


def pocketdex_version(binary: str) -> str:
    return subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()


def build_pocketdex(binary: str, inp: str, lang: str, pdx: str, repeat: int = 1, extra=()):
    """`pocketdex build INPUT -o PDX --lang L [extra]`; index bytes exclude the NAMES section."""
    t_build, b = timed(lambda: subprocess.run([binary, "build", inp, "-o", pdx, "--lang", lang, "--quiet", *extra],
                                              capture_output=True, text=True), repeat)
    if b.returncode != 0:
        sys.exit(f"error: pocketdex build failed ({b.returncode}):\n{b.stderr}")

    info = json.loads(subprocess.run([binary, "info", "--json", pdx], capture_output=True,
                                     text=True, check=True).stdout)
    names = sum(s["len"] for s in info["sections"] if s["name"] == "NAMES")
    fbytes = os.path.getsize(pdx)
    docs = info["documents"]
    return dict(params=info.get("params"), docs=docs, indexed=docs, build_s=t_build,
                index_bytes=fbytes - names, index_bytes_note=f"file {fbytes} B minus NAMES {names} B",
                file_bytes=fbytes, build_stderr=b.stderr.strip()[-2000:])


def query_pocketdex(binary: str, pdx: str, inp: str, out: str, name: str, qargs, repeat: int = 1):
    """`pocketdex query PDX INPUT --json [qargs]`: raw output in DIR/<name>.query.jsonl, hits
    (self excluded) in DIR/<name>.hits.jsonl; `candidates` sums the query records' candidates."""
    qpath = os.path.join(out, f"{name}.query.jsonl")

    def query():
        with open(qpath, "wb") as f:
            return subprocess.run([binary, "query", pdx, inp, "--json", *qargs],
                                  stdout=f, stderr=subprocess.PIPE)

    t_query, q = timed(query, repeat)
    if q.returncode not in (0, 1):
        sys.exit(f"error: pocketdex query failed ({q.returncode}):\n{q.stderr.decode(errors='replace')}")

    # query labels: "INPUT/rel" for a directory, the "id" for .jsonl
    prefixes = []
    if os.path.isdir(inp):
        p = inp.rstrip("/") + "/"
        prefixes = [p, p.removeprefix("./")]

    def qid(label: str) -> str:
        for p in prefixes:
            if label.startswith(p):
                return label[len(p):].lstrip("/")
        return label

    hits, errors, queries, candidates = [], 0, set(), 0
    with open(qpath, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            o = json.loads(line)
            if o.get("type") == "error":
                errors += 1
                continue
            if "query" in o:
                queries.add(o["query"])
            if o.get("type") == "query":
                candidates += o.get("candidates", 0)
            if "query" in o and "id" in o:
                qi = qid(o["query"])
                if o["id"] != qi:
                    hits.append((qi, o["id"], float(o["score"])))
    path = os.path.join(out, f"{name}.hits.jsonl")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for qi, oi, s in hits:
            f.write(json.dumps({"query": qi, "id": oi, "score": s}, ensure_ascii=False) + "\n")
    return dict(query_args=list(qargs), query_s=t_query, query_errors=errors, queries_seen=len(queries),
                candidates=candidates, hits_file=path, hits_named=hits)


def run_pocketdex(binary: str, inp: str, lang: str, out: str, ndocs_corpus: int, repeat: int = 1):
    version = pocketdex_version(binary)
    pdx = os.path.join(out, "pocketdex.pdx")
    b = build_pocketdex(binary, inp, lang, pdx, repeat)
    q = query_pocketdex(binary, pdx, inp, out, "pocketdex", ["--top", "1000", "--threshold", "0.5"], repeat)
    return dict(tool="pocketdex", label=f"{version} (defaults)", version=version, query_docs=ndocs_corpus,
                **b, **q)


# ----------------------------------------------------------------------------
# scoring


def reported_pairs(named_hits, min_score=None):
    """Distinct (query_id, other_id) of (query_id, other_id, score) hits, self excluded."""
    return {(q, o) for q, o, s in named_hits if q != o and (min_score is None or s >= min_score)}


def unordered(pairs):
    return {(q, o) if q < o else (o, q) for q, o in pairs}


def score(named_hits, pairs, sets, min_score=None):
    """named_hits: iterable of (query_id, other_id, score)."""
    reported = reported_pairs(named_hits, min_score)
    found = unordered(reported)
    rec = {k: (len(found & v) / len(v) if v else None) for k, v in sets.items()}
    n9 = n8 = n5 = nj = 0
    for q, o in reported:
        key = (q, o) if q < o else (o, q)
        c = pairs.get(key)
        if c is not None:
            n9 += c[0] >= 0.9
            n8 += c[0] >= 0.8
            n5 += 1
        nj += key in sets["j80"]
    nrep = len(reported)
    return dict(
        recall_cos90=rec["cos90"], recall_cos80_90=rec["cos80_90"], recall_j80=rec["j80"],
        recall_j80_cos50=rec["j80_cos50"],
        precision_cos90=n9 / nrep if nrep else None, precision_cos80=n8 / nrep if nrep else None,
        precision_cos50=n5 / nrep if nrep else None, precision_j80=nj / nrep if nrep else None,
        reported_pairs=nrep, found_unordered=len(found))


# High-similarity mode (--similar): recall per cosine bucket of pairs.tsv
COS_BUCKETS = [(0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, None)]
PREC_SCORE, PREC_COS = 0.7, 0.6  # pocketdex: share of hits with score >= 0.7 whose true cosine is >= 0.6


def bucket_name(lo, hi) -> str:
    return f"≥{lo}" if hi is None else f"[{lo},{hi})"


def best_partners(pairs, k: int):
    """(a, b, cosine) for each doc's k partners of highest true cosine in pairs.tsv: what a tool
    limited to k hits per query (self excluded) could report at best."""
    nb = {}
    for (a, b), v in pairs.items():
        nb.setdefault(a, []).append((-v[0], b))
        nb.setdefault(b, []).append((-v[0], a))
    return [(a, b, -c) for a, v in nb.items() for c, b in sorted(v)[:k]]


def score_similar(named_hits, pairs, buckets, nqueries: int, precision: bool = True):
    """Recall per bucket (found if either doc reports the other), hits per query and, if
    `precision`, the share of hits with score >= PREC_SCORE whose cosine is >= PREC_COS."""
    reported = reported_pairs(named_hits)
    found = unordered(reported)
    m = dict(recall={k: (len(found & v) / len(v) if v else None) for k, v in buckets.items()},
             reported_pairs=len(reported), hits_per_query=len(reported) / nqueries if nqueries else None,
             precision=None)
    if precision:
        high = reported_pairs(named_hits, PREC_SCORE)
        # over distinct (query, id) hits, like the precision of the default mode; absent = cosine < 0.5
        good = sum(1 for q, o in high if pairs.get((q, o) if q < o else (o, q), (0.0,))[0] >= PREC_COS)
        m.update(precision=good / len(high) if high else None, precision_hits=len(high))
    return m


def fmt(x, digits=3):
    return "–" if x is None else f"{x:.{digits}f}"


def fmt_int(x):
    return "–" if x is None else f"{x:,.0f}"


def run_similar(args, out: str, ids, words, shingles, pairs):
    """--similar: datasketch over content-word sets (t=0.3, 0.5) and word 3-shingles (t=0.3), and
    pocketdex query with and without --similar on an index sized for this collection and one sized
    for 2M documents; all at threshold 0 (every candidate is a hit). Returns (markdown, json fields)."""
    inp, n = args.input, len(ids)
    buckets = {bucket_name(lo, hi): {k for k, v in pairs.items() if v[0] >= lo and (hi is None or v[0] < hi)}
               for lo, hi in COS_BUCKETS}
    log("truth pairs: " + ", ".join(f"{k} {len(v)}" for k, v in buckets.items()))

    log("datasketch ...")
    rows = run_datasketch(ids, [list(set(w)) for w in words], out, [0.3, 0.5], args.repeat,
                          tag="-words", feature="content-word sets")
    rows += run_datasketch(ids, shingles, out, [0.3], args.repeat, tag="-shingles", feature="word 3-shingles")
    for r in rows:
        # score = estimated Jaccard, not comparable to a cosine: no precision at score >= 0.7
        r.update(score_similar([(ids[q], ids[o], s) for q, o, s in r.pop("hits")], pairs, buckets, n,
                               precision=False))
        r["candidates_per_query"] = r["hits_per_query"]  # every LSH candidate is a hit
        r["index_bytes_per_doc"] = r["index_bytes"] / r["indexed"]

    # pocketdex is asked for --top 10, and the query itself takes one of the 10
    top = dict(tool="ceiling-top9", label="ceiling of --top 10: each doc's 9 best partners by true cosine",
               candidates_per_query=None, index_bytes_per_doc=None)
    top.update(score_similar(best_partners(pairs, 9), pairs, buckets, n, precision=False))
    top["hits_per_query"] = None  # only pairs with cosine >= 0.5 are known
    rows.append(top)

    version = pocketdex_version(args.pocketdex)
    for cfg, build_args in (("", []), ("-2M", ["--expected-docs", "2000000"])):
        pdx = os.path.join(out, f"pocketdex{cfg}.pdx")
        log(f"pocketdex build {' '.join(build_args) or '(defaults)'} ...")
        b = build_pocketdex(args.pocketdex, inp, args.lang, pdx, args.repeat, build_args)
        for mode, mode_args in (("", []), ("-similar", ["--similar"])):
            name = f"pocketdex{cfg}{mode}"
            label = f"{version}: build {' '.join(build_args) or '(defaults)'}; query {' '.join(mode_args)}"
            q = query_pocketdex(args.pocketdex, pdx, inp, out, name,
                                ["--threshold", "0", "--top", "10", *mode_args], args.repeat)
            r = dict(tool=name, label=label.rstrip(), version=version, build_args=build_args, **b, **q)
            r.update(score_similar(r.pop("hits_named"), pairs, buckets, n))
            r["candidates_per_query"] = r["candidates"] / n  # distinct docs the lookups found, before ranking
            r["index_bytes_per_doc"] = r["index_bytes"] / r["docs"]
            rows.append(r)

    cols = [f"{k} (n={len(v):,})" for k, v in buckets.items()]
    lines = [
        f"### {inp}: {n} docs; truth: pairs.tsv (tf-idf cosine of content words ≥ 0.5)",
        "",
        "| tool | recall " + " | ".join(cols) + " | hits/query | candidates/query | index bytes/doc "
        f"| precision (score ≥ {PREC_SCORE} → cos ≥ {PREC_COS}) |",
        "|---" * (len(cols) + 5) + "|",
    ]
    for r in rows:
        lines.append(f"| {r['label']} | " + " | ".join(fmt(x) for x in r["recall"].values())
                     + f" | {fmt(r['hits_per_query'], 1)} | {fmt(r['candidates_per_query'], 1)} "
                     f"| {fmt_int(r['index_bytes_per_doc'])} | {fmt(r['precision'])} |")
    lines += [
        "",
        "Recall: a pair counts as found if either doc reports the other. datasketch: every LSH candidate "
        "(self excluded) is a hit, so hits = candidates; index bytes = len(pickle.dumps(lsh)) / indexed docs. "
        "pocketdex: `query INDEX INPUT --json --threshold 0 --top 10 [--similar]`, so at most 10 hits per "
        "query; candidates = the query records' `candidates` (distinct docs found before ranking); index "
        "bytes = file minus NAMES / docs; precision is over distinct (query, id) hits with score ≥ "
        f"{PREC_SCORE}, a pair absent from pairs.tsv has cosine < 0.5.",
        "Times (s, fastest of {}): ".format(args.repeat)
        + "; ".join(f"{r['tool']} " + (f"sign {r['sign_s']:.2f} + insert {r['insert_s']:.2f}, query {r['query_s']:.2f}"
                                      if "sign_s" in r else f"build {r['build_s']:.2f}, query {r['query_s']:.2f}")
                    for r in rows if "query_s" in r) + ".",
    ]
    return "\n".join(lines) + "\n", dict(mode="similar", truth_counts={k: len(v) for k, v in buckets.items()},
                                        rows=rows)


def write_report(out: str, md: str, meta: dict) -> None:
    """Prints the table and writes DIR/compare.md and DIR/compare.json."""
    print(md)
    with open(os.path.join(out, "compare.md"), "w", encoding="utf-8") as f:
        f.write(md)
    with open(os.path.join(out, "compare.json"), "w", encoding="utf-8") as f:
        json.dump(meta | dict(loadavg_end=os.getloadavg()), f, indent=1, ensure_ascii=False)
    log(f"wrote {out}/compare.md and compare.json")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="directory or .jsonl file")
    ap.add_argument("--lang", default="en", help="en or de (stopwords for truth/MinHash; pocketdex --lang)")
    ap.add_argument("--out", help="output directory (default /tmp/pocketdex-compare/<input name>)")
    ap.add_argument("--pairs", help="reuse an existing truth pairs.tsv (made with --min <= 0.8, <= 0.5 for "
                                    "--similar) instead of running truth.py")
    ap.add_argument("--pocketdex", default=os.path.join(REPO, "target", "release", "pocketdex"),
                    help="pocketdex binary (default: REPO/target/release/pocketdex)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="time every step this many times and keep the fastest (default 1)")
    ap.add_argument("--no-ds05", action="store_true", help="skip the second datasketch index (threshold 0.5)")
    ap.add_argument("--similar", action="store_true",
                    help="high-similarity search instead: recall per cosine bucket of datasketch over "
                         "content-word sets and of pocketdex query with and without --similar")
    args = ap.parse_args(argv)

    inp = args.input
    if not (os.path.isdir(inp) or (inp.endswith(".jsonl") and os.path.isfile(inp))):
        sys.exit(f"error: {inp}: need a directory or a .jsonl file")
    name = os.path.basename(os.path.normpath(inp))
    out = args.out or os.path.join("/tmp/pocketdex-compare", name)
    os.makedirs(out, exist_ok=True)
    load_start = os.getloadavg()

    # --- ground truth ----------------------------------------------------------
    if args.pairs:
        pairs_path = args.pairs
    else:
        pairs_path = os.path.join(out, "pairs.tsv")
        log(f"truth.py {inp} --min 0.5 -> {pairs_path}")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(ORACLE, "truth.py"), inp, "--lang", args.lang,
                        "--min", "0.5", "-o", pairs_path], check=True)
        log(f"truth took {time.perf_counter() - t0:.1f} s")
    pairs = load_pairs(pairs_path)

    # --- corpus ------------------------------------------------------------------
    t0 = time.perf_counter()
    ids, words, nbytes, stop_src = load_corpus(inp, args.lang)
    shingles = [shingles3(w) for w in words]
    t_prep = time.perf_counter() - t0
    n = len(ids)
    empty = sum(1 for w in words if not w)
    log(f"{n} docs ({nbytes / 1e6:.1f} MB, {empty} without content words), "
        f"read+words+shingles {t_prep:.1f} s, stopwords {stop_src}")
    meta = dict(input=inp, lang=args.lang, docs=n, bytes=nbytes, docs_without_content_words=empty,
                prep_s=t_prep, stopwords=stop_src, pairs=pairs_path, repeat=args.repeat,
                python=sys.version.split()[0], platform=platform.platform(), cpus=os.cpu_count(),
                loadavg_start=load_start)
    if args.similar:
        md, extra = run_similar(args, out, ids, words, shingles, pairs)
        write_report(out, md, meta | extra)
        return 0

    # pairs.tsv only lists pairs with cosine >= 0.5; a pair of near-identical
    # texts that differ in a few rare (high-idf) words can have J >= 0.8 with a
    # lower cosine, so the J >= 0.8 truth is computed here over all pairs.
    t0 = time.perf_counter()
    j80 = exact_jaccard_pairs(ids, shingles, 0.8)
    t_j = time.perf_counter() - t0
    j_mismatch = sum(1 for k, v in pairs.items() if k in j80 and abs(j80[k] - v[1]) > 1e-5)
    j_missing = sum(1 for k, v in pairs.items() if v[1] >= 0.8 + 1e-6 and k not in j80)
    sets = {
        "cos90": {k for k, v in pairs.items() if v[0] >= 0.9},
        "cos80_90": {k for k, v in pairs.items() if 0.8 <= v[0] < 0.9},
        "j80": set(j80),
        "j80_cos50": {k for k, v in pairs.items() if v[1] >= 0.8},
    }
    log("truth pairs: " + ", ".join(f"{k} {len(v)}" for k, v in sets.items())
        + f"; exact all-pairs J took {t_j:.1f} s, disagreements with pairs.tsv jaccard3: "
        f"{j_mismatch} values, {j_missing} missing")

    # --- tools -------------------------------------------------------------------
    rows = []
    log("datasketch ...")
    thresholds = [0.8] if args.no_ds05 else [0.8, 0.5]
    rows += run_datasketch(ids, shingles, out, thresholds, args.repeat)
    log("rensa ...")
    rows += run_rensa(ids, shingles, out, args.repeat)
    log("pocketdex ...")
    pdx = run_pocketdex(args.pocketdex, inp, args.lang, out, n, args.repeat)

    table = []
    for r in rows:
        named = [(ids[q], ids[o], s) for q, o, s in r.pop("hits")]
        m = score(named, pairs, sets)
        r["min_hit_score"] = min((s for _, _, s in named), default=None)
        r.update(m)
        r["sign_docs_s"] = r["indexed"] / (r["sign_s"] + r["insert_s"])
        r["query_docs_s"] = r["indexed"] / r["query_s"]
        r["index_bytes_per_doc"] = r["index_bytes"] / r["indexed"] if r["index_bytes"] is not None else None
        # end to end, as pocketdex is timed: reading + content words + shingles included
        r["e2e_build_docs_s"] = n / (t_prep + r["sign_s"] + r["insert_s"])
        r["e2e_query_docs_s"] = n / (t_prep + r["sign_s"] + r["query_s"])
        r["sign_mb_s"] = nbytes / 1e6 / r["sign_s"]
        table.append(r)
        # the usual practice: keep only candidates whose estimated Jaccard passes the threshold
        thr = r["params"]["threshold"]
        v = dict(tool=r["tool"] + "+verify", label=f"{r['label']}, candidates with est. J ≥ {thr}",
                 derived_from=r["tool"], min_score=thr)
        v.update(score(named, pairs, sets, min_score=thr))
        table.append(v)

    named = pdx.pop("hits_named")
    pdx.update(score(named, pairs, sets))
    pdx["sign_docs_s"] = pdx["docs"] / pdx["build_s"]
    pdx["query_docs_s"] = pdx["query_docs"] / pdx["query_s"]
    pdx["index_bytes_per_doc"] = pdx["index_bytes"] / pdx["docs"] if pdx["docs"] else None
    table.append(pdx)
    for ms in (0.8, 0.9):
        v = dict(tool=f"pocketdex@{ms}", label=f"pocketdex, hits with score ≥ {ms}",
                 derived_from="pocketdex", min_score=ms)
        v.update(score(named, pairs, sets, min_score=ms))
        table.append(v)

    # --- report ------------------------------------------------------------------
    head = ("| tool | recall cos≥0.9 | recall cos∈[0.8,0.9) | recall J≥0.8 | precision (cos≥0.9) "
            "| precision (cos≥0.8) | sign/build docs/s | query docs/s | index bytes/doc | precision (J≥0.8) |")
    j_low = len(sets["j80"]) - len(sets["j80_cos50"])
    lines = [
        f"### {inp}: {n} docs, {nbytes / 1e6:.1f} MB; truth pairs: cos≥0.9 {len(sets['cos90']):,}, "
        f"cos∈[0.8,0.9) {len(sets['cos80_90']):,}, J≥0.8 {len(sets['j80']):,} "
        f"({j_low:,} of them with cosine < 0.5)",
        "",
        head,
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r['label']} | {fmt(r['recall_cos90'])} | {fmt(r['recall_cos80_90'])} | {fmt(r['recall_j80'])} "
            f"| {fmt(r['precision_cos90'])} | {fmt(r['precision_cos80'])} | {fmt_int(r.get('sign_docs_s'))} "
            f"| {fmt_int(r.get('query_docs_s'))} | {fmt_int(r.get('index_bytes_per_doc'))} "
            f"| {fmt(r['precision_j80'])} |")
    lines += [
        "",
        "Recall counts a pair as found if either doc reports the other; precision is over distinct "
        "(query, id) hits, self excluded; a pair absent from pairs.tsv has cosine < 0.5. "
        "J≥0.8 (recall and precision) is exact word-3-shingle Jaccard over all pairs, computed here "
        "(pairs.tsv lists only pairs with cosine ≥ 0.5; recall of its J≥0.8 pairs is in compare.json "
        "as recall_j80_cos50).",
        f"Reported pairs (distinct query→id, self excluded): "
        + ", ".join(f"{r['tool']} {r['reported_pairs']:,}" for r in table) + ".",
        f"Python tools: sign/build = MinHash signing + LSH insert of pre-made shingle sets; query = LSH "
        f"queries of pre-made signatures (scoring candidates by estimated Jaccard not counted). "
        f"Reading + content words + 3-shingles took {t_prep:.2f} s ({n / t_prep:,.0f} docs/s) on top. "
        f"End to end with that included: "
        + "; ".join(f"{r['tool']} build {r['e2e_build_docs_s']:,.0f} / query {r['e2e_query_docs_s']:,.0f} docs/s"
                    for r in table if "e2e_build_docs_s" in r) + ". "
        f"pocketdex: wall time of the `build` and `query` processes (both read and tokenize the files themselves). "
        f"Times: fastest of {args.repeat} run(s); load average at start {load_start[0]:.2f} "
        f"on {os.cpu_count()} cores.",
    ]
    meta.update(truth_counts={k: len(v) for k, v in sets.items()}, exact_jaccard_s=t_j,
                jaccard_check=dict(value_mismatches=j_mismatch, missing_from_exact=j_missing), rows=table)
    write_report(out, "\n".join(lines) + "\n", meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
