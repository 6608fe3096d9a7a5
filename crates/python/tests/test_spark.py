"""pocketdex.spark in Spark's local mode: a sharded build from Parquet equals one build of the
same data byte for byte, and the lookup annotates a DataFrame as Index.query_batch answers.

Documents: `pocketdex synth --generate N` (default 100,000; POCKETDEX_SPARK_DOCS changes it),
and edited copies of some of them as queries.
"""

import os
import sys

import pyarrow as pa
import pyarrow.json as pj
import pyarrow.parquet as pq
import pytest

import pocketdex

pyspark = pytest.importorskip("pyspark", reason="pip install pyspark (the CI installs it)")
from pyspark.sql import SparkSession  # noqa: E402

import pocketdex.spark as pxs  # noqa: E402

DOCS = int(os.environ.get("POCKETDEX_SPARK_DOCS", "100000"))


@pytest.fixture(scope="module")
def spark():
    # Spark's Python workers run `python3` from PATH unless told: this interpreter has pocketdex.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("pocketdex-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def data(tmp_path_factory, cli):
    d = tmp_path_factory.mktemp("spark")
    gen, queries = d / "gen.jsonl", d / "queries.jsonl"
    cli("synth", "--generate", str(DOCS), "--words", "60", "--sigma", "0.6", "-o", str(gen))
    cli(
        "synth", str(gen), "--limit", str(min(DOCS, 20000)), "--share", "0.05",
        "--rates", "0.05,0.2", "--copies-only", "-o", str(queries),
    )
    table = pj.read_json(gen).select(["id", "text"])
    pq.write_table(table, d / "docs.parquet", row_group_size=10_000)
    return d, table, pj.read_json(queries).select(["id", "text"])


def frame(spark, table):
    """A DataFrame of a table's id and text columns."""
    rows = zip(table.column("id").to_pylist(), table.column("text").to_pylist())
    return spark.createDataFrame(list(rows), "id string, text string")


def test_a_sharded_build_is_one_build(spark, data, cli):
    d, table, queries = data
    assert table.num_rows == DOCS
    df = spark.read.parquet(str(d / "docs.parquet")).repartition(4)
    # Partition order is the order of one build of the same rows.
    rows = df.rdd.mapPartitions(lambda it: [[r["id"] for r in it]]).collect()
    assert len(rows) == 4 and all(rows)
    order = [i for part in rows for i in part]
    by_id = {i: k for k, i in enumerate(table.column("id").to_pylist())}
    ordered = table.take(pa.array([by_id[i] for i in order]))

    out = pxs.build(df, str(d / "archive.set"))
    assert out == {"documents": DOCS, "segments": 4, "skipped": 0}

    single = pocketdex.IndexBuilder(idf="language", expected_docs=DOCS)
    single.add_batch(ordered.column("id"), ordered.column("text"))
    single.write(d / "single.pdx")
    cli("merge", str(d / "archive.set"), "-o", str(d / "merged.pdx"))
    assert (d / "merged.pdx").read_bytes() == (d / "single.pdx").read_bytes()

    sharded, one = pocketdex.Index(d / "archive.set"), pocketdex.Index(d / "single.pdx")
    assert len(sharded) == DOCS
    got = sharded.query_batch(queries.column("text"))
    assert got == one.query_batch(queries.column("text"))
    # Edited copies find their originals (5% edits nearly always, 20% mostly).
    sources = [q.split("~")[0] for q in queries.column("id").to_pylist()]
    found = sum(src in [h.id for h in hits] for src, hits in zip(sources, got))
    assert found >= 0.9 * len(sources)

    # The lookup: each query row annotated with its nearest indexed copy.
    qdf = frame(spark, queries).repartition(3)
    annotated = {
        r["id"]: (r["match_id"], r["match_score"])
        for r in pxs.nearest(qdf, str(d / "archive.set")).collect()
    }
    want = {
        i: ((hits[0].id, hits[0].score) if hits else (None, None))
        for i, hits in zip(queries.column("id").to_pylist(), got)
    }
    assert annotated == want
    # Rows that are themselves indexed: with id_col, the nearest other document. The path a
    # pathlib.Path: the same answers as its str.
    some = frame(spark, table.slice(0, 200))
    by_path = {
        r["id"]: (r["match_id"], r["match_score"])
        for r in pxs.nearest(some, d / "archive.set", id_col="id").collect()
    }
    assert all(match != i for i, (match, _) in by_path.items())
    by_str = pxs.nearest(some, str(d / "archive.set"), id_col="id").collect()
    assert by_path == {r["id"]: (r["match_id"], r["match_score"]) for r in by_str}
    # A column the matches would be named as is refused, and another prefix avoids it.
    clashing = some.withColumnRenamed("id", "match_id")
    with pytest.raises(ValueError, match="'match_id'.*another prefix="):
        pxs.nearest(clashing, d / "archive.set")
    assert "near_id" in pxs.nearest(clashing, d / "archive.set", prefix="near_").columns


def test_a_repeated_id_adds_nothing(spark, tmp_path):
    df = spark.createDataFrame(
        [("a", "Jupiter is the fifth planet from the Sun."), ("a", "Mozart was a composer.")],
        "id string, text string",
    ).repartition(2)
    with pytest.raises(ValueError, match='partition-00001.pdx: document id "a" is given twice'):
        pxs.build(df, str(tmp_path / "dup.set"))
    # The failed job leaves nothing behind, and the same call runs again.
    assert not (tmp_path / "dup.set").exists()
    fixed = spark.createDataFrame(
        [("a", "Jupiter is the fifth planet from the Sun."), ("b", "Mozart was a composer.")],
        "id string, text string",
    ).repartition(2)
    # A pathlib.Path as the path, as a str.
    assert pxs.build(fixed, tmp_path / "dup.set")["documents"] == 2
    assert len(pocketdex.Index(tmp_path / "dup.set")) == 2
    # Null ids are refused, saying so; a directory the caller made stays, empty.
    nulls = spark.createDataFrame(
        [(None, "Jupiter is the fifth planet from the Sun."), ("b", "Mozart was a composer.")],
        "id string, text string",
    )
    (tmp_path / "mine").mkdir()
    with pytest.raises(Exception, match="the id column 'id' holds nulls"):
        pxs.build(nulls, tmp_path / "mine")
    assert (tmp_path / "mine").is_dir() and not list((tmp_path / "mine").iterdir())
