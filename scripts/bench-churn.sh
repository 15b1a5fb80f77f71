#!/bin/bash
# Issue 39 at its own scale: test_record_churn (tests/integration/test_record_churn.c) with
# N short-lived processes (default 5,000) started over at least SECS seconds of churn (default
# 59, so that the system-wide recording, with the late program and the last interval, lasts
# >= 60 s), both back ends, perf record -a over the same window as the oracle. make check runs
# the same test with 1,500 processes. Prints the test's figures ('#' lines): processes and
# seconds, recording length, the late program's share in named functions, names agreeing with
# perf, the agent's RSS every 10 s and its peak (VmHWM). B: build dir (default build/host, the
# release build; built here if missing). Full output in OUT (default /tmp/bench-churn.log).
set -u
B=${B:-build/host}
OUT=${OUT:-/tmp/bench-churn.log}
cd "$(dirname "$0")/.." || exit 1
SAN=
[ "${B%-san}" != "$B" ] && SAN=1
nice make -j2 ${SAN:+SAN=1} O="$B" "$B/agent" "$B/collector" "$B/tests/test_record_churn" "$B/workloads/churn" \
	"$B/workloads/busy" >/dev/null || exit 1
echo "bench-churn: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), pid_max $(cat /proc/sys/kernel/pid_max)"
PROF_BIN_DIR=$PWD/$B PROF_SRC_DIR=$PWD PROF_CHURN_N=${N:-5000} PROF_CHURN_SECS=${SECS:-59} \
	"$B/tests/test_record_churn" > "$OUT" 2>&1
rc=$?
grep -E '^# |^\[ +(OK|FAILED|SKIPPED) +\]' "$OUT" | grep -v '^# tid '
echo "bench-churn: $(grep -c '^# tid ' "$OUT") threads named otherwise than perf (listed in $OUT); load $(cut -d' ' -f1-3 /proc/loadavg); exit $rc"
exit $rc
