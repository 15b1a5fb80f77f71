/* agent profile: the whole capture of one command in one session: counters
 * (as agent stat), CPU samples (as agent record), OpenCL command timing (as
 * agent run, layer or preload) and instruction-trace windows of the
 * command's threads (as agent trace). With the board's calibration session
 * (agent calibrate, same agent id and board), `collector report` then has
 * everything for the overview: top functions, kernels, roofline, latency
 * sensitivity. */
#include "generated/config.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli_opts.h"
#include "commands.h"
#include "counter_source.h"
#include "frame.h"
#include "kernel_model.h"
#include "kallsyms.h"
#include "vdso.h"
#include "log.h"
#include "perf.h"
#include "pmu_events.h"
#include "net.h"
#include "sampler.h"
#include "session.h"
#include "target.h"
#include "target_end.h"
#ifdef CONFIG_AGENT_OPENCL
#include "cl_launch.h"
#endif
#ifdef CONFIG_AGENT_TRACER
#include "trace_source.h"
#endif

enum {
	OPT_FREQ = 'F',
	OPT_EVENTS = 'e',
	OPT_INTERVAL = 'I',
	OPT_BACKEND = 1000,
	OPT_MODE,
	OPT_LIBDIR,
	OPT_KMODEL,
	OPT_TRACE, /* --window, --warmup, --every, --max-duty, --capture: trace_source_option */
	OPT_TRACE_LAST = OPT_TRACE + 4,
	OPT_NO_TRACE,
	OPT_NO_OPENCL,
};

static const char profile_usage[] =
	"usage: agent profile --collector HOST:PORT [options] -- CMD [ARGS...]\n"
	"\n"
	"Profiles one command into ONE session: counters (agent stat), CPU samples (agent record),\n"
	"OpenCL kernel and transfer timing (agent run) and instruction-trace windows of its threads\n"
	"(agent trace). `collector report --session N` then shows top functions, OpenCL kernels,\n"
	"the roofline and the latency sensitivity, with the ceilings of this board's latest\n"
	"`agent calibrate` (same --agent-id and board).\n"
	"  --kernel-model FILE    'KERNEL ops=N bytes=N' lines (per work-item), sent with the kernel\n"
	"                         declarations: the roofline places those kernels\n"
	"  -e EVENTS              counters (default: the stat defaults, plus the floating-point and\n"
	"                         last-level refill events the CPU has, for the roofline)\n"
	"  -I MS                  counter interval (default 500)\n"
	"  -F HZ                  CPU samples per second (default 499)\n"
	"  --backend auto|bpf|ring  sampling back end (default auto)\n"
	"  --mode layer|preload|auto  OpenCL capture (default auto); --cl-lib DIR: its library\n"
	"  --no-opencl            no OpenCL capture\n"
	"  --no-trace             no trace windows (no latency sensitivity then)\n"
	"Trace windows (defaults here: --every 0.25 --max-duty 5; single steps: 1000 a window):\n";

struct profile_cmd {
	struct agent_cli cli;
	struct counter_source_opts co;
	unsigned freq;
	int backend; /* enum sampler_backend */
	int cl_mode;
	const char *libdir, *kmodel_path;
	bool no_trace, no_opencl;
#ifdef CONFIG_AGENT_TRACER
	struct trace_source_opts to;
#endif
	struct session *s;
};

static int profile_option(void *ctx, int opt, const char *arg)
{
	struct profile_cmd *c = ctx;
	switch (opt) {
	case OPT_FREQ:
		return agent_cli_freq(arg, &c->freq);
	case OPT_EVENTS:
		c->co.events = arg;
		return 0;
	case OPT_INTERVAL:
		return agent_cli_interval_ms(arg, &c->co.interval_ms);
	case OPT_BACKEND:
		return agent_cli_backend(arg, &c->backend);
	case OPT_MODE:
		return agent_cli_cl_mode(arg, &c->cl_mode);
	case OPT_LIBDIR:
		c->libdir = arg;
		return 0;
	case OPT_KMODEL:
		c->kmodel_path = arg;
		return 0;
	case OPT_NO_TRACE:
		c->no_trace = true;
		return 0;
	case OPT_NO_OPENCL:
		c->no_opencl = true;
		return 0;
	default:
#ifdef CONFIG_AGENT_TRACER
		if (opt >= OPT_TRACE && opt <= OPT_TRACE_LAST) {
			static const char *const names[] = {"window", "warmup", "every", "max-duty", "capture"};
			return trace_source_option(&c->to, names[opt - OPT_TRACE], arg);
		}
#endif
		return EXIT_USAGE;
	}
}

