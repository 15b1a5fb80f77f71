/* Counting perf events as a loop source (counter_source.h). */
#include "counter_source.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "log.h"
#include "net.h"
#include "perf.h"
#include "pmu_events.h"
#include "record.h"

/* PMU event names the roofline's CPU dot uses (collector/report/work_model.c),
 * added to the defaults when this CPU's table knows them and the kernel opens them. */
static const char *const roofline_names[] = {"VFP_SPEC", "ASE_SPEC", "L2D_CACHE_REFILL", "L2D_CACHE_WB"};

struct counter_source {
	struct counter_source_opts o;
	struct event_desc ev[EVENTS_MAX];
	size_t nev;
	bool user_events;
	size_t nadded; /* roofline events appended to the defaults (the last nadded of ev) */
	struct perf_counters *pc;
	struct perf_value prev[EVENTS_MAX];
	struct perf_value last[EVENTS_MAX];
	uint64_t totals[EVENTS_MAX];
	uint64_t rows;
	uint64_t drop_gen;
	struct record_builder rb;
	struct session *s;
	struct loop_timer timer;
	uint64_t start_ns;
	bool header_printed;
};

int counter_source_new(struct counter_source **out, const struct counter_source_opts *o, char *err, size_t errlen)
{
	struct counter_source *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->o = *o;
	if (c->o.interval_ms == 0)
		c->o.interval_ms = 1000;
	if (o->events) {
		if (events_parse_here(o->events, c->ev, EVENTS_MAX, &c->nev, err, errlen) < 0) {
			free(c);
			return -EINVAL;
		}
		c->user_events = true;
	}
	*out = c;
	return 0;
}

/* Append the roofline events this machine can count on the target. */
static void add_roofline_events(struct counter_source *c, pid_t pid, int cpu)
{
	size_t added = 0;
	for (size_t i = 0; i < sizeof(roofline_names) / sizeof(roofline_names[0]) && c->nev < EVENTS_MAX; i++) {
		struct event_desc e;
		size_t n = 0;
		char err[512];
		if (events_parse_here(roofline_names[i], &e, 1, &n, err, sizeof(err)) < 0 || n != 1)
			continue;
		if (perf_probe_event(&e, pid, cpu) < 0)
			continue;
		c->ev[c->nev++] = e;
		added++;
	}
	c->nadded = added;
	log_debug("counters: %zu roofline event(s) added to the defaults", added);
}

/* Keep the hardware events and `other` (the sampler's event) within the PMU's
 * counters: drop the roofline extras from the end while the kernel refuses them as
 * one group; user-named events are kept, with a warning that they will be multiplexed. */
static void fit_next_to(struct counter_source *c, const struct event_desc *other, pid_t pid, int cpu)
{
	struct event_desc all[EVENTS_MAX + 1];
	for (;;) {
		memcpy(all, c->ev, c->nev * sizeof(all[0]));
		all[c->nev] = *other;
		int rc = perf_group_fits(all, c->nev + 1, pid, cpu);
		if (rc == 0)
			return;
		if (c->user_events || c->nadded == 0) {
			log_warn("counters: the hardware events and the sampler's %s do not fit in this PMU's counters "
				 "at once (%s): the kernel will multiplex them (see the %% of time counted)",
				 other->name, strerror(-rc));
			return;
		}
		c->nev--;
		c->nadded--;
		log_info("counters: %s left out: with the sampler's %s it does not fit in this PMU's counters",
			 c->ev[c->nev].name, other->name);
	}
}

