/* /proc/kallsyms -> KernelSymbols records (kallsyms.h). Lines are
 * "ADDRESS TYPE NAME [MODULE]" (kernel/kallsyms.c s_show); text symbols
 * (t, T, w, W) are kept, as the collector's file loader does. Without the
 * right to see kernel addresses (kernel.kptr_restrict, not root) every
 * address reads 0 (kallsyms_show_value): nothing is sent.
 * Once per boot: after the collector acked a session's table, the agent
 * leaves a marker in its spool directory (.kernel-symbols.BOOT.AGENT@COLLECTOR)
 * naming the collector's store (its identity, from the acks); later sessions of
 * the same boot send only a reference record naming the boot, and the table
 * after all when the collector's acks name another store. */
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

/* A text symbol with an address from one kallsyms line ("ADDRESS TYPE NAME [MODULE]"):
 * true; an address of 0 (not shown to us) counts in *zero. */
static bool parse_line(const char *line, uint64_t *addr, char *name, size_t *zero)
{
	char *end;
	unsigned long long a = strtoull(line, &end, 16);
	char type = 0;
	if (end == line || !isspace((unsigned char)*end) || sscanf(end, " %c %511s", &type, name) != 2)
		return false; /* not a symbol line */
	if (!strchr("tTwW", type))
		return false;
	if (a == 0) {
		(*zero)++;
		return false;
	}
	*addr = a;
	return true;
}

