#!/usr/bin/env bash
# Calibration benchmark: the roofline ceilings pi (peak GFLOP/s) and beta
# (peak GB/s) that `agent calibrate` measures on the OpenCL device, side by
# side with clpeak on the same device, in one run; plus the CPU's own ceilings
# (C kernels). Prints a markdown section on stdout (progress on stderr).
# Usage: bench-calib.sh OUT [RUNS]   (OUT: a build dir with agent and collector)
set -euo pipefail
out=$1
runs=${2:-3}
tmp=$(mktemp -d /tmp/prof-bench-calib-XXXXXX)
cpid=
trap '[ -n "$cpid" ] && kill "$cpid" 2>/dev/null; rm -rf "$tmp"' EXIT

"$out/collector" --listen 127.0.0.1:0 --store "$tmp/db" --port-file "$tmp/port" -q 2>>"$tmp/collector.log" &
cpid=$!
for _ in $(seq 500); do [ -s "$tmp/port" ] && break; sleep 0.02; done
port=$(cat "$tmp/port")

load_before=$(cut -d' ' -f1 /proc/loadavg)
for i in $(seq "$runs"); do
	echo "bench-calib: agent calibrate run $i/$runs" >&2
	"$out/agent" calibrate --collector "127.0.0.1:$port" --spool "$tmp/spool" --only device,peak,cpu_peak \
		-o "$tmp/run$i.json" 2>"$tmp/agent$i.log"
done
# parameter value of run i
pv() { python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["params"].get(sys.argv[2]); print("%.2f" % p["value"] if p else "nan")' "$1" "$2"; }
stats() { # name -> "median (min..max)" over the runs
	for i in $(seq "$runs"); do pv "$tmp/run$i.json" "$1"; done | sort -g |
		awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.1f (%.1f..%.1f)", m, v[1], v[NR]}'
}
med() { stats "$1" | cut -d' ' -f1; }

clpeak_line="not installed (apt-get install clpeak)"
cl_gf=nan cl_bw=nan
if command -v clpeak >/dev/null; then
	echo "bench-calib: clpeak --compute-sp --global-bandwidth (slow on a CPU device)" >&2
	dev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"])' "$tmp/run1.json")
	clpeak -p 0 -d 0 --use-event-timer --compute-sp --global-bandwidth >"$tmp/clpeak.txt" 2>&1 || true
	sec_max() { awk -v s="$1" '$0 ~ s {on=1; next} on && /:/ {split($0,a,":"); v=a[2]+0; if (v>m) m=v; n++} on && !/:/ && n {on=0} END {printf "%.1f", m}' "$tmp/clpeak.txt"; }
	cl_gf=$(sec_max "Single-precision compute")
	cl_bw=$(sec_max "Global memory bandwidth")
	clpeak_line="clpeak $(clpeak --version 2>/dev/null | head -1 | tr -d '\n'), platform 0 device 0, --use-event-timer"
fi
load_after=$(cut -d' ' -f1 /proc/loadavg)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a == a) printf "%.2f", a / b; else printf "-" }'; }

echo "## Calibration: roofline ceilings vs clpeak"
echo
echo "Device: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"])' "$tmp/run1.json");" \
	"$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); load average $load_before before, $load_after after."
echo "\`agent calibrate --only device,peak,cpu_peak\` ran $runs times: median (min..max). Reference: $clpeak_line, once."
echo
# physical peak (common/calib/calib_phys.c) of run 1 and its method
phys() { python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["params"].get(sys.argv[2]); print("%.1f" % p["value"] if p else "nan")' "$tmp/run1.json" "$1"; }
phys_how() { python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["params"].get(sys.argv[2]); print(p["method"] if p else "unknown")' "$tmp/run1.json" "$1"; }
row() { # label measured-param physical-param clpeak
	local m p
	m=$(med "$2") p=$(phys "$3")
	local vs=-
	[ -n "${4:-}" ] && vs=$(ratio "$m" "$4")
	echo "| $1 | $(stats "$2") | $p | $(ratio "$m" "$p") | ${4:--} | $vs |"
}
echo "| ceiling | agent calibrate | physical peak | measured / physical | clpeak (max over widths) | agent / clpeak |"
echo "|---|---|---|---|---|---|"
row "pi, device, GFLOP/s (max over float1..16 mad chains)" peak_gflops phys_peak_gflops "$cl_gf"
row "beta, device, GB/s (max of read/copy/scale/triad)" peak_gbps phys_peak_gbps "$cl_bw"
row "device read GB/s (clpeak's kind of kernel)" bw_read_gbps phys_peak_gbps "$cl_bw"
row "device triad GB/s" bw_triad_gbps phys_peak_gbps
row "pi, CPU (C, FMA chains, all CPUs), GFLOP/s" cpu_peak_gflops cpu_phys_peak_gflops
row "beta, CPU (C, STREAM triad/copy), GB/s" cpu_peak_gbps cpu_phys_peak_gbps
echo
echo "Physical peaks (never measured; a ceiling above one is flagged and not used as a roof):"
echo "device compute: $(phys_how phys_peak_gflops); device bandwidth: $(phys_how phys_peak_gbps);"
echo "CPU compute: $(phys_how cpu_phys_peak_gflops) (running clock: $(med cpu_clock_mhz) MHz, base $(med cpu_clock_base_mhz) MHz); CPU bandwidth: $(phys_how cpu_phys_peak_gbps)."
echo
echo "Per vector width (agent, median GFLOP/s): float1 $(med gflops_float1), float2 $(med gflops_float2)," \
	"float4 $(med gflops_float4), float8 $(med gflops_float8), float16 $(med gflops_float16)."
if [ -s "$tmp/clpeak.txt" ]; then
	echo
	echo '<details><summary>clpeak output</summary>'
	echo
	echo '```'
	sed -n '/Device:/,$p' "$tmp/clpeak.txt"
	echo '```'
	echo '</details>'
fi
