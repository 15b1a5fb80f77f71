/* Warm-up summary of a trace window (warm.h): a hash of lines over a list
 * kept in order of last access (most recent at the end). */
#include "trace/warm.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

int trace_warm_init(struct trace_warm *w, uint32_t line_bytes, size_t max_lines)
{
	memset(w, 0, sizeof(*w));
	if (!pow2(line_bytes) || line_bytes > 4096 || max_lines == 0 || max_lines > (1u << 30))
		return -EINVAL;
	w->line_shift = (unsigned)__builtin_ctz(line_bytes);
	w->max_lines = max_lines;
	return 0;
}

void trace_warm_free(struct trace_warm *w)
{
	free(w->slot);
	free(w->line);
	free(w->prev);
	free(w->next);
	memset(w, 0, sizeof(*w));
}

void trace_warm_clear(struct trace_warm *w)
{
	if (w->slot)
		memset(w->slot, 0, w->hcap * sizeof(*w->slot));
	w->n = 0;
	w->oldest = w->newest = 0;
	w->last_line = 0;
}

static inline size_t hash(uint64_t line, size_t cap)
{
	return (size_t)((line * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

/* Tables for max_lines entries, allocated on first use. */
static int alloc(struct trace_warm *w)
{
	size_t cap = 1024;
	while (cap < 2 * w->max_lines)
		cap *= 2;
	w->slot = calloc(cap, sizeof(*w->slot));
	w->line = malloc(w->max_lines * sizeof(*w->line));
	w->prev = malloc(w->max_lines * sizeof(*w->prev));
	w->next = malloc(w->max_lines * sizeof(*w->next));
	if (!w->slot || !w->line || !w->prev || !w->next) {
		trace_warm_free(w);
		return -ENOMEM;
	}
	w->hcap = cap;
	return 0;
}

static void unlink_entry(struct trace_warm *w, uint32_t e)
{
	uint32_t p = w->prev[e], n = w->next[e];
	if (p)
		w->next[p - 1] = n;
	else
		w->oldest = n;
	if (n)
		w->prev[n - 1] = p;
	else
		w->newest = p;
}

static void append(struct trace_warm *w, uint32_t e)
{
	w->prev[e] = w->newest;
	w->next[e] = 0;
	if (w->newest)
		w->next[w->newest - 1] = e + 1;
	else
		w->oldest = e + 1;
	w->newest = e + 1;
}

/* Remove the hash slot of entry e (linear probing: shift the cluster back). */
static void unhash(struct trace_warm *w, uint32_t e)
{
	size_t cap = w->hcap, i = hash(w->line[e] >> 2, cap);
	while (w->slot[i] != e + 1)
		i = (i + 1) & (cap - 1);
	for (size_t j = (i + 1) & (cap - 1); w->slot[j]; j = (j + 1) & (cap - 1)) {
		size_t h = hash(w->line[w->slot[j] - 1] >> 2, cap);
		/* move slot j to the hole i when its home h is not within (i, j] */
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			w->slot[i] = w->slot[j];
			i = j;
		}
	}
	w->slot[i] = 0;
}

static int touch(struct trace_warm *w, uint64_t line, unsigned mode)
{
	if (line + 1 == w->last_line) { /* the newest already: only its mode */
		w->line[w->newest - 1] |= mode & 3;
		return 0;
	}
	w->last_line = line + 1;
	size_t i = hash(line, w->hcap);
	while (w->slot[i] && w->line[w->slot[i] - 1] >> 2 != line)
		i = (i + 1) & (w->hcap - 1);
	uint32_t e;
	if (w->slot[i]) { /* known: move to the newest end */
		e = w->slot[i] - 1;
		w->line[e] |= mode & 3;
		unlink_entry(w, e);
		append(w, e);
		return 0;
	}
	if (w->n < w->max_lines) {
		e = (uint32_t)w->n++;
	} else { /* full: the oldest line makes room */
		e = w->oldest - 1;
		unlink_entry(w, e);
		unhash(w, e);
		i = hash(line, w->hcap); /* the hole may have moved the probe */
		while (w->slot[i])
			i = (i + 1) & (w->hcap - 1);
	}
	w->line[e] = line << 2 | (mode & 3);
	w->slot[i] = e + 1;
	append(w, e);
	return 0;
}

int trace_warm_add(struct trace_warm *w, uint64_t addr, uint32_t size, unsigned mode)
{
	if (!w->slot && alloc(w) < 0)
		return -ENOMEM;
	if (size == 0)
		size = 1;
	if (addr > UINT64_MAX - size)
		return -EINVAL;
	uint64_t first = addr >> w->line_shift, last = (addr + size - 1) >> w->line_shift;
	for (uint64_t l = first; l <= last; l++)
		touch(w, l, mode);
	return 0;
}

int trace_warm_lines(const struct trace_warm *w, uint64_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (w->n == 0)
		return 0;
	uint64_t *res = malloc(w->n * sizeof(*res));
	if (!res)
		return -ENOMEM;
	size_t k = 0;
	for (uint32_t e = w->oldest; e && k < w->n; e = w->next[e - 1])
		res[k++] = w->line[e - 1];
	*out = res;
	*n = k;
	return 0;
}
