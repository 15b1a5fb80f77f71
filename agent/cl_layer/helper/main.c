/* prof-clhelper: the OpenCL work of a static musl agent, which cannot dlopen. Built for the
 * board's C library (glibc <= the board's version, mk/cl_layer.mk) like the capture libraries,
 * dynamically linked; the agent executes it in its probe child with stdout on the pipe
 * (agent/opencl_helper.c) and reads what its own child would have written.
 *
 *   prof-clhelper probe     struct opencl_probe (agent/opencl_probe.h), raw, on stdout
 *   prof-clhelper calibrate the OpenCL calibration benchmarks (agent/calib/), options from
 *                           PROF_CALIB_{DEVICE,QUICK,REPS,ONLY}: one struct calib_result per
 *                           benchmark, raw, on stdout; progress on stderr (calib_helper.c)
 *
 * The agent and the helper come from one build (same struct layout and ABI); the agent bounds
 * what it reads (opencl_probe_run). Exit 0 when the struct was written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/calib_run.h"
#include "opencl_probe.h"

static int write_all(const void *buf, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(STDOUT_FILENO, (const char *)buf + off, len - off);
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

static int result_out(void *arg, const struct calib_result *r)
{
	(void)arg;
	return write_all(r, sizeof(*r)) < 0 ? -1 : 0;
}

static int calibrate(void)
{
	struct calib_run_opts o = {.device = -1, .progress = stderr, .in_helper = true};
	const char *v = getenv("PROF_CALIB_DEVICE");
	if (v && *v)
		o.device = atoi(v);
	v = getenv("PROF_CALIB_QUICK");
	o.quick = v && strcmp(v, "1") == 0;
	v = getenv("PROF_CALIB_REPS");
	if (v && *v)
		o.reps = (unsigned)strtoul(v, NULL, 10);
	/* only the OpenCL benchmarks: the agent runs the CPU ones itself */
	static char only[512];
	size_t len = 0;
	const char *sel = getenv("PROF_CALIB_ONLY");
	for (size_t i = 0; calib_bench_names[i]; i++) {
		const char *n = calib_bench_names[i];
		bool want = !sel || !*sel;
		for (const char *s = sel; !want && s && *s;) {
			const char *e = strchr(s, ',');
			size_t l = e ? (size_t)(e - s) : strlen(s);
			want = l == strlen(n) && strncmp(s, n, l) == 0;
			s += l + (e ? 1 : 0);
		}
		if (want && calib_bench_is_opencl(n) == 1)
			len += (size_t)snprintf(only + len, sizeof(only) - len, "%s%s", len ? "," : "", n);
	}
	if (!len)
		return 0;
	o.only = only;
	struct calib_model *m = calloc(1, sizeof(*m));
	if (!m)
		return 1;
	int n = calib_run_all(&o, m, result_out, NULL);
	free(m);
	return n > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "calibrate") == 0)
		return calibrate();
	if (argc != 2 || strcmp(argv[1], "probe") != 0) {
		fprintf(stderr, "usage: prof-clhelper probe|calibrate   (run by the profiler agent)\n");
		return 2;
	}
	struct opencl_probe p;
	memset(&p, 0, sizeof(p));
	opencl_probe_fill(&p);
	const char *b = (const char *)&p;
	size_t off = 0;
	while (off < sizeof(p)) {
		ssize_t w = write(STDOUT_FILENO, b + off, sizeof(p) - off);
		if (w <= 0)
			return 1;
		off += (size_t)w;
	}
	return 0;
}
