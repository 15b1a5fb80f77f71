#!/usr/bin/env bash
# Install the Debian 12 packages the build, tests, demo and benchmarks need.
# Idempotent: does nothing when everything is present.
# Usage: deps.sh [BOARD...]          install what is missing for the host and each BOARD (one
#                                   apt-get run; `make check` passes every board it checks, so
#                                   nothing is installed while its builds are traced)
#        deps.sh --list [BOARD...]   print the package list (one a line, foreign ones as NAME:ARCH)
# scripts/deps-audit.py checks this list against what the builds and tests really use.
set -euo pipefail
list=0
if [ "${1:-}" = --list ]; then list=1; shift; fi
[ $# -gt 0 ] || set -- host

pkgs=(
	apt  # deps.sh's apt-get; apt-cache and apt-get download fetch the emulated boards' kernels (board-fetch.sh)
	build-essential make pkg-config python3 python3-kconfiglib
	protobuf-c-compiler libprotobuf-c-dev
	libsqlite3-dev sqlite3 libcmocka-dev libssl-dev nettle-dev libpq-dev postgresql  # TLS (OpenSSL), token auth (nettle), PostgreSQL store + its tests (issue 10)
	libiberty-dev libdebuginfod-dev libdw-dev golang-go  # collector symbols: demangler, debuginfod client, DWARF file:line (libdw, issue 39); `go tool pprof` reads the pprof export in its test (issue 27)
	libbpf-dev libelf-dev zlib1g-dev bpftool clang llvm libclang-rt-14-dev
	ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo clpeak
	hashcat clblast-utils python3-pyopencl  # third-party OpenCL programs of tests/integration/test_opencl_corpus.c (issue 24)
	ffmpeg  # its OpenCL filters move images: tests/integration/test_opencl_ffmpeg.c (issue 41)
	nodejs  # node --perf-basic-prof writes /tmp/perf-PID.map: the JIT program of tests/integration/test_record_jit.c (issue 39)
	linux-perf procps iproute2 time strace python3-pyelftools  # strace, pyelftools: the deps audit (scripts/deps-audit.py: traces, the loader's DT_NEEDED closure)
	libcapstone-dev
	libstdc++6 zlib1g  # ../shared/tools/gpgpusim-init/gsim_v3, gsim_v4 (GPGPU-sim's own init code) run by test_calib_gsim, test_calibrate and make demo (issue 37)
	libunicorn-dev  # replay trace windows (issue 26): headers; the agent loads libunicorn.so.2 (libunicorn2) with dlopen; the collector links it to replay board windows (issue 36, collector/trace_replay/)
	libzstd-dev  # .zst instruction traces (collector edag --trace, issue 17; zlib1g-dev above for .gz)
	librsvg2-bin chromium
	qemu-user gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu gcc-arm-linux-gnueabihf  # QEMU plugin traces (issue 7):
	libc6-dev-arm64-cross libc6-dev-riscv64-cross libc6-dev-armhf-cross  # their C libraries (not pulled in without Recommends)
)
# Cross boards: the toolchain, the cross libraries the board's defconfig needs (Debian
# multiarch :armhf/:arm64 -dev packages, linked statically into the agent), cmocka for
# the cross unit suites, qemu-user to run them; emulated boards also qemu-system and cpio
# (their kernel and busybox are fetched with apt-get download at build time, not installed).
deb_arches=()
add_board() {
	local board=$1 deb_arch='' defconfig foreign=() p
	[ "$board" = host ] && return 0
	if [ ! -f "board/$board/board.mk" ]; then
		echo "deps: unknown board '$board' (no board/$board/board.mk)" >&2
		exit 2
	fi
	deb_arch=$(sed -n 's/^BOARD_DEB_ARCH *:*= *\([a-z0-9]*\).*/\1/p' "board/$board/board.mk" | head -n1)
	[ -n "$deb_arch" ] || return 0
	defconfig=configs/${board}_defconfig
	has() { grep -q "^CONFIG_$1=y" "$defconfig" 2>/dev/null; }
	case "$deb_arch" in
	armhf) pkgs+=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user-static) ;;
	arm64) pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static) ;;
	*) echo "deps: board $board: unsupported BOARD_DEB_ARCH '$deb_arch'" >&2; exit 2 ;;
	esac
	deb_arches+=("$deb_arch")
	foreign+=(libprotobuf-c-dev libcmocka-dev libc6)
	# libbpf (+ libelf, zlib) only for the libbpf fallback loader (Kconfig default: on unless
	# static); the light skeletons need just libbpf's headers, which the host's libbpf-dev has.
	if has AGENT_BPF && { has AGENT_BPF_LIBBPF || { ! has STATIC &&
		! grep -q '^# CONFIG_AGENT_BPF_LIBBPF is not set' "$defconfig"; }; }; then
		foreign+=(libbpf-dev libelf-dev zlib1g-dev)
	fi
	has AGENT_TRACER && foreign+=(libcapstone-dev)
	grep -q '^# CONFIG_AUTH is not set' "$defconfig" || foreign+=(nettle-dev) # token auth (default on)
	grep -q '^BOARD_LIBC *?*:*= *musl' "board/$board/board.mk" && foreign+=(musl-dev) # static agent on musl
	has AGENT_OPENCL && foreign+=(ocl-icd-opencl-dev) # libOpenCL.so for the cross-built OpenCL workloads
	if grep -q '^QEMU_SYSTEM' "board/$board/board.mk"; then
		pkgs+=(qemu-system-arm cpio socat)
	fi
	# issue 30: dtc adds the PMU node to the armhf guest's device tree (scripts/board-test.sh)
	grep -q '^QEMU_PMU_DT' "board/$board/board.mk" && pkgs+=(device-tree-compiler)
	for p in "${foreign[@]}"; do pkgs+=("$p:$deb_arch"); done
}
for b in "$@"; do add_board "$b"; done
# one line per package, first mention kept
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | awk '!seen[$0]++')

if [ $list -eq 1 ]; then
	printf '%s\n' "${pkgs[@]}"
	exit 0
fi

# One dpkg-query for the whole list (issue 43: one per package, 73 for make check's boards,
# cost 17-22 s a call at load 19; make check runs this 5 times). A NAME matches the package
# of any architecture, as `dpkg-query -W NAME` does; NAME:ARCH that architecture only.
declare -A installed=()
while read -r name; do
	installed[$name]=1
done < <(dpkg-query -W -f='${Package} ${Architecture} ${Status}\n' "${pkgs[@]}" 2>/dev/null |
	awk '/ install ok installed$/ { print $1; print $1 ":" $2 }')
missing=()
for p in "${pkgs[@]}"; do
	[ -n "${installed[$p]:-}" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
for a in $(printf '%s\n' "${deb_arches[@]}" | sort -u); do
	if ! dpkg --print-foreign-architectures | grep -qx "$a"; then
		echo "deps: enabling the $a architecture (dpkg multiarch)"
		$SUDO dpkg --add-architecture "$a"
	fi
done
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
