/* pprof export (pprof.h). Ids: the string table, locations and functions are
 * interned through stack_sets used as string maps (their ids start at 1, as
 * pprof's location and function ids must be nonzero). */
#include "pprof.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sample_period.h"
#include "sat.h"

#include "views/profile.pb-c.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__ValueType PValueType;

struct pp {
	struct stack_set strs, locs, funcs, maps; /* string table; keys of locations, functions, mappings */
	PLocation *loc;
	PLine *line;
	PLine **linep;
	size_t nloc, caploc, capline;
	PFunction *fn;
	size_t nfn, capfn;
	PMapping *map;
	size_t nmap, capmap;
};

static int64_t str(struct pp *p, const char *s)
{
	return stack_set_intern(&p->strs, s);
}

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 256;
	while (nc < need)
		nc *= 2;
	void *nv = realloc(*v, nc * elem);
	if (!nv)
		return -ENOMEM;
	memset((char *)nv + *cap * elem, 0, (nc - *cap) * elem);
	*v = nv;
	*cap = nc;
	return 0;
}

/* One mapping per file (module): its path and build-id, so that the profile can be
 * symbolized again later (pprof -symbolize, or with the file's debug info); locations
 * carry file offsets, so the mapping spans [0, the largest offset seen] at offset 0. */
static int64_t mapping_of(struct pp *p, const struct stack_set *s, const struct vframe *f, uint64_t addr)
{
	const char *mod = stack_set_str(s, f->module);
	int64_t id = stack_set_intern(&p->maps, mod[0] ? mod : "[unknown]");
	if (id < 0)
		return id;
	if ((size_t)id > p->nmap) {
		if (grow((void **)&p->map, &p->capmap, (size_t)id, sizeof(*p->map)) < 0)
			return -ENOMEM;
		PMapping *m = &p->map[id - 1];
		perftools__profiles__mapping__init(m);
		m->id = (uint64_t)id;
		const char *path = f->path ? stack_set_str(s, f->path) : "";
		int64_t fn = str(p, path[0] ? path : mod[0] ? mod : "[unknown]");
		int64_t bid = str(p, f->build_id ? stack_set_str(s, f->build_id) : "");
		if (fn < 0 || bid < 0)
			return fn < 0 ? fn : bid;
		m->filename = fn;
		m->build_id = bid;
		/* functions are given (or the address is all there is): pprof must not
		 * look for the module's binary on this host */
		m->has_functions = 1;
		p->nmap = (size_t)id;
	}
	PMapping *m = &p->map[id - 1];
	if (!f->kernel && addr >= m->memory_limit)
		m->memory_limit = addr + 1;
	return id;
}

static int64_t function_of(struct pp *p, const struct stack_set *s, const struct vframe *f)
{
	char key[1200];
	snprintf(key, sizeof(key), "%s\x1f%s", stack_set_str(s, f->name), stack_set_str(s, f->module));
	int64_t id = stack_set_intern(&p->funcs, key);
	if (id < 0)
		return id;
	if ((size_t)id > p->nfn) {
		if (grow((void **)&p->fn, &p->capfn, (size_t)id, sizeof(*p->fn)) < 0)
			return -ENOMEM;
		PFunction *fn = &p->fn[id - 1];
		perftools__profiles__function__init(fn);
		fn->id = (uint64_t)id;
		int64_t n = str(p, stack_set_str(s, f->name));
		int64_t r = str(p, f->raw ? stack_set_str(s, f->raw) : stack_set_str(s, f->name));
		if (n < 0 || r < 0)
			return -ENOMEM;
		fn->name = n;
		fn->system_name = r;
		if (f->src_file) { /* the source file DWARF names (sym_line.c) */
			int64_t sf = str(p, stack_set_str(s, f->src_file));
			if (sf < 0)
				return -ENOMEM;
			fn->filename = sf;
		}
		p->nfn = (size_t)id;
	}
	return id;
}

static int64_t location_of(struct pp *p, const struct stack_set *s, const struct vframe *f)
{
	char key[1300];
	uint64_t addr = f->kernel ? f->ip : f->file_off;
	snprintf(key, sizeof(key), "%s\x1f%s\x1f%llx", stack_set_str(s, f->name), stack_set_str(s, f->module),
		 (unsigned long long)addr);
	int64_t id = stack_set_intern(&p->locs, key);
	if (id < 0)
		return id;
	if ((size_t)id > p->nloc) {
		if (grow((void **)&p->loc, &p->caploc, (size_t)id, sizeof(*p->loc)) < 0 ||
		    grow((void **)&p->line, &p->capline, (size_t)id, sizeof(*p->line)) < 0)
			return -ENOMEM;
		PLocation *l = &p->loc[id - 1];
		perftools__profiles__location__init(l);
		l->id = (uint64_t)id;
		l->address = addr;
		int64_t m = mapping_of(p, s, f, addr);
		if (m < 0)
			return m;
		l->mapping_id = (uint64_t)m;
		if (f->resolved) {
			int64_t fn = function_of(p, s, f);
			if (fn < 0)
				return fn;
			perftools__profiles__line__init(&p->line[id - 1]);
			p->line[id - 1].function_id = (uint64_t)fn;
			p->line[id - 1].line = f->src_line;
			l->n_line = 1;
		}
		p->nloc = (size_t)id;
	}
	return id;
}