/* On a 32-bit ARM kernel (the ARMv7 PMU driver, arch/arm/kernel/perf_event_v7.c:
 * armv7pmu_get_event_idx gives PERF_COUNT_HW_CPU_CYCLES only the cycle counter and
 * refuses with -EAGAIN when it is taken; a raw event goes to a general counter),
 * sample CPU_CYCLES (raw 0x11) on a general counter and leave CCNT to the counting
 * group. Returns true and the event's name for the sampler when it opens. */
static bool profile_armv7_sampler(const char *events, struct event_desc *ev, const char **name)
{
	struct utsname u;
	if (uname(&u) < 0 || (strncmp(u.machine, "armv7", 5) != 0 && strncmp(u.machine, "armv6", 5) != 0))
		return false;
	size_t n = 0;
	char err[512];
	if (events) { /* -e: only when it counts cycles (the defaults do) */
		struct event_desc list[EVENTS_MAX];
		bool cycles = false;
		if (events_parse_here(events, list, EVENTS_MAX, &n, err, sizeof(err)) < 0)
			return false; /* counter_source_new says why */
		for (size_t i = 0; i < n; i++)
			cycles |= list[i].type == PERF_TYPE_HARDWARE && list[i].config == PERF_COUNT_HW_CPU_CYCLES;
		if (!cycles)
			return false;
	}
	*name = "CPU_CYCLES";
	if (events_parse_here(*name, ev, 1, &n, err, sizeof(err)) < 0 || n != 1) {
		*name = "r11"; /* no table for this core: the architectural number */
		if (events_parse_here(*name, ev, 1, &n, err, sizeof(err)) < 0 || n != 1)
			return false;
	}
	char why[512];
	if (perf_probe_event_why(ev, 0, -1, why, sizeof(why)) < 0) {
		log_warn("profile: ARMv7 PMU: %s (raw 0x11) does not open (%s): the sampler and the counters share "
			 "the one cycle counter and will be multiplexed",
			 *name, why);
		return false;
	}
	log_info("profile: ARMv7 PMU (%s): one cycle counter, kept by the counting group's cycles; sampling %s "
		 "(raw 0x11) on a general counter",
		 u.machine, *name);
	return true;
}

int cmd_profile(int argc, char **argv)
{
	struct profile_cmd *c = calloc(1, sizeof(*c));
	if (!c) {
		log_error("out of memory");
		return EXIT_AGENT_ERROR;
	}
	static const struct option extra[] = {
		{"freq", required_argument, NULL, OPT_FREQ},
		{"events", required_argument, NULL, OPT_EVENTS},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"backend", required_argument, NULL, OPT_BACKEND},
		{"mode", required_argument, NULL, OPT_MODE},
		{"cl-lib", required_argument, NULL, OPT_LIBDIR},
		{"kernel-model", required_argument, NULL, OPT_KMODEL},
		{"window", required_argument, NULL, OPT_TRACE},
		{"warmup", required_argument, NULL, OPT_TRACE + 1},
		{"every", required_argument, NULL, OPT_TRACE + 2},
		{"max-duty", required_argument, NULL, OPT_TRACE + 3},
		{"capture", required_argument, NULL, OPT_TRACE + 4},
		{"no-trace", no_argument, NULL, OPT_NO_TRACE},
		{"no-opencl", no_argument, NULL, OPT_NO_OPENCL},
		{NULL, 0, NULL, 0},
	};
	char usage[6144];
#ifdef CONFIG_AGENT_TRACER
	const char *trace_help = trace_source_help;
#else
	const char *trace_help = "";
#endif
	snprintf(usage, sizeof(usage), "%s%s%s%s", profile_usage, trace_help, agent_cli_cmd_help, agent_cli_common_help);
	c->freq = 499;
	c->co.interval_ms = 500;
	c->co.roofline_events = true;
