/* The OpenCL benchmarks of a static musl agent (no dlopen) run in prof-clhelper, the
 * board-libc helper (agent/cl_layer/helper/main.c, `prof-clhelper calibrate`): the agent
 * forks, the child executes the helper with stdout on a pipe (opencl_helper_exec) and the
 * options in PROF_CALIB_{DEVICE,QUICK,REPS,ONLY}; the helper runs calib_run_all() on the
 * OpenCL benchmarks and writes each struct calib_result raw (one build: same layout). The agent
 * checks every bound before use, adds the parameters to its model and sends the records. */
#include "calib_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "opencl_probe.h"

bool calib_helper_wanted(void)
{
#if defined(CONFIG_STATIC) && !defined(__GLIBC__) && !defined(__BIONIC__)
	return true;
#else
	const char *h = getenv("PROF_CLHELPER"); /* a dynamic agent uses a helper it is given */
	return h && *h;
#endif
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got ? -EPROTO : 0;
		got += (size_t)n;
	}
	return 1;
}

static bool result_sane(struct calib_result *r)
{
	r->benchmark[sizeof(r->benchmark) - 1] = r->device[sizeof(r->device) - 1] = 0;
	r->skipped[sizeof(r->skipped) - 1] = r->note[sizeof(r->note) - 1] = 0;
	if (r->nparams > CR_MAX_PARAMS || r->ncurves > CR_MAX_CURVES)
		return false;
	for (size_t i = 0; i < r->nparams; i++) {
		struct calib_param *p = &r->params[i];
		p->name[sizeof(p->name) - 1] = p->unit[sizeof(p->unit) - 1] = p->method[sizeof(p->method) - 1] = 0;
	}
	for (size_t i = 0; i < r->ncurves; i++) {
		struct calib_curve *c = &r->curves[i];
		c->name[sizeof(c->name) - 1] = c->x_unit[sizeof(c->x_unit) - 1] = c->y_unit[sizeof(c->y_unit) - 1] = 0;
		if (c->n > CR_MAX_POINTS || c->reps > CR_MAX_REPS)
			return false;
	}
	return true;
}

int calib_helper_run(const struct calib_run_opts *o, struct calib_model *model, calib_sink_fn sink, void *arg,
		     char *err, size_t errlen)
{
	char v[32];
	snprintf(v, sizeof(v), "%d", o->device);
	setenv("PROF_CALIB_DEVICE", v, 1);
	setenv("PROF_CALIB_QUICK", o->quick ? "1" : "0", 1);
	snprintf(v, sizeof(v), "%u", o->reps);
	setenv("PROF_CALIB_REPS", v, 1);
	if (o->only)
		setenv("PROF_CALIB_ONLY", o->only, 1);
	else
		unsetenv("PROF_CALIB_ONLY");
	struct calib_result *r = malloc(sizeof(*r));
	int pfd[2];
	if (!r || pipe2(pfd, O_CLOEXEC) < 0) {
		free(r);
		snprintf(err, errlen, "helper: %s", strerror(r ? errno : ENOMEM));
		return -ENOMEM;
	}
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		close(pfd[0]);
		memset(r, 0, sizeof(*r)); /* exec failed: one result with no name, the reason in skipped */
		opencl_helper_exec(pfd[1], "calibrate", r->skipped, sizeof(r->skipped));
		ssize_t w = write(pfd[1], r, sizeof(*r));
		_exit(w == (ssize_t)sizeof(*r) ? 3 : 4);
	}
	close(pfd[1]);
	int n = 0, rc = 0;
	snprintf(err, errlen, "helper prof-clhelper sent no result");
	while (child > 0 && (rc = read_full(pfd[0], r, sizeof(*r))) > 0) {
		if (!result_sane(r)) {
			snprintf(err, errlen, "helper prof-clhelper sent a malformed result");
			rc = -EPROTO;
			break;
		}
		if (!r->benchmark[0]) {
			snprintf(err, errlen, "%s", r->skipped);
			continue;
		}
		if (strcmp(r->benchmark, "device") == 0 && r->device[0])
			snprintf(model->device, sizeof(model->device), "%s", r->device);
		for (size_t j = 0; j < r->nparams; j++)
			calib_model_set(model, &r->params[j]);
		n++;
		if (sink)
			sink(arg, r);
	}
	close(pfd[0]);
	int status = 0;
	if (child > 0) {
		if (rc < 0)
			kill(child, SIGKILL);
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
	} else {
		snprintf(err, errlen, "fork: %s", strerror(errno));
	}
	if (n == 0 && child > 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3 &&
	    !strstr(err, "not loadable"))
		snprintf(err + strlen(err), errlen - strlen(err), " (helper exit %d)", WEXITSTATUS(status));
	free(r);
	return n > 0 ? n : rc < 0 ? rc : -ENODATA;
}
