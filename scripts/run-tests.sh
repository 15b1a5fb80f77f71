#!/usr/bin/env bash
# Run test binaries built into OUT. Usage: run-tests.sh unit|integration|all OUT
# Each binary is a cmocka suite; this prints every suite's output and a summary
# line "tests: N passed, N failed, N skipped" (counted from cmocka's own lines).
#
# Side lane (issue 43): the suites in SIDE_LANE spend their time waiting on timers they test
# (idle timeouts, heartbeats, a PostgreSQL outage of 4 s and one of 10 s, disk-full retries),
# not on the CPU: measured under ASan on the 2-CPU VM, wall / user+sys CPU: test_tls 33.7 / 3.2 s,
# test_pg_outages 44.0 / 3.5 s, test_faults 24.6 / 9.7 s, test_spool_orphans 10.2 / 2.1 s. They run
# one after another in a second lane beside the integration suites (each with its own servers,
# ports and directories), and their output is printed after the main lane's. SIDE_LANE= runs
# everything in one lane. Also there (issue 43, session w43f): three suites that wait on their
# agents and services more than they compute (CI-j/k under ASan, wall / CPU): test_auth 7 / 1.5 s,
# test_board_deploy 9-13 / 2.0-2.9 s (its own root directory, a token collector), test_forged_ack
# 3 / 0.6 s (its own proxy); the lane (~135 s) still ends well before the main one (~450 s).
set -uo pipefail
kind=$1
out=$2
export PROF_BIN_DIR=$(cd "$out" && pwd)
export PROF_SRC_DIR=$(pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
side_lane=" ${SIDE_LANE-test_tls test_pg_outages test_faults test_spool_orphans test_auth test_board_deploy test_forged_ack} "

suites=() side=() first_integration=
case "$kind" in
unit) dirs=(tests/unit) ;;
integration) dirs=(tests/integration) ;;
all) dirs=(tests/unit tests/integration) ;;
*) echo "usage: $0 unit|integration|all OUT" >&2; exit 2 ;;
esac
for d in "${dirs[@]}"; do
	for src in "$d"/test_*.c; do
		[ -e "$src" ] || continue
		name=$(basename "${src%.c}")
		if [ "$d" = tests/integration ] && [[ $side_lane == *" $name "* ]]; then
			side+=("$out/tests/$name")
			continue
		fi
		[ "$d" = tests/integration ] && [ -z "$first_integration" ] && first_integration=$name
		suites+=("$out/tests/$name")
	done
done

# user+sys seconds of this shell's reaped children so far (bash's `times`, second line; into a
# file, and not in $(...): a subshell's `times` would not see this shell's children), into $cpu
children_cpu() {
	local f=$tmp/times.$BASHPID
	times >"$f"
	cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); n += a[1] * 60 + a[2] }
		printf "%.1f", n }' "$f")
}

# run_one SUITE FILE: the suite's block ("== name", its output, "-- name: rc=R in N s, CPU C s")
# into FILE (CPU: user+sys of the suite and every process it reaped, issue 43; measured in a
# subshell of its own, whose only children are the suite's: the main lane's shell also reaps the
# side lane when that ends)
run_one() {
	local s=$1 file=$2 start
	start=$(date +%s)
	(
		echo "== $(basename "$s")"
		# Into a file, not a pipe: a process a failed test left behind (holding its stderr) cannot
		# keep this script waiting; a suite that hangs is stopped after SUITE_TIMEOUT seconds.
		timeout -k 10 "${SUITE_TIMEOUT:-900}" "$s" 2>&1
		rc=$?
		[ "$rc" -eq 124 ] && echo "-- $(basename "$s"): stopped after ${SUITE_TIMEOUT:-900} s"
		children_cpu
		echo "-- $(basename "$s"): rc=$rc in $(($(date +%s) - start)) s, CPU $cpu s"
	) >"$file" 2>&1
}

passed=0 failed=0 skipped=0 bad_suites=()
# account FILE: print a suite's block and count its results
account() {
	local file=$1 name rc p f k
	cat "$file"
	name=$(sed -n '1s/^== //p' "$file")
	rc=$(sed -n "s/^-- $name: rc=\([0-9]*\) in .*/\1/p" "$file" | tail -1)
	rc=${rc:-1}
	p=$(grep -c '^\[       OK \]' "$file")
	# cmocka repeats failed/skipped names in its closing list: count each name once
	f=$(grep '^\[  FAILED  \] test_' "$file" | sort -u | wc -l)
	k=$(grep '^\[  SKIPPED \] test_' "$file" | sort -u | wc -l)
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		failed=$((failed + 1)) # crashed or sanitizer abort: count the suite as a failure
	fi
	[ "$rc" -ne 0 ] && bad_suites+=("$name(rc=$rc)")
}

tmp=$(mktemp -d)
side_pid=
start_side() {
	[ ${#side[@]} -gt 0 ] && [ -z "$side_pid" ] || return 0
	echo "-- side lane: ${side[*]##*/} (printed after the other suites)"
	(
		i=0
		for s in "${side[@]}"; do
			run_one "$s" "$tmp/side.$i"
			i=$((i + 1))
		done
	) &
	side_pid=$!
}
[ -z "$first_integration" ] && start_side
for s in "${suites[@]}"; do
	[ "$(basename "$s")" = "$first_integration" ] && start_side
	run_one "$s" "$tmp/main"
	account "$tmp/main"
done
start_side
if [ -n "$side_pid" ]; then
	wait "$side_pid"
	for i in $(seq 0 $((${#side[@]} - 1))); do
		if [ -f "$tmp/side.$i" ]; then
			account "$tmp/side.$i"
		else
			echo "== ${side[$i]##*/}: no result"
			failed=$((failed + 1)) bad_suites+=("${side[$i]##*/}(no result)")
		fi
	done
fi
rm -rf "$tmp"
[ ${#bad_suites[@]} -gt 0 ] && echo "failing suites: ${bad_suites[*]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ ${#bad_suites[@]} -eq 0 ]
