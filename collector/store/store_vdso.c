/* Record kind Vdso: the agent's vdso image (proto/vdso.proto), kept per
 * session in vdso_images (the first one a session sent). */
#include "store_vdso.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_kinds.h"
#include "store_priv.h"

static const char vdso_schema[] = "CREATE TABLE IF NOT EXISTS vdso_images (session_id INTEGER NOT NULL,"
				  " image BLOB NOT NULL, PRIMARY KEY(session_id)) WITHOUT ROWID;";
static const char ins_image[] =
	"INSERT INTO vdso_images (session_id, image) VALUES (?1, ?2) ON CONFLICT DO NOTHING";
static const char q_image[] = "SELECT image FROM vdso_images WHERE session_id = ?1";

static int check_vdso(const Prof__Envelope *env)
{
	const ProtobufCBinaryData *im = &env->vdso->image;
	if (im->len < 64 || im->len > STORE_VDSO_MAX || memcmp(im->data, "\x7f" "ELF", 4) != 0)
		return -EINVAL;
	return 0;
}

static int put_vdso(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	struct db_stmt *st = store_stmt(s, ins_image);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_blob(st, 2, env->vdso->image.data, env->vdso->image.len);
	return db_run(st);
}

const struct store_kind store_kind_vdso = {
	.body_case = PROF__ENVELOPE__BODY_VDSO,
	.name = "vdso",
	.schema_sql = vdso_schema,
	.check = check_vdso,
	.put = put_vdso,
};

int store_vdso_image(struct store *s, int64_t sid, uint8_t **img, size_t *len)
{
	*img = NULL;
	*len = 0;
	if (!store_has_table(s, "vdso_images"))
		return 0; /* a read-only open of a store older than the Vdso record */
	struct db_stmt *st = store_stmt(s, q_image);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc = db_step(st);
	if (rc == 1) {
		size_t n;
		const void *p = db_col_blob(st, 0, &n);
		if (p && n && n <= STORE_VDSO_MAX && (*img = malloc(n))) {
			memcpy(*img, p, n);
			*len = n;
		} else {
			rc = p && n && n <= STORE_VDSO_MAX ? -ENOMEM : 0;
		}
	}
	db_reset(st);
	return rc;
}
