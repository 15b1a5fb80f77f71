#!/usr/bin/env bash
# Build with configs/host-minimal_defconfig and check that the disabled
# features are really out: not linked, and reported as such by the agent.
set -euo pipefail
out=build/host-minimal
light=build/host-bpf-light
# always the defconfigs' choices (an old .config keeps options the defconfig has since turned off)
rm -f $out/.config $light/.config
# Both builds side by side (issue 43: one after the other, their serial parts -- protoc, the
# bpf skeletons, the links -- left the second core idle); the light one is checked below.
make --no-print-directory ${CHECK_J:-} O=$light DEFCONFIG=configs/host-bpf-light_defconfig WERROR=1 $light/agent >/dev/null &
light_pid=$!
make --no-print-directory ${CHECK_J:-} O=$out DEFCONFIG=configs/host-minimal_defconfig WERROR=1 all >/dev/null ||
	{ wait $light_pid || true; echo "check-config: FAIL: the minimal build failed"; exit 1; }
wait $light_pid || { echo "check-config: FAIL: the light-skeleton bpf build failed"; exit 1; }
fail=0
if ldd $out/agent | grep -Eq 'libbpf|libOpenCL'; then
	echo "check-config: FAIL: minimal agent links libbpf or libOpenCL"; fail=1
fi
for b in agent collector; do
	# NEEDED entries, not ldd: libpq (collector) may pull libssl in itself
	if readelf -d $out/$b | grep NEEDED | grep -q 'libssl'; then
		echo "check-config: FAIL: minimal $b links libssl (CONFIG_TLS is off)"; fail=1
	fi
	if readelf -d $out/$b | grep NEEDED | grep -q 'libnettle'; then
		echo "check-config: FAIL: minimal $b links libnettle (CONFIG_AUTH is off)"; fail=1
	fi
done
# OpenSSL is dlopened by name when TLS is compiled in (common/ossl.c): the name must be gone
if grep -q 'libssl.so' $out/agent; then
	echo "check-config: FAIL: minimal agent still contains the OpenSSL loader (dlopen of libssl.so)"; fail=1
fi
if grep -q 'libOpenCL.so' $out/agent; then
	echo "check-config: FAIL: minimal agent still contains the OpenCL loader (dlopen of libOpenCL.so)"; fail=1
fi
feat=$($out/agent --features 2>&1 || true)
for f in bpf opencl 'mali counters' tracer 'token auth' tls; do
	if ! echo "$feat" | grep -i "$f" | grep -qi "not compiled in"; then
		echo "check-config: FAIL: 'agent --features' does not say $f is not compiled in"; fail=1
	fi
done
if [ $fail -eq 0 ]; then
	echo "check-config: minimal build ok: bpf, opencl, mali counters, tracer, token auth, tls reported as not compiled in; no libbpf/libOpenCL/libssl/libnettle linked"
else
	echo "$feat"
	exit 1
fi

# The bpf back end with light skeletons only (CONFIG_AGENT_BPF_LIBBPF off, as on the arm64
# boards; host_defconfig has it on): no libbpf/libelf/zlib linked, and --features says so.
# Also: a dynamic agent loads Capstone when `agent trace` starts, it does not link it.
out=$light # built above
needed=$(readelf -d $out/agent | grep NEEDED || true)
if echo "$needed" | grep -Eq 'libbpf|libelf|libz\.'; then
	echo "check-config: FAIL: light-skeleton agent links libbpf/libelf/zlib (CONFIG_AGENT_BPF_LIBBPF is off)"; exit 1
fi
if echo "$needed" | grep -q 'libcapstone'; then
	echo "check-config: FAIL: dynamic agent links libcapstone (agent/trace/cs_api.c loads it at run time)"; exit 1
fi
feat=$($out/agent --features 2>&1 || true)
if ! echo "$feat" | grep -q 'no libbpf fallback'; then
	echo "check-config: FAIL: 'agent --features' does not say the light-skeleton agent has no libbpf fallback"; exit 1
fi
echo "check-config: light-skeleton bpf build ok: no libbpf/libelf/zlib/libcapstone linked"
