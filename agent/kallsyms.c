/* /proc/kallsyms -> KernelSymbols records (kallsyms.h). Lines are
 * "ADDRESS TYPE NAME [MODULE]" (kernel/kallsyms.c s_show); text symbols
 * (t, T, w, W) are kept, as the collector's file loader does. Without the
 * right to see kernel addresses (kernel.kptr_restrict, not root) every
 * address reads 0 (kallsyms_show_value): nothing is sent.
 * Once per boot: after the collector acked a session's table, the agent
 * leaves a marker in its spool directory (.kernel-symbols.BOOT.AGENT@COLLECTOR);
 * later sessions of the same boot send only a reference record naming the boot. */
#include "kallsyms.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksyms.h"
#include "log.h"

#define KALLSYMS_MAX (4u << 20) /* lines kept at most: a distribution kernel has ~200k text symbols */

struct ksym {
	uint64_t addr;
	char *name;
};

/* By name (the front coding shares prefixes between neighbours), then address. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int read_boot_id(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int rc = fgets(out, (int)len, f) ? 0 : -EIO;
	fclose(f);
	if (rc == 0) {
		out[strcspn(out, " \t\r\n")] = 0;
		if (!out[0])
			rc = -EIO;
	}
	return rc;
}

int kallsyms_read_send(const char *path, const char *boot_id_path,
		       int (*emit)(void *arg, const Prof__KernelSymbols *m), void *arg, struct kallsyms_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!path)
		path = getenv("PROF_AGENT_KALLSYMS");
	if (!path || !path[0])
		path = "/proc/kallsyms";
	char boot[KSYMS_BOOT_ID_MAX + 1];
	int rc = read_boot_id(boot_id_path ? boot_id_path : "/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	if (rc < 0) {
		log_info("kernel functions not sent: no kernel boot id (%s)", strerror(-rc));
		return rc;
	}
	FILE *f = fopen(path, "r");
	if (!f) {
		rc = -errno;
		log_info("kernel functions not sent: %s: %s", path, strerror(-rc));
		return rc;
	}
	struct ksym *v = NULL;
	size_t n = 0, cap = 0, zero = 0;
	char line[1024];
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long long addr = strtoull(line, &end, 16);
		char type = 0, name[KSYMS_NAME_MAX + 1];
		if (end == line || !isspace((unsigned char)*end) || sscanf(end, " %c %511s", &type, name) != 2)
			continue; /* not a symbol line */
		if (!strchr("tTwW", type))
			continue;
		if (addr == 0) {
			zero++;
			continue;
		}
		if (n == KALLSYMS_MAX) {
			rc = -EFBIG;
			break;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 8192;
			struct ksym *nv = realloc(v, nc * sizeof(*nv));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			cap = nc;
		}
		v[n].addr = addr;
		v[n].name = strdup(name);
		if (!v[n].name)
			rc = -ENOMEM;
		else
			n++;
	}
	fclose(f);
	if (rc == 0 && n == 0) {
		log_info("kernel functions not sent: %s shows %s (kernel.kptr_restrict; run the agent as root, or "
			 "give the collector the board's kallsyms with --kallsyms FILE)",
			 path, zero ? "no addresses" : "no text symbols");
		rc = -ENOENT;
	}
	uint64_t *addr = NULL;
	const char **names = NULL;
	if (rc == 0) {
		qsort(v, n, sizeof(*v), ksym_cmp);
		addr = malloc(n * sizeof(*addr));
		names = malloc(n * sizeof(*names));
		if (!addr || !names)
			rc = -ENOMEM;
	}
	if (rc == 0) {
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			if (m && addr[m - 1] == v[i].addr && strcmp(names[m - 1], v[i].name) == 0)
				continue; /* the same symbol twice */
			addr[m] = v[i].addr;
			names[m++] = v[i].name;
		}
		st->symbols = m;
		rc = ksyms_encode(addr, names, m, boot, emit, arg);
	}
	free(addr);
	free(names);
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return rc;
}

struct send_ctx {
	struct session *s;
	struct kallsyms_stats *st;
};

static int emit_record(void *arg, const Prof__KernelSymbols *m)
{
	struct send_ctx *c = arg;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_KERNEL_SYMBOLS;
	env.kernel_symbols = (Prof__KernelSymbols *)m;
	c->st->chunks++;
	c->st->bytes += prof__kernel_symbols__get_packed_size(m);
	return session_send(c->s, &env);
}

/* The marker's path for this boot, agent and collector ("" if it does not fit). */
static void marker_path(const struct session_opts *o, const char *agent_id, const char *boot, char *out, size_t len)
{
	char tag[300];
	snprintf(tag, sizeof(tag), "%s@%s", agent_id, o->collector ? o->collector : "");
	for (char *c = tag; *c; c++)
		if (*c == '/')
			*c = '_';
	if (!o->spool_dir || snprintf(out, len, "%s/.kernel-symbols.%s.%s", o->spool_dir, boot, tag) >= (int)len)
		out[0] = 0;
}

int kallsyms_send(struct session *s, const struct session_opts *o, const char *agent_id, struct kallsyms_stats *st)
{
	memset(st, 0, sizeof(*st));
	char boot[KSYMS_BOOT_ID_MAX + 1];
	if (read_boot_id("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)) == 0) {
		marker_path(o, agent_id, boot, st->marker, sizeof(st->marker));
		if (st->marker[0] && access(st->marker, F_OK) == 0) {
			/* the collector has this boot's table: say which boot this session runs on */
			Prof__KernelSymbols m = PROF__KERNEL_SYMBOLS__INIT;
			m.kernel_boot_id = boot;
			m.chunks = 1;
			st->reference = true;
			st->marker[0] = 0;
			log_debug("kernel functions of boot %s: sent in an earlier session (a reference only)", boot);
			struct send_ctx c = {.s = s, .st = st};
			return emit_record(&c, &m);
		}
	}
	struct send_ctx c = {.s = s, .st = st};
	struct kallsyms_stats rs;
	int rc = kallsyms_read_send(NULL, NULL, emit_record, &c, &rs);
	st->symbols = rs.symbols;
	if (rc == 0)
		log_debug("kernel functions: %zu symbols in %zu records, %zu bytes", st->symbols, st->chunks, st->bytes);
	else if (rc != -ENOENT)
		log_warn("kernel functions not sent: %s", strerror(-rc));
	if (rc < 0)
		st->marker[0] = 0;
	return rc;
}

void kallsyms_sent(const struct kallsyms_stats *st, bool all_acked)
{
	if (!all_acked || !st->marker[0] || st->chunks == 0)
		return;
	FILE *f = fopen(st->marker, "w");
	if (f) {
		fprintf(f, "%zu kernel symbols in %zu records, acked\n", st->symbols, st->chunks);
		fclose(f);
	}
}
