/* agent run: run a command with OpenCL command timing. The command gets the
 * capture library either as an ICD loader layer (OPENCL_LAYERS, for apps
 * that use an ICD loader such as ocl-icd) or as an LD_PRELOAD shim (apps
 * linked directly against a vendor library, e.g. Android's libOpenCL.so /
 * libmali). The library sends each completed command to this agent over a
 * unix socket; the agent streams ClCommand records to the collector. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_opts.h"
#include "commands.h"
#include "generated/config.h"
#include "gpu/gpu_cli.h"
#include "log.h"
#include "net.h"
#include "session.h"
#include "target.h"
#include "target_end.h"

#ifdef CONFIG_AGENT_OPENCL
#include "cl_launch.h"
#endif

#define OPT_MODE 1000
#define OPT_LIBDIR 1001

static const char run_usage[] =
	"usage: agent run --collector HOST:PORT [--mode layer|preload|auto] [--cl-lib DIR] [--gpu] -- CMD [ARGS...]\n"
	"                 [--duration S] [--spool DIR] [--spool-max MB] [--agent-id ID] [--flush-timeout S] [-v|-q]\n"
	"\n"
	"Runs CMD with OpenCL command timing: every enqueue that returns an event (kernels, tasks,\n"
	"native kernels, buffer and rect reads/writes/copies/fills/maps/unmaps, image reads/writes/\n"
	"copies/fills/maps, markers, barriers, migrations, SVM memcpy/fill/map/unmap/migrate), with\n"
	"device timestamps, bytes and dependencies, is streamed to the collector (collector report\n"
	"--opencl; map/unmap rows give bytes, no bandwidth). Not timed: clEnqueueBarrier and\n"
	"clEnqueueWaitForEvents (OpenCL 1.1, no event), clEnqueueSVMFree. The app sees its queues and\n"
	"events as without capture. What a process timed survives its being killed, and what it\n"
	"waited for (clFinish, clWaitForEvents) is timed before the wait returns; commands it enqueued\n"
	"but never saw complete are counted in the summary. With -q the summary goes to\n"
	"SPOOL/run-summary.txt, nothing to the program's streams.\n"
	"  --mode layer    load the capture library as an OpenCL layer (OPENCL_LAYERS; ICD loader)\n"
	"  --mode preload  LD_PRELOAD shim (app linked to the vendor library; PROF_CL_LIBRARY=path\n"
	"                  names the vendor library when it is not found as the next libOpenCL)\n"
	"  --mode auto     layer when the program reaches OpenCL through an ICD loader (ocl-icd, the Khronos\n"
	"                  loader: /etc/OpenCL/vendors), else preload (default)\n"
	"  --cl-lib DIR    where libprofcl_layer.so / libprofcl_preload.so are (default: lib/ next to\n"
	"                  the agent binary, or $PROF_CL_LIB_DIR)\n";

struct run_cmd {
	struct agent_cli cli;
	struct gpu_cli gpu;
	int mode; /* enum cl_launch_mode */
	const char *libdir;
};

static int run_option(void *ctx, int opt, const char *arg)
{
	struct run_cmd *c = ctx;
	int g = gpu_cli_option(&c->gpu, opt, arg);
	if (g <= 0 || g == EXIT_USAGE)
		return g;
	switch (opt) {
	case OPT_MODE:
		return agent_cli_cl_mode(arg, &c->mode);
	case OPT_LIBDIR:
		c->libdir = arg;
		return 0;
	default:
		return EXIT_USAGE;
	}
}

#ifdef CONFIG_AGENT_OPENCL
static int run_opencl(struct run_cmd *c)
{
	char err[1536];
	struct cl_launch cl;
	struct target *t = NULL;
	struct session *s = NULL;
	struct loop *l = NULL;
	int exit_code = EXIT_AGENT_ERROR;
	if (cl_launch_open(&cl, (enum cl_launch_mode)c->mode, c->libdir, c->cli.so.spool_dir) < 0)
		return EXIT_AGENT_ERROR;
	c->cli.to.extra_env = cl.env;
	int rc = target_prepare(&t, &c->cli.to, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	c->cli.so.target = target_describe(t);
	c->cli.so.opencl_probe = true;
	rc = session_open(&s, &c->cli.so, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	uint64_t start = clock_mono_ns();
	if (loop_create(&l) < 0 || session_attach(s, l) < 0 || cl_receiver_attach(cl.rx, s, l) < 0)
		goto out;
	gpu_cli_start(&c->gpu, s, l);
	rc = target_release(t);
	if (rc != 0) {
		exit_code = rc;
		goto out;
	}
	if (target_attach(t, l) < 0)
		goto out;
	rc = loop_run(l);
	uint64_t end = clock_mono_ns();
	if (session_fatal(s) || rc < 0)
		goto out;
	cl_receiver_drain(cl.rx);
	gpu_cli_finish(&c->gpu);
	FILE *sum = agent_cli_summary_open(&c->cli); /* -q: not on the program's stderr */
	if (sum) {
		fprintf(sum, "\n OpenCL timing of '%s' (%.3f s):\n", target_describe(t), (double)(end - start) / 1e9);
		cl_receiver_print_summary(cl.rx, cl.mode == CL_MODE_LAYER, sum);
		gpu_cli_print_summary(&c->gpu, sum);
	}
	struct target_end te = {.pid = target_pid(t)};
	if (target_wait_status(t, &te.status)) {
		cl_launch_outcome(&cl, &te);
		target_end_report(s, &te, sum);
	}
	session_flush(s);
	if (sum)
		session_print_summary(s, sum);
	agent_cli_summary_close(sum);
	exit_code = agent_cli_exit_status(s, target_exit_code(t));
out:
	gpu_cli_close(&c->gpu);
	session_close(s);
	loop_destroy(l);
	target_close(t);
	cl_launch_close(&cl);
	return exit_code;
}
#endif

int cmd_run(int argc, char **argv)
{
	static const struct option extra[] = {
		{"mode", required_argument, NULL, OPT_MODE},
		{"cl-lib", required_argument, NULL, OPT_LIBDIR},
		GPU_CLI_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	struct run_cmd c = {.mode = 0};
	char usage[6144];
	snprintf(usage, sizeof(usage), "%s%s%s%s", run_usage, gpu_cli_help, agent_cli_cmd_help,
		 agent_cli_common_help);
	c.cli.need_target = true;
	int ex = agent_cli_parse(argc, argv, &c.cli, usage, extra, "", run_option, &c);
	if (ex >= 0)
		return ex;
	if (!c.cli.to.cmd) {
		log_error("agent run profiles a command it starts: agent run --collector HOST:PORT -- ./app args");
		return EXIT_USAGE;
	}
#ifdef CONFIG_AGENT_OPENCL
	return run_opencl(&c);
#else
	log_error("agent run: OpenCL support is not compiled in (CONFIG_AGENT_OPENCL): rebuild with it enabled");
	return EXIT_AGENT_ERROR;
#endif
}
