#!/usr/bin/env bash
# Emulated board test (make board-test BOARD=qemu-virt-arm64|qemu-virt-armhf):
# a collector on the host's 127.0.0.1, a QEMU -M virt guest (TCG) booting Debian's
# kernel with the initramfs from scripts/board-initramfs.sh; inside, the static agent
# counts a busy loop with software events and streams to the collector through QEMU
# user networking (restrict=on: no way out of the guest but one guestfwd to
# 127.0.0.1:<collector port>). Then the store is checked: board name, kernel release
# from the guest, counter rows.
#
# Environment (set by mk/board.mk): BOARD OUT COLLECTOR QEMU_SYSTEM QEMU_MACHINE QEMU_CPU
# QEMU_MEM QEMU_CONSOLE BOARD_BPF (y: BPF compiled in); BOARD_TEST_TIMEOUT (s, whole QEMU run),
# BOARD_TEST_SECONDS (busy loop).
# PROF_KEEP_TMP=1 keeps the work dir. Prints "board-test: N passed, N failed".
set -uo pipefail
: "${BOARD:?}" "${OUT:?}" "${COLLECTOR:?}" "${QEMU_SYSTEM:?}" "${QEMU_MACHINE:?}" "${QEMU_CPU:?}"
QEMU_MEM=${QEMU_MEM:-256}
QEMU_CONSOLE=${QEMU_CONSOLE:-ttyAMA0}
timeout_s=${BOARD_TEST_TIMEOUT:-240}
seconds=${BOARD_TEST_SECONDS:-3}
agent_id="$BOARD-guest"

kernel=$OUT/kernel/vmlinuz
initrd=$OUT/guest/initramfs.cpio.gz
release=$(cat "$OUT/kernel/release")
for f in "$kernel" "$initrd" "$COLLECTOR"; do
	[ -e "$f" ] || { echo "board-test: missing $f (run: make BOARD=$BOARD board-test)" >&2; exit 2; }
done
command -v "$QEMU_SYSTEM" >/dev/null || { echo "board-test: no $QEMU_SYSTEM (run: make deps BOARD=$BOARD)" >&2; exit 2; }
for t in sqlite3 socat; do
	command -v $t >/dev/null || { echo "board-test: no $t (run: make deps BOARD=$BOARD)" >&2; exit 2; }
done

