#!/usr/bin/env bash
# fetch-wordfreq.sh: download the wordfreq 3.1.1 wheel from PyPI and extract the large
# English, German, French, Spanish, Italian and Portuguese frequency tables (CC BY-SA 4.0 data)
# to data/wordfreq/.
# Usage (from repo root): scripts/fetch-wordfreq.sh [CACHE_DIR]   (default data/cache)
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=3.1.1
CACHE=${1:-data/cache}
OUT=data/wordfreq
FILES=(large_en.msgpack.gz large_de.msgpack.gz large_fr.msgpack.gz large_es.msgpack.gz large_it.msgpack.gz
  large_pt.msgpack.gz)
mkdir -p "$CACHE" "$OUT"

wheel=$(ls "$CACHE"/wordfreq-"$VERSION"-*.whl 2>/dev/null | head -n1 || true)
if [[ -z "$wheel" ]]; then
  pip download --quiet --no-deps --only-binary=:all: "wordfreq==$VERSION" -d "$CACHE"
  wheel=$(ls "$CACHE"/wordfreq-"$VERSION"-*.whl | head -n1)
fi

for f in "${FILES[@]}"; do
  if [[ ! -s "$OUT/$f" ]]; then
    # -j: junk paths, -o: overwrite a partial file
    unzip -q -j -o "$wheel" "wordfreq/data/$f" -d "$OUT"
  fi
  gzip -t "$OUT/$f"   # fail loudly on a truncated file
done

echo "wheel: $wheel"
for f in "${FILES[@]}"; do
  echo "$(realpath "$OUT/$f") ($(stat -c %s "$OUT/$f") bytes)"
done
