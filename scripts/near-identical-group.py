#!/usr/bin/env python3
"""near-identical-group.py: one group of M near-identical documents, for measuring what a group
costs `pocketdex dups` (memory and pairs listed). Each is the first document of a JSON Lines
file with W of its words replaced by words of other documents (seeded), so that every two are
near copies but none identical.

Usage: scripts/near-identical-group.py INPUT.jsonl M [W] > group.jsonl
"""
import json
import random
import sys


def main():
    src, m = sys.argv[1], int(sys.argv[2])
    w = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    rng = random.Random(7)
    with open(src, encoding="utf-8") as f:
        docs = [json.loads(line)["text"] for line in f if line.strip()][:1000]
    base = max(docs, key=lambda t: len(t.split()) if len(t.split()) < 600 else 0).split()
    pool = [x for t in docs for x in t.split()]
    for i in range(m):
        words = list(base)
        for _ in range(w):
            words[rng.randrange(len(words))] = rng.choice(pool)
        print(json.dumps({"id": f"near{i:06d}", "text": " ".join(words)}))


if __name__ == "__main__":
    main()
