/* One line naming the cache model an eDAG analysis used, so two reports of
 * the same trace that differ (W from different cache models) say why. */
#ifndef COLLECTOR_REPORT_CACHE_MODEL_H
#define COLLECTOR_REPORT_CACHE_MODEL_H

#include <stddef.h>

#include "edag/edag.h"

/* "project (how it works): L1 32 KiB 8-way 64 B lines (hit 4), L2 ...; from SOURCE"
 * (or edan, or "none (every memory access is a memory vertex); from SOURCE");
 * source: where the levels came from. */
void cache_model_describe(const struct edag_config *c, const char *source, char *buf, size_t len);

#endif
