#!/usr/bin/env bash
# methods-bench.sh: the README's table of the classical methods at scale. `pocketdex dups`
# with each of the seven methods over 200,000 and 2,000,000 generated documents (wordfreq's
# English vocabulary; the scale bench's collection in data/scale, generated when missing) plus
# about 2,000 planted edited copies at 1%, 5%, 10% and 20%: time, peak memory, pairs and the planted
# copies found. Writes data/scale/methods-report.json. About 10 minutes on 2 cores (the
# 2,000,000 runs take 31 s to 2.3 min each), plus generating the collection once.
# Usage (from the repository root): scripts/methods-bench.sh [more options of benches/methods_scale.rs]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-wordfreq.sh >/dev/null
cargo bench --bench methods_scale -- --vocab data/wordfreq/large_en.msgpack.gz \
  --docs 200000,2000000 "$@"
