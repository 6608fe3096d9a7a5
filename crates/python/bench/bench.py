"""The Python package's targets, measured in one run (`scripts/python-bench.sh`):

1. `Index.query_batch` against the Rust library on the same index and queries (the library:
   `cargo run --example query_rate`, rayon on every core): target ≥ 0.8×.
2. `IndexBuilder.add_batch` + `write` against `pocketdex build` on the same documents (Python's
   texts already in memory as a pyarrow table; the CLI reads its JSON Lines file): target
   within 10%.
3. `pocketdex.spark.build` on 2 local cores from Parquet against `pocketdex build` of the same
   Parquet file: target ≥ 0.5× the CLI's documents per second.

Each pair is measured alternately, `--rounds` times, in this one process's run; the table
gives every round and the median ratio. Documents: `pocketdex synth --generate` (about 1 KB
each), queries: edited copies of some of them plus unrelated documents.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.json as pj
import pyarrow.parquet as pq

import pocketdex

ROOT = Path(__file__).resolve().parents[3]


def run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def generate(cli: str, out: Path, docs: int) -> Path:
    path = out / f"gen-{docs}.jsonl"
    if not path.exists():
        run(cli, "synth", "--generate", str(docs), "--words", "145", "--sigma", "0.35",
            "--seed", "14", "-o", str(path))
    return path


def median_ratio(pairs):
    return statistics.median(a / b for a, b in pairs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=200_000, help="documents of the query and build runs")
    ap.add_argument("--spark-docs", type=int, default=1_000_000, help="documents of the Spark run (0: none)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "data" / "python-bench"))
    ap.add_argument("--cli", default=os.environ.get("POCKETDEX_BIN", str(ROOT / "target/release/pocketdex")))
    ap.add_argument("--query-rate", default=str(ROOT / "target/release/examples/query_rate"))
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, report = [], {}

    gen = generate(a.cli, out, a.docs)
    queries = out / f"queries-{a.docs}.jsonl"
    if not queries.exists():
        run(a.cli, "synth", str(gen), "--limit", str(min(a.docs, 50_000)), "--share", "0.1",
            "--rates", "0.05,0.2", "--copies-only", "--seed", "15", "-o", str(queries))
    table = pj.read_json(gen).select(["id", "text"])
    qtexts = pj.read_json(queries).column("text")

    # 2. Building.
    builds = []
    for r in range(a.rounds):
        t0 = time.perf_counter()
        run(a.cli, "build", str(gen), "-o", str(out / "cli.pdx"), "-q")
        cli_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        b = pocketdex.IndexBuilder(size_hint=table.num_rows)
        b.add_batch(table.column("id"), table.column("text"))
        b.write(out / "py.pdx")
        py_s = time.perf_counter() - t0
        same = (out / "cli.pdx").read_bytes() == (out / "py.pdx").read_bytes()
        builds.append((cli_s, py_s))
        rows.append(f"| build {a.docs:,} docs, round {r + 1} | `pocketdex build` {cli_s:.2f} s | add_batch + write {py_s:.2f} s | {cli_s / py_s:.2f}× (same file: {same}) |")
    report["build"] = {"cli_s": [c for c, _ in builds], "python_s": [p for _, p in builds],
                       "ratio": median_ratio(builds)}

    # 1. Querying.
    index = pocketdex.Index(out / "cli.pdx")
    qs = []
    for r in range(a.rounds):
        lib = json.loads(run(a.query_rate, str(out / "cli.pdx"), str(queries), "3"))
        t0 = time.perf_counter()
        for _ in range(3):
            index.query_batch(qtexts)
        py_rate = 3 * len(qtexts) / (time.perf_counter() - t0)
        qs.append((py_rate, lib["rate"]))
        rows.append(f"| query_batch, {len(qtexts):,} queries × 3, round {r + 1} | library {lib['rate']:,.0f} q/s | Python {py_rate:,.0f} q/s | {py_rate / lib['rate']:.2f}× |")
    report["query"] = {"library_qps": [l for _, l in qs], "python_qps": [p for p, _ in qs],
                       "ratio": median_ratio(qs)}

    # 3. Spark.
    if a.spark_docs:
        from pyspark.sql import SparkSession

        import pocketdex.spark as pxs

        sgen = generate(a.cli, out, a.spark_docs)
        parquet = out / f"gen-{a.spark_docs}.parquet"
        if not parquet.exists():
            pq.write_table(pj.read_json(sgen).select(["id", "text"]), parquet, row_group_size=50_000)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        t0 = time.perf_counter()
        spark = (SparkSession.builder.master("local[2]").appName("pocketdex-bench")
                 .config("spark.ui.enabled", "false").config("spark.driver.memory", "4g").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        start_s = time.perf_counter() - t0
        sp = []
        for r in range(a.rounds):
            t0 = time.perf_counter()
            run(a.cli, "build", str(parquet), "-o", str(out / "cli-spark.pdx"), "-q")
            cli_s = time.perf_counter() - t0
            target = out / "spark.set"
            subprocess.run(["rm", "-rf", str(target)], check=True)
            t0 = time.perf_counter()
            result = pxs.build(spark.read.parquet(str(parquet)), str(target))
            spark_s = time.perf_counter() - t0
            assert result["documents"] == a.spark_docs, result
            sp.append((cli_s, spark_s))
            rows.append(f"| Spark build {a.spark_docs:,} docs from Parquet, local[2], round {r + 1} | `pocketdex build` {cli_s:.1f} s ({a.spark_docs / cli_s:,.0f} docs/s) | Spark {spark_s:.1f} s ({a.spark_docs / spark_s:,.0f} docs/s, {result['segments']} shards) | {cli_s / spark_s:.2f}× |")
        spark.stop()
        report["spark"] = {"cli_s": [c for c, _ in sp], "spark_s": [s for _, s in sp],
                           "ratio": median_ratio(sp), "session_start_s": start_s}

    print("| run | baseline | pocketdex (Python) | ratio |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
