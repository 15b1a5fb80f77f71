#!/usr/bin/env bash
# Fail if a library meant for Android apps needs anything outside bionic's public API:
# DT_NEEDED other than libc.so, libdl.so, libm.so, liblog.so; an imported symbol not in LIST
# (scripts/bionic-symbols.sh ARCH API bionic/libc/libc.map.txt ...); symbol versions of another
# C library (GLIBC_*); a TLS segment (__thread) below API 29, the first with ELF TLS in bionic.
# No text relocations. An executable (the OpenCL helper) also: bionic's linker as interpreter,
# PIE, and a TLS segment, if any, aligned as bionic's linker demands (8 words).
#
#   bionic-check.sh READELF API LIST LIB...
set -euo pipefail
readelf=$1 api=$2 list=$3
shift 3
rc=0
for lib in "$@"; do
	bad=$("$readelf" -d -W "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -vxE 'libc\.so|libdl\.so|libm\.so|liblog\.so' | tr '\n' ' ' || true)
	[ -z "$bad" ] || { echo "bionic-check: FAIL: $lib needs $bad(bionic apps have libc.so, libdl.so, libm.so, liblog.so)" >&2; rc=1; }
	vers=$("$readelf" -V -W "$lib" | sed -n 's/.*Name: \(GLIBC_[0-9.]*\).*/\1/p' | sort -u | tr '\n' ' ')
	[ -z "$vers" ] || { echo "bionic-check: FAIL: $lib needs glibc symbol versions: $vers" >&2; rc=1; }
	# undefined dynamic symbols (weak ones too: they bind if present), names without @version
	miss=$("$readelf" --dyn-syms -W "$lib" | awk '$7 == "UND" && $8 != "" { n = $8; sub(/@.*/, "", n); print n }' |
		sort -u | comm -23 - <(sort -u "$list") | tr '\n' ' ')
	[ -z "$miss" ] || { echo "bionic-check: FAIL: $lib imports what bionic's API $api lacks: $miss" >&2; rc=1; }
	if [ "$api" -lt 29 ] && "$readelf" -l -W "$lib" | grep -q '^ *TLS '; then
		echo "bionic-check: FAIL: $lib has a TLS segment (__thread): bionic has ELF TLS from API 29 only" >&2
		rc=1
	fi
	# text relocations: bionic's linker refuses them (linker/linker.cpp prelink_image, DF_TEXTREL)
	if "$readelf" -d -W "$lib" | grep -q TEXTREL; then
		echo "bionic-check: FAIL: $lib has text relocations (bionic's linker refuses them; build with -fPIC)" >&2
		rc=1
	fi
	# an executable (has PT_INTERP): bionic's linker as interpreter, PIE (linker/linker_main.cpp:
	# "only support position-independent executables"), a TLS segment aligned to 8 words
	# (libc/bionic/bionic_elf_tls.cpp reserve_exe_segment_and_tcb: "TLS segment is underaligned")
	interp=$("$readelf" -l -W "$lib" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
	if [ -n "$interp" ]; then
		case "$interp" in
		/system/bin/linker | /system/bin/linker64) ;;
		*) echo "bionic-check: FAIL: $lib's interpreter is $interp (Android: /system/bin/linker64 or linker)" >&2; rc=1 ;;
		esac
		"$readelf" -h -W "$lib" | grep -q 'Type: *DYN' ||
			{ echo "bionic-check: FAIL: $lib is not a PIE (Android 5.0 and later run only PIE executables)" >&2; rc=1; }
		need=64 # 8 words of 8 bytes; 8 of 4 on 32-bit ARM
		[ "$interp" != /system/bin/linker ] || need=32
		align=$("$readelf" -l -W "$lib" | awk '$1 == "TLS" { print $NF }')
		[ -z "$align" ] || [ $((align)) -ge $need ] ||
			{ echo "bionic-check: FAIL: $lib's TLS segment is aligned to $align (bionic needs $need)" >&2; rc=1; }
	fi
	[ $rc = 1 ] || echo "bionic-check: $lib ok (API $api)"
done
exit $rc
