#include "gpu/gpu_sampler.h"
#include "net.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "loop.h"
#include "profiler.pb-c.h"
#include "session.h"

struct gpu_sampler {
	struct kbase_dev dev;
	struct gpu_rows rows;
	uint32_t interval_ns;
	struct session *s;
	struct loop *l;
	struct loop_timer dump_timer, flush_timer;
	bool declared;
	uint64_t drop_gen;
	uint64_t records, rows_sent, values_sent, bytes_sent, rows_dropped;
	uint32_t rec_dumps, rec_late; /* folded into the waiting rows */
	int error;
};

const char *gpu_device_path(const char *opt)
{
	if (opt && *opt)
		return opt;
	const char *e = getenv("PROF_MALI_DEVICE");
	return e && *e ? e : "/dev/mali0";
}

int gpu_sampler_open(struct gpu_sampler **out, const struct gpu_sampler_opts *o, char *err, size_t errlen)
{
	struct gpu_sampler *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->interval_ns = o->interval_ns ? o->interval_ns : GPU_DEFAULT_INTERVAL_NS;
	int rc = kbase_dev_open(&g->dev, gpu_device_path(o->device), o->sys, g->interval_ns, err, errlen);
	if (rc < 0) {
		free(g);
		return rc;
	}
	g->interval_ns = g->dev.interval_ns; /* the reader may dump less often than asked */
	g->rows.ncols = g->dev.fam->ncounters;
	g->rows.values = calloc(GPU_MAX_ROWS * g->rows.ncols, sizeof(uint64_t));
	if (!g->rows.values) {
		kbase_dev_close(&g->dev);
		free(g);
		return -ENOMEM;
	}
	uint32_t flush_ms = o->flush_ms ? o->flush_ms : GPU_DEFAULT_FLUSH_MS;
	g->flush_timer.period_ns = (uint64_t)flush_ms * 1000000u;
	*out = g;
	return 0;
}

const struct kbase_dev *gpu_sampler_dev(const struct gpu_sampler *g)
{
	return &g->dev;
}
const struct gpu_rows *gpu_sampler_rows(const struct gpu_sampler *g)
{
	return &g->rows;
}
const struct mali_counter *gpu_sampler_column(const struct gpu_sampler *g, size_t c)
{
	return c < g->rows.ncols ? &g->dev.fam->counters[c] : NULL;
}

void gpu_sampler_discard(struct gpu_sampler *g)
{
	g->rows.nrows = 0;
	g->rec_dumps = g->rec_late = 0;
}

static bool row_zero(const struct gpu_rows *r, size_t i)
{
	for (size_t c = 0; c < r->ncols; c++)
		if (r->values[i * r->ncols + c])
			return false;
	return true;
}

/* One dump: sum each column over the instances of its block. */
static int on_sample(void *ctx, uint64_t t0, uint64_t t1, const uint32_t *delta)
{
	struct gpu_sampler *g = ctx;
	struct gpu_rows *r = &g->rows;
	if (r->nrows == GPU_MAX_ROWS) {
		gpu_sampler_flush(g);
		if (r->nrows ==
		    GPU_MAX_ROWS) { /* not sent (no session, or it failed): keep going, count the loss */
			g->rows_dropped += r->nrows;
			gpu_sampler_discard(g);
		}
	}
	size_t i = r->nrows;
	uint64_t *v = &r->values[i * r->ncols];
	memset(v, 0, r->ncols * sizeof(*v));
	const struct mali_layout *lay = &g->dev.layout;
	for (size_t c = 0; c < r->ncols; c++) {
		const struct mali_counter *mc = &g->dev.fam->counters[c];
		for (size_t b = 0; b < lay->nblocks; b++)
			if (lay->blocks[b].type == mc->block)
				v[c] += delta[lay->blocks[b].word + mc->index];
	}
	g->rec_dumps++;
	/* Consecutive idle dumps become one row: zero over the union is exact. */
	if (i > 0 && row_zero(r, i) && row_zero(r, i - 1) && r->t1[i - 1] == t0) {
		r->t1[i - 1] = t1;
		return 0;
	}
	r->t0[i] = t0;
	r->t1[i] = t1;
	r->nrows++;
	return 0;
}

