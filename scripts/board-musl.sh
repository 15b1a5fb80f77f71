#!/usr/bin/env bash
# Include and library directories for building the static agent against musl
# (BOARD_LIBC = musl, mk/board.mk). musl's specs file (musl-dev:<arch>) replaces the C
# library's headers and startup files and drops the default search paths; these two
# directories give back only what is not the C library:
#   OUT/inc  the kernel UAPI headers of the cross toolchain (linux, asm, asm-generic) and
#            the headers of the cross libraries (bpf, capstone, protobuf-c, nettle, libelf, zlib,
#            OpenCL, cmocka), as symbolic links;
#   OUT/lib  links to the static cross libraries (Debian multiarch :<arch>) and to
#            libcmocka.so for the unit suites; never glibc's libc.a/libm.a/libdl.a.
# Usage: board-musl.sh GNU_TRIPLET OUT   (e.g. aarch64-linux-gnu build/android-arm64/musl)
set -euo pipefail
tri=$1 out=$2
rm -rf "$out/inc" "$out/lib"
mkdir -p "$out/inc" "$out/lib"
for h in linux asm asm-generic; do
	[ -d "/usr/$tri/include/$h" ] || { echo "board-musl: no /usr/$tri/include/$h (make deps)" >&2; exit 1; }
	ln -s "/usr/$tri/include/$h" "$out/inc/$h"
done
for h in bpf capstone protobuf-c nettle elfutils CL gelf.h libelf.h nlist.h zlib.h zconf.h cmocka.h cmocka_pbc.h; do
	if [ -e "/usr/include/$tri/$h" ]; then ln -s "/usr/include/$tri/$h" "$out/inc/$h"
	elif [ -e "/usr/include/$h" ]; then ln -s "/usr/include/$h" "$out/inc/$h"; fi
done
for l in protobuf-c bpf elf z capstone nettle; do
	[ -e "/usr/lib/$tri/lib$l.a" ] && ln -s "/usr/lib/$tri/lib$l.a" "$out/lib/lib$l.a"
done
# libcmocka (glibc-built) under musl's dynamic loader: musl answers its libc.so.6 itself;
# a glibc loader it names (armhf: ld-linux-armhf.so.3, for __tls_get_addr) is pointed at
# musl's libc.so, which musl recognises as already loaded (same file).
if [ -e "/usr/lib/$tri/libcmocka.so.0" ]; then
	ln -s "/usr/lib/$tri/libcmocka.so.0" "$out/lib/libcmocka.so"
	ln -s "/usr/lib/$tri/libcmocka.so.0" "$out/lib/libcmocka.so.0"
	musl_libc=/lib/${tri/-gnu/-musl}/libc.so
	for n in $("$tri-readelf" -d "/usr/lib/$tri/libcmocka.so.0" | sed -n 's/.*(NEEDED).*\[\(ld-linux[^]]*\)\]/\1/p'); do
		ln -s "$musl_libc" "$out/lib/$n"
	done
fi
