#!/bin/sh
# Store ingest benchmark (bench/ingest_store.c, issue 40): agent-shaped Samples frames of the synthetic board
# (4 CPUs at 99 Hz, 1 s records) through the collector's ingest_frame into a SQLite store (synchronous=FULL,
# commit per 64 records), timed to the last fsync, against the ceilings on the same frames (SQLite a row per
# key, a blob per record, memcpy). Prints a markdown section for bench/RESULTS.md.
# Usage: bench-ingest-store.sh OUT [RECORDS]   (OUT: a build dir with bench/ingest_store; default 5000 records)
set -eu
out=$1
n=${2:-5000}
b="$out/bench/ingest_store"
[ -x "$b" ] || { echo "bench-ingest-store: $b missing (make $b)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "## Store ingest per collector CPU-second, frames to fsync ($(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "\`$b DIR $n 4\`:"
echo
"$b" "$dir" "$n" 4
