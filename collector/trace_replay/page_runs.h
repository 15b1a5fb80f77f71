/* The replay's pages in Unicorn as runs of adjacent pages (issue 36). Unicorn keeps one
 * section per mapped region and aborts the whole process past TARGET_PAGE_SIZE sections
 * (qemu/exec.c phys_section_add: assert(map->sections_nb < TARGET_PAGE_SIZE); 1024 for 32-bit
 * ARM): a window over a 4 MiB working set, mapped page by page, killed the collector. A
 * non-executable map's pages live in one host buffer per map and are mapped as the runs of
 * adjacent pages present (a new page joins its neighbours: they are unmapped and the joined run
 * mapped over the same memory). Runs join only inside aligned chunks of 256 pages of a map
 * (page_runs.c RUN_CHUNK): Unicorn's unmap costs time per page, unbounded joins made a
 * sequential sweep quadratic (4,096 pages: 8.4 s). Executable maps' pages stay one region each
 * (never unmapped while their code may run). A page that would take the regions past the limit is refused
 * (-ENOSPC): the window ends, the collector goes on. */
#ifndef COLLECTOR_TRACE_REPLAY_PAGE_RUNS_H
#define COLLECTOR_TRACE_REPLAY_PAGE_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

#include "trace_replay.h"

struct page_runs_map;

struct page_runs {
	struct page_runs_map *m; /* one per snapshot map, buffers made at its first page */
	size_t n;
	size_t regions, max_regions; /* regions mapped in Unicorn, and the most it takes */
	bool failed; /* Unicorn refused a map or unmap: every later add is refused (-EIO) */
};

/* max_regions: the emulator's limit less a margin (page_runs_limit). 0 or -ENOMEM. */
int page_runs_init(struct page_runs *p, const struct trace_replay_snap *s, size_t max_regions);
/* Unicorn's limit on regions for this engine (its target page size less a margin). */
size_t page_runs_limit(uc_engine *uc);
/* Map page (of snapshot map mi, data: its bytes) with prot (UC_PROT_*): 0; -ENOSPC when the
 * emulator's regions would pass the limit; -EIO when Unicorn refuses (and for every add after
 * that: the runs may have been unmapped, p->failed); -ENOMEM. */
int page_runs_add(struct page_runs *p, uc_engine *uc, const struct trace_replay_snap *s, size_t mi, uint64_t page,
		  const void *data, uint32_t prot);
/* After uc_close: the buffers. */
void page_runs_free(struct page_runs *p);

#endif
