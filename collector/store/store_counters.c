/* The core record kinds counters (counter_samples rows, event declarations
 * through store_put_event_descs) and heartbeat (the session's last_seen and
 * spool drops). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "store_kinds.h"
#include "store_rows.h"

static const char sample_rows[] = "INSERT INTO counter_samples (session_id, seq, t_ns, event_id, value, running_pct)"
				  " VALUES ";
static const char heartbeat_update[] = "UPDATE sessions SET last_seen = ?1, spool_dropped = ?2 WHERE id = ?3";

/* Undo the delta encoding of the row times first, so that an overflowing
 * record is refused before anything of it is written. */
static int check_counters(const Prof__Envelope *env)
{
	const Prof__Counters *c = env->counters;
	uint64_t t = 0;
	for (size_t r = 0; r < c->n_t_ns; r++) {
		if (c->t_ns[r] > (uint64_t)INT64_MAX - t)
			return -ERANGE;
		t += c->t_ns[r];
	}
	return 0;
}

struct counter_rows {
	int64_t sid;
	uint64_t seq;
	const Prof__Counters *c;
	uint64_t *t; /* absolute time of each row */
};

static void bind_counter_row(struct db_stmt *st, int base, size_t i, void *arg)
{
	const struct counter_rows *cr = arg;
	const Prof__Counters *c = cr->c;
	/* validate.c guarantees n_values == n_t_ns * n_event_ids and running_pct
	 * empty or n_values long. */
	size_t ncols = c->n_event_ids;
	db_bind_i64(st, base + 1, cr->sid);
	db_bind_u64(st, base + 2, cr->seq);
	db_bind_u64(st, base + 3, cr->t[i / ncols]);
	db_bind_i64(st, base + 4, c->event_ids[i % ncols]);
	db_bind_u64(st, base + 5, c->values[i]);
	db_bind_i64(st, base + 6, c->n_running_pct ? c->running_pct[i] : 100);
}

static int put_counters(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	const Prof__Counters *c = env->counters;
	int rc = store_put_event_descs(s, sid, c->new_events, c->n_new_events);
	if (rc < 0 || c->n_t_ns == 0 || c->n_event_ids == 0)
		return rc;
	struct counter_rows cr = {.sid = sid, .seq = env->seq, .c = c, .t = malloc(c->n_t_ns * sizeof(uint64_t))};
	if (!cr.t)
		return -ENOMEM;
	uint64_t t = 0;
	for (size_t r = 0; r < c->n_t_ns; r++)
		cr.t[r] = t += c->t_ns[r];
	rc = store_insert_rows(s, sample_rows, 6, c->n_t_ns * c->n_event_ids, bind_counter_row, &cr);
	free(cr.t);
	return rc;
}

static int put_heartbeat(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	struct db_stmt *st = store_stmt(s, heartbeat_update);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, (int64_t)time(NULL));
	db_bind_u64(st, 2, env->heartbeat->spool_dropped);
	db_bind_i64(st, 3, sid);
	return db_run(st);
}

const struct store_kind store_kind_counters = {
	.body_case = PROF__ENVELOPE__BODY_COUNTERS,
	.name = "counters",
	.check = check_counters,
	.put = put_counters,
};

const struct store_kind store_kind_heartbeat = {
	.body_case = PROF__ENVELOPE__BODY_HEARTBEAT,
	.name = "heartbeat",
	.put = put_heartbeat,
};
