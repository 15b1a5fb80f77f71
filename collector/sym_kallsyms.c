/* Kernel symbols from a kallsyms file: the lines of /proc/kallsyms
 * ("ffffffff81000000 T _stext", module symbols with "\t[module]") of the
 * profiled board's boot. Text symbols (t/T, w/W) only; each one's extent
 * ends at the next symbol. A file read without privilege has every address
 * 0 (kptr_restrict): refused as -ENOENT so the caller can say so. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sym_priv.h"

#define KALLSYMS_MAX_SYMS (4u << 20) /* bounded: a distribution kernel has ~200k text symbols */

static int ksym_push(struct sym **v, size_t *n, size_t *cap, uint64_t addr, const char *name)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 4096;
		struct sym *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	struct sym *s = &(*v)[*n];
	s->addr = addr;
	s->size = 0;
	if (sym_set_name(s, name) < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* Sort v, give each symbol its extent and make it r's kernel table (r owns v). */
static void install(struct sym_resolver *r, struct sym *v, size_t n)
{
	qsort(v, n, sizeof(*v), sym_cmp);
	/* extent: up to the next symbol (the last one gets 1 MiB, past it nothing resolves) */
	for (size_t i = 0; i < n; i++)
		v[i].size = i + 1 < n && v[i + 1].addr > v[i].addr ? v[i + 1].addr - v[i].addr : 1u << 20;
	size_t *pn;
	struct sym **pv = sym_resolver_ksyms(r, &pn);
	for (size_t i = 0; i < *pn; i++)
		sym_free(&(*pv)[i]);
	free(*pv);
	*pv = v;
	*pn = n;
}

int sym_resolver_load_kallsyms(struct sym_resolver *r, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	struct sym *v = NULL;
	size_t n = 0, cap = 0;
	char line[1024];
	int rc = 0;
	unsigned long lineno = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		char *end;
		errno = 0;
		unsigned long long addr = strtoull(line, &end, 16);
		if (end == line || errno || !isspace((unsigned char)*end)) {
			log_error("kallsyms %s:%lu: not an \"ADDRESS TYPE NAME\" line", path, lineno);
			rc = -EINVAL;
			break;
		}
		char type = 0, name[512];
		if (sscanf(end, " %c %511s", &type, name) != 2) {
			log_error("kallsyms %s:%lu: not an \"ADDRESS TYPE NAME\" line", path, lineno);
			rc = -EINVAL;
			break;
		}
		if (!strchr("tTwW", type) || addr == 0)
			continue;
		if (n >= KALLSYMS_MAX_SYMS) {
			log_error("kallsyms %s: more than %u text symbols", path, KALLSYMS_MAX_SYMS);
			rc = -EFBIG;
			break;
		}
		rc = ksym_push(&v, &n, &cap, addr, name);
	}
	fclose(f);
	if (rc == 0 && n == 0)
		rc = -ENOENT;
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			sym_free(&v[i]);
		free(v);
		return rc;
	}
	install(r, v, n);
	log_debug("symbols: %zu kernel functions from %s", n, path);
	return 0;
}

int sym_resolver_set_kernel(struct sym_resolver *r, const uint64_t *addr, const char *const *names, size_t n)
{
	if (n == 0)
		return -ENOENT;
	if (n > KALLSYMS_MAX_SYMS)
		return -EFBIG;
	struct sym *v = NULL;
	size_t nv = 0, cap = 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (addr[i])
			rc = ksym_push(&v, &nv, &cap, addr[i], names[i]);
	if (rc == 0 && nv == 0)
		rc = -ENOENT;
	if (rc < 0) {
		for (size_t i = 0; i < nv; i++)
			sym_free(&v[i]);
		free(v);
		return rc;
	}
	install(r, v, nv);
	return 0;
}

const char *sym_resolve_kernel(const struct sym_resolver *r, uint64_t addr)
{
	size_t n;
	const struct sym *v = sym_resolver_ksyms_const(r, &n);
	const struct sym *s = sym_lookup(v, n, addr);
	return s ? s->name : NULL;
}
