#!/usr/bin/env bash
# make trace-demo: trace the sample kernels (tools/qemu-plugin/kernels) under
# qemu-user with the eDAG plugin, for every architecture they were
# cross-compiled for, and print `collector edag --trace` for each.
# Usage: trace-demo.sh OUT   (OUT/qemu-plugin/edag_tracer.so, OUT/xkernels/<arch>/*, OUT/collector built)
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
