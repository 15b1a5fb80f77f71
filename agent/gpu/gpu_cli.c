#include "gpu/gpu_cli.h"

#include <string.h>

#include "cli_opts.h"
#include "generated/config.h"
#include "gpu/gpu_sampler.h"
#include "log.h"

const char gpu_cli_help[] =
    "  --gpu                  also read the Mali GPU's hardware counters (kbase driver), dumped every\n"
    "                         --gpu-interval and attributed to OpenCL kernels by the collector\n"
    "  --gpu-interval US      microseconds between counter dumps (default 1000, min 100;\n"
    "                         the driver's hwcnt reader: min 500)\n"
    "  --gpu-device PATH      the kbase device node (default $PROF_MALI_DEVICE or /dev/mali0)\n";

int gpu_cli_option(struct gpu_cli *c, int opt, const char *arg)
{
	unsigned long v;
	switch (opt) {
	case OPT_GPU:
		c->on = true;
		return 0;
	case OPT_GPU_INTERVAL:
		if (agent_cli_ulong(arg, 10000000ul, &v) < 0 || v < 100) {
			log_error("--gpu-interval: whole microseconds >= 100 (got '%s')", arg);
			return EXIT_USAGE;
		}
		c->interval_us = (unsigned)v;
		c->on = true;
		return 0;
	case OPT_GPU_DEVICE:
		c->device = arg;
		c->on = true;
		return 0;
	default:
		return 1;
	}
}

int gpu_cli_start(struct gpu_cli *c, struct session *s, struct loop *l)
{
	if (!c->on)
		return 0;
#ifdef CONFIG_AGENT_MALI
	char err[320];
	struct gpu_sampler_opts o = {.device = c->device, .interval_ns = c->interval_us * 1000u};
	if (gpu_sampler_open(&c->g, &o, err, sizeof(err)) < 0) {
		log_warn("%s; the session goes on without GPU counters", err);
		c->g = NULL;
		return 0;
	}
	const struct kbase_dev *d = gpu_sampler_dev(c->g);
	if (c->interval_us && d->interval_ns != c->interval_us * 1000u)
		log_warn("gpu counters: the driver's reader dumps at most every %u us; --gpu-interval %u "
			 "raised to it",
			 d->interval_ns / 1000, c->interval_us);
	log_info("gpu counters: %s, every %u us", d->desc, d->interval_ns / 1000);
	if (gpu_sampler_attach(c->g, s, l) < 0) {
		log_warn("gpu counters: cannot attach to the loop; the session goes on without them");
		gpu_sampler_close(c->g);
		c->g = NULL;
	}
#else
	(void)s, (void)l;
	log_warn("--gpu: Mali counter support is not compiled in (CONFIG_AGENT_MALI); the session goes on "
		 "without it");
#endif
	return 0;
}

void gpu_cli_finish(struct gpu_cli *c)
{
	if (!c->g)
		return;
	int rc = gpu_sampler_final_dump(c->g);
	if (rc < 0)
		log_warn("gpu counters: final dump: %s", strerror(-rc));
	rc = gpu_sampler_flush(c->g);
	if (rc < 0)
		log_warn("gpu counters: last record: %s", strerror(-rc));
}

void gpu_cli_print_summary(const struct gpu_cli *c, FILE *out)
{
	if (c->g)
		gpu_sampler_print_summary(c->g, out);
}

void gpu_cli_close(struct gpu_cli *c)
{
	gpu_sampler_close(c->g);
	c->g = NULL;
}