int counter_source_open(struct counter_source *c, struct target *t, struct session *s, char *err, size_t errlen)
{
	enum target_kind kind = target_kind(t);
	pid_t pid = target_pid(t);
	int probe_cpu = -1;
	c->s = s;
	err[0] = '\0';
	if (kind == TARGET_SYSTEM) {
		int cpus[1];
		probe_cpu = perf_online_cpus(cpus, 1) > 0 ? cpus[0] : 0;
	}
	if (c->user_events) {
		if (perf_filter_supported(c->ev, &c->nev, pid, probe_cpu, err, errlen) < 0)
			return -EINVAL;
	} else {
		bool fell_back = false;
		c->nev = perf_default_events(pid, probe_cpu, c->ev, EVENTS_MAX, &fell_back, err, errlen);
		if (err[0])
			log_warn("%s", err); /* software fallback, or defaults the PMU lacks */
		if (c->nev == 0) {
			snprintf(err, errlen, "no default event can be counted here: name events with -e");
			return -ENOENT;
		}
		if (c->o.roofline_events && !fell_back)
			add_roofline_events(c, pid, probe_cpu);
	}
	if (c->o.share_pmu)
		fit_next_to(c, c->o.share_pmu, pid, probe_cpu);
	struct perf_target pt = {
		.kind = kind == TARGET_SYSTEM ? PERF_TARGET_SYSTEM : kind == TARGET_EXEC ? PERF_TARGET_EXEC
											 : PERF_TARGET_PID,
		.pid = pid,
	};
	int rc = perf_counters_open(c->ev, c->nev, &pt, &c->pc, err, errlen);
	if (rc < 0)
		return rc;
	record_builder_init(&c->rb, session_base_ns(s), kind == TARGET_SYSTEM ? -1 : (int32_t)pid, c->ev, c->nev,
			    session_max_frame(s));
	log_debug("counting %zu event(s) in %zu group(s) (%s)", c->nev, perf_counters_ngroups(c->pc),
		  perf_counters_grouped(c->pc) ? "grouped read" : "one fd per event");
	return 0;
}

/* perf stat -I: "  time  count  unit event" per event. */
static void print_row(struct counter_source *c, uint64_t now, const uint64_t *inc, const uint32_t *pct)
{
	FILE *f = c->o.interval_out;
	if (!c->header_printed) {
		fprintf(f, "#%14s %20s %-5s %s\n", "time", "counts", "unit", "events");
		c->header_printed = true;
	}
	double t = (double)(now - c->start_ns) / 1e9;
	for (size_t i = 0; i < c->nev; i++) {
		char extra[32] = "";
		if (pct[i] < 100)
			snprintf(extra, sizeof(extra), "  (%u%%)", pct[i]);
		if (events_is_time(&c->ev[i]))
			fprintf(f, "%15.9f %20.2f %-5s %s%s\n", t, (double)inc[i] / 1e6, "msec", c->ev[i].name, extra);
		else
			fprintf(f, "%15.9f %20llu %-5s %s%s\n", t, (unsigned long long)inc[i], "", c->ev[i].name, extra);
	}
	fflush(f);
}

static int take_row(struct counter_source *c, uint64_t now)
{
	struct perf_value cur[EVENTS_MAX];
	uint64_t inc[EVENTS_MAX];
	uint32_t pct[EVENTS_MAX];
	int rc = perf_counters_read(c->pc, cur);
	if (rc < 0) {
		log_warn("reading counters: %s", strerror(-rc));
		return rc;
	}
	perf_interval(c->prev, cur, c->nev, inc, pct);
	for (size_t i = 0; i < c->nev; i++)
		c->totals[i] += inc[i];
	memcpy(c->last, cur, c->nev * sizeof(cur[0]));
	if (c->o.interval_out)
		print_row(c, now, inc, pct);
	if (session_drop_generation(c->s) != c->drop_gen) {
		c->drop_gen = session_drop_generation(c->s);
		record_builder_redeclare(&c->rb);
	}
	uint64_t seq = session_next_seq(c->s);
	uint8_t *frame;
	size_t len;
	rc = record_counters_frame(&c->rb, seq, &now, 1, inc, pct, &frame, &len);
	if (rc == 0 && session_would_drop(c->s, len)) {
		/* This append drops old records: make this record declare its events. */
		free(frame);
		record_builder_redeclare(&c->rb);
		rc = record_counters_frame(&c->rb, seq, &now, 1, inc, pct, &frame, &len);
	}
	if (rc < 0) {
		log_warn("encoding a counters record: %s", strerror(-rc));
		return rc;
	}
	c->rows++;
	session_submit_frame(c->s, seq, frame, len);
	return 0;
}

static int cs_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *timeout_ms)
{
	struct counter_source *c = ctx;
	(void)pfd;
	(void)max;
	loop_timer_timeout(&c->timer, now, timeout_ms);
	return 0;
}

