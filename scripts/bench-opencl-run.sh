#!/usr/bin/env bash
# Whole-run cost of OpenCL capture per command (issue #41): for a program of N tiny
# kernels (`cl_matmul 16 N`, N = 20000 and 1), clpeak --kernel-latency's loop (`cl_latency N`, the
# same N) and `clpeak --kernel-latency`, the wall
# time of the program (measured inside the profiled environment) and of the whole
# `agent run -q` (start-up, the program, forwarding what is left, waiting for the
# collector's acks), plainly and in layer and preload mode, over REPS interleaved runs.
# Per command = ((mode(N) - mode(1)) - (plain(N) - plain(1))) / (N - 1): the fixed
# start-up (library load, the agent's set-up) cancels out. Prints markdown.
# Then PAIRS paired runs of `clpeak --kernel-latency` plainly, in layer and in preload mode (the
# three in turn, the order rotated every pair, each after its own `cl_latency 1` twin for the fixed
# start-up): per command and mode/plain ratios of CPU and wall, as median [quartiles] (range) over
# the pairs, each pair's figure taken against the plain run of the same pair.
# Usage: bench-opencl-run.sh [OUT] [REPS] [PAIRS]   (OUT: a build dir; default build/host; REPS 0:
# the pairs only; PAIRS default 10, or $BENCH_CL_PAIRS)
# BENCH_CL_CPUS=LIST runs the whole benchmark (collector, agent, programs) under `taskset -c LIST`:
# with one CPU the per-command figures stop depending on where the scheduler puts PoCL's threads
# (issue #41, bench/RESULTS.md w41h: unpinned, clpeak's CPU per command moves 2x between runs).
set -euo pipefail
if [ -n "${BENCH_CL_CPUS:-}" ] && [ -z "${BENCH_CL_PINNED:-}" ]; then
	exec env BENCH_CL_PINNED="$BENCH_CL_CPUS" taskset -c "$BENCH_CL_CPUS" "$0" "$@"
fi
. "$(dirname "$0")/lib-opencl.sh"
out=${1:-build/host}
reps=${2:-5}
pairs=${3:-${BENCH_CL_PAIRS:-10}}
n=20000
tmp=$(mktemp -d /tmp/prof-bench-clrun-XXXXXX)
cpid=
trap '[ -n "$cpid" ] && kill $cpid 2>/dev/null; rm -rf "$tmp"' EXIT
if ! "$out/cl-workloads/cl_edge" noprof >/dev/null 2>&1; then
	echo "## OpenCL capture, whole-run cost per command (issue #41)"
	echo
	echo "Skipped: no working OpenCL device here (cl_edge fails without the profiler)."
	exit 0
fi
"$out/collector" --listen 127.0.0.1:0 --store "$tmp/bench.db" --sync normal --port-file "$tmp/port" -q \
	2>>"$tmp/collector.log" &
cpid=$!
for _ in $(seq 500); do [ -s "$tmp/port" ] && break; sleep 0.02; done
port=$(cat "$tmp/port")
# the program's wall ns to $APPFILE; bash's `times` (its children's user and sys from wait4's rusage,
# ms resolution) to $APPFILE.times, two lines a run
clock='s=$(date +%s%N); "$@" >/dev/null 2>&1 || exit 1; e=$(date +%s%N); echo $((e - s)) >>"$APPFILE"
times >>"$APPFILE.times"'
# CPU ns of the collector (utime+stime, clock ticks) so far
collector_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f\n", ($14 + $15) / hz * 1e9 }' "/proc/$cpid/stat"; }
one() { # mode tag program args...: appends the program's ns to $tmp/a.tag.mode, agent run's to $tmp/r.tag.mode
	local mode=$1 tag=$2
	shift 2
	local s e c0 c1
	c0=$(collector_cpu)
	s=$(date +%s%N)
	if [ "$mode" = plain ]; then
		APPFILE="$tmp/a.$tag.$mode" $cpu_of bash -c "$clock" _ "$@"
	else
		APPFILE="$tmp/a.$tag.$mode" $cpu_of "$out/agent" run -q \
			--collector "127.0.0.1:$port" --spool "$tmp/spool" --mode "$mode" -- bash -c "$clock" _ "$@"
	fi
	e=$(date +%s%N)
	c1=$(collector_cpu)
	echo $((e - s)) >>"$tmp/r.$tag.$mode"
	# CPU of agent run and the program under it (rusage of the waited tree), and of the collector
	awk -F, '$3 ~ /^task-clock/ { printf "%.0f\n", $1 * 1e6 }' "$tmp/pstat" >>"$tmp/r.$tag.$mode.cpu"
	echo $((c1 - c0)) >>"$tmp/c.$tag.$mode.cpu"
}
# task-clock (ns resolution, counted in every thread and child) of the whole agent run or plain run
cpu_of="perf stat -x, -e task-clock -o $tmp/pstat --"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
mm="$out/cl-workloads/cl_matmul"
"$mm" 16 1 >/dev/null 2>&1 || true # warm the kernel cache
# clpeak --kernel-latency's loop (a kernel, clFinish, its times, per command), with a 1-command twin
lat="$out/cl-workloads/cl_latency"
have_lat=
[ -x "$lat" ] && "$lat" 1 >/dev/null 2>&1 && have_lat=1
have_clpeak=
command -v clpeak >/dev/null && have_clpeak=1 && { clpeak --kernel-latency >/dev/null 2>&1 || true; }
load0=$(cut -d' ' -f1 /proc/loadavg)
for _ in $(seq "$reps"); do
	for mode in plain layer preload; do
		one "$mode" big "$mm" 16 "$n"
		one "$mode" small "$mm" 16 1
		[ -n "$have_lat" ] && one "$mode" latbig "$lat" "$n" && one "$mode" latsmall "$lat" 1
		[ -n "$have_clpeak" ] && one "$mode" clpeak clpeak --kernel-latency # last: its session is counted below
	done
