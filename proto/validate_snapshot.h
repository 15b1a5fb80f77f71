/* Checks of the snapshot messages (proto/snapshot.proto, issue 36): a board's trace window
 * replayed by the collector from a snapshot the agent serves page by page. */
#ifndef PROTO_VALIDATE_SNAPSHOT_H
#define PROTO_VALIDATE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot.pb-c.h"

#define SNAPSHOT_MAPS_MAX 8192	      /* maps of a TraceSnapshot at most */
#define SNAPSHOT_REQ_PAGES 64	      /* pages of one PageRequest (and Pages) at most */
#define SNAPSHOT_WINDOW_PAGES 16384   /* a snapshot's page budget at most (64 MiB of 4 KiB pages) */
#define SNAPSHOT_EXPIRES_MS 600000    /* a snapshot lives 10 min at most */
#define SNAPSHOT_REGS_AARCH64 34      /* x0..x30, sp, pc, pstate */
#define SNAPSHOT_REGS_ARM 17	      /* r0..r15, cpsr */

/* 0, or -EINVAL with the reason in err: id 0, an architecture other than aarch64 (2) or arm
 * (3), the wrong number of registers for it, a page size not a power of two in 4096..65536,
 * maps unaligned, empty, unsorted, overlapping or more than SNAPSHOT_MAPS_MAX, pc in no
 * executable map, a page budget of 0 or over SNAPSHOT_WINDOW_PAGES, expires_ms 0 or over
 * SNAPSHOT_EXPIRES_MS. */
int validate_trace_snapshot(const Prof__TraceSnapshot *s, char *err, size_t errlen);

/* page_size: the snapshot's (0: not known here, alignment checked to 4096). 0, or -EINVAL:
 * id 0, no address or more than SNAPSHOT_REQ_PAGES, an address not page-aligned. */
int validate_page_request(const Prof__PageRequest *r, uint32_t page_size, char *err, size_t errlen);

/* As a page request, and: one status per address, data of page_size bytes per status 0
 * (page_size 0: data a multiple of 4096, at most SNAPSHOT_REQ_PAGES x 64 KiB). */
int validate_pages(const Prof__Pages *p, uint32_t page_size, char *err, size_t errlen);

#endif
