#!/usr/bin/env bash
# Fail if a board library needs a glibc symbol version newer than MAX (the board's glibc:
# the Arndale's Linux 3.4-era userland has 2.17), naming each symbol; its loader would refuse
# the library ("version `GLIBC_2.34' not found"). Run after each link (mk/cl_layer.mk).
#
#   glibc-check.sh READELF MAX LIB...
set -euo pipefail
readelf=$1 max=$2
shift 2
rc=0
for lib in "$@"; do
	# version needs (.gnu.version_r): every "Name: GLIBC_x.y" the library requires
	bad=$("$readelf" -V -W "$lib" | sed -n 's/.*Name: GLIBC_\([0-9.]*\) .*/\1/p' | sort -uV |
		while read -r v; do
			[ "$(printf '%s\n%s\n' "$v" "$max" | sort -V | tail -n1)" = "$max" ] || echo "$v"
		done)
	if [ -n "$bad" ]; then
		for v in $bad; do
			syms=$("$readelf" --dyn-syms -W "$lib" | awk -v v="@GLIBC_$v" '{ for (i = 1; i <= NF; i++) if (index($i, v)) { sub(/@.*/, "", $i); print $i } }' |
				sort -u | tr '\n' ' ')
			echo "glibc-check: FAIL: $lib needs GLIBC_$v (> $max, the board's glibc): $syms" >&2
		done
		echo "glibc-check: bind them older in scripts/glibc-symver.sh's header or avoid the call" >&2
		rc=1
	fi
done
exit $rc
