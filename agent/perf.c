#include "perf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "pmu_sysfs.h"
#include "proc_tasks.h"

#define READ_FMT (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

struct perf_counters {
	size_t nev;
	size_t ngroups;
	bool grouped;  /* true: fds[g * nev] is the leader of group g */
	int *fds;      /* ngroups * nev, -1 where unused */
	uint64_t *buf; /* read buffer */
};

static long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static void fill_attr(struct perf_event_attr *a, const struct event_desc *ev, bool exclude_kernel)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = ev->type;
	a->config = ev->config;
	a->exclude_kernel = exclude_kernel;
	a->exclude_hv = exclude_kernel;
}

/* Set once the kernel has refused PERF_FLAG_FD_CLOEXEC and taken the same attr without it
 * (Linux < 3.14, the Arndale's 3.4): later opens go without the flag at once. */
static int cloexec_flag_refused;

long perf_event_open_cloexec(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	bool tried = false;
	if (!__atomic_load_n(&cloexec_flag_refused, __ATOMIC_RELAXED)) {
		long fd = sys_perf_event_open(a, pid, cpu, group_fd, flags | PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0 || errno != EINVAL)
			return fd;
		tried = true;
	}
	/* Without the flag, close-on-exec set afterwards. A failure now is the attr's own
	 * answer (ENOENT for an event the PMU lacks, ...), not the flag's EINVAL. */
	long fd = sys_perf_event_open(a, pid, cpu, group_fd, flags);
	if (fd < 0)
		return -1;
	if (tried)
		__atomic_store_n(&cloexec_flag_refused, 1, __ATOMIC_RELAXED);
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

/* Open with the kernel's permission in mind: retry without kernel counting
 * when the paranoid level forbids it. */
static int open_attr(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd)
{
	long fd = perf_event_open_cloexec(a, pid, cpu, group_fd, 0);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && !a->exclude_kernel) {
		a->exclude_kernel = 1;
		a->exclude_hv = 1;
		fd = perf_event_open_cloexec(a, pid, cpu, group_fd, 0);
	}
	return fd < 0 ? -errno : (int)fd;
}

/* PERF_TYPE_HARDWARE/RAW events the CPU's PMU does not advertise (issue 30: the kernel
 * opens them and they read 0): -EOPNOTSUPP, with the reason in why. */
int perf_probe_event_why(const struct event_desc *ev, pid_t pid, int cpu, char *why, size_t whylen)
{
	if (whylen)
		why[0] = 0;
	char tmp[512];
	if (pmu_sysfs_advertised(PMU_SYSFS_ROOT, ev, tmp, sizeof(tmp)) == 0) {
		snprintf(why, whylen, "%s", tmp);
		return -EOPNOTSUPP;
	}
	int rc = perf_probe_event(ev, pid, cpu);
	if (rc < 0)
		snprintf(why, whylen, "perf_event_open: %s", strerror(-rc));
	return rc;
}

int perf_probe_event(const struct event_desc *ev, pid_t pid, int cpu)
{
	struct perf_event_attr a;
	fill_attr(&a, ev, false);
	a.disabled = 1;
	int fd = open_attr(&a, pid, cpu, -1);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int perf_group_fits(const struct event_desc *ev, size_t n, pid_t pid, int cpu)
{
	/* The ARM driver's validate_group (drivers/perf/arm_pmu.c; arch/arm/kernel/perf_event.c
	 * in 3.4) skips events in state OFF (a disabled event) when it counts the counters a
	 * group needs: so the leader is a disabled task-clock, which keeps the group from
	 * counting, and the hardware members are opened enabled (state INACTIVE), each one
	 * validated against the others. */
	int fds[EVENTS_MAX + 2];
	size_t k = 0;
	int rc = 0;
	struct event_desc lead;
	events_lookup("task-clock", &lead);
	struct perf_event_attr la;
	fill_attr(&la, &lead, false);
	la.disabled = 1;
	int lfd = open_attr(&la, pid, cpu, -1);
	if (lfd < 0)
		return lfd;
	fds[k++] = lfd;
	for (size_t i = 0; i < n && k < EVENTS_MAX + 2; i++) {
		if (!events_is_hardware(&ev[i]))
			continue;
		struct perf_event_attr a;
		fill_attr(&a, &ev[i], false);
		a.disabled = 0;
		int fd = open_attr(&a, pid, cpu, fds[0]);
		if (fd < 0) {
			rc = fd;
			break;
		}
		fds[k++] = fd;
	}
	while (k)
		close(fds[--k]);
	return rc;
}

int perf_probe_hw(pid_t pid, int cpu)
{
	struct event_desc cyc;
	events_lookup("cycles", &cyc);
	return perf_probe_event(&cyc, pid, cpu);
}

int perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = INT32_MIN;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = INT32_MIN;
		fclose(f);
	}
	return v;
}

