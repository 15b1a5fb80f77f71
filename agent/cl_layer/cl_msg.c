#include "cl_msg.h"

#include <errno.h>
#include <string.h>

struct wr {
	uint8_t *p;
	size_t len, cap;
	int bad;
};

static void put(struct wr *w, const void *v, size_t n)
{
	if (w->bad || w->cap - w->len < n) {
		w->bad = 1;
		return;
	}
	memcpy(w->p + w->len, v, n);
	w->len += n;
}

static void put_u64(struct wr *w, uint64_t v) { put(w, &v, sizeof(v)); }
static void put_u32(struct wr *w, uint32_t v) { put(w, &v, sizeof(v)); }

static void put_str(struct wr *w, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	uint16_t n16 = (uint16_t)n;
	put(w, &n16, sizeof(n16));
	put(w, s, n);
}

/* Header: magic, type (u16), total length of the message (u16, patched by finish). */
static void put_header(struct wr *w, enum pcl_msg_type type)
{
	put_u32(w, PCL_MSG_MAGIC);
	uint16_t t = (uint16_t)type, len = 0;
	put(w, &t, sizeof(t));
	put(w, &len, sizeof(len));
}

static int finish(struct wr *w)
{
	if (w->bad || w->len > UINT16_MAX)
		return -EMSGSIZE;
	uint16_t len = (uint16_t)w->len;
	memcpy(w->p + 6, &len, sizeof(len));
	return (int)w->len;
}

struct rd {
	const uint8_t *p;
	size_t len, off;
	int bad;
};

static void get(struct rd *r, void *v, size_t n)
{
	if (r->bad || r->len - r->off < n) {
		r->bad = 1;
		memset(v, 0, n);
		return;
	}
	memcpy(v, r->p + r->off, n);
	r->off += n;
}

static uint64_t get_u64(struct rd *r)
{
	uint64_t v;
	get(r, &v, sizeof(v));
	return v;
}

static uint32_t get_u32(struct rd *r)
{
	uint32_t v;
	get(r, &v, sizeof(v));
	return v;
}

static void get_str(struct rd *r, char *out, size_t max)
{
	uint16_t n;
	get(r, &n, sizeof(n));
	if (n > max) {
		r->bad = 1;
		n = 0;
	}
	get(r, out, n);
	out[r->bad ? 0 : n] = 0;
}

int pcl_encode_proc(enum pcl_msg_type type, const struct pcl_proc *p, uint8_t *buf, size_t cap)
{
	struct wr w = {.p = buf, .cap = cap};
	put_header(&w, type);
	put_u32(&w, (uint32_t)p->pid);
	put_u32(&w, p->mode);
	put_u32(&w, p->flags);
	put_u64(&w, p->commands);
	put_u64(&w, p->dropped);
	put_str(&w, p->detail, PCL_MAX_DETAIL);
	return finish(&w);
}

int pcl_encode_kernel(const struct pcl_kdesc *k, uint8_t *buf, size_t cap)
{
	struct wr w = {.p = buf, .cap = cap};
	put_header(&w, PCL_MSG_KERNEL);
	put_u32(&w, k->id);
	put_u64(&w, k->program_hash);
	put_str(&w, k->name, PCL_MAX_NAME);
	put_str(&w, k->options, PCL_MAX_OPTIONS);
	return finish(&w);
}

static void put_arr(struct wr *w, const uint64_t *a, uint32_t n)
{
	if (n > PCL_MAX_DEPS)
		n = PCL_MAX_DEPS;
	put_u32(w, n);
	put(w, a, n * sizeof(*a));
}

int pcl_encode_cmd(const struct pcl_cmd *c, uint8_t *buf, size_t cap)
{
	struct wr w = {.p = buf, .cap = cap};
	put_header(&w, PCL_MSG_CMD);
	put_u64(&w, c->id);
	put_u32(&w, (uint32_t)c->pid);
	put_u32(&w, c->queue_id);
	put_u32(&w, c->type);
	put_u32(&w, c->kernel);
	put_u32(&w, c->work_dim);
	uint8_t flags[4] = {c->has_local, c->has_offset, c->forced_profiling, c->layer_event};
	put(&w, flags, sizeof(flags));
	uint32_t dim = c->work_dim > 3 ? 3 : c->work_dim; /* only the dimensions in use */
	put(&w, c->global, dim * sizeof(c->global[0]));
	put(&w, c->local, dim * sizeof(c->local[0]));
	put(&w, c->offset, dim * sizeof(c->offset[0]));
	uint64_t t[10] = {c->queued,	     c->submit, c->start,	  c->end,	     c->host_enqueue,
			  c->host_complete, c->bytes,  c->prev_in_queue, c->dropped_before, 0};
	put(&w, t, sizeof(t));
	put_arr(&w, c->wait, c->n_wait);
	put_arr(&w, c->read, c->n_read);
	put_arr(&w, c->written, c->n_written);
	return finish(&w);
}

