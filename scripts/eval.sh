#!/usr/bin/env bash
# Recall/precision of pocketdex against exact tf-idf cosine truth (scripts/oracle), for one corpus.
# usage: scripts/eval.sh INPUT [build options...]   (INPUT: directory or .jsonl; env THR=0.5 TOP=50)
# Writes target/eval/<name>.{pairs.tsv,pdx,hits.jsonl}; needs: pip install -r scripts/oracle/requirements.txt
set -euo pipefail
input=$1; shift
name=$(basename "${input%.jsonl}")
out=target/eval; mkdir -p "$out"
bin=target/release/pocketdex
[ -x "$bin" ] || cargo build --release --quiet
[ -s "$out/$name.pairs.tsv" ] || python3 scripts/oracle/truth.py "$input" --title ignore --min 0.5 -o "$out/$name.pairs.tsv"
"$bin" build "$input" -o "$out/$name.pdx" "$@" 2>&1 | tail -3
strip=()
[ -d "$input" ] && strip=(--strip-prefix "${input%/}/")
start=$(date +%s.%N)
"$bin" query "$out/$name.pdx" "$input" --json --top "${TOP:-50}" --threshold "${THR:-0.5}" > "$out/$name.hits.jsonl" || true
echo "query time: $(echo "$(date +%s.%N) - $start" | bc) s"
python3 scripts/oracle/recall.py --pairs "$out/$name.pairs.tsv" --hits "$out/$name.hits.jsonl" "${strip[@]}"
