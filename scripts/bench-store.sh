#!/bin/sh
# Store write benchmark into PostgreSQL (bench/store.c): prints a markdown section for bench/RESULTS.md.
# Usage: bench-store.sh OUT   (OUT: a build dir with bench/store; needs PostgreSQL installed)
set -eu
out=$1
b="$out/bench/store"
[ -x "$b" ] || { echo "bench-store: $b missing (make $b)" >&2; exit 1; }
run() { "$b" pg 100 50 "$1" 500 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\) records\/s$/\1/p' | tr '\n' ' '; }
med() { tr ' ' '\n' | grep . | sort -n | sed -n 2p; }
echo "## PostgreSQL store: records/s into PostgreSQL ($(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "\`$b pg 100 50 ROWS 500\`: store_put_record of Counters records (ROWS rows x 4 events) for 100 sessions x"
echo "50 records, round robin, one COMMIT per 500 records, then the same records again (replay: all"
echo "duplicates), into a throwaway PostgreSQL server on 127.0.0.1 (tests/lib/pgserver, fsync off); median of 3."
echo
echo "| ROWS | new records/s | replay records/s |"
echo "|---|---|---|"
for rows in 1 10; do
	n=""; r=""
	for i in 1 2 3; do set -- $(run "$rows"); n="$n ${1:-0}"; r="$r ${2:-0}"; done
	echo "| $rows | $(echo "$n" | med) | $(echo "$r" | med) |"
done
if command -v strace >/dev/null; then
	w=$(strace -c -e trace=sendto -o /dev/stdout "$b" pg 20 50 1 100 2>/dev/null | awk '$NF == "sendto" {print $4}')
	echo
	echo "Writes to the server (strace, sendto) for 20 x 50 new records plus their replay: $w (2000 records)."
fi
echo
echo "Before the database layer (previous store_pg.c, measured 2026-12-02 with the same benchmark, load 7..10):"
echo "ROWS 1: 1261 new, 9590 replay records/s; ROWS 10: 929 new, 16931 replay; 4188 writes per 2000 records"
echo "(about 3 round trips per new record, 1 per duplicate); now 1 per record."
