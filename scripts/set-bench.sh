#!/usr/bin/env bash
# set-bench.sh: the README's index-set table (issue 11's targets). On a generated collection of N
# documents without near-duplicates (default 2,000,000; the scale benchmark's, reused from
# data/scale), it measures in one run:
#   1. build of all N documents into one file, and add of all N into a new set (time, peak RSS);
#   2. merge -o (one plain file, compared byte for byte with the build) and merge of the set
#      (one document deleted first, so that every byte is rewritten);
#   3. 1,000 `check --add` calls in a row, each one ~1 KB new document, end to end (process
#      start to exit): p50 / p99 / max, and the segments left (the merge policy);
#   4. edited copies of the first 2,000 documents (those synth can edit), 8 times over, queried
#      against 16 shard files together (--index) and against the one file of all documents: time,
#      CPU and their ratios (both must give the same hits); then past start-up, in one process
#      (the library on both cores, 20 rounds, the core's example query_rate), three times each,
#      alternating: queries per second and their ratio.
# Usage (from the repository root): scripts/set-bench.sh [N]   (CI runs it with N = 3000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
out=target/set-bench; rm -rf "$out"; mkdir -p "$out"
cargo build --release --quiet
cargo build --release --quiet --example query_rate
bin=target/release/pocketdex
vocab=()
if [ "$n" -gt 100000 ]; then
  scripts/fetch-wordfreq.sh >/dev/null
  vocab=(--vocab data/wordfreq/large_en.msgpack.gz)
fi
mkdir -p data/scale
coll=data/scale/gen-${vocab:+large_en-}$n.jsonl
[ -e "$coll" ] || "$bin" synth --generate "$n" "${vocab[@]}" -o "$coll"
# New submissions: another seed's documents of 900–1,100 bytes.
"$bin" synth --generate 20000 --seed 99 "${vocab[@]}" -o "$out/other.jsonl"
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
os.makedirs(f"{out}/new", exist_ok=True)
k = 0
for line in open(f"{out}/other.jsonl"):
    d = json.loads(line)
    if 900 <= len(d["text"].encode()) <= 1100:
        open(f"{out}/new/sub{k:04d}.txt", "w").write(d["text"]); k += 1
        if k == 1000: break
assert k == 1000, k
PY
# Queries: 2,000 documents of the collection with 5% of their words replaced.
head -n 2000 "$coll" > "$out/orig.jsonl"
"$bin" synth "$out/orig.jsonl" --copies 1 --rates 0.05 --copies-only -o "$out/queries.jsonl" 2>/dev/null ||
  cp "$out/orig.jsonl" "$out/queries.jsonl"

