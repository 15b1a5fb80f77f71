/* Functions of a session's instruction addresses (query_pcsym.h). */
#include "query_pcsym.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "query_priv.h"

#define PCSYM_NAME_MAX 128

struct query_pcsym {
	struct sess se;
	struct sym_resolver *sr;
	char buf[600];
	char last[PCSYM_NAME_MAX]; /* the name sym_describe put in buf (copied: buf is reused) */
	char last_module[PCSYM_NAME_MAX];
};

int query_pcsym_open(struct store *s, int64_t sid, const char *symfs, struct query_pcsym **out)
{
	struct query_pcsym *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->se.id = sid;
	int rc = sym_resolver_create(symfs, &q->sr);
	if (rc == 0)
		rc = qm_load_maps(s, &q->se);
	if (rc < 0) {
		query_pcsym_free(q);
		return rc;
	}
	(void)qm_sess_sort(&q->se); /* no later processes loaded here: nothing allocated */
	*out = q;
	return 0;
}

const char *query_pcsym_name(struct query_pcsym *q, int32_t pid, uint64_t pc, int *resolved)
{
	const struct map_row *m = qm_find_map(&q->se, pid, QM_INC_ANY, pc);
	struct sym_mapping sm;
	if (m)
		sm = (struct sym_mapping){.path = m->path, .build_id = m->bid, .build_id_len = m->bidlen,
					  .start = m->start, .end = m->end, .pgoff = m->pgoff};
	struct sym_frame sf;
	sym_describe(q->sr, m ? &sm : NULL, pc, 0, q->buf, sizeof(q->buf), &sf);
	*resolved = sf.resolved;
	snprintf(q->last, sizeof(q->last), "%s", sf.name ? sf.name : "[unknown]");
	snprintf(q->last_module, sizeof(q->last_module), "%s", sf.module ? sf.module : "");
	return q->last;
}

const char *query_pcsym_module(const struct query_pcsym *q)
{
	return q->last_module;
}

void query_pcsym_free(struct query_pcsym *q)
{
	if (!q)
		return;
	qm_sess_free(&q->se);
	if (q->sr)
		sym_resolver_free(q->sr);
	free(q);
}
