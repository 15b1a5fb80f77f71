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

#ifdef CONFIG_AGENT_OPENCL
#include "cl_layer/cl_msg.h"
#include "cl_receiver.h"
#endif

#define OPT_MODE 1000
#define OPT_LIBDIR 1001

static const char run_usage[] =
	"usage: agent run --collector HOST:PORT [--mode layer|preload|auto] [--cl-lib DIR] [--gpu] -- CMD [ARGS...]\n"
	"                 [--duration S] [--spool DIR] [--spool-max MB] [--agent-id ID] [--flush-timeout S] [-v|-q]\n"
	"\n"
	"Runs CMD with OpenCL command timing: every kernel launch and buffer transfer, with device\n"
	"timestamps, sizes and dependencies, is streamed to the collector (collector report --opencl).\n"
	"  --mode layer    load the capture library as an OpenCL layer (OPENCL_LAYERS; ICD loader)\n"
	"  --mode preload  LD_PRELOAD shim (app linked to the vendor library; PROF_CL_LIBRARY=path\n"
	"                  names the vendor library when it is not found as the next libOpenCL)\n"
	"  --mode auto     layer when an ICD loader is configured (/etc/OpenCL/vendors), else preload (default)\n"
	"  --cl-lib DIR    where libprofcl_layer.so / libprofcl_preload.so are (default: lib/ next to\n"
	"                  the agent binary, or $PROF_CL_LIB_DIR)\n";

enum run_mode { MODE_AUTO, MODE_LAYER, MODE_PRELOAD };

struct run_cmd {
	struct agent_cli cli;
	struct gpu_cli gpu;
	enum run_mode mode;
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
		if (strcmp(arg, "layer") == 0)
			c->mode = MODE_LAYER;
		else if (strcmp(arg, "preload") == 0)
			c->mode = MODE_PRELOAD;
		else if (strcmp(arg, "auto") == 0)
			c->mode = MODE_AUTO;
		else {
			log_error("--mode: '%s' is not one of layer, preload, auto", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_LIBDIR:
		c->libdir = arg;
		return 0;
	default:
		return EXIT_USAGE;
	}
}

#ifdef CONFIG_AGENT_OPENCL
/* The capture library: DIR/name, checked readable. */
static int find_library(const char *libdir, const char *name, char *out, size_t len)
{
	char dirs[3][PATH_MAX + 32];
	size_t nd = 0;
	if (libdir)
		snprintf(dirs[nd++], sizeof(dirs[0]), "%s", libdir);
	else if (getenv("PROF_CL_LIB_DIR"))
		snprintf(dirs[nd++], sizeof(dirs[0]), "%s", getenv("PROF_CL_LIB_DIR"));
	else {
		char exe[PATH_MAX - 64];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = 0;
			char *slash = strrchr(exe, '/');
			if (slash)
				*slash = 0;
			snprintf(dirs[nd++], sizeof(dirs[0]), "%s/lib", exe);
			snprintf(dirs[nd++], sizeof(dirs[0]), "%s/../lib/profcl", exe);
		}
	}
	for (size_t i = 0; i < nd; i++) {
		char path[PATH_MAX + 64];
		if (snprintf(path, sizeof(path), "%s/%s", dirs[i], name) >= (int)sizeof(path))
			continue;
		if (access(path, R_OK) == 0 && realpath(path, out) && strlen(out) < len)
			return 0;
	}
	log_error("cannot find %s (looked in %s%s%s): build it with `make`, or pass --cl-lib DIR", name,
		  nd ? dirs[0] : "nothing", nd > 1 ? " and " : "", nd > 1 ? dirs[1] : "");
	return -ENOENT;
}

/* NAME=ours[:what the environment already has] */
static char *env_list(const char *name, const char *ours)
{
	const char *old = getenv(name);
	size_t len = strlen(name) + strlen(ours) + (old ? strlen(old) + 1 : 0) + 2;
	char *s = malloc(len);
	if (s)
		snprintf(s, len, "%s=%s%s%s", name, ours, old && *old ? ":" : "", old && *old ? old : "");
	return s;
}

static char *env_pair(const char *name, const char *value)
{
	size_t len = strlen(name) + strlen(value) + 2;
	char *s = malloc(len);
	if (s)
		snprintf(s, len, "%s=%s", name, value);
	return s;
}

static int run_opencl(struct run_cmd *c)
{
	char err[1536];
	char droppath[PATH_MAX + 32];
	snprintf(droppath, sizeof(droppath), "%s/opencl-dropped.log", c->cli.so.spool_dir);
	cl_receiver_report_dropfile(droppath);

	enum run_mode mode = c->mode;
	if (mode == MODE_AUTO)
		mode = access("/etc/OpenCL/vendors", F_OK) == 0 && !getenv("PROF_CL_LIBRARY") ? MODE_LAYER
											 : MODE_PRELOAD;
	char lib[PATH_MAX];
	if (find_library(c->libdir, mode == MODE_LAYER ? "libprofcl_layer.so" : "libprofcl_preload.so", lib,
			 sizeof(lib)) < 0)
		return EXIT_AGENT_ERROR;

	struct cl_receiver *rx = NULL;
	struct target *t = NULL;
	struct session *s = NULL;
	struct loop *l = NULL;
	char *env[5] = {NULL};
	int exit_code = EXIT_AGENT_ERROR;
	if (cl_receiver_open(&rx, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return EXIT_AGENT_ERROR;
	}
	env[0] = mode == MODE_LAYER ? env_list("OPENCL_LAYERS", lib) : env_list("LD_PRELOAD", lib);
	env[1] = env_pair(PCL_ENV_SOCKET, cl_receiver_address(rx));
	env[2] = env_pair(PCL_ENV_DROPFILE, droppath);
	if (!env[0] || !env[1] || !env[2]) {
		log_error("out of memory");
		goto out;
	}
	c->cli.to.extra_env = env;
	log_info("opencl: %s mode, %s", mode == MODE_LAYER ? "layer" : "preload", lib);

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
	if (loop_create(&l) < 0 || session_attach(s, l) < 0 || cl_receiver_attach(rx, s, l) < 0)
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
	cl_receiver_drain(rx);
	gpu_cli_finish(&c->gpu);
	session_flush(s);
	fprintf(stderr, "\n OpenCL timing of '%s' (%.3f s):\n", target_describe(t), (double)(end - start) / 1e9);
	cl_receiver_print_summary(rx, stderr);
	gpu_cli_print_summary(&c->gpu, stderr);
	session_print_summary(s, stderr);
	exit_code = target_exit_code(t);
out:
	gpu_cli_close(&c->gpu);
	session_close(s);
	loop_destroy(l);
	target_close(t);
	cl_receiver_close(rx);
	for (size_t i = 0; i < 3; i++)
		free(env[i]);
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
	struct run_cmd c = {.mode = MODE_AUTO};
	char usage[6144];
	snprintf(usage, sizeof(usage), "%s%s%s%s", run_usage, gpu_cli_help, agent_cli_target_help,
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