done
# clpeak --kernel-latency in pairs (plain, layer, preload in turn, order rotated), each run after its
# mode's cl_latency 1 (the fixed start-up of the same moment); the commands each captured run stored
order=(plain layer preload)
if [ -n "$have_clpeak" ] && [ -n "$have_lat" ]; then
	for i in $(seq 0 $((pairs - 1))); do
		for j in 0 1 2; do
			mode=${order[$(((i + j) % 3))]}
			one "$mode" pl1 "$lat" 1
			one "$mode" pcp clpeak --kernel-latency
			[ "$mode" = plain ] || sqlite3 "$tmp/bench.db" "SELECT SUM(commands) FROM cl_command_blocks WHERE
				session_id = (SELECT MAX(session_id) FROM cl_command_blocks)" >>"$tmp/n.pcp"
		done
	done
fi
load1=$(cut -d' ' -f1 /proc/loadavg)
for f in "$tmp"/a.*.times; do # the children line of each run, as ns
	awk 'NR % 2 == 0 { split($1, u, /[ms]/); split($2, y, /[ms]/)
		printf "%.0f\n", ((u[1] + y[1]) * 60 + u[2] + y[2]) * 1e9 }' "$f" >"${f%.times}.cpu"
done
m() { median <"$tmp/$1"; }
if [ "$reps" -gt 0 ]; then
echo "## OpenCL capture, whole-run cost per command (issue #41)"
echo
echo "Produced by \`scripts/bench-opencl-run.sh $out $reps\` on $(date -u +%Y-%m-%d), $(nproc) CPUs, load average"
echo "$load0 at the start (other builds share the machine), PoCL. Medians of $reps interleaved runs. \"program\": its own"
echo "wall time inside the profiled environment; \"agent run\": the whole \`agent run -q\` (start-up, the program,"
echo "reading the rings, waiting for the collector's acks). Per command: ((mode($n) - mode(1)) - (plain($n) -"
echo "plain(1))) / $((n - 1)) for \`cl_matmul 16 N\` (N tiny kernels and a read), so the fixed start-up cancels out;"
echo "fixed start-up: mode(1) - plain(1). \"CPU\" rows: CPU time of the program (user+sys from wait4's rusage, bash's"
echo "\`times\`), of the whole \`agent run\` with the program under it (\`perf stat -e task-clock\`), and of the"
echo "collector (utime+stime in /proc, 10 ms ticks); no hardware PMU here, so no instruction counts (\`perf stat -e instructions:u\`: not supported)."
echo
echo "| | plain ms | layer ms | preload ms | layer µs/command | preload µs/command |"
echo "|---|---|---|---|---|---|"
rows() { # big-tag small-tag program-name-with-N program-name-with-1
	for what in a r a.cpu r.cpu c.cpu; do
		case $what in
		a) label="program" ;; r) label="agent run" ;; a.cpu) label="program, CPU" ;;
		r.cpu) label="agent run + program, CPU" ;; c.cpu) label="collector, CPU" ;;
		esac
		local w=${what%.cpu} x=${what#[arc]}
		awk -v lb="$label" -v n="$n" -v nb="$3" -v ns="$4" \
			-v pb="$(m $w.$1.plain$x)" -v ps="$(m $w.$2.plain$x)" \
			-v lbg="$(m $w.$1.layer$x)" -v ls="$(m $w.$2.layer$x)" \
			-v sb="$(m $w.$1.preload$x)" -v ss="$(m $w.$2.preload$x)" 'BEGIN {
			printf "| `%s`, %s | %.1f | %.1f | %.1f | %+.2f | %+.2f |\n", nb, lb, pb / 1e6, lbg / 1e6, sb / 1e6,
				((lbg - ls) - (pb - ps)) / (n - 1) / 1e3, ((sb - ss) - (pb - ps)) / (n - 1) / 1e3
			printf "| `%s`, %s (fixed start-up) | %.1f | %.1f (%+.1f) | %.1f (%+.1f) | | |\n", ns, lb, ps / 1e6,
				ls / 1e6, (ls - ps) / 1e6, ss / 1e6, (ss - ps) / 1e6 }'
	done
}
rows big small "cl_matmul 16 $n" "cl_matmul 16 1"
[ -n "$have_lat" ] && rows latbig latsmall "cl_latency $n" "cl_latency 1"
if [ -n "$have_clpeak" ]; then
	sid=$(sqlite3 "$tmp/bench.db" "SELECT MAX(session_id) FROM cl_command_blocks")
	nc=$(sqlite3 "$tmp/bench.db" "SELECT SUM(commands) FROM cl_command_blocks WHERE session_id=$sid")
	for what in a r a.cpu r.cpu c.cpu; do
		case $what in
		a) label="program" ;; r) label="agent run" ;; a.cpu) label="program, CPU" ;;
		r.cpu) label="agent run + program, CPU" ;; c.cpu) label="collector, CPU" ;;
		esac
		w=${what%.cpu} x=${what#[arc]}
		awk -v lb="$label" -v n="$nc" -v p="$(m $w.clpeak.plain$x)" -v l="$(m $w.clpeak.layer$x)" \
			-v s="$(m $w.clpeak.preload$x)" 'BEGIN {
			printf "| `clpeak --kernel-latency` (%d commands), %s | %.1f | %.1f (%.2fx) | %.1f (%.2fx) | %+.2f | %+.2f |\n",
				n, lb, p / 1e6, l / 1e6, l / (p ? p : l ? l : 1), s / 1e6, s / (p ? p : s ? s : 1), (l - p) / n / 1e3, (s - p) / n / 1e3 }'
	done
	echo
	echo "clpeak's per-command figures include the fixed start-up (its run has no 1-command twin); \`cl_latency\` runs"
	echo "its loop (a kernel, clFinish, the event's QUEUED and START times, the event released) with one."
