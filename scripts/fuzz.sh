#!/usr/bin/env bash
# Build the libFuzzer target for the frame + envelope decoder with clang and
# run it for a bounded time. Usage: fuzz.sh OUTDIR SECONDS
# Corpus: tests/fuzz/corpus (kept in the repo; new interesting inputs are added).
set -euo pipefail
out=$1
secs=$2
make --no-print-directory O="$out" "$out/gen/profiler.pb-c.c" "$out/include/generated/config.h" >/dev/null
gen=$(ls "$out"/gen/*.pb-c.c)
inc="-I$out/include -I$out/gen -Iproto -Icommon"
src="$(ls proto/*.c) $gen"
flags="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer"
clang $flags -fsanitize=fuzzer,address,undefined $inc tests/fuzz/fuzz_frame.c $src -lprotobuf-c -o "$out/fuzz_frame"
clang $flags $inc tests/fuzz/mkseeds.c $src -lprotobuf-c -o "$out/mkseeds"
mkdir -p tests/fuzz/corpus
"$out/mkseeds" tests/fuzz/corpus
echo "fuzz: running $out/fuzz_frame for ${secs}s (corpus tests/fuzz/corpus)"
"$out/fuzz_frame" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=1024 \
	-artifact_prefix=tests/fuzz/ tests/fuzz/corpus 2>&1 | tail -n 15
echo "fuzz: no crash in ${secs}s"
