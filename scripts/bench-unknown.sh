#!/bin/bash
# The [unknown] share of a long system-wide recording, ours against perf (issue 39):
# agent record -a and perf record -a at 499 Hz cpu-clock over the same SECS (default 600) seconds,
# on this host as it is (run it while the host is busy). Outputs in OUTDIR (default /tmp/bench-unknown):
# ours-module.txt (collector report --by module), perf-script.txt (perf script -F comm,pid,ip,dso; perf
# report may stop at KSYMBOL records of BPF programs), and the two shares on stdout.
set -u
B=${B:-build/host}
D=${OUTDIR:-/tmp/bench-unknown}
PORT=${PORT:-47393}
rm -rf "$D"; mkdir -p "$D"
$B/collector --listen 127.0.0.1:$PORT --store "$D/db" > "$D/coll.log" 2>&1 &
CP=$!
sleep 1
perf record -a -e cpu-clock -F 499 --no-bpf-event -m 1024 -o "$D/perf.data" > "$D/perf.log" 2>&1 &
PP=$!
$B/agent record --collector 127.0.0.1:$PORT --spool "$D/spool" --agent-id bench -a -e cpu-clock -F 499 -I 1000 \
	--backend ring --duration "${SECS:-600}" > "$D/agent.log" 2>&1
kill -INT $PP; wait $PP
$B/collector report --store "$D/db" --session 1 --by module --limit 400 > "$D/ours-module.txt" 2>&1
kill $CP; wait $CP 2>/dev/null
perf script -i "$D/perf.data" -F comm,pid,ip,dso > "$D/perf-script.txt" 2>/dev/null
awk '/\[unknown\]/ {n += $2} /^top module: / {t = $3} END {printf "ours: %d of %d samples [unknown] (%.2f %%)\n", n, t, t ? 100 * n / t : 0}' "$D/ours-module.txt"
awk '{t++} /\(\[unknown\]\)/ {u++} /\(\[vdso\]\)/ {v++} END {printf "perf: %d of %d samples [unknown] (%.2f %%), %d [vdso]\n", u, t, t ? 100 * u / t : 0, v}' "$D/perf-script.txt"
