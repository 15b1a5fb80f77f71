// SPDX-License-Identifier: GPL-2.0
/* CPU sampling in the kernel: attached to one perf_event per CPU, counts
 * samples in a hash map keyed by (tgid, tid, user ip or kernel ip, user stack
 * id, kernel stack id, the process's start time). The agent drains and resets the map every interval. CO-RE: built
 * against vmlinux.h, relocated by libbpf on the running kernel. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sample_shared.h"

const volatile __u32 target_tgid = 0; /* 0: every process (-a) */
const volatile __u32 want_stack = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SAMPLE_MAP_ENTRIES);
	__type(key, struct sample_map_key);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, STACK_MAP_ENTRIES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, SAMPLE_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

__u64 dropped = 0; /* samples not counted: map full */

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	if (target_tgid && tgid != target_tgid)
		return 0;
	struct sample_map_key k;
	__builtin_memset(&k, 0, sizeof(k));
	k.pid = tgid;
	k.tid = (__u32)id;
	/* the process's start (ktime_get_ns at its fork): a later process on the same pid is another key */
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	k.start = BPF_CORE_READ(task, group_leader, start_time);
	__u64 ip = PT_REGS_IP(&ctx->regs);
	if ((__s64)ip < 0) /* upper half: kernel address (x86-64, arm64) */
		k.kip = ip;
	else
		k.ip = ip;
	k.stack_id = want_stack ? (__s32)bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK) : -1;
	/* the kernel's frames of a sample that hit the kernel (a sample in user
	 * mode has none: get_perf_callchain walks the kernel only from kernel
	 * regs); negative when the walk fails */
	k.kstack_id = want_stack && k.kip ? (__s32)bpf_get_stackid(ctx, &stacks, 0) : -1;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	__u64 one = 1;
	if (bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST) == 0)
		return 0;
	v = bpf_map_lookup_elem(&counts, &k); /* raced with another CPU */
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		__sync_fetch_and_add(&dropped, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