int gpu_sampler_poll(struct gpu_sampler *g)
{
	uint32_t late = (uint32_t)g->dev.late_dumps;
	int rc = g->dev.iface == KBASE_IFACE_UK_DUMP ? kbase_dev_dump(&g->dev, on_sample, g)
						     : kbase_dev_read(&g->dev, on_sample, g);
	g->rec_late += (uint32_t)g->dev.late_dumps - late;
	return rc;
}

int gpu_sampler_final_dump(struct gpu_sampler *g)
{
	uint32_t late = (uint32_t)g->dev.late_dumps;
	int rc = g->dev.iface == KBASE_IFACE_UK_DUMP ? 0 : kbase_dev_read(&g->dev, on_sample, g);
	if (rc >= 0)
		rc = kbase_dev_dump(&g->dev, on_sample, g);
	g->rec_late += (uint32_t)g->dev.late_dumps - late;
	return rc;
}

int gpu_sampler_flush(struct gpu_sampler *g)
{
	struct gpu_rows *r = &g->rows;
	if (!g->s || r->nrows == 0)
		return 0;
	const struct kbase_dev *d = &g->dev;
	size_t nc = r->ncols, nr = r->nrows;
	uint32_t *ids = calloc(nc, sizeof(*ids));
	uint64_t *lens = calloc(nr, sizeof(*lens));
	Prof__GpuCounterDesc *descs = calloc(nc, sizeof(*descs));
	Prof__GpuCounterDesc **dptr = calloc(nc, sizeof(*dptr));
	if (!ids || !lens || !descs || !dptr) {
		free(ids), free(lens), free(descs), free(dptr);
		return -ENOMEM;
	}
	if (session_drop_generation(g->s) != g->drop_gen) {
		g->drop_gen = session_drop_generation(g->s);
		g->declared = false;
	}
	for (size_t c = 0; c < nc; c++) {
		ids[c] = (uint32_t)c + 1;
		prof__gpu_counter_desc__init(&descs[c]);
		descs[c].id = ids[c];
		descs[c].name = (char *)d->fam->counters[c].name;
		descs[c].block = d->fam->counters[c].block;
		descs[c].index = d->fam->counters[c].index;
		descs[c].role = d->fam->counters[c].role;
		dptr[c] = &descs[c];
	}
	uint64_t base = session_base_ns(g->s);
	for (size_t i = 0; i < nr; i++)
		lens[i] = r->t1[i] - r->t0[i];
	Prof__GpuInfo info = PROF__GPU_INFO__INIT;
	info.family = (char *)d->fam->name;
	info.arch = (char *)d->fam->arch;
	info.gpu_id = d->gpu_id;
	info.shader_present = d->shader_present;
	info.num_l2 = d->num_l2;
	info.bus_bytes = d->bus_bytes;
	info.interface = (char *)kbase_iface_name(d->iface);
	info.interval_ns = g->interval_ns;
	/* Rows in as few records as the frame size allows: a record the session
	 * refuses as too large (-EMSGSIZE) is sent in halves. */
	size_t start = 0, chunk = nr;
	int rc = 0;
	while (start < nr) {
		size_t n = chunk < nr - start ? chunk : nr - start;
		Prof__GpuCounters gc = PROF__GPU_COUNTERS__INIT;
		gc.n_counter_ids = nc;
		gc.counter_ids = ids;
		gc.t0_ns = r->t0[start] > base ? r->t0[start] - base : 0;
		gc.n_t_ns = n;
		gc.t_ns = lens + start;
		gc.n_values = n * nc;
		gc.values = r->values + start * nc;
		gc.dumps = g->rec_dumps;
		gc.late_dumps = g->rec_late > g->rec_dumps ? g->rec_dumps : g->rec_late;
		Prof__Envelope env = PROF__ENVELOPE__INIT;
		env.body_case = PROF__ENVELOPE__BODY_GPU_COUNTERS;
		env.gpu_counters = &gc;
		bool declare =
		    !g->declared || session_would_drop(g->s, prof__gpu_counters__get_packed_size(&gc) + 64);
		if (declare) {
			gc.info = &info;
			gc.n_new_counters = nc;
			gc.new_counters = dptr;
		}
		size_t bytes = prof__envelope__get_packed_size(&env);
		rc = session_send(g->s, &env);
		if (rc == -EMSGSIZE && n > 1) {
			chunk = n / 2;
			continue;
		}
		if (rc < 0)
			break;
		g->declared = true;
		g->records++;
		g->rows_sent += n;
		g->values_sent += n * nc;
		g->bytes_sent += bytes;
		g->rec_dumps = g->rec_late = 0;
		start += n;
	}
	if (start > 0) { /* forget what was sent */
		size_t left = nr - start;
		memmove(r->t0, r->t0 + start, left * sizeof(r->t0[0]));
		memmove(r->t1, r->t1 + start, left * sizeof(r->t1[0]));
		memmove(r->values, r->values + start * nc, left * nc * sizeof(r->values[0]));
		r->nrows = left;
	}
	free(ids), free(lens), free(descs), free(dptr);
	return rc;
}

