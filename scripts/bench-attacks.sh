#!/bin/sh
# Issue #25's attacks at full size (bench/attacks.c) against this build's collector and,
# when BENCH_BEFORE names another build directory (e.g. the base commit's build/host),
# against that one in the same run: a markdown section for bench/RESULTS.md.
# Usage: [BENCH_BEFORE=DIR [BENCH_BEFORE_NAME=TEXT]] bench-attacks.sh OUT
set -eu
out=$1
b="$out/bench/attacks"
[ -x "$b" ] || { echo "bench-attacks: $b missing (make $b)" >&2; exit 1; }
after=$(cd "$out" && pwd)
before=${BENCH_BEFORE:-}
builds="$after"
[ -n "$before" ] && builds="$before $after"
val() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | tr -d '"'; }
name() { if [ "$1" = "$before" ]; then echo "before (${BENCH_BEFORE_NAME:-$before})"; else echo "after ($out)"; fi; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) print "-"; else if (a / b >= 100) printf "%.0f", a / b; else printf "%.3g", a / b }'; }

echo "## Attacks on the collector (issue #25): page render vs ack latency, squatting, flood admission, partial frames"
echo
echo "$(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) at start; release builds, loopback only,"
echo "each scenario a fresh collector and store (SQLite, sync full unless said). Commands: \`$b SCENARIO BUILD ARGS\`"
echo "(bench/attacks.c, tests/lib/attack.c), for each build in turn."
[ -n "$before" ] || echo "(Before: not run here; BENCH_BEFORE=DIR names a build of the base commit to compare with.)"

echo
echo "### 1. Pages of a large session vs a new agent's Hello ack (\`http BUILD 1800 6 20\`)"
echo
echo "A session of 1,800 trace windows x 9,999 instructions (18 M) written into the store as uploaded; one page"
echo "alone; then 6 clients request /session/N (HTML) in a loop for 20 s while the session's agent adds a record every"
echo "200 ms (so its analysis is redone) and a new agent connects and sends a Hello every 200 ms (Hello -> Ack time,"
echo "60 s at most; the probe is sequential, so a Hello that waits long leaves fewer probes)."
echo
echo "| build | page alone (ms) | pages answered in 20 s | page p50 (ms) | Hello acks | ack p50 (ms) | ack p95 (ms) | ack max (ms) | ack p50, no page load (ms) |"
echo "|---|---|---|---|---|---|---|---|---|"
for d in $builds; do
	l=$("$b" http "$d" 1800 6 20)
	acks="$(val "$l" ack_p50_ms) | $(val "$l" ack_p95_ms) | $(val "$l" ack_max_ms)"
	[ "$(val "$l" acked)" = 0 ] && acks="none within 60 s | - | -"
	echo "| $(name "$d") | $(val "$l" page_alone_ms) | $(val "$l" pages_ok) | $(val "$l" page_p50_ms) | $(val "$l" acked) of $(val "$l" hellos) | $acks | $(val "$l" ack_idle_p50_ms) |"
	if [ "$d" = "$before" ]; then bp=$(val "$l" ack_p50_ms); ba=$(val "$l" acked); else ap=$(val "$l" ack_p50_ms); fi
done
if [ -n "$before" ]; then
	echo
	if [ "$ba" = 0 ]; then
		echo "Hello ack under page load: before, none within 60 s (the probe waits for the pages built on the loop); after, p50 $ap ms."
	else
		echo "Hello ack p50 under page load, before / after: $(ratio "$bp" "$ap")x."
	fi
fi

echo
echo "### 2. Post-Hello squatting (\`squat BUILD 1024\`)"
echo
echo "1,024 Hellos with distinct agent ids and no record from 127.0.0.1 (--max-conns 1024), kept open; then a real"
echo "agent (another id, same address) tries 5 times in 5 s to send 21 records; session rows once all have closed."
echo
echo "| build | Hellos acked | real agent: records acked | attempts | time (ms) | session rows | rows without records |"
echo "|---|---|---|---|---|---|---|"
for d in $builds; do
	l=$("$b" squat "$d" 1024)
	echo "| $(name "$d") | $(val "$l" hellos_acked) | $(val "$l" real_acked) | $(val "$l" real_attempts) | $(val "$l" real_ms) | $(val "$l" session_rows) | $(val "$l" empty_rows) |"
done

echo
echo "### 3. Sustained pre-Hello flood (\`flood BUILD 10\`)"
echo
echo "3 threads open silent connections from 127.0.0.2, .3, .4 as fast as they can for 10 s (each closed after 2 s"
echo "if the collector has not closed it); from 0.5 s on, a new agent from 127.0.0.1 sends a Hello every 100 ms."
echo
echo "| build | flood connections | per second | new agents | admitted | refused | ack p50 (ms) | ack max (ms) |"
echo "|---|---|---|---|---|---|---|---|"
for d in $builds; do
	l=$("$b" flood "$d" 10)
	echo "| $(name "$d") | $(val "$l" flood_conns) | $(val "$l" conns_per_s) | $(val "$l" probes) | $(val "$l" admitted) | $(val "$l" refused_pct) % | $(val "$l" ack_p50_ms) | $(val "$l" ack_max_ms) |"
done

echo
echo "### 4. 1,024 partial frames (\`memory BUILD 1024 1024\`)"
echo
echo "1,024 connections from 127.0.0.2-5 (--max-conns 1088, --sync normal, --idle-timeout 0) each send a Hello, one record and all but"
echo "1 KiB of a 1 MiB frame; the collector's peak resident memory (VmHWM) 3 s later; then an agent beside them."
echo
echo "| build | connections holding | MiB sent | RSS before (MiB) | RSS peak (MiB) | agent beside |"
echo "|---|---|---|---|---|---|"
for d in $builds; do
	l=$("$b" memory "$d" 1024 1024)
	echo "| $(name "$d") | $(val "$l" holding) | $(val "$l" sent_mib) | $(val "$l" rss_before_mib) | $(val "$l" rss_peak_mib) | $(val "$l" agent_beside_acked) |"
	if [ "$d" = "$before" ]; then br=$(val "$l" rss_peak_mib); else ar=$(val "$l" rss_peak_mib); fi
done
if [ -n "$before" ]; then
	echo
	echo "Peak RSS before / after: $(ratio "$br" "$ar")x (after: --max-frame-memory 64 MiB, the default)."
fi
