#!/usr/bin/env bash
# Mali GPU counters (issue 15): the agent's cost per dump and the bytes per
# dump on the wire, on the fake kbase device (no Mali board here). Prints a
# markdown section on stdout. Usage: bench-gpu.sh [OUT]   (OUT: a build dir
# with agent, collector, bench/gpu_dump and lib/libfake_kbase.so)
set -euo pipefail
out=${1:-build/host}
tmp=$(mktemp -d /tmp/prof-bench-gpu-XXXXXX)
cpid=
trap '[ -n "$cpid" ] && kill $cpid 2>/dev/null; rm -rf "$tmp"' EXIT
for f in agent collector bench/gpu_dump lib/libfake_kbase.so; do
	if [ ! -e "$out/$f" ]; then
		echo "bench-gpu: $out/$f is missing: build with \`make O=$out $out/bench/gpu_dump\` (CONFIG_AGENT_MALI=y)" >&2
		exit 2
	fi
done
n=20000
t628=$("$out/bench/gpu_dump" t628 $n)
g71=$("$out/bench/gpu_dump" g71 $n)
kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

"$out/collector" --listen 127.0.0.1:0 --store "$tmp/gpu.db" --sync normal --port-file "$tmp/port" -q \
	2>>"$tmp/collector.log" &
cpid=$!
for _ in $(seq 500); do [ -s "$tmp/port" ] && break; sleep 0.02; done
port=$(cat "$tmp/port")
# agent stat --gpu for 2 s at 1 ms dumps: busy (every role counter counting in every dump) and idle
run() { # $1 = name, $2 = script body
	printf 'path %s/mali0\n%s' "$tmp" "$2" >"$tmp/$1.script"
	local timer=()
	[ -x /usr/bin/time ] && timer=(/usr/bin/time -f 'maxrss_kib=%M')
	PROF_FAKE_KBASE_SCRIPT="$tmp/$1.script" LD_PRELOAD="$PWD/$out/lib/libfake_kbase.so" \
		"${timer[@]}" "$out/agent" stat --collector "127.0.0.1:$port" --spool "$tmp/spool" \
		--agent-id "bench-$1" -e task-clock --gpu --gpu-device "$tmp/mali0" -- sleep 2 >/dev/null 2>"$tmp/$1.log"
	dumps=$(sed -n 's/^ *\([0-9]*\) dumps (.*/\1/p' "$tmp/$1.log" | tail -n 1)
	bytes=$(sed -n 's/.* values, \([0-9]*\) bytes on the wire.*/\1/p' "$tmp/$1.log" | tail -n 1)
	rows=$(sed -n 's/.* records, \([0-9]*\) rows.*/\1/p' "$tmp/$1.log" | tail -n 1)
	rss=$(sed -n 's/^maxrss_kib=//p' "$tmp/$1.log" | tail -n 1)
	rss=${rss:--}
	echo "$1 $dumps $rows $bytes $rss"
}
busy_t628=$(run t628-busy "gpu t628mp6
iface uk-dump
rate jm 0 6 600000000
rate sc * 26 500000000
rate sc * 22 400000000
rate sc * 27 2000000000
rate sc * 31 500000000
rate sc * 38 100000000
rate l2 0 31 100000000
rate l2 0 30 25000000
")
idle_t628=$(run t628-idle "gpu t628mp6
iface uk-dump
")
busy_g71=$(run g71-busy "gpu g71mp8
iface ioctl
rate jm 0 6 600000000
rate sc * 26 500000000
rate sc * 28 1000000000
rate sc * 44 100000000
rate l2 * 32 40000000
rate l2 * 47 10000000
")
kill $cpid; wait $cpid 2>/dev/null || true; cpid=

echo "## Mali GPU counters: dump cost and wire size (fake kbase device)"
echo
echo "Produced by \`scripts/bench-gpu.sh $out\` on $(date -u +%Y-%m-%d), $(nproc) CPUs, Linux $(uname -r)."
echo "No Mali board here: the device is the fake kbase driver of the tests (tests/lib/fake_kbase*.c, the Midgard r5p0 UK generation), so the"
echo "driver's own work (the GPU writing the counter blocks, the cache flush) is **not** in these numbers."
echo
echo "Agent-side cost per dump (\`$out/bench/gpu_dump GPU $n\`): \`gpu_sampler_poll\` = UK DUMP ioctl +"
echo "column sums of the dump (each dump holds its interval's counts, issue 29) into a row, minus the fake's time for the same ioctl."
echo
echo "The last column times the agent's work alone: the same polls with the DUMP ioctl answered at once."
echo
echo "| GPU | dump buffer bytes | columns | total us/dump | fake's ioctl us | agent us/dump (difference) | agent us/dump (alone) |"
echo "|---|---|---|---|---|---|---|"
for l in "$t628" "$g71"; do
	echo "| $(kv "$l" gpu) | $(kv "$l" buffer_bytes) | $(kv "$l" columns) | $(kv "$l" total_us) | $(kv "$l" fake_us) | $(kv "$l" agent_us) | $(kv "$l" agent_alone_us) |"
done
echo
echo "Wire size: \`agent stat --gpu -e task-clock -- sleep 2\` (dumps every 1 ms) with the fake preloaded;"
echo "GpuCounters records every 200 ms; bytes are the agent's own count of its GpuCounters envelopes."
echo "Busy = every role counter counts in every dump (worst case); idle = no counts (consecutive idle dumps"
echo "merge into one row). RSS = the agent's peak (dynamic host build, \`/usr/bin/time\`)."
echo
echo "| run | dumps | rows sent | GpuCounters bytes | bytes/dump | agent peak RSS KiB |"
echo "|---|---|---|---|---|---|"
for l in "$busy_t628" "$idle_t628" "$busy_g71"; do
	set -- $l
	echo "| $1 | $2 | $3 | $4 | $(awk -v b="$4" -v d="$2" 'BEGIN{printf "%.1f", d ? b / d : 0}') | $5 |"
done
