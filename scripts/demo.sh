#!/usr/bin/env bash
# make demo: the whole mission in one run on the embedded defaults (SQLite store,
# PoCL as the OpenCL device, a collector on loopback):
#   1 collector   2 calibration of the OpenCL device and the CPU (every benchmark, quick)
#   3 agent profile of the sample OpenCL app: kernel timings, CPU counters and samples and
#     instruction-trace windows in ONE session   4 the report: top functions, OpenCL kernels,
#     roofline with a kernel dot and a CPU dot, eDAG W, D, W/D, lambda, Lambda and the latency
#     sensitivity with the calibrated alpha0   5 the GPGPU-sim config from the calibration (for
#     GPGPU-sim 3.2.2 as released, checked against its limits; see collector/calib/README.md)
#     and GPGPU-sim's own verdict on it (../shared/tools/gpgpusim-init, where present)
#   6 HTML report, roofline SVG, Perfetto trace, and where every figure came from.
# Fails (exit 1) if the report lacks a kernel dot, a CPU dot or a sensitivity row.
# Usage: demo.sh OUT
set -euo pipefail
out=$1
dir=build/demo
n=512  # matrix size of the sample app (cl_matmul N REPEATS cpu CPU_REPEATS)
reps=8
refs=4 # the CPU reference's repetitions: its thread (cpu_ref) runs long enough for replay windows
mkdir -p "$dir"
rm -rf "$dir"/profile.db* "$dir/port" "$dir/spool"
start=$(date +%s.%N)
since() { awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
phase() { printf '\n== [%s/6] %s (at %s s)\n' "$1" "$2" "$(since)"; }
sql() { sqlite3 "$dir/profile.db" "$1"; }

phase 1 "collector on loopback"
"$out/collector" --listen 127.0.0.1:0 --store "$dir/profile.db" --port-file "$dir/port" 2>"$dir/collector.log" &
cpid=$!
trap 'kill $cpid 2>/dev/null || true' EXIT
for _ in $(seq 500); do [ -s "$dir/port" ] && break; sleep 0.02; done
port=$(cat "$dir/port")
coll="--collector 127.0.0.1:$port --spool $dir/spool"
echo "collector listening on 127.0.0.1:$port (store $dir/profile.db, log $dir/collector.log)"

phase 2 "agent calibrate --quick -o $dir/machine.json: the OpenCL device and the CPU, one line per benchmark"
"$out/agent" calibrate $coll --quick -o "$dir/machine.json" 2>&1 |
	grep -E '^calibrate:|^\[[0-9]+/[0-9]+\]|^  \(|_of_physical|phys_peak|peak_g|mem_latency_cycles|mem_issue_slots|compute_units|FLAGGED|IMPOSSIBLE|note:|skipped' || true

phase 3 "agent profile -- cl_matmul $n $reps cpu $refs: OpenCL timing + counters + CPU samples + trace windows, one session"
# Work per work-item of the naive matmul kernel: n multiply-adds (2n flops), 2n floats read + 1
# written (no reuse); the CPU reference (matmul_ref, the same loop nest over the whole matrix):
# 2 n^3 flops and 8 n^3 bytes each time, for the whole run.
printf 'matmul ops=%d bytes=%d\ncpu:matmul_ref ops=%d bytes=%d\n' $((2 * n)) $((8 * n + 4)) \
	$((2 * n * n * n * refs)) $((8 * n * n * n * refs)) >"$dir/kernels.model"
# Trace windows at up to 20 % duty (the default is 5 %): on a loaded machine a replay window's stop
# time at 5 % ran out (a cut window gives no vote, and the report then has no sensitivity row).
"$out/agent" profile $coll --max-duty 20 --kernel-model "$dir/kernels.model" -- "$out/workloads/cl_matmul" $n $reps cpu $refs 2>&1 |
	tee "$dir/profile.log"
cpu_ref_tid=$(sed -n 's/^cl_matmul: cpu reference: thread \([0-9]*\).*/\1/p' "$dir/profile.log" | head -n1)
kill -TERM $cpid && wait $cpid || true
trap - EXIT
sid=$(sql "SELECT MAX(id) FROM sessions")
cal=$(sql "SELECT MIN(id) FROM sessions")

phase 4 "collector report --store $dir/profile.db --session $sid --kernel-model $dir/kernels.model"
"$out/collector" sessions --store "$dir/profile.db"
echo
report=(--store "$dir/profile.db" --session "$sid" --kernel-model "$dir/kernels.model")
"$out/collector" report "${report[@]}"

gsv=3 # GPGPU-sim version the config targets: 3 = 3.2.2 as released (the seed's baseline), 4 = 4.0
phase 5 "GPGPU-sim $([ $gsv = 3 ] && echo 3.2.2 || echo 4.0) config from the calibration: $dir/gpgpusim.config"
"$out/collector" calibrate --store "$dir/profile.db" --session "$cal" --emit "$dir/gpgpusim.config" \
	--gpgpusim-version $gsv --clamp
echo "$(sed -n 's/^# target: /target: /p' "$dir/gpgpusim.config") (--gpgpusim-version $gsv);"
echo "  out-of-range values written clamped (--clamp); the file and $dir/config_calib_islip.icnt were checked"
echo "  against that version's limits (collector/calib/gpgpusim_limits.c) before they were written"
# GPGPU-sim's own init code, where the harness is beside the project (../shared/tools/gpgpusim-init)
gsim=../shared/tools/gpgpusim-init/gsim_v$gsv
if [ -x "$gsim" ]; then
	gsim=$(cd "$(dirname "$gsim")" && pwd)/$(basename "$gsim")
	(cd "$dir" && timeout 120 "$gsim" gpgpusim.config >gsim.log 2>&1) || true
	nfail=$(grep -c FAILED "$dir/gsim.log" || true)
	if grep -q 'option_parser_cmdline(.*-> ok' "$dir/gsim.log" && [ "$nfail" -eq 0 ]; then
		echo "GPGPU-sim's own init code ($gsim): LOADS, 0 FAILED steps ($dir/gsim.log)"
	else
		echo "GPGPU-sim's own init code ($gsim): DOES NOT LOAD, $nfail FAILED steps$(grep -q 'option_parser_cmdline(.*-> ok' "$dir/gsim.log" || echo ', option parser refused the file') ($dir/gsim.log):"
		grep -E 'FAILED|ERROR|error' "$dir/gsim.log" | head -5
	fi
else
	echo "GPGPU-sim's own init code: not checked ($gsim is absent: ../shared/tools/gpgpusim-init beside the project root)"
fi
# each option is preceded by a comment saying whether it was measured or is a fallback / mapping
awk '/^# / {c=$0; next} /^-/ {print ((c ~ /^# (measured|partly measured|derived from measured):/) ? "measured" : "stated") "\t" $1 "\t" $2 ((c ~ /CLAMPED/) ? "(clamped)" : ""); c=""}' \
	"$dir/gpgpusim.config" >"$dir/gpgpusim.sources"
echo "measured ($(grep -c '^measured' "$dir/gpgpusim.sources")): $(awk '$1=="measured" {printf "%s %s  ", $2, $3}' "$dir/gpgpusim.sources")"
echo "stated fallbacks and mappings ($(grep -c '^stated' "$dir/gpgpusim.sources")): $(awk '$1=="stated" {printf "%s %s  ", $2, $3}' "$dir/gpgpusim.sources")"

phase 6 "HTML report, roofline, Perfetto trace, and where each figure came from"
"$out/collector" report "${report[@]}" --format html >"$dir/report.html"
"$out/collector" report "${report[@]}" --format json >"$dir/report.json"
"$out/collector" roofline "${report[@]}" -o "$dir/roofline.svg" >/dev/null
"$out/collector" export --store "$dir/profile.db" --session "$sid" --perfetto "$dir/trace.json"
# the session's CPU samples from the collector (the samples are stored as packed blocks: no rows for SQL)
"$out/collector" sessions --store "$dir/profile.db" --json >"$dir/sessions.json"
python3 - "$dir/report.json" "$dir/profile.db" "$sid" "$cal" "${cpu_ref_tid:-0}" "$dir/sessions.json" <<'EOF'
import json, sqlite3, sys
rep = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
sid, cal = int(sys.argv[3]), int(sys.argv[4])
one = lambda q: db.execute(q, (sid,)).fetchone()[0]
dots = rep["roofline"]["dots"]
sens = rep["sensitivity"]["threads"]
print("where each figure came from (session %d; ceilings from calibration session %d):" % (sid, cal))
print("  kernel timings:   %d OpenCL commands timed on the device by the OpenCL layer" %
      one("SELECT COALESCE(SUM(commands),0) FROM cl_command_blocks WHERE session_id=?"))
print("  CPU samples:      %d samples (agent profile's sampler), resolved on this host" %
      next(x["cpu_samples"] for x in json.load(open(sys.argv[6]))["sessions"] if x["id"] == sid))
print("  counters:         %s" % ", ".join(r[0] for r in db.execute(
      "SELECT name FROM events WHERE session_id=? ORDER BY event_id", (sid,))))
# one count of windows: a window longer than one record is stored as several (same window_index);
# the report's rows take the windows they used and discarded (too short, cut by the stop-time
# limit: no vote, issue 36), and threads whose windows were all discarded have none
stored = one("SELECT COUNT(DISTINCT window_index) FROM trace_windows WHERE session_id=?")
used = sum(t["windows"] for t in sens)
taken = sum(t.get("windows_taken", t["windows"]) for t in sens) + rep["sensitivity"].get("windows_without_row", 0)
print("  trace windows:    %d windows of the app's threads -> eDAG, %d of them used (alpha0 = %s %s and m = %s from %s)%s" %
      (stored, used, rep["sensitivity"]["alpha0"], rep["sensitivity"]["unit"], rep["sensitivity"]["m"],
       rep["sensitivity"].get("params_from", "the calibration"),
       "" if stored == taken else "; %d unreadable (see the report's warnings)" % (stored - taken)))
print("  cache model:      %s" % rep["sensitivity"]["cache_model"])
for t in sens:
    mark = " (the CPU reference, thread cpu_ref)" if t["name"].endswith(" tid " + sys.argv[5]) else ""
    print("  sensitivity:      %s%s: %s; Lambda*a0 %.3f [%.3f, %.3f]%s" % (t["name"], mark, t["how"],
          t["Lambda_alpha0"], t["Lambda_lo"] * rep["sensitivity"]["alpha0"], t["Lambda_hi"] * rep["sensitivity"]["alpha0"],
          ", UPPER BOUND (cold misses %.3g per instruction)" % t["cold_per_insn"] if t["upper_bound"] else ""))
for d in dots:
    print("  %-16s  %s roof, I = %.3g FLOP/B, %.3g GFLOP/s: %s" % (d["name"] + ":", d["roof"].upper(),
          d["intensity"], d["achieved_gflops"], d["source"]))
for roof in ("gpu", "cpu"):
    r = rep["roofline"][roof]
    print("  %s roof:          pi %.4g GFLOP/s, beta %.4g GB/s (calibration session %d; measured/physical below)" %
          (roof.upper(), r["pi_gflops"], r["beta_gbps"], cal))
s = rep["calibration"]["summary"]
for k in ("peak_gflops", "peak_gbps", "cpu_peak_gflops", "cpu_peak_gbps"):
    if k in s and k + "_of_physical" in s:
        phys = "cpu_phys_" + k[4:] if k.startswith("cpu_") else "phys_" + k
        print("  %-16s  measured %.4g %s = %.2f of the physical peak %.4g" % (k + ":", s[k]["value"], s[k]["unit"],
              s[k + "_of_physical"]["value"], s[phys]["value"]))
missing = []
if not any(d["roof"] == "gpu" for d in dots): missing.append("a kernel dot")
if not any(d["roof"] == "cpu" for d in dots): missing.append("a CPU dot")
if not sens: missing.append("a latency-sensitivity row (trace windows)")
if missing:
    print("demo: FAIL: the report has no " + ", no ".join(missing))
    sys.exit(1)
print("demo: the report has %d kernel dot(s), %d CPU dot(s) and %d sensitivity row(s)" %
      (sum(d["roof"] == "gpu" for d in dots), sum(d["roof"] == "cpu" for d in dots), len(sens)))
EOF
echo
echo "written: $dir/report.html (every section, SVG charts inline), $dir/report.json, $dir/roofline.svg,"
echo "  $dir/trace.json (ui.perfetto.dev), $dir/machine.json (machine model), $dir/gpgpusim.config"
echo "  + $dir/config_calib_islip.icnt (GPGPU-sim $([ $gsv = 3 ] && echo 3.2.2 || echo 4.0))"
echo "demo: done in $(since) s"
