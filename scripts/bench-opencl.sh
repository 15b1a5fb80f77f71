#!/usr/bin/env bash
# Overhead of the OpenCL capture (issues #4, #24): wall time of each workload run
# plainly, under the ICD layer and under the LD_PRELOAD shim (both with a live
# agent + collector at its default --max-rate), over REPS interleaved runs.
# Prints a markdown section on stdout:
#   - per workload: whole-process wall time, median and best, and the overhead;
#   - the fixed cost per command on `cl_matmul 16 2000` (2001 commands of ~10 us
#     kernels): added application wall time per command, from the whole process
#     and from the commands' phase the workload times itself (enqueues to the
#     end of its blocking read), median and best;
#   - a launch-heavy program nobody here wrote, `clpeak --kernel-latency`
#     (20002 launches): the program's wall time and `agent run`'s own (which
#     waits until the collector acknowledged every record).
# Usage: bench-opencl.sh [OUT] [REPS]   (OUT: a build dir with agent, collector,
# lib/libprofcl_*.so and cl-workloads/; default build/host)
set -euo pipefail
. "$(dirname "$0")/lib-opencl.sh"
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

# Wall time of the app alone (ns), measured inside the profiled environment, and,
# when the workload prints them ("...: commands N ns, from R ns (CLOCK_REALTIME)"),
# the commands' phase and the time from its start to the end of the process.
clock='s=$(date +%s%N); "$@" >"$OUTFILE" || exit 1; e=$(date +%s%N); echo "WALL $((e - s))";
sed -n "s/.*: commands \([0-9]*\) ns.*/PHASE \1/p" "$OUTFILE";
r=$(sed -n "s/.*: commands [0-9]* ns, from \([0-9]*\) ns.*/\1/p" "$OUTFILE"); if [ -n "$r" ]; then echo "TOEND $((e - r))"; fi'
run_once() { # mode workload args... -> "WALL ns" and maybe "PHASE ns", "TOEND ns" lines
	local mode=$1
	shift
	if [ "$mode" = plain ]; then
		OUTFILE="$tmp/app.out" bash -c "$clock" _ "$@"
	else
		OUTFILE="$tmp/app.out" "$out/agent" run --collector "127.0.0.1:$port" --spool "$tmp/spool" --mode "$mode" -q -- \
			bash -c "$clock" _ "$@" 2>>"$tmp/agent.log"
	fi
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
# Median of the pairwise differences B - A of two files of per-rep values (same order: the
# modes run in turn within each rep, so a slow stretch of the machine hits both of a pair).
paired() { paste "$1" "$2" | awk 'NF == 2 {print $2 - $1}' | median; }
minimum() { sort -n | head -1; }

workloads=(
	"cl_matmul 256 20"
	"cl_matmul_coarse 256 4"
	"cl_sobel 1024 768 20"
	"cl_hog 1024 768 8"
	"cl_matmul 16 1"
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
percmd=
for w in "${workloads[@]}"; do
	read -r -a argv <<<"$w"
	prog="$out/cl-workloads/${argv[0]}"
	run_once plain "$prog" "${argv[@]:1}" >/dev/null || true # warm the kernel cache
	declare -A med=() best=() pmed=() pbest=() emed=() ebest=()
	for mode in plain layer preload; do : >"$tmp/t.$mode"; : >"$tmp/p.$mode"; : >"$tmp/e.$mode"; done
	for _ in $(seq "$reps"); do # interleaved, so that load from elsewhere hits all modes alike
		for mode in plain layer preload; do
			run_once "$mode" "$prog" "${argv[@]:1}" >"$tmp/once" || true
			sed -n 's/^WALL //p' "$tmp/once" >>"$tmp/t.$mode"
			sed -n 's/^PHASE //p' "$tmp/once" >>"$tmp/p.$mode"
			sed -n 's/^TOEND //p' "$tmp/once" >>"$tmp/e.$mode"
		done
	done
	for mode in plain layer preload; do
		med[$mode]=$(median <"$tmp/t.$mode")
		best[$mode]=$(minimum <"$tmp/t.$mode")
		pmed[$mode]=$(median <"$tmp/p.$mode")
		pbest[$mode]=$(minimum <"$tmp/p.$mode")
		emed[$mode]=$(median <"$tmp/e.$mode")
		ebest[$mode]=$(minimum <"$tmp/e.$mode")
	done
	sid=$(sqlite3 "$tmp/bench.db" "SELECT MAX(session_id) FROM cl_command_blocks")
	ncmd=$(sqlite3 "$tmp/bench.db" "SELECT SUM(commands) FROM cl_command_blocks WHERE session_id=$sid")
	kms=$(cl_kernel_p50_ms "$out/collector" "$tmp/bench.db" "$sid")
	awk -v w="$w" -v n="$ncmd" -v k="$kms" -v p="${med[plain]}" -v l="${med[layer]}" -v s="${med[preload]}" \
		-v bp="${best[plain]}" -v bl="${best[layer]}" -v bs="${best[preload]}" 'BEGIN {
		printf "| `%s` | %d | %s | %.1f / %.1f | %.1f / %.1f | %+.1f%% / %+.1f%% | %.1f / %.1f | %+.1f%% / %+.1f%% |\n",
			w, n, k, p / 1e6, bp / 1e6, l / 1e6, bl / 1e6, 100 * (l - p) / p, 100 * (bl - bp) / bp,
			s / 1e6, bs / 1e6, 100 * (s - p) / p, 100 * (bs - bp) / bp }'
	if [ "$w" = "cl_matmul 16 2000" ]; then
		# the "med" figures per command: medians of the paired differences (mode - plain)
		dl=$(paired "$tmp/t.plain" "$tmp/t.layer") ds=$(paired "$tmp/t.plain" "$tmp/t.preload")
		el_=$(paired "$tmp/e.plain" "$tmp/e.layer") es_=$(paired "$tmp/e.plain" "$tmp/e.preload")
		ql_=$(paired "$tmp/p.plain" "$tmp/p.layer") qs_=$(paired "$tmp/p.plain" "$tmp/p.preload")
		med[layer]=$((med[plain] + dl)) med[preload]=$((med[plain] + ds))
		emed[layer]=$((emed[plain] + el_)) emed[preload]=$((emed[plain] + es_))
		pmed[layer]=$((pmed[plain] + ql_)) pmed[preload]=$((pmed[plain] + qs_))
		percmd=$(awk -v n="$ncmd" -v p="${med[plain]}" -v l="${med[layer]}" -v s="${med[preload]}" \
			-v bp="${best[plain]}" -v bl="${best[layer]}" -v bs="${best[preload]}" \
			-v qp="${pmed[plain]}" -v ql="${pmed[layer]}" -v qs="${pmed[preload]}" \
			-v cp="${pbest[plain]}" -v cl="${pbest[layer]}" -v cs="${pbest[preload]}" \
			-v ep="${emed[plain]}" -v el="${emed[layer]}" -v es="${emed[preload]}" \
			-v fp="${ebest[plain]}" -v fl="${ebest[layer]}" -v fs="${ebest[preload]}" 'BEGIN {
			printf "| whole process | %.1f / %.1f | %+.2f / %+.2f (%.3fx / %.3fx) | %+.2f / %+.2f (%.3fx / %.3fx) |\n",
				p / 1e6, bp / 1e6, (l - p) / n / 1e3, (bl - bp) / n / 1e3, l / p, bl / bp,
				(s - p) / n / 1e3, (bs - bp) / n / 1e3, s / p, bs / bp
			printf "| from the first enqueue to the end of the process | %.1f / %.1f | %+.2f / %+.2f (%.3fx / %.3fx) | %+.2f / %+.2f (%.3fx / %.3fx) |\n",
				ep / 1e6, fp / 1e6, (el - ep) / n / 1e3, (fl - fp) / n / 1e3, el / ep, fl / fp,
				(es - ep) / n / 1e3, (fs - fp) / n / 1e3, es / ep, fs / fp
			printf "| commands phase (enqueues to the blocking read) | %.1f / %.1f | %+.2f / %+.2f (%.3fx / %.3fx) | %+.2f / %+.2f (%.3fx / %.3fx) |\n",
				qp / 1e6, cp / 1e6, (ql - qp) / n / 1e3, (cl - cp) / n / 1e3, ql / qp, cl / cp,
				(qs - qp) / n / 1e3, (cs - cp) / n / 1e3, qs / qp, cs / cp }')
	fi
	unset med best pmed pbest emed ebest
done
dropped=$(cl_dropped "$out/collector" "$tmp/bench.db")
echo
echo "Commands dropped by the layer during the benchmark: $dropped."
if [ -n "$percmd" ]; then
	echo
	echo "### Added application wall time per command (\`cl_matmul 16 2000\`, 2001 commands)"
	echo
	echo "(mode - plain) / commands, in µs: the median of the $reps paired differences (each rep runs the"
	echo "three modes in turn) / the difference of the bests; and the ratio mode / plain. The"
	echo "workload times its commands' phase itself (\`cl_matmul: commands N ns\`: the 2000 enqueues and"
	echo "the blocking read) and prints when it began; \"to the end of the process\" adds its exit (the"
	echo "library's bounded drain of what it has not sent yet, PoCL's teardown). Both leave out process"
	echo "start, PoCL's set-up and the kernel build, which vary by tens of ms from run to run and do not"
	echo "depend on the commands (the \`cl_matmul 16 1\` row above: one command); the whole process has them."
	echo
	echo "| measured over | plain ms med / min | layer µs/command med / min (ratio) | preload µs/command med / min (ratio) |"
	echo "|---|---|---|---|"
	echo "$percmd"
fi

# A launch-heavy program: its wall time plainly and under agent run, and agent run's own wall
# time (it returns when the collector has acknowledged every record; records are batched, so the
# collector's default --max-rate of 5000 records/s does not hold it back).
if command -v clpeak >/dev/null; then
	: >"$tmp/c.plain"; : >"$tmp/c.app"; : >"$tmp/c.agent"
	clpeak --kernel-latency >/dev/null 2>&1 || true # warm the kernel cache
	for _ in $(seq "$reps"); do
		s=$(date +%s%N); clpeak --kernel-latency >/dev/null 2>&1 || true; e=$(date +%s%N)
		echo $((e - s)) >>"$tmp/c.plain"
		s=$(date +%s%N)
		OUTFILE="$tmp/app.out" "$out/agent" run --collector "127.0.0.1:$port" --spool "$tmp/spool" --mode layer -q -- \
			bash -c "$clock" _ clpeak --kernel-latency 2>>"$tmp/agent.log" | sed -n 's/^WALL //p' >>"$tmp/c.app"
		e=$(date +%s%N)
		echo $((e - s)) >>"$tmp/c.agent"
	done
	sid=$(sqlite3 "$tmp/bench.db" "SELECT MAX(session_id) FROM cl_command_blocks")
	ncmd=$(sqlite3 "$tmp/bench.db" "SELECT SUM(commands) FROM cl_command_blocks WHERE session_id=$sid")
	nrec=$(sqlite3 "$tmp/bench.db" "SELECT COUNT(*) FROM records WHERE session_id=$sid" 2>/dev/null || echo "?")
	echo
	echo "### A launch-heavy program: \`clpeak --kernel-latency\` ($ncmd commands, $nrec records, collector at its default --max-rate)"
	echo
	echo "| | plain s med / min | program under \`agent run --mode layer\` s med / min (ratio) | \`agent run\` itself s med / min (ratio) |"
	echo "|---|---|---|---|"
	awk -v p="$(median <"$tmp/c.plain")" -v bp="$(minimum <"$tmp/c.plain")" \
		-v a="$(median <"$tmp/c.app")" -v ba="$(minimum <"$tmp/c.app")" \
		-v g="$(median <"$tmp/c.agent")" -v bg="$(minimum <"$tmp/c.agent")" 'BEGIN {
		printf "| `clpeak --kernel-latency` | %.2f / %.2f | %.2f / %.2f (%.2fx / %.2fx) | %.2f / %.2f (%.2fx / %.2fx) |\n",
			p / 1e9, bp / 1e9, a / 1e9, ba / 1e9, a / p, ba / bp, g / 1e9, bg / 1e9, g / p, bg / bp }'
fi
