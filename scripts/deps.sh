#!/usr/bin/env bash
# Install the Debian 12 packages the build, tests, demo and benchmarks need.
# Idempotent: does nothing when everything is present. Usage: deps.sh [BOARD]
set -euo pipefail
board=${1:-host}

pkgs=(
	build-essential make pkg-config python3 python3-kconfiglib
	protobuf-c-compiler libprotobuf-c-dev
	libsqlite3-dev sqlite3 libcmocka-dev
	libbpf-dev libelf-dev zlib1g-dev bpftool clang llvm libclang-rt-14-dev
	ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
	linux-perf procps iproute2
)
case "$board" in
host) ;;
arndale-octa) pkgs+=(gcc-arm-linux-gnueabihf) ;;
android-arm64) pkgs+=(gcc-aarch64-linux-gnu) ;;
*)
	if [ ! -f "board/$board/board.mk" ]; then
		echo "deps: unknown board '$board' (no board/$board/board.mk)" >&2
		exit 2
	fi
	;;
esac

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
