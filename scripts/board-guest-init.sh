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

# ---- issue 30: hardware counters on QEMU's PMU (-icount shift=0), as a non-root user with
# perf_event_paranoid=2 and perf_cpu_time_max_percent=0 (the kernel then never lowers
# perf_event_max_sample_rate). prof.pmu=N: pmu_loop sizes N and 2N for the exact count,
# prof.pmu.rec=N for sampling; prof.pmu.refuse=EVENT (the core lacks it), prof.pmu.zero=EVENT
# (opens and reads 0 under QEMU); prof.only=pmu: nothing else in this boot.
# Output lines: "PROF-PMU TAG: <agent stderr / loop stdout>", "PROF-PMU TAG-rc=N".
pmu_n='' pmu_rec='' pmu_refuse='' pmu_zero='' only=''
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	prof.pmu=*) pmu_n=${arg#prof.pmu=} ;;
	prof.pmu.rec=*) pmu_rec=${arg#prof.pmu.rec=} ;;
	prof.pmu.refuse=*) pmu_refuse=${arg#prof.pmu.refuse=} ;;
	prof.pmu.zero=*) pmu_zero=${arg#prof.pmu.zero=} ;;
	prof.only=*) only=${arg#prof.only=} ;;
	esac
done
pmu_run() { # pmu_run TAG AGENT-ARGS... : as user prof, output prefixed
	tag=$1
	shift
	su prof -s /bin/sh -c "cd /tmp && /bin/agent $* >/tmp/pmu-$tag.out 2>&1"
	rc=$?
	sed "s/^/PROF-PMU $tag: /" /tmp/pmu-$tag.out
	echo "PROF-PMU $tag-rc=$rc"
}
if [ -n "$pmu_n" ] && [ -x /bin/pmu_loop ]; then
	mkdir -p /etc
	echo "root:x:0:0:root:/:/bin/sh" >/etc/passwd
	echo "prof:x:1000:1000:prof:/tmp:/bin/sh" >>/etc/passwd
	printf 'root:x:0:\nprof:x:1000:\n' >/etc/group
	echo 2 >/proc/sys/kernel/perf_event_paranoid
	echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
	echo "PROF-PMU paranoid=$(cat /proc/sys/kernel/perf_event_paranoid) max_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate) cpu_time_max=$(cat /proc/sys/kernel/perf_cpu_time_max_percent)"
	for d in /sys/bus/event_source/devices/*; do
		echo "PROF-PMU sysfs $(basename "$d"): type=$(cat "$d/type" 2>/dev/null) events=$(ls "$d/events" 2>/dev/null | tr '\n' ' ')"
	done
	dmesg | grep -i 'pmu\|perf' | sed 's/^/PROF-PMU dmesg: /'
	c="--collector $collector --flush-timeout 20 -q"
	pmu_run stat1 stat $c --agent-id "$id-pmu" --spool /tmp/sp1 -e instructions,INST_RETIRED,cycles -- /bin/pmu_loop "$pmu_n"
	pmu_run stat2 stat $c --agent-id "$id-pmu" --spool /tmp/sp2 -e instructions,INST_RETIRED,cycles -- /bin/pmu_loop "$((pmu_n * 2))"
	pmu_run record record --collector "$collector" --flush-timeout 20 --agent-id "$id-pmu-record" --spool /tmp/sp3 -F 499 -- /bin/pmu_loop "$pmu_rec"
	# single-stepped windows, asked for (the default capture is the snapshot: issue 36)
	pmu_run profile profile -v --collector "$collector" --flush-timeout 20 --agent-id "$id-pmu-profile" --spool /tmp/sp4 --no-opencl --capture step --every 0.2 --window 200 -- /bin/pmu_loop "$((pmu_rec * 3))"
	# issue 36: the default capture, snapshots the host collector replays (pages served by this
	# agent), of /bin/busy for 1 s (its loop loads and stores a volatile on the stack: memory
	# vertices; it reads the clock, a system call here, every ~700000 instructions: short windows)
	pmu_run snap profile -v --collector "$collector" --flush-timeout 20 --agent-id "$id-pmu-snap" --spool /tmp/sp8 --no-opencl --every 0.2 --warmup 20000 --window 20000 -- /bin/busy 1
	# and every trace default (500000 warm-up + 200000 recorded instructions every 0.25 s) on the
	# loop (no system call in it for ~1.2 s: windows from 0.25 s on, however long the first connection takes)
	pmu_run dflt profile -v --collector "$collector" --flush-timeout 20 --agent-id "$id-pmu-dflt" --spool /tmp/sp9 --no-opencl -- /bin/pmu_loop "$((pmu_rec * 6))"
	# the default capture with no collector (nothing listens on the guest's 127.0.0.1:9): said once;
	# arm64 takes single-stepped windows instead, 32-bit ARM none
	pmu_run offl profile --collector 127.0.0.1:9 --flush-timeout 1 --agent-id "$id-pmu-offl" --spool /tmp/sp10 --no-opencl --every 0.05 --window 200 -- /bin/pmu_loop "$((pmu_n * 40))"
	pmu_run refuse stat $c --agent-id "$id-pmu" --spool /tmp/sp5 -e "$pmu_refuse" -- /bin/pmu_loop 1000
	pmu_run zero stat --collector "$collector" --flush-timeout 20 --agent-id "$id-pmu" --spool /tmp/sp6 -e "cycles,$pmu_zero" -- /bin/pmu_loop "$pmu_n"
	# the kernel's lowered sample-rate limit (as after "perf: interrupt took too long"): -F 499 goes on at it
	# (the kernel takes a new limit only while throttling is on: perf_cpu_time_max_percent not 0 or 100,
	# kernel/events/core.c perf_proc_update_handler)
	max_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	echo 25 >/proc/sys/kernel/perf_cpu_time_max_percent
	echo 250 >/proc/sys/kernel/perf_event_max_sample_rate
	echo "PROF-PMU rate: max_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)"
	pmu_run rate record --collector "$collector" --flush-timeout 20 --agent-id "$id-pmu-rate" --spool /tmp/sp7 -F 499 -- /bin/pmu_loop "$pmu_n"
	echo "$max_rate" >/proc/sys/kernel/perf_event_max_sample_rate
	echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
	# The Linux 3.4 personality (armhf: /bin/linux34, tests/linux34/): the agent's stat, record
	# and profile as the same user, each told 3.4's answers. "PROF-L34 TAG: <agent output>",
	# "PROF-L34 TAG-log: <what linux34 answered>", "PROF-L34 TAG-rc=N".
	if [ -x /bin/linux34 ]; then
		l34_run() { # l34_run TAG AGENT-ARGS...
			tag=$1
			shift
			su prof -s /bin/sh -c "cd /tmp && /bin/linux34 --log /tmp/l34-$tag.log -- /bin/agent $* >/tmp/l34-$tag.out 2>&1"
			rc=$?
			sed "s/^/PROF-L34 $tag: /" /tmp/l34-$tag.out
			sed "s/^/PROF-L34 $tag-log: /" /tmp/l34-$tag.log
			echo "PROF-L34 $tag-rc=$rc"
		}
		l34_run stat stat $c --agent-id "$id-l34" --spool /tmp/sl1 -e instructions,cycles -- /bin/pmu_loop "$pmu_n"
		l34_run record record $c --agent-id "$id-l34-record" --spool /tmp/sl2 -F 499 -- /bin/pmu_loop "$((pmu_n * 10))"
		# the default capture and window (issue 36), every 0.25 s: a loop of ~2.4 s (-icount; the first
		# connection through linux34 may take the first periods: on armhf no window is taken while it is
		# pending, and under a heavily loaded host (a CI at load 7-9) it once outlasted a 1.2 s loop: 0 windows)
		l34_run profile profile $c --agent-id "$id-l34-profile" --spool /tmp/sl3 --no-opencl -- /bin/pmu_loop "$((pmu_n * 300))"
		# -q: profile writes its summary to SPOOL/run-summary.txt, not the program's stderr (issue 41)
		[ -f /tmp/sl3/run-summary.txt ] && sed "s/^/PROF-L34 profile: /" /tmp/sl3/run-summary.txt
	fi
	echo "PROF-PMU done"
fi
if [ "$only" = pmu ]; then
	sync
	echo "PROF-GUEST done"
	poweroff -f
fi
# ---- end issue 30
# ---- issue 36: the trace snapshot (the agent's clone injection) in this kernel, 10 windows of
# a program writing 8 MiB (tests/board/snapshot_check.c): "PROF-SNAP ..." lines, then its rc
if [ -x /bin/snapshot_check ]; then
	timeout 120 /bin/snapshot_check 10 8
	echo "PROF-SNAP rc=$?"
fi
[ -x /bin/accuracy ] && /bin/accuracy "$collector" "$id" # issue 36: board windows vs full traces
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
