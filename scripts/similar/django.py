"""django.py: Django's documentation (docs/**/*.txt) at several releases to JSON Lines.

Usage: python3 django.py UNPACKED_DIR OUT.jsonl VERSION...
UNPACKED_DIR holds Django-VERSION/ (or django-VERSION/) trees; ids are VERSION/path. Release notes
(docs/releases/) are left out: each release copies them unchanged.
"""
import json
import os
import sys

root, out, versions = sys.argv[1], sys.argv[2], sys.argv[3:]
n = 0
with open(out, "w", encoding="utf-8") as f:
    for v in versions:
        tree = next(
            os.path.join(root, d, "docs")
            for d in (f"Django-{v}", f"django-{v}")
            if os.path.isdir(os.path.join(root, d, "docs"))
        )
        for dirpath, dirs, files in os.walk(tree):
            dirs.sort()
            for name in sorted(files):
                rel = os.path.relpath(os.path.join(dirpath, name), tree)
                if not name.endswith(".txt") or rel.startswith("releases" + os.sep):
                    continue
                with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as t:
                    f.write(json.dumps({"id": f"{v}/{rel}", "text": t.read()}) + "\n")
                n += 1
print(f"{out}: {n} pages", file=sys.stderr)
