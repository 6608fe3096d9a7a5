#!/usr/bin/env python3
"""Development data with graded similarity: edited copies of real documents at controlled rates.

Reads JSON Lines ({"id","text",...}), writes JSON Lines with every original plus, for a random
subset, edited copies ("<id>~e<k>") made by word substitutions, insertions, deletions, sentence
moves and added boilerplate, at edit rates spread over [0, --max-rate]. Deterministic (--seed).
"""
import argparse, json, random, re

BOILER = [
    "Sent from my phone.", "This message and any attachments are confidential.",
    "Please consider the environment before printing this e-mail.",
    "Click here to unsubscribe from this list.", "All rights reserved.",
]

def edit(text, rate, rng, vocab):
    sents = re.split(r'(?<=[.!?])\s+', text.strip())
    if len(sents) > 2 and rng.random() < 0.5:
        i, j = rng.randrange(len(sents)), rng.randrange(len(sents))
        sents.insert(j, sents.pop(i))
    words = " ".join(sents).split()
    out = []
    for w in words:
        r = rng.random()
        if r < rate / 3:
            out.append(rng.choice(vocab))          # substitution
        elif r < 2 * rate / 3:
            continue                               # deletion
        elif r < rate:
            out.extend([w, rng.choice(vocab)])     # insertion
        else:
            out.append(w)
    if rng.random() < 0.3:
        out.append(rng.choice(BOILER))
    return " ".join(out)

def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("input"); ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--share", type=float, default=0.3, help="share of documents that get copies")
    ap.add_argument("--copies", type=int, default=2)
    ap.add_argument("--max-rate", type=float, default=0.3)
    ap.add_argument("--limit", type=int, default=0, help="use only the first N documents")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    docs = [json.loads(l) for l in open(a.input, encoding="utf-8") if l.strip()]
    if a.limit:
        docs = docs[: a.limit]
    vocab = [w for d in docs[:2000] for w in d["text"].split()][:200000] or ["word"]
    with open(a.output, "w", encoding="utf-8") as out:
        for d in docs:
            out.write(json.dumps({"id": d["id"], "text": d["text"]}, ensure_ascii=False) + "\n")
            if rng.random() < a.share:
                for k in range(a.copies):
                    rate = rng.uniform(0, a.max_rate)
                    out.write(json.dumps({"id": f'{d["id"]}~e{k}', "text": edit(d["text"], rate, rng, vocab)},
                                         ensure_ascii=False) + "\n")

if __name__ == "__main__":
    main()
