/* agent stat: count perf events of a target and stream one Counters row per
 * interval (the default subcommand). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "commands.h"
#include "events.h"
#include "gpu/gpu_cli.h"
#include "log.h"
#include "net.h"
#include "perf.h"
#include "pmu_events.h"
#include "record.h"
#include "session.h"
#include "target.h"

#define OPT_EVENTS 'e'
#define OPT_INTERVAL 'I'

static const char stat_usage[] =
	"usage: agent [stat] --collector HOST:PORT [-p PID | -a | -- CMD [ARGS...]] [-e EVENTS] [-I MS] [--gpu]\n"
	"                    [--duration S] [--spool DIR] [--spool-max MB] [--agent-id ID]\n"
	"                    [--flush-timeout S] [-v|-q]\n"
	"\n"
	"Counts perf events of one target and streams them to the collector.\n"
	"  -e EVENTS              comma list (default: cycles,instructions,cache-misses,branch-misses,\n"
	"                         task-clock,page-faults,context-switches,cpu-migrations; software\n"
	"                         events only when the hardware PMU is missing)\n"
	"  -I MS                  interval between readings (default 1000, min 10)\n";

struct stat_cmd {
	struct agent_cli cli;
	struct gpu_cli gpu;
	const char *events;
	unsigned interval_ms;
	struct event_desc ev[EVENTS_MAX];
	size_t nev;
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
};

static int stat_option(void *ctx, int opt, const char *arg)
{
	struct stat_cmd *c = ctx;
	unsigned long v;
	int g = gpu_cli_option(&c->gpu, opt, arg);
	if (g <= 0 || g == EXIT_USAGE)
		return g;
	switch (opt) {
	case OPT_EVENTS:
		c->events = arg;
		return 0;
	case OPT_INTERVAL:
		if (agent_cli_ulong(arg, 86400000ul, &v) < 0 || v < 10) {
			log_error("-I: interval must be a whole number of milliseconds >= 10 (got '%s')", arg);
			return EXIT_USAGE;
		}
		c->interval_ms = (unsigned)v;
		return 0;
	default:
		return EXIT_USAGE;
	}
}

static int take_row(struct stat_cmd *c, uint64_t now)
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

static int stat_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *timeout_ms)
{
	struct stat_cmd *c = ctx;
	loop_timer_timeout(&c->timer, now, timeout_ms);
	return 0;
}

static int stat_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct stat_cmd *c = ctx;
	if (loop_timer_expired(&c->timer, now))
		take_row(c, now);
	return 0;
}

static void print_summary(struct stat_cmd *c, uint64_t end_ns, const char *target)
{
	double elapsed = (double)(end_ns - c->start_ns) / 1e9;
	fprintf(stderr, "\n Performance counter stats for '%s' (%llu interval row%s):\n\n", target,
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
			fprintf(stderr, "  %16.2f msec %-24s #  %6.3f CPUs utilized%s\n", ms, e->name, cpus, extra);
		} else {
			fprintf(stderr, "  %16llu      %-24s%s\n", (unsigned long long)c->totals[i], e->name, extra);
		}
	}
	fprintf(stderr, "\n  %16.9f seconds time elapsed\n\n", elapsed);
	session_print_summary(c->s, stderr);
}

/* Choose the events (defaults with the software fallback, or the user's list
 * filtered to what the kernel supports) and open them on the target. */
