/* agent record: sample the CPU of a target at HZ and stream aggregated
 * Samples records (one per interval) with the mappings the collector needs
 * to symbolize them. Back end bpf (in-kernel aggregation) or ring (perf mmap
 * ring buffers), chosen at run time (--backend auto|bpf|ring). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "commands.h"
#include "frame.h"
#include "gpu/gpu_cli.h"
#include "kallsyms.h"
#include "vdso.h"
#include "log.h"
#include "net.h"
#include "sampler.h"
#include "session.h"
#include "target.h"

#define OPT_FREQ 'F'
#define OPT_CALLGRAPH 'g'
#define OPT_EVENT 'e'
#define OPT_INTERVAL 'I'
#define OPT_BACKEND 1000

static const char record_usage[] =
	"usage: agent record --collector HOST:PORT [-p PID | -a | -- CMD [ARGS...]] [-F HZ] [-g]\n"
	"                    [--backend auto|bpf|ring] [-e EVENT] [-I MS] [--duration S] [--spool DIR]\n"
	"                    [--spool-max MB] [--agent-id ID] [--flush-timeout S] [--gpu] [-v|-q]\n"
	"\n"
	"Samples where a target spends its CPU time and streams per-interval aggregates.\n"
	"  -F HZ                  samples per second of CPU time (default 499, max 100000)\n"
	"  -g                     record call chains: the user's (needs frame pointers in the target)\n"
	"                         and the kernel's where the kernel may be sampled\n"
	"  --backend B            bpf: in-kernel aggregation + on/off-CPU time (Linux >= 5.x, BTF, root);\n"
	"                         ring: perf mmap ring buffers (any kernel); auto (default): bpf, else ring\n"
	"  -e EVENT               event to sample (default: cycles, or cpu-clock without a hardware PMU)\n"
	"  -I MS                  interval between records (default 1000, min 10)\n";

struct record_cmd {
	struct agent_cli cli;
	struct gpu_cli gpu; /* --gpu: Mali counters in the same session, as agent stat */
	unsigned freq;
	bool callgraph;
	int backend; /* enum sampler_backend */
	const char *event;
	unsigned interval_ms;
	struct session *s;
	struct sampler *sp;
};

static int record_option(void *ctx, int opt, const char *arg)
{
	struct record_cmd *c = ctx;
	int g = gpu_cli_option(&c->gpu, opt, arg);
	if (g <= 0 || g == EXIT_USAGE)
		return g;
	switch (opt) {
	case OPT_FREQ:
		return agent_cli_freq(arg, &c->freq);
	case OPT_CALLGRAPH:
		c->callgraph = true;
		return 0;
	case OPT_EVENT:
		c->event = arg;
		return 0;
	case OPT_INTERVAL:
		return agent_cli_interval_ms(arg, &c->interval_ms);
	case OPT_BACKEND:
		return agent_cli_backend(arg, &c->backend);
	default:
		return EXIT_USAGE;
	}
}

