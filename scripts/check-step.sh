#!/usr/bin/env bash
# `make check`'s steps after the builds: each runs whatever the others did, and the end
# names every result (issue 23: a failed deps audit once hid that no test had run).
#   check-step.sh RESULTS NAME CMD ARGS...   run CMD (output as usual), append "NAME<TAB>rc<TAB>
#                                            last summary line" to RESULTS; exits 0
#   check-step.sh RESULTS --summary          print every step's result; exit 1 if any failed
set -uo pipefail
results=$1
shift
if [ "${1:-}" = --summary ]; then
	[ -s "$results" ] || { echo "make check: no step ran" >&2; exit 1; }
	echo "== make check: results =="
	failed=()
	while IFS=$'\t' read -r name rc line; do
		if [ "$rc" -eq 0 ]; then st=ok; else st="FAIL (rc $rc)"; failed+=("$name"); fi
		printf '  %-24s %s%s\n' "$name" "$st" "${line:+: $line}"
	done <"$results"
	if [ ${#failed[@]} -gt 0 ]; then
		echo "make check: FAIL: $(printf '%s, ' "${failed[@]}" | sed 's/, $//')"
		exit 1
	fi
	echo "make check: all steps passed"
	exit 0
fi
name=$1
shift
log=$(mktemp)
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# the step's own summary line: the test runner's "tests: ...", the audit's verdicts, ...
line=$(grep -E '^(tests: |deps-audit: (ok|self-test|[0-9]+ package)|check-config: |board-check: rc)' "$log" |
	tail -n 1 | tr '\t' ' ' | cut -c1-160)
rm -f "$log"
printf '%s\t%s\t%s\n' "$name" "$rc" "$line" >>"$results"
exit 0