void perf_open_error(int rc, pid_t pid, const char *what, char *err, size_t errlen)
{
	if (rc == -EACCES || rc == -EPERM)
		snprintf(err, errlen,
			 "perf_event_open: %s (perf_event_paranoid=%d): run as root or lower "
			 "/proc/sys/kernel/perf_event_paranoid",
			 strerror(-rc), perf_paranoid());
	else if (rc == -ESRCH)
		snprintf(err, errlen, "perf_event_open: target process %d has exited", (int)pid);
	else
		snprintf(err, errlen, "%s: %s", what, strerror(-rc));
}

int perf_online_cpus(int *cpus, size_t max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (!f) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		if (n <= 0)
			return -ENOENT;
		size_t k = 0;
		for (long i = 0; i < n && k < max; i++)
			cpus[k++] = (int)i;
		return (int)k;
	}
	char line[4096];
	size_t k = 0;
	if (fgets(line, sizeof(line), f)) {
		char *save = NULL;
		for (char *tok = strtok_r(line, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
			int a, b;
			int m = sscanf(tok, "%d-%d", &a, &b);
			if (m == 1)
				b = a;
			else if (m != 2)
				continue;
			for (int c = a; c <= b && k < max; c++)
				cpus[k++] = c;
		}
	}
	fclose(f);
	return k ? (int)k : -ENOENT;
}

uint64_t perf_scale(uint64_t value, uint64_t enabled, uint64_t running)
{
	if (running == 0)
		return 0;
	if (running >= enabled)
		return value;
#ifdef __SIZEOF_INT128__
	unsigned __int128 v = (unsigned __int128)value * enabled / running;
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
#else
	/* 32-bit targets: exact quotient part, only the remainder through floating point */
	uint64_t q = value / running, r = value % running;
	if (q && enabled > UINT64_MAX / q)
		return UINT64_MAX;
	uint64_t a = q * enabled;
	double b = (double)r * (double)enabled / (double)running;
	if (b >= 18446744073709551616.0 - (double)a)
		return UINT64_MAX;
	return a + (uint64_t)b;
#endif
}

uint32_t perf_running_pct(uint64_t enabled, uint64_t running)
{
	if (enabled == 0 || running >= enabled)
		return 100;
	return (uint32_t)((double)running * 100.0 / (double)enabled);
}

void perf_interval(struct perf_value *prev, const struct perf_value *cur, size_t n, uint64_t *inc, uint32_t *pct)
{
	for (size_t i = 0; i < n; i++) {
		inc[i] = cur[i].scaled > prev[i].scaled ? cur[i].scaled - prev[i].scaled : 0;
		uint64_t de = cur[i].enabled > prev[i].enabled ? cur[i].enabled - prev[i].enabled : 0;
		uint64_t dr = cur[i].running > prev[i].running ? cur[i].running - prev[i].running : 0;
		if (pct)
			pct[i] = perf_running_pct(de, dr);
		uint64_t keep = prev[i].scaled > cur[i].scaled ? prev[i].scaled : cur[i].scaled;
		prev[i] = cur[i];
		prev[i].scaled = keep;
	}
}

size_t perf_default_events(pid_t pid, int cpu, struct event_desc *out, size_t max, bool *fell_back, char *msg,
			   size_t msglen)
{
	int rc = perf_probe_hw(pid, cpu);
	if (rc == 0) {
		/* A PMU that has cycles may still lack others (emulated PMUs, small cores):
		 * keep the defaults that open, and say which did not. */
		*fell_back = false;
		if (msglen)
			msg[0] = 0;
		size_t n = events_default_hw(out, max), k = 0, off = 0;
		for (size_t i = 0; i < n; i++) {
			char why[512];
			int erc = perf_probe_event_why(&out[i], pid, cpu, why, sizeof(why));
			if (erc == 0) {
				out[k++] = out[i];
			} else if (off < msglen) {
				off += (size_t)snprintf(msg + off, msglen - off, "%s%s (%s)",
							off ? ", " : "default events not counted here: ", out[i].name,
							erc == -EOPNOTSUPP ? "not advertised by this CPU's PMU" : strerror(-erc));
			}
		}
		return k;
	}
	*fell_back = true;
	snprintf(msg, msglen, "hardware counters unsupported (perf_event_open cycles: %s), using software events: %s",
		 strerror(-rc), events_default_sw_names());
	return events_default_sw(out, max);
}

