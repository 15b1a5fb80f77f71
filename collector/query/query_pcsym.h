/* Functions of a session's instruction addresses (a trace window's PCs), named
 * as the CPU views name sampled addresses: the session's mappings and the
 * symbolizer (sym_describe). For the sensitivity per function. */
#ifndef COLLECTOR_QUERY_PCSYM_H
#define COLLECTOR_QUERY_PCSYM_H

#include <stdint.h>

struct store;
struct query_pcsym;

/* symfs: NULL or the --symfs directory. 0 or -errno. */
int query_pcsym_open(struct store *s, int64_t sid, const char *symfs, struct query_pcsym **out);
/* The function holding pc of pid ("[module]" / "[unknown]" when unresolved;
 * *resolved 1 for a function). Valid until query_pcsym_free. */
const char *query_pcsym_name(struct query_pcsym *q, int32_t pid, uint64_t pc, int *resolved);
/* The module of the last query_pcsym_name ("" unknown), valid until the next call. */
const char *query_pcsym_module(const struct query_pcsym *q);
void query_pcsym_free(struct query_pcsym *q);

#endif
