#!/usr/bin/env python3
"""query-recall.py: recall of the originals and candidates per query, from the edited copies of
`pocketdex synth` (each names its `source` and edit `rate`) and what `pocketdex query --json`
printed for them; the same measures as the scale bench's table, for an index built by hand.

Usage: pocketdex query INDEX QUERIES.jsonl --json > results.json
       scripts/query-recall.py QUERIES.jsonl results.json
"""
import sys, json
qf, res = sys.argv[1], sys.argv[2]
meta = {}
for l in open(qf):
    d = json.loads(l); meta[d['id']] = (d['source'], d['edits']['rate'])
found = set()
cands = []
for l in open(res):
    d = json.loads(l)
    if d.get('type') == 'hit' and meta.get(d['query'], (None,))[0] == d['id']:
        found.add(d['query'])
    if d.get('type') == 'query':
        cands.append(d['candidates'])
by = {}
for q, (src, rate) in meta.items():
    t = by.setdefault(rate, [0, 0]); t[1] += 1; t[0] += q in found
print(' '.join(f"{r}: {a/b:.4f}" for r, (a, b) in sorted(by.items())))
c = sorted(cands); print('candidates mean %.1f p50 %d p99 %d max %d' % (sum(c)/len(c), c[len(c)//2], c[int(len(c)*0.99)], c[-1]))
