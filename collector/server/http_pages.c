/* Pages of the HTTP front end with the per-session analysis cache (http_pages.h). */
#include "http_pages.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "json.h"
#include "log.h"
#include "net.h"
#include "report/overview.h"
#include "report/sessions_json.h"
#include "report/svg.h"
#include "store/store_calib.h"

/* ---------------------------------------------------------------- bounded output */

/* A FILE that keeps at most max bytes: a write beyond fails and sets over. */
struct bounded {
	char *buf;
	size_t len, cap, max;
	bool over;
};

static ssize_t bounded_write(void *cookie, const char *data, size_t n)
{
	struct bounded *b = cookie;
	if (b->over || n > b->max - b->len) {
		b->over = true;
		return 0; /* an error for stdio */
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		if (cap > b->max)
			cap = b->max;
		char *nb = realloc(b->buf, cap);
		if (!nb)
			return 0;
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, data, n);
	b->len += n;
	return (ssize_t)n;
}

static FILE *bounded_open(struct bounded *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
	cookie_io_functions_t io = {.write = bounded_write};
	return fopencookie(b, "w", io);
}

/* Close f; 0 and the body taken (NUL-terminated), or -EFBIG / -EIO (the body freed). */
static int bounded_close(FILE *f, struct bounded *b, int rc, char **body, size_t *len)
{
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (b->over) /* whatever the renderer made of its failed writes */
		rc = -EFBIG;
	if (rc < 0) {
		free(b->buf);
		return rc;
	}
	char *nb = realloc(b->buf, b->len + 1); /* NUL-terminated, for callers that print it */
	if (!nb) {
		free(b->buf);
		return -ENOMEM;
	}
	nb[b->len] = '\0';
	*body = nb;
	*len = b->len;
	return 0;
}

/* ---------------------------------------------------------------- the cache */

struct stamp {
	uint64_t records;	/* of the session */
	uint64_t boot_id;	/* the session's agent run: SQLite gives a pruned session's id again (review r14) */
	int64_t calib_sid;	/* the calibration session that gives its ceilings, 0: none */
	uint64_t calib_records; /* of that one */
	uint64_t calib_boot_id;
};

/* One analysis of a session: shared by the renders using it and its slot. */
struct analysis {
	struct stamp stamp;
	struct overview *ov; /* NULL while building or when the build failed */
	bool building;
	int rc;	       /* the build's result */
	unsigned refs; /* the slot's (while it is the slot's) and each render's */
};

struct slot {
	bool used;
	long long sid;
	bool json;
	struct analysis *cur; /* the latest analysis of (sid, json), NULL if none */
	uint64_t last_use;
};

struct page_cache {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* an analysis finished building */
	struct slot *slot;
	unsigned n;
	unsigned building; /* analyses being built now: at most HTTP_ANALYSES */
	uint64_t tick;
	struct page_cache_stats stats;
	void (*build_hook)(void *arg, long long sid); /* tests: page_cache_set_build_hook */
	void *build_hook_arg;
};

