/* The call chains of a session's keys read in batches (query_priv.h): one statement per
 * QM_CHAIN_BATCH stack ids, not one per stack. On PostgreSQL each statement is a round trip to the
 * server: a report over 4,000 stacks waited ~2 s for 8,000 of them (#40, w40h, bench/RESULTS.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "query_priv.h"

/* ?2..?65: the batch's ids (a shorter batch repeats its last id) */
static const char q_stacks[] =
    "SELECT stack_id, ips FROM sample_stacks WHERE session_id = ?1 AND stack_id IN (?2, ?3, ?4, "
    "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, "
    "?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, "
    "?42, ?43, ?44, ?45, ?46, ?47, ?48, ?49, ?50, ?51, ?52, ?53, ?54, ?55, ?56, ?57, ?58, ?59, "
    "?60, ?61, ?62, ?63, ?64, ?65)";
static const char q_kstacks[] =
    "SELECT stack_id, ips FROM sample_kernel_stacks WHERE session_id = ?1 AND stack_id IN (?2, "
    "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
    "?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, "
    "?40, ?41, ?42, ?43, ?44, ?45, ?46, ?47, ?48, ?49, ?50, ?51, ?52, ?53, ?54, ?55, ?56, ?57, "
    "?58, ?59, ?60, ?61, ?62, ?63, ?64, ?65)";

static int cmp_entry(const void *a, const void *b)
{
	uint32_t x = ((const struct qm_chain_ent *)a)->id, y = ((const struct qm_chain_ent *)b)->id;
	return x < y ? -1 : x > y;
}

void qm_chains_free(struct qm_chains *c)
{
	free(c->ent);
	free(c->ips);
	memset(c, 0, sizeof(*c));
}

int qm_chains_load(struct store *s, bool kernel, int64_t sid, const uint32_t *ids, size_t n, size_t max,
		   struct qm_chains *c)
{
	c->nent = c->nips = 0;
	struct db_stmt *st = store_stmt(s, kernel ? q_kstacks : q_stacks);
	if (!st)
		return -EIO;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i += QM_CHAIN_BATCH) {
		size_t m = n - i < QM_CHAIN_BATCH ? n - i : QM_CHAIN_BATCH;
		db_bind_i64(st, 1, sid);
		for (size_t j = 0; j < QM_CHAIN_BATCH; j++)
			db_bind_i64(st, (int)j + 2, ids[i + (j < m ? j : m - 1)]);
		while ((rc = db_step(st)) == 1) {
			size_t len;
			const uint8_t *p = db_col_blob(st, 1, &len);
			size_t k = len / 8 < max ? len / 8 : max;
			if (qm_grow((void **)&c->ent, &c->capent, c->nent + 1, sizeof(*c->ent)) < 0 ||
			    qm_grow((void **)&c->ips, &c->capips, c->nips + k, sizeof(*c->ips)) < 0) {
				rc = -ENOMEM;
				break;
			}
			c->ent[c->nent++] = (struct qm_chain_ent){
			    .id = (uint32_t)db_col_i64(st, 0), .n = (uint32_t)k, .off = c->nips};
			for (size_t j = 0; j < k; j++) {
				uint64_t v = 0;
				for (int b = 0; b < 8; b++)
					v |= (uint64_t)p[j * 8 + b] << (8 * b);
				c->ips[c->nips++] = v;
			}
		}
		db_reset(st);
	}
	if (rc < 0)
		return rc;
	if (c->nent > 1)
		qsort(c->ent, c->nent, sizeof(*c->ent), cmp_entry);
	return 0;
}

size_t qm_chains_get(const struct qm_chains *c, uint32_t id, uint64_t *ips)
{
	size_t lo = 0, hi = c->nent;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->ent[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->nent || c->ent[lo].id != id)
		return 0; /* no such chain stored */
	if (c->ent[lo].n)
		memcpy(ips, c->ips + c->ent[lo].off, c->ent[lo].n * sizeof(*ips));
	return c->ent[lo].n;
}
