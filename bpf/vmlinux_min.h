/* Fallback for the BPF programs when no BTF is available to generate vmlinux.h
 * (cross builds without the target kernel's BTF): the few kernel types the
 * programs use, declared by hand with preserve_access_index so CO-RE still
 * relocates field offsets on the running kernel. The target kernel must have
 * BTF (/sys/kernel/btf/vmlinux) at run time for the relocations; copy this
 * file to $(O)/gen/vmlinux.h or build with BPF_VMLINUX_BTF=none. */
#ifndef BPF_VMLINUX_MIN_H
#define BPF_VMLINUX_MIN_H

typedef unsigned char __u8;
typedef short unsigned int __u16;
typedef unsigned int __u32;
typedef long long unsigned int __u64;
typedef signed char __s8;
typedef short int __s16;
typedef int __s32;
typedef long long int __s64;
typedef __u32 u32;
typedef __u64 u64;
typedef _Bool bool;
typedef int pid_t;

enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_STACK_TRACE = 7,
	BPF_MAP_TYPE_LRU_HASH = 9,
};
enum { BPF_ANY = 0, BPF_NOEXIST = 1, BPF_EXIST = 2 };
enum { BPF_F_USER_STACK = 256 };

#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	long unsigned int r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax, ip, cs,
		flags, sp, ss;
} __attribute__((preserve_access_index));
typedef struct pt_regs bpf_user_pt_regs_t;
#elif defined(__TARGET_ARCH_arm64)
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
} __attribute__((preserve_access_index));
typedef struct user_pt_regs bpf_user_pt_regs_t;
struct pt_regs {
	union {
		struct user_pt_regs user_regs;
		struct {
			__u64 regs[31];
			__u64 sp;
			__u64 pc;
			__u64 pstate;
		};
	};
} __attribute__((preserve_access_index));
#else
#error "vmlinux_min.h: add the pt_regs of this architecture"
#endif

struct bpf_perf_event_data {
	bpf_user_pt_regs_t regs;
	__u64 sample_period;
	__u64 addr;
};

struct task_struct {
	pid_t pid;
	pid_t tgid;
} __attribute__((preserve_access_index));

#endif
