#!/usr/bin/env bash
# Calibration vs tools nobody here wrote (issue 37): each calibrated key of
# `agent calibrate --quick` over RUNS runs (median, min..max, spread), side by
# side with clpeak (the OpenCL device), likwid-bench (STREAM-style copy/triad
# and peak FLOPs on the CPU, where installed: apt-get install likwid), the
# dependent add chain and random page chase written in tests/unit/test_calib_host.c,
# and what the system states (sysconf/cpuid, /proc/cpuinfo). Prints a markdown
# section on stdout (progress on stderr).
# Usage: bench-calib-compare.sh OUT [RUNS]   (OUT: a build dir with agent, collector, tests/test_calib_host)
set -euo pipefail
out=$1
runs=${2:-3}
tmp=$(mktemp -d /tmp/prof-bench-cmp-XXXXXX)
cpid=
trap '[ -n "$cpid" ] && kill "$cpid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$out/collector" --listen 127.0.0.1:0 --store "$tmp/db" --port-file "$tmp/port" -q 2>>"$tmp/collector.log" &
cpid=$!
for _ in $(seq 500); do [ -s "$tmp/port" ] && break; sleep 0.02; done
port=$(cat "$tmp/port")
load_before=$(cut -d' ' -f1 /proc/loadavg)
for i in $(seq "$runs"); do
	echo "bench-calib-compare: agent calibrate --quick, run $i/$runs" >&2
	"$out/agent" calibrate --collector "127.0.0.1:$port" --spool "$tmp/spool" --quick -o "$tmp/run$i.json" \
		>"$tmp/agent$i.log" 2>&1
	# this project's oracles, written in the test (not the calibration's code)
	if [ -x "$out/tests/test_calib_host" ]; then
		PROF_BIN_DIR=$out PROF_SRC_DIR=$PWD "$out/tests/test_calib_host" >"$tmp/oracle$i.log" 2>&1 || true
	fi
done
pv() { python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["params"].get(sys.argv[2]); print("%.6g" % p["value"] if p else "nan")' "$1" "$2"; }
stats() { # values on stdin -> "median (min..max, spread s%)"
	sort -g | awk '$1 == $1+0 && $1 != "nan" {v[++n]=$1} END {if (!n) {printf "-"; exit}
		m=(n%2)?v[(n+1)/2]:(v[n/2]+v[n/2+1])/2; s=(m!=0)?(v[n]-v[1])/2/m*100:0
		printf "%.4g (%.4g..%.4g, ±%.1f%%)", m, v[1], v[n], s}'
}
key() { for i in $(seq "$runs"); do pv "$tmp/run$i.json" "$1"; done | stats; }
orc() { for i in $(seq "$runs"); do sed -n "s/.*$1 \([0-9.]*\) $2.*/\1/p" "$tmp/oracle$i.log" 2>/dev/null | head -1; done | stats; }

cl_gf=- cl_bw=-
if command -v clpeak >/dev/null; then
	echo "bench-calib-compare: clpeak --compute-sp --global-bandwidth" >&2
	timeout 900 clpeak -p 0 -d 0 --use-event-timer --compute-sp --global-bandwidth >"$tmp/clpeak.txt" 2>&1 || true
	sec_max() { awk -v s="$1" '$0 ~ s {on=1; next} on && /:/ {split($0,a,":"); v=a[2]+0; if (v>m) m=v; n++} on && !/:/ && n {on=0} END {printf "%.4g", m}' "$tmp/clpeak.txt"; }
	cl_gf=$(sec_max "Single-precision compute") cl_bw=$(sec_max "Global memory bandwidth")
fi
lk_triad=- lk_copy=- lk_flops=- lk_ver="not installed (apt-get install likwid)"
if command -v likwid-bench >/dev/null; then
	lk_ver="likwid-bench (likwid $(dpkg-query -W -f '${Version}' likwid 2>/dev/null || echo '?'))"
	n=$(nproc)
	likwid-bench -a >"$tmp/likwid.txt" 2>&1 || true
	sfx=_avx
	grep -q '^triad_avx512 ' "$tmp/likwid.txt" && sfx=_avx512
	lk() { likwid-bench -t "$1" -w "N:$2:$n" >"$tmp/lk.txt" 2>&1 || true; sed -n "s/^$3:[[:space:]]*//p" "$tmp/lk.txt" | sed -n 1p; }
	echo "bench-calib-compare: likwid-bench triad$sfx, copy$sfx, peakflops${sfx}_fma" >&2
	lk_triad=$(awk -v v="$(lk triad$sfx 512MB 'MByte\/s')" 'BEGIN {printf "%.4g", v / 1000}')
	lk_copy=$(awk -v v="$(lk copy$sfx 512MB 'MByte\/s')" 'BEGIN {printf "%.4g", v / 1000}')
	lk_flops=$(awk -v v="$(lk peakflops${sfx}_fma 32kB 'MFlops\/s')" 'BEGIN {printf "%.4g", 2 * v / 1000}')
