"""pocketdex on Apache Spark: a sharded build and a lookup, with Spark's own ``mapInArrow``.

``build(df, path)`` turns a DataFrame of ``id`` and ``text`` columns into one index set: the
driver creates the set and its schema (the language's idf table and the resolution of the
collection's size, fixed), every partition builds one shard from that schema on its executor,
and the driver adds the shards to the set as its segments, in partition order. The set then
answers exactly as one index of all the documents built on one machine with the same ``lang``,
``expected_docs`` and ``idf="language"`` (``tests/test_spark.py`` checks it byte for byte).

``nearest(df, path)`` adds each row's nearest indexed copy and its score to a DataFrame; the
index (a file or a set) is shipped to the executors with ``SparkContext.addFile``.

Ray and Dask have the same shape: ``Dataset.map_batches`` and ``DataFrame.map_partitions`` call
the same per-batch functions (``IndexBuilder.like(schema, segment=True).add_batch`` and
``Index.query_batch``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Callable, Dict, Iterator, Optional, Union

import pyarrow as pa

from . import _pocketdex as _px

__all__ = ["build", "nearest"]


Batches = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]
# A path: a str or any os.PathLike (pathlib.Path).
_StrPath = Union[str, "os.PathLike[str]"]


def _shard_builder(schema: bytes, id_col: str, text_col: str, title_col: Optional[str]) -> Batches:
    """The function each partition runs: its rows in, one shard (or nothing) out."""

    def shard(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        builder = _px.IndexBuilder.like(schema, segment=True)
        for batch in batches:
            # A null id would be named after its row in this partition ("row 0"), which
            # another partition names alike: refused here, where the cause is plain.
            if batch.column(id_col).null_count:
                raise ValueError(
                    "the id column %r holds nulls: every document of an index set needs an id" % id_col
                )
            titles = batch.column(title_col) if title_col else None
            builder.add_batch(batch.column(id_col), batch.column(text_col), titles)
        part = TaskContext.get().partitionId()  # type: ignore[union-attr]
        skipped = len(builder.skipped)
        docs = len(builder)
        data = builder.to_bytes() if docs else b""
        yield pa.RecordBatch.from_pydict(
            {"part": [part], "docs": [docs], "skipped": [skipped], "shard": [data]},
            schema=pa.schema(
                [("part", pa.int32()), ("docs", pa.int64()), ("skipped", pa.int64()), ("shard", pa.binary())]
            ),
        )

    return shard


def build(
    df: Any,
    path: _StrPath,
    *,
    id_col: str = "id",
    text_col: str = "text",
    title_col: Optional[str] = None,
    lang: str = "en",
    expected_docs: Optional[int] = None,
) -> Dict[str, int]:
    """Builds the index set ``path`` (a new or empty directory) from ``df``, one shard per partition.

    ``path`` is a str or any os.PathLike (pathlib.Path). ``expected_docs`` fixes the codes'
    resolution (default: ``df.count()``); a set grows well to about ten times it. Ids must be
    unique (and not null): a repeated one raises ``ValueError`` naming it and its partition, a
    null one fails the job saying the id column holds nulls. When the job fails, what the call
    made is removed (a directory the caller made is left, empty), so that the same call can run
    again. Returns
    ``documents``, ``segments`` and ``skipped`` (empty texts). Shards travel to the driver as
    Arrow binary values, so no shared file system is needed; keep partitions under about 1 GB of
    text each (Arrow's 2 GB per value).
    """
    if expected_docs is None:
        expected_docs = max(int(df.count()), 1)
    existed = os.path.exists(path)
    schema = _px.create_set(path, lang=lang, expected_docs=expected_docs)
    try:
        return _build_shards(df, path, schema, id_col, text_col, title_col)
    except BaseException:
        # The set is new and holds nothing yet: remove it rather than leave a half-made job
        # (what create_set made in a directory the caller made; the directory itself only when
        # this call made it).
        if existed:
            for name in os.listdir(path):
                entry = os.path.join(path, name)
                if os.path.isdir(entry):
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    os.remove(entry)
        else:
            shutil.rmtree(path, ignore_errors=True)
        raise


def _build_shards(
    df: Any, path: _StrPath, schema: bytes, id_col: str, text_col: str, title_col: Optional[str]
) -> Dict[str, int]:
    """Builds the shards of ``df`` from ``schema`` and adopts them into the set at ``path``."""
    columns = [id_col, text_col] + ([title_col] if title_col else [])
    shards = df.select(*columns).mapInArrow(
        _shard_builder(schema, id_col, text_col, title_col),
        "part int, docs long, skipped long, shard binary",
    )
    staging = tempfile.mkdtemp(prefix=".pocketdex-shards-", dir=os.path.dirname(os.path.abspath(path)))
    try:
        files = []
        documents = skipped = 0
        # Partitions in waves of as many as Spark runs at once: every core busy, and the driver
        # holds at most one wave's shards (toLocalIterator would build one partition at a time).
        rdd = shards.rdd
        sc = df.sparkSession.sparkContext
        wave = max(int(sc.defaultParallelism), 1)
        for first in range(0, rdd.getNumPartitions(), wave):
            parts = range(first, min(first + wave, rdd.getNumPartitions()))
            for row in sc.runJob(rdd, list, parts):
                skipped += row["skipped"]
                if not row["docs"]:
                    continue
                # Named after its partition: an error about a shard says which one.
                file = os.path.join(staging, "partition-%05d.pdx" % row["part"])
                with open(file, "wb") as out:
                    out.write(row["shard"])
                files.append((row["part"], file))
                documents += row["docs"]
        files.sort()
        _px.adopt_segments(path, [f for _, f in files])
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {"documents": documents, "segments": len(files), "skipped": skipped}


def nearest(
    df: Any,
    path: _StrPath,
    *,
    text_col: str = "text",
    id_col: Optional[str] = None,
    threshold: Optional[float] = None,
    similar: bool = False,
    ship: bool = True,
    prefix: str = "match_",
) -> Any:
    """``df`` with each row's nearest indexed copy: ``match_id`` (null when none scores at least
    ``threshold``, default 0.5) and ``match_score`` (named with ``prefix``; a ``df`` that has a
    column of either name already raises ``ValueError``).

    ``path`` (a str or any os.PathLike) is an index file or set. With ``id_col``, a hit with the
    row's own id is passed over (the nearest *other* copy, for a DataFrame that is itself
    indexed). ``ship=True`` sends the index to every executor with ``SparkContext.addFile``;
    ``ship=False`` opens ``path`` as given, on a file system every executor sees. Spark ships a
    path once per application: after the index changes, query it under a new path (or with
    ``ship=False``).
    """
    from pyspark import SparkFiles
    from pyspark.sql.types import DoubleType, StringType, StructField, StructType

    id_name, score_name = prefix + "id", prefix + "score"
    clash = [c for c in (id_name, score_name) if c in df.columns]
    if clash:
        raise ValueError(
            "df has a column named %s already; give another prefix= for the match columns"
            % " and ".join(repr(c) for c in clash)
        )
    path = os.path.abspath(path)
    if ship:
        df.sparkSession.sparkContext.addFile(path, recursive=os.path.isdir(path))
    name = os.path.basename(path)
    top = 2 if id_col else 1

    def annotate(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        index = _px.Index(SparkFiles.get(name) if ship else path)
        for batch in batches:
            answers = index.query_batch(
                batch.column(text_col), top=top, threshold=threshold, similar=similar
            )
            own = batch.column(id_col).to_pylist() if id_col else [None] * batch.num_rows
            ids, scores = [], []
            for hits, me in zip(answers, own):
                best = next((h for h in hits if me is None or h.id != str(me)), None)
                ids.append(best.id if best else None)
                scores.append(best.score if best else None)
            yield batch.append_column(id_name, pa.array(ids, pa.string())).append_column(
                score_name, pa.array(scores, pa.float64())
            )

    out_schema = StructType(
        list(df.schema.fields)
        + [StructField(id_name, StringType(), True), StructField(score_name, DoubleType(), True)]
    )
    return df.mapInArrow(annotate, out_schema)
