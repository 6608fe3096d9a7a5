#!/usr/bin/env python3
"""man2jsonl.py: roughly convert a tree of gzipped man pages (man or mdoc groff source) to JSON
Lines {"id": "ls.1", "title": "ls(1)", "text": ...}, one page per line, sorted by id.
Symlinked pages (aliases) are skipped. This is a rough macro stripper, not a formatter: text is
kept, macros and escapes are dropped or mapped, tables keep their cells, separated by spaces.

  man2jsonl.py MAN_ROOT OUTFILE      e.g. MAN_ROOT = <extracted deb>/usr/share/man/de
"""
import gzip
import json
import re
import shlex
import sys
from pathlib import Path

GLYPHS = {"aq": "'", "dq": '"', "lq": '"', "rq": '"', "oq": "'", "cq": "'", "em": "—", "en": "–",
          "hy": "-", "bu": "•", "co": "©", "rg": "®", "mu": "×", "de": "°", ">=": "≥", "<=": "≤",
          "ti": "~", "ha": "^", "ga": "`", "rs": "\\", "Fo": "«", "Fc": "»", "fo": "‹", "fc": "›",
          "Bq": "„", "bq": "‚", ":a": "ä", ":o": "ö", ":u": "ü", ":A": "Ä", ":O": "Ö", ":U": "Ü",
          "ss": "ß", "->": "→", "<-": "←", "pl": "+", "mi": "-", "eq": "=", "sl": "/", "ba": "|"}
# Text-free macros/requests (lowercase roff requests are always dropped).
DROP = set("TH Dd Dt Os PP LP P TP PD RS RE HP IX UE ME TE EX EE Bl El Bd Ed Ek Bk Sm Pp Lp Ns "
           "Ud Rs Re sp br".split())
ALTERNATING = set("BR RB IR RI BI IB".split())  # alternating-font macros: args join without space
MDOC_CALLABLE = set("Ar Cm Dl Dq Ev Fa Fl Ic Li Nm Op Pa Ql Qq Sq Sx Va Xr Ao Ac Bo Bc Do Dc Oo Oc "
                    "Po Pc Qo Qc So Sc Em Sy No Ns Pf Aq Bq Brq Eo Ec Xo Xc Lk Mt An Ad Cd Er Fn Ft "
                    "In Ms Ot St Tn Vt".split())
ESCAPE = re.compile(r"""\\(?:
      f(?:\[[^\]]*\]|\(..|.)            # font change
    | s(?:[+-]?\d+|\[[^\]]*\]|\(..)      # size change
    | [*n](?:\[[^\]]*\]|\(..|.)          # string / register interpolation
    | [hvwlLoXDZbRSx]'[^']*'             # motions, drawing, width ...
    | [kz].                              # mark / zero-width char
    | \((?P<g2>..)                       # \(xx glyph
    | \[(?P<gn>[^\]]*)\]                 # \[name] glyph
    | (?P<c>.)                           # anything else
    )""", re.X)


def unescape(s):
    def rep(m):
        g = m.group("g2") or m.group("gn")
        if g is not None:
            if g.startswith("u") and re.fullmatch(r"u[0-9A-Fa-f]{4,6}", g):
                return chr(int(g[1:], 16))
            return GLYPHS.get(g, "")
        c = m.group("c")
        if c is None:
            return ""
        return {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": " "}.get(
            c, "" if c in "&%:/,|^c)!{}" else c)
    s = re.sub(r'\\".*', "", s)  # inline comment
    return ESCAPE.sub(rep, s)


def args(rest):
    lex = shlex.shlex(rest, posix=True)  # roff: only double quotes group, backslashes stay
    lex.whitespace_split, lex.quotes, lex.escape = True, '"', ""
    try:
        return list(lex)
    except ValueError:
        return rest.split()


def convert(src):
    out, skip_to, table_fmt = [], None, False
    for line in src.splitlines():
        if skip_to:                      # inside .de/.ig definitions
            if line.startswith(skip_to):
                skip_to = None
            continue
        if table_fmt:                    # .TS options / format lines end with "."
            table_fmt = not line.rstrip().endswith(".")
            continue
        if line.startswith((".\\\"", "'\\\"", ".\\#")):
            continue
        if line[:1] in ".'":
            name, _, rest = line[1:].strip().partition(" ")
            if name in ("de", "de1", "am", "ig"):
                skip_to = ".."
            elif name == "TS":
                table_fmt = True
            elif name in ("SH", "SS", "Sh", "Ss", "PP", "LP", "P", "Pp", "TP", "IP", "sp"):
                out.append("")
            if not name or name in DROP or name[0].islower():
                continue
            words = f"{name} {' '.join(args(rest))}".replace("Fl ", "Fl -").split()[1:]  # .Fl v: -v
            words = [w for w in words if w not in MDOC_CALLABLE]
            if name == "IP":
                words = words[:1]
            line = ("" if name in ALTERNATING else " ").join(words)
        line = unescape(line.replace("\t", " ").replace("T{", "").replace("T}", "")).strip()
        out.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
    return re.sub(r"[ \u00a0]{2,}", " ", text)


def main(root, outfile):
    docs = []
    for p in sorted(Path(root).glob("man*/*.gz")):
        if p.is_symlink():
            continue
        stem = p.name[:-3]                         # ls.1.gz -> ls.1
        text = convert(gzip.decompress(p.read_bytes()).decode("utf-8", "replace"))
        if text.startswith(".so ") or not text:
            continue
        name, _, sec = stem.rpartition(".")
        docs.append({"id": stem, "title": f"{name}({sec})", "text": text})
    assert len({d["id"] for d in docs}) == len(docs), "duplicate ids"
    with open(outfile, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    print(f"{outfile}: {len(docs)} documents")


if __name__ == "__main__":
    main(*sys.argv[1:3])
