#!/usr/bin/env bash
# make demo: start a collector on loopback, profile the sample OpenCL workload
# (matrix multiply on PoCL) with the agent, print what the collector stored.
# Usage: demo.sh OUT
set -euo pipefail
out=$1
dir=build/demo
mkdir -p "$dir"
rm -f "$dir"/profile.db* "$dir/port"
"$out/collector" --listen 127.0.0.1:0 --store "$dir/profile.db" --port-file "$dir/port" 2>"$dir/collector.log" &
cpid=$!
trap 'kill $cpid 2>/dev/null || true' EXIT
for _ in $(seq 500); do [ -s "$dir/port" ] && break; sleep 0.02; done
port=$(cat "$dir/port")
echo "== collector listening on 127.0.0.1:$port (store $dir/profile.db, log $dir/collector.log)"
echo "== agent --collector 127.0.0.1:$port -I 250 -- $out/workloads/cl_matmul 384 12"
"$out/agent" --collector "127.0.0.1:$port" --spool "$dir/spool" -I 250 -- "$out/workloads/cl_matmul" 384 12
kill -TERM $cpid && wait $cpid || true
trap - EXIT
echo
echo "== collector sessions --store $dir/profile.db"
"$out/collector" sessions --store "$dir/profile.db"
sid=$(sqlite3 "$dir/profile.db" "SELECT MAX(id) FROM sessions")
echo
echo "== collector dump --store $dir/profile.db --session $sid"
"$out/collector" dump --store "$dir/profile.db" --session "$sid"