static int gpu_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *timeout_ms)
{
	struct gpu_sampler *g = ctx;
	if (g->dev.iface == KBASE_IFACE_UK_DUMP)
		loop_timer_timeout(&g->dump_timer, now, timeout_ms);
	loop_timer_timeout(&g->flush_timer, now, timeout_ms);
	if (max < 1 || g->dev.rfd < 0)
		return 0;
	pfd[0].fd = g->dev.rfd;
	pfd[0].events = POLLIN;
	return 1;
}

static int gpu_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct gpu_sampler *g = ctx;
	int rc = 0;
	if (n > 0 && (pfd[0].revents & (POLLIN | POLLERR)))
		rc = gpu_sampler_poll(g);
	if (g->dev.iface == KBASE_IFACE_UK_DUMP && loop_timer_expired(&g->dump_timer, now))
		rc = gpu_sampler_poll(g);
	if (rc < 0 && !g->error) {
		g->error = rc;
		log_error("gpu counters: reading a dump failed: %s; the session goes on without them",
			  strerror(-rc));
		loop_remove(g->l, g);
		return 0;
	}
	if (loop_timer_expired(&g->flush_timer, now) || g->rows.nrows >= GPU_MAX_ROWS / 2)
		gpu_sampler_flush(g);
	return 0;
}

int gpu_sampler_attach(struct gpu_sampler *g, struct session *s, struct loop *l)
{
	g->s = s;
	g->l = l;
	g->drop_gen = session_drop_generation(s);
	uint64_t now = clock_mono_ns();
	loop_timer_start(&g->flush_timer, g->flush_timer.period_ns, now);
	if (g->dev.iface == KBASE_IFACE_UK_DUMP)
		loop_timer_start(&g->dump_timer, g->interval_ns, now);
	struct loop_source src = {"gpu", gpu_prepare, gpu_dispatch, g};
	return loop_add(l, &src);
}

void gpu_sampler_print_summary(const struct gpu_sampler *g, FILE *out)
{
	fprintf(out, " GPU counters: %s\n", g->dev.desc);
	fprintf(out,
		"   %llu dumps (%llu late), %llu records, %llu rows, %llu values, %llu bytes on the wire",
		(unsigned long long)g->dev.dumps, (unsigned long long)g->dev.late_dumps,
		(unsigned long long)g->records, (unsigned long long)g->rows_sent,
		(unsigned long long)g->values_sent, (unsigned long long)g->bytes_sent);
	if (g->dev.dumps)
		fprintf(out, " (%.1f bytes/dump)", (double)g->bytes_sent / (double)g->dev.dumps);
	if (g->rows_dropped)
		fprintf(out, "; %llu rows not sent", (unsigned long long)g->rows_dropped);
	fprintf(out, "\n");
}

void gpu_sampler_close(struct gpu_sampler *g)
{
	if (!g)
		return;
	kbase_dev_close(&g->dev);
	free(g->rows.values);
	free(g);
}
