#!/usr/bin/env bash
# quality.sh: scripts/quality.sh's rows for the collections of scripts/generalize/fetch.sh
# (recall, precision of score >= 0.9 at cosine >= 0.9 / >= 0.8, score bias / RMSE, self first,
# candidates per query,
# bytes per document beyond names), and how many hits of another document score >= 0.6 when every
# document is a query (each pair counts from both sides).
# Usage (from the repository root): [PDX_BIN=path/to/pocketdex] [SETS="gcide-synth ..."]
#   [BUILD_FLAGS="--expected-docs 2000000"] [EVAL_FLAGS="--short-probes 1"] [FORCE_LANG=en]
#   scripts/generalize/quality.sh [OUT_DIR]
# (default target/generalize; PDX_BIN: another build to measure, e.g. an older one, instead of this
# tree's; SETS: the sets to measure, default all; BUILD_FLAGS, EVAL_FLAGS: word-split into every
# build, and every eval and query; FORCE_LANG: build every set with this --lang instead of its own)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/generalize}; mkdir -p "$out"
if [ -n "${PDX_BIN:-}" ]; then bin=$PDX_BIN
else cargo build --release --quiet; bin=${CARGO_TARGET_DIR:-target}/release/pocketdex; fi
printf 'set\tdocs\tr>=0.95\tr>=0.9\tr[0.8,0.9)\tr[0.7,0.9)\tprec@0.9(cos0.9/0.8)\tbias/rmse\tself-first\tbytes/doc\tpairs>=0.6\tcandidates\n'
read -r -a build_flags <<< "${BUILD_FLAGS:-}"
read -r -a eval_flags <<< "${EVAL_FLAGS:-}"
for set in ${SETS:-sotu linuxdoc-en sotu-synth linuxdoc-synth gcide-synth fr-synth es-synth it-synth pt-synth}; do
  input=data/generalize/$set.jsonl
  [ -e "$input" ] || { echo "missing $input: run scripts/generalize/fetch.sh" >&2; exit 2; }
  # Each set in its language (FORCE_LANG=en: every set as English, as before --lang fr/es existed).
  case $set in fr*) lang=fr ;; es*) lang=es ;; it*) lang=it ;; pt*) lang=pt ;; *) lang=en ;; esac
  "$bin" build "$input" -o "$out/$set.pdx" -q --lang "${FORCE_LANG:-$lang}" ${build_flags[@]+"${build_flags[@]}"}
  "$bin" eval "$input" --index "$out/$set.pdx" --threshold 0.5 --out "$out/$set" -q --json \
    ${eval_flags[@]+"${eval_flags[@]}"} > "$out/$set.json"
  "$bin" info "$out/$set.pdx" --json > "$out/$set.info.json"
  # Every document as a query: hits of another document at 0.6 or more (ids are one per line).
  "$bin" query "$out/$set.pdx" "$input" --threshold 0.6 --json ${eval_flags[@]+"${eval_flags[@]}"} > "$out/$set.hits.jsonl"
  python3 - "$set" "$out/$set.json" "$out/$set.info.json" "$out/$set.hits.jsonl" <<'PY'
import json, sys
name, rep, info, hits = sys.argv[1:5]
r = json.load(open(rep)); s = r["summary"]; i = json.load(open(info))
f = lambda k: "-" if s.get(k) is None else f"{s[k]:.3f}"
others = sum(1 for l in open(hits) for r in [json.loads(l)] if r["type"] == "hit" and r["id"] != r["query"])
print("\t".join([name, str(i["documents"]), f("recall_cos_0_95"), f("recall_cos_0_90"), f("recall_cos_0_80_0_90"), f("recall_cos_0_70_0_90"),
                 f"{f('precision_score_0_90_cos_0_90')} / {f('precision_score_0_90_cos_0_80')}",
                 f"{s['estimator_bias']:+.3f} / {s['estimator_rmse']:.3f}", f("self_first"),
                 f'{i["bytes_per_document_beyond_names"]:.1f}', str(others),
                 f'{r["queries"]["mean_candidates"]:.1f}']))
PY
done