static int open_counters(struct stat_cmd *c, struct target *t, char *err, size_t errlen)
{
	enum target_kind kind = target_kind(t);
	pid_t pid = target_pid(t);
	int probe_cpu = -1;
	if (kind == TARGET_SYSTEM) {
		int cpus[1];
		probe_cpu = perf_online_cpus(cpus, 1) > 0 ? cpus[0] : 0;
	}
	if (c->nev > 0) {
		if (perf_filter_supported(c->ev, &c->nev, pid, probe_cpu, err, errlen) < 0)
			return -EINVAL;
	} else {
		bool fell_back;
		c->nev = perf_default_events(pid, probe_cpu, c->ev, EVENTS_MAX, &fell_back, err, errlen);
		if (err[0])
			log_warn("%s", err); /* software fallback, or defaults the PMU lacks */
		if (c->nev == 0) {
			snprintf(err, errlen, "no default event can be counted here: name events with -e");
			return -ENOENT;
		}
	}
	struct perf_target pt = {
		.kind = kind == TARGET_SYSTEM ? PERF_TARGET_SYSTEM : kind == TARGET_EXEC ? PERF_TARGET_EXEC
											 : PERF_TARGET_PID,
		.pid = pid,
	};
	int rc = perf_counters_open(c->ev, c->nev, &pt, &c->pc, err, errlen);
	if (rc < 0)
		return rc;
	log_debug("counting %zu event(s) in %zu group(s) (%s)", c->nev, perf_counters_ngroups(c->pc),
		  perf_counters_grouped(c->pc) ? "grouped read" : "one fd per event");
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_cmd *c = calloc(1, sizeof(*c));
	if (!c) {
		log_error("out of memory");
		return EXIT_AGENT_ERROR;
	}
	static const struct option extra[] = {
		{"events", required_argument, NULL, OPT_EVENTS},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		GPU_CLI_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	char usage[6144];
	snprintf(usage, sizeof(usage), "%s%s%s%s", stat_usage, gpu_cli_help, agent_cli_target_help,
		 agent_cli_common_help);
	c->interval_ms = 1000;
	c->cli.need_target = true;
	int ex = agent_cli_parse(argc, argv, &c->cli, usage, extra, "e:I:", stat_option, c);
	if (ex >= 0) {
		free(c);
		return ex;
	}
	char err[1536];
	if (c->events && events_parse_here(c->events, c->ev, EVENTS_MAX, &c->nev, err, sizeof(err)) < 0) {
		log_error("-e: %s", err);
		free(c);
		return EXIT_USAGE;
	}

	struct target *t = NULL;
	struct loop *l = NULL;
	int exit_code = EXIT_AGENT_ERROR;
	int rc = target_prepare(&t, &c->cli.to, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	c->cli.so.target = target_describe(t);
#ifdef CONFIG_AGENT_OPENCL
	c->cli.so.opencl_probe = true;
#endif
	rc = session_open(&c->s, &c->cli.so, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	if (open_counters(c, t, err, sizeof(err)) < 0) {
		log_error("%s", err);
		goto out;
	}
	c->start_ns = clock_mono_ns();
	rc = target_release(t);
	if (rc != 0) {
		exit_code = rc;
		goto out;
	}
	record_builder_init(&c->rb, session_base_ns(c->s), target_kind(t) == TARGET_SYSTEM ? -1 : (int32_t)target_pid(t),
			    c->ev, c->nev, session_max_frame(c->s));
	if (loop_create(&l) < 0)
		goto out;
	struct loop_source src = {.name = "counters", .prepare = stat_prepare, .dispatch = stat_dispatch, .ctx = c};
	loop_timer_start(&c->timer, (uint64_t)c->interval_ms * 1000000ull, c->start_ns);
	if (session_attach(c->s, l) < 0 || target_attach(t, l) < 0 || loop_add(l, &src) < 0)
		goto out;
	gpu_cli_start(&c->gpu, c->s, l);

	rc = loop_run(l);
	uint64_t end_ns = clock_mono_ns();
	if (session_fatal(c->s)) {
		exit_code = EXIT_AGENT_ERROR;
		goto out;
	}
	if (rc < 0)
		goto out;
	take_row(c, end_ns); /* the final row */
	perf_counters_disable(c->pc);
	gpu_cli_finish(&c->gpu);
	session_flush(c->s);
	print_summary(c, end_ns, target_describe(t));
	gpu_cli_print_summary(&c->gpu, stderr);
	exit_code = target_exit_code(t);
out:
	gpu_cli_close(&c->gpu);
	perf_counters_close(c->pc);
	session_close(c->s);
	loop_destroy(l);
	target_close(t);
	free(c);
	return exit_code;
}
