#!/usr/bin/env bash
# Build with configs/host-minimal_defconfig and check that the disabled
# features are really out: not linked, and reported as such by the agent.
set -euo pipefail
out=build/host-minimal
make --no-print-directory O=$out DEFCONFIG=configs/host-minimal_defconfig WERROR=1 all >/dev/null
fail=0
if ldd $out/agent | grep -Eq 'libbpf|libOpenCL'; then
	echo "check-config: FAIL: minimal agent links libbpf or libOpenCL"; fail=1
fi
if grep -q 'libOpenCL.so' $out/agent; then
	echo "check-config: FAIL: minimal agent still contains the OpenCL loader (dlopen of libOpenCL.so)"; fail=1
fi
feat=$($out/agent --features 2>&1 || true)
for f in bpf opencl tracer; do
	if ! echo "$feat" | grep -i "$f" | grep -qi "not compiled in"; then
		echo "check-config: FAIL: 'agent --features' does not say $f is not compiled in"; fail=1
	fi
done
if [ $fail -eq 0 ]; then
	echo "check-config: minimal build ok: bpf, opencl, tracer reported as not compiled in; no libbpf/libOpenCL linked"
else
	echo "$feat"
	exit 1
fi
