#!/bin/sh
# Query benchmark (bench/query.c, issue 27): a store of SAMPLES CPU samples of one board (4 CPUs at 99 Hz,
# 1 s records, 20 processes x 200 functions, skewed) written through store_put_record, then query_run over
# all of them by function and by process. (The peer, the first implementation's SQL GROUP BY over the
# cpu_samples rows, is gone with the rows, #40: the blocks are the only store of the samples.) Prints a
# markdown section for bench/RESULTS.md. Then the store compacted (\`collector downsample --per 16s\`, what
# --compact-after does in the listening collector: one block per 16 records) and queried twice again.
# Usage: bench-query.sh OUT [SAMPLES]   (OUT: a build dir with bench/query; default 10000000 samples)
# (bench/query's further arguments NCPU PROCS FUNCS CHURN: CHURN restarts the processes under new pids
# every CHURN records, so that its --pid query and report of one process pass over the other blocks.)
# Then the same on PostgreSQL where it is installed (#40): \`query pg SAMPLES\` fills a throwaway server
# (tests/lib/pgserver: fsync off), says the fill's CPU in the writer and in the server, the database's
# size, times the queries and \`collector report\`, compacts and reports again.
set -eu
out=$1
n=${2:-10000000}
b="$out/bench/query"
[ -x "$b" ] || { echo "bench-query: $b missing (make $b)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db="$dir/q.db"
echo "## Field profiling query over $n stored samples ($(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "\`$b $db $n\`, then \`$b $db 0\` twice (query only):"
echo
echo '```'
"$b" "$db" "$n"
"$b" "$db" 0
"$b" "$db" 0
echo '```'
echo
echo "compacted (\`collector downsample --store $db --older-than 1s --per 16s\`), then \`$b $db 0\` twice:"
echo
echo '```'
/usr/bin/time -f 'compaction: %e s wall, %U+%S s CPU' "$out/collector" downsample --store "$db" --older-than 1s --per 16s 2>&1
"$b" "$db" 0
"$b" "$db" 0
echo '```'
echo
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	echo "PostgreSQL, the same samples (\`$b pg $n\`):"
	echo
	echo '```'
	"$b" pg "$n" 2>&1 | grep -v '^downsampled '
	echo '```'
else
	echo "PostgreSQL: not measured (not installed: /usr/lib/postgresql/*/bin/initdb)"
fi
