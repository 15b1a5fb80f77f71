/* Sending the orphaned sessions of a spool (spool_orphans.h). */
#include "spool_orphans.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frame.h"
#include "log.h"
#include "spool.h"
#include "transport.h"
#include "validate.h"

struct orphans {
	struct orphan_opts o;
	char spool_dir[PATH_MAX], collector[256], agent_id[256], tls_ca[PATH_MAX], token_file[PATH_MAX];
	char (*names)[256]; /* orphaned session directories not adopted yet */
	size_t nnames, next;
	/* the session being sent */
	struct spool *sp;
	struct transport *tr;
	char cur[256];
	uint64_t cur_records; /* records it held when adopted */
	int fatal;
	struct orphans_stats st;
};

static const char *copy_opt(char *buf, size_t len, const char *s)
{
	if (!s)
		return NULL;
	snprintf(buf, len, "%s", s);
	return buf;
}

static int hello_agent(const uint8_t *frame, size_t len, char *id, size_t idlen);

/* The session directory dir was saved by this agent id for this collector
 * (or the options take any): its to send. */
static bool ours(const struct orphans *o, const char *dir)
{
	uint8_t *hello = NULL;
	size_t len = 0;
	char collector[256], id[256];
	bool yes = spool_read_meta(dir, &hello, &len, collector, sizeof(collector)) == 0 &&
		   hello_agent(hello, len, id, sizeof(id)) == 0 &&
		   (!o->o.agent_id || strcmp(id, o->o.agent_id) == 0) &&
		   (o->o.any_collector || strcmp(collector, o->o.collector) == 0);
	free(hello);
	return yes;
}

int orphans_open(struct orphans **out, const struct orphan_opts *opt, char *err, size_t errlen)
{
	*out = NULL;
	struct orphans *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->o = *opt;
	o->o.spool_dir = copy_opt(o->spool_dir, sizeof(o->spool_dir), opt->spool_dir);
	o->o.collector = copy_opt(o->collector, sizeof(o->collector), opt->collector);
	o->o.agent_id = copy_opt(o->agent_id, sizeof(o->agent_id), opt->agent_id);
	o->o.tls_ca = copy_opt(o->tls_ca, sizeof(o->tls_ca), opt->tls_ca);
	o->o.token_file = copy_opt(o->token_file, sizeof(o->token_file), opt->token_file);
	o->o.only = NULL;
	DIR *d = opendir(o->spool_dir);
	if (!d) {
		int e = errno;
		if (e == ENOENT) { /* no spool yet: nothing left behind */
			*out = o;
			return 0;
		}
		snprintf(err, errlen, "cannot read the spool %s: %s", o->spool_dir, strerror(e));
		free(o);
		return -e;
	}
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		char path[PATH_MAX + 256];
		struct stat sb;
		if (de->d_name[0] == '.' || (opt->only && strcmp(de->d_name, opt->only) != 0) ||
		    snprintf(path, sizeof(path), "%s/%s", o->spool_dir, de->d_name) >= (int)sizeof(path) ||
		    lstat(path, &sb) < 0 || !S_ISDIR(sb.st_mode) || strlen(de->d_name) >= sizeof(o->names[0]) ||
		    spool_probe(path) != SPOOL_ORPHAN)
			continue;
		if (!ours(o, path)) {
			o->st.skipped++;
			continue;
		}
		char(*n)[256] = realloc(o->names, (o->nnames + 1) * sizeof(*o->names));
		if (!n) {
			rc = -ENOMEM;
			break;
		}
		o->names = n;
		snprintf(o->names[o->nnames++], sizeof(o->names[0]), "%s", de->d_name);
	}
	closedir(d);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		orphans_close(o);
		return rc;
	}
	o->st.found = (unsigned)o->nnames;
	*out = o;
	return 0;
}

/* The agent id of a saved Hello frame into id; 0 or -EBADMSG. */
static int hello_agent(const uint8_t *frame, size_t len, char *id, size_t idlen)
{
	uint32_t body;
	int h = frame_get_varint(frame, len, &body);
	if (h <= 0 || (size_t)h + body != len)
		return -EBADMSG;
	char why[160];
	Prof__Envelope *env = envelope_decode(frame + h, body, why, sizeof(why));
	if (!env)
		return -EBADMSG;
	int rc = env->body_case == PROF__ENVELOPE__BODY_HELLO ? 0 : -EBADMSG;
	if (rc == 0)
		snprintf(id, idlen, "%s", env->hello->agent_id);
	prof__envelope__free_unpacked(env, NULL);
	return rc;
}

static void drop_current(struct orphans *o)
{
	transport_destroy(o->tr);
	o->tr = NULL;
	if (o->sp)
		spool_close(o->sp, true); /* unlocks; removes the directory once everything is acked */
	o->sp = NULL;
	o->cur[0] = 0;
}

