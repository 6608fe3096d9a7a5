#!/usr/bin/env python3
"""recall.py - score `pocketdex query ... --json` hits against truth.py pairs.

Usage:
  scripts/oracle/recall.py --pairs pairs.tsv --hits hits.jsonl
                           [--strip-prefix P] [--strip-suffix S] [--strip-hit-prefix P]
                           [--queries FILE] [--k K] [--show N] [--json]

hits.jsonl: JSON Lines, one object per hit with at least "query" (the DOC path
as given on the command line), "id" (indexed doc id) and "score".  A line with
a "type" other than "hit" is ignored unless it has both "query" and "id"; a
line with "query" but no "id" still marks that query as asked (0 hits).
Query path -> doc id: drop a leading "./", then --strip-prefix, then --strip-suffix.

Metrics
  self-first   share of queries whose first hit (file order) is the query doc
  recall       truth pairs found: "either" = a's hits contain b OR b's contain a
               (denominator: pairs with >= 1 queried endpoint); "both" = found
               in both directions (denominator: pairs with both endpoints queried)
  precision    distinct (query, id) hits with id != query: share whose truth
               cosine is >= 0.8 / >= 0.5, overall and by hit score bucket
A pair absent from pairs.tsv has cosine < the --min truth.py was run with.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import defaultdict

BUCKETS = [(0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 0.95), (0.95, 1.0)]
SCORE_BUCKETS = [("score>=0.9", 0.9, math.inf), ("0.8<=score<0.9", 0.8, 0.9),
                 ("score<0.8", -math.inf, 0.8)]


def unescape_id(s: str) -> str:
    if "\\" not in s:
        return s
    out, i = [], 0
    m = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s) and s[i + 1] in m:
            out.append(m[s[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def esc(s: str) -> str:
    """Same escaping as truth.py (for display)."""
    if any(c in s for c in "\\\t\n\r"):
        s = s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return s


def load_pairs(path: str):
    pairs: dict[tuple[str, str], tuple[float, float]] = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or (lineno == 1 and line.startswith("a\tb\tcosine")):
                continue
            parts = line.split("\t")
            if len(parts) < 3:
                sys.exit(f"error: {path}:{lineno}: expected a<TAB>b<TAB>cosine[<TAB>jaccard3]")
            a, b = unescape_id(parts[0]), unescape_id(parts[1])
            cos = float(parts[2])
            jac = float(parts[3]) if len(parts) > 3 and parts[3] else float("nan")
            if b < a:
                a, b = b, a
            pairs[(a, b)] = (cos, jac)
    return pairs


def load_docs(path: str):
    if not os.path.isfile(path):
        return None
    docs = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or (lineno == 1 and line.startswith("id\t")):
                continue
            parts = line.split("\t")
            docs[unescape_id(parts[0])] = int(parts[1]) if len(parts) > 1 else -1
    return docs


def _dot(s: str) -> str:
    while s.startswith("./"):
        s = s[2:]
    return s


def strip(s: str, prefix: str | None, suffix: str | None = None) -> str:
    """Drop leading "./" then PREFIX (itself taken without leading "./"), then SUFFIX."""
    s = _dot(s)
    if prefix:
        prefix = _dot(prefix)
        if s.startswith(prefix):
            s = _dot(s[len(prefix):])
    if suffix and s.endswith(suffix) and len(s) > len(suffix):
        s = s[: -len(suffix)]
    return s


def bucket_of(cos: float):
    for lo, hi in BUCKETS:
        if lo <= cos < hi or (hi == 1.0 and lo <= cos):
            return (lo, hi)
    return None


def bucket_name(b):
    lo, hi = b
    return f"[{lo:.2f},{hi:.2f}{']' if hi == 1.0 else ')'}"


def rate(num: int, den: int):
    return num / den if den else None


def fmt_rate(r):
    return "   n/a" if r is None else f"{100 * r:6.2f}%"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--pairs", required=True, help="pairs.tsv from truth.py (reads PAIRS.docs if present)")
    ap.add_argument("--hits", required=True, help="JSON Lines from pocketdex query --json ('-' = stdin)")
    ap.add_argument("--strip-prefix", metavar="P", help="prefix to remove from query paths")
    ap.add_argument("--strip-suffix", metavar="S",
                    help="suffix to remove from query paths (e.g. .txt when the index ids are "
                         "jsonl ids without it)")
    ap.add_argument("--strip-hit-prefix", metavar="P", help="prefix to remove from hit ids")
    ap.add_argument("--queries", metavar="FILE",
                    help="query paths, one per line (same form as in hits; prefix stripped); "
                         "default: every query seen in the hits file")
    ap.add_argument("--k", type=int, default=0, help="only use the first K hits of each query (0 = all)")
    ap.add_argument("--show", type=int, default=0, metavar="N",
                    help="also list the N highest-cosine missed pairs and N worst false hits")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = ap.parse_args(argv)

    pairs = load_pairs(args.pairs)
    docs = load_docs(args.pairs + ".docs")
    truth_min = min((c for c, _ in pairs.values()), default=None)

    # --- hits -----------------------------------------------------------
    hits: dict[str, list[tuple[str, float | None]]] = {}  # query doc id -> ordered hits
    counts = defaultdict(int)
    fin = sys.stdin if args.hits == "-" else open(args.hits, encoding="utf-8", errors="replace")
    with fin:
        for lineno, line in enumerate(fin, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                counts["bad_json_lines"] += 1
                continue
            if not isinstance(obj, dict):
                counts["ignored_lines"] += 1
                continue
            has_q, has_id = "query" in obj, "id" in obj
            if has_q:
                q = strip(str(obj["query"]), args.strip_prefix, args.strip_suffix)
                hits.setdefault(q, [])
            # any "type" (hit, summary, ...) counts as a hit iff query and id are both present
            if not (has_q and has_id):
                counts["ignored_lines"] += 1
                continue
            hid = strip(str(obj["id"]), args.strip_hit_prefix)
            score = obj.get("score")
            try:
                score = float(score) if score is not None else None
            except (TypeError, ValueError):
                score = None
            counts["hit_lines"] += 1
            hits[q].append((hid, score))

    if args.queries:
        with open(args.queries, encoding="utf-8") as f:
            qs = [strip(l.rstrip("\n"), args.strip_prefix, args.strip_suffix) for l in f if l.strip()]
        for q in qs:
            hits.setdefault(q, [])
        extra = set(hits) - set(qs)
        if extra:
            counts["queries_not_in_query_file"] = len(extra)
        queries = list(dict.fromkeys(qs))
    else:
        queries = list(hits)
    qset = set(queries)
    if args.k > 0:
        hits = {q: h[: args.k] for q, h in hits.items()}

    found = {q: {h for h, _ in hits.get(q, [])} for q in queries}

    # --- (a) self-first ---------------------------------------------------
    n_q = len(queries)
    n_q_hits = sum(1 for q in queries if hits.get(q))
    self_first = sum(1 for q in queries if hits.get(q) and hits[q][0][0] == q)
    self_any = sum(1 for q in queries if q in found[q])
    unknown_q = [q for q in queries if docs is not None and q not in docs]

    # --- (b) recall -------------------------------------------------------
    def new_rec():
        return {"pairs": 0, "either_den": 0, "either": 0, "both_den": 0, "both": 0}

    rec = defaultdict(new_rec)
    missed = []
    for (a, b), (cos, jac) in pairs.items():
        qa, qb = a in qset, b in qset
        if not (qa or qb):
            continue
        fa = qa and b in found[a]
        fb = qb and a in found[b]
        keys = ["all"]
        bk = bucket_of(cos)
        keys.append(bucket_name(bk) if bk else "<0.50")
        if cos >= 0.95:
            keys.append(">=0.95")
        if cos >= 0.9:
            keys.append(">=0.90")
        for k in keys:
            r = rec[k]
            r["pairs"] += 1
            r["either_den"] += 1
            r["either"] += int(fa or fb)
            if qa and qb:
                r["both_den"] += 1
                r["both"] += int(fa and fb)
        if not (fa or fb) or (qa and qb and not (fa and fb)):
            missed.append((cos, jac, a, b, "none" if not (fa or fb) else ("a->b only" if fa else "b->a only")))
    n_unqueried_pairs = len(pairs) - rec["all"]["pairs"]
    rec_order = [bucket_name(b) for b in BUCKETS] + [">=0.95", ">=0.90", "all"]
    if "<0.50" in rec:
        rec_order.insert(0, "<0.50")

    # --- (c) precision ----------------------------------------------------
    seen_hits = {}
    for q in queries:
        for hid, score in hits.get(q, []):
            if hid == q or (q, hid) in seen_hits:
                continue
            seen_hits[(q, hid)] = score
    prec = {name: {"hits": 0, "cos>=0.8": 0, "cos>=0.5": 0, "in_truth": 0, "unknown_id": 0}
            for name in ["all"] + [s[0] for s in SCORE_BUCKETS] + ["no score"]}
    false_hits = []
    for (q, hid), score in seen_hits.items():
        key = (q, hid) if q < hid else (hid, q)
        cos = pairs.get(key, (None, None))[0]
        if score is None:
            sb = "no score"
        else:
            sb = next(n for n, lo, hi in SCORE_BUCKETS if lo <= score < hi)
        for name in ("all", sb):
            p = prec[name]
            p["hits"] += 1
            if cos is not None:
                p["in_truth"] += 1
                p["cos>=0.8"] += int(cos >= 0.8)
                p["cos>=0.5"] += int(cos >= 0.5)
            if docs is not None and hid not in docs:
                p["unknown_id"] += 1
        if cos is None or cos < 0.8:
            false_hits.append((score if score is not None else -1, cos, q, hid))
    if not prec["no score"]["hits"]:
        del prec["no score"]

    # --- report -----------------------------------------------------------
    result = {
        "pairs_file": args.pairs,
        "hits_file": args.hits,
        "truth_min_cosine_seen": truth_min,
        "counts": {
            "truth_docs": len(docs) if docs is not None else None,
            "truth_pairs": len(pairs),
            "queries": n_q,
            "queries_with_hits": n_q_hits,
            "queries_not_in_truth_docs": len(unknown_q) if docs is not None else None,
            "hit_lines": counts["hit_lines"],
            "ignored_lines": counts["ignored_lines"],
            "bad_json_lines": counts["bad_json_lines"],
            "distinct_non_self_hits": len(seen_hits),
            "truth_pairs_without_queried_endpoint": n_unqueried_pairs,
            **({"queries_not_in_query_file": counts["queries_not_in_query_file"]}
               if counts["queries_not_in_query_file"] else {}),
        },
        "self_first": {"n": n_q, "self_first": self_first, "rate": rate(self_first, n_q),
                       "self_anywhere": self_any, "self_anywhere_rate": rate(self_any, n_q)},
        "recall": {k: {**rec[k], "either_rate": rate(rec[k]["either"], rec[k]["either_den"]),
                       "both_rate": rate(rec[k]["both"], rec[k]["both_den"])}
                   for k in rec_order},
        "precision": {k: {**v, "rate_cos>=0.8": rate(v["cos>=0.8"], v["hits"]),
                          "rate_cos>=0.5": rate(v["cos>=0.5"], v["hits"])}
                      for k, v in prec.items()},
    }
    if args.k:
        result["k"] = args.k
    if args.show:
        missed.sort(key=lambda t: (-t[0], t[2], t[3]))
        false_hits.sort(key=lambda t: (-t[0], t[2], t[3]))
        result["missed_pairs"] = [{"a": a, "b": b, "cosine": c, "jaccard3": j, "found": how}
                                  for c, j, a, b, how in missed[: args.show]]
        result["false_hits"] = [{"query": q, "id": h, "score": s if s >= 0 else None, "cosine": c}
                                for s, c, q, h in false_hits[: args.show]]
    if unknown_q:
        result["unknown_queries_sample"] = unknown_q[:5]

    if args.json:
        print(json.dumps(result, indent=None, sort_keys=False))
        return 0

    c = result["counts"]
    print(f"truth: {c['truth_pairs']} pairs"
          + (f" over {c['truth_docs']} docs" if c["truth_docs"] is not None else "")
          + (f" (lowest cosine in file {truth_min:.3f})" if truth_min is not None else ""))
    print(f"hits:  {c['hit_lines']} hit lines, {c['queries']} queries "
          f"({c['queries_with_hits']} with hits), {c['distinct_non_self_hits']} distinct non-self hits, "
          f"{c['ignored_lines']} ignored / {c['bad_json_lines']} bad lines"
          + (f", top-{args.k} only" if args.k else ""))
    if unknown_q:
        print(f"WARNING: {len(unknown_q)} queries are not doc ids in the truth, e.g. {unknown_q[:3]}"
              f" -- check --strip-prefix")
    sf = result["self_first"]
    print(f"\nself-first: {sf['self_first']}/{sf['n']} = {fmt_rate(sf['rate']).strip()}"
          f"   (self anywhere in hits: {sf['self_anywhere']}/{sf['n']} = {fmt_rate(sf['self_anywhere_rate']).strip()})")

    print("\nrecall by truth cosine"
          + (f" ({n_unqueried_pairs} truth pairs with no queried endpoint left out)" if n_unqueried_pairs else ""))
    print(f"  {'cosine':<13} {'pairs':>7}  {'either':>15} {'rate':>8}  {'both':>15} {'rate':>8}")
    for k in rec_order:
        r = result["recall"][k]
        print(f"  {k:<13} {r['pairs']:>7}  {r['either']:>7}/{r['either_den']:<7} {fmt_rate(r['either_rate']):>8}"
              f"  {r['both']:>7}/{r['both_den']:<7} {fmt_rate(r['both_rate']):>8}")

    print("\nprecision of non-self hits (truth cosine of the hit pair)")
    print(f"  {'hit score':<15} {'hits':>7}  {'cos>=0.8':>9} {'rate':>8}  {'cos>=0.5':>9} {'rate':>8}  {'unknown id':>10}")
    for k, p in result["precision"].items():
        print(f"  {k:<15} {p['hits']:>7}  {p['cos>=0.8']:>9} {fmt_rate(p['rate_cos>=0.8']):>8}"
              f"  {p['cos>=0.5']:>9} {fmt_rate(p['rate_cos>=0.5']):>8}  {p['unknown_id']:>10}")
    if truth_min is not None and truth_min > 0.5 + 0.05:
        print(f"  note: pairs file seems cut at cosine ~{truth_min:.2f}; 'cos>=0.5' is a lower bound")

    if args.show:
        print(f"\nhighest-cosine missed pairs (top {args.show})")
        for m in result["missed_pairs"]:
            print(f"  {m['cosine']:.3f}  j3={m['jaccard3']:.3f}  {esc(m['a'])}  {esc(m['b'])}  ({m['found']})")
        print(f"\nhighest-score hits with truth cosine < 0.8 (top {args.show})")
        for fh in result["false_hits"]:
            cs = "<min" if fh["cosine"] is None else f"{fh['cosine']:.3f}"
            sc = "n/a" if fh["score"] is None else f"{fh['score']:.3f}"
            print(f"  score {sc}  cos {cs}  {esc(fh['query'])} -> {esc(fh['id'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
