"""Deduplicates a Parquet file of `id` and `text` columns: one document per near-duplicate group.

    python dedup_parquet.py docs.parquet deduped.parquet [method]
"""

import sys

import pyarrow as pa
import pyarrow.parquet as pq

import pocketdex


def main(source: str, target: str, method: str = "minhash") -> None:
    table = pq.read_table(source)
    found = pocketdex.dups(table["id"], table["text"], method=method)
    pq.write_table(table.filter(pa.array(found.keep)), target)
    print(f"{found}: kept {sum(found.keep)} of {table.num_rows} rows in {target}")


if __name__ == "__main__":
    main(*sys.argv[1:])
