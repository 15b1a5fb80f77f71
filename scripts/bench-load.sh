#!/usr/bin/env bash
# Fleet load benchmark: AGENTS simulated agents x RATE records/s x SECONDS against
# a real collector (SQLite store) on 127.0.0.1. Prints a markdown section.
# Usage: bench-load.sh OUT [AGENTS RATE SECONDS]   (OUT: build dir with collector and bench/load)
set -euo pipefail
out=$1
agents=${2:-1000}
rate=${3:-100}
secs=${4:-60}
export PROF_BIN_DIR=$(cd "$out" && pwd)
echo "## Fleet load ($(date -u +%Y-%m-%d), $(nproc) CPUs, collector $out/collector, SQLite store, sync full)"
echo
echo "One process simulates the agents (one TCP connection each, real protocol, replay from the last Ack"
echo "after a reconnect); ack latency = first send of a record to the Ack that covers it."
echo
"$out/bench/load" --agents "$agents" --rate "$rate" --seconds "$secs"

# Scale out: the same simulated fleet against two collectors writing one PostgreSQL
# database (a throwaway server on 127.0.0.1, fsync off), agent k on collector k % 2.
pg_agents=${PG_AGENTS:-1000} pg_rate=${PG_RATE:-20}
echo
echo "### Two collectors, one PostgreSQL database"
echo
echo "Command: \`$out/bench/load --agents $pg_agents --rate $pg_rate --seconds $secs --pg --collectors 2\`"
echo "(everything on the same 2 CPUs: PostgreSQL, both collectors and the simulated agents)."
echo
set +e
"$out/bench/load" --agents "$pg_agents" --rate "$pg_rate" --seconds "$secs" --pg --collectors 2
rc=$?
set -e
case $rc in
0 | 2) ;; # 2: over capacity, printed in the table
*) echo; echo "(the PostgreSQL run failed with status $rc: see the benchmark's log above)" ;;
esac
