#!/usr/bin/env bash
# Build the libFuzzer targets with clang and run each for a bounded time:
#   fuzz_frame  the frame + envelope decoder (corpus tests/fuzz/corpus)
#   fuzz_trace  the trace readers of `collector edag --trace`: EDAN lines (one-pass tokeniser
#               == general parser), native text and binary, TraceWindow records, sniffing and
#               escaping (corpus tests/fuzz/corpus-trace)
# Usage: fuzz.sh OUTDIR SECONDS   (SECONDS split between the two targets, at least 10 s each)
# Corpora are kept in the repo; new interesting inputs are added.
set -euo pipefail
out=$1
secs=$2
each=$((secs / 2 > 10 ? secs / 2 : 10))
make --no-print-directory O="$out" "$out/gen/profiler.pb-c.c" "$out/include/generated/config.h" >/dev/null
gen=$(ls "$out"/gen/*.pb-c.c)
inc="-I$out/include -I$out/gen -Iproto -Icommon -Icollector"
src="$(ls proto/*.c) $gen"
trace_src="collector/edag/edag.c collector/edag/edag_mem.c collector/edag/edag_native.c collector/edag/edag_edan.c
	collector/edag/edag_window.c collector/trace_in.c common/isa_regs.c"
flags="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer"
clang $flags -fsanitize=fuzzer,address,undefined $inc tests/fuzz/fuzz_frame.c $src -lprotobuf-c -o "$out/fuzz_frame"
clang $flags -fsanitize=fuzzer,address,undefined $inc tests/fuzz/fuzz_trace.c $trace_src $gen \
	-lprotobuf-c -lz -lzstd -lm -lpthread -o "$out/fuzz_trace"
clang $flags $inc tests/fuzz/mkseeds.c $src -lprotobuf-c -o "$out/mkseeds"
mkdir -p tests/fuzz/corpus tests/fuzz/corpus-trace
"$out/mkseeds" tests/fuzz/corpus
for t in frame trace; do
	corpus=tests/fuzz/corpus
	[ $t = trace ] && corpus=tests/fuzz/corpus-trace
	echo "fuzz: running $out/fuzz_$t for ${each}s (corpus $corpus)"
	"$out/fuzz_$t" -max_total_time="$each" -max_len=8192 -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix=tests/fuzz/ "$corpus" 2>&1 | tail -n 15
	echo "fuzz: fuzz_$t: no crash in ${each}s"
done
