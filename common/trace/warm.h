/* The warm-up summary of a trace window: the distinct cache lines a window's
 * first part (its warm-up) touched, in the order of their last access, each
 * with how it was accessed (read, written). Replayed through an LRU cache
 * model in that order (edag_cache_warm), they leave each set holding the
 * same most recent distinct lines as the whole access stream would: the
 * state an LRU level is in depends only on the order of the last accesses
 * to distinct lines. Exact for one level when the summary holds every line
 * the warm-up touched, or at least each set's most recent ways lines (a
 * summary several times the cache's capacity); for a lower level of a
 * hierarchy the order of its fills can differ. So the agent sends one entry
 * per distinct line instead of every instruction of the warm-up. Pure: no I/O, no logging; memory bounded by max_lines. */
#ifndef COMMON_TRACE_WARM_H
#define COMMON_TRACE_WARM_H

#include <stddef.h>
#include <stdint.h>

#define TRACE_WARM_READ 1
#define TRACE_WARM_WRITE 2

struct trace_warm {
	unsigned line_shift; /* log2 of the line size of the summary */
	size_t max_lines;
	size_t n;	  /* entries */
	size_t hcap;	  /* hash slots (power of two, >= 2 * max_lines) */
	uint32_t *slot;	  /* entry index + 1, 0 = empty */
	uint64_t *line;	  /* per entry: line << 2 | mode */
	uint32_t *prev, *next; /* per entry: the list from the oldest last access to the newest */
	uint32_t oldest, newest; /* entry index + 1, 0 = none */
	uint64_t last_line;	 /* the newest entry's line + 1 (0: none): repeats skip the hash */
};

/* line_bytes: a power of two (64 fits every cache model line of 64 B or more;
 * smaller lines see each entry as all the lines of its 64 bytes). */
int trace_warm_init(struct trace_warm *w, uint32_t line_bytes, size_t max_lines);
void trace_warm_free(struct trace_warm *w);
/* Forget the entries, keep the table. */
void trace_warm_clear(struct trace_warm *w);
/* One access of size bytes at addr (mode TRACE_WARM_READ and/or WRITE). With
 * max_lines entries the line whose last access is the oldest is forgotten: the
 * summary keeps the max_lines most recent distinct lines, which is all an LRU
 * cache of up to max_lines lines holds. 0 or -ENOMEM. */
int trace_warm_add(struct trace_warm *w, uint64_t addr, uint32_t size, unsigned mode);
/* The entries, oldest last access first, as (line << 2 | mode) in out
 * (malloc'd, *n of them; NULL when there are none). -ENOMEM. */
int trace_warm_lines(const struct trace_warm *w, uint64_t **out, size_t *n);

#endif
