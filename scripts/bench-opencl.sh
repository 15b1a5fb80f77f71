#!/usr/bin/env bash
# Overhead of the OpenCL capture (issue #4): wall time of each workload run
# plainly, under the ICD layer and under the LD_PRELOAD shim (both with a live
# agent + collector), median of REPS runs. Prints a markdown section on stdout.
# Usage: bench-opencl.sh [OUT] [REPS]   (OUT: a build dir with agent, collector,
# lib/libprofcl_*.so and cl-workloads/; default build/host)
set -euo pipefail
out=${1:-build/host}
reps=${2:-5}
tmp=$(mktemp -d /tmp/prof-bench-cl-XXXXXX)
cpid=
trap '[ -n "$cpid" ] && kill $cpid 2>/dev/null; rm -rf "$tmp"' EXIT
for f in agent collector lib/libprofcl_layer.so lib/libprofcl_preload.so cl-workloads/cl_matmul; do
	if [ ! -e "$out/$f" ]; then
		echo "bench-opencl: $out/$f is missing: build with \`make O=$out\` (CONFIG_AGENT_OPENCL=y)" >&2
		exit 2
	fi
done
if ! "$out/cl-workloads/cl_edge" noprof >/dev/null 2>&1; then
	echo "## OpenCL capture overhead"
	echo
	echo "Skipped: no working OpenCL device here (cl_edge fails without the profiler)."
	exit 0
fi

"$out/collector" --listen 127.0.0.1:0 --store "$tmp/bench.db" --sync normal --port-file "$tmp/port" -q \
	2>>"$tmp/collector.log" &
cpid=$!
for _ in $(seq 500); do [ -s "$tmp/port" ] && break; sleep 0.02; done
port=$(cat "$tmp/port")

# Wall time of the app alone (ns), measured inside the profiled environment.
clock='s=$(date +%s%N); "$@" >/dev/null || exit 1; e=$(date +%s%N); echo "WALL $((e - s))"'
run_once() { # mode workload args...
	local mode=$1
	shift
	if [ "$mode" = plain ]; then
		bash -c "$clock" _ "$@"
	else
		"$out/agent" run --collector "127.0.0.1:$port" --spool "$tmp/spool" --mode "$mode" -q -- \
			bash -c "$clock" _ "$@" 2>>"$tmp/agent.log"
	fi | sed -n 's/^WALL //p'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
minimum() { sort -n | head -1; }

workloads=(
	"cl_matmul 256 20"
	"cl_matmul_coarse 256 4"
	"cl_sobel 1024 768 20"
	"cl_hog 1024 768 8"
	"cl_matmul 16 2000"
)
echo "## OpenCL capture overhead"
echo
echo "Produced by \`scripts/bench-opencl.sh $out $reps\` on $(date -u +%Y-%m-%d), $(nproc) CPUs, load average"
echo "$(cut -d' ' -f1 /proc/loadavg) at the start, PoCL ($("$out/cl-workloads/cl_edge" noprof | sed 's/.* on \(.*\): ok/\1/'))."
echo "Wall time of the app (whole process) over $reps interleaved runs per mode, as median and best (min);"
echo "layer = \`agent run --mode layer\` (OPENCL_LAYERS), preload = \`agent run --mode preload\` (LD_PRELOAD),"
echo "both streaming every command to a live agent and collector. Kernel time = median device time per kernel"
echo "(from the profile). The last row has ~10 µs kernels: it shows the fixed cost per command."
echo
echo "On PoCL the \"device\" is the same CPUs as the agent and collector, and other jobs share the machine:"
echo "the best-of-N column is the less noisy one."
echo
echo "| workload | commands | kernel ms | plain ms med / min | layer ms med / min | layer overhead med / min | preload ms med / min | preload overhead med / min |"
echo "|---|---|---|---|---|---|---|---|"
for w in "${workloads[@]}"; do
	read -r -a argv <<<"$w"
	prog="$out/cl-workloads/${argv[0]}"
	run_once plain "$prog" "${argv[@]:1}" >/dev/null || true # warm the kernel cache
	declare -A med=()
	: >"$tmp/t.plain"
	: >"$tmp/t.layer"
	: >"$tmp/t.preload"
	for _ in $(seq "$reps"); do # interleaved, so that load from elsewhere hits all modes alike
		for mode in plain layer preload; do
			run_once "$mode" "$prog" "${argv[@]:1}" >>"$tmp/t.$mode" || true
		done
	done
	declare -A best=()
	for mode in plain layer preload; do
		med[$mode]=$(median <"$tmp/t.$mode")
		best[$mode]=$(minimum <"$tmp/t.$mode")
	done
	sid=$(sqlite3 "$tmp/bench.db" "SELECT MAX(session_id) FROM cl_commands")
	ncmd=$(sqlite3 "$tmp/bench.db" "SELECT COUNT(*) FROM cl_commands WHERE session_id=$sid")
	kms=$(sqlite3 "$tmp/bench.db" "SELECT printf('%.3f', (SELECT end_ns-start_ns FROM cl_commands WHERE session_id=$sid AND kernel_id>0 ORDER BY end_ns-start_ns LIMIT 1 OFFSET (SELECT COUNT(*)/2 FROM cl_commands WHERE session_id=$sid AND kernel_id>0))/1e6)")
	awk -v w="$w" -v n="$ncmd" -v k="$kms" -v p="${med[plain]}" -v l="${med[layer]}" -v s="${med[preload]}" \
		-v bp="${best[plain]}" -v bl="${best[layer]}" -v bs="${best[preload]}" 'BEGIN {
		printf "| `%s` | %d | %s | %.1f / %.1f | %.1f / %.1f | %+.1f%% / %+.1f%% | %.1f / %.1f | %+.1f%% / %+.1f%% |\n",
			w, n, k, p / 1e6, bp / 1e6, l / 1e6, bl / 1e6, 100 * (l - p) / p, 100 * (bl - bp) / bp,
			s / 1e6, bs / 1e6, 100 * (s - p) / p, 100 * (bs - bp) / bp }'
	unset med best
done
dropped=$(sqlite3 "$tmp/bench.db" "SELECT COALESCE(MAX(dropped_before),0) FROM cl_commands")
echo
echo "Commands dropped by the layer during the benchmark: $dropped."