static uint32_t get_arr(struct rd *r, uint64_t *a)
{
	uint32_t n = get_u32(r);
	if (n > PCL_MAX_DEPS) {
		r->bad = 1;
		return 0;
	}
	get(r, a, n * sizeof(*a));
	return n;
}

static void get_proc(struct rd *r, struct pcl_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->pid = (int32_t)get_u32(r);
	p->mode = get_u32(r);
	p->flags = get_u32(r);
	p->commands = get_u64(r);
	p->dropped = get_u64(r);
	get_str(r, p->detail, PCL_MAX_DETAIL);
}

static void get_kernel(struct rd *r, struct pcl_kdesc *k)
{
	memset(k, 0, sizeof(*k));
	k->id = get_u32(r);
	k->program_hash = get_u64(r);
	get_str(r, k->name, PCL_MAX_NAME);
	get_str(r, k->options, PCL_MAX_OPTIONS);
	if (k->id == 0)
		r->bad = 1;
}

static void get_cmd(struct rd *r, struct pcl_cmd *c)
{
	/* not memset: the arrays are large and only their used part is read */
	c->id = get_u64(r);
	c->pid = (int32_t)get_u32(r);
	c->queue_id = get_u32(r);
	c->type = get_u32(r);
	c->kernel = get_u32(r);
	c->work_dim = get_u32(r);
	if (c->work_dim > 3) {
		r->bad = 1;
		c->work_dim = 0;
	}
	uint8_t flags[4];
	get(r, flags, sizeof(flags));
	c->has_local = flags[0] != 0;
	c->has_offset = flags[1] != 0;
	c->forced_profiling = flags[2] != 0;
	c->layer_event = flags[3] != 0;
	memset(c->global, 0, sizeof(c->global));
	memset(c->local, 0, sizeof(c->local));
	memset(c->offset, 0, sizeof(c->offset));
	get(r, c->global, c->work_dim * sizeof(c->global[0]));
	get(r, c->local, c->work_dim * sizeof(c->local[0]));
	get(r, c->offset, c->work_dim * sizeof(c->offset[0]));
	uint64_t t[10];
	get(r, t, sizeof(t));
	c->queued = t[0], c->submit = t[1], c->start = t[2], c->end = t[3];
	c->host_enqueue = t[4], c->host_complete = t[5], c->bytes = t[6];
	c->prev_in_queue = t[7], c->dropped_before = t[8];
	c->n_wait = get_arr(r, c->wait);
	c->n_read = get_arr(r, c->read);
	c->n_written = get_arr(r, c->written);
}

int pcl_decode(const uint8_t *buf, size_t len, struct pcl_msg *m)
{
	struct rd r = {.p = buf, .len = len};
	if (get_u32(&r) != PCL_MSG_MAGIC)
		return -EINVAL;
	uint16_t type = 0, mlen = 0;
	get(&r, &type, sizeof(type));
	get(&r, &mlen, sizeof(mlen));
	if (r.bad || mlen < r.off || mlen > len)
		return -EINVAL;
	r.len = mlen; /* this message only */
	m->type = type;
	switch (type) {
	case PCL_MSG_HELLO:
	case PCL_MSG_BYE:
	case PCL_MSG_NOTE:
		get_proc(&r, &m->u.proc);
		break;
	case PCL_MSG_CMD:
		get_cmd(&r, &m->u.cmd);
		break;
	case PCL_MSG_KERNEL:
		get_kernel(&r, &m->u.kernel);
		break;
	default:
		return -EINVAL;
	}
	if (r.bad || r.off != mlen)
		return -EINVAL;
	return (int)mlen;
}
