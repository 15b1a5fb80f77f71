/* The replay's pages as runs of adjacent pages in Unicorn (page_runs.h). */
#include "page_runs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* a map's host buffer at most (larger ones: a region a page, as executable maps) */
#define RUNS_MAX_BYTES (1ull << 30)
#define REGION_MARGIN 64 /* sections Unicorn keeps for itself (dummy sections, subpages) */
/* Runs join only inside aligned chunks of RUN_CHUNK pages (1 MiB) of a map: Unicorn 2.0.1's unmap
 * costs time per page of the region unmapped, so unbounded joins made a sequential sweep of N
 * pages cost ~N^2/2 pages of unmapping (4,096 pages: 4.7-8.4 s), and every map or unmap costs
 * time per region mapped (its flat view rebuilt), so small chunks are slow too. Measured on a
 * 32-bit ARM engine, an ascending sweep of 16,384 pages (the wire's page budget, 64 MiB):
 * chunk 64 4.9 s (256 regions), 256 1.4 s (64), 512 2.7 s, 1024 4.8 s (bench/RESULTS.md, w36o).
 * 256 it is: a dense window takes 64 regions of the 960 of the limit. */
#define RUN_CHUNK 256

struct page_runs_map {
	uint8_t *mem;	  /* the map's bytes (MAP_NORESERVE), NULL until its first page */
	uint8_t *present; /* a byte a page: 1 once mapped */
	size_t len;	  /* of mem */
};

size_t page_runs_limit(uc_engine *uc)
{
	size_t ps = 0;
	if (uc_query(uc, UC_QUERY_PAGE_SIZE, &ps) != UC_ERR_OK || ps < 4 * REGION_MARGIN)
		ps = 1024; /* 32-bit ARM's TARGET_PAGE_SIZE, the smallest */
	return ps - REGION_MARGIN;
}

int page_runs_init(struct page_runs *p, const struct trace_replay_snap *s, size_t max_regions)
{
	*p = (struct page_runs){.n = s->nmaps, .max_regions = max_regions};
	p->m = calloc(s->nmaps ? s->nmaps : 1, sizeof(*p->m));
	return p->m ? 0 : -ENOMEM;
}

static bool coalesced(const struct trace_replay_map *mp)
{
	return !(mp->prot & 4) && mp->end - mp->start <= RUNS_MAX_BYTES;
}

int page_runs_add(struct page_runs *p, uc_engine *uc, const struct trace_replay_snap *s, size_t mi, uint64_t page,
		  const void *data, uint32_t prot)
{
	const struct trace_replay_map *mp = &s->maps[mi];
	struct page_runs_map *m = &p->m[mi];
	uint32_t ps = s->page_size;
	if (p->failed) /* Unicorn's map and present[] may disagree after a failure: no more adds */
		return -EIO;
	if (!coalesced(mp)) {
		if (p->regions + 1 > p->max_regions)
			return -ENOSPC;
		if (uc_mem_map(uc, page, ps, prot) != UC_ERR_OK || uc_mem_write(uc, page, data, ps) != UC_ERR_OK) {
			p->failed = true;
			return -EIO;
		}
		p->regions++;
		return 0;
	}
	size_t npages = (size_t)((mp->end - mp->start) / ps);
	if (!m->mem) {
		void *mem = mmap(NULL, (size_t)(mp->end - mp->start), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		m->present = calloc(npages, 1);
		if (mem == MAP_FAILED || !m->present) {
			if (mem != MAP_FAILED)
				munmap(mem, (size_t)(mp->end - mp->start));
			free(m->present);
			m->present = NULL;
			return -ENOMEM;
		}
		m->mem = mem;
		m->len = (size_t)(mp->end - mp->start);
	}
	size_t i = (size_t)((page - mp->start) / ps);
	/* the runs of present pages just before and after this one, inside its chunk */
	size_t c0 = i / RUN_CHUNK * RUN_CHUNK, c1 = c0 + RUN_CHUNK < npages ? c0 + RUN_CHUNK : npages;
	const uint8_t *l = i > c0 ? memrchr(m->present + c0, 0, i - c0) : NULL;
	size_t a = l ? (size_t)(l - m->present) + 1 : c0;
	const uint8_t *h = i + 1 < c1 ? memchr(m->present + i + 1, 0, c1 - i - 1) : NULL;
	size_t b = h ? (size_t)(h - m->present) : c1;
	size_t joined = (a < i) + (b > i + 1); /* neighbouring runs this page joins */
	if (p->regions + 1 - joined > p->max_regions)
		return -ENOSPC;
	memcpy(m->mem + i * (size_t)ps, data, ps);
	/* from the first unmap on, a failure leaves present[] and the regions stale */
	if ((a < i && uc_mem_unmap(uc, mp->start + (uint64_t)a * ps, (uint64_t)(i - a) * ps) != UC_ERR_OK) ||
	    (b > i + 1 && uc_mem_unmap(uc, page + ps, (uint64_t)(b - i - 1) * ps) != UC_ERR_OK) ||
	    uc_mem_map_ptr(uc, mp->start + (uint64_t)a * ps, (uint64_t)(b - a) * ps, prot, m->mem + a * (size_t)ps) !=
		    UC_ERR_OK) {
		p->failed = true;
		return -EIO;
	}
	m->present[i] = 1;
	p->regions = p->regions + 1 - joined;
	return 0;
}

void page_runs_free(struct page_runs *p)
{
	for (size_t i = 0; p->m && i < p->n; i++) {
		if (p->m[i].mem)
			munmap(p->m[i].mem, p->m[i].len);
		free(p->m[i].present);
	}
	free(p->m);
	p->m = NULL;
}
