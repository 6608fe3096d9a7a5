"""man2.py: system-call manual pages to JSON Lines, rendered with groff.

Usage: python3 man2.py MAN2_DIR OUT.jsonl
Pages named NAME.2 are Linux man-pages, NAME.2freebsd FreeBSD's; ids are linux/NAME.2 and
freebsd/NAME.2freebsd. Pages that only include another (.so) are skipped.
"""
import gzip
import json
import os
import subprocess
import sys

src, out = sys.argv[1], sys.argv[2]
n = 0
with open(out, "w", encoding="utf-8") as f:
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if os.path.islink(path) or not name.endswith(".gz"):
            continue
        page = gzip.open(path).read()
        if page.startswith(b".so "):
            continue
        text = subprocess.run(
            ["groff", "-mandoc", "-Tutf8", "-P-cbou"],
            input=page, capture_output=True, check=True,
        ).stdout.decode("utf-8", "replace")
        stem = name[:-3]
        project = "freebsd" if stem.endswith("freebsd") else "linux"
        f.write(json.dumps({"id": f"{project}/{stem}", "text": text}) + "\n")
        n += 1
print(f"{out}: {n} pages", file=sys.stderr)
