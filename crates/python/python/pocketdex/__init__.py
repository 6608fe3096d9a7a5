"""pocketdex: near-duplicate search with fuzzy-fingerprints in one small memory-mapped index file.

Build an index, query it with whole documents, and find near-duplicate groups in a collection::

    import pocketdex
    builder = pocketdex.IndexBuilder(lang="en")
    builder.add_batch(ids, texts)            # lists or pyarrow arrays; parallel, GIL released
    builder.write("archive.pdx")
    index = pocketdex.Index("archive.pdx")   # an index file, an index set, or a list of them
    for hit in index.query(new_text):        # hits: id, score, rank, codes, path, title
        print(hit.id, hit.score)
    found = pocketdex.dups(ids, texts, method="minhash")   # clusters; found.keep per row

An index set (a directory) changes: `add`, `delete`, `check` (the submission check, with
`add=True` adding each new document) and `merge`, as the command line's commands of those names::

    pocketdex.add("archive", ids, texts)                     # creates the set when missing
    for v in pocketdex.check("archive", [text], [sub_id], add=True):
        print(v["status"], v["hits"])    # "new" (added), "near-copy", or "error" (then nothing is added)

Index files are those of the `pocketdex` command line: either opens what the other writes.
Collections built in pieces: `create_set` makes an index set and returns its schema, shards are
built with `IndexBuilder.like(schema, segment=True)` anywhere, and `adopt_segments` adds them;
`pocketdex.spark` does exactly this on Apache Spark.
"""

from ._pocketdex import (
    FORMAT_VERSION,
    BusyError,
    Cluster,
    CorruptIndexError,
    DuplicateIdError,
    Dups,
    Fingerprint,
    Fingerprinter,
    Hit,
    Index,
    IndexBuilder,
    PocketdexError,
    SignatureError,
    __version__,
    add,
    adopt_segments,
    check,
    create_set,
    delete,
    dups,
    fingerprint,
    merge,
    methods,
    repair,
)

__all__ = [
    "FORMAT_VERSION",
    "BusyError",
    "Cluster",
    "CorruptIndexError",
    "DuplicateIdError",
    "Dups",
    "Fingerprint",
    "Fingerprinter",
    "Hit",
    "Index",
    "IndexBuilder",
    "PocketdexError",
    "SignatureError",
    "__version__",
    "add",
    "adopt_segments",
    "check",
    "create_set",
    "delete",
    "dups",
    "fingerprint",
    "merge",
    "methods",
    "repair",
]
