#!/usr/bin/env bash
# Build the libFuzzer targets with clang and run each for a bounded time.
# Usage: fuzz.sh OUTDIR SECONDS (per target)
#   fuzz_frame    frame + envelope decoder          corpus tests/fuzz/corpus
#   fuzz_records  every record kind's validator     corpus tests/fuzz/corpus-records
#   fuzz_http     the HTTP request-head parser      corpus tests/fuzz/corpus-http
#   fuzz_trace    the trace readers of `collector edag --trace`: EDAN lines (one-pass tokeniser
#                 == general parser), native text and binary, TraceWindow records, sniffing and
#                 escaping                          corpus tests/fuzz/corpus-trace
# Corpora are kept in the repo; new interesting inputs are added. FUZZ_TARGETS
# (space separated) runs a subset.
set -euo pipefail
out=$1
secs=$2
targets=${FUZZ_TARGETS:-fuzz_frame fuzz_records fuzz_http fuzz_trace}
make --no-print-directory O="$out" "$out/gen/profiler.pb-c.c" "$out/include/generated/config.h" >/dev/null
gen=$(ls "$out"/gen/*.pb-c.c)
inc="-I$out/include -I$out/gen -Iproto -Icommon -Icollector"
src="$(ls proto/*.c) $gen"
trace_src="collector/edag/edag.c collector/edag/edag_mem.c common/trace/native.c collector/edag/edag_edan.c
	collector/edag/edag_approx.c collector/trace_in.c common/isa_regs.c common/trace/insn.c
	common/trace/window_codec.c"
flags="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer"
fz="-fsanitize=fuzzer,address,undefined"
clang $flags $fz $inc tests/fuzz/fuzz_frame.c $src -lprotobuf-c -o "$out/fuzz_frame"
clang $flags $fz $inc tests/fuzz/fuzz_records.c $src -lprotobuf-c -o "$out/fuzz_records"
clang $flags $fz $inc tests/fuzz/fuzz_http.c collector/server/http_parse.c -o "$out/fuzz_http"
clang $flags $fz $inc tests/fuzz/fuzz_trace.c $trace_src $gen -lprotobuf-c -lz -lzstd -lm -lpthread -o "$out/fuzz_trace"
clang $flags $inc tests/fuzz/mkseeds.c $src -lprotobuf-c -o "$out/mkseeds"
mkdir -p tests/fuzz/corpus tests/fuzz/corpus-records tests/fuzz/corpus-http tests/fuzz/corpus-trace
"$out/mkseeds" tests/fuzz/corpus tests/fuzz/corpus-records tests/fuzz/corpus-http
for t in $targets; do
	case $t in
	fuzz_frame) corpus=tests/fuzz/corpus max=8192 ;;
	fuzz_records) corpus=tests/fuzz/corpus-records max=8192 ;;
	fuzz_http) corpus=tests/fuzz/corpus-http max=9000 ;;
	fuzz_trace) corpus=tests/fuzz/corpus-trace max=8192 ;;
	*) echo "fuzz: unknown target $t" >&2; exit 2 ;;
	esac
	echo "fuzz: running $out/$t for ${secs}s (corpus $corpus)"
	"$out/$t" -max_total_time="$secs" -max_len=$max -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix=tests/fuzz/ "$corpus" 2>&1 | grep -E "^#[0-9]+.*(DONE|pulse)|^Done|ERROR|SUMMARY" | tail -n 3
	echo "fuzz: $t: no crash in ${secs}s"
done
