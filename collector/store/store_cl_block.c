/* OpenCL command blocks (store_cl_block.h). */
#include "store_cl_block.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/cl_block.pb-c.h"
#include "store_blocks.h"

/* 22 one-per-command columns and 9 dimensions: a 10-byte varint each at most, the
 * lists' entries too; each of the 25 columns' tag and length once a block. */
#define CMD_COLS_MAX ((22 + 9) * 10)

size_t store_cl_block_cmd_max(const Prof__ClCommand *c)
{
	return CMD_COLS_MAX + (c->n_wait_ids + c->n_mem_read + c->n_mem_written) * 10;
}

static int64_t diff(uint64_t v, uint64_t prev)
{
	return (int64_t)(v - prev); /* modulo 2^64: the reader adds it back */
}

static uint64_t dim(const uint64_t *v, size_t n, int d)
{
	return d < (int)n ? v[d] : 0;
}

/* The columns of one block, allocated at once. */
struct cols {
	Profstore__ClCommandBlock b;
	int64_t *mem;
};

static int cols_fill(struct cols *k, Prof__ClCommand *const *c, size_t n)
{
	size_t nw = 0, nr = 0, nx = 0;
	for (size_t i = 0; i < n; i++) {
		nw += c[i]->n_wait_ids;
		nr += c[i]->n_mem_read;
		nx += c[i]->n_mem_written;
	}
	Profstore__ClCommandBlock *b = &k->b;
	profstore__cl_command_block__init(b);
	k->mem = malloc(((22 + 9) * n + nw + nr + nx + 1) * sizeof(int64_t));
	if (!k->mem)
		return -ENOMEM;
	int64_t *m = k->mem;
#define COL(f, cnt) (b->n_##f = (cnt), b->f = m, m += (cnt))
	COL(pid, n), COL(id, n), COL(queue_id, n), COL(type, n), COL(kernel_id, n), COL(work_dim, n);
	COL(global_size, 3 * n), COL(local_size, 3 * n), COL(global_offset, 3 * n);
	COL(queued_ns, n), COL(submit_ns, n), COL(start_ns, n), COL(end_ns, n), COL(host_enqueue_ns, n);
	COL(host_complete_ns, n), COL(bytes, n), COL(prev_in_queue, n), COL(dropped_before, n), COL(flags, n);
	COL(n_wait, n), COL(n_read, n), COL(n_written, n), COL(wait_ids, nw), COL(mem_read, nr);
	COL(mem_written, nx);
#undef COL
	const Prof__ClCommand z = PROF__CL_COMMAND__INIT, *p = &z;
	uint64_t gp[3] = {0}, lp[3] = {0}, op[3] = {0}, rp = 0, xp = 0;
	size_t w = 0, r = 0, x = 0;
	for (size_t i = 0; i < n; p = c[i], i++) {
		const Prof__ClCommand *e = c[i];
		b->pid[i] = diff((uint64_t)(int64_t)e->pid, (uint64_t)(int64_t)p->pid);
		b->id[i] = diff(e->id, p->id);
		b->queue_id[i] = diff(e->queue_id, p->queue_id);
		b->type[i] = diff(e->type, p->type);
		b->kernel_id[i] = diff(e->kernel_id, p->kernel_id);
		b->work_dim[i] = diff(e->work_dim, p->work_dim);
		for (int d = 0; d < 3; d++) {
			uint64_t g = dim(e->global_size, e->n_global_size, d),
				 l = dim(e->local_size, e->n_local_size, d),
				 o = dim(e->global_offset, e->n_global_offset, d);
			b->global_size[3 * i + d] = diff(g, gp[d]);
			b->local_size[3 * i + d] = diff(l, lp[d]);
			b->global_offset[3 * i + d] = diff(o, op[d]);
			gp[d] = g, lp[d] = l, op[d] = o;
		}
		b->queued_ns[i] = diff(e->queued_ns, p->queued_ns);
		b->submit_ns[i] = diff(e->submit_ns, e->queued_ns);
		b->start_ns[i] = diff(e->start_ns, e->submit_ns);
		b->end_ns[i] = diff(e->end_ns, e->start_ns);
		b->host_enqueue_ns[i] = diff(e->host_enqueue_ns, p->host_enqueue_ns);
		b->host_complete_ns[i] = diff(e->host_complete_ns, e->host_enqueue_ns);
		b->bytes[i] = diff(e->bytes, p->bytes);
		b->prev_in_queue[i] = diff(e->id, e->prev_in_queue);
		b->dropped_before[i] = diff(e->dropped_before, p->dropped_before);
		b->flags[i] = (e->forced_profiling ? 1 : 0) | (e->layer_event ? 2 : 0);
		b->n_wait[i] = (int64_t)e->n_wait_ids;
		b->n_read[i] = (int64_t)e->n_mem_read;
		b->n_written[i] = (int64_t)e->n_mem_written;
		for (size_t j = 0; j < e->n_wait_ids; j++)
			b->wait_ids[w++] = diff(e->id, e->wait_ids[j]);
		for (size_t j = 0; j < e->n_mem_read; j++) {
			b->mem_read[r++] = diff(e->mem_read[j], rp);
			rp = e->mem_read[j];
		}
		for (size_t j = 0; j < e->n_mem_written; j++) {
			b->mem_written[x++] = diff(e->mem_written[j], xp);
			xp = e->mem_written[j];
		}
	}
	return 0;
}

