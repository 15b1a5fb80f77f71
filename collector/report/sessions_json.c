/* The session list's JSON (sessions_json.h). */
#include "sessions_json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "store/store_calib.h"

static int calib_cb(int64_t sid, int64_t cal, void *arg)
{
	struct sessions_json *j = arg;
	if (sid <= 0 || sid > 10000000)
		return 0;
	if ((size_t)sid >= j->ncalib) {
		size_t n = (size_t)sid * 2 + 16;
		int64_t *nc = realloc(j->calib, n * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		memset(nc + j->ncalib, 0, (n - j->ncalib) * sizeof(*nc));
		j->calib = nc;
		j->ncalib = n;
	}
	j->calib[sid] = cal;
	return 0;
}

int64_t sessions_json_calib(const struct sessions_json *j, int64_t sid)
{
	return sid > 0 && (size_t)sid < j->ncalib ? j->calib[sid] : 0;
}

int sessions_json_begin(struct store *st, FILE *f, struct sessions_json *j)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	int rc = store_calib_map(st, calib_cb, j);
	if (rc < 0) {
		free(j->calib);
		j->calib = NULL;
		return rc;
	}
	if (f)
		fputs("{\"sessions\":[", f);
	return 0;
}

void sessions_json_row(struct sessions_json *j, const struct store_session_row *r)
{
	FILE *f = j->f;
	fputs(j->n ? ",{" : "{", f);
	json_i64_key(f, 1, "id", r->id);
	const char *names[] = {"agent_id",	"board",    "kernel_release", "hostname", "machine",
			       "agent_version", "features", "target",	      "peer"};
	const char *vals[] = {r->agent_id,   r->board,	  r->kernel_release, r->hostname, r->machine,
			      r->agent_version, r->features, r->target,	     r->peer};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		json_key(f, 0, names[i]);
		json_string(f, vals[i]);
	}
	json_u64_key(f, 0, "boot_id", r->boot_id);
	json_i64_key(f, 0, "first_seen", r->first_seen);
	json_i64_key(f, 0, "last_seen", r->last_seen);
	json_u64_key(f, 0, "connects", r->connects);
	json_u64_key(f, 0, "records", r->records);
	json_u64_key(f, 0, "wire_bytes", r->wire_bytes);
	json_u64_key(f, 0, "spool_dropped", r->spool_dropped);
	json_u64_key(f, 0, "samples", r->samples);
	json_u64_key(f, 0, "counter_samples", r->counter_samples);
	json_u64_key(f, 0, "cpu_samples", r->cpu_samples);
	if (r->counts_unreadable) {
		json_key(f, 0, "counts_unreadable");
		fputs("true", f);
	}
	json_key(f, 0, "calibration_session");
	if (sessions_json_calib(j, r->id))
		json_i64(f, sessions_json_calib(j, r->id));
	else
		fputs("null", f);
	fputc('}', f);
	j->n++;
}

void sessions_json_end(struct sessions_json *j)
{
	if (j->f)
		fputs("]}\n", j->f);
	free(j->calib);
	j->calib = NULL;
}
