/* The Linux 3.4 personality's rules (tests/lib/linux34.c): perf_event_open's answers for the
 * attributes this agent and newer ones build, the syscall tables, the perf ioctls. The
 * expected answers are 3.4's, read from its kernel/events/core.c (cited in linux34.c); the
 * attrs are built with this machine's <linux/perf_event.h>, as the agent builds them. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include <cmocka.h>

#include "linux34.h"

static int check(const struct perf_event_attr *a, unsigned long flags, uint32_t *size_back)
{
	uint8_t buf[4096];
	memset(buf, 0, sizeof(buf));
	memcpy(buf, a, sizeof(*a));
	uint32_t sb = 0;
	int rc = l34_perf_event_open_check(buf, sizeof(buf), 0, -1, flags, &sb, NULL);
	if (size_back)
		*size_back = sb;
	return rc;
}

static void sw(struct perf_event_attr *a, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = config;
}

/* What 3.4 accepted goes on to the kernel: counting and sampling software events with
 * today's attr size (the bytes past 3.4's 80 are zero), the 3.4 flags. */
static void test_linux34_accepts_what_34_knew(void **state)
{
	(void)state;
	struct perf_event_attr a;
	sw(&a, PERF_COUNT_SW_TASK_CLOCK);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.disabled = 1;
	a.inherit = 1;
	a.enable_on_exec = 1;
	a.exclude_kernel = 1;
	assert_int_equal(check(&a, 0, NULL), 0);
	sw(&a, PERF_COUNT_SW_CPU_CLOCK);
	a.freq = 1;
	a.sample_freq = 99;
	a.sample_type =
	    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	a.mmap = 1;
	a.watermark = 1;
	a.sample_id_all = 1;
	a.exclude_guest = 1; /* bit 20, the last 3.4 knew */
	assert_int_equal(check(&a, PERF_FLAG_FD_OUTPUT, NULL), 0);
	/* size 0 means PERF_ATTR_SIZE_VER0; sizes 64 and 72 too */
	a.size = 0;
	assert_int_equal(check(&a, 0, NULL), 0);
	a.size = PERF_ATTR_SIZE_VER1;
	assert_int_equal(check(&a, 0, NULL), 0);
	/* hardware, cache and raw events in range: the PMU's (the host kernel's) answer */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_REF_CPU_CYCLES;
	assert_int_equal(check(&a, 0, NULL), 0);
	a.type = PERF_TYPE_HW_CACHE;
	a.config = PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
		   (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	assert_int_equal(check(&a, 0, NULL), 0);
	a.type = PERF_TYPE_RAW;
	a.config = 0x11;
	assert_int_equal(check(&a, 0, NULL), 0);
}

/* The refusals the agent meets, each with 3.4's errno. */
static void test_linux34_refuses_what_came_later(void **state)
{
	(void)state;
	struct perf_event_attr a;
	uint32_t sb;
	sw(&a, PERF_COUNT_SW_TASK_CLOCK);
	/* PERF_FLAG_FD_CLOEXEC (3.14): flags & ~PERF_FLAG_ALL */
	assert_int_equal(check(&a, PERF_FLAG_FD_CLOEXEC, NULL), -EINVAL);
	/* PERF_COUNT_SW_DUMMY (3.12): perf_swevent_init: event_id >= PERF_COUNT_SW_MAX */
	sw(&a, PERF_COUNT_SW_DUMMY);
	assert_int_equal(check(&a, 0, NULL), -ENOENT);
	/* __reserved_1: exclude_callchain_kernel (3.7), mmap2 (3.16), use_clockid (4.1),
	 * context_switch (4.3) */
	sw(&a, PERF_COUNT_SW_CPU_CLOCK);
	a.exclude_callchain_kernel = 1;
	assert_int_equal(check(&a, 0, NULL), -EINVAL);
	sw(&a, PERF_COUNT_SW_CPU_CLOCK);
	a.mmap = 1;
	a.mmap2 = 1;
	assert_int_equal(check(&a, 0, NULL), -EINVAL);
	sw(&a, PERF_COUNT_SW_CPU_CLOCK);
	a.context_switch = 1;
	assert_int_equal(check(&a, 0, NULL), -EINVAL);
	/* use_clockid also sets clockid, at byte 92 (past 80): the size check comes first */
	sw(&a, PERF_COUNT_SW_CPU_CLOCK);
	a.use_clockid = 1;
	a.clockid = 1;
	assert_int_equal(check(&a, 0, &sb), -E2BIG);
	assert_int_equal(sb, 80);
	a.clockid = 0;
	assert_int_equal(check(&a, 0, NULL), -EINVAL);
	/* sample_type past PERF_SAMPLE_BRANCH_STACK, read_format past GROUP */
	sw(&a, PERF_COUNT_SW_CPU_CLOCK);
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_IDENTIFIER;
	assert_int_equal(check(&a, 0, NULL), -EINVAL);
	sw(&a, PERF_COUNT_SW_CPU_CLOCK);
	a.read_format = PERF_FORMAT_ID | (1u << 4) /* PERF_FORMAT_LOST, 6.0 */;
	assert_int_equal(check(&a, 0, NULL), -EINVAL);
	/* inherit + PERF_FORMAT_GROUP: perf_event_alloc "we currently do not support" */
	sw(&a, PERF_COUNT_SW_TASK_CLOCK);
	a.inherit = 1;
	a.read_format = PERF_FORMAT_GROUP;
	assert_int_equal(check(&a, 0, NULL), -EINVAL);
	a.inherit = 0;
	assert_int_equal(check(&a, 0, NULL), 0);
	/* sizes: under VER0 and over PAGE_SIZE are E2BIG, with 80 written back */
	sw(&a, PERF_COUNT_SW_TASK_CLOCK);
	a.size = 48;
	sb = 0;
	assert_int_equal(check(&a, 0, &sb), -E2BIG);
	assert_int_equal(sb, 80);
	a.size = 8192;
	assert_int_equal(check(&a, 0, NULL), -E2BIG);
	/* sample_regs_user (3.7) past byte 80 */
	sw(&a, PERF_COUNT_SW_CPU_CLOCK);
	a.sample_regs_user = 1;
	assert_int_equal(check(&a, 0, NULL), -E2BIG);
	/* hardware config past PERF_COUNT_HW_MAX (10), cache fields out of range */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = 10;
	assert_int_equal(check(&a, 0, NULL), -ENOENT);
	a.type = PERF_TYPE_HW_CACHE;
	a.config = 7; /* PERF_COUNT_HW_CACHE_MAX in 3.4 */
	assert_int_equal(check(&a, 0, NULL), -EINVAL);
	/* a dynamic PMU type (kprobe, uprobe, ...): none on 3.4's board */
	sw(&a, 0);
	a.type = 8;
	assert_int_equal(check(&a, 0, NULL), -ENOENT);
	/* branch stack on a software event */
	sw(&a, PERF_COUNT_SW_CPU_CLOCK);
	a.sample_type = PERF_SAMPLE_BRANCH_STACK;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	assert_int_equal(check(&a, 0, NULL), -EOPNOTSUPP);
	a.branch_sample_type = PERF_SAMPLE_BRANCH_USER; /* no branch type */
	assert_int_equal(check(&a, 0, NULL), -EINVAL);
	/* unreadable attr */
	assert_int_equal(l34_perf_event_open_check(NULL, 0, 0, -1, 0, &sb, NULL), -EFAULT);
}

static void test_linux34_syscall_tables(void **state)
{
	(void)state;
	/* x86_64: 311 process_vm_writev the last; getrandom 318, bpf 321, pidfd_open 434, clone3 435 */
	assert_true(l34_has_syscall(L34_X86_64, 0));
	assert_true(l34_has_syscall(L34_X86_64, 298)); /* perf_event_open */
	assert_true(l34_has_syscall(L34_X86_64, 311));
	assert_false(l34_has_syscall(L34_X86_64, 312));
	assert_false(l34_has_syscall(L34_X86_64, 318));
	assert_string_equal(l34_syscall_name(L34_X86_64, 318), "getrandom");
	assert_string_equal(l34_syscall_name(L34_X86_64, 321), "bpf");
	assert_string_equal(l34_syscall_name(L34_X86_64, 434), "pidfd_open");
	assert_string_equal(l34_syscall_name(L34_X86_64, 435), "clone3");
	assert_null(l34_syscall_name(L34_X86_64, 1));
	/* ARM EABI: 377 process_vm_writev the last; 364 perf_event_open; the ARM-private calls;
	 * getrandom 384, the time64 calls (5.1) */
	assert_true(l34_has_syscall(L34_ARM, 364));
	assert_true(l34_has_syscall(L34_ARM, 377));
	assert_false(l34_has_syscall(L34_ARM, 378));
	assert_true(l34_has_syscall(L34_ARM, 0xf0005));
	assert_false(l34_has_syscall(L34_ARM, 0xf0006));
	assert_false(l34_has_syscall(L34_ARM, 403));
	assert_string_equal(l34_syscall_name(L34_ARM, 403), "clock_gettime64");
	assert_string_equal(l34_syscall_name(L34_ARM, 384), "getrandom");
}

static void test_linux34_perf_ioctls(void **state)
{
	(void)state;
	assert_int_equal(l34_perf_ioctl_check(PERF_EVENT_IOC_ENABLE), 0);
	assert_int_equal(l34_perf_ioctl_check(PERF_EVENT_IOC_SET_OUTPUT), 0);
	assert_int_equal(l34_perf_ioctl_check(PERF_EVENT_IOC_SET_FILTER), 0);
	assert_int_equal(l34_perf_ioctl_check(PERF_EVENT_IOC_ID), -ENOTTY);
	assert_int_equal(l34_perf_ioctl_check(PERF_EVENT_IOC_SET_BPF), -ENOTTY);
	assert_int_equal(l34_perf_ioctl_check(PERF_EVENT_IOC_PAUSE_OUTPUT), -ENOTTY);
	assert_int_equal(l34_perf_ioctl_check(FIONREAD), 0); /* not a perf ioctl */
}

/* Files: the sysfs/procfs entries later kernels added are absent; the rest is the host's. */
static void test_linux34_paths(void **state)
{
	(void)state;
	assert_false(l34_path_exists("/sys/kernel/btf/vmlinux", 0));
	assert_true(l34_path_exists("/sys/bus/event_source/devices/software", 0));
	assert_true(l34_path_exists("/sys/bus/event_source/devices/software/", 0));
	assert_true(l34_path_exists("/sys/bus/event_source/devices/cpu/type", 0));
	assert_false(l34_path_exists("/sys/bus/event_source/devices/cpu/events/cpu-cycles", 0));
	/* 3.4's ARM CPU PMU is "cpu": no armv7_cortex_a15 directory at all */
	assert_false(l34_path_exists("/sys/bus/event_source/devices/armv7_cortex_a15", 0));
	assert_false(l34_path_exists("/sys/bus/event_source/devices/armv7_cortex_a15/type", 0));
	assert_false(l34_path_exists("/sys/bus/event_source/devices/armv7_cortex_a15/events", 0));
	assert_false(l34_path_exists("/sys/bus/event_source/devices/armv7_cortex_a15/events/cpu_cycles", 0));
	assert_false(l34_path_exists("/sys/bus/event_source/devices/cpu/format/event", 0));
	assert_false(l34_path_exists("/sys/bus/event_source/devices/software/perf_event_mux_interval_ms", 0));
	assert_true(l34_path_exists("/sys/devices/software/type", 0));
	assert_false(l34_path_exists("/sys/devices/armv7_cortex_a7/events", 0));
	assert_true(l34_path_exists("/sys/devices/system/cpu/online", 0));
	assert_true(l34_path_exists("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", 0));
	assert_true(l34_path_exists("/sys/devices/system/cpu/cpu0/cache/index0/size", 0));
	assert_false(l34_path_exists("/sys/devices/system/cpu/cpu0/cache/index0/size", L34_NO_CPU_CACHES));
	assert_false(l34_path_exists("/sys/devices/system/cpu/cpu12/cache", L34_NO_CPU_CACHES));
	assert_true(l34_path_exists("/sys/devices/system/cpu/cpu0/cpufreq", L34_NO_CPU_CACHES));
	assert_true(l34_path_exists("/sys/devices/platform/foo/events", 0));
	assert_false(l34_path_exists("/proc/sys/kernel/perf_cpu_time_max_percent", 0));
	assert_true(l34_path_exists("/proc/sys/kernel/perf_event_paranoid", 0));
	assert_true(l34_path_exists("/proc/sys/kernel/perf_event_max_sample_rate", 0));
	assert_true(l34_path_exists("relative/path", 0));
}

/* /proc/PID/status: 3.4's proc_pid_status() wrote no Seccomp line (task_seccomp(), 3.8). */
static void test_linux34_proc_status(void **state)
{
	(void)state;
	assert_true(l34_is_proc_status("/proc/123/status"));
	assert_true(l34_is_proc_status("/proc/self/status"));
	assert_true(l34_is_proc_status("/proc/123/task/124/status"));
	assert_true(l34_is_proc_status("/proc/self/task/7/status"));
	assert_false(l34_is_proc_status("/proc/123/stat"));
	assert_false(l34_is_proc_status("/proc/123/task/124/stat"));
	assert_false(l34_is_proc_status("/proc/12x/status"));
	assert_false(l34_is_proc_status("/proc/status"));
	assert_false(l34_is_proc_status("/proc/1/task/2/task/3/status"));
	assert_false(l34_is_proc_status("/sys/123/status"));
	char buf[] = "Name:\tbusy\nTracerPid:\t0\nSeccomp:\t2\nSeccomp_filters:\t1\nCpus_allowed:\t1\n";
	size_t n = l34_proc_status(buf, strlen(buf));
	assert_int_equal(n, strlen("Name:\tbusy\nTracerPid:\t0\nCpus_allowed:\t1\n"));
	assert_memory_equal(buf, "Name:\tbusy\nTracerPid:\t0\nCpus_allowed:\t1\n", n);
	char last[] = "Name:\tx\nSeccomp:\t0"; /* no final newline */
	assert_int_equal(l34_proc_status(last, strlen(last)), strlen("Name:\tx\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linux34_accepts_what_34_knew),
		cmocka_unit_test(test_linux34_refuses_what_came_later),
		cmocka_unit_test(test_linux34_syscall_tables),
		cmocka_unit_test(test_linux34_perf_ioctls),
		cmocka_unit_test(test_linux34_paths),
		cmocka_unit_test(test_linux34_proc_status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
