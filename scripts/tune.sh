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

# name | build options
configs=(
  "default|"
  "plain: 1 band, no probes|--bands 1 --probes 0"
  "1 band, 4 probes|--bands 1 --probes 4"
  "3 bands, no probes|--probes 0"
  "3 bands, 2 probes|--probes 2"
  "2 staggered schemes, 3 probes|--scheme=-0.45,0.45 --scheme=-0.9,0,0.9 --probes 3"
  "boundaries +-0.2|--scheme=-0.2,0.2"
  "boundaries +-0.3|--scheme=-0.3,0.3"
  "boundaries +-0.6|--scheme=-0.6,0.6"
  "z-score deviation, +-1.5|--zscore --scheme=-1.5,1.5"
  "k=16, 2 bands|--classes 16 --bands 2"
  "k=32, 4 bands|--classes 32 --bands 4"
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
lookups = len(p["schemes"]) * p["bands"] * 2 ** p["probes"]
print("\t".join([name, set_, fmt(s.get("recall_cos_0_90")), fmt(s.get("recall_cos_0_80_0_90")),
                 fmt(s.get("precision_score_0_90_cos_0_90")), fmt(s.get("estimator_rmse")),
                 f'{i["bytes_per_document_beyond_names"]:.1f}', str(lookups)]))
PY
  done
done
