/* The cache model line of the eDAG reports (cache_model.h). */
#include "cache_model.h"

#include <inttypes.h>
#include <stdio.h>

static void size_text(uint64_t b, char *buf, size_t len)
{
	if (b >= (1u << 20) && b % (1u << 20) == 0)
		snprintf(buf, len, "%" PRIu64 " MiB", b >> 20);
	else if (b >= 1024 && b % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 " KiB", b >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " B", b);
}

void cache_model_describe(const struct edag_config *c, const char *source, char *buf, size_t len)
{
	const char *how = !c->nlevels ? "every memory access is a memory vertex"
			  : c->cache_model == EDAG_CACHE_EDAN
			      ? "EDAN's: loads probe the line of their first byte, stores are always memory "
				"vertices, sets rounded down to a power of two"
			      : "loads and stores probe every line they touch, misses fill";
	int k = snprintf(buf, len, "%s (%s)", edag_cache_model_name(c), how);
	size_t n = k < 0 ? len : (size_t)k;
	for (unsigned i = 0; i < c->nlevels && n < len; i++) {
		char sz[32];
		size_text(c->level[i].size, sz, sizeof(sz));
		k = snprintf(buf + n, len - n, "%s %s %s %u-way %u B lines (hit %u)", i ? "," : ":", c->level[i].name, sz,
			     c->level[i].assoc, c->level[i].line, c->level[i].latency);
		if (k < 0)
			return;
		n += (size_t)k;
	}
	if (n < len)
		snprintf(buf + n, len - n, "; from %s", source);
}