int store_cl_block_pack(Prof__ClCommand *const *c, size_t n, uint8_t **out, size_t *outlen, uint64_t *t_first,
			uint64_t *t_last)
{
	*out = NULL;
	*outlen = 0;
	*t_first = n ? c[0]->host_enqueue_ns : 0;
	*t_last = 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i]->host_enqueue_ns < *t_first)
			*t_first = c[i]->host_enqueue_ns;
		if (c[i]->host_complete_ns > *t_last)
			*t_last = c[i]->host_complete_ns;
	}
	if (*t_last < *t_first)
		*t_last = *t_first;
	struct cols k;
	int rc = cols_fill(&k, c, n);
	if (rc < 0)
		return rc;
	size_t len = profstore__cl_command_block__get_packed_size(&k.b);
	uint8_t *raw = malloc(len ? len : 1);
	if (!raw) {
		free(k.mem);
		return -ENOMEM;
	}
	profstore__cl_command_block__pack(&k.b, raw);
	free(k.mem);
	uint8_t *z;
	size_t zlen;
	if ((rc = store_block_pack(raw, len, &z, &zlen)) < 0) {
		free(raw);
		return rc;
	}
	if (z) {
		free(raw);
		*out = z;
		*outlen = zlen;
	} else {
		*out = raw;
		*outlen = len;
	}
	return 0;
}

/* ------------------------------------------------------------------ rows */
struct store_cl_rows_ent {
	struct store_cl_command_row r;
	size_t off; /* its lists in v->list, wait then read then written */
};

static int grow_list(struct store_cl_rows *v, size_t more)
{
	if (v->nlist + more <= v->caplist)
		return 0;
	size_t cap = v->caplist ? v->caplist : 1024;
	while (cap < v->nlist + more)
		cap *= 2;
	uint64_t *l = realloc(v->list, cap * sizeof(*l));
	if (!l)
		return -ENOMEM;
	v->list = l;
	v->caplist = cap;
	return 0;
}

static struct store_cl_rows_ent *new_ent(struct store_cl_rows *v, size_t nlists)
{
	if (grow_list(v, nlists) < 0)
		return NULL;
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		struct store_cl_rows_ent *e = realloc(v->ent, cap * sizeof(*e));
		if (!e)
			return NULL;
		v->ent = e;
		v->cap = cap;
	}
	struct store_cl_rows_ent *e = &v->ent[v->n++];
	memset(e, 0, sizeof(*e));
	e->off = v->nlist;
	v->nlist += nlists;
	return e;
}

