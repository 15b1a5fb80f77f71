/* Linux 3.4's syscall table and perf_event_open checks (linux34.h). Every rule names the
 * 3.4 source it follows; "vendor tree" is exynos5420/android_kernel_samsung_exynos5420
 * (Makefile: VERSION 3, PATCHLEVEL 4, SUBLEVEL 89), read with the project's search tools. */
#include "linux34.h"

#include <errno.h>
#include <string.h>

/* ------------------------------------------------------------------ syscall tables */

/* arch/x86/syscalls/syscall_64.tbl at 3.4: the 64-bit table ends with
 * "311 64 process_vm_writev"; kcmp (312) came in 3.5, finit_module (313) in 3.8, and so on.
 * (The vendor tree also lists 317 seccomp, 318 getrandom, 319 memfd_create: Android
 * backports that mainline 3.4, and the Arndale's Linaro 3.4, do not have.) Numbers from
 * 512 up are x32, which 3.4 had (x32 was merged in 3.4) for x32 processes only. */
#define L34_X86_64_LAST 311
/* arch/arm/kernel/calls.S at 3.4: "CALL(sys_process_vm_writev)" is entry 377, the last;
 * kcmp (378) came in 3.5. ARM-private calls: __ARM_NR_BASE 0x0f0000 + 1..5 (breakpoint,
 * cacheflush, usr26, usr32, set_tls), arch/arm/kernel/traps.c arm_syscall(). */
#define L34_ARM_LAST 377

bool l34_has_syscall(enum l34_arch arch, long nr)
{
	if (nr < 0)
		return false;
	if (arch == L34_X86_64)
		return nr <= L34_X86_64_LAST;
	return nr <= L34_ARM_LAST || (nr >= 0xf0001 && nr <= 0xf0005);
}

struct l34_name {
	long nr;
	const char *name;
};

/* Names of later syscalls, from the current tables (x86_64: arch/x86/entry/syscalls/syscall_64.tbl). */
static const struct l34_name x86_names[] = {
    {312, "kcmp"},
    {313, "finit_module"},
    {314, "sched_setattr"},
    {315, "sched_getattr"},
    {316, "renameat2"},
    {317, "seccomp"},
    {318, "getrandom"},
    {319, "memfd_create"},
    {320, "kexec_file_load"},
    {321, "bpf"},
    {322, "execveat"},
    {323, "userfaultfd"},
    {324, "membarrier"},
    {325, "mlock2"},
    {326, "copy_file_range"},
    {327, "preadv2"},
    {328, "pwritev2"},
    {329, "pkey_mprotect"},
    {330, "pkey_alloc"},
    {331, "pkey_free"},
    {332, "statx"},
    {333, "io_pgetevents"},
    {334, "rseq"},
    {424, "pidfd_send_signal"},
    {425, "io_uring_setup"},
    {426, "io_uring_enter"},
    {427, "io_uring_register"},
    {428, "open_tree"},
    {429, "move_mount"},
    {430, "fsopen"},
    {431, "fsconfig"},
    {432, "fsmount"},
    {433, "fspick"},
    {434, "pidfd_open"},
    {435, "clone3"},
    {436, "close_range"},
    {437, "openat2"},
    {438, "pidfd_getfd"},
    {439, "faccessat2"},
    {440, "process_madvise"},
    {441, "epoll_pwait2"},
    {442, "mount_setattr"},
    {0, NULL},
};
/* ARM EABI (arch/arm/tools/syscall.tbl). */
static const struct l34_name arm_names[] = {
    {378, "kcmp"},
    {379, "finit_module"},
    {380, "sched_setattr"},
    {381, "sched_getattr"},
    {382, "renameat2"},
    {383, "seccomp"},
    {384, "getrandom"},
    {385, "memfd_create"},
    {386, "bpf"},
    {387, "execveat"},
    {388, "userfaultfd"},
    {389, "membarrier"},
    {390, "mlock2"},
    {391, "copy_file_range"},
    {392, "preadv2"},
    {393, "pwritev2"},
    {397, "statx"},
    {398, "rseq"},
    {403, "clock_gettime64"},
    {404, "clock_settime64"},
    {406, "clock_getres_time64"},
    {407, "clock_nanosleep_time64"},
    {412, "utimensat_time64"},
    {413, "pselect6_time64"},
    {414, "ppoll_time64"},
    {417, "recvmmsg_time64"},
    {422, "futex_time64"},
    {434, "pidfd_open"},
    {435, "clone3"},
    {436, "close_range"},
    {439, "faccessat2"},
    {0, NULL},
};

