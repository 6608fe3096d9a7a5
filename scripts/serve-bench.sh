#!/usr/bin/env bash
# serve-bench.sh: the load benchmark of `pocketdex serve` (issue 13). Generates 200,000 documents
# of about 1 KB (kept in data/serve and reused), builds their index, measures the library on two
# threads, then the server under 64 keep-alive connections for 30 s on the loopback interface,
# then the library again; prints a table and one JSON line, and writes data/serve/report.json.
# About 3 minutes the first time (generating and building), 2 minutes after, on 2 cores.
# Usage (from anywhere): scripts/serve-bench.sh [more options of benches/serve.rs, e.g. --rounds 2]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --bench serve -- --docs 200000 --seconds 30 --connections 64 "$@"