/* Adopt the next orphan (listed as this agent's and collector's by
 * orphans_open: saved Hellos never change) and start its transport; false
 * when none is left. */
static bool start_next(struct orphans *o)
{
	while (o->next < o->nnames) {
		const char *name = o->names[o->next++];
		char path[PATH_MAX + 256], err[PATH_MAX + 512], id[256] = "";
		snprintf(path, sizeof(path), "%s/%s", o->spool_dir, name);
		int rc = spool_adopt(&o->sp, path, err, sizeof(err));
		if (rc == -EBUSY || rc == -ENOENT) { /* its agent came back, or another process took it */
			o->st.found--;
			continue;
		}
		size_t hlen = 0;
		const uint8_t *hello = rc == 0 ? spool_hello(o->sp, &hlen) : NULL;
		if (rc == 0 && hello_agent(hello, hlen, id, sizeof(id)) < 0) {
			snprintf(err, sizeof(err), "%s: the saved Hello is unreadable", path);
			rc = -EBADMSG;
		}
		if (rc == 0 && spool_records(o->sp) == 0) { /* everything was acked: only the directory was left */
			drop_current(o);
			o->st.delivered++;
			continue;
		}
		if (rc == 0)
			rc = transport_create(&o->tr, o->o.collector, o->sp, hello, hlen, o->o.max_frame, err, sizeof(err));
		if (rc == 0)
			rc = transport_secure(o->tr, o->o.tls_ca, o->o.token_file, err, sizeof(err));
		if (rc < 0) {
			log_warn("spool: cannot send the records an earlier run left in %s: %s", path, err);
			drop_current(o);
			o->st.skipped++;
			continue;
		}
		snprintf(o->cur, sizeof(o->cur), "%s", name);
		o->cur_records = spool_records(o->sp);
		log_info("spool: sending %llu record(s) that an earlier run of agent %s left in %s (their own session)",
			 (unsigned long long)o->cur_records, id, path);
		return true;
	}
	return false;
}

static int orphans_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *timeout_ms)
{
	struct orphans *o = ctx;
	if (max < 1 || o->fatal || (!o->tr && !start_next(o)))
		return 0;
	int t = transport_poll_prepare(o->tr, &pfd[0], now);
	if (t >= 0 && (*timeout_ms < 0 || t < *timeout_ms))
		*timeout_ms = t;
	return 1;
}

static int orphans_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct orphans *o = ctx;
	if (!o->tr)
		return 0;
	int rc = transport_process(o->tr, n > 0 ? pfd[0].revents : 0, now);
	if (rc < 0) {
		/* the run's own transport meets the same refusal and stops the run */
		log_error("spool: earlier runs' records not sent: %s", transport_error(o->tr));
		o->fatal = rc;
		drop_current(o);
		return 0;
	}
	if (transport_get_stats(o->tr)->acks_refused) {
		/* The collector holds a seq above every record this spool kept: the run that left it
		 * sent records it could not spool (a full disk), or the ack is forged. Either way no
		 * retry of this run changes it: leave the session for a later run or `agent spool
		 * drop`, without waiting on it. */
		log_warn("spool: %s: the collector acked records beyond what this spool kept; its %llu record(s) "
			 "stay there (`agent spool ls`, `agent spool drop`)",
			 o->cur, (unsigned long long)spool_records(o->sp));
		o->st.skipped++;
		drop_current(o);
		return 0;
	}
	if (spool_records(o->sp) == 0) {
		log_info("spool: the %llu record(s) left in %s are delivered", (unsigned long long)o->cur_records,
			 o->cur);
		o->st.records += o->cur_records;
		o->st.delivered++;
		drop_current(o);
	}
	return 0;
}

int orphans_attach(struct orphans *o, struct loop *l)
{
	struct loop_source src = {.name = "spool orphans", .prepare = orphans_prepare, .dispatch = orphans_dispatch, .ctx = o};
	return loop_add(l, &src);
}

unsigned orphans_pending(const struct orphans *o)
{
	if (!o || o->fatal)
		return 0;
	return (unsigned)(o->nnames - o->next) + (o->tr ? 1u : 0u);
}

int orphans_fatal(const struct orphans *o)
{
	return o ? o->fatal : 0;
}

const struct orphans_stats *orphans_get_stats(const struct orphans *o)
{
	return &o->st;
}

void orphans_close(struct orphans *o)
{
	if (!o)
		return;
	if (o->sp) /* partly sent: what the collector acked is gone from it, the rest stays */
		o->st.records += o->cur_records - spool_records(o->sp);
	drop_current(o);
	free(o->names);
	free(o);
}
