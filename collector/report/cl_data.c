#include "cl_data.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *cl_command_type_name(uint32_t type)
{
	switch (type) {
	case 0x11F0: return "ndrange";
	case 0x11F1: return "task";
	case 0x11F2: return "native kernel";
	case 0x11F3: return "read buffer";
	case 0x11F4: return "write buffer";
	case 0x11F5: return "copy buffer";
	case 0x11F6: return "read image";
	case 0x11F7: return "write image";
	case 0x11F8: return "copy image";
	case 0x11F9: return "copy image to buffer";
	case 0x11FA: return "copy buffer to image";
	case 0x1207: return "fill buffer";
	case 0x1208: return "fill image";
	case 0x11FB: return "map buffer";
	case 0x11FC: return "map image";
	case 0x11FD: return "unmap";
	case 0x11FE: return "marker";
	case 0x1201: return "read buffer rect";
	case 0x1202: return "write buffer rect";
	case 0x1203: return "copy buffer rect";
	case 0x1205: return "barrier";
	case 0x1206: return "migrate";
	case 0x120A: return "svm memcpy";
	case 0x120B: return "svm fill";
	case 0x120C: return "svm map";
	case 0x120D: return "svm unmap";
	case 0x120E: return "svm migrate";
	default: return "command";
	}
}

uint64_t cl_data_duration(const struct cl_data_cmd *c)
{
	return c->r.end_ns > c->r.start_ns && c->r.start_ns ? c->r.end_ns - c->r.start_ns : 0;
}

static int add_kernel(const struct store_cl_kernel_row *k, void *arg)
{
	struct cl_data *d = arg;
	if (k->id >= 1u << 20)
		return 0;
	if (k->id >= d->n_kernels) {
		size_t n = k->id + 1;
		struct cl_data_kernel *nk = realloc(d->kernels, n * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		memset(nk + d->n_kernels, 0, (n - d->n_kernels) * sizeof(*nk));
		d->kernels = nk;
		d->n_kernels = n;
	}
	struct cl_data_kernel *dk = &d->kernels[k->id];
	free(dk->name);
	free(dk->options);
	dk->name = strdup(k->name);
	dk->options = strdup(k->build_options ? k->build_options : "");
	dk->program_hash = k->program_hash;
	return dk->name && dk->options ? 0 : -ENOMEM;
}

struct load {
	struct cl_data *d;
	size_t cap;
};

static int add_cmd(const struct store_cl_command_row *r, void *arg)
{
	struct load *l = arg;
	struct cl_data *d = l->d;
	if (d->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct cl_data_cmd *nc = realloc(d->cmds, cap * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		d->cmds = nc;
		l->cap = cap;
	}
	struct cl_data_cmd *c = &d->cmds[d->n];
	memset(c, 0, sizeof(*c));
	c->r = *r;
	size_t total = r->n_wait + r->n_read + r->n_written;
	c->lists = malloc((total ? total : 1) * sizeof(uint64_t));
	if (!c->lists)
		return -ENOMEM;
	memcpy(c->lists, r->wait_ids, r->n_wait * sizeof(uint64_t));
	memcpy(c->lists + r->n_wait, r->mem_read, r->n_read * sizeof(uint64_t));
	memcpy(c->lists + r->n_wait + r->n_read, r->mem_written, r->n_written * sizeof(uint64_t));
	c->r.wait_ids = c->lists;
	c->r.mem_read = c->lists + r->n_wait;
	c->r.mem_written = c->lists + r->n_wait + r->n_read;
	d->n++;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

struct span {
	uint64_t s, e;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->s < y->s ? -1 : x->s > y->s;
}

static int analyse(struct cl_data *d)
{
	size_t n = d->n;
	struct cldag_cmd *dc = calloc(n ? n : 1, sizeof(*dc));
	int64_t *off = malloc((n ? n : 1) * sizeof(*off));
	struct span *sp = malloc((n ? n : 1) * sizeof(*sp));
	int rc = -ENOMEM;
	if (!dc || !off || !sp)
		goto out;
	size_t noff = 0, nsp = 0;
	for (size_t i = 0; i < n; i++) {
		const struct store_cl_command_row *r = &d->cmds[i].r;
		dc[i] = (struct cldag_cmd){
			.pid = r->pid, .id = r->id, .start_ns = r->start_ns, .end_ns = r->end_ns,
			.prev_in_queue = r->prev_in_queue, .wait_ids = r->wait_ids, .n_wait = r->n_wait,
			.mem_read = r->mem_read, .n_read = r->n_read, .mem_written = r->mem_written,
			.n_written = r->n_written,
		};
		if (!r->start_ns)
			dc[i].start_ns = dc[i].end_ns = 0;
		if (r->queued_ns && r->host_enqueue_ns)
			off[noff++] = (int64_t)r->host_enqueue_ns - (int64_t)r->queued_ns;
		if (cl_data_duration(&d->cmds[i]))
			sp[nsp++] = (struct span){r->start_ns, r->end_ns};
	}
	if (noff) {
		qsort(off, noff, sizeof(*off), cmp_i64);
		d->device_to_host_ns = off[noff / 2];
	}
	if (nsp > 1)
		qsort(sp, nsp, sizeof(*sp), cmp_span);
	uint64_t cs = 0, ce = 0;
	for (size_t i = 0; i < nsp; i++) {
		if (i == 0 || sp[i].s > ce) {
			d->busy_ns += ce - cs;
			cs = sp[i].s;
			ce = sp[i].e;
		} else if (sp[i].e > ce) {
			ce = sp[i].e;
		}
	}
	d->busy_ns += ce - cs;
	rc = cldag_build(dc, n, &d->dag);
out:
	free(dc);
	free(off);
	free(sp);
	return rc;
}

int cl_data_load(struct store *st, int64_t sid, struct cl_data *d)
{
	memset(d, 0, sizeof(*d));
	int rc = store_cl_kernels(st, sid, add_kernel, d);
	struct load l = {.d = d};
	if (rc == 0)
		rc = store_cl_commands(st, sid, add_cmd, &l);
	for (size_t i = 0; rc == 0 && i < d->n; i++) {
		struct cl_data_cmd *c = &d->cmds[i];
		uint32_t k = c->r.kernel_id;
		c->name = k && k < d->n_kernels && d->kernels[k].name ? d->kernels[k].name
			  : k ? "?" : cl_command_type_name(c->r.type);
	}
	if (rc == 0)
		rc = analyse(d);
	if (rc < 0)
		cl_data_free(d);
	return rc < 0 ? rc : 0;
}

void cl_data_free(struct cl_data *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->cmds[i].lists);
	free(d->cmds);
	for (size_t i = 0; i < d->n_kernels; i++) {
		free(d->kernels[i].name);
		free(d->kernels[i].options);
	}
	free(d->kernels);
	cldag_free(&d->dag);
	memset(d, 0, sizeof(*d));
}
