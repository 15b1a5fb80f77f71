#include "gpu/gpu_selftest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_opts.h"
#include "gpu/gpu_sampler.h"
#include "gpu/kbase_dev.h"

#define GHZ_BOUND 2 /* no Mali GPU clocks above 2 GHz: GPU_ACTIVE <= 2 per ns */

struct st {
	const struct kbase_dev *d;
	unsigned dumps, masked_blocks, unmasked_blocks, implausible;
	uint64_t first_t1, last_t1, active_max, active_sum;
};

static int on_dump(void *ctx, uint64_t t0, uint64_t t1, const uint32_t *buf)
{
	struct st *s = ctx;
	const struct mali_layout *l = &s->d->layout;
	const struct mali_family *f = s->d->fam;
	uint64_t active = 0;
	for (size_t b = 0; b < l->nblocks; b++) {
		const struct mali_block_loc *k = &l->blocks[b];
		/* header word 2: the block's enable mask (mali_kbase_vinstr.c
		 * PRFCNT_EN_MASK_OFFSET), written with every dump */
		if (buf[k->word + 2])
			s->masked_blocks++;
		else
			s->unmasked_blocks++;
		for (size_t c = 0; c < f->ncounters; c++)
			if (f->counters[c].role == MALI_ROLE_GPU_ACTIVE && f->counters[c].block == k->type)
				active += buf[k->word + f->counters[c].index];
	}
	if (active > (t1 - t0) * GHZ_BOUND)
		s->implausible++;
	if (active > s->active_max)
		s->active_max = active;
	s->active_sum += active;
	if (!s->dumps++)
		s->first_t1 = t1;
	s->last_t1 = t1;
	return 0;
}

static void print_report(const struct kbase_dev *d, const char *path, FILE *out)
{
	fprintf(out, "device:          %s\n", path);
	fprintf(out, "interface:       %s, driver %s %u.%u%s%s\n", kbase_iface_name(d->iface),
		d->uk ? "UK" : "ioctl", d->drv_major, d->drv_minor, d->uk ? ", " : "",
		d->uk ? d->uk->name : "");
	fprintf(out, "GPU_ID:          0x%08x (product 0x%04x, r%up%u): Mali-%s (%s)\n", d->gpu_id,
		d->gpu_id >> 16, d->gpu_id >> 12 & 0xf, d->gpu_id >> 4 & 0xff, d->fam->name, d->fam->arch);
	fprintf(out, "SHADER_PRESENT:  0x%llx (%d cores)\n", (unsigned long long)d->shader_present,
		__builtin_popcountll(d->shader_present));
	fprintf(out, "L2_PRESENT:      0x%llx; L2 slices %u\n", (unsigned long long)d->l2_present, d->num_l2);
	fprintf(out, "L2_FEATURES:     0x%08x (line 2^%u bytes, size 2^%u bytes, bus %u bytes%s)\n",
		d->l2_features, d->l2_features & 0xff, d->l2_features >> 16 & 0xff, d->bus_bytes,
		mali_bus_bytes_from_l2_features(d->l2_features) ? "" : ": field 0, the family's default");
	fprintf(out, "core groups:     %u:", d->ngroups);
	for (unsigned g = 0; g < d->ngroups; g++)
		fprintf(out, " 0x%llx", (unsigned long long)d->group_mask[g]);
	fprintf(out, "\ndump layout:     v%u, %zu blocks, %zu bytes\n", d->hw_version, d->layout.nblocks,
		d->layout.words * 4);
	if (d->iface == KBASE_IFACE_UK_DUMP)
		fprintf(out, "dumps:           the agent's HWCNT_DUMP every %u us\n", d->interval_ns / 1000);
	else
		fprintf(out, "dumps:           the driver's reader every %u us (%u buffers of %u bytes)\n",
			d->interval_ns / 1000, d->buf_count, d->buf_bytes);
}

