/* A Samples record's mappings as one packed block (store_map_blocks.h). */
#include "store_map_blocks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "store_blocks.h"
#include "store_varint.h"
#include "store_priv.h"

static const char ins_map_block[] =
    "INSERT INTO sample_map_blocks (session_id, seq, n, data) VALUES (?1, ?2, ?3, ?4)"
    " ON CONFLICT DO NOTHING";

int store_map_block_put(struct store *s, int64_t sid, uint64_t seq, const Prof__Samples *sm)
{
	size_t cap = 0, n = sm->n_new_mappings;
	for (size_t i = 0; i < n; i++) {
		const Prof__Mapping *m = sm->new_mappings[i];
		cap += 8 * 10 + (m->path ? strlen(m->path) : 0) + m->build_id.len;
	}
	if (cap > STORE_BLOCK_MAX_RAW)
		return 0;
	uint8_t *raw = malloc(cap + 1), *z = NULL;
	if (!raw)
		return -ENOMEM;
	size_t len = 0, zlen = 0;
	int64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		const Prof__Mapping *m = sm->new_mappings[i];
		size_t pl = m->path ? strlen(m->path) : 0;
		len += put_var(raw + len, zigzag((int64_t)m->id - prev));
		prev = (int64_t)m->id;
		len += put_var(raw + len, zigzag(m->pid));
		len += put_var(raw + len, m->start);
		len += put_var(raw + len, zigzag((int64_t)(m->end - m->start)));
		len += put_var(raw + len, m->pgoff);
		len += put_var(raw + len, pl);
		if (pl)
			memcpy(raw + len, m->path, pl);
		len += pl;
		len += put_var(raw + len, m->build_id.len);
		if (m->build_id.len)
			memcpy(raw + len, m->build_id.data, m->build_id.len);
		len += m->build_id.len;
	}
	int rc = store_block_pack_level(raw, len, 3, &z, &zlen);
	struct db_stmt *st = rc == 0 ? store_stmt(s, ins_map_block) : NULL;
	if (rc == 0 && !st)
		rc = -EIO;
	if (rc == 0) {
		db_bind_i64(st, 1, sid);
		db_bind_u64(st, 2, seq);
		db_bind_i64(st, 3, (int64_t)n);
		db_bind_blob(st, 4, z ? z : raw, z ? zlen : len);
		rc = db_run(st);
	}
	free(z);
	free(raw);
	return rc < 0 ? rc : 1;
}

int store_map_block_each(const uint8_t *z, size_t zlen, int (*cb)(void *arg, const struct store_map *m),
			 void *arg)
{
	size_t len, off = 0;
	uint8_t *owned = NULL;
	const uint8_t *p = store_block_unpack(z, zlen, &len, &owned);
	if (!p)
		return -ENOMEM;
	int rc = 0;
	int64_t prev = 0;
	while (rc == 0 && off < len) {
		uint64_t v[6], bl;
		for (int k = 0; rc == 0 && k < 6; k++) {
			size_t used = get_var(p + off, len - off, &v[k]);
			if (!used)
				rc = -EBADMSG;
			off += used;
		}
		if (rc == 0 && v[5] > len - off)
			rc = -EBADMSG;
		if (rc)
			break;
		struct store_map m = {.id = prev + unzigzag(v[0]),
				      .pid = (int32_t)unzigzag(v[1]),
				      .start = v[2],
				      .pgoff = v[4],
				      .path = (const char *)p + off,
				      .pathlen = (size_t)v[5]};
		m.end = m.start + (uint64_t)unzigzag(v[3]);
		prev = m.id;
		off += m.pathlen;
		size_t u = get_var(p + off, len - off, &bl);
		if (!u || bl > len - off - u) {
			rc = -EBADMSG;
			break;
		}
		off += u;
		m.build_id = p + off;
		m.build_id_len = (size_t)bl;
		off += m.build_id_len;
		rc = cb(arg, &m);
	}
	free(owned);
	return rc;
}
