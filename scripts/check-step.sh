#!/usr/bin/env bash
# `make check`'s steps: each runs whatever the others did, and the end names every result
# (issue 23: a failed deps audit once hid that no test had run) and where the time went
# (issue 43: each step's start and end on make check's clock, its wall time and the CPU time
# (user + sys) of everything it ran, so that a slow run says which step grew).
#   check-step.sh RESULTS NAME CMD ARGS...   run CMD (output as usual), append "NAME<TAB>rc<TAB>
#                                            start<TAB>end<TAB>cpu<TAB>last summary line" to
#                                            RESULTS (start, end: epoch seconds; cpu: user+sys
#                                            seconds of CMD and what it waited for); exits 0
#   check-step.sh RESULTS --stop NAME CMD... the same, but exits with CMD's status (the builds:
#                                            nothing to test without them)
#   check-step.sh RESULTS --summary          print every step's result and time; exit 1 if any
#                                            failed
# A step's CPU time is what the kernel accounts to its process tree once reaped (getrusage's
# RUSAGE_CHILDREN, bash's `times`): a daemon a step leaves running is not in it. Steps that
# ran side by side overlap on the clock: their walls add up to more than make check's.
set -uo pipefail
results=$1
shift

# seconds as a decimal, from bash's `times` (e.g. 1m2.345s)
secs() { awk -v t="$1" 'BEGIN { split(t, a, "m"); sub("s", "", a[2]); printf "%.1f", a[1] * 60 + a[2] }'; }

if [ "${1:-}" = --summary ]; then
	[ -s "$results" ] || { echo "make check: no step ran" >&2; exit 1; }
	echo "== make check: results =="
	failed=()
	t0=
	while IFS=$'\t' read -r name rc start end cpu line; do
		[ -z "$t0" ] || [ "$start" -lt "$t0" ] && t0=$start
	done <"$results"
	while IFS=$'\t' read -r name rc start end cpu line; do
		if [ "$rc" -eq 0 ]; then st=ok; else st="FAIL (rc $rc)"; failed+=("$name"); fi
		printf '  %-24s %s%s\n' "$name" "$st" "${line:+: $line}"
	done <"$results"
	echo "== make check: time (start and end after make check's first step, wall; CPU = user + sys) =="
	last=$t0 cpu_sum=0
	while IFS=$'\t' read -r name rc start end cpu line; do
		printf '  %-24s %6d s -> %6d s  wall %5d s  CPU %7.1f s  (%s - %s UTC)\n' "$name" $((start - t0)) \
			$((end - t0)) $((end - start)) "$cpu" "$(date -u -d "@$start" +%T)" "$(date -u -d "@$end" +%T)"
		[ "$end" -gt "$last" ] && last=$end
		cpu_sum=$(awk -v a="$cpu_sum" -v b="$cpu" 'BEGIN { printf "%.1f", a + b }')
	done <"$results"
	printf '  %-24s %6d s -> %6d s  wall %5d s  CPU %7.1f s\n' "all steps" 0 $((last - t0)) $((last - t0)) "$cpu_sum"
	if [ ${#failed[@]} -gt 0 ]; then
		echo "make check: FAIL: $(printf '%s, ' "${failed[@]}" | sed 's/, $//')"
		exit 1
	fi
	echo "make check: all steps passed"
	exit 0
fi
stop=
if [ "${1:-}" = --stop ]; then
	stop=1
	shift
fi
name=$1
shift
log=$(mktemp)
start=$(date +%s)
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
end=$(date +%s)
# the second line of `times`: user and sys time of this shell's reaped children (CMD, tee);
# into a file, not a pipe (a subshell's `times` would not see this shell's children)
times >"$log.times"
read -r cu cs < <(sed -n 2p "$log.times")
cpu=$(awk -v u="$(secs "$cu")" -v s="$(secs "$cs")" 'BEGIN { printf "%.1f", u + s }')
# the step's own summary line: the test runner's "tests: ...", the audit's verdicts, ...
line=$(grep -E '^(tests: |deps-audit: (ok|self-test|[0-9]+ package)|check-config: |board-check: rc)' "$log" |
	tail -n 1 | tr '\t' ' ' | cut -c1-160)
rm -f "$log" "$log.times"
printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$start" "$end" "$cpu" "$line" >>"$results"
[ -n "$stop" ] && exit "$rc"
exit 0
