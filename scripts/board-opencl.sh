#!/usr/bin/env bash
# OpenCL on a glibc board, emulated with qemu-user (make BOARD=<b> board-opencl; part of
# board-check): Debian's PoCL and clinfo of the board's architecture (board-fetch.sh pocl,
# unpacked, not installed) stand for the board's OpenCL stack.
#   opencl_helper_probe      the static musl agent's `--features` finds the PoCL device through
#                            its board-libc helper prof-clhelper (it cannot dlopen itself)
#   opencl_no_helper_says    without the helper it says so (the static agent's old line)
#   opencl_preload_{loaded,unchanged}  clinfo (third-party) with the board's LD_PRELOAD shim: the
#                            board's loader runs it (symbol versions accepted), same output
#   opencl_layer_{loaded,unchanged}    the same with the board's layer (OPENCL_LAYERS, ocl-icd)
#   glibc_check_refuses_newer, glibc_symver_binds_older: scripts/glibc-check.sh refuses a library
#                            built as glibc 2.36's headers bind it, passes it built with the header
#   opencl_calibrate_via_helper  the static agent's `calibrate` (reduced: device, compute_units,
#                            granularity, one repetition) runs its OpenCL benchmarks in the helper:
#                            PoCL compiles the kernels with its armhf LLVM under qemu and runs them;
#                            the agent writes the machine model (-o). Kernels compiled once stay in
#                            $OUT/pocl-kcache (POCL_CACHE_DIR): a cold run ~40-60 s, a primed one ~10 s
#   opencl_clpeak_{layer,preload}  clpeak (third-party, runs kernels: --kernel-latency, 20,000
#                            launches) under the static agent's `agent run` in each mode, sending to
#                            the host collector: exit 0, its output the plain run's (the measured
#                            latency masked), and the collector's report has every launch of its
#                            kernel (a row of >= 20,000, 0 dropped); opencl_clpeak_same_count: both modes alike
#   opencl_calibrate_gpgpusim{3,4}  the host collector writes the GPGPU-sim config from that model
#                            (collector calibrate --from-model) and GPGPU-sim's own init code
#                            (../shared/tools/gpgpusim-init/gsim_v3, gsim_v4) accepts it
# qemu-user has no binfmt here: the helper is executed through a wrapper that starts it under
# qemu (PROF_CLHELPER); on the board the agent finds it beside itself or in ../lib/profcl.
#
#   OUT=build/<b> DEB_ARCH=armhf QEMU_USER=qemu-arm-static TRIPLET=arm-linux-gnueabihf GLIBC_MAX=2.17 board-opencl.sh
set -uo pipefail
: "${OUT:?}" "${DEB_ARCH:?}" "${QEMU_USER:?}" "${TRIPLET:?}"
out=$(cd "$OUT" && pwd)
pocl=$out/pocl
scripts/board-fetch.sh pocl "$DEB_ARCH" "$pocl" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libs=$pocl/usr/lib/$TRIPLET:$pocl/lib/$TRIPLET
icd=$pocl/etc/OpenCL/vendors/pocl.icd
cat >"$tmp/prof-clhelper" <<WRAP
#!/bin/sh
exec env OCL_ICD_VENDORS=$icd LD_LIBRARY_PATH=$libs POCL_CACHE_DIR=$out/pocl-kcache timeout 300 $QEMU_USER $out/lib/prof-clhelper "\$@"
WRAP
chmod +x "$tmp/prof-clhelper"
fails=0 checks=0
check() { # name, condition result, detail
	checks=$((checks + 1))
	if [ "$2" = 0 ]; then echo "board-opencl: PASS $1"; else echo "board-opencl: FAIL $1: $3"; fails=$((fails + 1)); fi
}
t0=$(date +%s)
# discovery bounded by the 120 s here, not the agent's own 5 s (PoCL's start under qemu-user at
# load 11 took longer: "OpenCL discovery timed out"; issue 43)
PROF_OPENCL_PROBE_MS=110000 PROF_CLHELPER=$tmp/prof-clhelper timeout 120 "$QEMU_USER" "$out/agent.stripped" --features >"$tmp/features" 2>&1
grep -q '^ *\[0\] Portable Computing Language: pthread (CPU' "$tmp/features"
check opencl_helper_probe $? "$(grep -A1 'OpenCL:' "$tmp/features")"
mkdir "$tmp/alone" && cp "$out/agent.stripped" "$tmp/alone/agent" # nothing beside it
timeout 120 "$QEMU_USER" "$tmp/alone/agent" --features >"$tmp/features2" 2>&1
grep -q 'OpenCL: *unavailable (.*no helper prof-clhelper beside it' "$tmp/features2"
check opencl_no_helper_says $? "$(grep 'OpenCL:' "$tmp/features2")"
run_clinfo() { env OCL_ICD_VENDORS="$icd" LD_LIBRARY_PATH="$libs" "$@" timeout 120 "$QEMU_USER" "$pocl/usr/bin/clinfo" 2>&1; }
run_clinfo >"$tmp/plain"
grep -q 'Portable Computing Language' "$tmp/plain" || { check clinfo_runs 1 "$(head -3 "$tmp/plain")"; }
# loaded at all? the board's loader runs their constructors (LD_DEBUG=files, a run apart)
loaded() { run_clinfo "$@" QEMU_SET_ENV="$guest_env" | grep -c "calling init: .*$lib"; }
lib=libprofcl_preload.so guest_env=LD_PRELOAD=$out/lib/libprofcl_preload.so,LD_DEBUG=files
[ "$(loaded)" -ge 1 ]
check opencl_preload_loaded $? "the board's loader did not load $out/lib/$lib"
run_clinfo QEMU_SET_ENV=LD_PRELOAD="$out/lib/libprofcl_preload.so" >"$tmp/preload"
cmp -s "$tmp/plain" "$tmp/preload"
check opencl_preload_unchanged $? "$(diff "$tmp/plain" "$tmp/preload" | head -5)"
lib=libprofcl_layer.so guest_env=LD_DEBUG=files
[ "$(loaded OPENCL_LAYERS="$out/lib/libprofcl_layer.so")" -ge 1 ]
check opencl_layer_loaded $? "ocl-icd did not load $out/lib/$lib"
run_clinfo OPENCL_LAYERS="$out/lib/libprofcl_layer.so" >"$tmp/layer"
cmp -s "$tmp/plain" "$tmp/layer"
check opencl_layer_unchanged $? "$(diff "$tmp/plain" "$tmp/layer" | head -5)"
# the build's glibc check itself: a library calling pthread_create and dlsym as glibc 2.36's
# headers bind them is refused (GLIBC_2.34), the same source with the generated header passes
max=${GLIBC_MAX:-2.17}
cat >"$tmp/newer.c" <<'SRC'
#include <dlfcn.h>
#include <pthread.h>
static void *f(void *a) { return a; }
int probe(const char *p) { pthread_t t; return pthread_create(&t, 0, f, 0) + !dlsym(0, p); }
SRC
link() { "$TRIPLET-gcc" -shared -fPIC -O2 "$@" -o "$tmp/newer.so" "$tmp/newer.c" -Wl,--no-as-needed -l:libpthread.so.0 -l:libdl.so.2; }
link && ! scripts/glibc-check.sh "$TRIPLET-readelf" "$max" "$tmp/newer.so" 2>"$tmp/gc.err" &&
	grep -q 'pthread_create' "$tmp/gc.err"
