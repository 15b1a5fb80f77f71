/* Record kind KernelSymbols: the chunks of a boot's kernel function table
 * (proto/kallsyms.proto), kept once per (agent, kernel boot id) in
 * kernel_symbols as the agent packed them (a table sent again is kept once;
 * a chunk that differs from the stored one is dropped with one warning per
 * agent and boot: the first table stays), and which boot each session ran on
 * (session_kernels; a reference record, without symbols, only links). Read
 * back with store_kernel_symbols(), within the table limits of ksyms.h.
 * Since #40 each chunk is stored as one zstd frame (level KSYMS_STORE_LEVEL,
 * store_blocks.c) where that is smaller: a table is written once per boot and
 * kept, its front-coded names shrink ~3.6x (1.78 MB -> 0.49 MB, x86
 * distribution kernel); an older collector's chunks, stored as the agent
 * packed them, are read as they are. */
#include "store_kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "log.h"
#include "log_once.h"
#include "store_blocks.h"
#include "store_kinds.h"
#include "store_priv.h"

#define KSYMS_STORE_LEVEL 9 /* ~0.1 s of CPU per boot's table; level 19 saves 5 % more for ~10x that */

static const char ksyms_schema[] =
	"CREATE TABLE IF NOT EXISTS kernel_symbols (agent_id TEXT NOT NULL, kernel_boot_id TEXT NOT NULL,"
	" chunk INTEGER NOT NULL, chunks INTEGER NOT NULL, data BLOB NOT NULL,"
	" PRIMARY KEY(agent_id, kernel_boot_id, chunk)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS session_kernels (session_id INTEGER NOT NULL, kernel_boot_id TEXT NOT NULL,"
	" PRIMARY KEY(session_id)) WITHOUT ROWID;"
	/* one row: the store's identity, sent in every Ack (the agents' kernel-symbols marker) */
	"CREATE TABLE IF NOT EXISTS store_identity (id TEXT NOT NULL, PRIMARY KEY(id)) WITHOUT ROWID;";

static const char ins_chunk[] =
	"INSERT INTO kernel_symbols (agent_id, kernel_boot_id, chunk, chunks, data)"
	" SELECT agent_id, ?2, ?3, ?4, ?5 FROM sessions WHERE id = ?1 ON CONFLICT DO NOTHING";
static const char q_stored_chunk[] =
    "SELECT k.data, e.agent_id FROM kernel_symbols k JOIN sessions e ON e.agent_id = k.agent_id"
    " WHERE e.id = ?1 AND k.kernel_boot_id = ?2 AND k.chunk = ?3";
static const char ins_session[] =
	"INSERT INTO session_kernels (session_id, kernel_boot_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING";

static int put_ksyms(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	const Prof__KernelSymbols *m = env->kernel_symbols;
	if (m->n_addr_delta == 0) /* a reference: the table came in an earlier session of this boot */
		goto link;
	size_t len = prof__kernel_symbols__get_packed_size(m);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	prof__kernel_symbols__pack(m, buf);
	/* stored already: the same chunk again is nothing, a different one is said (once) and dropped */
	struct db_stmt *st = store_stmt(s, q_stored_chunk);
	int rc = -EIO, differs = 0;
	char key[200];
	if (st) {
		db_bind_i64(st, 1, sid);
		db_bind_text(st, 2, m->kernel_boot_id);
		db_bind_i64(st, 3, m->chunk);
		rc = db_step(st);
		if (rc == 1) {
			size_t zl, ol;
			uint8_t *owned;
			const uint8_t *z = db_col_blob(st, 0, &zl);
			const uint8_t *old = z ? store_block_unpack(z, zl, &ol, &owned) : NULL;
			if (z && !old)
				rc = -ENOMEM;
			if (old)
				differs = ol != len || memcmp(old, buf, len) != 0 ? 1 : -1;
			if (z)
				free(owned);
			snprintf(key, sizeof(key), "ksyms-differ %s %s", db_col_text(st, 1),
				 m->kernel_boot_id);
		}
		db_reset(st);
	}
	uint8_t *z = NULL;
	size_t zlen = 0;
	if (rc >= 0 && !differs)
		rc = store_block_pack_level(buf, len, KSYMS_STORE_LEVEL, &z, &zlen);
	if (differs > 0) {
		if (log_once(key))
			log_warn("session %lld: kernel symbols of boot %s differ from the table its agent "
				 "sent before "
				 "for that boot (chunk %u of %u); the first table is kept",
				 (long long)sid, m->kernel_boot_id, m->chunk, m->chunks);
	}
	st = rc >= 0 && !differs ? store_stmt(s, ins_chunk) : NULL;
	if (rc >= 0 && differs)
		rc = 0;
	else if (rc >= 0 && !st)
		rc = -EIO;
	if (st) {
		db_bind_i64(st, 1, sid);
		db_bind_text(st, 2, m->kernel_boot_id);
		db_bind_i64(st, 3, m->chunk);
		db_bind_i64(st, 4, m->chunks);
		db_bind_blob(st, 5, z ? z : buf, z ? zlen : len);
		rc = db_run(st);
	}
	free(z);
	free(buf);
	if (rc < 0)
		return rc;
link:
	st = store_stmt(s, ins_session);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_text(st, 2, m->kernel_boot_id);
	return db_run(st);
}