int cmd_record(int argc, char **argv)
{
	struct record_cmd *c = calloc(1, sizeof(*c));
	if (!c) {
		log_error("out of memory");
		return EXIT_AGENT_ERROR;
	}
	static const struct option extra[] = {
		{"freq", required_argument, NULL, OPT_FREQ},
		{"call-graph", no_argument, NULL, OPT_CALLGRAPH},
		{"event", required_argument, NULL, OPT_EVENT},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"backend", required_argument, NULL, OPT_BACKEND},
		GPU_CLI_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	char usage[6144];
	snprintf(usage, sizeof(usage), "%s%s%s%s", record_usage, gpu_cli_help, agent_cli_target_help,
		 agent_cli_common_help);
	c->freq = 499;
	c->interval_ms = 1000;
	c->cli.need_target = true;
	int ex = agent_cli_parse(argc, argv, &c->cli, usage, extra, "F:ge:I:", record_option, c);
	if (ex >= 0) {
		free(c);
		return ex;
	}
	char err[1536];
	struct target *t = NULL;
	struct loop *l = NULL;
	int exit_code = EXIT_AGENT_ERROR;
	int rc = target_prepare(&t, &c->cli.to, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	c->cli.so.target = target_describe(t);
	rc = session_open(&c->s, &c->cli.so, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	struct kallsyms_stats kst = {0};
	enum target_kind kind = target_kind(t);
	struct sampler_opts so = {
		.backend = c->backend,
		.freq_hz = c->freq,
		.callgraph = c->callgraph,
		.kind = kind == TARGET_SYSTEM ? PERF_TARGET_SYSTEM : kind == TARGET_EXEC ? PERF_TARGET_EXEC : PERF_TARGET_PID,
		.pid = target_pid(t),
		.interval_ns = (uint64_t)c->interval_ms * 1000000ull,
		.base_ns = session_base_ns(c->s),
		.event = c->event,
		.emit = session_emit_sampled,
		.generation = session_generation_cb,
		.ctx = c->s,
	};
	rc = sampler_open(&c->sp, &so, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	/* a running target (pid, system-wide) is sampled from now: --duration counts from here; a
	 * command is sampled from its exec, at its release below */
	uint64_t sampling_ns = clock_mono_ns();
	/* the kernel's function names (kallsyms.h): once the sampler runs, so that a system-wide
	 * sampler does not start later than before; the target is not released yet */
	kst.tick = sampler_keep_up; /* the rings drained while the table is read */
	kst.tick_ctx = c->sp;
	kallsyms_send(c->s, &c->cli.so, session_agent_id(c->s), &kst);
	vdso_send(c->s); /* names the [vdso] frames (vdso.h) */
	uint64_t start_ns = kind == TARGET_EXEC ? clock_mono_ns() : sampling_ns;
	rc = target_release_at(t, start_ns);
	if (rc != 0) {
		exit_code = rc;
		goto out;
	}
	if (loop_create(&l) < 0)
		goto out;
	struct loop_source src, ksrc;
	sampler_loop_source(c->sp, &src);
	kallsyms_loop_source(&kst, &ksrc); /* the table again if the collector's store is not the marker's */
	if (session_attach(c->s, l) < 0 || target_attach(t, l) < 0 || loop_add(l, &src) < 0 || loop_add(l, &ksrc) < 0)
		goto out;
	gpu_cli_start(&c->gpu, c->s, l);
	rc = loop_run(l);
	uint64_t end_ns = clock_mono_ns();
	if (session_fatal(c->s) || rc < 0)
		goto out;
	sampler_flush(c->sp, end_ns); /* the last partial interval */
	gpu_cli_finish(&c->gpu);
	struct sampler_stats st;
	sampler_get_stats(c->sp, &st);
	char evname[64];
	snprintf(evname, sizeof(evname), "%s", sampler_event(c->sp)->name);
	enum sampler_backend used = sampler_backend(c->sp);
	sampler_close(c->sp);
	c->sp = NULL;
	kallsyms_store_check(&kst);
	kallsyms_sent(&kst, session_flush(c->s) == 0);
	fprintf(stderr,
		"\n sampled '%s' for %.3f s: %llu samples of %s at %u Hz (%s back end), %llu lost;\n"
		" %llu records, %llu keys, %llu mappings, %llu call chains\n",
		target_describe(t), (double)(end_ns - start_ns) / 1e9, (unsigned long long)st.samples,
		evname, st.freq_hz, sampler_backend_name(used),
		(unsigned long long)st.lost, (unsigned long long)st.records, (unsigned long long)st.keys,
		(unsigned long long)st.mappings, (unsigned long long)st.stacks);
	gpu_cli_print_summary(&c->gpu, stderr);
	session_print_summary(c->s, stderr);
	exit_code = agent_cli_exit_status(c->s, target_exit_code(t));
out:
	gpu_cli_close(&c->gpu);
	sampler_close(c->sp);
	session_close(c->s);
	loop_destroy(l);
	target_close(t);
	free(c);
	return exit_code;
}
