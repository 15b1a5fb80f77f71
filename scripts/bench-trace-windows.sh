#!/usr/bin/env bash
# Windows cut out of full traces against the full traces themselves (issue 26):
# for gemm 128, lu 128, chase over 4 MiB and triad over 768 KiB (x86_64
# kernels under qemu-x86_64 with the eDAG tracer, recorded from their first
# kernel_mark(); the reference is the steady state, the repetitions a longer
# trace has beyond a shorter one: bench/edag_windows --ref), windows of N
# instructions analysed cold (as single-stepped windows are), after a warm-up
# summary of U instructions (as replay windows are), and after the same U
# instructions through the engine; no cache model and --cache 32K:8:64:4
# --cache 1M:8:64:12, m = 4. Prints a markdown table; ~5 minutes.
# Usage: bench-trace-windows.sh OUT   (OUT/bench/edag_windows, OUT/qemu-plugin/edag_tracer.so,
#                                      OUT/xkernels/x86_64/* built)
set -euo pipefail
out=${1:?usage: bench-trace-windows.sh OUT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
so=$out/qemu-plugin/edag_tracer.so
k=$out/xkernels/x86_64
command -v qemu-x86_64 >/dev/null || { echo "skipped: qemu-x86_64 missing"; exit 0; }
trace() { # NAME REPS ARGS...: $tmp/NAME-REPS.bin (the kernel with ARGS), recorded from the first mark
	local name=$1 reps=$2
	shift 2
	local mark
	mark=$("$k/$name" 1 1 1 | sed -n 's/.* mark=\(0x[0-9a-f]*\).*/\1/p')
	qemu-x86_64 -plugin "$so,out=$tmp/$name-$reps.bin,start=$mark" "$k/$name" "$@" >/dev/null
}
echo "| kernel | cache model | windows (warm-up + recorded) | W/instr | cold misses/instr | D/instr: in series, steady-state growth | lambda/instr: D in series | lambda/instr: steady-state D |"
echo "|---|---|---|---|---|---|---|---|"
for spec in "gemm 1 2 128" "lu 1 2 128" "chase 1 2 1048576 1000000" "triad 4 8 32768"; do
	set -- $spec
	name=$1 r1=$2 r2=$3
	shift 3
	trace "$name" "$r1" "$@" "$r1"
	trace "$name" "$r2" "$@" "$r2"
	n1=$(stat -c %s "$tmp/$name-$r1.bin")
	for cache in "" "--cache 32K:8:64:4 --cache 1M:8:64:12"; do
		cm=${cache:+32K+1M}
		skip=$((n1 / 17)) # the windows lie in the repetitions after the first trace's (~17 bytes an instruction)
		for w in "0 2000" "500000 200000"; do
			set -- $w
			"$out/bench/edag_windows" "$tmp/$name-$r2.bin" --ref "$tmp/$name-$r1.bin" --skip "$skip" --windows 6 \
				--warm "$1" --n "$2" $cache |
				awk -F'|' -v k="$name" -v c="${cm:-none}" -v u="$1" '
					NR == 1 { if (u == 0) print "| " k " | " c " | " $4 " | " $5 " | | " $7 " | " $9 " | |"; next }
					u == 0 && $4 ~ /cold/ { print "| " k " | " c " | " $4 " | " $5 " | " $6 " | " $7 " | " $8 " | " $9 " |" }
					u != 0 && $4 ~ /summary/ { print "| " k " | " c " | " $4 " | " $5 " | " $6 " | " $7 " | " $8 " | " $9 " |" }'
		done
	done
	rm -f "$tmp/$name"-*.bin
done
