#!/usr/bin/env python3
"""idf-views.py INPUT TRUTH.tsv [LANG]: how far a learned idf table's weights take a sketch's
cosine from the exact tf-idf cosine, per rule of the table (the simulation that chose format
version 11's sketch view, README "Measured", long documents).

INPUT is a JSON Lines file or a directory of documents; TRUTH.tsv the `truth.tsv` of `pocketdex
eval INPUT --out DIR` (its pairs at cosine >= 0.5). Terms are approximated by a regex and the
language's stopword list (on the State of the Union addresses they give `pocketdex eval`'s
cosines to 0.001). For each rule: the cosine of the table's quantised weights minus the exact
cosine, mean and RMS, over the truth pairs and over 300 random pairs. Rules: `today` (version 10:
the N/2 + 500 terms of highest df, one default for the rest), `cap10500` (every table as large as
one learned from 20,000 documents), `cvX` (version 11's sketch view: entries in df order until
the rest's idf has a coefficient of variation of at most X).
"""
import collections, json, math, os, random, re, sys

src, truth = sys.argv[1:3]
lang = sys.argv[3] if len(sys.argv) > 3 else 'en'
here = os.path.dirname(os.path.abspath(__file__))
sw = {w.strip().lower() for w in open(f'{here}/../../reference-corpus/stopwords/{lang}.txt')
      if w.strip() and not w.startswith('#')}
tok = lambda t: collections.Counter(w for w in re.findall(r"\w+(?:['’.:]\w+)*", t.lower())
                                    if w not in sw and re.search(r'[^\W\d_]', w))
docs = {}
if os.path.isdir(src):
    for root, _, fs in os.walk(src):
        for f in fs:
            p = os.path.join(root, f)
            docs[os.path.relpath(p, src)] = tok(open(p, errors='replace').read())
else:
    for l in open(src):
        d = json.loads(l); docs[d['id']] = tok(d['text'])
N = len(docs); df = collections.Counter()
for c in docs.values(): df.update(c.keys())
exact = {t: math.log(N / d) for t, d in df.items()}
q = lambda v: max(1, min(255, round(v * 16))) / 16
by_df = sorted(((d, t) for t, d in df.items() if d >= 2), reverse=True)
samples = min(len(by_df), N // 2 + 500)

def cv_len(target):
    ones = [d for d in df.values() if d < 2]
    s0 = sum(ones); s1 = sum(d * math.log(N / d) for d in ones); s2 = sum(d * math.log(N / d) ** 2 for d in ones)
    suffix = [None] * (len(by_df) + 1); suffix[len(by_df)] = (s0, s1, s2)
    for c in range(len(by_df) - 1, -1, -1):
        d = by_df[c][0]; w = math.log(N / d); s0 += d; s1 += d * w; s2 += d * w * w; suffix[c] = (s0, s1, s2)
    for c in range(samples, min(10500, len(by_df)) + 1):
        n, a, b = suffix[c]
        if n == 0 or math.sqrt(max(0, b / n - (a / n) ** 2)) <= target * (a / n): return c
    return min(10500, len(by_df))

def table(kept_len):
    kept = {t for d, t in by_df[:kept_len]}
    lo = [df[t] for t in df if t not in kept]
    default = sum(d * math.log(N / d) for d in lo) / max(1, sum(lo))
    return {t: (q(exact[t]) if t in kept else q(default)) for t in df}, default, len(kept)

def cos(a, b, w):
    A = {t: c * w[t] for t, c in docs[a].items()}; B = {t: c * w[t] for t, c in docs[b].items()}
    num = sum(v * B.get(t, 0) for t, v in A.items())
    den = math.sqrt(sum(v * v for v in A.values()) * sum(v * v for v in B.values()))
    return num / den if den else 0

rows = [l.rstrip('\n').split('\t') for l in list(open(truth))[1:]]
rows = [(r[0], r[1]) for r in rows if r[0] in docs and r[1] in docs]
random.seed(1); ids = list(docs)
rnd = [p for p in ((random.choice(ids), random.choice(ids)) for _ in range(300)) if p[0] != p[1]]
ex_t = [cos(a, b, exact) for a, b in rows]; ex_r = [cos(a, b, exact) for a, b in rnd]
print(f'{os.path.basename(src.rstrip("/"))}: {N} documents, {len(df)} terms, {len(by_df)} of df >= 2, {len(rows)} truth pairs')
mean = lambda x: sum(x) / max(1, len(x)); rms = lambda x: math.sqrt(mean([v * v for v in x]))
for name, n in [('today', samples), ('cap10500', min(10500, len(by_df))),
                ('cv0.15', cv_len(0.15)), ('cv0.10', cv_len(0.10)), ('cv0.07', cv_len(0.07))]:
    w, default, k = table(n)
    dt = [cos(a, b, w) - e for (a, b), e in zip(rows, ex_t)]; dr = [cos(a, b, w) - e for (a, b), e in zip(rnd, ex_r)]
    print(f'  {name:9s} {k:6d} entries, default {default:.2f}: truth pairs {mean(dt):+.3f} (RMS {rms(dt):.3f}), '
          f'random pairs {mean(dr):+.3f} (RMS {rms(dr):.3f})')