#ifdef CONFIG_AGENT_TRACER
	c->to.step_window = 1000;
	c->to.warmup = ULONG_MAX;
	c->to.every_s = 0.25;
	c->to.max_duty = 5;
#endif
	c->cli.need_target = true;
	int ex = agent_cli_parse(argc, argv, &c->cli, usage, extra, "F:e:I:", profile_option, c);
	if (ex >= 0) {
		free(c);
		return ex;
	}
	if (!c->cli.to.cmd) {
		log_error("agent profile profiles a command it starts: agent profile --collector HOST:PORT -- ./app args");
		free(c);
		return EXIT_USAGE;
	}
	char err[1536];
	struct kernel_model_entry *km = NULL;
	size_t nkm = 0;
	if (c->kmodel_path && kernel_model_load(c->kmodel_path, &km, &nkm, err, sizeof(err)) < 0) {
		log_error("--kernel-model: %s", err);
		free(c);
		return EXIT_USAGE;
	}
	/* ARMv7 has one cycle counter (CCNT): the counting group's cycles and a sampler on
	 * cycles would take turns on it, and every counter would be multiplexed (issue 30, 2). */
	struct event_desc samp_ev;
	const char *samp_event = NULL;
	if (profile_armv7_sampler(c->co.events, &samp_ev, &samp_event))
		c->co.share_pmu = &samp_ev;
	struct counter_source *cs = NULL;
	if (counter_source_new(&cs, &c->co, err, sizeof(err)) < 0) {
		log_error("-e: %s", err);
		free(km);
		free(c);
		return EXIT_USAGE;
	}
	int exit_code = EXIT_AGENT_ERROR;
	struct target *t = NULL;
	struct loop *l = NULL;
	struct sampler *sp = NULL;
#ifdef CONFIG_AGENT_TRACER
	struct trace_source *ts = NULL;
	if (!c->no_trace && trace_source_new(&ts, &c->to, err, sizeof(err)) < 0)
		log_warn("profile: no trace windows (no latency sensitivity): %s", err);
#else
	if (!c->no_trace)
		log_warn("profile: the instruction tracer is not compiled in (CONFIG_AGENT_TRACER): no trace windows");
#endif
#ifdef CONFIG_AGENT_OPENCL
	struct cl_launch cl = {0};
	bool have_cl = false;
	if (!c->no_opencl) {
		if (cl_launch_open(&cl, (enum cl_launch_mode)c->cl_mode, c->libdir, c->cli.so.spool_dir) < 0) {
			log_warn("profile: no OpenCL timing (see above); the rest is captured");
		} else {
			have_cl = true;
			c->cli.to.extra_env = cl.env;
			if (nkm && cl_receiver_set_kernel_model(cl.rx, km, nkm) < 0)
				goto out;
		}
	}
#else
	if (!c->no_opencl)
		log_warn("profile: OpenCL support is not compiled in (CONFIG_AGENT_OPENCL): no kernel timing");
#endif
#ifdef CONFIG_AGENT_TRACER
	/* refuse single steps that would stop the program too much, before starting it */
	if (ts && !trace_source_replays(ts) && trace_source_predicted_duty(&c->to) > c->to.max_duty) {
		log_error("profile: %lu instructions every %g s would stop a thread about %.2g%% of the time, above "
			  "--max-duty %g%%: use a smaller --window or a larger --every",
			  c->to.window ? c->to.window : c->to.step_window, c->to.every_s,
			  trace_source_predicted_duty(&c->to), c->to.max_duty);
		exit_code = EXIT_USAGE;
		goto out;
	}
