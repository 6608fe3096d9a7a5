#!/usr/bin/env bash
# The parameter search behind pocketdex's defaults: builds an index per configuration and
# development set, measures it with `pocketdex eval`, and prints one table row per pair.
# Usage: scripts/tune.sh [OUT_DIR]   (needs the dev sets of scripts/fetch-dev-data.sh)
# Each row: recall at cosine >= 0.9 and in [0.8, 0.9), precision of hits scored >= 0.9
# (true cosine >= 0.9), estimator RMSE, index bytes/doc beyond names, lookups per query.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/tune}; mkdir -p "$out"
cargo build --release --quiet
bin=target/release/pocketdex

# name | build options. The resolution (bands, weighted MinHash samples per band code, rows per
# short band) is picked from the collection's size by default; these sets are small (< 50,000
# documents), so "default" is 4,1,2 or 4,0,2. Larger resolutions are what millions of documents
# get: measuring them here shows the recall they cost on the same pairs.
configs=(
  "default|"
  "plain: 1 band, 1 lookup|--resolution 1,0,2 --probes 1"
  "4 bands, 1 lookup each|--resolution 4,0,2 --probes 1"
  "4 bands, 8 lookups each|--resolution 4,0,2 --probes 8"
  "3 bands, 24 lookups each|--resolution 3,0,2"
  "4 bands, 1 sample (<= 50k docs)|--resolution 4,1,2"
  "3 bands, 1 sample (<= 350k docs)|--resolution 3,1,2"
  "4 bands, 2 samples (<= 5M docs)|--resolution 4,2,3"
  "4 bands, 2 samples, 16 lookups|--resolution 4,2,3 --probes 16"
  "3 bands, 2 samples (<= 20M docs)|--resolution 3,2,3"
  "4 bands, 3 samples (<= 300M docs)|--resolution 4,3,3"
  "2 staggered schemes, 12 lookups|--scheme=-0.45,0.45 --scheme=-0.9,0,0.9 --probes 12"
  "boundaries +-0.3|--scheme=-0.3,0.3"
  "boundaries +-0.6|--scheme=-0.6,0.6"
  "z-score deviation, +-1.5|--zscore --scheme=-1.5,1.5"
  "k=16|--classes 16"
  "k=32|--classes 32"
  "128-bit sketch|--sketch-words 2"
  "256-bit sketch|--sketch-words 4"
)
sets=("data/dev/wiki-synth.jsonl|en" "data/dev/manpages-de-synth.jsonl|de" "data/dev/debian-copyright|en" "data/dev/crates|en")
# Held out (not used to choose): scripts/tune.sh with HOLDOUT=1 measures these instead.
[ -n "${HOLDOUT:-}" ] && sets=("data/dev/holdout-wiki.jsonl|en" "data/dev/holdout-de.jsonl|de")

printf 'config\tset\trecall>=0.9\trecall[0.8,0.9)\tprecision@0.9\trmse\tbytes/doc\tlookups/query\n'
for c in "${configs[@]}"; do
  name=${c%%|*}; opts=${c#*|}
  for s in "${sets[@]}"; do
    input=${s%%|*}; lang=${s#*|}; set=$(basename "${input%.jsonl}")
    [ -e "$input" ] || { echo "missing $input: run scripts/fetch-dev-data.sh" >&2; exit 2; }
    # shellcheck disable=SC2086
    "$bin" build "$input" -o "$out/x.pdx" --lang "$lang" -q $opts
    "$bin" eval "$input" --index "$out/x.pdx" --threshold 0.5 --out "$out/$set" -q --json > "$out/$set.json"
    "$bin" info "$out/x.pdx" --json > "$out/info.json"
    python3 - "$name" "$set" "$out/$set.json" "$out/info.json" <<'PY'
import json, sys
name, set_, rep, info = sys.argv[1:5]
s = json.load(open(rep))["summary"]; i = json.load(open(info)); p = i["params"]
fmt = lambda v: "-" if v is None else f"{v:.3f}"
lookups = len(p["schemes"]) * p["resolution"]["bands"] * p["probes"]
print("\t".join([name, set_, fmt(s.get("recall_cos_0_90")), fmt(s.get("recall_cos_0_80_0_90")),
                 fmt(s.get("precision_score_0_90_cos_0_90")), fmt(s.get("estimator_rmse")),
                 f'{i["bytes_per_document_beyond_names"]:.1f}', str(lookups)]))
PY
  done
done
