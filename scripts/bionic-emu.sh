#!/usr/bin/env bash
# The Android (bionic) prof-clhelper run by the static arm64 agent, emulated: there is no Android
# emulator, bionic userland or phone here, so qemu-aarch64-static runs the bionic-built helper
# with glibc's aarch64 loader standing in for /system/bin/linker64 (-L ROOT: ROOT/system/bin/
# linker64), its libc.so a double of bionic's names glibc lacks or numbers otherwise
# (tests/bionic_emu/libc_double.c: __libc_init, __errno, sysconf; every other import from
# glibc's libc.so.6, where the two C libraries agree on arm64: kernel constants, struct
# layouts of dirent, timespec, tm), libdl.so and libm.so forwarding to glibc's, and Debian's
# arm64 PoCL as the phone's vendor OpenCL at
# ROOT/vendor/lib64/libOpenCL.so (the helper's Android lookup; no ICD loader name). What runs as
# built for the phone: the helper's own _start (helper/start_bionic.c), its code compiled by clang
# against bionic's headers, the raw structs it writes to the static agent (gcc, musl).
# What does not: bionic's linker, libc and linker namespaces, a vendor driver, a GPU.
#
#   OUT=build/android-arm64 bionic-emu.sh      (make BOARD=android-arm64 BIONIC_SRC=DIR bionic-emu)
set -uo pipefail
: "${OUT:?}"
out=$(cd "$OUT" && pwd)
helper=$out/lib-bionic/prof-clhelper
[ -x "$helper" ] && [ -x "$out/agent.stripped" ] || { echo "bionic-emu: build agent and bionic-libs first" >&2; exit 1; }
qemu=qemu-aarch64-static cc=aarch64-linux-gnu-gcc
pocl=$out/pocl
scripts/board-fetch.sh pocl arm64 "$pocl" || exit 1
ldso=$(readlink -f /lib/ld-linux-aarch64.so.1) # libc6:arm64 (deps.sh, the board's unit suites)
[ -f "$ldso" ] || { echo "bionic-emu: no /lib/ld-linux-aarch64.so.1 (make deps BOARD=android-arm64)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
emu=$tmp/emu
mkdir -p "$emu/lib" "$emu/root/system/bin" "$emu/root/vendor/lib64" "$out/pocl-kcache"
$cc -shared -fPIC -O2 -Wall -Wextra -Werror -Wl,--version-script=tests/bionic_emu/libc.map -o "$emu/lib/libc.so" \
	tests/bionic_emu/libc_double.c || exit 1
$cc -shared -o "$emu/lib/libdl.so" -x c /dev/null || exit 1
$cc -shared -o "$emu/lib/libm.so" -x c /dev/null -Wl,--no-as-needed -lm || exit 1
ln -s "$ldso" "$emu/root/system/bin/linker64"
# glibc's loader would find the host's arm64 libOpenCL.so (ocl-icd-opencl-dev:arm64) in its
# default directories: a non-ELF file in ROOT shadows them (qemu -L looks there first), so a
# bare dlopen("libOpenCL.so") fails as on a phone without one in the linker's search path
for d in lib usr/lib; do
	mkdir -p "$emu/root/$d/aarch64-linux-gnu" && echo 'not here (bionic-emu.sh)' >"$emu/root/$d/aarch64-linux-gnu/libOpenCL.so"
done
ln -s "$pocl/usr/lib/aarch64-linux-gnu/libOpenCL.so.1" "$emu/root/vendor/lib64/libOpenCL.so"
libs=$emu/lib:$pocl/usr/lib/aarch64-linux-gnu:$pocl/lib/aarch64-linux-gnu
cat >"$tmp/prof-clhelper" <<WRAP
#!/bin/sh
exec env OCL_ICD_VENDORS=$pocl/etc/OpenCL/vendors/pocl.icd LD_LIBRARY_PATH=$libs POCL_CACHE_DIR=$out/pocl-kcache \
	timeout 300 $qemu -L $emu/root $helper "\$@"
WRAP
chmod +x "$tmp/prof-clhelper"
fails=0 checks=0
check() { # name, condition result, detail
	checks=$((checks + 1))
	if [ "$2" = 0 ]; then echo "bionic-emu: PASS $1"; else echo "bionic-emu: FAIL $1: $3"; fails=$((fails + 1)); fi
}
t0=$(date +%s)
# the helper alone: its entry, the vendor path it opens (glibc's loader says which files it loads)
LD_DEBUG=files "$tmp/prof-clhelper" probe >"$tmp/probe.bin" 2>"$tmp/probe.log"
grep -q 'file=/vendor/lib64/libOpenCL.so ' "$tmp/probe.log" && [ -s "$tmp/probe.bin" ]
check bionic_helper_opens_vendor_libopencl $? "$(grep -m3 'file=.*OpenCL\|rror' "$tmp/probe.log")"
# the static agent executes it (PROF_CLHELPER: no binfmt here) and reads its struct
PROF_CLHELPER=$tmp/prof-clhelper timeout 120 $qemu "$out/agent.stripped" --features >"$tmp/features" 2>&1
grep -q '^ *\[0\] Portable Computing Language: pthread (CPU' "$tmp/features"
check bionic_helper_probe_via_agent $? "$(grep -A1 'OpenCL:' "$tmp/features")"
# no vendor library: the Android message
rm "$emu/root/vendor/lib64/libOpenCL.so"
PROF_CLHELPER=$tmp/prof-clhelper timeout 120 $qemu "$out/agent.stripped" --features >"$tmp/features2" 2>&1
grep -q 'no vendor OpenCL library (set PROF_CL_LIBRARY' "$tmp/features2"
check bionic_helper_says_no_vendor_library $? "$(grep -A1 'OpenCL:' "$tmp/features2")"
# PROF_CL_LIBRARY names it instead
PROF_CL_LIBRARY=$pocl/usr/lib/aarch64-linux-gnu/libOpenCL.so.1 PROF_CLHELPER=$tmp/prof-clhelper timeout 120 $qemu \
	"$out/agent.stripped" --features >"$tmp/features3" 2>&1
grep -q '^ *\[0\] Portable Computing Language: pthread (CPU' "$tmp/features3"
check bionic_helper_prof_cl_library $? "$(grep -A1 'OpenCL:' "$tmp/features3")"
ln -s "$pocl/usr/lib/aarch64-linux-gnu/libOpenCL.so.1" "$emu/root/vendor/lib64/libOpenCL.so"
# calibrate: the OpenCL benchmarks in the bionic helper, offline (records stay in the spool)
tc=$(date +%s)
PROF_CLHELPER=$tmp/prof-clhelper timeout 400 $qemu "$out/agent.stripped" calibrate --collector 127.0.0.1:9 \
	--spool "$tmp/spool" --flush-timeout 1 --quick --reps 1 --only device,compute_units,granularity \
	-o "$tmp/model.json" >"$tmp/calib" 2>&1
tc=$(($(date +%s) - tc))
grep -q '3 OpenCL benchmark(s) ran in prof-clhelper' "$tmp/calib" && grep -q '"compute_units": {"value": ' "$tmp/model.json" &&
	grep -q '"device": "pthread' "$tmp/model.json"
check bionic_helper_calibrate $? "$(grep -i 'skipped\|failed\|error' "$tmp/calib" | head -5)"
echo "bionic-emu: calibrate $tc s; compute units $(sed -n 's/.*"compute_units": {"value": \([0-9.]*\).*/\1/p' "$tmp/model.json")"
echo "bionic-emu: $((checks - fails)) of $checks passed ($(($(date +%s) - t0)) s)"
[ -z "${PROF_KEEP_TMP:-}" ] || { rm -rf "$out/bionic-emu.last" && cp -r "$tmp" "$out/bionic-emu.last"; echo "bionic-emu: kept $out/bionic-emu.last"; }
[ $fails = 0 ]
