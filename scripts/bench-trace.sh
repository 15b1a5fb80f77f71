#!/usr/bin/env bash
# Tracing speed (issue #7): the ptrace tracer (agent trace's windows) and the
# QEMU TCG plugin (full traces), in instructions/s, and the plugin's slowdown
# against plain qemu-user. Prints a markdown section on stdout; ~1 minute.
# Usage: bench-trace.sh OUT   (OUT/bench/trace_ptrace, OUT/workloads/trace_loop,
#                              OUT/qemu-plugin/edag_tracer.so, OUT/xkernels/<arch>/* built)
set -euo pipefail
out=${1:?usage: bench-trace.sh OUT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
triad_insns() { # ARCH BIN: sets insns (the plugin's count for triad 65536 20), or prints a skipped row
	if ! command -v "qemu-$1" >/dev/null || [ ! -x "$2" ]; then
		echo "| $1 | skipped (qemu-$1 or the cross-compiled kernel missing) | | | | | | | |"
		return 1
	fi
	"qemu-$1" -plugin "$so,out=/dev/null,stats=$tmp/stats" "$2" 65536 20 >/dev/null
	insns=$(sed -n 's/.* insns=\([0-9]*\).*/\1/p' "$tmp/stats")
}
best_of() { # N CMD...: the shortest wall time of N runs, in seconds
	local n=$1 best=
	shift
	for _ in $(seq "$n"); do
		local t0 t1 d
		t0=$(now)
		"$@" >/dev/null 2>&1
		t1=$(now)
		d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		if [ -z "$best" ] || awk -v d="$d" -v b="$best" 'BEGIN { exit !(d < b) }'; then best=$d; fi
	done
	echo "$best"
}

echo "## Instruction tracing (agent trace, QEMU plugin)"
echo
echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load average"
echo "$(cut -d' ' -f1-3 /proc/loadavg) at start (shared machine: rates are noisy)."
echo
echo "### ptrace windows (on-device tracer, x86_64 host)"
echo
if [ -x "$out/bench/trace_ptrace" ] && [ -x "$out/workloads/trace_loop" ]; then
	echo "One window of N single-stepped instructions of \`trace_loop\` (registers read, decoded, addresses computed)."
	echo
	echo "| N | seconds stopped | instr/s | us per step |"
	echo "|---|---|---|---|"
	for n in 20000 100000; do
		line=$("$out/bench/trace_ptrace" "$out/workloads/trace_loop" "$n" 2>&1) || { echo "| $n | failed: $line | | |"; continue; }
		eval "$(echo "$line" | tr ' ' '\n' | grep '=' | sed 's/^/p_/')"
		printf '| %s | %s | %.0f | %s |\n' "$p_insns" "$p_seconds" "$p_insns_per_s" "$p_step_us"
	done
else
	echo "skipped: $out/bench/trace_ptrace or $out/workloads/trace_loop not built"
fi
echo
echo "### QEMU TCG plugin (full traces, qemu-user 7.2)"
echo
so=$out/qemu-plugin/edag_tracer.so
if [ ! -f "$so" ]; then
	echo "skipped: $so not built"
	exit 0
fi
echo "Kernel \`triad 65536 20\` (static); best of 3 runs. 'plugin → /dev/null' is the plugin's own cost"
echo "(decode at translation, a callback per instruction and per access, binary records);"
echo "'plugin → file' also writes the native binary trace to disk."
echo
echo "| arch | instructions | plain qemu (s) | plugin → /dev/null (s) | plugin → file (s) | trace MiB | plain instr/s | plugin instr/s (file) | slowdown (file) |"
echo "|---|---|---|---|---|---|---|---|---|"
for arch in aarch64 riscv64 arm; do
	bin=$out/xkernels/$arch/triad
	triad_insns "$arch" "$bin" || continue
	plain=$(best_of 3 "qemu-$arch" "$bin" 65536 20)
	null=$(best_of 3 "qemu-$arch" -plugin "$so,out=/dev/null" "$bin" 65536 20)
	file=$(best_of 3 "qemu-$arch" -plugin "$so,out=$tmp/t.bin" "$bin" 65536 20)
	mib=$(du -m "$tmp/t.bin" | cut -f1)
	rm -f "$tmp/t.bin"
	awk -v a="$arch" -v n="$insns" -v p="$plain" -v z="$null" -v f="$file" -v m="$mib" \
		'BEGIN { printf "| %s | %d | %.2f | %.2f | %.2f | %d | %.1f M | %.1f M | %.1fx |\n", a, n, p, z, f, m, n / p / 1e6, n / f / 1e6, f / p }'
done
echo
echo "### Streaming full traces to a collector (agent trace-import)"
echo
agent=$out/agent coll=$out/collector
if [ ! -x "$agent" ] || [ ! -x "$coll" ] || ! "$agent" trace-import --help >/dev/null 2>&1; then
	echo "skipped: $agent (with trace-import) or $coll not built"
	exit 0
fi
echo "\`tools/qemu-plugin/qemu-trace --collector 127.0.0.1:PORT -- qemu-ARCH triad 65536 20\`: the plugin's output piped"
echo "into \`agent trace-import\` (records of 16384 instructions, spool, acks) and stored by a collector on"
echo "127.0.0.1 (SQLite, WAL) on the same machine; one run each, from start to the last ack. 'streamed instr/s'"
echo "is the whole chain's rate (it includes qemu and the plugin)."
echo
echo "| arch | instructions | plugin → file (s) | streamed (s) | streamed instr/s | records | wire MiB | wire B/instr | input pauses |"
echo "|---|---|---|---|---|---|---|---|---|"
for arch in aarch64 riscv64; do
	bin=$out/xkernels/$arch/triad
	triad_insns "$arch" "$bin" || continue
	file=$(best_of 1 "qemu-$arch" -plugin "$so,out=$tmp/t.bin" "$bin" 65536 20)
	rm -f "$tmp/t.bin" "$tmp/port" "$tmp/s.db"*
	"$coll" --listen 127.0.0.1:0 --port-file "$tmp/port" --store "$tmp/s.db" 2>/dev/null &
	cpid=$!
	for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
	t0=$(now)
	tools/qemu-plugin/qemu-trace --collector "127.0.0.1:$(cat "$tmp/port")" --agent "$agent" --plugin "$so" \
		--spool "$tmp/spool" --flush-timeout 120 -- "qemu-$arch" "$bin" 65536 20 >"$tmp/stream.log" 2>&1 || {
		echo "| $arch | streaming failed: $(tail -1 "$tmp/stream.log") | | | | | | | |"
		kill "$cpid"; wait "$cpid" 2>/dev/null; continue
	}
	t1=$(now)
	kill "$cpid"
	wait "$cpid" 2>/dev/null
	records=$(sed -n 's/.* \([0-9]*\) acked.*/\1/p' "$tmp/stream.log")
	wire=$(sed -n 's/.*; \([0-9]*\) bytes on the wire.*/\1/p' "$tmp/stream.log")
	pauses=$(sed -n 's/.*input paused \([0-9]*\) time(s), \([0-9.]*\) s.*/\1 (\2 s)/p' "$tmp/stream.log")
	awk -v a="$arch" -v n="$insns" -v f="$file" -v t0="$t0" -v t1="$t1" -v r="$records" -v w="$wire" -v p="$pauses" \
		'BEGIN { s = t1 - t0; printf "| %s | %d | %.2f | %.2f | %.1f M | %d | %.1f | %.2f | %s |\n", a, n, f, s, n / s / 1e6, r, w / 1048576, w / n, p }'
done
