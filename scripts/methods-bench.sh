#!/usr/bin/env bash
# methods-bench.sh: the README's table of the classical methods at scale. `pocketdex dups`
# with each of the seven methods over 200,000 and 2,000,000 generated documents (wordfreq's
# English vocabulary; the scale bench's collection in data/scale, generated when missing) plus
# 2,000 planted edited copies at 1%, 5%, 10% and 20%: time, peak memory, pairs and the planted
# copies found. Writes data/scale/methods-report.json. Under an hour on 2 cores at 2,000,000.
# Usage (from the repository root): scripts/methods-bench.sh [more options of benches/methods_scale.rs]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-wordfreq.sh >/dev/null
cargo bench --bench methods_scale -- --vocab data/wordfreq/large_en.msgpack.gz \
  --docs 200000,2000000 "$@"