fi
load_after=$(cut -d' ' -f1 /proc/loadavg)
sys() { getconf "$1" 2>/dev/null || echo -; }
base=$(sed -n 's/^cpu MHz[[:space:]]*: //p' /proc/cpuinfo | head -1)

echo "## Calibration vs independent tools (issue 37)"
echo
echo "Device: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"])' "$tmp/run1.json"); $(nproc) CPUs" \
	"($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); load average $load_before before, $load_after after."
echo "\`agent calibrate --quick\` ran $runs times: median (min..max, ± half-range relative). References: clpeak (PoCL), $lk_ver,"
echo "the add chain and random page chase of \`tests/unit/test_calib_host.c\` (once after each run), getconf (cpuid) and /proc/cpuinfo."
echo
echo "| key | agent calibrate | reference | reference value |"
echo "|---|---|---|---|"
echo "| cpu_clock_mhz (running) | $(key cpu_clock_mhz) | add chain, best burst (test) | $(orc 'add chain:' MHz) |"
echo "| clock_mhz (PoCL device: running) | $(key clock_mhz) | clGetDeviceInfo (base) | $(key clock_base_mhz) |"
echo "| cpu_clock_base_mhz | $(key cpu_clock_base_mhz) | /proc/cpuinfo cpu MHz | ${base:--} |"
echo "| lat_int_add_cycles | $(key lat_int_add_cycles) | one dependent add per cycle | 1 |"
echo "| lat_float_add_cycles | $(key lat_float_add_cycles) | - | - |"
echo "| lat_float_mad_cycles | $(key lat_float_mad_cycles) | - | - |"
echo "| peak_gflops (PoCL) | $(key peak_gflops) | clpeak single-precision, max | $cl_gf |"
echo "| phys_peak_gflops | $(key phys_peak_gflops) | (bound) | - |"
echo "| cpu_peak_gflops | $(key cpu_peak_gflops) | likwid peakflops_fma (DP x 2 = SP) | $lk_flops |"
echo "| cpu_phys_peak_gflops | $(key cpu_phys_peak_gflops) | (bound) | - |"
echo "| peak_gbps (PoCL) | $(key peak_gbps) | clpeak global bandwidth, max | $cl_bw |"
echo "| cpu_triad_gbps | $(key cpu_triad_gbps) | likwid triad (STREAM triad) | $lk_triad |"
echo "| cpu_copy_gbps | $(key cpu_copy_gbps) | likwid copy (STREAM copy) | $lk_copy |"
echo "| cpu_phys_peak_gbps | $(key cpu_phys_peak_gbps) | SMBIOS type 17 | $(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["params"].get("cpu_phys_peak_gbps"); print("stated" if p else "none: the system does not state its memory")' "$tmp/run1.json") |"
echo "| mem_latency_ns | $(key mem_latency_ns) | random page chase (test) | $(orc 'random page chase:' ns) |"
echo "| dram_latency_ns (cache sweep plateau) | $(key dram_latency_ns) | random page chase (test) | $(orc 'random page chase:' ns) |"
echo "| l1_assoc | $(key l1_assoc) | getconf LEVEL1_DCACHE_ASSOC | $(sys LEVEL1_DCACHE_ASSOC) |"
echo "| l1_size_bytes | $(key l1_size_bytes) | getconf LEVEL1_DCACHE_SIZE | $(sys LEVEL1_DCACHE_SIZE) |"
echo "| l2_size_bytes | $(key l2_size_bytes) | getconf LEVEL2_CACHE_SIZE | $(sys LEVEL2_CACHE_SIZE) |"
echo "| l1_line_bytes | $(key l1_line_bytes) | getconf LEVEL1_DCACHE_LINESIZE | $(sys LEVEL1_DCACHE_LINESIZE) |"
echo "| regs_per_cu | $(key regs_per_cu) | - | - |"
echo "| compute_units | $(key compute_units) | clGetDeviceInfo | $(key compute_units_reported) |"
echo
flagged=$(for i in $(seq "$runs"); do python3 -c 'import json,sys; print(sum(1 for p in json.load(open(sys.argv[1]))["params"].values() if p.get("flagged")))' "$tmp/run$i.json"; done | tr '\n' ' ')
echo "FLAGGED keys per run: $flagged(spread > 15 % or confidence < 0.5; never used by the GPGPU-sim config)."