const struct store_kind store_kind_kernel_symbols = {
	.body_case = PROF__ENVELOPE__BODY_KERNEL_SYMBOLS,
	.name = "kernel_symbols",
	.schema_sql = ksyms_schema,
	.put = put_ksyms,
};

static const char q_boot[] = "SELECT k.kernel_boot_id, e.agent_id FROM session_kernels k JOIN sessions e"
			     " ON e.id = k.session_id WHERE k.session_id = ?1";
static const char q_chunks[] = "SELECT chunk, chunks, data FROM kernel_symbols WHERE agent_id = ?1"
			       " AND kernel_boot_id = ?2 ORDER BY chunk";
static const char q_table_size[] = "SELECT COUNT(*), COALESCE(SUM(LENGTH(data)), 0) FROM kernel_symbols"
				   " WHERE agent_id = ?1 AND kernel_boot_id = ?2";

static const char q_identity[] = "SELECT id FROM store_identity ORDER BY id LIMIT 1";
static const char ins_identity[] = "INSERT INTO store_identity (id) VALUES (?1) ON CONFLICT DO NOTHING";

static int identity_read(struct store *s, char *out, size_t len)
{
	struct db_stmt *st = store_stmt(s, q_identity);
	if (!st)
		return -EIO;
	int rc = db_step(st);
	if (rc == 1)
		snprintf(out, len, "%s", db_col_text(st, 0));
	db_reset(st);
	return rc < 0 ? rc : 0;
}

int store_identity(struct store *s, char *out, size_t len)
{
	out[0] = 0;
	if (!store_has_table(s, "store_identity"))
		return -ENOENT; /* a read-only open of a store older than issue 39 */
	int rc = identity_read(s, out, len);
	if (rc < 0 || out[0])
		return rc;
	uint8_t r[8];
	FILE *f = fopen("/dev/urandom", "re");
	size_t got = f ? fread(r, 1, sizeof(r), f) : 0;
	if (f)
		fclose(f);
	if (got != sizeof(r))
		return -EIO;
	char id[2 * sizeof(r) + 1];
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(id + 2 * i, 3, "%02x", r[i]);
	struct db_stmt *st = store_stmt(s, ins_identity);
	if (!st)
		return -EIO;
	db_bind_text(st, 1, id);
	rc = db_run(st);
	if (rc < 0)
		return rc;
	return identity_read(s, out, len); /* another collector on the same store may have won */
}