check glibc_check_refuses_newer $? "$(cat "$tmp/gc.err")"
link -include "$out/glibc-symver.h" && scripts/glibc-check.sh "$TRIPLET-readelf" "$max" "$tmp/newer.so" 2>"$tmp/gc.err"
check glibc_symver_binds_older $? "$(cat "$tmp/gc.err")"
mkdir -p "$out/pocl-kcache"
coll=${COLLECTOR:-}
for c in build/host/collector build/host-san/collector; do [ -n "$coll" ] || { [ -x "$c" ] && coll=$c; }; done
# OPENCL_SKIP=calibrate (board.mk BOARD_OPENCL_SKIP): a second board of the same code leaves out
# the emulated calibrate (PoCL compiling its benchmarks under qemu, ~40-50 s cold)
if [ "${OPENCL_SKIP:-}" = calibrate ]; then
	echo "board-opencl: SKIP opencl_calibrate_*: OPENCL_SKIP=calibrate (board.mk; another board runs it)"
else
	# agent calibrate on the board's stack: the OpenCL benchmarks in the helper, offline (the
	# records stay in the spool: no collector here; test_calib_helper covers sending them)
	tc=$(date +%s)
	PROF_CLHELPER=$tmp/prof-clhelper timeout 400 "$QEMU_USER" "$out/agent.stripped" calibrate --collector 127.0.0.1:9 \
		--spool "$tmp/spool" --flush-timeout 1 --quick --reps 1 --only device,compute_units,granularity \
		-o "$tmp/model.json" >"$tmp/calib" 2>&1
	tc=$(($(date +%s) - tc))
	grep -q '3 OpenCL benchmark(s) ran in prof-clhelper' "$tmp/calib" && grep -q '"compute_units": {"value": ' "$tmp/model.json" &&
		grep -q '"device": "pthread' "$tmp/model.json"
	check opencl_calibrate_via_helper $? "$(grep -i 'skipped\|failed\|error' "$tmp/calib" | head -5)"
	echo "board-opencl: agent calibrate under $QEMU_USER: $tc s ($(ls "$out/pocl-kcache" | wc -l) cached program(s))"
	gsim=${PROF_GSIM_DIR:-../shared/tools/gpgpusim-init}
	if [ -z "$coll" ] || [ ! -x "$gsim/gsim_v3" ]; then
		echo "board-opencl: SKIP opencl_calibrate_gpgpusim: no host collector (make all) or no $gsim/gsim_v3"
	else
		gsim=$(cd "$gsim" && pwd)
		for v in 3 4; do
			"$coll" calibrate --from-model "$tmp/model.json" --emit "$tmp/gsim$v.config" --gpgpusim-version $v --clamp \
				>"$tmp/ccal$v" 2>&1 &&
				(cd "$tmp" && timeout 120 "$gsim/gsim_v$v" "gsim$v.config" >"$tmp/gsim$v.out" 2>&1) &&
				! grep -q FAILED "$tmp/gsim$v.out" && grep -q 'option_parser_cmdline(.*-> ok' "$tmp/gsim$v.out"
			check opencl_calibrate_gpgpusim$v $? "$(cat "$tmp/ccal$v"; grep -m3 'FAILED\|rror' "$tmp/gsim$v.out" 2>/dev/null)"
		done
	fi