const char *l34_syscall_name(enum l34_arch arch, long nr)
{
	for (const struct l34_name *n = arch == L34_X86_64 ? x86_names : arm_names; n->name; n++)
		if (n->nr == nr)
			return n->name;
	return NULL;
}

/* ------------------------------------------------------------------ perf_event_open */

/* include/linux/perf_event.h at 3.4 (vendor tree) */
#define L34_ATTR_SIZE_VER0 64u	    /* PERF_ATTR_SIZE_VER0 */
#define L34_PAGE_SIZE 4096u	    /* perf_copy_attr: "if (size > PAGE_SIZE) silly large" */
#define L34_FLAG_ALL 0x7ul	    /* core.c PERF_FLAG_ALL: FD_NO_GROUP | FD_OUTPUT | PID_CGROUP */
#define L34_TYPE_MAX 6u		    /* PERF_TYPE_MAX: HARDWARE..BREAKPOINT */
#define L34_SW_MAX 9u		    /* PERF_COUNT_SW_MAX: CPU_CLOCK..EMULATION_FAULTS */
#define L34_SAMPLE_MAX (1ull << 12) /* PERF_SAMPLE_MAX: IP..BRANCH_STACK */
#define L34_FORMAT_MAX (1ull << 4)  /* PERF_FORMAT_MAX: TOTAL_TIME_ENABLED..GROUP */
#define L34_BRANCH_MAX (1ull << 7)  /* PERF_SAMPLE_BRANCH_MAX */
#define L34_BRANCH_PLM_ALL 0x7ull   /* PERF_SAMPLE_BRANCH_USER | KERNEL | HV */
#define L34_SAMPLE_BRANCH_STACK (1ull << 11)
#define L34_FORMAT_GROUP (1ull << 3)
/* The flag bits word: disabled (bit 0) .. exclude_guest (bit 20), then __reserved_1 : 43. */
#define L34_FLAGS_KNOWN ((1ull << 21) - 1)
#define L34_BIT_INHERIT (1ull << 1)
#define L34_BIT_FREQ (1ull << 10)

