#!/usr/bin/env python3
"""query-recall.py: recall of the originals and candidates per query, from the edited copies of
`pocketdex synth` (each names its `source` and edit `rate`) and what `pocketdex query --json`
printed for them: the scale bench's measures, for an index built by hand.

Usage: pocketdex query INDEX QUERIES.jsonl --json > results.json
       scripts/query-recall.py QUERIES.jsonl results.json
"""
import json
import sys


def main():
    queries, results = sys.argv[1], sys.argv[2]
    # Query id -> (its original's id, its edit rate).
    meta = {}
    with open(queries, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            meta[d["id"]] = (d["source"], d["edits"]["rate"])
    found, candidates = set(), []
    with open(results, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d.get("type") == "hit" and meta.get(d["query"], (None,))[0] == d["id"]:
                found.add(d["query"])
            elif d.get("type") == "query":
                candidates.append(d["candidates"])
    by_rate = {}
    for q, (_, rate) in meta.items():
        hit_total = by_rate.setdefault(rate, [0, 0])
        hit_total[0] += q in found
        hit_total[1] += 1
    print("recall of the original by edit rate:",
          ", ".join(f"{r}: {h / t:.4f}" for r, (h, t) in sorted(by_rate.items())))
    c = sorted(candidates)
    if c:
        print(f"candidates per query: mean {sum(c) / len(c):.1f} / p50 {c[len(c) // 2]} "
              f"/ p99 {c[int(len(c) * 0.99)]} / max {c[-1]}")


if __name__ == "__main__":
    main()