int perf_filter_supported(struct event_desc *ev, size_t *n, pid_t pid, int cpu, char *err, size_t errlen)
{
	size_t k = 0;
	char first_err[600] = "";
	int hw = 1; /* cycles probe, done once when a hardware event fails */
	for (size_t i = 0; i < *n; i++) {
		char why[512];
		int rc = perf_probe_event_why(&ev[i], pid, cpu, why, sizeof(why));
		if (rc < 0) {
			/* "the PMU may be missing" only when cycles cannot be opened either (issue 30, 4) */
			if (hw == 1 && events_is_hardware(&ev[i]) && rc != -EOPNOTSUPP)
				hw = perf_probe_hw(pid, cpu) == 0 ? 0 : -1;
			log_warn("event '%s' is not supported here (%s)%s: dropped", ev[i].name, why,
				 hw < 0 && events_is_hardware(&ev[i]) && rc != -EOPNOTSUPP
					 ? "; the hardware PMU is missing (cycles does not open either)"
				 : events_is_hardware(&ev[i]) && rc != -EOPNOTSUPP
					 ? "; cycles opens: this core or its kernel driver lacks this event"
					 : "");
			if (!first_err[0])
				snprintf(first_err, sizeof(first_err), "%s: %s", ev[i].name, why);
			continue;
		}
		ev[k++] = ev[i];
	}
	*n = k;
	if (k == 0) {
		snprintf(err, errlen,
			 "none of the requested events can be counted here (%s); try software events such as -e %s",
			 first_err, "task-clock,page-faults,context-switches,cpu-migrations");
		return -ENOENT;
	}
	return 0;
}

/* Open one group (or nev single fds) on (pid, cpu). fds gets nev entries.
 * Returns 0 or -errno; on error nothing stays open. */
static int open_one(const struct event_desc *ev, size_t nev, pid_t pid, int cpu, bool inherit, bool on_exec,
		    bool grouped, int *fds)
{
	for (size_t i = 0; i < nev; i++)
		fds[i] = -1;
	for (size_t i = 0; i < nev; i++) {
		struct perf_event_attr a;
		fill_attr(&a, &ev[i], false);
		a.inherit = inherit;
		if (grouped) {
			a.read_format = READ_FMT | PERF_FORMAT_GROUP;
			a.disabled = i == 0;
			a.enable_on_exec = i == 0 && on_exec;
		} else {
			a.read_format = READ_FMT;
			a.disabled = 1;
			a.enable_on_exec = on_exec;
		}
		int fd = open_attr(&a, pid, cpu, grouped && i > 0 ? fds[0] : -1);
		if (fd < 0) {
			for (size_t j = 0; j < i; j++)
				close(fds[j]);
			for (size_t j = 0; j < nev; j++)
				fds[j] = -1;
			return fd;
		}
		fds[i] = fd;
	}
	return 0;
}

static void close_all(struct perf_counters *pc)
{
	for (size_t i = 0; i < pc->ngroups * pc->nev; i++)
		if (pc->fds[i] >= 0)
			close(pc->fds[i]);
}

int perf_counters_open(const struct event_desc *ev, size_t nev, const struct perf_target *target,
		       struct perf_counters **out, char *err, size_t errlen)
{
	*out = NULL;
	if (nev == 0 || nev > EVENTS_MAX) {
		snprintf(err, errlen, "need 1..%u events", EVENTS_MAX);
		return -EINVAL;
	}
	pid_t *pids = NULL;
	int *cpus = NULL;
	size_t nt = 0;
	int rc = 0;
	bool inherit = target->kind != PERF_TARGET_SYSTEM;
	bool on_exec = target->kind == PERF_TARGET_EXEC;
	if (target->kind == PERF_TARGET_PID) {
		rc = proc_list_tids(target->pid, &pids, &nt);
		if (rc < 0) {
			snprintf(err, errlen, "process %d not found (/proc/%d/task: %s)", (int)target->pid,
				 (int)target->pid, strerror(-rc));
			return rc;
		}
	} else if (target->kind == PERF_TARGET_SYSTEM) {
		cpus = malloc(4096 * sizeof(*cpus));
		if (!cpus)
			return -ENOMEM;
		int n = perf_online_cpus(cpus, 4096);
		if (n < 0) {
			free(cpus);
			snprintf(err, errlen, "cannot list online CPUs");
			return n;
		}
		nt = (size_t)n;
	} else {
		pids = malloc(sizeof(*pids));
		if (!pids)
			return -ENOMEM;
		pids[0] = target->pid;
		nt = 1;
	}

