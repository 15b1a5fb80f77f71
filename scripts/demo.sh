#!/usr/bin/env bash
# make demo: start a collector on loopback, calibrate the OpenCL device (PoCL
# here) and the CPU, profile the sample OpenCL workload (matrix multiply) with
# the OpenCL layer, and print the report: OpenCL kernel table with the command
# DAG, roofline position against the measured ceilings, calibration summary.
# Usage: demo.sh OUT
set -euo pipefail
out=$1
dir=build/demo
mkdir -p "$dir"
rm -f "$dir"/profile.db* "$dir/port"
"$out/collector" --listen 127.0.0.1:0 --store "$dir/profile.db" --port-file "$dir/port" 2>"$dir/collector.log" &
cpid=$!
trap 'kill $cpid 2>/dev/null || true' EXIT
for _ in $(seq 500); do [ -s "$dir/port" ] && break; sleep 0.02; done
port=$(cat "$dir/port")
coll="--collector 127.0.0.1:$port --spool $dir/spool"
echo "== collector listening on 127.0.0.1:$port (store $dir/profile.db, log $dir/collector.log)"
echo
echo "== agent calibrate --quick --only device,peak,cpu_peak,mem_slots -o $dir/machine.json"
"$out/agent" calibrate $coll --quick --only device,peak,cpu_peak,mem_slots -o "$dir/machine.json"
echo
n=384
echo "== agent run -- $out/workloads/cl_matmul $n 12     (OpenCL layer: every command timed on the device)"
"$out/agent" run $coll -- "$out/workloads/cl_matmul" $n 12
kill -TERM $cpid && wait $cpid || true
trap - EXIT
sid=$(sqlite3 "$dir/profile.db" "SELECT MAX(id) FROM sessions")
# Work per work-item of the naive matmul: n multiply-adds (2n flops); 2n floats read + 1 written, no reuse.
echo "matmul ops=$((2 * n)) bytes=$((8 * n + 4))" >"$dir/kernels.model"
echo
echo "== collector sessions --store $dir/profile.db"
"$out/collector" sessions --store "$dir/profile.db"
echo
echo "== collector report --store $dir/profile.db --session $sid --machine $dir/machine.json --kernel-model $dir/kernels.model"
"$out/collector" report --store "$dir/profile.db" --session "$sid" --machine "$dir/machine.json" \
	--kernel-model "$dir/kernels.model"
"$out/collector" report --store "$dir/profile.db" --session "$sid" --machine "$dir/machine.json" \
	--kernel-model "$dir/kernels.model" --format html >"$dir/report.html"
"$out/collector" roofline --store "$dir/profile.db" --session "$sid" --machine "$dir/machine.json" \
	--kernel-model "$dir/kernels.model" -o "$dir/roofline.svg" >/dev/null
"$out/collector" export --store "$dir/profile.db" --session "$sid" --perfetto "$dir/trace.json"
echo
echo "== also written: $dir/report.html (open in a browser), $dir/roofline.svg, $dir/trace.json (ui.perfetto.dev),"
echo "   $dir/machine.json (machine model); GPGPU-sim config: collector calibrate --from-model $dir/machine.json --emit FILE"