fi
# a third-party program that runs kernels, under `agent run` in both capture modes. No binfmt
# here: the agent runs "qemu-user clpeak"; the capture library's variable (LD_PRELOAD or
# OPENCL_LAYERS) passes through the static qemu (which loads nothing) to the guest's loader.
if [ -z "$coll" ]; then
	echo "board-opencl: SKIP opencl_clpeak: no host collector (make all)"
else
	tp=$(date +%s)
	clpeak=("$QEMU_USER" -L "$pocl" -E "LD_LIBRARY_PATH=$libs" "$pocl/usr/bin/clpeak" --kernel-latency)
	env OCL_ICD_VENDORS="$icd" POCL_CACHE_DIR="$out/pocl-kcache" timeout 300 "${clpeak[@]}" >"$tmp/clpeak" 2>"$tmp/clpeak.err"
	echo "board-opencl: plain clpeak rc=$?: $(grep -m1 'latency' "$tmp/clpeak")"
	mask() { sed -E 's/[0-9]+(\.[0-9]+)? us$/N us/' "$1"; }
	"$coll" --listen 127.0.0.1:0 --port-file "$tmp/port" --store "$tmp/cl.db" -q 2>"$tmp/coll.err" &
	cpid=$!
	for i in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
	for mode in layer preload; do
		env OCL_ICD_VENDORS="$icd" POCL_CACHE_DIR="$out/pocl-kcache" timeout 300 "$QEMU_USER" "$out/agent.stripped" run \
			--collector "127.0.0.1:$(cat "$tmp/port")" --mode $mode --cl-lib "$out/lib" --spool "$tmp/sp-$mode" \
			--agent-id "clpeak-$mode" -- "${clpeak[@]}" >"$tmp/clpeak-$mode" 2>"$tmp/clpeak-$mode.err"
		rc=$?
		sid=$("$coll" sessions --store "$tmp/cl.db" | awk -v a="clpeak-$mode" '$2 == a {print $1}' | tail -1)
		"$coll" report --store "$tmp/cl.db" --session "${sid:-0}" --opencl >"$tmp/rep-$mode" 2>&1
		n=$(awk '$1 == "global_bandwidth_v1_local_offset" {print $5}' "$tmp/rep-$mode")
		eval "n_$mode=\${n:-0}"
		[ $rc = 0 ] && cmp -s <(mask "$tmp/clpeak") <(mask "$tmp/clpeak-$mode") && [ "${n:-0}" -ge 20000 ] &&
			grep -q ' 0 dropped by the layer' "$tmp/clpeak-$mode.err"
		check opencl_clpeak_$mode $? "rc $rc, kernel count ${n:-none}; $(diff <(mask "$tmp/clpeak") <(mask "$tmp/clpeak-$mode") | head -4; grep -i 'error\|warn' "$tmp/clpeak-$mode.err" | head -3; head -3 "$tmp/rep-$mode")"
		echo "board-opencl: clpeak --kernel-latency under agent run --mode $mode: $(grep -m1 latency "$tmp/clpeak-$mode"); collector: ${n:-0} launches of its kernel"
	done
	[ "$n_layer" = "$n_preload" ]
	check opencl_clpeak_same_count $? "layer $n_layer launches, preload $n_preload"
	kill $cpid 2>/dev/null
	wait $cpid 2>/dev/null
	echo "board-opencl: clpeak checks in $(($(date +%s) - tp)) s"
fi
echo "board-opencl: $((checks - fails)) of $checks passed in $(($(date +%s) - t0)) s ($(wc -l <"$tmp/plain") lines of clinfo)"
[ $fails = 0 ]
