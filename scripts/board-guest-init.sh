#!/bin/busybox sh
# shellcheck shell=dash
# /init of the emulated boards' initramfs (scripts/board-initramfs.sh puts it there).
# Parameters come from the kernel command line (scripts/board-test.sh sets them):
#   prof.collector=HOST:PORT  where the agent streams (a QEMU guestfwd to the host's 127.0.0.1)
#   prof.id=NAME              agent id          prof.seconds=S  busy-loop length
#   prof.interval=MS          counting interval
# Lines starting with "PROF-GUEST " are read by the host test. Ends with poweroff.
/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec 0</dev/console 1>/dev/console 2>&1
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null

collector=10.0.2.100:7412 id=qemu-guest seconds=3 interval=200
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	prof.collector=*) collector=${arg#prof.collector=} ;;
	prof.id=*) id=${arg#prof.id=} ;;
	prof.seconds=*) seconds=${arg#prof.seconds=} ;;
	prof.interval=*) interval=${arg#prof.interval=} ;;
	esac
done

# virtio-mmio network: modules in dependency order (ones built into the kernel are absent).
for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m.ko || echo "PROF-GUEST insmod $m failed"
done
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
hostname "$id"
ip link set lo up
ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up
echo "PROF-GUEST kernel=$(uname -r) machine=$(uname -m) uptime=$(cut -d' ' -f1 /proc/uptime)"

/bin/agent --features
echo "PROF-GUEST features-rc=$?"
# Software events, named: they exist on every kernel and under TCG.
/bin/agent stat --collector "$collector" --agent-id "$id" --spool /tmp/spool -I "$interval" \
	-e task-clock,page-faults,context-switches,cpu-migrations --flush-timeout 20 -- /bin/busy "$seconds" 1 0
echo "PROF-GUEST stat-rc=$? uptime=$(cut -d' ' -f1 /proc/uptime)"
# CPU sampling (BPF or perf ring back end), where this agent has it.
if /bin/agent --help | grep -q '^  record '; then
	/bin/agent record --collector "$collector" --agent-id "$id-record" --spool /tmp/spool-record \
		--flush-timeout 20 -- /bin/busy 1 1 0
	echo "PROF-GUEST record-rc=$?"
fi
# ---- Mali counters (issue 29) ----
# The agent's kbase code on the fake T628 (test-only agent), one run per driver generation:
# Midgard r5p0 UK 7.0 (/etc/fake_kbase.script) and t6xx r3p0 UK 3.0 (/etc/fake_kbase_t6xx.script).
if [ -x /bin/agent-fakegpu ]; then
	PROF_FAKE_KBASE_SCRIPT=/etc/fake_kbase.script /bin/agent-fakegpu stat --collector "$collector" \
		--agent-id "$id-gpu" --spool /tmp/spool-gpu --gpu --flush-timeout 20 -- /bin/busy 1 1 0
	echo "PROF-GUEST gpu-rc=$?"
	if [ -f /etc/fake_kbase_t6xx.script ]; then
		PROF_FAKE_KBASE_SCRIPT=/etc/fake_kbase_t6xx.script /bin/agent-fakegpu stat --collector "$collector" \
			--agent-id "$id-gpu-t6xx" --spool /tmp/spool-gpu-t6xx --gpu --flush-timeout 20 -- /bin/busy 1 1 0
		echo "PROF-GUEST gpu-t6xx-rc=$?"
	fi
fi
# ---- end Mali counters ----
sync
echo "PROF-GUEST done"
poweroff -f
