#!/usr/bin/env python3
"""truth.py - ground-truth near-duplicate pairs for pocketdex evaluation.

Independent oracle: tokenizes every document into *content words*, builds
tf-idf vectors (tf = raw count, idf = ln(N/df), rows L2-normalised) and writes
every pair with cosine >= --min, computed with chunked scipy.sparse products
(never a Python loop over all pairs).  For the same pairs it also reports the
Jaccard similarity of word 3-shingles over the content words.

Usage:
  scripts/oracle/truth.py INPUT [--lang LANG] [--stopwords FILE | --no-stopwords]
                          [--min 0.5] -o pairs.tsv

INPUT is a directory (every regular file below it, recursively, symlinks skipped
unless --follow-symlinks; id = path relative to INPUT with '/' separators), a single file
(id = its base name) or a .jsonl file (one {"id","text","title"?} per line).

Outputs:
  pairs.tsv       header "a<TAB>b<TAB>cosine<TAB>jaccard3", one row per pair,
                  a < b (code-point order), sorted by (a, b)
  pairs.tsv.docs  header "id<TAB>tokens<TAB>terms<TAB>html", one row per doc:
                  content-token count, distinct content words, 1 if HTML-stripped
Ids containing TAB, LF, CR or backslash are written escaped (\\t \\n \\r \\\\);
recall.py undoes this.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import stat
import sys
import time
from html.parser import HTMLParser

import numpy as np
import scipy.sparse as sp

HTML_EXTS = {".html", ".htm", ".xhtml", ".shtml"}
HTML_SNIFF = re.compile(r"<(?:!doctype\s+html|html|head|body)\b", re.IGNORECASE)
WORD = re.compile(r"\w+", re.UNICODE)
EPS = 1e-9  # tolerance for the --min comparison (float round-off)


# ----------------------------------------------------------------------------
# text extraction


class _TextExtractor(HTMLParser):
    """Collects text outside <script>/<style>; every tag boundary becomes a space."""

    SKIP = {"script", "style"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skip += 1
        self.parts.append(" ")

    def handle_startendtag(self, tag, attrs):
        self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.skip > 0:
            self.skip -= 1
        self.parts.append(" ")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def strip_html(text: str) -> str:
    p = _TextExtractor()
    p.feed(text)
    p.close()
    return "".join(p.parts)


def looks_like_html(name: str | None, text: str) -> bool:
    if name is not None and os.path.splitext(name)[1].lower() in HTML_EXTS:
        return True
    return HTML_SNIFF.search(text[:4096]) is not None


def content_words(text: str, stop: frozenset[str]) -> list[str]:
    out = []
    for tok in WORD.findall(text):
        tok = tok.casefold()
        if tok in stop:
            continue
        if not any(c.isalpha() for c in tok):
            continue
        out.append(tok)
    return out


# ----------------------------------------------------------------------------
# input


def escape_id(s: str) -> str:
    if any(c in s for c in "\\\t\n\r"):
        s = s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return s


def read_text(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8", errors="replace")


def iter_docs(inp: str, title_mode: str, follow: bool = False):
    """Yields (id, name_for_html_sniffing_or_None, text)."""
    if os.path.isdir(inp):
        files = []
        visited = set()
        for root, dirs, names in os.walk(inp, followlinks=follow):
            if follow:  # prune directory-symlink cycles
                real = os.path.realpath(root)
                if real in visited:
                    dirs[:] = []
                    continue
                visited.add(real)
            for n in names:
                full = os.path.join(root, n)
                try:
                    st = os.stat(full) if follow else os.lstat(full)
                except OSError as e:
                    print(f"warning: cannot stat {full}: {e}", file=sys.stderr)
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                rel = os.path.relpath(full, inp).replace(os.sep, "/")
                files.append((rel, full))
        files.sort()
        for rel, full in files:
            try:
                yield rel, full, read_text(full)
            except OSError as e:
                print(f"warning: cannot read {full}: {e}", file=sys.stderr)
    elif inp.endswith(".jsonl"):
        with open(inp, "rb") as f:
            for lineno, raw in enumerate(f, 1):
                line = raw.decode("utf-8", errors="replace").strip()
                if not line:
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    print(f"warning: {inp}:{lineno}: bad JSON ({e}), skipped", file=sys.stderr)
                    continue
                if not isinstance(obj, dict) or "id" not in obj:
                    print(f"warning: {inp}:{lineno}: no \"id\", skipped", file=sys.stderr)
                    continue
                text = obj.get("text") or ""
                title = obj.get("title") or ""
                if not isinstance(text, str):
                    text = str(text)
                if title and title_mode == "include":
                    text = f"{title}\n{text}"
                yield str(obj["id"]), None, text
    elif os.path.isfile(inp):
        yield os.path.basename(inp), inp, read_text(inp)
    else:
        sys.exit(f"error: {inp}: no such file or directory")


def load_stopwords(args) -> tuple[frozenset[str], str]:
    if args.no_stopwords:
        return frozenset(), "(none)"
    path = args.stopwords
    if path is None:
        here = os.path.dirname(os.path.abspath(__file__))
        cands = [
            os.path.join("reference-corpus", "stopwords", f"{args.lang}.txt"),
            os.path.join(here, "..", "..", "reference-corpus", "stopwords", f"{args.lang}.txt"),
        ]
        path = next((c for c in cands if os.path.isfile(c)), None)
        if path is None:
            print(f"warning: no stopword list for '{args.lang}' found "
                  f"(looked for reference-corpus/stopwords/{args.lang}.txt); using none",
                  file=sys.stderr)
            return frozenset(), "(none: default list missing)"
    words = set()
    for line in read_text(path).splitlines():
        w = line.strip()
        if not w or w.startswith("#"):
            continue
        words.add(w.casefold())
    return frozenset(words), os.path.normpath(path)


# ----------------------------------------------------------------------------
# shingles


def shingle_codes(ids: np.ndarray, vocab_size: int) -> np.ndarray:
    """Sorted unique int64 codes of the word 3-shingles of a term-id sequence.

    Exact (collision-free) encoding a*V^2 + b*V + c while V^3 < 2^63, a 64-bit
    mix otherwise.  A doc with 1-2 content words gets one shingle made of them
    (padded with -1); a doc with none gets the empty set.
    """
    n = len(ids)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    if n < 3:
        ids = np.concatenate([ids, np.full(3 - n, -1, dtype=np.int64)])
    ids = ids.astype(np.int64) + 1  # -1 padding -> 0
    v = vocab_size + 1
    a, b, c = ids[:-2], ids[1:-1], ids[2:]
    if v ** 3 < 2 ** 63:
        codes = (a * v + b) * v + c
    else:
        with np.errstate(over="ignore"):
            ua, ub, uc = (x.astype(np.uint64) for x in (a, b, c))
            h = ua * np.uint64(0x9E3779B97F4A7C15)
            h = (h ^ (h >> np.uint64(29))) + ub * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(31))) + uc * np.uint64(0x94D049BB133111EB)
            h = h ^ (h >> np.uint64(32))
            codes = h.view(np.int64)
    return np.unique(codes)


def jaccard(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) == 0 and len(y) == 0:
        return 0.0
    inter = len(np.intersect1d(x, y, assume_unique=True))
    return inter / (len(x) + len(y) - inter)


# ----------------------------------------------------------------------------
# main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="directory, single file, or .jsonl file")
    ap.add_argument("--lang", default="en", help="language for the default stopword list (en, de, fr, es, it, pt)")
    ap.add_argument("--stopwords", metavar="FILE",
                    help="stopword list, one word per line "
                         "(default: reference-corpus/stopwords/LANG.txt if present)")
    ap.add_argument("--no-stopwords", action="store_true", help="do not drop any stopwords")
    ap.add_argument("--min", type=float, default=0.5, help="minimum cosine to output (default 0.5)")
    ap.add_argument("-o", "--output", required=True, help="pairs TSV ('-' = stdout; .docs then skipped)")
    ap.add_argument("--html", choices=["auto", "always", "never"], default="auto",
                    help="HTML stripping: auto = by extension .htm(l)/.xhtml/.shtml or a "
                         "<!doctype html>/<html>/<head>/<body> tag in the first 4096 chars")
    ap.add_argument("--title", choices=["include", "ignore"], default="include",
                    help="jsonl only: prepend the \"title\" field to the text (default include)")
    ap.add_argument("--follow-symlinks", action="store_true",
                    help="directory input: also take symlinks to files/dirs (default: "
                         "regular files only, symlinks skipped)")
    ap.add_argument("--chunk-cells", type=int, default=4_000_000,
                    help="bound on rows*cols of one similarity block (memory knob)")
    args = ap.parse_args(argv)
    if args.min <= 0:
        print("note: pairs without any shared weighted term (cosine 0) are never listed", file=sys.stderr)

    t0 = time.time()
    stop, stop_src = load_stopwords(args)

    # --- tokenize --------------------------------------------------------
    vocab: dict[str, int] = {}
    doc_ids: list[str] = []
    seen: set[str] = set()
    seqs: list[np.ndarray] = []
    html_flags: list[int] = []
    dup = 0
    for did, name, text in iter_docs(args.input, args.title, args.follow_symlinks):
        if did in seen:
            dup += 1
            print(f"warning: duplicate id {did!r}, keeping the first", file=sys.stderr)
            continue
        seen.add(did)
        is_html = args.html == "always" or (args.html == "auto" and looks_like_html(name, text))
        if is_html:
            text = strip_html(text)
        words = content_words(text, stop)
        seq = np.fromiter((vocab.setdefault(w, len(vocab)) for w in words),
                          dtype=np.int64, count=len(words))
        doc_ids.append(did)
        seqs.append(seq)
        html_flags.append(int(is_html))
    n = len(doc_ids)
    V = len(vocab)
    t_tok = time.time()

    # --- tf-idf ----------------------------------------------------------
    indptr = np.zeros(n + 1, dtype=np.int64)
    cols_l, vals_l = [], []
    for i, seq in enumerate(seqs):
        u, cnt = np.unique(seq, return_counts=True)
        cols_l.append(u)
        vals_l.append(cnt.astype(np.float64))
        indptr[i + 1] = indptr[i] + len(u)
    cols = np.concatenate(cols_l) if cols_l else np.empty(0, np.int64)
    vals = np.concatenate(vals_l) if vals_l else np.empty(0, np.float64)
    X = sp.csr_matrix((vals, cols, indptr), shape=(n, V))
    X.sort_indices()
    df = np.bincount(cols, minlength=V).astype(np.float64)
    with np.errstate(divide="ignore"):
        idf = np.log(n / df) if n else np.zeros(V)
    X = X @ sp.diags(idf)  # tf * idf
    X = sp.csr_matrix(X)
    X.eliminate_zeros()    # terms in every doc have idf 0
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    inv = np.zeros_like(norms)
    inv[norms > 0] = 1.0 / norms[norms > 0]
    X = sp.csr_matrix(sp.diags(inv) @ X)
    zero_docs = int((norms == 0).sum())

    # --- all pairs via chunked sparse products ---------------------------
    # Block [s, e) x [s, n): only the upper triangle is computed.
    XT = sp.csc_matrix(X.T)  # V x n
    rows = max(1, min(n, args.chunk_cells // max(n, 1)))
    pa, pb, pc = [], [], []
    thr = args.min - EPS
    for s in range(0, n, rows):
        e = min(n, s + rows)
        blk = (X[s:e] @ XT[:, s:]).tocoo()
        r = blk.row.astype(np.int64) + s
        c = blk.col.astype(np.int64) + s
        keep = (c > r) & (blk.data >= thr)
        pa.append(r[keep])
        pb.append(c[keep])
        pc.append(blk.data[keep])
    pa = np.concatenate(pa) if pa else np.empty(0, np.int64)
    pb = np.concatenate(pb) if pb else np.empty(0, np.int64)
    pc = np.minimum(np.concatenate(pc), 1.0) if pc else np.empty(0)
    t_cos = time.time()

    # --- jaccard for those pairs, then output ----------------------------
    shingles: dict[int, np.ndarray] = {}

    def sh(i: int) -> np.ndarray:
        v = shingles.get(i)
        if v is None:
            v = shingles[i] = shingle_codes(seqs[i], V)
        return v

    out_rows = []
    for i, j, cval in zip(pa.tolist(), pb.tolist(), pc.tolist()):
        a, b = doc_ids[i], doc_ids[j]
        jac = jaccard(sh(i), sh(j))
        if b < a:
            a, b = b, a
        out_rows.append((a, b, cval, jac))
    out_rows.sort()

    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8", newline="\n")
    try:
        out.write("a\tb\tcosine\tjaccard3\n")
        for a, b, cval, jac in out_rows:
            out.write(f"{escape_id(a)}\t{escape_id(b)}\t{cval:.6f}\t{jac:.6f}\n")
    finally:
        if out is not sys.stdout:
            out.close()
    if args.output != "-":
        with open(args.output + ".docs", "w", encoding="utf-8", newline="\n") as f:
            f.write("id\ttokens\tterms\thtml\n")
            for did, seq, h in zip(doc_ids, seqs, html_flags):
                f.write(f"{escape_id(did)}\t{len(seq)}\t{len(np.unique(seq))}\t{h}\n")

    t_end = time.time()
    print(f"truth: {n} docs ({dup} duplicate ids skipped, {sum(html_flags)} HTML-stripped, "
          f"{zero_docs} with empty tf-idf vector), vocab {V}, nnz {X.nnz}, "
          f"stopwords {len(stop)} from {stop_src}", file=sys.stderr)
    print(f"truth: {len(out_rows)} pairs with cosine >= {args.min} -> {args.output}; "
          f"time tokenize {t_tok - t0:.1f}s, cosine {t_cos - t_tok:.1f}s, "
          f"jaccard+write {t_end - t_cos:.1f}s (block rows {rows})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
