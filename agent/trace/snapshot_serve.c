/* Serving live snapshots' pages (snapshot_serve.h). */
#ifndef _FILE_OFFSET_BITS /* pread at addresses above 2 GiB (32-bit ARM, glibc) */
#define _FILE_OFFSET_BITS 64
#endif
#include "generated/config.h"
#if defined(CONFIG_AGENT_TRACER) && (defined(CONFIG_AGENT_TRACE_REPLAY) || defined(__aarch64__) || defined(__arm__))

#include "snapshot_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshot.h"
#include "validate_snapshot.h"

int snap_serve_init(struct snap_serve *s, unsigned max_live, uint64_t session_pages, uint32_t page_size)
{
	memset(s, 0, sizeof(*s));
	s->live = calloc(max_live ? max_live : 1, sizeof(*s->live));
	s->data = malloc((size_t)SNAPSHOT_REQ_PAGES * page_size);
	if (!s->live || !s->data) {
		snap_serve_free(s);
		return -ENOMEM;
	}
	s->max_live = max_live ? max_live : 1;
	s->session_pages = session_pages;
	s->page_size = page_size;
	s->next_id = 1;
	return 0;
}

int snap_serve_add(struct snap_serve *s, pid_t child, uint32_t max_pages, uint64_t ttl_ns, uint64_t now,
		   uint32_t *id)
{
	*id = 0;
	if (s->n >= s->max_live) {
		s->refused_full++;
		return -EBUSY;
	}
	char path[40];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)child);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct snap_live *l = &s->live[s->n++];
	l->id = s->next_id++;
	if (s->next_id == 0)
		s->next_id = 1;
	l->child = child;
	l->memfd = fd;
	l->expires_ns = now + ttl_ns;
	l->max_pages = max_pages > SNAPSHOT_WINDOW_PAGES ? SNAPSHOT_WINDOW_PAGES : max_pages;
	l->served = 0;
	*id = l->id;
	return 0;
}

static struct snap_live *find(struct snap_serve *s, uint32_t id)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->live[i].id == id)
			return &s->live[i];
	return NULL;
}

int snap_serve_answer(struct snap_serve *s, const Prof__PageRequest *req, Prof__Pages *out)
{
	char err[128];
	if (validate_page_request(req, s->page_size, err, sizeof(err)) < 0)
		return -EINVAL;
	struct snap_live *l = find(s, req->snapshot_id);
	size_t nd = 0;
	for (size_t i = 0; i < req->n_addr; i++) {
		uint32_t st = 0;
		s->addr[i] = req->addr[i];
		if (!l)
			st = ESRCH;
		else if (l->served >= l->max_pages || s->session_served >= s->session_pages)
			st = EDQUOT;
		else if (pread(l->memfd, s->data + nd * s->page_size, s->page_size, (off_t)req->addr[i]) !=
			 (ssize_t)s->page_size)
			st = EFAULT;
		if (st == EDQUOT)
			s->refused_budget++;
		if (st == 0) {
			nd++;
			l->served++;
			s->session_served++;
		}
		s->status[i] = st;
	}
	prof__pages__init(out);
	out->snapshot_id = req->snapshot_id;
	out->n_addr = out->n_status = req->n_addr;
	out->addr = s->addr;
	out->status = s->status;
	out->data.data = s->data;
	out->data.len = nd * s->page_size;
	return 0;
}

static void drop_at(struct snap_serve *s, unsigned i)
{
	close(s->live[i].memfd);
	trace_snapshot_drop(s->live[i].child);
	s->live[i] = s->live[--s->n];
}

int snap_serve_done(struct snap_serve *s, uint32_t id)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->live[i].id == id) {
			drop_at(s, i);
			return 0;
		}
	return -ENOENT;
}

unsigned snap_serve_expire(struct snap_serve *s, uint64_t now)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->n;)
		if (now >= s->live[i].expires_ns) {
			drop_at(s, i);
			n++;
		} else {
			i++;
		}
	s->expired += n;
	return n;
}

int snap_describe(struct snap_desc *d, pid_t child, uint32_t id, uint32_t arch, const uint64_t *regs, size_t nregs,
		  uint32_t page_size, uint32_t max_pages, uint32_t expires_ms)
{
	memset(d, 0, sizeof(*d));
	prof__trace_snapshot__init(&d->msg);
	if (nregs > sizeof(d->regs) / sizeof(d->regs[0]))
		return -EINVAL;
	memcpy(d->regs, regs, nregs * sizeof(*regs));
	d->msg.snapshot_id = id;
	d->msg.arch = arch;
	d->msg.regs = d->regs;
	d->msg.n_regs = nregs;
	d->msg.page_size = page_size;
	d->msg.max_pages = max_pages;
	d->msg.expires_ms = expires_ms;
	char path[40], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t cap = 0;
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		unsigned long long lo = 0, hi = 0;
		char perm[8] = "";
		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perm) != 3)
			continue;
		if (d->msg.n_maps == SNAPSHOT_MAPS_MAX) {
			rc = -E2BIG;
			break;
		}
		if (d->msg.n_maps == cap) {
			size_t nc = cap ? cap * 2 : 64;
			Prof__SnapshotMap *m = realloc(d->maps, nc * sizeof(*m));
			if (!m) {
				rc = -ENOMEM;
				break;
			}
			d->maps = m;
			cap = nc;
		}
		Prof__SnapshotMap *m = &d->maps[d->msg.n_maps++];
		prof__snapshot_map__init(m);
		m->start = lo;
		m->end = hi;
		m->prot = (perm[0] == 'r' ? 1u : 0u) | (perm[1] == 'w' ? 2u : 0u) | (perm[2] == 'x' ? 4u : 0u);
	}
	fclose(f);
	if (rc == 0 && d->msg.n_maps) {
		d->mapp = malloc(d->msg.n_maps * sizeof(*d->mapp));
		if (!d->mapp)
			return -ENOMEM;
		for (size_t i = 0; i < d->msg.n_maps; i++)
			d->mapp[i] = &d->maps[i]; /* pointers only now: realloc may have moved them */
		d->msg.maps = d->mapp;
	}
	return rc;
}

void snap_desc_free(struct snap_desc *d)
{
	free(d->maps);
	free(d->mapp);
	d->maps = NULL;
	d->mapp = NULL;
	d->msg.maps = NULL;
	d->msg.n_maps = 0;
}

void snap_serve_free(struct snap_serve *s)
{
	while (s->live && s->n)
		drop_at(s, 0);
	free(s->live);
	free(s->data);
	s->live = NULL;
	s->data = NULL;
}

#endif