int store_cl_rows_add(struct store_cl_rows *v, const struct store_cl_command_row *r)
{
	struct store_cl_rows_ent *e = new_ent(v, r->n_wait + r->n_read + r->n_written);
	if (!e)
		return -ENOMEM;
	e->r = *r;
	uint64_t *l = v->list + e->off;
	if (r->n_wait)
		memcpy(l, r->wait_ids, r->n_wait * sizeof(*l));
	if (r->n_read)
		memcpy(l + r->n_wait, r->mem_read, r->n_read * sizeof(*l));
	if (r->n_written)
		memcpy(l + r->n_wait + r->n_read, r->mem_written, r->n_written * sizeof(*l));
	e->r.wait_ids = e->r.mem_read = e->r.mem_written = NULL;
	return 0;
}

/* Every column as long as the commands say; the lists' lengths add up. */
static bool block_ok(const Profstore__ClCommandBlock *b)
{
	size_t n = b->n_id;
	if (b->n_pid != n || b->n_queue_id != n || b->n_type != n || b->n_kernel_id != n ||
	    b->n_work_dim != n || b->n_global_size != 3 * n || b->n_local_size != 3 * n ||
	    b->n_global_offset != 3 * n || b->n_queued_ns != n || b->n_submit_ns != n || b->n_start_ns != n ||
	    b->n_end_ns != n || b->n_host_enqueue_ns != n || b->n_host_complete_ns != n || b->n_bytes != n ||
	    b->n_prev_in_queue != n || b->n_dropped_before != n || b->n_flags != n || b->n_n_wait != n ||
	    b->n_n_read != n || b->n_n_written != n)
		return false;
	size_t w = 0, r = 0, x = 0;
	for (size_t i = 0; i < n; i++) {
		if (b->n_wait[i] < 0 || b->n_read[i] < 0 || b->n_written[i] < 0 ||
		    (uint64_t)b->n_wait[i] > b->n_wait_ids - w ||
		    (uint64_t)b->n_read[i] > b->n_mem_read - r ||
		    (uint64_t)b->n_written[i] > b->n_mem_written - x)
			return false;
		w += (size_t)b->n_wait[i];
		r += (size_t)b->n_read[i];
		x += (size_t)b->n_written[i];
	}
	return w == b->n_wait_ids && r == b->n_mem_read && x == b->n_mem_written;
}

