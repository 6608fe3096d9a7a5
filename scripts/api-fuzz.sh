#!/usr/bin/env bash
# Property-based tests of `pocketdex serve` against its own OpenAPI description, with
# schemathesis (PyPI): thousands of generated requests to every endpoint of a writable set with
# texts; no answer may be a 5xx, and every answer must have a documented status, content type
# and schema. (Requests the description allows but the API refuses by documented rules, such as
# `/v1/compare` without an id, are not counted: positive_data_acceptance and
# negative_data_rejection are left out.)
#
#   scripts/api-fuzz.sh [SECONDS]    default 20 (CI); 600 for a long run
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
venv="$PWD/target/venv-api-fuzz"
if [ ! -x "$venv/bin/schemathesis" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'schemathesis>=4.3,<5'
fi
cargo build --release --locked --quiet
bin="${CARGO_TARGET_DIR:-target}/release/pocketdex"
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin" add "$work/set" samples/wiki-en 2>/dev/null
"$bin" serve "$work/set" --writable --texts samples/wiki-en --addr 127.0.0.1:0 2>"$work/log" &
pid=$!
for _ in $(seq 100); do grep -q "at http://" "$work/log" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*/' "$work/log" | head -1)
[ -n "$url" ] || { cat "$work/log"; exit 1; }
# From the temporary directory, where schemathesis keeps its cache (.schemathesis/).
(cd "$work" && "$venv/bin/schemathesis" run "${url}v1/openapi.json" --max-time "$seconds" -w 2 \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --seed 13)
kill -TERM "$pid"
wait "$pid"
echo "api-fuzz: the server stopped cleanly after ${seconds} s of generated requests"
