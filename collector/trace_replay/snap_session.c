/* One board snapshot's replay between TraceSnapshot, PageRequest/Pages and the window (snap_session.h). */
#include "snap_session.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct page {
	uint64_t addr;
	int status;    /* 0: data held; > 0: the agent's errno for it; -1: asked, no answer yet */
	uint8_t *data; /* page_size bytes when status 0 */
};

struct snap_session {
	uint32_t id;
	int32_t pid, tid;
	uint32_t window_index;
	uint64_t *regs;
	struct trace_replay_map *maps;
	struct trace_replay_snap snap;
	struct trace_replay_config cfg;
	struct trace_replay_result res;
	struct trace_replay *rp;
	struct page *pages; /* asked for, in request order (few: bounded by the snapshot's budget) */
	size_t npages, cap;
	bool done;
};

static struct page *find(struct snap_session *s, uint64_t addr)
{
	for (size_t i = 0; i < s->npages; i++) /* linear: a window asks for tens to hundreds of pages */
		if (s->pages[i].addr == addr)
			return &s->pages[i];
	return NULL;
}

static int fetch(void *arg, uint64_t addr, uint8_t *buf, uint32_t ps)
{
	struct snap_session *s = arg;
	struct page *p = find(s, addr);
	if (!p || p->status < 0)
		return -EAGAIN;
	if (p->status > 0)
		return -p->status;
	memcpy(buf, p->data, ps);
	return 0;
}

int snap_session_new(const Prof__TraceSnapshot *snap, const struct trace_replay_config *cfg, struct snap_session **out,
		     char *why, size_t whylen)
{
	*out = NULL;
	struct snap_session *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->id = snap->snapshot_id;
	s->pid = snap->pid;
	s->tid = snap->tid;
	s->window_index = snap->window_index;
	s->regs = malloc((snap->n_regs ? snap->n_regs : 1) * sizeof(*s->regs));
	s->maps = malloc((snap->n_maps ? snap->n_maps : 1) * sizeof(*s->maps));
	if (!s->regs || !s->maps) {
		snap_session_free(s);
		return -ENOMEM;
	}
	memcpy(s->regs, snap->regs, snap->n_regs * sizeof(*s->regs));
	for (size_t i = 0; i < snap->n_maps; i++)
		s->maps[i] = (struct trace_replay_map){snap->maps[i]->start, snap->maps[i]->end, snap->maps[i]->prot};
	s->snap = (struct trace_replay_snap){.arch = snap->arch, .regs = s->regs, .nregs = snap->n_regs,
					     .maps = s->maps, .nmaps = snap->n_maps, .page_size = snap->page_size,
					     .tls = snap->tls};
	s->cfg = *cfg;
	if (!s->cfg.max_pages || s->cfg.max_pages > snap->max_pages)
		s->cfg.max_pages = snap->max_pages; /* the agent serves no more */
	int rc = trace_replay_open(&s->snap, fetch, s, &s->cfg, &s->res, &s->rp);
	if (rc < 0) {
		snprintf(why, whylen, "%s", s->res.why);
		snap_session_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void snap_session_free(struct snap_session *s)
{
	if (!s)
		return;
	trace_replay_close(s->rp);
	trace_replay_result_free(&s->res);
	for (size_t i = 0; i < s->npages; i++)
		free(s->pages[i].data);
	free(s->pages);
	free(s->regs);
	free(s->maps);
	free(s);
}

uint32_t snap_session_id(const struct snap_session *s)
{
	return s->id;
}

static int ask(struct snap_session *s, uint64_t addr)
{
	if (s->npages == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 64;
		struct page *np = realloc(s->pages, ncap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		s->pages = np;
		s->cap = ncap;
	}
	s->pages[s->npages++] = (struct page){.addr = addr, .status = -1};
	return 0;
}

int snap_session_step(struct snap_session *s, uint64_t *addr, size_t *n)
{
	*n = 0;
	if (s->done)
		return 0;
	int rc = trace_replay_resume(s->rp);
	if (rc <= 0) {
		s->done = rc == 0;
		return rc;
	}
	uint64_t need = s->res.need_page;
	if (need == 0)
		return 2; /* paused for cfg->slice */
	struct page *p = find(s, need);
	if (p) /* asked already and still unanswered: ask again */
		return addr[(*n)++] = need, 1;
	/* the missing page and the next ones of its map not asked yet, within the budget */
	uint32_t ps = s->snap.page_size;
	const struct trace_replay_map *m = NULL;
	for (size_t i = 0; i < s->snap.nmaps; i++)
		if (need >= s->maps[i].start && need < s->maps[i].end)
			m = &s->maps[i];
	for (uint64_t a = need; *n < SNAP_SESSION_PREFETCH && m && a < m->end && s->npages < s->cfg.max_pages; a += ps) {
		if (find(s, a))
			continue;
		if (ask(s, a) < 0)
			return -ENOMEM;
		addr[(*n)++] = a;
	}
	if (*n == 0) { /* the budget is spent: the replay's own check ends the window */
		if (ask(s, need) < 0)
			return -ENOMEM;
		s->pages[s->npages - 1].status = EDQUOT;
		return snap_session_step(s, addr, n);
	}
	return 1;
}

int snap_session_pages(struct snap_session *s, const Prof__Pages *p, char *why, size_t whylen)
{
	if (p->snapshot_id != s->id)
		return snprintf(why, whylen, "Pages for snapshot %u, this one is %u", p->snapshot_id, s->id), -EINVAL;
	if (p->n_status != p->n_addr)
		return snprintf(why, whylen, "%zu statuses for %zu addresses", p->n_status, p->n_addr), -EINVAL;
	uint32_t ps = s->snap.page_size;
	size_t off = 0;
	for (size_t i = 0; i < p->n_addr; i++) {
		struct page *pg = find(s, p->addr[i]);
		if (!pg)
			return snprintf(why, whylen, "page 0x%llx was not asked for", (unsigned long long)p->addr[i]),
			       -EINVAL;
		if (p->status[i] != 0) {
			if (pg->status < 0)
				pg->status = (int)(p->status[i] < 4096 ? p->status[i] : EIO);
			continue;
		}
		if (off + ps > p->data.len)
			return snprintf(why, whylen, "Pages data ends before page %zu", i), -EINVAL;
		if (pg->status < 0) {
			pg->data = malloc(ps);
			if (!pg->data)
				return -ENOMEM;
			memcpy(pg->data, p->data.data + off, ps);
			pg->status = 0;
		}
		off += ps;
	}
	return 0;
}

const struct trace_replay_result *snap_session_result(const struct snap_session *s)
{
	return &s->res;
}

int snap_session_window(const struct snap_session *s, Prof__TraceWindow *tw)
{
	return trace_replay_window(&s->snap, &s->res, s->pid, s->tid, s->window_index, tw);
}
