/* Linux 3.4's answers, for the old-kernel personality (tests/linux34/, the interposer
 * `linux34`): which system calls 3.4 had, and what its perf_event_open said about an
 * attribute before any PMU saw it. Pure functions: no I/O, no ptrace.
 *
 * Sources (3.4.89, the Exynos 5420 vendor tree exynos5420/android_kernel_samsung_exynos5420,
 * which the Arndale Octa's 3.4 shares in these files):
 *   kernel/events/core.c  SYSCALL_DEFINE5(perf_event_open), perf_copy_attr(),
 *                         perf_event_alloc(), perf_init_event(), perf_swevent_init()
 *   include/linux/perf_event.h  struct perf_event_attr (80 bytes, PERF_ATTR_SIZE_VER2),
 *                         PERF_SAMPLE_MAX, PERF_FORMAT_MAX, PERF_COUNT_SW_MAX, PERF_FLAG_*
 *   arch/x86/syscalls/syscall_64.tbl, arch/arm/kernel/calls.S  (the syscall tables) */
#ifndef TESTS_LIB_LINUX34_H
#define TESTS_LIB_LINUX34_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* sizeof(struct perf_event_attr) in 3.4: PERF_ATTR_SIZE_VER2 ("add: branch_sample_type"). */
#define L34_ATTR_SIZE 80u

enum l34_arch { L34_X86_64, L34_ARM };

/* Did 3.4 have system call nr on arch? (x86_64: 0..311, process_vm_writev the last;
 * ARM EABI: 0..377 less the slots calls.S fills with sys_ni_syscall, plus the
 * ARM-private 0xf0001..0xf0005.) */
bool l34_has_syscall(enum l34_arch arch, long nr);
/* The syscall's name where this table knows it (the ones 3.4 lacked that programs of
 * 2023 call), else NULL. */
const char *l34_syscall_name(enum l34_arch arch, long nr);

/* perf_event_open(attr, pid, cpu, group_fd, flags) as 3.4 checked it before a PMU's
 * event_init saw the event. attr: the bytes at the user's pointer, avail of them readable
 * (at least the size the attr claims, up to 4096). Returns 0 when 3.4 would go on to the
 * PMUs (and the host kernel may answer), or a negative errno: -EINVAL, -E2BIG (then
 * *size_back = 80, which 3.4 wrote into attr->size), -ENOENT (no 3.4 PMU knows the type or
 * config), -EOPNOTSUPP, -EFAULT. why: a short reason with the 3.4 check, for the log. */
int l34_perf_event_open_check(const uint8_t *attr, size_t avail, int pid, int cpu, unsigned long flags,
			      uint32_t *size_back, const char **why);

/* Did the file or directory at path (absolute, as the program named it) exist on the
 * Arndale's 3.4? false for the sysfs and procfs files later kernels added that the agent
 * (or a library under it) looks at: /sys/kernel/btf (5.4); a PMU's sysfs directory other
 * than type/uevent/subsystem/power (format, events, caps, cpus: 3.4's core.c registers
 * "type" alone, pmu_dev_attrs, and the ARM CPU PMU no attr_groups); PMU directories named
 * armv* (3.4's ARM CPU PMU is "cpu", type PERF_TYPE_RAW);
 * perf_cpu_time_max_percent (3.11), perf_event_max_stack (4.8); with L34_NO_CPU_CACHES
 * also the CPUs' cache directories (ARM had none before drivers/base/cacheinfo.c, 3.19; off
 * by default: x86 OpenCL runtimes such as PoCL, which never run on the board, need them).
 * Anything else: true (left to the host). */
#define L34_NO_CPU_CACHES 1u
bool l34_path_exists(const char *path, unsigned opts);

/* 3.4's perf_ioctl(): ENABLE..SET_FILTER ('$' 0..6) only; any other '$' command: -ENOTTY. */
int l34_perf_ioctl_check(unsigned long cmd);

/* uname()'s release under the personality: 3.4's (the sources above, 3.4.89). */
#define L34_RELEASE "3.4.89"

/* Is path (absolute) a thread's or process's status file, /proc/N/status or
 * /proc/N/task/M/status (N "self" too)? */
bool l34_is_proc_status(const char *path);
/* That file as 3.4 wrote it, from today's text (len bytes of buf, edited in place): the
 * seccomp lines removed ("Seccomp:", fs/proc/array.c task_seccomp(), came in 3.8;
 * "Seccomp_filters:" later; 3.4's proc_pid_status() had neither and 3.4 had no filters).
 * Only these lines are modelled (a program reads them to learn whether a filter is on it).
 * Returns the new length. */
size_t l34_proc_status(char *buf, size_t len);

#endif
