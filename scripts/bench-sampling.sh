#!/usr/bin/env bash
# CPU sampling benchmark: agent record (bpf and ring back ends) against
# `perf record -a` at the same frequency, all CPUs, on a busy workload
# (one spinning thread per CPU). Prints a markdown section to stdout.
# Usage: bench-sampling.sh OUT [SECONDS]   (OUT: a release build dir with agent, collector, workloads/busy)
# Measures: profiler CPU time (user+sys) and peak RSS (GNU time), the CPU time
# the workload got (busy prints it; it spins for a fixed wall time, so lost
# CPU = CPU taken by the profiler), the workload's work done per CPU second
# (busy's "work": fixed blocks of multiply-adds; the sampling interrupts and
# their handlers run on the workload's CPU time, so work per CPU second falls
# by the sampling cost, the slowdown a profiled program sees), and bytes per
# sample: agent wire bytes (whole session) vs perf.data bytes. Needs root.
# About 8 runs of SECONDS (default 5) each; the unprofiled baseline runs first
# and last (their difference: the machine's own noise).
set -euo pipefail
out=${1:?usage: bench-sampling.sh OUT [SECONDS]}
secs=${2:-5}
ncpu=$(nproc)
tmp=$(mktemp -d /tmp/prof-bench-sampling-XXXXXX)
cpid=
trap '[ -n "$cpid" ] && kill $cpid 2>/dev/null; rm -rf "$tmp"' EXIT

"$out/collector" --listen 127.0.0.1:0 --store "$tmp/s.db" --port-file "$tmp/port" -q 2>"$tmp/collector.log" &
cpid=$!
for _ in $(seq 250); do [ -s "$tmp/port" ] && break; sleep 0.02; done
port=$(cat "$tmp/port")

busy_cpu() { sed -n 's/.* cpu \([0-9.]*\) s.*/\1/p' "$1"; }
# work per CPU second of a busy output
busy_rate() { awk '/^busy:/ { for (i = 1; i < NF; i++) { if ($i == "cpu") c = $(i + 1); if ($i == "work") w = $(i + 1) } } END { printf "%.1f", (c > 0 ? w / c : 0) }' "$1"; }
# run_profiler NAME CMD...: busy on all CPUs beside CMD (profiling system-wide for $secs s)
run_profiler() {
	local name=$1
	shift
	"$out/workloads/busy" "$secs" "$ncpu" >"$tmp/$name.busy" &
	local bpid=$!
	/usr/bin/time -f "%U %S %M" -o "$tmp/$name.time" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || true
	wait $bpid
}

"$out/workloads/busy" "$secs" "$ncpu" >"$tmp/base.busy"
base=$(busy_cpu "$tmp/base.busy")
base_rate=$(busy_rate "$tmp/base.busy")
# The agent's floor: peak RSS of `agent --help` (the program and its shared libraries loaded, nothing sampled).
/usr/bin/time -f "%M" -o "$tmp/help.time" "$out/agent" --help >/dev/null 2>&1 || true
floor=$(tail -n1 "$tmp/help.time")