/* Take n dumps; bounded by n * 4 intervals + 2 s. */
static void take_dumps(struct kbase_dev *d, unsigned n, struct st *s)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	uint64_t limit_ns = (uint64_t)n * 4 * d->interval_ns + 2000000000ull;
	while (s->dumps < n) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		uint64_t spent = (uint64_t)(now.tv_sec - start.tv_sec) * 1000000000ull +
				 (uint64_t)now.tv_nsec - (uint64_t)start.tv_nsec;
		if (spent > limit_ns)
			return;
		if (d->iface == KBASE_IFACE_UK_DUMP) {
			struct timespec ts = {0, (long)d->interval_ns};
			nanosleep(&ts, NULL);
			if (kbase_dev_dump(d, on_dump, s) < 0)
				return;
			continue;
		}
		struct pollfd p = {kbase_dev_poll_fd(d), POLLIN, 0};
		if (d->sys->poll(&p, 1, 100) > 0 && kbase_dev_read(d, on_dump, s) < 0)
			return;
	}
}

int gpu_selftest_main(int argc, char **argv, FILE *out)
{
	const char *dev = NULL;
	unsigned long interval_us = 1000, n = 10;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = !v;
		if (v && !strcmp(argv[i], "--gpu-device"))
			dev = v;
		else if (v && !strcmp(argv[i], "--gpu-interval"))
			bad = agent_cli_ulong(v, 10000000ul, &interval_us) < 0 || interval_us < 100;
		else if (v && !strcmp(argv[i], "--dumps"))
			bad = agent_cli_ulong(v, 1000, &n) < 0 || n < 2;
		else
			bad = 1;
		if (bad) {
			fprintf(stderr,
				"usage: agent --gpu-selftest [--gpu-device PATH] [--gpu-interval US >= 100] "
				"[--dumps N >= 2]\n");
			return EXIT_USAGE;
		}
		i++;
	}
	const char *path = gpu_device_path(dev);
	struct kbase_dev d;
	char err[320];
	if (kbase_dev_open(&d, path, NULL, (uint32_t)interval_us * 1000u, err, sizeof(err)) < 0) {
		fprintf(out, "%s\nselftest: FAILED (the device did not open)\n", err);
		return 1;
	}
	print_report(&d, path, out);
	struct st s = {.d = &d};
	take_dumps(&d, (unsigned)n, &s);
	kbase_dev_close(&d);
	double mean_us = s.dumps > 1 ? (double)(s.last_t1 - s.first_t1) / 1e3 / (s.dumps - 1) : 0;
	fprintf(out,
		"dump sanity:     %u dumps (asked %lu), %.1f us apart (stated %u us); %u block headers with "
		"their enable mask, %u without; GPU_ACTIVE max %llu per dump, %u above %d per ns\n",
		s.dumps, n, mean_us, d.interval_ns / 1000, s.masked_blocks, s.unmasked_blocks,
		(unsigned long long)s.active_max, s.implausible, GHZ_BOUND);
	const char *why = s.dumps < n ? "dumps missing"
			  : !s.masked_blocks
			      ? "no block header carries an enable mask (layout, or a stale buffer)"
			  : s.implausible ? "GPU_ACTIVE above the interval's cycles (layout or counter width)"
			  : d.iface != KBASE_IFACE_UK_DUMP &&
				  (mean_us > 1.5 * d.interval_ns / 1e3 || mean_us < 0.5 * d.interval_ns / 1e3)
			      ? "the reader's dumps are not at the stated interval (its timestamps)"
			      : NULL;
	if (why) {
		fprintf(out, "selftest: FAILED: %s\n", why);
		return 1;
	}
	if (!s.active_sum)
		fprintf(out, "note: GPU_ACTIVE 0 in every dump: the GPU was idle; run a GPU program "
			     "alongside to see the "
			     "counts move\n");
	fprintf(out, "selftest: ok\n");
	return 0;
}
