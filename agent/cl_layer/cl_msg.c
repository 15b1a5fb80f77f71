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

static void put_header(struct wr *w, enum pcl_msg_type type)
{
	put_u32(w, PCL_MSG_MAGIC);
	put_u32(w, (uint32_t)type);
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
	put_u64(&w, p->commands);
	put_u64(&w, p->dropped);
	return w.bad ? -EMSGSIZE : (int)w.len;
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
	put_u32(&w, c->work_dim);
	uint8_t flags[4] = {c->has_local, c->has_offset, c->forced_profiling, c->layer_event};
	put(&w, flags, sizeof(flags));
	put(&w, c->global, sizeof(c->global));
	put(&w, c->local, sizeof(c->local));
	put(&w, c->offset, sizeof(c->offset));
	uint64_t t[11] = {c->queued,	    c->submit,	      c->start, c->end,		 c->host_enqueue,
			  c->host_complete, c->bytes,	      c->prev_in_queue, c->dropped_before,
			  c->program_hash,  0};
	put(&w, t, sizeof(t));
	put_arr(&w, c->wait, c->n_wait);
	put_arr(&w, c->read, c->n_read);
	put_arr(&w, c->written, c->n_written);
	put_str(&w, c->kernel, PCL_MAX_NAME);
	put_str(&w, c->options, PCL_MAX_OPTIONS);
	return w.bad ? -EMSGSIZE : (int)w.len;
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

int pcl_decode(const uint8_t *buf, size_t len, struct pcl_proc *p, struct pcl_cmd *c)
{
	struct rd r = {.p = buf, .len = len};
	if (get_u32(&r) != PCL_MSG_MAGIC)
		return -EINVAL;
	uint32_t type = get_u32(&r);
	if (type == PCL_MSG_HELLO || type == PCL_MSG_BYE) {
		memset(p, 0, sizeof(*p));
		p->pid = (int32_t)get_u32(&r);
		p->mode = get_u32(&r);
		p->commands = get_u64(&r);
		p->dropped = get_u64(&r);
	} else if (type == PCL_MSG_CMD) {
		memset(c, 0, sizeof(*c));
		c->id = get_u64(&r);
		c->pid = (int32_t)get_u32(&r);
		c->queue_id = get_u32(&r);
		c->type = get_u32(&r);
		c->work_dim = get_u32(&r);
		uint8_t flags[4];
		get(&r, flags, sizeof(flags));
		c->has_local = flags[0] != 0;
		c->has_offset = flags[1] != 0;
		c->forced_profiling = flags[2] != 0;
		c->layer_event = flags[3] != 0;
		get(&r, c->global, sizeof(c->global));
		get(&r, c->local, sizeof(c->local));
		get(&r, c->offset, sizeof(c->offset));
		uint64_t t[11];
		get(&r, t, sizeof(t));
		c->queued = t[0], c->submit = t[1], c->start = t[2], c->end = t[3];
		c->host_enqueue = t[4], c->host_complete = t[5], c->bytes = t[6];
		c->prev_in_queue = t[7], c->dropped_before = t[8], c->program_hash = t[9];
		c->n_wait = get_arr(&r, c->wait);
		c->n_read = get_arr(&r, c->read);
		c->n_written = get_arr(&r, c->written);
		get_str(&r, c->kernel, PCL_MAX_NAME);
		get_str(&r, c->options, PCL_MAX_OPTIONS);
		if (c->work_dim > 3)
			r.bad = 1;
	} else {
		return -EINVAL;
	}
	if (r.bad || r.off != len)
		return -EINVAL;
	return (int)type;
}
