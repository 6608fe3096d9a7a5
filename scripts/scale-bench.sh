#!/usr/bin/env bash
# scale-bench.sh: the README's scale table. Generates 2,000,000 documents without near-duplicates
# over wordfreq's English vocabulary (2.4 GB of JSON Lines, kept in data/scale and reused), builds
# nested indexes of 20,000, 200,000 and 2,000,000 documents, queries each with the same 2,000
# edited copies, and does the same on real text (10,033 Wikipedia leads and 19 edited copies of
# each); prints a Markdown table and writes data/scale/report.json. Each size's `wc -w` and build
# run 3 times in turn (--build-rounds; the table gives medians). About 17 minutes and 8 GB of
# disk on a 2-core machine.
# Usage (from the repository root): scripts/scale-bench.sh [more options of benches/scale.rs]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-wordfreq.sh >/dev/null
[ -e data/dev/wiki-en.jsonl ] || scripts/fetch-dev-data.sh
cargo bench --bench scale -- --vocab data/wordfreq/large_en.msgpack.gz \
  --docs 20000,200000,2000000 --real --build-rounds 3 "$@"
