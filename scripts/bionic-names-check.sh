#!/usr/bin/env bash
# Fail if a program built for glibc calls a function that bionic's public API lacks, so that the
# code shared with the Android build (the OpenCL helper, mk/cl_layer.mk) stays buildable for
# bionic without a bionic tree at hand: every board's build checks its helper against
# board/android-arm64/bionic-api.txt (bionic's public names for arm64 at API 29, from
# scripts/bionic-symbols.sh on android-14.0.0_r1's maps; `make BOARD=android-arm64
# BIONIC_SRC=DIR bionic-libs` says when its own list differs). Weak imports (crt files' hooks)
# are left out; glibc's names for what bionic spells otherwise are mapped first:
# __errno_location -> __errno, __isoc99_/__isoc23_ scanf family -> the plain name,
# __libc_start_main -> __libc_init (the bionic entry, helper/start_bionic.c), __assert_fail ->
# __assert2, glibc's fortified __NAME_chk -> NAME (bionic fortifies in its headers). The real check of the bionic build is scripts/bionic-check.sh.
#
#   bionic-names-check.sh READELF LIST FILE...
set -euo pipefail
readelf=$1 list=$2
shift 2
rc=0
for f in "$@"; do
	miss=$("$readelf" --dyn-syms -W "$f" | awk '$7 == "UND" && $8 != "" && $5 != "WEAK" { n = $8; sub(/@.*/, "", n); print n }' |
		sed -e 's/^__errno_location$/__errno/' -e 's/^__isoc\(99\|23\)_//' -e 's/^__libc_start_main$/__libc_init/' \
			-e 's/^__assert_fail$/__assert2/' -e 's/^__\(.*\)_chk$/\1/' | sort -u | comm -23 - <(sort -u "$list") | tr '\n' ' ')
	if [ -n "$miss" ]; then
		echo "bionic-names-check: FAIL: $f calls what bionic (Android, $(basename "$list")) lacks: $miss" >&2
		echo "bionic-names-check: this code is also built for Android: use what bionic has, or keep it out of the bionic build" >&2
		rc=1
	fi
done
exit $rc
