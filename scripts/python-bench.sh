#!/usr/bin/env bash
# The Python package's benchmark (issue 14's targets; see crates/python/bench/bench.py): the
# wheel built and installed as scripts/python-test.sh does, then bench.py with its options,
# e.g. `scripts/python-bench.sh --docs 200000 --spark-docs 1000000 --rounds 3` (the defaults).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-$PWD/target}
# POCKETDEX_SKIP_SETUP=1: the wheel scripts/python-test.sh just installed.
[ -n "${POCKETDEX_SKIP_SETUP:-}" ] || scripts/python-test.sh --setup-only
cargo build --release --locked --bin pocketdex -p pocketdex-cli
# The core's example without -p: built with the workspace's features, as the tests built it,
# not rebuilt with the core's alone.
cargo build --release --locked --example query_rate
POCKETDEX_BIN=$target/release/pocketdex "$target/venv-python/bin/python" crates/python/bench/bench.py \
  --cli "$target/release/pocketdex" --query-rate "$target/release/examples/query_rate" "$@"
