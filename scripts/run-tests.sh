#!/usr/bin/env bash
# Run test binaries built into OUT. Usage: run-tests.sh unit|integration|all OUT
# Each binary is a cmocka suite; this prints every suite's output and a summary
# line "tests: N passed, N failed, N skipped" (counted from cmocka's own lines).
set -uo pipefail
kind=$1
out=$2
export PROF_BIN_DIR=$(cd "$out" && pwd)
export PROF_SRC_DIR=$(pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

suites=()
case "$kind" in
unit) dirs=(tests/unit) ;;
integration) dirs=(tests/integration) ;;
all) dirs=(tests/unit tests/integration) ;;
*) echo "usage: $0 unit|integration|all OUT" >&2; exit 2 ;;
esac
for d in "${dirs[@]}"; do
	for src in "$d"/test_*.c; do
		[ -e "$src" ] || continue
		suites+=("$out/tests/$(basename "${src%.c}")")
	done
done

passed=0 failed=0 skipped=0 bad_suites=()
log=$(mktemp)
for s in "${suites[@]}"; do
	echo "== $(basename "$s")"
	start=$(date +%s)
	# Into a file, not a pipe: a process a failed test left behind (holding its stderr) cannot
	# keep this script waiting; a suite that hangs is stopped after SUITE_TIMEOUT seconds.
	timeout -k 10 "${SUITE_TIMEOUT:-900}" "$s" >"$log" 2>&1
	rc=$?
	cat "$log"
	[ "$rc" -eq 124 ] && echo "-- $(basename "$s"): stopped after ${SUITE_TIMEOUT:-900} s"
	p=$(grep -c '^\[       OK \]' "$log")
	# cmocka repeats failed/skipped names in its closing list: count each name once
	f=$(grep '^\[  FAILED  \] test_' "$log" | sort -u | wc -l)
	k=$(grep '^\[  SKIPPED \] test_' "$log" | sort -u | wc -l)
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		failed=$((failed + 1))  # crashed or sanitizer abort: count the suite as a failure
	fi
	[ "$rc" -ne 0 ] && bad_suites+=("$(basename "$s")(rc=$rc)")
	echo "-- $(basename "$s"): rc=$rc in $(( $(date +%s) - start )) s"
done
rm -f "$log"
[ ${#bad_suites[@]} -gt 0 ] && echo "failing suites: ${bad_suites[*]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ ${#bad_suites[@]} -eq 0 ]