static int cs_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct counter_source *c = ctx;
	(void)pfd;
	(void)n;
	if (loop_timer_expired(&c->timer, now))
		take_row(c, now);
	return 0;
}

int counter_source_start(struct counter_source *c, struct loop *l, uint64_t start_ns)
{
	c->start_ns = start_ns;
	loop_timer_start(&c->timer, (uint64_t)c->o.interval_ms * 1000000ull, start_ns);
	struct loop_source src = {.name = "counters", .prepare = cs_prepare, .dispatch = cs_dispatch, .ctx = c};
	return loop_add(l, &src);
}

/* The event that shows the CPU ran: hardware cycles (generic or raw CPU_CYCLES 0x11),
 * else task-clock. -1 if none is counted. */
static int progress_event(const struct counter_source *c)
{
	int tc = -1;
	for (size_t i = 0; i < c->nev; i++) {
		const struct event_desc *e = &c->ev[i];
		if ((e->type == PERF_TYPE_HARDWARE && e->config == PERF_COUNT_HW_CPU_CYCLES) ||
		    (e->type == PERF_TYPE_RAW && e->config == 0x11))
			return (int)i;
		if (events_is_time(e) && tc < 0)
			tc = (int)i;
	}
	return tc;
}

/* Issue 30, 1: an emulated PMU (QEMU counts only CPU_CYCLES, and INST_RETIRED with
 * -icount) or a core without the event opens it and reads 0. Say so once, at the end,
 * for each hardware event that stayed 0 while the CPU ran. */
static void warn_zero_events(const struct counter_source *c)
{
	int p = progress_event(c);
	if (p < 0 || c->totals[p] == 0)
		return;
	for (size_t i = 0; i < c->nev; i++) {
		if ((int)i == p || !events_is_hardware(&c->ev[i]) || c->totals[i] != 0)
			continue;
		if (c->last[i].running == 0) {
			log_warn("event '%s' never got a hardware counter (multiplexed out: %llu ns enabled, 0 running): "
				 "its 0 means not counted; name fewer hardware events",
				 c->ev[i].name, (unsigned long long)c->last[i].enabled);
			continue;
		}
		log_warn("event '%s' read 0 while %s advanced to %llu: this core or the emulator does not count it "
			 "(QEMU's PMU counts only CPU_CYCLES, and INST_RETIRED under -icount); its 0 is no measurement",
			 c->ev[i].name, c->ev[p].name, (unsigned long long)c->totals[p]);
	}
}

void counter_source_finish(struct counter_source *c, uint64_t end_ns)
{
	take_row(c, end_ns);
	perf_counters_disable(c->pc);
	warn_zero_events(c);
}

size_t counter_source_nevents(const struct counter_source *c)
{
	return c->nev;
}

void counter_source_print_summary(const struct counter_source *c, uint64_t end_ns, const char *target, FILE *out)
{
	double elapsed = (double)(end_ns - c->start_ns) / 1e9;
	fprintf(out, "\n Performance counter stats for '%s' (%llu interval row%s):\n\n", target,
		(unsigned long long)c->rows, c->rows == 1 ? "" : "s");
	for (size_t i = 0; i < c->nev; i++) {
		const struct event_desc *e = &c->ev[i];
		uint32_t pct = perf_running_pct(c->last[i].enabled, c->last[i].running);
		char extra[64] = "";
		if (pct < 100)
			snprintf(extra, sizeof(extra), "  (%u%% of the time counted, scaled)", pct);
		if (events_is_time(e)) {
			double ms = (double)c->totals[i] / 1e6;
			double cpus = elapsed > 0 ? (double)c->totals[i] / 1e9 / elapsed : 0;
			fprintf(out, "  %16.2f msec %-24s #  %6.3f CPUs utilized%s\n", ms, e->name, cpus, extra);
		} else {
			fprintf(out, "  %16llu      %-24s%s\n", (unsigned long long)c->totals[i], e->name, extra);
		}
	}
	fprintf(out, "\n  %16.9f seconds time elapsed\n\n", elapsed);
}

void counter_source_close(struct counter_source *c)
{
	if (!c)
		return;
	perf_counters_close(c->pc);
	free(c);
}