int store_session_kernel_boot(struct store *s, int64_t sid, char *boot, size_t len)
{
	boot[0] = 0;
	if (!store_has_table(s, "session_kernels")) /* a store written before this kind */
		return 0;
	struct db_stmt *st = store_stmt(s, q_boot);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc = db_step(st);
	if (rc == 1) {
		snprintf(boot, len, "%s", db_col_text(st, 0));
		rc = 0;
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}

/* The caller's callback behind the table limits (symbols and decoded name bytes). */
struct table_limit {
	ksyms_fn fn;
	void *arg;
	size_t syms, name_bytes;
};

static int limited(void *arg, uint64_t addr, const char *name)
{
	struct table_limit *l = arg;
	l->name_bytes += strlen(name) + 1;
	if (++l->syms > KSYMS_MAX_TABLE_SYMS || l->name_bytes > KSYMS_MAX_TABLE_NAME_BYTES)
		return -EFBIG;
	return l->fn ? l->fn(l->arg, addr, name) : 0;
}

/* Warn once per process about (agent, boot). */
static void warn_table(const char *agent_id, const char *boot, const char *what, const char *why)
{
	char key[300];
	snprintf(key, sizeof(key), "ksyms %s %s %s", what, agent_id, boot);
	if (log_once(key))
		log_warn("kernel symbols of %s boot %s: %s", agent_id, boot, why);
}

/* Before anything is decoded: the stored table's chunk count and packed bytes. */
static int table_size_ok(struct store *s, const char *agent_id, const char *boot)
{
	struct db_stmt *st = store_stmt(s, q_table_size);
	if (!st)
		return -EIO;
	db_bind_text(st, 1, agent_id);
	db_bind_text(st, 2, boot);
	int rc = db_step(st);
	int64_t chunks = 0, bytes = 0;
	if (rc == 1) {
		chunks = db_col_i64(st, 0);
		bytes = db_col_i64(st, 1);
	}
	db_reset(st);
	if (rc < 0)
		return rc;
	if (chunks > KSYMS_MAX_CHUNKS || bytes < 0 || bytes > KSYMS_MAX_TABLE_PACKED_BYTES) {
		char why[200];
		snprintf(why, sizeof(why),
			 "%lld chunks, %lld bytes stored (at most %u chunks, %u bytes: "
			 "KSYMS_MAX_TABLE_PACKED_BYTES); "
			 "not loaded, its kernel frames stay [kernel]",
			 (long long)chunks, (long long)bytes, KSYMS_MAX_CHUNKS, KSYMS_MAX_TABLE_PACKED_BYTES);
		warn_table(agent_id, boot, "size", why);
		return -EFBIG;
	}
	return 0;
}

int store_kernel_symbols(struct store *s, const char *agent_id, const char *boot, ksyms_fn fn, void *arg)
{
	int rc = table_size_ok(s, agent_id, boot);
	if (rc < 0)
		return rc;
	struct db_stmt *st = store_stmt(s, q_chunks);
	if (!st)
		return -EIO;
	db_bind_text(st, 1, agent_id);
	db_bind_text(st, 2, boot);
	struct table_limit lim = {.fn = fn, .arg = arg};
	uint32_t want = 0, chunks = 0, damaged = 0;
	char err[160] = "";
	uint8_t *raw = NULL; /* a compressed chunk, decompressed (one at a time) */
	size_t rawcap = 0;
	uint64_t packed = 0;
	while ((rc = db_step(st)) == 1) {
		uint32_t c = (uint32_t)db_col_i64(st, 0);
		chunks = (uint32_t)db_col_i64(st, 1);
		size_t zlen, len;
		const uint8_t *z = db_col_blob(st, 2, &zlen);
		const uint8_t *data = z ? store_block_unpack_to(z, zlen, &len, &raw, &rawcap) : NULL;
		if (z && !data) {
			rc = -ENOMEM;
			break;
		}
		if ((packed += data ? len : 0) > KSYMS_MAX_TABLE_PACKED_BYTES) {
			char why[200];
			snprintf(why, sizeof(why),
				 "over %u bytes once decompressed (KSYMS_MAX_TABLE_PACKED_BYTES); not loaded, "
				 "its kernel frames stay [kernel]",
				 KSYMS_MAX_TABLE_PACKED_BYTES);
			warn_table(agent_id, boot, "size", why);
			rc = -EFBIG;
			break;
		}
		Prof__KernelSymbols *m = prof__kernel_symbols__unpack(NULL, data ? len : 0, data);
		rc = m ? ksyms_chunk_decode(m, NULL, NULL, err, sizeof(err)) : -EINVAL;
		if (!m)
			snprintf(err, sizeof(err), "chunk %u is not a KernelSymbols", c);
		if (rc == 0 && (m->chunk != c || strcmp(m->kernel_boot_id, boot) != 0)) {
			snprintf(err, sizeof(err), "chunk %u stored as chunk %u of boot %s", m->chunk, c, boot);
			rc = -EINVAL;
		}
		if (rc == 0)
			rc = ksyms_chunk_decode(m, limited, &lim, err, sizeof(err));
		if (rc == -EINVAL)
			damaged++;
		if (m)
			prof__kernel_symbols__free_unpacked(m, NULL);
		if (rc < 0 && rc != -EINVAL)
			break;
		rc = 0;
		if (c == want)
			want++;
	}
	db_reset(st);
	free(raw);
	if (rc == -EFBIG && packed <= KSYMS_MAX_TABLE_PACKED_BYTES) {
		char why[200];
		snprintf(why, sizeof(why),
			 "over %u symbols or %u bytes of names (KSYMS_MAX_TABLE_SYMS, "
			 "KSYMS_MAX_TABLE_NAME_BYTES); "
			 "not loaded, its kernel frames stay [kernel]",
			 KSYMS_MAX_TABLE_SYMS, KSYMS_MAX_TABLE_NAME_BYTES);
		warn_table(agent_id, boot, "limit", why);
	}
	if (rc < 0)
		return rc;
	if (damaged) {
		char why[240];
		snprintf(why, sizeof(why), "%u damaged chunks skipped (the last: %s)", damaged, err);
		warn_table(agent_id, boot, "damaged", why);
	}
	if (want == 0)
		return -ENOENT;
	if (want < chunks) {
		char why[160];
		snprintf(why, sizeof(why), "%u of %u chunks stored (the rest was lost or is still coming)",
			 want, chunks);
		warn_table(agent_id, boot, "partial", why);
	}
	return 0;
}
