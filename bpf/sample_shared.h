/* Types shared by the BPF programs (bpf/NAME.bpf.c) and the agent's loader
 * (agent/sampler_bpf.c). Only fixed-width types, explicit padding. */
#ifndef BPF_SAMPLE_SHARED_H
#define BPF_SAMPLE_SHARED_H

#define SAMPLE_MAP_ENTRIES 16384 /* aggregated keys per interval in the kernel */
#define STACK_MAP_ENTRIES 8192
#define SAMPLE_STACK_DEPTH 127
#define TASK_MAP_ENTRIES 8192

struct sample_map_key {
	__u32 pid;  /* tgid */
	__u32 tid;
	__u64 ip;   /* user ip, 0 if in the kernel */
	__u64 kip;  /* kernel ip, 0 if in user mode */
	__s32 stack_id;  /* user stack in the stack map, < 0 none */
	__s32 kstack_id; /* kernel stack in the stack map (samples in the kernel), < 0 none */
	__u64 start;     /* the process's start (its leader's start_time, CLOCK_MONOTONIC ns): a pid's
			  * processes apart (pid reuse) */
};

struct task_time_val {
	__u32 tgid;
	__u32 on;       /* on a CPU since last_ns */
	__u64 last_ns;
	__u64 on_ns;    /* cumulative */
	__u64 off_ns;   /* cumulative */
	__u64 switches; /* cumulative */
};

#endif