fi
fi # reps
# pair PREFIX MODE: per pair, ((PREFIX.pcp.MODE - PREFIX.pcp.plain) - (PREFIX.pl1.MODE - PREFIX.pl1.plain)) / N in
# µs (the fixed start-up of the same pair taken off; PREFIX: a, r, a.*.cpu style names via w and x)
pair() { # w x mode [raw]
	paste "$tmp/$1.pcp.$3$2" "$tmp/$1.pcp.plain$2" "$tmp/$1.pl1.$3$2" "$tmp/$1.pl1.plain$2" |
		awk -v n="$npc" -v raw="${4:-}" '{ print ((($1 - $2) - (raw ? 0 : $3 - $4)) / n / 1e3) }' | spread
}
ratio() { # w x mode: PREFIX.pcp.MODE / PREFIX.pcp.plain per pair
	paste "$tmp/$1.pcp.$3$2" "$tmp/$1.pcp.plain$2" | awk '$2 > 0 { print $1 / $2 }' | spread
}
if [ -n "$have_clpeak" ] && [ -n "$have_lat" ] && [ "$pairs" -gt 0 ]; then
	npc=$(median <"$tmp/n.pcp")
	for f in "$tmp"/r.p*.cpu; do # the agent's own CPU (and the wrapper's): whole run less the program's
		g=${f##*/r.}
		paste "$f" "$tmp/a.$g" | awk '{ print $1 - $2 }' >"$tmp/g.$g"
	done
	echo
	echo "## \`clpeak --kernel-latency\` under capture, paired runs (issue #41)"
	echo
	echo "Produced by \`scripts/bench-opencl-run.sh $out $reps $pairs\` on $(date -u +%Y-%m-%d), $(nproc) CPUs, load average"
	echo "$load0 before the runs and $load1 after them (other work shares the machine), PoCL. $pairs pairs: in each, a plain"
	echo "run, one under \`agent run -q --mode layer\` and one under \`--mode preload\`, in turn (the order rotated from"
	echo "pair to pair), each run right after its mode's \`cl_latency 1\` (a program with the same start-up as"
	echo "clpeak's loop and 1 command: the fixed start-up of that moment). Per command, per pair: ((mode - plain) -"
	echo "(mode(cl_latency 1) - plain(cl_latency 1))) / $npc commands (the median the captured runs stored), in µs;"
	echo "then the median [quartiles] (min .. max) over the pairs. Whole-run CPU: \`perf stat -e task-clock\` of"
	echo "\`agent run\` with clpeak under it (the plain run: of clpeak alone); program CPU: clpeak's user+sys (wait4,"
	echo "ms resolution); program wall: clpeak's own, inside the profiled environment; whole-run wall: \`agent run\`"
	echo "from start to exit (plain: clpeak's).${POCL_MAX_PTHREAD_COUNT:+ With POCL_MAX_PTHREAD_COUNT=$POCL_MAX_PTHREAD_COUNT in the environment.}${BENCH_CL_PINNED:+ Every run on CPU(s) $BENCH_CL_PINNED only (taskset).}"
	echo
	echo "| µs per command beyond the fixed start-up | layer | preload |"
	echo "|---|---|---|"
	for what in r.cpu a.cpu g.cpu a r; do
		case $what in
		r.cpu) label="whole-run CPU (agent run + clpeak)" ;; a.cpu) label="program CPU (clpeak)" ;;
		g.cpu) label="agent process CPU (whole run less clpeak's)" ;;
		a) label="program wall" ;; r) label="whole-run wall" ;;
		esac
		w=${what%.cpu} x=${what#[arg]}
		echo "| $label | $(pair "$w" "$x" layer) | $(pair "$w" "$x" preload) |"
	done
	echo "| whole-run CPU, fixed start-up left in | $(pair r .cpu layer raw) | $(pair r .cpu preload raw) |"
	echo
	echo "| mode / plain, clpeak --kernel-latency (per pair) | layer | preload |"
	echo "|---|---|---|"
	echo "| whole-run CPU | $(ratio r .cpu layer) | $(ratio r .cpu preload) |"
	echo "| program CPU | $(ratio a .cpu layer) | $(ratio a .cpu preload) |"
	echo "| program wall | $(ratio a '' layer) | $(ratio a '' preload) |"
	echo "| whole-run wall | $(ratio r '' layer) | $(ratio r '' preload) |"
	echo
	echo "The plain runs themselves, ms: whole-run CPU $(spread 1e-6 <"$tmp/r.pcp.plain.cpu");" \
		"program wall $(spread 1e-6 <"$tmp/a.pcp.plain"). Fixed start-up (\`cl_latency 1\`, mode - plain, ms):" \
		"whole-run CPU layer $(paste "$tmp/r.pl1.layer.cpu" "$tmp/r.pl1.plain.cpu" | awk '{ print $1 - $2 }' | spread 1e-6)," \
		"preload $(paste "$tmp/r.pl1.preload.cpu" "$tmp/r.pl1.plain.cpu" | awk '{ print $1 - $2 }' | spread 1e-6)."
fi
dropped=$(cl_dropped "$out/collector" "$tmp/bench.db")
echo
echo "Commands dropped by the layer during the benchmark: $dropped."
ncmds=$(sqlite3 "$tmp/bench.db" "SELECT COALESCE(SUM(commands),0) FROM cl_command_blocks")
clbytes=$(sqlite3 "$tmp/bench.db" "SELECT COALESCE(SUM(pgsize),0) FROM dbstat WHERE name LIKE 'cl_command%'
	OR name LIKE 'sqlite_autoindex_cl_command%'")
echo "OpenCL commands stored over the benchmark: $ncmds in $clbytes bytes of pages of cl_command_blocks and its" \
	"indexes ($(awk -v b="$clbytes" -v n="$ncmds" 'BEGIN { printf "%.1f", n ? b / n : 0 }') bytes per command)."
