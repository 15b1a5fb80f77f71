// SPDX-License-Identifier: GPL-2.0
/* On-CPU / off-CPU time per task from the sched_switch tracepoint (BTF
 * typed, CO-RE). Cumulative per task; the agent sends per-interval deltas. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sample_shared.h"

const volatile __u32 target_tgid = 0; /* 0: every process */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TASK_MAP_ENTRIES);
	__type(key, __u32); /* tid */
	__type(value, struct task_time_val);
} task_times SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 ptid = prev->pid, ptgid = prev->tgid;
	__u32 ntid = next->pid, ntgid = next->tgid;
	if (ptid && (!target_tgid || ptgid == target_tgid)) {
		struct task_time_val *v = bpf_map_lookup_elem(&task_times, &ptid);
		if (v) {
			if (v->on && v->last_ns)
				v->on_ns += now - v->last_ns;
			v->on = 0;
			v->last_ns = now;
			v->switches++;
		} else {
			struct task_time_val nv = {.tgid = ptgid, .on = 0, .last_ns = now, .switches = 1};
			bpf_map_update_elem(&task_times, &ptid, &nv, BPF_ANY);
		}
	}
	if (ntid && (!target_tgid || ntgid == target_tgid)) {
		struct task_time_val *v = bpf_map_lookup_elem(&task_times, &ntid);
		if (v) {
			if (!v->on && v->last_ns)
				v->off_ns += now - v->last_ns;
			v->on = 1;
			v->last_ns = now;
		} else {
			struct task_time_val nv = {.tgid = ntgid, .on = 1, .last_ns = now};
			bpf_map_update_elem(&task_times, &ntid, &nv, BPF_ANY);
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