#endif
	int rc = target_prepare(&t, &c->cli.to, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	c->cli.so.target = target_describe(t);
	c->cli.so.opencl_probe = false;
#ifdef CONFIG_AGENT_OPENCL
	c->cli.so.opencl_probe = have_cl;
#endif
	rc = session_open(&c->s, &c->cli.so, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	struct kallsyms_stats kst = {0};
	if (counter_source_open(cs, t, c->s, err, sizeof(err)) < 0) {
		log_error("%s", err);
		goto out;
	}
	struct sampler_opts so = {
		.backend = c->backend,
		.freq_hz = c->freq,
		.kind = PERF_TARGET_EXEC,
		.pid = target_pid(t),
		.interval_ns = 1000000000ull,
		.event_id = SAMPLER_EVENT_ID_WITH_COUNTERS, /* the counters use 1.. */
		.base_ns = session_base_ns(c->s),
		.event = samp_event,
		.emit = session_emit_sampled,
		.generation = session_generation_cb,
		.ctx = c->s,
	};
	if (sampler_open(&sp, &so, err, sizeof(err)) < 0) {
		log_warn("profile: no CPU samples (top functions): %s", err);
		sp = NULL;
	}
	/* the kernel's function names (kallsyms.h): once the sampler runs, so that a system-wide
	 * sampler does not start later than before; the target is not released yet */
	kallsyms_send(c->s, &c->cli.so, session_agent_id(c->s), &kst);
	vdso_send(c->s); /* names the [vdso] frames (vdso.h) */
	if (loop_create(&l) < 0 || session_attach(c->s, l) < 0)
		goto out;
#ifdef CONFIG_AGENT_OPENCL
	if (have_cl && cl_receiver_attach(cl.rx, c->s, l) < 0)
		goto out;
#endif
	uint64_t start_ns = clock_mono_ns();
	rc = target_release(t);
	if (rc != 0) {
		exit_code = rc;
		goto out;
	}
	struct loop_source src, ksrc;
	if (sp)
		sampler_loop_source(sp, &src);
	kallsyms_loop_source(&kst, &ksrc); /* the table again if the collector's store is not the marker's */
	if (target_attach(t, l) < 0 || counter_source_start(cs, l, start_ns) < 0 || (sp && loop_add(l, &src) < 0) ||
	    loop_add(l, &ksrc) < 0)
		goto out;
#ifdef CONFIG_AGENT_TRACER
	if (ts && trace_source_start(ts, t, c->s, l, start_ns) < 0)
		goto out;
#endif
	rc = loop_run(l);
	uint64_t end_ns = clock_mono_ns();
	if (session_fatal(c->s) || rc < 0)
		goto out;
	counter_source_finish(cs, end_ns);
	struct sampler_stats sst = {0};
	if (sp) {
		sampler_flush(sp, end_ns);
		sampler_get_stats(sp, &sst);
	}
#ifdef CONFIG_AGENT_OPENCL
	if (have_cl)
		cl_receiver_drain(cl.rx);
#endif
	struct target_end te = {.pid = target_pid(t)};
	bool ended = target_wait_status(t, &te.status);
#ifdef CONFIG_AGENT_OPENCL
	if (ended && have_cl)
		cl_launch_outcome(&cl, &te);
#endif
	FILE *sum = agent_cli_summary_open(&c->cli); /* -q: not on the program's stderr (issue #41) */
	if (ended)
		target_end_report(c->s, &te, sum);
	kallsyms_store_check(&kst);
	kallsyms_sent(&kst, session_flush(c->s) == 0);
	counter_source_print_summary(cs, end_ns, target_describe(t), sum);
	if (sp)
		fprintf(sum, " samples: %llu of %s at %u Hz (%s back end), %llu lost, %llu records\n",
			(unsigned long long)sst.samples, sampler_event(sp)->name, sst.freq_hz,
			sampler_backend_name(sampler_backend(sp)), (unsigned long long)sst.lost,
			(unsigned long long)sst.records);
#ifdef CONFIG_AGENT_OPENCL
	if (have_cl)
		cl_receiver_print_summary(cl.rx, cl.mode == CL_MODE_LAYER, sum);
#endif
#ifdef CONFIG_AGENT_TRACER
	if (ts)
		trace_source_print_summary(ts, (double)(end_ns - start_ns) / 1e9, sum);
#endif
	session_print_summary(c->s, sum);
	fprintf(sum, " report: collector report --store STORE --session N (the newest of collector sessions)\n");
	agent_cli_summary_close(sum);
	exit_code = agent_cli_exit_status(c->s, target_exit_code(t));
out:
	sampler_close(sp);
	session_close(c->s);
	loop_destroy(l);
	target_close(t);
#ifdef CONFIG_AGENT_OPENCL
	if (have_cl)
		cl_launch_close(&cl);
#endif
#ifdef CONFIG_AGENT_TRACER
	trace_source_close(ts);
#endif
	counter_source_close(cs);
	free(km);
	free(c);
	return exit_code;
}
