#!/usr/bin/env bash
# Run cross-built cmocka suites under qemu-user (no binfmt needed): each binary is
# started as `QEMU_USER BINARY`; its shared libraries (libcmocka, libprotobuf-c, ...)
# come from Debian's multiarch packages (make deps BOARD=<board>), the dynamic loader
# from libc6:<arch>. Usage: board-unit.sh QEMU_USER BINARY...
# Prints each suite's output and "board-unit: N passed, N failed, N skipped".
set -uo pipefail
qemu=$1
shift
command -v "$qemu" >/dev/null || { echo "board-unit: no $qemu (run: make deps BOARD=<board>)" >&2; exit 2; }
PROF_SRC_DIR=$(pwd)
export PROF_SRC_DIR
passed=0 failed=0 skipped=0 bad=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$@"; do
	PROF_BIN_DIR=$(cd "$(dirname "$t")/.." && pwd)
	export PROF_BIN_DIR
	start=$(date +%s.%N)
	timeout -k 5 300 "$qemu" "$t" >"$log" 2>&1
	rc=$?
	p=$(grep -c '^\[       OK \]' "$log")
	f=$(grep '^\[  FAILED  \] test_' "$log" | sort -u | wc -l)
	k=$(grep '^\[  SKIPPED \] test_' "$log" | sort -u | wc -l)
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && failed=$((failed + 1))
	[ "$rc" -ne 0 ] && bad+=("$(basename "$t")(rc=$rc)")
	if [ "$rc" -ne 0 ] || [ -n "${V:-}" ]; then cat "$log"; fi
	printf -- '-- %s under %s: %d passed, %d failed, %d skipped, rc=%d in %.1f s\n' "$(basename "$t")" \
		"$qemu" "$p" "$f" "$k" "$rc" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
done
[ ${#bad[@]} -gt 0 ] && echo "board-unit: failing suites: ${bad[*]}"
echo "board-unit: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ ${#bad[@]} -eq 0 ]