int page_cache_new(unsigned max_entries, struct page_cache **out)
{
	*out = NULL;
	struct page_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->n = max_entries ? max_entries : HTTP_CACHE_ENTRIES;
	c->slot = calloc(c->n, sizeof(*c->slot));
	pthread_condattr_t ca;
	int rc = c->slot ? pthread_condattr_init(&ca) : ENOMEM;
	if (rc == 0) {
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadlines are clock_mono_ns() */
		rc = pthread_cond_init(&c->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (rc == 0 && (rc = pthread_mutex_init(&c->mu, NULL)) != 0)
		pthread_cond_destroy(&c->cv);
	if (rc != 0) {
		free(c->slot);
		free(c);
		return -rc;
	}
	*out = c;
	return 0;
}

/* Under c->mu (or alone): drop one reference. */
static void unref(struct analysis *a)
{
	if (a && --a->refs == 0) {
		if (a->ov) {
			overview_free(a->ov);
			free(a->ov);
		}
		free(a);
	}
}

void page_cache_free(struct page_cache *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->n; i++)
		unref(c->slot[i].cur);
	free(c->slot);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

void page_cache_set_build_hook(struct page_cache *c, void (*fn)(void *arg, long long sid), void *arg)
{
	pthread_mutex_lock(&c->mu);
	c->build_hook = fn;
	c->build_hook_arg = arg;
	pthread_mutex_unlock(&c->mu);
}

void page_cache_get_stats(struct page_cache *c, struct page_cache_stats *st)
{
	pthread_mutex_lock(&c->mu);
	*st = c->stats;
	pthread_mutex_unlock(&c->mu);
}

static bool stamp_eq(const struct stamp *a, const struct stamp *b)
{
	return a->records == b->records && a->boot_id == b->boot_id && a->calib_sid == b->calib_sid &&
	       a->calib_records == b->calib_records && a->calib_boot_id == b->calib_boot_id;
}

static int stamp_get(struct store *st, long long sid, struct stamp *s)
{
	memset(s, 0, sizeof(*s));
	int rc = store_session_records_of(st, sid, &s->records, &s->boot_id);
	if (rc < 0)
		return rc;
	bool later;
	rc = store_calib_for_session(st, sid, &s->calib_sid, &later);
	if (rc < 0)
		return rc;
	if (rc == 0)
		s->calib_sid = 0;
	else if ((rc = store_session_records_of(st, s->calib_sid, &s->calib_records, &s->calib_boot_id)) < 0)
		return rc;
	return 0;
}

static uint64_t deadline_of(const _Atomic uint64_t *d)
{
	return d ? atomic_load(d) : 0;
}

void page_cache_wake(struct page_cache *c)
{
	pthread_mutex_lock(&c->mu);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

/* Wait for the cache's condition until the deadline (0: none); -ETIMEDOUT past it. */
static int cache_wait(struct page_cache *c, const _Atomic uint64_t *deadline)
{
	uint64_t deadline_ns = deadline_of(deadline);
	if (!deadline_ns) {
		pthread_cond_wait(&c->cv, &c->mu);
		return 0;
	}
	if (clock_mono_ns() >= deadline_ns)
		return -ETIMEDOUT;
	struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000u),
			      .tv_nsec = (long)(deadline_ns % 1000000000u)};
	int rc = pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	return rc == ETIMEDOUT ? -ETIMEDOUT : 0;
}

/* A slot for (sid, json): its own, a free one, else the least recently used one whose
 * analysis nobody uses; NULL if every slot is busy. */
static struct slot *cache_slot(struct page_cache *c, long long sid, bool json)
{
	struct slot *lru = NULL;
	for (unsigned i = 0; i < c->n; i++) {
		struct slot *s = &c->slot[i];
		if (s->used && s->sid == sid && s->json == json)
			return s;
	}
	for (unsigned i = 0; i < c->n; i++) {
		struct slot *s = &c->slot[i];
		if (!s->used)
			return s;
		if ((!s->cur || (!s->cur->building && s->cur->refs == 1)) && (!lru || s->last_use < lru->last_use))
			lru = s;
	}
	return lru;
}

/* Under c->mu: the analysis of (sid, json) for the session as stamp s says, with a
 * reference for the caller: *out ready (0), or new and building for the caller to
 * load (1), or -ETIMEDOUT. A request that finds an analysis being built waits for it
 * and uses it even when the session got records meanwhile (it is then at most one
 * analysis old): however fast records arrive, one analysis per session and variant
 * runs at a time. */
static int cache_acquire(struct page_cache *c, long long sid, bool json, const struct stamp *s,
			 const _Atomic uint64_t *deadline_ns, struct analysis **out)
{
	bool waited = false;
	for (;;) {
		struct slot *sl = cache_slot(c, sid, json);
		struct analysis *a = sl && sl->used && sl->sid == sid && sl->json == json ? sl->cur : NULL;
		if (a && a->building) {
			a->refs++;
			if (!waited)
				c->stats.waits++;
			waited = true;
			int rc = 0;
			while (a->building && rc == 0)
				rc = cache_wait(c, deadline_ns);
			if (rc == 0 && a->ov) {
				*out = a;
				c->stats.hits++;
				return 0;
			}
			unref(a);
			if (rc < 0)
				return rc;
			continue; /* its build failed: try again */
		}
		if (a && a->ov && stamp_eq(&a->stamp, s)) {
			a->refs++;
			sl->last_use = ++c->tick;
			c->stats.hits++;
			*out = a;
			return 0;
		}
		if (c->building >= HTTP_ANALYSES) { /* the CPU is for that many; wait for one to end */
			int rc = cache_wait(c, deadline_ns);
			if (rc < 0)
				return rc;
			continue;
		}
		c->stats.builds++;
		struct analysis *n = calloc(1, sizeof(*n));
		if (!n)
			return -ENOMEM;
		n->stamp = *s;
		n->building = true;
		c->building++;
		n->refs = 1; /* the caller's */
		if (sl) {
			if (!(sl->used && sl->sid == sid && sl->json == json)) {
				unref(sl->cur);
				*sl = (struct slot){.used = true, .sid = sid, .json = json};
			} else {
				unref(sl->cur); /* a stale one: freed once its renders are done */
			}
			sl->cur = n;
			sl->last_use = ++c->tick;
			n->refs++; /* the slot's */
		}
		*out = n;
		return 1;
	}
}

/* The caller built a (ov, or failed with rc): publish it and wake the waiters. */
static void cache_built(struct page_cache *c, struct analysis *a, struct overview *ov, int rc)
{
	pthread_mutex_lock(&c->mu);
	a->ov = ov;
	a->rc = rc;
	a->building = false;
	c->building--;
	if (rc < 0)
		for (unsigned i = 0; i < c->n; i++)
			if (c->slot[i].cur == a) { /* not kept: the next request tries again */
				c->slot[i].cur = NULL;
				unref(a);
			}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static void cache_release(struct page_cache *c, struct analysis *a)
{
	pthread_mutex_lock(&c->mu);
	unref(a);
	pthread_mutex_unlock(&c->mu);
}

/* ---------------------------------------------------------------- pages */

struct list_ctx {
	FILE *f;
	bool json;
	int n;
	const _Atomic uint64_t *deadline_ns;
	struct sessions_json j;
};

static int list_cb(const struct store_session_row *r, void *arg)
{
	struct list_ctx *x = arg;
	uint64_t d = deadline_of(x->deadline_ns);
	if (d && clock_mono_ns() >= d)
		return -ETIMEDOUT;
	char t[32];
	if (x->json) {
		sessions_json_row(&x->j, r);
	} else {
		fprintf(x->f, "<tr><td><a href=\"/session/%lld\">%lld</a></td><td>", (long long)r->id, (long long)r->id);
		svg_escape(x->f, r->agent_id);
		fputs("</td><td>", x->f);
		svg_escape(x->f, r->board);
		fputs("</td><td>", x->f);
		svg_escape(x->f, r->target);
		fprintf(x->f, "</td><td>%llu</td><td>%s</td></tr>\n", (unsigned long long)r->records,
			cli_time(t, sizeof(t), r->last_seen));
	}
	x->n++;
	return ferror(x->f) ? -EFBIG : 0;
}

static int page_sessions(struct store *st, FILE *f, bool json, const _Atomic uint64_t *deadline_ns)
{
	struct list_ctx x = {.f = f, .json = json, .deadline_ns = deadline_ns};
	if (json) {
		int rc = sessions_json_begin(st, f, &x.j);
		if (rc < 0)
			return rc;
	} else {
		fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"10\">"
		      "<title>profiler sessions</title></head>"
		      "<body style=\"font-family:sans-serif\"><h1>Sessions</h1>\n<p><a href=\"/profile\">CPU profile of "
		      "the last 10 minutes</a> (every agent: CPU over time, flame graph, callers and callees). "
		      "This page refreshes every 10 s.</p>\n<table border=\"1\" cellpadding=\"4\" "
		      "id=\"sessions\">\n<tr><th>session</th><th>agent</th><th>board</th><th>target</th><th>records</th>"
		      "<th>last seen</th></tr>\n",
		      f);
	}
	int rc = store_list_sessions(st, list_cb, &x);
	if (json)
		sessions_json_end(&x.j); /* the same shape as collector sessions --json */
	else
		fputs("</table></body></html>\n", f);
	return rc;
}

static int render_overview(const struct overview *ov, enum http_page p, FILE *f)
{
	switch (p) {
	case HP_HTML: return overview_html(ov, f);
	case HP_JSON: return overview_json(ov, f);
	case HP_TEXT: return overview_text(ov, f);
	case HP_SVG_GPU: return overview_roofline_svg(ov, true, f);
	case HP_SVG_CPU: return overview_roofline_svg(ov, false, f);
	default: return -EINVAL;
	}
}

static int load(struct store *st, long long sid, bool json, const _Atomic uint64_t *deadline_ns,
		struct overview **out)
{
	struct overview_opts oo = {.sections = true, .json = json, .limit = 20, .deadline_ns = deadline_ns};
	struct overview *ov = calloc(1, sizeof(*ov));
	if (!ov)
		return -ENOMEM;
	int rc = overview_load(st, sid, &oo, ov);
	if (rc < 0) {
		free(ov);
		return rc;
	}
	*out = ov;
	return 0;
}

/* The stamp of a session in a read snapshot of its own, ended before the caller may wait on the cache
 * (#40 w47b): a request waiting for another worker's analysis holds no PostgreSQL snapshot (one holds
 * back vacuum, and its ACCESS SHARE locks make a migration's ALTER TABLE wait) and no SQLite read
 * transaction (one holds back the WAL's checkpoints). */
static int stamp_read(struct store *st, long long sid, struct stamp *s)
{
	int reading = store_read_begin(st);
	if (reading < 0) {
		log_error("store %s: cannot begin a read: %s", store_name(st), store_strerror(reading));
		return reading;
	}
	int rc = stamp_get(st, sid, s);
	store_read_end(st, reading);
	return rc;
}

/* Build the analysis of a for (sid, json) in one read snapshot (the w46b rule: one read, one snapshot;
 * overview_load's nested reads share it) and publish it.
 *
 * Its label, the stamp that cache_acquire compares later requests' stamps with, is the stamp this request
 * read before its wait (a->stamp), in a snapshot of its own that ended before the build's began. The
 * build's snapshot is therefore never older than the label: the analysis holds every record the label
 * counts, and perhaps records committed between the two (during the wait for a build slot, or just
 * before the build's first read). So:
 * - a later request whose stamp equals the label (counts of the session and its calibration as when the
 *   label was read; every record committed adds to its session's count, so none was committed between
 *   the label and that request's stamp) gets an analysis that has every record up to its own stamp:
 *   current, never older than the state its stamp says;
 * - an analysis that saw records the label does not count carries a stale label: the next request's
 *   stamp differs and it builds once more, one extra build, never a stale page held as current;
 * - a stamp read after the build's snapshot (as a label) would be wrong: records committed during the
 *   build would be counted but not analysed, and the page served as current without them
 *   (test_http_pages_wait_record_during_build). Reading it again inside the build's snapshot would be
 *   exact but costs the stamp's statements once more per build (measured, bench/RESULTS.md #40 w47b).
 * What changes rows without a record (retention's deletion of a session's old rows, downsampling) no
 * stamp sees, before this change as after. A request that waits for a build in progress takes its result
 * whatever the stamps (cache_acquire: at most one analysis old, as before). */
static int build(struct page_cache *c, struct store *st, long long sid, bool json,
		 const _Atomic uint64_t *deadline_ns, struct analysis *a)
{
	struct overview *ov = NULL;
	int reading = store_read_begin(st), rc = reading;
	if (reading < 0) {
		log_error("store %s: cannot begin a read: %s", store_name(st), store_strerror(reading));
	} else {
		rc = load(st, sid, json, deadline_ns, &ov);
		pthread_mutex_lock(&c->mu);
		void (*hook)(void *, long long) = c->build_hook;
		void *hook_arg = c->build_hook_arg;
		pthread_mutex_unlock(&c->mu);
		if (hook) /* tests: inside the build's snapshot, before the analysis is published */
			hook(hook_arg, sid);
	}
	store_read_end(st, reading);
	cache_built(c, a, ov, rc);
	return rc;
}

static int page_session(struct page_cache *c, struct store *st, const struct http_route *r,
			const _Atomic uint64_t *deadline_ns, FILE *f)
{
	struct stamp s;
	int rc = stamp_read(st, r->session, &s);
	if (rc < 0)
		return rc;
	bool json = r->page == HP_JSON; /* the SVG charts use the text variant's analysis */
	struct analysis *a;
	pthread_mutex_lock(&c->mu);
	int how = cache_acquire(c, r->session, json, &s, deadline_ns, &a); /* no read open: it may wait */
	pthread_mutex_unlock(&c->mu);
	if (how < 0)
		return how;
	if (how == 1)
		rc = build(c, st, r->session, json, deadline_ns, a);
	if (rc == 0) /* from the analysis in memory: no read of the store */
		rc = render_overview(a->ov, r->page, f);
	if (rc == 0 && r->page == HP_HTML)
		page_reload_script(f, 30); /* cheap: the analysis is cached until the session gets records */
	cache_release(c, a);
	return rc;
}

int page_render(struct page_cache *c, struct store *st, const struct http_route *r, const struct page_budget *b,
		char **body, size_t *len)
{
	struct bounded out;
	FILE *f = bounded_open(&out, b->max_bytes);
	if (!f)
		return -ENOMEM;
	int rc;
	if (r->page == HP_INDEX || r->page == HP_SESSIONS_JSON || r->page == HP_PROFILE) {
		/* the page's queries in one read snapshot (#40 w46b), ended with the request: none is held
		 * between requests (a long PostgreSQL snapshot holds back vacuum) */
		int reading = store_read_begin(st);
		rc = reading;
		if (reading < 0)
			log_error("store %s: cannot begin a read: %s", store_name(st), store_strerror(reading));
		else if (r->page == HP_PROFILE)
			rc = page_profile_budget(st, f, 0, r->query, b->deadline_ns);
		else
			rc = page_sessions(st, f, r->page == HP_SESSIONS_JSON, b->deadline_ns);
		store_read_end(st, reading);
	} else {
		/* a session's page: its stamp and its analysis each in a snapshot of their own, none open
		 * while the request waits on the cache (#40 w47b, review r9 of w46b) */
		rc = page_session(c, st, r, b->deadline_ns, f);
	}
	return bounded_close(f, &out, rc, body, len);
}