# measure LABEL COMMAND...: prints the label, wall-clock seconds, peak resident memory and CPU
# seconds (the command's own, from getrusage; no /usr/bin/time needed). Its stdout goes to $out/stdout.
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
label, cmd = sys.argv[1], sys.argv[2:]
t = time.perf_counter()
r = subprocess.run(cmd, stdout=open(__import__("os").environ["out"] + "/stdout", "w"))
secs = time.perf_counter() - t
assert r.returncode == 0, f"{cmd} failed"
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{label}\t{secs:.2f} s\t{u.ru_maxrss // 1024} MB\t{u.ru_utime + u.ru_stime:.2f} s CPU")
PY
}
export out
echo "# N = $n"
measure "build (one file)" "$bin" build "$coll" -o "$out/all.pdx" --expected-docs "$n" --idf language -q
measure "add (new set)" "$bin" add "$out/set" "$coll" --expected-docs "$n" -q
measure "merge -o (one file)" "$bin" merge "$out/set" -o "$out/merged.pdx" -q
first=$(head -n 1 "$coll" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
"$bin" delete "$out/set" "$first" -q
measure "merge (compact)" "$bin" merge "$out/set" -q
# 1,000 submission checks in a row, once merge's 1 GB file is on disk: with its writeback still
# going on, the checks' p50 / max were 13.8 / 26.0 ms against 10.5 / 19.4 after it (2026-11-27).
sync
python3 - "$bin" "$out" <<'PY'
import subprocess, sys, time, json, glob
bin, out = sys.argv[1:3]
times = []
for f in sorted(glob.glob(f"{out}/new/*.txt")):
    t = time.perf_counter()
    r = subprocess.run([bin, "check", f"{out}/set", f, "--add"], capture_output=True)
    times.append(time.perf_counter() - t)
    assert r.returncode in (0, 1), r.stderr
times.sort()
info = json.loads(subprocess.run([bin, "info", f"{out}/set", "--json"], capture_output=True).stdout)
q = lambda p: times[min(len(times) - 1, int(p * len(times)))] * 1000
print(f"check --add x{len(times)}\tp50 {q(0.5):.1f} ms\tp99 {q(0.99):.1f} ms\tmax {times[-1]*1000:.1f} ms\t"
      f"{len(info['segments'])} segments, {info['live_documents']} documents after")
PY
# 16 shards queried together against one file.
python3 - "$coll" "$out" 16 <<'PY'
import sys
coll, out, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = [open(f"{out}/shard{i:02d}.jsonl", "w") for i in range(k)]
lines = open(coll).readlines()
per = -(-len(lines) // k)
for i, line in enumerate(lines):
    files[i // per].write(line)
PY
shards=()
for f in "$out"/shard*.jsonl; do
  "$bin" build "$f" -o "${f%.jsonl}.pdx" --expected-docs "$n" --idf language -q
  shards+=(--index "${f%.jsonl}.pdx")
done
# Both answer the queries once, untimed, and must give the same hits; this also puts their
# files in the page cache (the one file, written first, may have left it during the set's steps).
"$bin" query "$out/all.pdx" "$out/queries.jsonl" --json > "$out/one.json"
"$bin" query "$out/shard00.pdx" "${shards[@]:2}" "$out/queries.jsonl" --json > "$out/sixteen.json"
# Timed: the queries 8 times over, so that what a query costs outweighs starting the process and
# opening 16 files (with the queries once, opening made the ratio look like 1.6 where a query's
# own cost is 3 to 4 times as much; 2026-11-27).
for _ in 1 2 3 4 5 6 7 8; do cat "$out/queries.jsonl"; done > "$out/queries-x8.jsonl"
measure "query, one file" "$bin" query "$out/all.pdx" "$out/queries-x8.jsonl" --json | tee "$out/one.t"
measure "query, 16 shards" "$bin" query "$out/shard00.pdx" "${shards[@]:2}" "$out/queries-x8.jsonl" --json | tee "$out/sixteen.t"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def cost(f):
    fields = open(f).read().split("\t")
    return float(fields[1].split()[0]), float(fields[3].split()[0])
(one, one_cpu), (sixteen, sixteen_cpu) = cost(f"{out}/one.t"), cost(f"{out}/sixteen.t")
def hits(f):
    # The shards' hits name the file holding each ("index"); one file's name none.
    out = []
    for line in open(f):
        o = json.loads(line)
        if o["type"] == "hit":
            o.pop("index", None)
            out.append(o)
    return out
same = hits(f"{out}/one.json") == hits(f"{out}/sixteen.json")
q = 8 * sum(1 for l in open(f"{out}/one.json") if '"type":"query"' in l)
print(f"query x{q}: one file {one:.2f} s ({one_cpu:.2f} s CPU), 16 shards {sixteen:.2f} s "
      f"({sixteen_cpu:.2f} s CPU), ratio {sixteen/one:.2f} ({sixteen_cpu/one_cpu:.2f} by CPU); same hits: {same}")
assert same, "16 shards answered other hits than one file"
PY
# The same, past start-up and the first reads of each block: the library's steady state.
python3 - "$out" <<'PY'
import glob, json, statistics, subprocess, sys
out = sys.argv[1]
shards = ",".join(sorted(glob.glob(f"{out}/shard*.pdx")))
rate = lambda index: json.loads(subprocess.run(
    ["target/release/examples/query_rate", index, f"{out}/queries.jsonl", "20"],
    capture_output=True, check=True, text=True).stdout)["rate"]
one, sixteen = [], []
for _ in range(3):
    one.append(rate(f"{out}/all.pdx")); sixteen.append(rate(shards))
one, sixteen = statistics.median(one), statistics.median(sixteen)
print(f"query, library (2 cores, 20 rounds, median of 3): one file {one:,.0f} q/s, 16 shards "
      f"{sixteen:,.0f} q/s, ratio {one / sixteen:.2f}")
PY
cmp -s "$out/all.pdx" "$out/merged.pdx" && echo "merge -o is byte-identical to build" || echo "merge -o DIFFERS from build"
