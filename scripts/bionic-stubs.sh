#!/usr/bin/env bash
# A stub sysroot for linking against bionic without an NDK (none is packaged in Debian): stub
# libc.so, libdl.so, libm.so whose dynamic symbols are exactly bionic's public API for ARCH at API
# (scripts/bionic-symbols.sh from bionic's own maps), every function an empty body, every
# variable (`# var`) 8 bytes of data. They only satisfy the link (--no-undefined): the program
# runs against the phone's real libraries, which have these names.
#
#   bionic-stubs.sh CLANG_TARGET ARCH API BIONIC_SRC OUTDIR LD
set -euo pipefail
target=$1 arch=$2 api=$3 src=$4 out=$5 ld=$6
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for lib in libc libdl libm; do
	map=$src/$lib/$lib.map.txt
	[ -f "$map" ] || { echo "bionic-stubs: no $map (BIONIC_SRC: an Android bionic tree)" >&2; exit 1; }
	BIONIC_KIND=1 "$here/bionic-symbols.sh" "$arch" "$api" "$map" |
		awk '$2 == "var" { printf "char %s[8];\n", $1; next } { printf "void %s(void) {}\n", $1 }' >"$out/$lib.c"
	clang --target="$target" -nostdinc -fno-builtin -w -fPIC -c "$out/$lib.c" -o "$out/$lib.o"
	"$ld" -shared -soname "$lib.so" -o "$out/$lib.so" "$out/$lib.o"
done
"$here/bionic-symbols.sh" "$arch" "$api" "$src/libc/libc.map.txt" "$src/libdl/libdl.map.txt" \
	"$src/libm/libm.map.txt" >"$out/api.txt"