static int block_rows(struct store_cl_rows *v, const Profstore__ClCommandBlock *b, uint64_t seq,
		      uint64_t t_from, uint64_t t_to)
{
	struct store_cl_command_row p;
	memset(&p, 0, sizeof(p));
	uint64_t rp = 0, xp = 0;
	size_t w = 0, r = 0, x = 0;
	for (size_t i = 0; i < b->n_id; i++) {
		struct store_cl_command_row c;
		memset(&c, 0, sizeof(c));
		c.seq = seq;
		c.pid = (int32_t)((uint64_t)(int64_t)p.pid + (uint64_t)b->pid[i]);
		c.id = p.id + (uint64_t)b->id[i];
		c.queue_id = (uint32_t)(p.queue_id + (uint64_t)b->queue_id[i]);
		c.type = (uint32_t)(p.type + (uint64_t)b->type[i]);
		c.kernel_id = (uint32_t)(p.kernel_id + (uint64_t)b->kernel_id[i]);
		c.work_dim = (uint32_t)(p.work_dim + (uint64_t)b->work_dim[i]);
		for (int d = 0; d < 3; d++) {
			c.global_size[d] = p.global_size[d] + (uint64_t)b->global_size[3 * i + d];
			c.local_size[d] = p.local_size[d] + (uint64_t)b->local_size[3 * i + d];
			c.global_offset[d] = p.global_offset[d] + (uint64_t)b->global_offset[3 * i + d];
		}
		c.queued_ns = p.queued_ns + (uint64_t)b->queued_ns[i];
		c.submit_ns = c.queued_ns + (uint64_t)b->submit_ns[i];
		c.start_ns = c.submit_ns + (uint64_t)b->start_ns[i];
		c.end_ns = c.start_ns + (uint64_t)b->end_ns[i];
		c.host_enqueue_ns = p.host_enqueue_ns + (uint64_t)b->host_enqueue_ns[i];
		c.host_complete_ns = c.host_enqueue_ns + (uint64_t)b->host_complete_ns[i];
		c.bytes = p.bytes + (uint64_t)b->bytes[i];
		c.prev_in_queue = c.id - (uint64_t)b->prev_in_queue[i];
		c.dropped_before = p.dropped_before + (uint64_t)b->dropped_before[i];
		c.forced_profiling = (b->flags[i] & 1) != 0;
		c.layer_event = (b->flags[i] & 2) != 0;
		c.n_wait = (size_t)b->n_wait[i];
		c.n_read = (size_t)b->n_read[i];
		c.n_written = (size_t)b->n_written[i];
		p = c;
		bool keep = c.host_enqueue_ns >= t_from && c.host_enqueue_ns < t_to;
		struct store_cl_rows_ent *e = keep ? new_ent(v, c.n_wait + c.n_read + c.n_written) : NULL;
		if (keep && !e)
			return -ENOMEM;
		uint64_t *l = e ? v->list + e->off : NULL;
		for (size_t j = 0; j < c.n_wait; j++, w++)
			if (l)
				*l++ = c.id - (uint64_t)b->wait_ids[w];
		for (size_t j = 0; j < c.n_read; j++, r++) {
			rp += (uint64_t)b->mem_read[r];
			if (l)
				*l++ = rp;
		}
		for (size_t j = 0; j < c.n_written; j++, x++) {
			xp += (uint64_t)b->mem_written[x];
			if (l)
				*l++ = xp;
		}
		if (e)
			e->r = c;
	}
	return 0;
}

int store_cl_block_read(struct store_cl_rows *v, const uint8_t *p, size_t len, uint64_t seq, uint64_t t_from,
			uint64_t t_to)
{
	uint8_t *owned;
	size_t rawlen;
	const uint8_t *raw = store_block_unpack(p, len, &rawlen, &owned);
	if (!raw)
		return -ENOMEM;
	Profstore__ClCommandBlock *b = profstore__cl_command_block__unpack(NULL, rawlen, raw);
	free(owned);
	if (!b)
		return -EBADMSG;
	int rc = block_ok(b) ? block_rows(v, b, seq, t_from, t_to) : -EBADMSG;
	profstore__cl_command_block__free_unpacked(b, NULL);
	return rc;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct store_cl_command_row *x = &((const struct store_cl_rows_ent *)a)->r,
					  *y = &((const struct store_cl_rows_ent *)b)->r;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int store_cl_rows_each(struct store_cl_rows *v, store_cl_command_cb cb, void *arg)
{
	if (v->n > 1)
		qsort(v->ent, v->n, sizeof(*v->ent), cmp_ent);
	for (size_t i = 0; i < v->n; i++) {
		struct store_cl_command_row *r = &v->ent[i].r;
		static const uint64_t none[1];
		const uint64_t *l =
		    v->list ? v->list + v->ent[i].off : none; /* never NULL, as rows' lists were */
		r->wait_ids = l;
		r->mem_read = l + r->n_wait;
		r->mem_written = l + r->n_wait + r->n_read;
		int stop = cb(r, arg);
		if (stop)
			return stop;
	}
	return 0;
}

void store_cl_rows_free(struct store_cl_rows *v)
{
	free(v->ent);
	free(v->list);
	memset(v, 0, sizeof(*v));
}
