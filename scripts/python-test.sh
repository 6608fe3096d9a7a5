#!/usr/bin/env bash
# The Python package (crates/python): builds the abi3 wheel with maturin, installs it into a
# fresh virtualenv, checks the type stubs (mypy --strict on the package and its example;
# stubtest: the stub against the built module) and runs pytest: the builder, index and dups
# against the CLI, and pocketdex.spark in Spark's local mode on 100,000 generated documents
# (POCKETDEX_SPARK_DOCS changes the number). Spark needs Java 17: installed from Debian's
# packages when missing.
#
#   scripts/python-test.sh [PYTEST-ARGS...]   e.g. -k spark, or -x
#   scripts/python-test.sh --setup-only       the wheel in target/venv-python, no tests
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-$PWD/target}
venv=$target/venv-python

if ! command -v java >/dev/null; then
  apt-get install -y -q openjdk-17-jre-headless >/dev/null
fi
echo "-- a fresh virtualenv with the build and test tools ($venv)"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r crates/python/requirements-dev.txt
echo "-- the wheel (maturin, release)"
rm -rf "$target/wheels"
"$venv/bin/maturin" build --quiet --release --locked -m crates/python/Cargo.toml -o "$target/wheels"
"$venv/bin/pip" install -q --disable-pip-version-check "$target"/wheels/pocketdex-*-abi3-*.whl
[ "${1:-}" = --setup-only ] && exit 0

echo "-- type stubs: mypy --strict, stubtest"
(cd crates/python && "$venv/bin/mypy")
"$venv/bin/python" -m mypy.stubtest pocketdex._pocketdex
echo "-- pytest (the CLI it compares with: a release build)"
cargo build --release --locked --quiet -p pocketdex-cli --bin pocketdex
cd crates/python/tests
POCKETDEX_BIN=$target/release/pocketdex "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
