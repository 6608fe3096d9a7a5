#!/usr/bin/env bash
# browser-test.sh: the page of `pocketdex serve` in a real browser (tests/browser/test_page.py:
# headless Chromium over WebDriver). Installs what is missing (Debian's chromium and
# chromium-driver with apt; selenium and pytest in a virtualenv under the target directory),
# builds the release binary and the sample index, and runs the test.
# Usage (from anywhere in the repository): scripts/browser-test.sh [--screenshots]
#   --screenshots  write docs/screenshots/page.png and page-phone.png (otherwise target/browser/)
# Honours CARGO_TARGET_DIR. Needs the network only for what it has to install.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${CARGO_TARGET_DIR:-target}
work=$target/browser
shots=$work/screenshots
case "${1:-}" in
  --screenshots) shots=docs/screenshots ;;
  "") ;;
  *) echo "usage: scripts/browser-test.sh [--screenshots]" >&2; exit 2 ;;
esac
mkdir -p "$work" "$shots"

apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get install -y --no-install-recommends "$@" \
    || { $sudo apt-get update && $sudo apt-get install -y --no-install-recommends "$@"; }
}

if [ ! -x /usr/bin/chromedriver ] || [ ! -x /usr/bin/chromium ]; then
  echo "== installing chromium and chromium-driver (apt)"
  apt_install chromium chromium-driver
fi

venv=$work/venv
if ! "$venv/bin/python" -c 'import selenium, pytest' 2>/dev/null; then
  echo "== a virtualenv with selenium and pytest ($venv)"
  if ! python3 -m venv "$venv" 2>/dev/null; then
    rm -rf "$venv"
    apt_install python3-venv
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'selenium>=4.11,<5' 'pytest>=7'
fi

echo "== build"
cargo build --release --locked --quiet --bin pocketdex
bin=$target/release/pocketdex
"$bin" build samples/wiki-en -o "$work/sample.pdx" -q

echo "== the page in headless Chromium"
POCKETDEX="$bin" POCKETDEX_INDEX="$work/sample.pdx" SAMPLES=samples SCREENSHOTS="$shots" \
  PYTHONDONTWRITEBYTECODE=1 \
  "$venv/bin/python" -m pytest -p no:cacheprovider -q -s tests/browser/test_page.py
echo "screenshots: $shots/page.png, $shots/page-phone.png"