dir=$(mktemp -d /tmp/board-test.XXXXXX)
db=$dir/profile.db
cpid='' qpid=''
cleanup() {
	[ -n "$qpid" ] && kill -KILL "$qpid" 2>/dev/null
	[ -n "$cpid" ] && kill -TERM "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null
	if [ -n "${PROF_KEEP_TMP:-}" ]; then echo "board-test: kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

"$COLLECTOR" --listen 127.0.0.1:0 --store "$db" --port-file "$dir/port" >"$dir/collector.log" 2>&1 &
cpid=$!
for _ in $(seq 500); do [ -s "$dir/port" ] && break; sleep 0.02; done
port=$(cat "$dir/port" 2>/dev/null)
[ -n "$port" ] || { echo "board-test: collector did not start"; cat "$dir/collector.log"; exit 1; }

# Guest 10.0.2.100:7412 -> host 127.0.0.1:$port; restrict=on: nothing else leaves the guest.
# A cmd: forward starts one relay per guest connection (a tcp: chardev would be one host
# connection, opened when QEMU starts, shared by every guest connection in turn).
netdev="user,id=n0,restrict=on,ipv6=off,guestfwd=tcp:10.0.2.100:7412-cmd:socat STDIO TCP4:127.0.0.1:$port"
append="console=$QEMU_CONSOLE panic=-1 loglevel=3 rdinit=/init prof.collector=10.0.2.100:7412"
append+=" prof.id=$agent_id prof.seconds=$seconds prof.interval=200"
echo "board-test: $BOARD: $QEMU_SYSTEM -M $QEMU_MACHINE -cpu $QEMU_CPU (TCG), kernel $release, collector 127.0.0.1:$port, timeout ${timeout_s}s"
t0=$(date +%s.%N)
timeout -k 5 "$timeout_s" "$QEMU_SYSTEM" -M "$QEMU_MACHINE" -cpu "$QEMU_CPU" -m "$QEMU_MEM" -smp 1 \
	-accel tcg -nodefaults -no-user-config -display none -no-reboot \
	-serial "file:$dir/console.log" -monitor none \
	-netdev "$netdev" -device virtio-net-device,netdev=n0 \
	-kernel "$kernel" -initrd "$initrd" -append "$append" </dev/null >"$dir/qemu.log" 2>&1 &
qpid=$!
wait "$qpid"
qrc=$?
qpid=
t1=$(date +%s.%N)
boot_s=$(awk '/PROF-GUEST kernel=/ { for (i = 1; i <= NF; i++) if ($i ~ /^uptime=/) { sub("uptime=", "", $i); print $i } }' "$dir/console.log" | head -n1)
kill -TERM "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null
cpid=
printf 'board-test: QEMU exited with %s after %.1f s (guest reached /init work at %s s uptime)\n' \
	"$qrc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "${boot_s:-?}"

pass=0 fail=0
check() { # check NAME COMMAND...
	local name=$1
	shift
	if "$@"; then
		echo "[       OK ] board_$name"
		pass=$((pass + 1))
	else
		echo "[  FAILED  ] board_$name"
		fail=$((fail + 1))
	fi
}
q() { sqlite3 -batch -noheader "file:$db?mode=ro" "$1" 2>/dev/null; }

guest_rel=$(sed -n 's/.*PROF-GUEST kernel=\([^ ]*\) .*/\1/p' "$dir/console.log" | head -n1)
guest_mach=$(sed -n 's/.*PROF-GUEST kernel=[^ ]* machine=\([^ ]*\).*/\1/p' "$dir/console.log" | head -n1)
stat_rc=$(sed -n 's/.*PROF-GUEST stat-rc=\([0-9]*\).*/\1/p' "$dir/console.log" | head -n1)
sid=$(q "SELECT MAX(id) FROM sessions WHERE agent_id='$agent_id'")

check qemu_powered_off_in_time test "$qrc" -eq 0
check guest_booted_debian_kernel test "$guest_rel" = "$release"
check agent_stat_exit_0 test "${stat_rc:-x}" = 0
check session_stored test -n "$sid"
sid=${sid:-0}
check session_board_name test "$(q "SELECT board FROM sessions WHERE id=$sid")" = "$BOARD"
check session_kernel_release_from_guest test "$(q "SELECT kernel_release FROM sessions WHERE id=$sid")" = "$release"
check session_machine_from_guest test -n "$guest_mach" -a "$(q "SELECT machine FROM sessions WHERE id=$sid")" = "$guest_mach"
rows=$(q "SELECT COUNT(*) FROM counter_samples WHERE session_id=$sid")
check counter_rows_present test "${rows:-0}" -gt 0
tc=$(q "SELECT COALESCE(SUM(c.value),0) FROM counter_samples c JOIN events v ON v.session_id=c.session_id AND v.event_id=c.event_id WHERE c.session_id=$sid AND v.name='task-clock'")
# The busy loop ran $seconds s of wall time on the guest's one vCPU: expect at least
# half of it as task-clock (TCG guest time is virtual, from the host clock).
check task_clock_plausible test "${tc:-0}" -gt $((seconds * 500000000))
nrec=$(q "SELECT COUNT(*) FROM records WHERE session_id=$sid")
maxseq=$(q "SELECT MAX(seq) FROM records WHERE session_id=$sid")
check records_seq_complete test -n "$nrec" -a "${nrec:-0}" -gt 0 -a "${nrec:-0}" = "${maxseq:-x}"

echo "board-test: session $sid: board $(q "SELECT board FROM sessions WHERE id=$sid"), kernel $(q "SELECT kernel_release FROM sessions WHERE id=$sid"), machine $(q "SELECT machine FROM sessions WHERE id=$sid"), $rows counter rows, $nrec records, task-clock $(awk -v t="${tc:-0}" 'BEGIN { printf "%.3f", t / 1e9 }') s for a ${seconds} s busy loop"
events=$(q "SELECT group_concat(name, ',') FROM events WHERE session_id=$sid")
echo "board-test: events: ${events:-none}"
# CPU sampling (agent record), when this agent has it: the guest runs it after stat.
# With BPF compiled in (BOARD_BPF=y) the Debian kernel (BTF, bpf syscall) must give the bpf
# back end (sample_intervals.backend 1 = bpf, 2 = perf ring; proto/samples.proto).
rec_rc=$(sed -n 's/.*PROF-GUEST record-rc=\([0-9]*\).*/\1/p' "$dir/console.log" | head -n1)
if [ -n "$rec_rc" ]; then
	rsid=$(q "SELECT MAX(id) FROM sessions WHERE agent_id='$agent_id-record'")
	check agent_record_exit_0 test "$rec_rc" = 0
	check record_session_stored test -n "$rsid"
	rsid=${rsid:-0}
	nsamp=$(q "SELECT COALESCE(SUM(count),0) FROM cpu_samples WHERE session_id=$rsid")
	check record_samples_present test "${nsamp:-0}" -gt 0
	backends=$(q "SELECT group_concat(DISTINCT backend) FROM sample_intervals WHERE session_id=$rsid")
	if [ "${BOARD_BPF:-}" = y ]; then
		check record_bpf_back_end test "$backends" = 1
	fi
	echo "board-test: record session $rsid: ${nsamp:-0} samples, back end(s) ${backends:-none} (1 = bpf, 2 = perf ring)"
else
	echo "board-test: info: this agent has no 'record' subcommand: counting (agent stat) only"
fi
# ---- Mali counters (issue 29) -------------------------------------------------------------
# The test-only agent on the fake T628 (mk/board.mk), when the board has CONFIG_AGENT_MALI:
# one run per kbase driver generation the guest serves (tests/fake_kbase/guest*.script):
# "gpu" = Midgard r5p0 UK 7.0 dump buffer, "gpu-t6xx" = t6xx r3p0 UK 3.0. Steady scripted
# rates: every dump must hold the interval's counts (none 0, none near 2^32).
gpu_runs=0
for gen in gpu gpu-t6xx; do
	gpu_rc=$(sed -n "s/.*PROF-GUEST $gen-rc=\([0-9]*\).*/\1/p" "$dir/console.log" | head -n1)
	[ -n "$gpu_rc" ] || continue
	gpu_runs=$((gpu_runs + 1))
	gsid=$(q "SELECT MAX(id) FROM sessions WHERE agent_id='$agent_id-$gen'")
	check "agent_${gen//-/_}_exit_0" test "$gpu_rc" = 0
	gsid=${gsid:-0}
	ngpu=$(q "SELECT COUNT(*) FROM gpu_samples WHERE session_id=$gsid")
	check "${gen//-/_}_counters_stored" test "${ngpu:-0}" -gt 0
	beats="FROM gpu_samples s JOIN gpu_counters c ON c.session_id=s.session_id AND c.counter_id=s.counter_id
	       WHERE s.session_id=$gsid AND c.name='L2_EXT_READ_BEATS'"
	lo=$(q "SELECT COALESCE(MIN(s.value),0) $beats")
	hi=$(q "SELECT COALESCE(MAX(s.value),0) $beats")
	check "${gen//-/_}_per_dump_counts" test "${lo:-0}" -gt 0 -a "${hi:-0}" -lt 1000000000
	echo "board-test: $gen session $gsid: ${ngpu:-0} GPU counter rows, read beats per dump ${lo:-?}..${hi:-?}," \
		"from $(q "SELECT family || ' ' || iface FROM gpu_info WHERE session_id=$gsid")"
done
[ "$gpu_runs" -gt 0 ] || echo "board-test: info: no Mali counter run in this guest (CONFIG_AGENT_MALI off)"
# ---- end Mali counters ----------------------------------------------------------------------
if [ "$fail" -ne 0 ]; then
	echo "---- guest console ($dir/console.log) ----"
	tail -n 80 "$dir/console.log"
	echo "---- qemu ----"
	cat "$dir/qemu.log"
	echo "---- collector ----"
	tail -n 40 "$dir/collector.log"
fi
grep -A40 '^agent .*schema version' "$dir/console.log" | sed -n '1,/PROF-GUEST features-rc/p' | sed 's/^/guest: /' | head -n 30
echo "board-test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
