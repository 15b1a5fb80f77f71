#!/usr/bin/env bash
# Benchmarks of the foundation; writes bench/RESULTS.md. Usage: bench.sh OUT
#  1. collector ingest: samples/s into SQLite from N = 1, 10, 100 synthetic agents on loopback
#  2. bytes per counter sample on the wire vs perf record's perf.data bytes per sample, same workload
set -euo pipefail
out=$1
res=bench/RESULTS.md
tmp=$(mktemp -d /tmp/prof-bench-XXXXXX)
trap 'kill $cpid 2>/dev/null || true; rm -rf "$tmp"' EXIT
cpid=

start_collector() { # $1 = store
	rm -f "$tmp/port"
	"$out/collector" --listen 127.0.0.1:0 --store "$1" --port-file "$tmp/port" --max-rate 0 -q 2>>"$tmp/collector.log" &
	cpid=$!
	for _ in $(seq 500); do [ -s "$tmp/port" ] && break; sleep 0.02; done
	port=$(cat "$tmp/port")
}
stop_collector() { kill "$cpid"; wait "$cpid" || true; cpid=; }

{
echo "# Benchmark results"
echo
echo "Produced by \`make bench\` (scripts/bench.sh) on $(date -u +%Y-%m-%d), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), Linux $(uname -r)."
echo "Release build ($out), loopback only."
echo
echo "## 1. Collector ingest into SQLite (WAL, synchronous=FULL, ack after commit)"
echo
echo "Command: \`$out/bench/ingest PORT N RECORDS 1 4\` against \`collector --listen 127.0.0.1:0 --store DB --max-rate 0\` (no per-connection rate limit: capacity);"
echo "each record is one agent interval (1 row x 4 events = 4 counter samples), up to 64 unacked records per agent."
echo
echo "| agents | records | samples | seconds | samples/s | records/s |"
echo "|---|---|---|---|---|---|"
} >"$res.tmp"

for n in 1 10 100; do
	total=60000
	per=$((total / n))
	start_collector "$tmp/ingest-$n.db"
	line=$("$out/bench/ingest" "$port" "$n" "$per" 1 4)
	stop_collector
	stored=$(sqlite3 "$tmp/ingest-$n.db" "SELECT COUNT(*) FROM counter_samples")
	echo "ingest N=$n: $line (stored samples: $stored)"
	eval "$(echo "$line" | tr ' ' '\n' | grep '=' | sed 's/^/b_/')"
	if [ "$stored" != "$b_samples" ]; then echo "bench: stored $stored != sent $b_samples" >&2; exit 1; fi
	echo "| $n | $b_records | $b_samples | $b_seconds | $b_samples_per_s | $b_records_per_s |" >>"$res.tmp"
done

# 2. bytes per sample: the agent counting 4 software events every 10 ms on a 3 s busy loop,
#    against perf record sampling the same workload at 1 kHz (its default event here: cpu-clock).
start_collector "$tmp/wire.db"
"$out/agent" --collector "127.0.0.1:$port" --spool "$tmp/spool" -I 10 -- "$out/workloads/busy" 3 1 >/dev/null 2>"$tmp/agent.log"
stop_collector
q() { sqlite3 "$tmp/wire.db" "$1"; }
samples=$(q "SELECT COUNT(*) FROM counter_samples")
# the agent's own count of bytes it sent (Hello, heartbeats and framing included)
wire=$(sed -n 's/.* \([0-9][0-9]*\) bytes on the wire.*/\1/p' "$tmp/agent.log" | tail -n 1)
cbytes=$(q "SELECT SUM(bytes) FROM records WHERE kind='counters'")
perf record -F 1000 -o "$tmp/perf.data" -- "$out/workloads/busy" 3 1 >/dev/null 2>"$tmp/perf.log"
psize=$(stat -c %s "$tmp/perf.data")
perf report -D -i "$tmp/perf.data" 2>/dev/null | grep 'PERF_RECORD_SAMPLE' >"$tmp/samples.txt" || true
psamples=$(wc -l <"$tmp/samples.txt")
psbytes=$(sed -n 's/.*\[\(0x[0-9a-f]*\)\]: PERF_RECORD_SAMPLE.*/\1/p' "$tmp/samples.txt" | while read -r h; do echo $((h)); done | awk '{s+=$1} END {print s+0}')
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
a_all=$(ratio "$wire" "$samples"); a_rec=$(ratio "$cbytes" "$samples")
p_all=$(ratio "$psize" "$psamples"); p_rec=$(ratio "$psbytes" "$psamples")
{
echo
echo "## 2. Bytes per sample on the wire vs perf.data"
echo
echo "Workload: \`$out/workloads/busy 3 1\` (3 s, one busy thread)."
echo
echo "- agent: \`agent --collector 127.0.0.1:PORT -I 10 -- busy 3 1\` (4 software counters every 10 ms; no hardware PMU here)."
echo "- perf: \`perf record -F 1000 -o perf.data -- busy 3 1\`; sample records counted and sized with \`perf report -D\`."
echo
echo "| | samples | bytes | bytes/sample |"
echo "|---|---|---|---|"
echo "| agent, whole session on the wire (Hello, heartbeats, framing included) | $samples | $wire | $a_all |"
echo "| agent, Counters records only | $samples | $cbytes | $a_rec |"
echo "| perf record, whole perf.data | $psamples | $psize | $p_all |"
echo "| perf record, PERF_RECORD_SAMPLE records only | $psamples | $psbytes | $p_rec |"
echo
echo "Ratio agent/perf: whole stream $(ratio "$a_all" "$p_all"), sample records only $(ratio "$a_rec" "$p_rec") (target <= 0.25)."
echo
echo "A perf sample and a counter sample are not the same thing: perf's sample carries IP, TID, time and period"
echo "for one event; the agent's counter sample is one event's count over one interval. They are compared because"
echo "both are what each tool writes per measurement."
} >>"$res.tmp"
# Feature benchmarks: each scripts/bench-<feature>.sh prints its own markdown section.
for b in $(ls scripts/bench-*.sh 2>/dev/null | sort); do
	echo "bench: $b" >&2
	{
		echo
		echo "<!-- $b $out -->"
		if ! "$b" "$out"; then
			echo
			echo "**$b failed** (see the \`make bench\` log)."
		fi
	} >>"$res.tmp"
done
mv "$res.tmp" "$res"
cat "$res"