	struct perf_counters *pc = calloc(1, sizeof(*pc));
	if (!pc) {
		rc = -ENOMEM;
		goto out;
	}
	pc->nev = nev;
	pc->fds = malloc(nt * nev * sizeof(int));
	pc->buf = malloc((3 + 2 * nev) * sizeof(uint64_t));
	if (!pc->fds || !pc->buf) {
		rc = -ENOMEM;
		goto fail;
	}
	pc->grouped = !target->no_group;
	for (int attempt = 0; attempt < 2; attempt++) {
		pc->ngroups = 0;
		rc = 0;
		for (size_t g = 0; g < nt; g++) {
			pid_t pid = cpus ? -1 : pids[g];
			int cpu = cpus ? cpus[g] : -1;
			int *fds = pc->fds + pc->ngroups * nev;
			rc = open_one(ev, nev, pid, cpu, inherit, on_exec, pc->grouped, fds);
			if (rc == -ESRCH && target->kind == PERF_TARGET_PID && nt > 1) {
				rc = 0; /* that thread exited meanwhile */
				continue;
			}
			if (rc < 0)
				break;
			pc->ngroups++;
		}
		if (rc == 0 && pc->ngroups > 0)
			break;
		close_all(pc);
		pc->ngroups = 0;
		if (rc == -ESRCH || rc == -EACCES || rc == -EPERM || !pc->grouped)
			break;
		/* The kernel refused the group (e.g. inherit with group read on
		 * old kernels, or a member that cannot join): one fd per event. */
		log_debug("counting group refused (%s); opening one fd per event", strerror(-rc));
		pc->grouped = false;
	}
	if (rc == 0 && pc->ngroups == 0)
		rc = -ESRCH;
	if (rc < 0) {
		perf_open_error(rc, target->pid, "perf_event_open", err, errlen);
		goto fail;
	}
	if (target->kind != PERF_TARGET_EXEC) {
		for (size_t g = 0; g < pc->ngroups; g++) {
			for (size_t i = 0; i < nev; i++) {
				int fd = pc->fds[g * nev + i];
				if (pc->grouped && i > 0)
					continue;
				if (ioctl(fd, PERF_EVENT_IOC_ENABLE, pc->grouped ? PERF_IOC_FLAG_GROUP : 0) < 0) {
					rc = -errno;
					snprintf(err, errlen, "enabling counters: %s", strerror(errno));
					close_all(pc);
					goto fail;
				}
			}
		}
	}
	*out = pc;
	goto out;
fail:
	free(pc->fds);
	free(pc->buf);
	free(pc);
out:
	free(pids);
	free(cpus);
	return rc;
}

int perf_counters_read(struct perf_counters *pc, struct perf_value *vals)
{
	memset(vals, 0, pc->nev * sizeof(*vals));
	size_t nev = pc->nev;
	for (size_t g = 0; g < pc->ngroups; g++) {
		int *fds = pc->fds + g * nev;
		if (pc->grouped) {
			size_t want = (3 + nev) * sizeof(uint64_t);
			ssize_t r = read(fds[0], pc->buf, want);
			if (r < 0)
				return -errno;
			if ((size_t)r < want || pc->buf[0] != nev)
				return -EIO;
			uint64_t en = pc->buf[1], ru = pc->buf[2];
			for (size_t i = 0; i < nev; i++) {
				uint64_t v = pc->buf[3 + i];
				vals[i].raw += v;
				vals[i].scaled += perf_scale(v, en, ru);
				vals[i].enabled += en;
				vals[i].running += ru;
			}
		} else {
			for (size_t i = 0; i < nev; i++) {
				ssize_t r = read(fds[i], pc->buf, 3 * sizeof(uint64_t));
				if (r < 0)
					return -errno;
				if ((size_t)r < 3 * sizeof(uint64_t))
					return -EIO;
				vals[i].raw += pc->buf[0];
				vals[i].scaled += perf_scale(pc->buf[0], pc->buf[1], pc->buf[2]);
				vals[i].enabled += pc->buf[1];
				vals[i].running += pc->buf[2];
			}
		}
	}
	return 0;
}

int perf_counters_disable(struct perf_counters *pc)
{
	int rc = 0;
	for (size_t g = 0; g < pc->ngroups; g++)
		for (size_t i = 0; i < pc->nev; i++) {
			if (pc->grouped && i > 0)
				continue;
			if (ioctl(pc->fds[g * pc->nev + i], PERF_EVENT_IOC_DISABLE,
				  pc->grouped ? PERF_IOC_FLAG_GROUP : 0) < 0)
				rc = -errno;
		}
	return rc;
}

void perf_counters_close(struct perf_counters *pc)
{
	if (!pc)
		return;
	close_all(pc);
	free(pc->fds);
	free(pc->buf);
	free(pc);
}

size_t perf_counters_nfds(const struct perf_counters *pc)
{
	return pc->ngroups * pc->nev;
}

bool perf_counters_grouped(const struct perf_counters *pc)
{
	return pc->grouped;
}

size_t perf_counters_ngroups(const struct perf_counters *pc)
{
	return pc->ngroups;
}
