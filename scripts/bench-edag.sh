#!/usr/bin/env bash
# eDAG engine benchmark: instructions/s and peak RSS of edag_step on synthetic
# traces of 1e6, 1e7 and 1e8 instructions (each size in its own process, so
# peak RSS is per size). Prints a markdown section on stdout.
# Usage: bench-edag.sh OUT   (OUT/bench/edag must be built, release flags)
set -euo pipefail
out=${1:?usage: bench-edag.sh OUT}
bin=$out/bench/edag
[ -x "$bin" ] || { echo "bench-edag: $bin not built (make O=$out $bin)" >&2; exit 1; }
echo "## eDAG engine (collector/edag)"
echo
echo "Command: \`$bin N [cache]\` on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at start (the machine is shared: rates are noisy)."
echo "Synthetic trace generated on the fly: 30% loads, 10% stores, int/float/branch; accesses 3/4 streaming,"
echo "1/4 random over a working set of WS KiB; 'cache' adds a 32 KiB/8-way L1 + 1 MiB/16-way L2 model."
echo "The engine's memory is O(touched 8-byte words): RSS follows the working set, not N (it grows with N only"
echo "until the stores have touched the whole working set)."
echo "Target: >= 20 M instr/s/core."
echo
echo "CPU = user + system time of the bench process; on a loaded machine 'M instr/s (CPU)' is the steadier rate."
echo
echo "| instructions | WS KiB | cache model | seconds | M instr/s | CPU seconds | M instr/s (CPU) | peak RSS (MiB) | engine state (MiB) | W | D |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
run() { # N cache|nocache WS_KIB
	line=$("$bin" "$@")
	eval "$(echo "$line" | tr ' ' '\n' | grep '=' | sed 's/^/b_/')"
	awk -v n="$1" -v c="$2" -v ws="$b_ws_kib" -v s="$b_seconds" -v r="$b_insns_per_s" -v rss="$b_peak_rss_kib" \
		-v cs="$b_cpu_seconds" -v cr="$b_cpu_insns_per_s" -v st="$b_state_bytes" -v w="$b_W" -v d="$b_D" \
		'BEGIN { printf "| %d | %d | %s | %.2f | %.1f | %.2f | %.1f | %.1f | %.1f | %d | %d |\n", n, ws, c, s, r / 1e6, cs, cr / 1e6, rss / 1024, st / 1048576, w, d }'
}
for n in 1000000 10000000 100000000; do
	run "$n" nocache 256
done
for n in 1000000 10000000 100000000; do
	run "$n" nocache 4096
done
for n in 1000000 10000000 100000000; do
	run "$n" nocache 65536
done
for n in 1000000 10000000; do
	run "$n" cache 4096
done
