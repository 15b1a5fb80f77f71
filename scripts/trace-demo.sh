#!/usr/bin/env bash
# make trace-demo: trace the sample kernels (tools/qemu-plugin/kernels) under
# qemu-user with the eDAG plugin, for every architecture they were
# cross-compiled for, and print `collector edag --trace` for each; then stream
# one run to a collector (tools/qemu-plugin/qemu-trace -> agent trace-import)
# and show that `collector edag --session N` gives the same metrics.
# Usage: trace-demo.sh OUT   (OUT/qemu-plugin/edag_tracer.so, OUT/xkernels/<arch>/*, OUT/collector, OUT/agent built)
set -euo pipefail
out=${1:?usage: trace-demo.sh OUT}
so=$out/qemu-plugin/edag_tracer.so
coll=$out/collector
[ -f "$so" ] || { echo "trace-demo: $so not built (CONFIG_AGENT_TRACER=y and a native build are needed)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A args=([gemm]="32" [lu]="32" [chase]="4096 65536" [triad]="4096 8")
found=0
for arch in aarch64 riscv64 arm; do
	if ! command -v "qemu-$arch" >/dev/null; then
		echo "== $arch: skipped (qemu-$arch missing: apt-get install qemu-user)"
		continue
	fi
	for k in gemm lu chase triad; do
		bin=$out/xkernels/$arch/$k
		if [ ! -x "$bin" ]; then
			echo "== $arch $k: skipped (no cross compiler for $arch: make deps)"
			continue
		fi
		found=1
		echo "== $arch $k ${args[$k]}"
		# shellcheck disable=SC2086
		"qemu-$arch" -plugin "$so,out=$tmp/t.bin,stats=$tmp/stats" "$bin" ${args[$k]} | sed 's/^/   program: /'
		echo "   plugin: $(cat "$tmp/stats"), trace $(du -k "$tmp/t.bin" | cut -f1) KiB"
		echo "   \$ collector edag --trace $k.bin --format native -m 4 --cache 32K:4:64:4"
		"$coll" edag --trace "$tmp/t.bin" --format native -m 4 --cache 32K:4:64:4 | sed 's/^/   /'
	done
done
[ "$found" = 1 ] || { echo "trace-demo: no kernel could be traced" >&2; exit 1; }

# Streaming: the same plugin, its output piped into `agent trace-import`, one session in a collector.
arch=
for a in aarch64 riscv64 arm; do
	if command -v "qemu-$a" >/dev/null && [ -x "$out/xkernels/$a/chase" ]; then arch=$a; break; fi
done
if [ -z "$arch" ] || [ ! -x "$out/agent" ] || ! "$out/agent" trace-import --help >/dev/null 2>&1; then
	echo "== streaming: skipped (no traceable kernel, or an agent without trace-import)"
	exit 0
fi
opts=(-m 4 --cache 32K:4:64:4)
"$coll" --listen 127.0.0.1:0 --port-file "$tmp/port" --store "$tmp/stream.db" 2>"$tmp/collector.log" &
cpid=$!
trap 'kill $cpid 2>/dev/null; wait $cpid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(cat "$tmp/port")
echo "== streaming $arch chase 4096 65536 to a collector on 127.0.0.1:$port"
echo "   \$ tools/qemu-plugin/qemu-trace --collector 127.0.0.1:$port --save chase.bin -- qemu-$arch ./chase 4096 65536"
tools/qemu-plugin/qemu-trace --collector "127.0.0.1:$port" --agent "$out/agent" --plugin "$so" \
	--save "$tmp/s.bin" --spool "$tmp/spool" -- "qemu-$arch" "$out/xkernels/$arch/chase" 4096 65536 2>&1 |
	grep -v '^$' | sed 's/^/   /'
"$coll" sessions --store "$tmp/stream.db" | sed 's/^/   /'
sid=$("$coll" sessions --store "$tmp/stream.db" | awk 'NR > 1 { id = $1 } END { print id }')
echo "   \$ collector edag --store profile.db --session $sid ${opts[*]}"
"$coll" edag --store "$tmp/stream.db" --session "$sid" "${opts[@]}" | sed 's/^/   /'
metrics() { "$coll" edag "$@" "${opts[@]}" --json | sed 's/.*"windows":\[//; s/}\].*//; s/"represented_insns":[0-9]*,//'; }
if [ "$(metrics --trace "$tmp/s.bin" --format native)" = "$(metrics --store "$tmp/stream.db" --session "$sid")" ]; then
	echo "   the session's metrics equal collector edag --trace chase.bin's (the same trace, saved with --save)"
else
	echo "trace-demo: the streamed session's metrics differ from the file's" >&2
	exit 1
fi