static uint64_t get64(const uint8_t *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p, size_t off)
{
	uint32_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

int l34_perf_event_open_check(const uint8_t *attr, size_t avail, int pid, int cpu, unsigned long flags,
			      uint32_t *size_back, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = "";
	/* SYSCALL_DEFINE5(perf_event_open): "if (flags & ~PERF_FLAG_ALL) return -EINVAL;"
	 * (PERF_FLAG_FD_CLOEXEC is 3.14's) */
	if (flags & ~L34_FLAG_ALL) {
		*why = "flags outside PERF_FLAG_ALL (PERF_FLAG_FD_CLOEXEC is Linux 3.14)";
		return -EINVAL;
	}
	/* perf_copy_attr(): access_ok(uattr, PERF_ATTR_SIZE_VER0), get_user(size) */
	if (!attr || avail < L34_ATTR_SIZE_VER0) {
		*why = "attr not readable";
		return -EFAULT;
	}
	uint32_t size = get32(attr, 4);
	/* "if (size > PAGE_SIZE) goto err_size;  if (!size) size = PERF_ATTR_SIZE_VER0;
	 *  if (size < PERF_ATTR_SIZE_VER0) goto err_size;" -- err_size: put_user(sizeof(*attr),
	 *  &uattr->size); ret = -E2BIG */
	if (size > L34_PAGE_SIZE) {
		*size_back = L34_ATTR_SIZE;
		*why = "attr.size > PAGE_SIZE";
		return -E2BIG;
	}
	if (size == 0)
		size = L34_ATTR_SIZE_VER0;
	if (size < L34_ATTR_SIZE_VER0) {
		*size_back = L34_ATTR_SIZE;
		*why = "attr.size < PERF_ATTR_SIZE_VER0";
		return -E2BIG;
	}
	/* "If we're handed a bigger struct than we know of, ensure all the unknown bits are 0":
	 * bytes sizeof(*attr) (80) .. size must be zero, else err_size (-E2BIG) */
	if (size > L34_ATTR_SIZE) {
		if (avail < size) {
			*why = "attr beyond readable memory";
			return -EFAULT;
		}
		for (size_t i = L34_ATTR_SIZE; i < size; i++)
			if (attr[i]) {
				*size_back = L34_ATTR_SIZE;
				*why = "non-zero attr bytes past 3.4's 80 (sample_regs_user, clockid, aux_*, "
				       "sig_data: "
				       "Linux 3.7+)";
				return -E2BIG;
			}
		size = L34_ATTR_SIZE;
	}
	/* copy_from_user(attr, uattr, size): a short attr reads as zeros beyond size */
	uint8_t a[L34_ATTR_SIZE];
	memset(a, 0, sizeof(a));
	memcpy(a, attr, size);
	uint32_t type = get32(a, 0);
	uint64_t config = get64(a, 8), sample = get64(a, 16), sample_type = get64(a, 24);
	uint64_t read_format = get64(a, 32), bits = get64(a, 40), branch = get64(a, 72);
	/* "if (attr->__reserved_1) return -EINVAL;" -- bits 21.. of the flag word:
	 * exclude_callchain_kernel/user (3.7), mmap2 (3.16), comm_exec (3.16), use_clockid (4.1),
	 * context_switch (4.3), write_backward (4.6), namespaces (4.12), ... */
	if (bits & ~L34_FLAGS_KNOWN) {
		*why =
		    "attr flag bits 3.4 reserves (exclude_callchain_kernel 3.7, mmap2 3.16, use_clockid 4.1, "
		    "context_switch 4.3, ...)";
		return -EINVAL;
	}
	/* "if (attr->sample_type & ~(PERF_SAMPLE_MAX-1)) return -EINVAL;" */
	if (sample_type & ~(L34_SAMPLE_MAX - 1)) {
		*why = "sample_type bits past PERF_SAMPLE_BRANCH_STACK (REGS_USER 3.7, ...)";
		return -EINVAL;
	}
	/* "if (attr->read_format & ~(PERF_FORMAT_MAX-1)) return -EINVAL;" */
	if (read_format & ~(L34_FORMAT_MAX - 1)) {
		*why = "read_format bits past PERF_FORMAT_GROUP (PERF_FORMAT_LOST is 6.0)";
		return -EINVAL;
	}
	/* "if (attr->sample_type & PERF_SAMPLE_BRANCH_STACK)": only defined bits, at least one
	 * branch type */
	if (sample_type & L34_SAMPLE_BRANCH_STACK) {
		if (branch & ~(L34_BRANCH_MAX - 1)) {
			*why = "branch_sample_type bits past PERF_SAMPLE_BRANCH_IND_CALL";
			return -EINVAL;
		}
		if (!(branch & ~L34_BRANCH_PLM_ALL)) {
			*why = "branch_sample_type without a branch type";
			return -EINVAL;
		}
	}
	/* (paranoid checks: -EACCES; the host kernel makes the same ones) */
	/* "if (attr.freq) { if (attr.sample_freq > sysctl_perf_event_sample_rate) return -EINVAL; }
	 *  else { if (attr.sample_period & (1ULL << 63)) return -EINVAL; }" -- the rate limit is
	 * the host's sysctl, which the host kernel checks itself */
	if (!(bits & L34_BIT_FREQ) && (sample & (1ull << 63))) {
		*why = "sample_period with bit 63 set";
		return -EINVAL;
	}
	/* perf_event_alloc(): "if ((unsigned)cpu >= nr_cpu_ids) { if (!task || cpu != -1) return
	 * -EINVAL; }" -- left to the host (same rule); then "we currently do not support
	 * PERF_FORMAT_GROUP on inherited events": "if (attr->inherit && (attr->read_format &
	 * PERF_FORMAT_GROUP)) goto done;" with pmu NULL: -EINVAL */
	(void)pid;
	(void)cpu;
	if ((bits & L34_BIT_INHERIT) && (read_format & L34_FORMAT_GROUP)) {
		*why = "inherit with PERF_FORMAT_GROUP (allowed from Linux 4.13)";
		return -EINVAL;
	}
	/* perf_init_event(): idr_find(&pmu_idr, type), else every PMU's event_init; none: -ENOENT.
	 * 3.4's PMUs on the Arndale: software (perf_swevent, cpu_clock, task_clock), tracepoint,
	 * breakpoint, the CPU's (PERF_TYPE_RAW, arch/arm/kernel/perf_event.c); no dynamic types. */
	if (type >= L34_TYPE_MAX) {
		*why = "dynamic PMU type (3.4 registers none on this board)";
		return -ENOENT;
	}
	if (type == 1 /* PERF_TYPE_SOFTWARE */) {
		/* perf_swevent_init(): "no branch sampling for software events"
		 * "if (has_branch_stack(event)) return -EOPNOTSUPP;" */
		if (sample_type & L34_SAMPLE_BRANCH_STACK) {
			*why = "branch stack on a software event";
			return -EOPNOTSUPP;
		}
		/* "if (event_id >= PERF_COUNT_SW_MAX) return -ENOENT;" -- DUMMY (9) is 3.12,
		 * BPF_OUTPUT 4.4, CGROUP_SWITCHES 5.13 */
		if (config >= L34_SW_MAX) {
			*why = "software config past EMULATION_FAULTS (PERF_COUNT_SW_DUMMY is Linux 3.12)";
			return -ENOENT;
		}
	}
	/* arch/arm/kernel/perf_event.c at 3.4 (vendor tree), armpmu_event_init() ->
	 * map_cpu_event(): PERF_TYPE_HARDWARE through armpmu_map_event(): "if (config >=
	 * PERF_COUNT_HW_MAX) return -ENOENT;"; PERF_TYPE_HW_CACHE through armpmu_map_cache_event():
	 * a cache type, op or result out of range: -EINVAL. Which events the core maps, and raw
	 * events (config & raw_event_mask, never refused), are the PMU's: the host kernel answers
	 * (with no PMU, -ENOENT, as 3.4 without one). */
	if (type == 0 /* PERF_TYPE_HARDWARE */ && config >= 10 /* PERF_COUNT_HW_MAX */) {
		*why = "hardware config past PERF_COUNT_HW_REF_CPU_CYCLES (armpmu_map_event)";
		return -ENOENT;
	}
	if (type == 3 /* PERF_TYPE_HW_CACHE */ &&
	    ((config & 0xff) >= 7 || ((config >> 8) & 0xff) >= 3 || ((config >> 16) & 0xff) >= 2)) {
		*why = "cache event fields out of range (armpmu_map_cache_event)";
		return -EINVAL;
	}
	return 0;
}

int l34_perf_ioctl_check(unsigned long cmd)
{
	/* kernel/events/core.c perf_ioctl(): ENABLE, DISABLE, REFRESH, RESET, PERIOD, SET_OUTPUT,
	 * SET_FILTER ('$' 0..6), "default: return -ENOTTY;" (ID 3.12, SET_BPF 4.1,
	 * PAUSE_OUTPUT 4.7, QUERY_BPF 4.16, MODIFY_ATTRIBUTES 4.17) */
	if (((cmd >> 8) & 0xff) != '$')
		return 0;
	return (cmd & 0xff) <= 6 ? 0 : -ENOTTY;
}

/* ------------------------------------------------------------------ files */

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

bool l34_path_exists(const char *path, unsigned opts)
{
	if (!path || path[0] != '/')
		return true;
	/* kernel/bpf/sysfs_btf.c (Linux 5.4) */
	if (has_prefix(path, "/sys/kernel/btf"))
		return false;
	/* kernel/events/core.c at 3.4: pmu_bus .dev_attrs = pmu_dev_attrs = { __ATTR_RO(type) };
	 * pmu_dev_alloc() adds pmu->attr_groups, which 3.4's ARM CPU PMU and software PMUs
	 * leave empty (format/events groups came with later PMU drivers). A device directory
	 * holds type, and the driver core's uevent, subsystem, power. */
	/* arch/arm/kernel/perf_event.c at 3.4, init_hw_perf_events(): armpmu_register(cpu_pmu,
	 * "cpu", PERF_TYPE_RAW): the CPU PMU (one, the boot CPU's type) is "cpu"; the
	 * armv7_cortex_a15-style names came later */
	if (has_prefix(path, "/sys/bus/event_source/devices/armv") || has_prefix(path, "/sys/devices/armv"))
		return false;
	static const char *pmu_dirs[] = {"/sys/bus/event_source/devices/", "/sys/devices/"};
	for (size_t i = 0; i < sizeof(pmu_dirs) / sizeof(pmu_dirs[0]); i++) {
		if (!has_prefix(path, pmu_dirs[i]))
			continue;
		const char *rest = path + strlen(pmu_dirs[i]);
		const char *slash = strchr(rest, '/');
		if (!slash || !slash[1])
			return true; /* the PMU's directory itself */
		const char *leaf = slash + 1;
		/* only event_source devices: /sys/devices/<pmu>/ is where they live too (cpu,
		 * software, tracepoint, breakpoint, armv7_cortex_a15...), but /sys/devices/system
		 * and the platform tree are not PMUs */
		if (i == 1) {
			size_t n = (size_t)(slash - rest);
			static const char *pmus[] = {
			    "software",		"tracepoint",	  "breakpoint", "cpu",
			    "kprobe",		"uprobe",	  "msr",	"power",
			    "armv7_cortex_a15", "armv7_cortex_a7"};
			bool is_pmu = false;
			for (size_t k = 0; k < sizeof(pmus) / sizeof(pmus[0]); k++)
				if (strlen(pmus[k]) == n && strncmp(rest, pmus[k], n) == 0)
					is_pmu = true;
			if (!is_pmu)
				continue;
		}
		static const char *kept[] = {"type", "uevent", "subsystem", "power"};
		for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++) {
			size_t n = strlen(kept[k]);
			if (strncmp(leaf, kept[k], n) == 0 && (leaf[n] == '\0' || leaf[n] == '/'))
				return true;
		}
		return false;
	}
	/* drivers/base/cacheinfo.c (Linux 3.19): ARM had no cpuN/cache before it */
	if ((opts & L34_NO_CPU_CACHES) && has_prefix(path, "/sys/devices/system/cpu/cpu")) {
		const char *p = path + strlen("/sys/devices/system/cpu/cpu");
		while (*p >= '0' && *p <= '9')
			p++;
		if (has_prefix(p, "/cache"))
			return false;
	}
	/* kernel/sysctl.c: perf_cpu_time_max_percent (3.11), perf_event_max_stack (4.8),
	 * perf_event_max_contexts_per_stack (4.8) */
	if (has_prefix(path, "/proc/sys/kernel/perf_cpu_time_max_percent") ||
	    has_prefix(path, "/proc/sys/kernel/perf_event_max_stack") ||
	    has_prefix(path, "/proc/sys/kernel/perf_event_max_contexts_per_stack"))
		return false;
	return true;
}

bool l34_is_proc_status(const char *path)
{
	const char *p = has_prefix(path, "/proc/") ? path + strlen("/proc/") : NULL;
	if (!p)
		return false;
	for (int part = 0; part < 2; part++) {
		if (part == 0 && has_prefix(p, "self/"))
			p += strlen("self/");
		else {
			size_t n = strspn(p, "0123456789");
			if (n == 0 || p[n] != '/')
				return false;
			p += n + 1;
		}
		if (strcmp(p, "status") == 0)
			return true;
		if (part == 0 && has_prefix(p, "task/"))
			p += strlen("task/");
		else
			return false;
	}
	return false;
}

size_t l34_proc_status(char *buf, size_t len)
{
	size_t out = 0;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) + 1 : len - i;
		bool drop = (n >= 8 && memcmp(buf + i, "Seccomp:", 8) == 0) ||
			    (n >= 16 && memcmp(buf + i, "Seccomp_filters:", 16) == 0);
		if (!drop) {
			memmove(buf + out, buf + i, n);
			out += n;
		}
		i += n;
	}
	return out;
}
