#!/bin/bash
# Collector CPU and store bytes per OpenCL command, before and after #41's
# packed command blocks (bench/ingest_cl.c): the same bench source built in
# this tree (OUT/bench/ingest_cl) and in a tree before #41 (BASE_OUT: e.g.
# `git archive 0699953 | tar -x -C DIR`, bench/ingest_cl.c and bench/ingest_frames.h copied in, then
# `make -C DIR build/host/bench/ingest_cl`), run in turn ROUNDS times on the
# same frames (each run: best CPU of 3 ingests). Prints markdown.
# Usage: bench-ingest-cl.sh OUT BASE_OUT [COMMANDS] [ROUNDS]
set -euo pipefail
out=$1 base=$2 n=${3:-20000} rounds=${4:-3}
tmp=$(mktemp -d /tmp/bench-ingest-cl.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
echo
echo "| tree | frames | collector CPU s (best of 3) | µs CPU/command | OpenCL tables+indexes bytes/command | store file bytes/command |"
echo "|---|---|---|---|---|---|"
for _ in $(seq "$rounds"); do
	printf '| before #41 (row per command) '
	"$base/bench/ingest_cl" "$tmp" "$n" 3
	printf '| #41 (block per record) '
	"$out/bench/ingest_cl" "$tmp" "$n" 3
done
