#!/usr/bin/env bash
# quality.sh: the README's high-similarity table. For each development set of fetch.sh, with the
# codes of its own size and of a 2-million-document collection (--expected-docs 2000000), in the
# default mode and with --similar, runs `pocketdex eval --threshold 0 --top 10` (every document
# is a query; a pair counts when either finds the other among its first 10 hits) and prints
# recall per cosine range, the precision of hits scored >= 0.7 against cosine >= 0.6, candidates
# per query and index bytes per document beyond the names. Writes the eval reports (TSV, JSON,
# SVG curves) under OUT_DIR.
# Usage (from the repository root): scripts/similar/quality.sh [OUT_DIR] (default target/similar)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/similar}; mkdir -p "$out"
cargo build --release --quiet
bin=target/release/pocketdex
printf '| set | codes for | mode | [0.5,0.6) | [0.6,0.7) | [0.7,0.8) | [0.8,0.9) | ≥ 0.9 | precision score ≥ 0.7 (cos ≥ 0.6) | candidates/query | bytes/doc |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
for set in man2 django; do
  input=data/similar/$set.jsonl
  [ -e "$input" ] || { echo "missing $input: run scripts/similar/fetch.sh" >&2; exit 2; }
  for size in own 2000000; do
    index=$out/$set-$size.pdx
    if [ "$size" = own ]; then "$bin" build "$input" -o "$index" -q
    else "$bin" build "$input" -o "$index" -q --expected-docs "$size"; fi
    "$bin" info "$index" --json > "$out/$set-$size.info.json"
    for mode in default similar; do
      flag=(); [ "$mode" = similar ] && flag=(--similar)
      run=$out/$set-$size-$mode
      "$bin" eval "$input" --index "$index" --threshold 0 --top 10 "${flag[@]}" --out "$run" -q --json > "$run.json"
      python3 - "$set" "$size" "$mode" "$run.json" "$out/$set-$size.info.json" <<'PY'
import json, sys
name, size, mode, rep, info = sys.argv[1:6]
r = json.load(open(rep)); i = json.load(open(info))
def recall(lo, hi):
    sel = [b for b in r["buckets"] if b["lo"] >= lo - 1e-9 and b["hi"] <= hi + 1e-9]
    n, of = sum(b["recall"]["n"] for b in sel), sum(b["recall"]["of"] for b in sel)
    return f"{n / of:.3f} ({of})" if of else "-"
p = r["summary"]["precision_score_0_70_cos_0_60"]
print("| " + " | ".join([name, f"{i['documents']:,}" if size == "own" else "2,000,000", mode,
      recall(.5, .6), recall(.6, .7), recall(.7, .8), recall(.8, .9), recall(.9, 1.0),
      "-" if p is None else f"{p:.3f}", f"{r['queries']['mean_candidates']:.1f}",
      f"{i['bytes_per_document_beyond_names']:.1f}"]) + " |")
PY
    done
  done
done
