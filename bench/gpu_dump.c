/* Cost of one Mali counter dump on the agent side: gpu_sampler_poll (UK dump
 * ioctl, column sums of the per-dump counts into a row) against
 * the fake kbase device (tests/lib/fake_kbase*.c), minus the fake's own time
 * for the same ioctl; and the agent's work alone: the same polls with the
 * DUMP ioctl answered at once (the buffer keeps the last dump's counts).
 * Usage: gpu_dump t628|g71 N. Prints key=value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_kbase.h"
#include "gpu/gpu_sampler.h"
#include "gpu/kbase_abi.h"

static int stub_dump;
static int bench_ioctl(int fd, unsigned long req, void *arg)
{
	if (stub_dump && req == KBASE_UK_CMD(KBASE_FUNC_HWCNT_DUMP, sizeof(struct kbase_uk_hwcnt_simple))) {
		((union kbase_uk_header *)arg)->ret = 0;
		return 0;
	}
	return fake_kbase_sys.ioctl(fd, req, arg);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: gpu_dump t628|g71 N\n");
		return 2;
	}
	int n = atoi(argv[2]);
	struct fake_kbase_cfg cfg;
	if (!strcmp(argv[1], "t628"))
		fake_kbase_cfg_t628mp6(&cfg);
	else
		fake_kbase_cfg_g71mp8(&cfg), cfg.iface = FAKE_IFACE_UK_DUMP;
	fake_kbase_reset(&cfg);
	fake_kbase_set_time(1000000);
	struct gpu_sampler *g;
	char err[320];
	static struct kbase_sys sys;
	sys = fake_kbase_sys;
	sys.ioctl = bench_ioctl;
	struct gpu_sampler_opts o = {.device = "/dev/mali0", .interval_ns = 1000000, .sys = &sys};
	if (gpu_sampler_open(&g, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	const struct kbase_dev *d = gpu_sampler_dev(g);
	uint64_t t = 1000000;
	double a = now_s();
	for (int i = 0; i < n; i++) {
		t += 1000000;
		fake_kbase_set_time(t);
		if (gpu_sampler_poll(g) < 0)
			return 1;
		if (gpu_sampler_rows(g)->nrows >= GPU_MAX_ROWS - 1)
			gpu_sampler_discard(g); /* no session here: the rows are not sent */
	}
	double total = now_s() - a;
	/* the fake's own share: the same DUMP ioctl alone */
	a = now_s();
	for (int i = 0; i < n; i++) {
		t += 1000000;
		fake_kbase_set_time(t);
		struct kbase_uk_hwcnt_simple h = {0};
		h.header.id = KBASE_FUNC_HWCNT_DUMP;
		fake_kbase_ioctl(d->fd, KBASE_UK_CMD(KBASE_FUNC_HWCNT_DUMP, sizeof(h)), &h);
	}
	double fake = now_s() - a;
	/* the agent's work alone */
	stub_dump = 1;
	a = now_s();
	for (int i = 0; i < n; i++) {
		t += 1000000;
		fake_kbase_set_time(t);
		if (gpu_sampler_poll(g) < 0)
			return 1;
		if (gpu_sampler_rows(g)->nrows >= GPU_MAX_ROWS - 1)
			gpu_sampler_discard(g);
	}
	double alone = now_s() - a;
	stub_dump = 0;
	printf("gpu=%s dumps=%d buffer_bytes=%zu columns=%zu total_us=%.3f fake_us=%.3f agent_us=%.3f "
	       "agent_alone_us=%.3f\n",
	       d->fam->name, n, d->layout.words * 4, gpu_sampler_rows(g)->ncols, total / n * 1e6,
	       fake / n * 1e6, (total - fake) / n * 1e6, alone / n * 1e6);
	gpu_sampler_close(g);
	return 0;
}
