#!/usr/bin/env bash
# quality.sh: the README's quality table. Runs `pocketdex eval` (default parameters) on the
# development and held-out sets of scripts/fetch-dev-data.sh and prints one row per set:
# recall at cosine >= 0.95, >= 0.9, in [0.8, 0.9); precision of hits scored >= 0.9 against
# cosine >= 0.9 / >= 0.8; score bias / RMSE; self first; index bytes per document beyond names.
# Usage (from the repository root): [BUILD_FLAGS="--idf collection"] scripts/quality.sh [OUT_DIR]
# BUILD_FLAGS: extra flags for every `pocketdex build` (word-split). Honours CARGO_TARGET_DIR.
# IDF_SAMPLE=N: each set is indexed with the idf table of a build of every Nth of its documents
# (`--idf SAMPLE.pdx`, as an index set created from a representative sample would be).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/quality}; mkdir -p "$out"
read -r -a build_flags <<< "${BUILD_FLAGS:-}"
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/pocketdex
sets=("data/dev/debian-copyright|en" "data/dev/crates|en" "data/dev/wiki-synth.jsonl|en"
      "data/dev/manpages-de-synth.jsonl|de" "data/dev/holdout-wiki.jsonl|en" "data/dev/holdout-de.jsonl|de")
printf 'set\tdocs\tr>=0.95\tr>=0.9\tr[0.8,0.9)\tprec@0.9(cos0.9/0.8)\tbias/rmse\tself-first\tbytes/doc\n'
for s in "${sets[@]}"; do
  input=${s%%|*}; lang=${s#*|}; set=$(basename "${input%.jsonl}")
  [ -e "$input" ] || { echo "missing $input: run scripts/fetch-dev-data.sh" >&2; exit 2; }
  idf=()
  if [ -n "${IDF_SAMPLE:-}" ]; then
    if [ -d "$input" ]; then
      mapfile -t sample < <(find "$input" -type f | LC_ALL=C sort | awk -v n="$IDF_SAMPLE" 'NR % n == 1')
    else
      awk -v n="$IDF_SAMPLE" 'NR % n == 1' "$input" > "$out/$set-sample.jsonl"
      sample=("$out/$set-sample.jsonl")
    fi
    "$bin" build "${sample[@]}" -o "$out/$set-sample.pdx" --lang "$lang" --idf collection -q
    idf=(--idf "$out/$set-sample.pdx")
  fi
  "$bin" build "$input" -o "$out/$set.pdx" --lang "$lang" -q ${build_flags[@]+"${build_flags[@]}"} ${idf[@]+"${idf[@]}"}
  "$bin" eval "$input" --index "$out/$set.pdx" --threshold 0.5 --out "$out/$set" -q --json > "$out/$set.json"
  "$bin" info "$out/$set.pdx" --json > "$out/$set.info.json"
  python3 - "$set" "$out/$set.json" "$out/$set.info.json" <<'PY'
import json, sys
name, rep, info = sys.argv[1:4]
s = json.load(open(rep))["summary"]; i = json.load(open(info))
f = lambda k: "-" if s.get(k) is None else f"{s[k]:.3f}"
print("\t".join([name, str(i["documents"]), f("recall_cos_0_95"), f("recall_cos_0_90"),
                 f("recall_cos_0_80_0_90"),
                 f"{f('precision_score_0_90_cos_0_90')} / {f('precision_score_0_90_cos_0_80')}",
                 f"{s['estimator_bias']:+.3f} / {s['estimator_rmse']:.3f}", f("self_first"),
                 f'{i["bytes_per_document_beyond_names"]:.1f}']))
PY
done
