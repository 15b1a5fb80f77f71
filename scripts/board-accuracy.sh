# shellcheck shell=bash disable=SC2154 # dir, db, agent_id, ...: set by board-test.sh, which sources this
# Issue 36: the board windows' accuracy against full traces. Sourced by scripts/board-test.sh
# after the main boot (its check(), q(), $dir, $db, $COLLECTOR, $OUT, $QEMU_SYSTEM, $QEMU_CPU,
# $agent_id). In the guest /bin/accuracy (scripts/board-guest-accuracy.sh) ran three sample
# kernels (/bin/acc/chase, hash, qsort: static, Thumb-2 on armhf) under
# `agent profile --capture snapshot` with the default window (500000 + 200000 instructions); the
# host collector replayed and stored them. Here: the same binaries' full traces under
# qemu-arm/qemu-aarch64 with the project's plugin (edag_tracer.so), 2 repetitions, the same
# arguments otherwise; tests/board/trace_truth compares `collector edag` of the stored windows
# (32K:8:64:4 + 1M:8:64:12, m 4, alpha0 100, as test_trace_accuracy) with the second repetition
# (W/i, lambda/i) and the steady state in windows of the recorded length, caches warm
# (Lambda*alpha0): each within 10 % (0.001/i; 0.01 for Lambda*alpha0) or flagged with an
# interval that holds the truth. The target's stop per window is printed (stored stop_ns). Where
# qemu-user, the plugin or trace_truth is missing, acc_<cpu>_<prog>_compared fails with the reason.
acc_checks() {
	local cpu=$QEMU_CPU qu=qemu-aarch64 plugin=build/host/qemu-plugin/edag_tracer.so
	local truth=build/host/board-accuracy/trace_truth prog args a rc sid nw ins stop mark bin res fig missing
	[ "$QEMU_SYSTEM" = qemu-system-arm ] && qu=qemu-arm
	for prog in chase hash qsort; do
		bin=$OUT/guest/acc/$prog
		args=$(sed -n "s/^PROF-ACC $prog-args: //p" "$dir/console.log" | tr -d '\r' | head -n1)
		rc=$(sed -n "s/^PROF-ACC $prog-rc=\([0-9]*\).*/\1/p" "$dir/console.log" | head -n1)
		if [ -z "$rc" ]; then
			check "acc_${cpu}_${prog}_ran" false
			continue
		fi
		sid=$(q "SELECT MAX(id) FROM sessions WHERE agent_id='$agent_id-acc-$prog'")
		nw=$(q "SELECT COUNT(DISTINCT window_index) FROM trace_windows WHERE session_id=${sid:-0}")
		ins=$(q "SELECT MIN(n), MAX(n) FROM (SELECT SUM(n_insns) AS n FROM trace_windows WHERE session_id=${sid:-0} GROUP BY window_index)" | tr '|' ' ')
		stop=$(q "SELECT printf('%.2f ms mean, %.2f ms max', AVG(s) / 1e6, MAX(s) / 1e6) FROM (SELECT SUM(stop_ns) AS s FROM trace_windows WHERE session_id=${sid:-0} GROUP BY window_index)")
		echo "board-test: acc $cpu: $prog ($args): rc $rc, ${nw:-0} window(s) stored, ${ins:-?} instructions recorded each (min max); target stopped ${stop:-?}"
		sed -n "s/^PROF-ACC $prog: //p" "$dir/console.log" | tr -d '\r' | grep 'trace: [0-9]* window(s)\|target stopped per window\|snapshots: \|no window' | head -n 4 | sed "s/^/board-test: acc $cpu: $prog: /"
		check "acc_${cpu}_${prog}_profile_exit_0" test "$rc" = 0
		check "acc_${cpu}_${prog}_windows_replayed" test "${nw:-0}" -ge 2
		"$COLLECTOR" edag --store "$db" --session "${sid:-0}" -m 4 --cache 32K:8:64:4 --cache 1M:8:64:12 --json \
			>"$dir/acc-$prog-edag.json" 2>"$dir/acc-$prog-edag.err"
		# a missing tool fails acc_<cpu>_<prog>_compared (board-test counts checks, it has no skips):
		# without it the comparison would be left out and board-test would still report all passed
		missing=
		command -v "$qu" >/dev/null || missing+=" $qu (qemu-user, scripts/deps.sh)"
		[ -r "$plugin" ] || missing+=" $plugin"
		[ -x "$truth" ] || missing+=" $truth"
		if [ -n "$missing" ]; then
			echo "board-test: acc $cpu: $prog: no comparison with the full trace, missing:$missing (make deps; make board-test builds the last two)"
			check "acc_${cpu}_${prog}_compared" false
			continue
		fi
		# the kernel's kernel_mark() (its first line; Thumb: the function pointer's bit 0 cleared)
		mark=$("$qu" "$bin" "${args%% *}" 1 1 | sed -n 's/.* mark=0x\([0-9a-f]*\).*/\1/p' | head -n1)
		mark=$(printf '0x%x' $((16#${mark:-0} & ~1)))
		read -r -a a <<<"$args"
		# the guest's arguments, the last (repetitions) 2
		res=$("$qu" -plugin "$plugin,out=/dev/fd/3,start=$mark" "$bin" "${a[@]:0:${#a[@]}-1}" 2 3>&1 >/dev/null |
			"$truth" --mark "$mark" --window 200000 --windows "$dir/acc-$prog-edag.json" 2>&1)
		sed "s/^/board-test: acc $cpu: $prog: /" <<<"$res"
		for fig in W/i:W_i lambda/i:lambda_i 'Lambda*a0:Lambda_a0'; do # trace_truth's "FIGURE window ... ok 0|1"
			check "acc_${cpu}_${prog}_${fig##*:}_vs_full_trace" awk -v f="${fig%:*}" \
				'$1 == f && $2 == "window" && $(NF - 1) == "ok" && $NF == 1 { ok = 1 } END { exit !ok }' <<<"$res"
		done
	done
}
acc_checks
