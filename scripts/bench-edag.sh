#!/usr/bin/env bash
# eDAG engine benchmark: instructions/s and peak RSS of edag_step on synthetic
# traces of 1e6, 1e7 and 1e8 instructions over working sets of 256 KiB, 4 MiB,
# 64 MiB and 1 GiB (each run in its own process, so
# peak RSS is per size). Prints a markdown section on stdout.
# Usage: bench-edag.sh OUT   (OUT/bench/edag must be built, release flags)
set -euo pipefail
out=${1:?usage: bench-edag.sh OUT}
bin=$out/bench/edag
[ -x "$bin" ] || { echo "bench-edag: $bin not built (make O=$out $bin)" >&2; exit 1; }
echo "## eDAG engine (collector/edag)"
echo
echo "Command: \`scripts/bench-edag.sh $out\` (each row: \`$bin N MODEL WS_KIB\`) on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at start (the machine is shared: rates are noisy)."
echo "Synthetic trace generated on the fly: 30% loads, 10% stores, int/float/branch; accesses 3/4 streaming,"
echo "1/4 random over a working set of WS KiB; 'cache' adds a 32 KiB/8-way L1 + 1 MiB/16-way L2 model, 'edan'"
echo "the same levels used as EDAN does (\`--cache-model edan\`)."
echo "The engine's memory is O(touched 8-byte words) (collector/edag/edag_mem.h: 32 bytes a word in sparse"
echo "512-byte pages, 2 KiB a dense page, 16 KiB a touched 512 KiB region): RSS follows the words the stores"
echo "have touched, not N."
echo "Targets: >= 20 M instr/s at a 64 MiB working set, >= 10 M at 1 GiB (CPU time)."
echo
echo "CPU = user + system time of the bench process (system time is mostly the kernel zeroing the pages the"
echo "tables first touch); on a loaded machine 'M instr/s (CPU)' is the steadier rate."
echo
echo "| instructions | WS KiB | cache model | seconds | M instr/s | CPU seconds | M instr/s (CPU) | peak RSS (MiB) | engine state (MiB) | W | D |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
run() { # N cache|edan|nocache WS_KIB
	line=$("$bin" "$@")
	eval "$(echo "$line" | tr ' ' '\n' | grep '=' | sed 's/^/b_/')"
	awk -v n="$1" -v c="$2" -v ws="$b_ws_kib" -v s="$b_seconds" -v r="$b_insns_per_s" -v rss="$b_peak_rss_kib" \
		-v cs="$b_cpu_seconds" -v cr="$b_cpu_insns_per_s" -v st="$b_state_bytes" -v w="$b_W" -v d="$b_D" \
		'BEGIN { printf "| %d | %d | %s | %.2f | %.1f | %.2f | %.1f | %.1f | %.1f | %d | %d |\n", n, ws, c, s, r / 1e6, cs, cr / 1e6, rss / 1024, st / 1048576, w, d }'
}
for ws in 256 4096 65536; do
	for n in 1000000 10000000 100000000; do
		run "$n" nocache "$ws"
	done
done
# 1 GiB: 1e8 instructions stream over 800 MB of it (each run well under a minute)
for n in 10000000 100000000; do
	run "$n" nocache 1048576
done
for m in cache edan; do
	for n in 1000000 10000000; do
		run "$n" "$m" 4096
	done
done
