#!/usr/bin/env bash
# fetch.sh: the (uncommitted) development sets for high-similarity search, under data/similar/:
#   man2.jsonl     system-call manual pages of two independent projects: Linux man-pages (Debian
#                  `manpages-dev`) and FreeBSD (Debian `freebsd-manpages`); the same calls described
#                  by different authors in their own words. Rendered with groff. Used to choose
#                  the similar path's parameters.
#   django.jsonl   Django's documentation at releases 1.11.29, 2.2.28 and 4.2.16 (PyPI sdists;
#                  release notes left out): the same pages revised over six years. Kept for
#                  checking that what was chosen on man2 generalizes.
# Sources and licences: scripts/similar/README.md. Truth: `pocketdex eval data/similar/X.jsonl`.
# Usage (from the repository root): scripts/similar/fetch.sh [CACHE_DIR] (default data/cache).
# Needs pip, apt-get, dpkg-deb, groff and python3.
set -euo pipefail
cd "$(dirname "$0")/../.."

CACHE=${1:-data/cache}
OUT=data/similar
mkdir -p "$CACHE" "$OUT"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# a. Manual pages: pinned versions when the archive still has them.
for spec in manpages-dev=6.03-2 freebsd-manpages=12.2-1; do
  pkg=${spec%%=*}
  if ! ls "$CACHE/${pkg}"_*_all.deb >/dev/null 2>&1; then
    (cd "$CACHE" && { apt-get download -q "$spec" || apt-get download -q "$pkg"; })
  fi
  dpkg-deb -x "$(ls "$CACHE/${pkg}"_*_all.deb | head -n1)" "$tmp/man"
done
python3 scripts/similar/man2.py "$tmp/man/usr/share/man/man2" "$OUT/man2.jsonl"

# b. Django's documentation at three releases.
for v in 1.11.29 2.2.28 4.2.16; do
  ls "$CACHE"/[Dd]jango-$v.tar.gz >/dev/null 2>&1 \
    || pip download --quiet --no-deps --no-binary :all: "django==$v" -d "$CACHE"
  tar -xzf "$(ls "$CACHE"/[Dd]jango-$v.tar.gz | head -n1)" -C "$tmp"
done
python3 scripts/similar/django.py "$tmp" "$OUT/django.jsonl" 1.11.29 2.2.28 4.2.16

wc -l "$OUT"/*.jsonl