/* The same symbol as on the line before (the kernel lists some twice): counted once. */
static bool same_as_previous(uint64_t a, const char *name, uint64_t *pa, char *pname)
{
	if (a == *pa && strcmp(name, pname) == 0)
		return true;
	*pa = a;
	snprintf(pname, KSYMS_NAME_MAX + 1, "%s", name);
	return false;
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
	/* Two passes, so that only one chunk is in memory: the count (the chunks' number
	 * goes in every chunk), then chunk by chunk, each sorted by name for the front coding. */
	size_t n = 0, zero = 0;
	uint64_t a, pa = 0;
	char name[KSYMS_NAME_MAX + 1], pname[KSYMS_NAME_MAX + 1] = "";
	char line[1024];
	while (fgets(line, sizeof(line), f))
		if (parse_line(line, &a, name, &zero) && !same_as_previous(a, name, &pa, pname) && ++n > KALLSYMS_MAX)
			break;
	size_t chunks = (n + KSYMS_CHUNK_SYMS - 1) / KSYMS_CHUNK_SYMS;
	if (n == 0) {
		log_info("kernel functions not sent: %s shows %s (kernel.kptr_restrict; run the agent as root, or "
			 "give the collector the board's kallsyms with --kallsyms FILE)",
			 path, zero ? "no addresses" : "no text symbols");
		rc = -ENOENT;
	} else if (n > KALLSYMS_MAX || chunks > KSYMS_MAX_CHUNKS) {
		rc = -EFBIG;
	}
	struct ksym *v = rc == 0 ? malloc(KSYMS_CHUNK_SYMS * sizeof(*v)) : NULL;
	uint64_t *addr = rc == 0 ? malloc(KSYMS_CHUNK_SYMS * sizeof(*addr)) : NULL;
	const char **names = rc == 0 ? malloc(KSYMS_CHUNK_SYMS * sizeof(*names)) : NULL;
	if (rc == 0 && (!v || !addr || !names))
		rc = -ENOMEM;
	size_t nv = 0, c = 0, seen = 0;
	if (rc == 0 && fseek(f, 0, SEEK_SET) != 0)
		rc = -errno;
	pa = 0;
	pname[0] = 0;
	while (rc == 0 && c < chunks) {
		bool more = fgets(line, sizeof(line), f) != NULL;
		if (more && parse_line(line, &a, name, &zero) && !same_as_previous(a, name, &pa, pname)) {
			if (seen++ >= n)
				continue; /* a module loaded since the count: the table is as counted */
			v[nv].addr = a;
			v[nv].name = strdup(name);
			if (!v[nv].name) {
				rc = -ENOMEM;
				break;
			}
			nv++;
		}
		if (nv < KSYMS_CHUNK_SYMS && more)
			continue;
		/* a full chunk, or the end (the last chunks empty if modules went away since the count) */
		qsort(v, nv, sizeof(*v), ksym_cmp);
		size_t m = 0;
		for (size_t i = 0; i < nv; i++) {
			if (m && addr[m - 1] == v[i].addr && strcmp(names[m - 1], v[i].name) == 0)
				continue; /* the same symbol twice */
			addr[m] = v[i].addr;
			names[m++] = v[i].name;
		}
		st->symbols += m;
		rc = ksyms_encode_chunk(addr, names, m, (uint32_t)c++, (uint32_t)chunks, (uint32_t)n, boot, emit, arg);
		for (size_t i = 0; i < nv; i++)
			free(v[i].name);
		nv = 0;
	}
	for (size_t i = 0; i < nv; i++)
		free(v[i].name);
	fclose(f);
	free(addr);
	free(names);
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
	int rc = session_send(c->s, &env);
	if (c->st->tick)
		c->st->tick(c->st->tick_ctx);
	return rc;
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

/* The store a marker names: its "store ID" line ("" in markers older than issue 39). */
static void marker_store(const char *path, char *out, size_t len)
{
	out[0] = 0;
	FILE *f = fopen(path, "re");
	char line[256];
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "store ", 6) == 0) {
			snprintf(out, len, "%.63s", line + 6);
			out[strcspn(out, " \t\r\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
}

int kallsyms_send(struct session *s, const struct session_opts *o, const char *agent_id, struct kallsyms_stats *st)
{
	*st = (struct kallsyms_stats){.tick = st->tick, .tick_ctx = st->tick_ctx};
	st->s = s;
	char boot[KSYMS_BOOT_ID_MAX + 1];
	if (read_boot_id("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)) == 0) {
		marker_path(o, agent_id, boot, st->marker, sizeof(st->marker));
		if (st->marker[0] && access(st->marker, F_OK) == 0) {
			/* the collector has this boot's table: say which boot this session runs on */
			Prof__KernelSymbols m = PROF__KERNEL_SYMBOLS__INIT;
			m.kernel_boot_id = boot;
			m.chunks = 1;
			st->reference = true;
			marker_store(st->marker, st->acked_store, sizeof(st->acked_store));
			log_debug("kernel functions of boot %s: sent in an earlier session to store '%s' (a reference "
				  "only, unless this collector's store is another)",
				  boot, st->acked_store);
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

int kallsyms_store_check(struct kallsyms_stats *st)
{
	if (!st->reference || st->store_checked || !st->s)
		return 0;
	const char *id = session_store_id(st->s);
	if (!id[0])
		return 0; /* not connected yet, or a collector that does not say (the marker stands) */
	st->store_checked = true;
	if (strcmp(id, st->acked_store) == 0)
		return 0;
	log_info("the collector's store (%s) is not the one that acked this boot's kernel functions (%s): "
		 "sending them to it",
		 id, st->acked_store[0] ? st->acked_store : "unknown");
	struct send_ctx c = {.s = st->s, .st = st};
	struct kallsyms_stats rs;
	int rc = kallsyms_read_send(NULL, NULL, emit_record, &c, &rs);
	if (rc < 0) {
		if (rc != -ENOENT)
			log_warn("kernel functions not sent: %s", strerror(-rc));
		return rc;
	}
	st->symbols = rs.symbols;
	st->reference = false;
	return 1;
}

static int watch_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now_ns, int *timeout_ms)
{
	struct kallsyms_stats *st = ctx;
	if (st->reference && !st->store_checked && (*timeout_ms < 0 || *timeout_ms > 100))
		*timeout_ms = 100;
	return 0;
}

static int watch_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now_ns)
{
	kallsyms_store_check(ctx);
	return 0;
}

void kallsyms_loop_source(struct kallsyms_stats *st, struct loop_source *src)
{
	memset(src, 0, sizeof(*src));
	src->name = "kallsyms";
	src->prepare = watch_prepare;
	src->dispatch = watch_dispatch;
	src->ctx = st;
}

void kallsyms_sent(const struct kallsyms_stats *st, bool all_acked)
{
	if (!st->marker[0])
		return;
	const char *id = st->s ? session_store_id(st->s) : "";
	if (st->reference) {
		if (id[0] && strcmp(id, st->acked_store) != 0) {
			unlink(st->marker); /* a store without the table: the next session sends it */
			log_info("kernel functions: store %s has no table of this boot yet; the next session sends it", id);
		}
		return;
	}
	if (!all_acked || st->chunks == 0)
		return;
	FILE *f = fopen(st->marker, "w");
	if (f) {
		fprintf(f, "store %s\n%zu kernel symbols in %zu records, acked\n", id, st->symbols, st->chunks);
		fclose(f);
	}
}