static void pp_free(struct pp *p)
{
	stack_set_free(&p->strs);
	stack_set_free(&p->locs);
	stack_set_free(&p->funcs);
	stack_set_free(&p->maps);
	free(p->loc);
	free(p->line);
	free(p->linep);
	free(p->fn);
	free(p->map);
}

#define LABELS 5

int pprof_encode(const struct stack_set *s, uint8_t **buf, size_t *len)
{
	struct pp p;
	memset(&p, 0, sizeof(p));
	stack_set_init(&p.strs);
	stack_set_init(&p.locs);
	stack_set_init(&p.funcs);
	stack_set_init(&p.maps);
	int rc = -ENOMEM;
	PSample *samples = calloc(s->nstacks ? s->nstacks : 1, sizeof(*samples));
	PSample **sp = calloc(s->nstacks ? s->nstacks : 1, sizeof(*sp));
	uint64_t *locids = calloc(s->nframes ? s->nframes : 1, sizeof(*locids));
	int64_t *values = calloc(2 * (s->nstacks ? s->nstacks : 1), sizeof(*values));
	PLabel *labels = calloc(LABELS * (s->nstacks ? s->nstacks : 1), sizeof(*labels));
	PLabel **labelp = calloc(LABELS * (s->nstacks ? s->nstacks : 1), sizeof(*labelp));
	PLocation **locp = NULL;
	PFunction **fnp = NULL;
	PMapping **mapp = NULL;
	if (!samples || !sp || !locids || !values || !labels || !labelp || str(&p, "") < 0)
		goto out;
	/* the period at the set's frequency (sample_period_ns): the profile's one `period`; a stack's
	 * time is its own ns where set (count x its session's period: an older agent's timer period
	 * is 1/F, a newer one's 1/F + 1/128 of it), so a query over both sums them exactly */
	int64_t period_ns = (int64_t)sample_period_ns(s->freq_hz > 0 ? (uint64_t)s->freq_hz : 0,
						     s->period > 0 ? (uint64_t)s->period : 0);
	bool mixed = false;
	int64_t k_comm = str(&p, "comm"), k_thread = str(&p, "thread"), k_agent = str(&p, "agent"),
		k_pid = str(&p, "pid"), k_tid = str(&p, "tid");
	if (k_comm < 0 || k_thread < 0 || k_agent < 0 || k_pid < 0 || k_tid < 0)
		goto out;
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct vstack *v = &s->stacks[i];
		PSample *smp = &samples[i];
		perftools__profiles__sample__init(smp);
		sp[i] = smp;
		/* leaf first */
		for (uint32_t k = 0; k < v->n; k++) {
			int64_t id = location_of(&p, s, &s->frames[v->first + v->n - 1 - k]);
			if (id < 0) {
				rc = (int)id;
				goto out;
			}
			locids[v->first + k] = (uint64_t)id;
		}
		smp->location_id = &locids[v->first];
		smp->n_location_id = v->n;
		values[2 * i] = (int64_t)v->count;
		uint64_t ns = v->ns ? v->ns : sat_mul_u64(v->count, (uint64_t)period_ns);
		mixed |= ns != sat_mul_u64(v->count, (uint64_t)period_ns);
		values[2 * i + 1] = ns > INT64_MAX ? INT64_MAX : (int64_t)ns;
		smp->value = &values[2 * i];
		smp->n_value = 2;
		PLabel *lb = &labels[LABELS * i];
		size_t nl = 0;
		struct {
			int64_t key;
			uint32_t sid;
		} sl[3] = {{k_comm, v->comm}, {k_thread, v->thread}, {k_agent, v->agent}};
		for (int q = 0; q < 3; q++)
			if (sl[q].sid) {
				perftools__profiles__label__init(&lb[nl]);
				lb[nl].key = sl[q].key;
				int64_t vs = str(&p, stack_set_str(s, sl[q].sid));
				if (vs < 0)
					goto out;
				lb[nl++].str = vs;
			}
		if (v->pid) {
			perftools__profiles__label__init(&lb[nl]);
			lb[nl].key = k_pid;
			lb[nl++].num = v->pid;
		}
		if (v->tid) {
			perftools__profiles__label__init(&lb[nl]);
			lb[nl].key = k_tid;
			lb[nl++].num = v->tid;
		}
		for (size_t q = 0; q < nl; q++)
			labelp[LABELS * i + q] = &lb[q];
		smp->label = &labelp[LABELS * i];
		smp->n_label = nl;
	}
	/* pointers last: the arrays above moved while growing */
	locp = calloc(p.nloc ? p.nloc : 1, sizeof(*locp));
	p.linep = calloc(p.nloc ? p.nloc : 1, sizeof(*p.linep));
	fnp = calloc(p.nfn ? p.nfn : 1, sizeof(*fnp));
	mapp = calloc(p.nmap ? p.nmap : 1, sizeof(*mapp));
	if (!locp || !p.linep || !fnp || !mapp)
		goto out;
	for (size_t i = 0; i < p.nloc; i++) {
		locp[i] = &p.loc[i];
		p.linep[i] = &p.line[i];
		if (p.loc[i].n_line)
			p.loc[i].line = &p.linep[i];
	}
	for (size_t i = 0; i < p.nfn; i++)
		fnp[i] = &p.fn[i];
	for (size_t i = 0; i < p.nmap; i++)
		mapp[i] = &p.map[i];
	PValueType st[2], pt;
	PValueType *stp[2] = {&st[0], &st[1]};
	perftools__profiles__value_type__init(&st[0]);
	perftools__profiles__value_type__init(&st[1]);
	perftools__profiles__value_type__init(&pt);
	st[0].type = str(&p, "samples");
	st[0].unit = str(&p, "count");
	st[1].type = pt.type = str(&p, "cpu");
	st[1].unit = pt.unit = str(&p, "nanoseconds");
	char note[400];
	snprintf(note, sizeof(note), "event %s, %lld Hz%s", s->event[0] ? s->event : "?", (long long)s->freq_hz,
		 mixed ? "; records sampled with different periods: each sample's cpu value is its count x its "
			 "own session's period (the mean of its records' where they differ), `period` is the one at "
			 "the highest frequency"
		       : "");
	int64_t comment = str(&p, note);
	if (st[0].type < 0 || st[0].unit < 0 || st[1].type < 0 || st[1].unit < 0 || comment < 0)
		goto out;
	PProfile prof;
	perftools__profiles__profile__init(&prof);
	prof.n_sample_type = 2;
	prof.sample_type = stp;
	prof.n_sample = s->nstacks;
	prof.sample = sp;
	prof.n_location = p.nloc;
	prof.location = locp;
	prof.n_function = p.nfn;
	prof.function = fnp;
	prof.n_mapping = p.nmap;
	prof.mapping = mapp;
	prof.n_string_table = p.strs.nstrs;
	prof.string_table = p.strs.strs;
	prof.time_nanos = s->t0_ns;
	prof.duration_nanos = s->t1_ns > s->t0_ns ? s->t1_ns - s->t0_ns : 0;
	prof.period_type = &pt;
	prof.period = period_ns;
	prof.n_comment = 1;
	prof.comment = &comment;
	prof.default_sample_type = st[1].type;
	*len = perftools__profiles__profile__get_packed_size(&prof);
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		goto out;
	perftools__profiles__profile__pack(&prof, *buf);
	rc = 0;
out:
	free(samples);
	free(sp);
	free(locids);
	free(values);
	free(labels);
	free(labelp);
	free(locp);
	free(fnp);
	free(mapp);
	pp_free(&p);
	return rc;
}

int pprof_write(const struct stack_set *s, FILE *out)
{
	uint8_t *raw = NULL;
	size_t len = 0;
	int rc = pprof_encode(s, &raw, &len);
	if (rc < 0)
		return rc;
	if (len > UINT32_MAX) {
		free(raw);
		return -EFBIG;
	}
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip wrapper, as pprof wants on disk */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(raw);
		return -ENOMEM;
	}
	z.next_in = raw;
	z.avail_in = (uInt)len;
	unsigned char chunk[16384];
	int zr;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		size_t have = sizeof(chunk) - z.avail_out;
		if (have && fwrite(chunk, 1, have, out) != have) {
			rc = -EIO;
			break;
		}
	} while (zr == Z_OK);
	if (rc == 0 && zr != Z_STREAM_END)
		rc = -EIO;
	deflateEnd(&z);
	free(raw);
	return rc;
}
