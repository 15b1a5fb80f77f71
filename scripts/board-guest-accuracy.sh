#!/bin/busybox sh
# shellcheck shell=dash
# /bin/accuracy in the emulated boards' initramfs (issue 36; scripts/board-initramfs.sh): two
# sample kernels of different memory behaviour (/bin/acc/, tools/qemu-plugin/kernels/) under
# `agent profile --capture snapshot` with the default window (500000 warm-up + 200000 recorded
# instructions): each window a snapshot whose pages this agent serves, replayed and stored by
# the host collector. scripts/board-accuracy.sh compares the stored windows with the same
# binaries' full traces under qemu-user, with the same arguments (the repetition count aside).
# Usage: accuracy COLLECTOR AGENT-ID. Lines: "PROF-ACC NAME: <agent output>", "PROF-ACC NAME-rc=N".
collector=$1 id=$2
# NAME ARGS...: the last is the repetitions (the host's full trace runs 2 of them).
# chase: a random cycle over 4 MiB (4x the model's 1 MiB level), every load waits for the one
# before; hash: probes of a 4 MiB table, misses that wait for nothing; qsort: 16384 int32 (64 KiB,
# in the 1 MiB level: no memory work in the full trace, a few dozen pages a window). Lengths: ~0.3 s of guest
# time under -icount shift=0 (1 ns an instruction), 3 windows at --every 0.1; each window asks for
# ~1060 pages in ~134 requests through QEMU's user network (2-11 s wall at load 5-11): more
# windows would add that much to board-test each.
acc_run() {
	name=$1
	shift
	echo "PROF-ACC $name-args: $*"
	/bin/agent profile -v --collector "$collector" --flush-timeout 30 --agent-id "$id-acc-$name" \
		--spool "/tmp/acc-$name" --no-opencl --capture snapshot --every "${ACC_EVERY:-0.1}" \
		-- "/bin/acc/$name" "$@" >"/tmp/acc-$name.out" 2>&1
	rc=$?
	sed "s/^/PROF-ACC $name: /" "/tmp/acc-$name.out"
	echo "PROF-ACC $name-rc=$rc"
}
[ -x /bin/acc/chase ] && acc_run chase 1048576 1000000 70
[ -x /bin/acc/hash ] && acc_run hash 1048576 200000 60
[ -x /bin/acc/qsort ] && acc_run qsort 16384 130
