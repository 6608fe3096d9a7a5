#!/bin/sh
# Runs a command in a memory cgroup of its own with a hard limit, and reports what it used: the
# proof that a command fits in LIMIT, page cache included (the kernel reclaims clean page cache
# and mapped file pages, such as `dups`' spilled features, before it kills anything).
#
#   scripts/under-memory-limit.sh 2G target/release/pocketdex dups --method fuzzy big.jsonl
#
# Needs root and a cgroup v1 memory hierarchy (/sys/fs/cgroup/memory) or cgroup v2 with the
# memory controller (/sys/fs/cgroup/cgroup.controllers lists `memory`). Prints, on stderr, the
# command's exit status, the cgroup's peak usage and whether the OOM killer ran; exits with the
# command's status.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 LIMIT COMMAND [ARGS...]   (LIMIT as 2G, 1500M)" >&2; exit 2; }
limit=$1
shift
bytes=$(numfmt --from=iec "$limit")
name="pocketdex-limit-$$"
if [ -d /sys/fs/cgroup/memory ]; then
  cg=/sys/fs/cgroup/memory/$name
  mkdir "$cg"
  echo "$bytes" > "$cg/memory.limit_in_bytes"
  peak_file=$cg/memory.max_usage_in_bytes
  oom() { grep -q '^oom_kill [1-9]' "$cg/memory.oom_control" && echo yes || echo no; }
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  cg=/sys/fs/cgroup/$name
  mkdir "$cg"
  echo "$bytes" > "$cg/memory.max"
  echo 0 > "$cg/memory.swap.max" 2>/dev/null || true
  peak_file=$cg/memory.peak
  oom() { grep -q '^oom_kill [1-9]' "$cg/memory.events" && echo yes || echo no; }
else
  echo "$0: no cgroup memory controller here (needs /sys/fs/cgroup/memory or cgroup v2 with memory)" >&2
  exit 2
fi
set +e
sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"
status=$?
peak=$(( $(cat "$peak_file" 2>/dev/null || echo 0) / 1048576 ))
echo "under-memory-limit: exit $status, limit $limit, peak usage ${peak} MiB (page cache included), OOM kill: $(oom)" >&2
rmdir "$cg" 2>/dev/null || true
exit $status
