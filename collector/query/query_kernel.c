/* The kernel functions of a session's boot from the table its agent sent
 * (query_priv.h), loaded once per (agent, boot) within proto/ksyms.h's
 * limits; a table that cannot be used leaves the boot's kernel frames
 * [kernel] (store_kernel_symbols warned once). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "query_priv.h"
#include "store/store_kallsyms.h"

/* Symbols of a stored table collected for sym_resolver_set_kernel. */
struct ktab {
	uint64_t *addr;
	char **names;
	size_t n, cap;
};

static int ktab_add(void *arg, uint64_t addr, const char *name)
{
	struct ktab *t = arg;
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 4096;
		uint64_t *na = realloc(t->addr, nc * sizeof(*na));
		if (na)
			t->addr = na;
		char **nn = realloc(t->names, nc * sizeof(*nn));
		if (nn)
			t->names = nn;
		if (!na || !nn)
			return -ENOMEM;
		t->cap = nc;
	}
	t->names[t->n] = strdup(name);
	if (!t->names[t->n])
		return -ENOMEM;
	t->addr[t->n++] = addr;
	return 0;
}

/* The resolver of the kernel functions of se's boot, from the table its
 * agent sent (loaded once per agent and boot; NULL when none is stored). */
int qm_kernel_of(struct store *s, struct build *b, struct sess *se)
{
	char boot[KSYMS_BOOT_ID_MAX + 1];
	int rc = store_session_kernel_boot(s, se->id, boot, sizeof(boot));
	if (rc < 0 || !boot[0])
		return rc;
	for (size_t i = 0; i < b->nkboots; i++)
		if (b->kboots[i].agent_id == se->agent_id && strcmp(b->kboots[i].boot, boot) == 0) {
			se->ksr = b->kboots[i].sr;
			return 0;
		}
	struct kboot *nk = realloc(b->kboots, (b->nkboots + 1) * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	b->kboots = nk;
	struct kboot *kb = &b->kboots[b->nkboots++];
	kb->agent_id = se->agent_id;
	snprintf(kb->boot, sizeof(kb->boot), "%s", boot);
	kb->sr = NULL;
	struct ktab t = {0};
	rc = store_kernel_symbols(s, se->agent_id, boot, ktab_add, &t);
	if (rc == 0)
		rc = sym_resolver_create(NULL, &kb->sr);
	if (rc == 0)
		rc = sym_resolver_set_kernel(kb->sr, t.addr, (const char *const *)t.names, t.n);
	if (rc == 0) {
		log_debug("query: %zu kernel functions of %s boot %s", t.n, se->agent_id, boot);
	} else if (rc != -ENOMEM) {
		/* none stored, no address, over a limit or unreadable (store_kernel_symbols warned once):
		 * this boot's kernel frames stay [kernel], the session is still read */
		sym_resolver_free(kb->sr);
		kb->sr = NULL;
		rc = 0;
	}
	for (size_t i = 0; i < t.n; i++)
		free(t.names[i]);
	free(t.names);
	free(t.addr);
	se->ksr = kb->sr;
	return rc;
}
