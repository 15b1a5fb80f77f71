#!/usr/bin/env bash
# The issue-36 pointer chase over 256 MiB against its full trace, alone (make check runs it inside
# test_trace_accuracy, ~30 s):
# tools/qemu-plugin/kernels/chase_lines.c (4194304 lines of 64 bytes in one cycle) natively under
# `agent trace` with its defaults (replay windows of 500000 + 200000 from snapshots, --every 1,
# --max-duty 2), and under qemu-x86_64 with the eDAG tracer (two repetitions of 300000 steps
# right after the set-up); W/instr, lambda/instr and Lambda*alpha0 without and with the
# 32K+1M cache model, asserted as test_trace_accuracy asserts its other programs.
# Usage: bench-trace-chase256.sh OUT   (OUT/tests/test_trace_accuracy, OUT/agent, OUT/collector,
#                                       OUT/qemu-plugin/edag_tracer.so, OUT/xkernels/x86_64/chase_lines)
set -euo pipefail
out=${1:?usage: bench-trace-chase256.sh OUT}
PROF_BIN_DIR=$(cd "$out" && pwd) PROF_SRC_DIR=$(pwd) PROF_ACCURACY_CHASE_256=only "$out/tests/test_trace_accuracy"
