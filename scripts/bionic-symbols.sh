#!/usr/bin/env bash
# The public API of bionic for one architecture and API level, one name a line, from bionic's
# own symbol maps (libc/libc.map.txt, libdl/libdl.map.txt, libm/libm.map.txt of an Android
# source tree, e.g. `git clone -b android-14.0.0_r1 https://android.googlesource.com/platform/bionic`):
# the names of the public version blocks (LIBC, LIBC_N ... LIBC_U; not LIBC_PRIVATE, LIBC_PLATFORM,
# LIBC_DEPRECATED), without those another architecture only has (`# arm x86`), those introduced
# after API (`introduced=`, `introduced-<arch>=`, codenames N..VanillaIceCream; a block's own
# level from its name or tag) and those for the platform only (apex, llndk, systemapi).
#
#   bionic-symbols.sh ARCH API MAP...      ARCH: arm, arm64, x86, x86_64, riscv64
# BIONIC_KIND=1: "name var" or "name func" (for stub libraries, scripts/bionic-stubs.sh)
set -euo pipefail
arch=$1 api=$2
shift 2
awk -v arch="$arch" -v api="$api" '
function level(v) {
	if (v ~ /^[0-9]+$/) return v + 0
	if (v == "N") return 24; if (v == "O") return 26; if (v == "OMR1") return 27; if (v == "P") return 28
	if (v == "Q") return 29; if (v == "R") return 30; if (v == "S") return 31; if (v == "Sv2") return 32
	if (v == "T" || v == "Tiramisu") return 33; if (v == "U" || v == "UpsideDownCake") return 34
	if (v == "V" || v == "VanillaIceCream") return 35
	return 10000 # unknown codename: newer than any number given
}
# the minimum level and whether this arch has it, from a "# tags" comment; -1 = not for us
function tags(c, base,   n, t, i, lv, archs, mine, kv) {
	lv = base; archs = 0; mine = 0
	n = split(c, t, /[ \t]+/)
	for (i = 1; i <= n; i++) {
		if (t[i] ~ /^(arm|arm64|x86|x86_64|riscv64|mips|mips64)$/) { archs = 1; if (t[i] == arch) mine = 1 }
		else if (t[i] ~ /^(apex|llndk|systemapi|platform-only)$/) return -1
		else if (t[i] ~ /^introduced=/) { split(t[i], kv, "="); if (level(kv[2]) > lv) lv = level(kv[2]) }
		else if (t[i] ~ /^introduced-/) { split(t[i], kv, "="); if (kv[1] == "introduced-" arch) lv = level(kv[2]) }
	}
	if (archs && !mine) return -1
	return lv
}
/^[A-Z_0-9]+ *\{/ {
	blk = $1; skip = (blk ~ /_(PRIVATE|PLATFORM|DEPRECATED)$/)
	base = 0
	if (blk ~ /^LIB[A-Z]*_/) { v = blk; sub(/^LIB[A-Z]*_/, "", v); base = level(v) }
	c = ""; if (index($0, "#")) c = substr($0, index($0, "#") + 1)
	if (c != "") { b = tags(c, base); if (b < 0) skip = 1; else base = b }
	next
}
/^ *(global|local):/ { next }
/^ *[A-Za-z_][A-Za-z0-9_]*;/ {
	if (skip) next
	name = $1; sub(/;.*/, "", name)
	c = ""; if (index($0, "#")) c = substr($0, index($0, "#") + 1)
	lv = tags(c, base)
	if (lv >= 0 && lv <= api) print name (kind ? (c ~ /(^|[ \t])var([ \t]|$)/ ? " var" : " func") : "")
}' kind="${BIONIC_KIND:-}" "$@" | sort -u