rows=()
for hz in 1000 10000; do
	for be in bpf ring; do
		n=agent-$be-$hz
		run_profiler "$n" "$out/agent" record --collector "127.0.0.1:$port" --spool "$tmp/spool-$n" -a \
			--duration "$secs" -F "$hz" --backend "$be" -I 1000 -q
		read -r u s m <"$tmp/$n.time"
		samples=$(sed -n 's/.*: \([0-9]*\) samples of .*/\1/p' "$tmp/$n.err" | tail -n1)
		wire=$(sed -n 's/.* \([0-9][0-9]*\) bytes on the wire.*/\1/p' "$tmp/$n.err" | tail -n1)
		rows+=("$n|$hz|$u|$s|$m|$(busy_cpu "$tmp/$n.busy")|${samples:-0}|${wire:-0}|$(busy_rate "$tmp/$n.busy")")
	done
	n=perf-$hz
	run_profiler "$n" perf record -F "$hz" -a -o "$tmp/$n.data" -- sleep "$secs"
	read -r u s m <"$tmp/$n.time"
	psize=$(stat -c %s "$tmp/$n.data")
	psamples=$(perf report -D -i "$tmp/$n.data" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE' || true)
	rows+=("$n|$hz|$u|$s|$m|$(busy_cpu "$tmp/$n.busy")|$psamples|$psize|$(busy_rate "$tmp/$n.busy")")
done
"$out/workloads/busy" "$secs" "$ncpu" >"$tmp/base2.busy"
base2_rate=$(busy_rate "$tmp/base2.busy")

echo "## CPU sampling: agent record vs perf record"
echo
echo "$(date -u +%Y-%m-%d), $ncpu CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), Linux $(uname -r)."
echo "Workload: \`busy $secs $ncpu\` (one spinning thread per CPU for $secs s); profilers sample all CPUs (-a) at -F HZ."
echo "Sampled event: $(grep -q 'cpu-clock' "$tmp"/agent-*-1000.err && echo 'cpu-clock (no hardware PMU here)' || echo cycles);"
echo "agent: \`agent record -a -F HZ --backend B -I 1000\` (release build, collector on loopback); perf: \`perf record -F HZ -a -- sleep $secs\`."
echo "Workload CPU without a profiler: ${base} s; its work per CPU second ${base_rate} (first run) and ${base2_rate} (last run)."
echo "Slowdown = 1 - (work per CPU s profiled) / (work per CPU s of the first baseline)."
echo
echo "| profiler | HZ | CPU s (user+sys) | peak RSS KiB | workload CPU s | CPU lost | work / CPU s | slowdown | samples | bytes | bytes/sample |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for r in "${rows[@]}"; do
	IFS='|' read -r n hz u s m wc samples bytes rate <<<"$r"
	awk -v n="$n" -v hz="$hz" -v u="$u" -v s="$s" -v m="$m" -v wc="$wc" -v b="$base" -v sm="$samples" -v by="$bytes" \
		-v r="$rate" -v br="$base_rate" \
		'BEGIN { printf "| %s | %s | %.3f | %d | %s | %.2f%% | %.1f | %.2f%% | %d | %d | %.2f |\n", n, hz, u + s, m, wc, (b > 0 ? 100 * (b - wc) / b : 0), r, (br > 0 ? 100 * (1 - r / br) : 0), sm, by, (sm > 0 ? by / sm : 0) }'
done
echo
awk -v a="$base_rate" -v b="$base2_rate" 'BEGIN { printf "- baseline noise: the last unprofiled run did %.2f%% %s work per CPU second than the first\n", (a > 0 ? 100 * (b - a) / a : 0) < 0 ? -100 * (b - a) / a : 100 * (b - a) / a, b < a ? "less" : "more" }'
for hz in 1000 10000; do
	p=$(printf '%s\n' "${rows[@]}" | awk -F'|' -v h="$hz" '$1 == "perf-" h { print $9 }')
	for be in bpf ring; do
		a=$(printf '%s\n' "${rows[@]}" | awk -F'|' -v n="agent-$be-$hz" '$1 == n { print $9 }')
		awk -v a="$a" -v p="$p" -v br="$base_rate" -v be="$be" -v hz="$hz" 'BEGIN { printf "- %s Hz, %s: workload slowdown %.2f%% under the agent, %.2f%% under perf\n", hz, be, (br > 0 ? 100 * (1 - a / br) : 0), (br > 0 ? 100 * (1 - p / br) : 0) }'
	done
done
echo
for hz in 1000 10000; do
	p=$(printf '%s\n' "${rows[@]}" | awk -F'|' -v h="$hz" '$1 == "perf-" h { print $3 + $4 }')
	for be in bpf ring; do
		a=$(printf '%s\n' "${rows[@]}" | awk -F'|' -v n="agent-$be-$hz" '$1 == n { print $3 + $4 }')
		awk -v a="$a" -v p="$p" -v be="$be" -v hz="$hz" 'BEGIN { printf "- %s Hz, %s: agent CPU / perf CPU = %.3f (target <= 0.333)\n", hz, be, (p > 0 ? a / p : 0) }'
	done
done
echo
echo "Agent bytes are the whole session on the wire (Hello, mappings, heartbeats, framing); perf bytes the whole perf.data."
echo "Peak RSS is the process's maxrss (GNU time %M): it counts the pages of the shared libraries the process maps"
echo "and touches. The agent's floor, \`agent --help\` (libraries loaded and relocated, nothing sampled): ${floor} KiB"
echo "(linked: $(ldd "$out/agent" | awk '$1 ~ /^lib/ { sub(/\.so.*/, "", $1); printf "%s ", $1 }'))."
