/* The kernel types the BPF programs use, declared by hand with
 * preserve_access_index: CO-RE relocates the field offsets on the running
 * kernel (which must have BTF, /sys/kernel/btf/vmlinux), so one object fits
 * every kernel of the architecture. mk/bpf.mk builds with this header by
 * default (BPF_VMLINUX=min): sched.bpf.o is 11 KB (5 KB linked, without
 * DWARF), where against the full generated vmlinux.h it was 644 KB (DWARF
 * and 26 KB of BTF for everything struct task_struct reaches). A
 * program that needs another kernel type: add it here, or build against a
 * generated vmlinux.h (make BPF_VMLINUX=btf [BPF_VMLINUX_BTF=file]). */
#ifndef BPF_VMLINUX_MIN_H
#define BPF_VMLINUX_MIN_H
/* as the generated vmlinux.h: bpf_tracing.h then uses the kernel's pt_regs names */
#define __VMLINUX_H__

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
/* used in prototypes of bpf_helper_defs.h */
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

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
	struct task_struct *group_leader;
	u64 start_time;
} __attribute__((preserve_access_index));

#endif
