#!/usr/bin/env bash
# Coverage-guided fuzzing of pocketdex with cargo-fuzz (libFuzzer): builds the targets of fuzz/
# and runs them, one process (one core) each, as many at once as the machine has cores
# (FUZZ_JOBS=N to choose).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET [TARGET...]]   each target for that long (default 20 s)
#   scripts/fuzz.sh --seeds                            rebuild the index seeds of fuzz/corpus/open
#                                                      with the CLI (after a format change)
#   scripts/fuzz.sh --build-only                       install cargo-fuzz and build the targets,
#                                                      run nothing (CI builds them early, niced)
#
# Environment:
#   FUZZ_RUNS=N         stop each target after N executions instead of after the time
#                       (the long run: FUZZ_SANITIZER=none FUZZ_RUNS=10000000 scripts/fuzz.sh 0)
#   FUZZ_SANITIZER=S    address (default) or none (faster to build and to run; CI uses it)
#   FUZZ_ARGS="..."     more libFuzzer flags, e.g. "-max_len=8192 -use_value_profile=1"
#
# Each target starts from its committed seeds (fuzz/corpus/TARGET, read only) and grows a
# working corpus in fuzz/work/corpus/TARGET (ignored by git, kept between runs). A crash or a
# broken check stops the script with status 1; libFuzzer saves the input in
# fuzz/artifacts/TARGET/. Reproduce it with `cargo +nightly fuzz run TARGET FILE`, then add
# it to tests/fuzz-regressions/TARGET/, where `cargo test --release --test integration fuzz_regressions` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.1
TARGETS=(open mutate documents methods query)

if [ "${1:-}" = "--seeds" ]; then
  # Small valid indexes (a few samples; with titles; a segment of an index set) and
  # truncations of one: what the `open` target starts from. `sample-v7.pdx` (4 KiB blocks)
  # and `sample-v8.pdx` (MPHF levels of 100%), older versions that readers still take, are kept
  # as they are.
  pdx() { cargo run --release --locked --quiet -- "$@"; }
  out=fuzz/corpus/open
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  s=samples/wiki-en
  pdx build -q "$s/Choir.txt" "$s/Logarithm.txt" "$s/Triton_moon.txt" -o "$out/sample.pdx"
  printf '%s\n' \
    '{"id": "choir", "title": "Choir", "text": "A choir is a musical ensemble of singers. Choral music is written for such an ensemble, sung by choirs."}' \
    '{"id": "log", "title": "Logarithm", "text": "The logarithm is the inverse function to exponentiation: the exponent to which a base must be raised."}' \
    '{"id": "x", "text": "1 2 3"}' >"$tmp/titled.jsonl"
  pdx build -q "$tmp/titled.jsonl" -o "$out/titled.pdx"
  pdx add -q "$tmp/set" "$s/Choir.txt" "$s/Venus_de_Milo.txt"
  cp "$tmp"/set/seg-*.pdx "$out/segment.pdx"
  n=$(stat -c %s "$out/sample.pdx")
  head -c 64 "$out/sample.pdx" >"$out/sample-head.pdx"
  head -c $((n / 2)) "$out/sample.pdx" >"$out/sample-half.pdx"
  head -c $((n - 1)) "$out/sample.pdx" >"$out/sample-short.pdx"
  # An idf table with sketch-only entries (format version 11): the golden file's long documents.
  cp tests/golden/v11.pdx "$out/sketch-only.pdx"
  # Short documents with META's short probes (format version 12).
  cp tests/golden/v12.pdx "$out/short.pdx"
  # The same with FILTER (format version 13 on, 64-aligned from 14: codes made for a million documents).
  cp tests/golden/v14.pdx "$out/filter.pdx"
  ls -l "$out"
  exit 0
fi

build_only=0
if [ "${1:-}" = "--build-only" ]; then build_only=1; shift; fi
seconds=${1:-20}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && TARGETS=("$@")

# cargo-fuzz needs nightly's -Z flags: the nightly toolchain when rustup has one, else the
# machine's toolchain with RUSTC_BOOTSTRAP=1.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  cargo=(cargo +nightly)
else
  export RUSTC_BOOTSTRAP=1
  cargo=(cargo)
fi
if ! cargo fuzz --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
  echo "== installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install --locked --quiet cargo-fuzz --version "$CARGO_FUZZ_VERSION"
fi

sanitizer=${FUZZ_SANITIZER:-address}
# Its own target directory per sanitizer, so that switching does not rebuild the other.
build=(--sanitizer "$sanitizer" --target-dir "fuzz/target/$sanitizer")
echo "== building the fuzz targets (sanitizer: $sanitizer)"
time "${cargo[@]}" fuzz build "${build[@]}"
[ "$build_only" = 1 ] && exit 0

# The methods' parallel parts run on one thread: one core per fuzzer.
export RAYON_NUM_THREADS=1
if [ -n "${FUZZ_RUNS:-}" ]; then
  limit=(-runs="$FUZZ_RUNS")
else
  limit=(-max_total_time="$seconds")
fi
# fuzz_one TARGET: runs it, then prints its statistics or, on a crash, where the input is.
fuzz_one() {
  local t=$1 log="fuzz/work/$1.log"
  mkdir -p "fuzz/work/corpus/$t" "fuzz/artifacts/$t"
  # -timeout: an input that takes 10 s is a bug too; -rss_limit_mb: 2 GiB is plenty.
  # shellcheck disable=SC2086
  if ! "${cargo[@]}" fuzz run "${build[@]}" "$t" "fuzz/work/corpus/$t" "fuzz/corpus/$t" -- \
    "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 ${FUZZ_ARGS:-} \
    >"$log" 2>&1; then
    { echo "== fuzz target $t FAILED"
      grep -E -A3 'panicked at|ERROR: (AddressSanitizer|libFuzzer)|^SUMMARY|Test unit written' "$log" | head -n 40 || true
      echo "fuzz target $t failed: the input is in fuzz/artifacts/$t/ (whole log: $log)"; } >"$log.summary"
    return 1
  fi
  { echo "== fuzzed $t (${limit[*]})"
    grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)' "$log" |
      sed 's/^stat::/  /'
    grep -E '^#[0-9]+ +(DONE|INITED)' "$log" | tail -n 1 | sed 's/^/  /' || true; } >"$log.summary"
}
jobs_max=${FUZZ_JOBS:-$(nproc)}
pids=() names=() failed=0
for t in "${TARGETS[@]}"; do
  # One target per core: wait for one to end before starting another.
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  echo "== fuzzing $t (${limit[*]})"
  fuzz_one "$t" &
  pids+=($!) names+=("$t")
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed=1
  cat "fuzz/work/${names[$i]}.log.summary"
done
[ "$failed" = 0 ] || exit 1
echo "== every fuzz target ran without a crash"
