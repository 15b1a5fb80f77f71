/* The streaming eDAG engine: last-writer tables for registers and bytes,
 * the cache model, per-vertex depth and longest paths, layering, bounds. */
#include "edag/edag.h"
#include "edag/edag_mem.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cache_level {
	uint64_t nsets, set_mask; /* mask when nsets is a power of two, else 0 */
	uint32_t assoc, line_shift, latency;
	uint64_t *tag; /* line + 1, 0 = invalid; nsets * assoc, each set most recently used first */
};

struct edag_state {
	struct edag_config cfg;
	edag_edge_cb edge_cb;
	void *edge_arg;
	struct edag_rec reg_w[EDAG_NREGS], reg_r[EDAG_NREGS];
	struct edag_mtab w; /* last writer of each byte */
	struct edag_mtab r; /* last reader since that write (all_deps only) */
	struct cache_level lv[EDAG_MAX_LEVELS];
	struct edag_metrics mt;
};

/* ---------------------------------------------------------------- configuration */

const char *edag_cache_model_name(const struct edag_config *cfg)
{
	if (!cfg->nlevels)
		return "none";
	return cfg->cache_model == EDAG_CACHE_EDAN ? "edan" : "project";
}

int edag_cache_model_parse(const char *name)
{
	if (strcmp(name, "project") == 0 || strcmp(name, "default") == 0)
		return EDAG_CACHE_PROJECT;
	if (strcmp(name, "edan") == 0)
		return EDAG_CACHE_EDAN;
	return -EINVAL;
}

void edag_config_default(struct edag_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->alpha0 = 100;
	cfg->alpha = 100;
	cfg->m = 1;
	for (unsigned c = 0; c < EDAG_NCLASS; c++)
		cfg->class_cost[c] = 1;
	cfg->class_cost[EDAG_FLOAT] = 4;
}

static int cfg_fail(char *err, size_t errlen, const char *msg, unsigned lv)
{
	if (err && errlen)
		snprintf(err, errlen, msg, lv);
	return -EINVAL;
}

static bool pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

int edag_config_check(const struct edag_config *cfg, char *err, size_t errlen)
{
	if (cfg->nlevels > EDAG_MAX_LEVELS)
		return cfg_fail(err, errlen, "more than %u cache levels", EDAG_MAX_LEVELS);
	if (cfg->cache_model > EDAG_CACHE_EDAN)
		return cfg_fail(err, errlen, "unknown cache model %u", cfg->cache_model);
	if (cfg->alpha0 == 0)
		return cfg_fail(err, errlen, "alpha0 (memory latency) must be positive%.0u", 0);
	if (!(cfg->m >= 1) || !isfinite(cfg->m))
		return cfg_fail(err, errlen, "m (memory issue slots) must be at least 1%.0u", 0);
	if (!(cfg->alpha >= 0) || !isfinite(cfg->alpha))
		return cfg_fail(err, errlen, "alpha must be a finite number >= 0%.0u", 0);
	for (unsigned i = 0; i < cfg->nlevels; i++) {
		const struct edag_cache_level *l = &cfg->level[i];
		if (!pow2(l->line) || l->line < 4 || l->line > 4096)
			return cfg_fail(err, errlen,
					"cache level %u: line size must be a power of two in 4..4096", i + 1);
		if (l->assoc == 0 || l->assoc > 64)
			return cfg_fail(err, errlen, "cache level %u: associativity must be 1..64", i + 1);
		if (l->size == 0 || l->size % ((uint64_t)l->assoc * l->line) != 0 || l->size > (1ull << 34))
			return cfg_fail(err, errlen,
					"cache level %u: size must be a multiple of associativity x line (at "
					"most 16 GiB)",
					i + 1);
		if (i > 0 && l->line < cfg->level[i - 1].line)
			return cfg_fail(err, errlen, "cache level %u: line smaller than the level above",
					i + 1);
	}
	return 0;
}

/* ---------------------------------------------------------------- state */

static int cache_init(struct edag_state *st)
{
	for (unsigned i = 0; i < st->cfg.nlevels; i++) {
		const struct edag_cache_level *l = &st->cfg.level[i];
		struct cache_level *c = &st->lv[i];
		c->assoc = l->assoc;
		c->latency = l->latency;
		c->line_shift = (uint32_t)__builtin_ctz(l->line);
		c->nsets = l->size / ((uint64_t)l->assoc * l->line);
		if (st->cfg.cache_model == EDAG_CACHE_EDAN) /* set bits = int(log(sets, 2)) */
			c->nsets = 1ull << (63 - __builtin_clzll(c->nsets));
		c->set_mask = pow2(c->nsets) ? c->nsets - 1 : 0;
		c->tag = calloc(c->nsets * c->assoc, sizeof(uint64_t));
		if (!c->tag)
			return -ENOMEM;
	}
	return 0;
}

static void metrics_init(struct edag_metrics *mt, uint64_t slice)
{
	memset(mt, 0, sizeof(*mt));
	mt->by_depth.width = 1;
	mt->by_time.width = slice ? slice : 1;
}

static int tables_init(struct edag_state *st)
{
	int rc = edag_mtab_init(&st->w);
	if (rc == 0)
		rc = edag_mtab_init(&st->r);
	return rc;
}

void edag_reset(struct edag_state *st)
{
	edag_mtab_clear(&st->w);
	edag_mtab_clear(&st->r);
	memset(st->reg_w, 0, sizeof(st->reg_w));
	memset(st->reg_r, 0, sizeof(st->reg_r));
	for (unsigned i = 0; i < st->cfg.nlevels; i++) {
		struct cache_level *c = &st->lv[i];
		memset(c->tag, 0, c->nsets * c->assoc * sizeof(uint64_t));
	}
	metrics_init(&st->mt, st->cfg.time_slice ? st->cfg.time_slice : st->cfg.alpha0);
}

void edag_reset_keep_cache(struct edag_state *st)
{
	edag_mtab_clear(&st->w);
	edag_mtab_clear(&st->r);
	memset(st->reg_w, 0, sizeof(st->reg_w));
	memset(st->reg_r, 0, sizeof(st->reg_r));
	metrics_init(&st->mt, st->cfg.time_slice ? st->cfg.time_slice : st->cfg.alpha0);
}

int edag_new(const struct edag_config *cfg, struct edag_state **out)
{
	*out = NULL;
	if (edag_config_check(cfg, NULL, 0) < 0)
		return -EINVAL;
	struct edag_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->cfg = *cfg;
	if (cache_init(st) < 0 || tables_init(st) < 0) {
		edag_free(st);
		return -ENOMEM;
	}
	metrics_init(&st->mt, cfg->time_slice ? cfg->time_slice : cfg->alpha0);
	*out = st;
	return 0;
}

void edag_free(struct edag_state *st)
{
	if (!st)
		return;
	edag_mtab_free(&st->w);
	edag_mtab_free(&st->r);
	for (unsigned i = 0; i < EDAG_MAX_LEVELS; i++)
		free(st->lv[i].tag);
	free(st);
}

void edag_set_edge_cb(struct edag_state *st, edag_edge_cb cb, void *arg)
{
	st->edge_cb = cb;
	st->edge_arg = arg;
}

const struct edag_config *edag_state_config(const struct edag_state *st)
{
	return &st->cfg;
}

size_t edag_state_bytes(const struct edag_state *st)
{
	size_t b = sizeof(*st) + edag_mtab_bytes(&st->w) + edag_mtab_bytes(&st->r);
	for (unsigned i = 0; i < st->cfg.nlevels; i++)
		b += st->lv[i].nsets * st->lv[i].assoc * sizeof(uint64_t);
	return b;
}

/* ---------------------------------------------------------------- per-vertex accumulation */

struct acc {
	struct edag_rec r; /* max over predecessors (finish with its comp) */
	uint64_t to;	   /* this vertex's id - 1, for the edge observer */
	int stop;
};

static inline void acc_add(struct edag_state *st, struct acc *a, const struct edag_rec *p, enum edag_dep kind)
{
	uint64_t id = p->id & EDAG_REC_ID;
	if (!id)
		return;
	if (p->depth > a->r.depth)
		a->r.depth = p->depth;
	if (p->path > a->r.path)
		a->r.path = p->path;
	if (p->finish > a->r.finish || (p->finish == a->r.finish && p->comp > a->r.comp)) {
		a->r.finish = p->finish;
		a->r.comp = p->comp;
	}
	if (kind == EDAG_DEP_RAW_REG)
		st->mt.edges_reg++;
	else if (kind == EDAG_DEP_RAW_MEM)
		st->mt.edges_mem++;
	else
		st->mt.edges_false++;
	if (__builtin_expect(st->edge_cb != NULL, 0) && !a->stop)
		a->stop = st->edge_cb(st->edge_arg, id - 1, a->to, kind);
}

/* Records of bytes m of word w (table t) as predecessors. */
static inline void word_collect(struct edag_state *st, struct acc *a, const struct edag_mtab *t,
				const struct edag_rec *w, uint8_t m, enum edag_dep kind)
{
	uint8_t have = edag_word_mask(w) & m;
	if (!have)
		return;
	if (__builtin_expect(!(w->id & EDAG_REC_SPLIT), 1)) {
		acc_add(st, a, w, kind);
		return;
	}
	const struct edag_rec *b = edag_word_bytes(t, w);
	for (unsigned i = 0; i < 8; i++)
		if (have & (1u << i))
			acc_add(st, a, &b[i], kind);
}

/* Byte mask of word (address >> 3) within the access [addr, last]. */
static inline uint8_t word_mask(uint64_t addr, uint64_t last, uint64_t word)
{
	unsigned lo = word == addr >> 3 ? (unsigned)(addr & 7) : 0;
	unsigned hi = word == last >> 3 ? (unsigned)(last & 7) : 7;
	return (uint8_t)(((2u << hi) - 1) & ~((1u << lo) - 1));
}

/* ---------------------------------------------------------------- cache model */

/* Level that hits for an access of one line (-1: memory); every level above
 * it missed (marked in missed[]) and now holds the line. Sets are kept most
 * recently used first, so LRU is the last way. *cold: the miss of the last
 * level went into a set that still had an empty way (fewer distinct lines
 * than ways since the cache was last emptied): with an unknown cache before
 * that, the line might have been there. */
static int cache_line(struct edag_state *st, uint64_t addr, bool *missed, bool *cold)
{
	for (unsigned i = 0; i < st->cfg.nlevels; i++) {
		struct cache_level *c = &st->lv[i];
		uint64_t line = addr >> c->line_shift, key = line + 1;
		uint64_t set = c->set_mask ? (line & c->set_mask) : (line % c->nsets);
		uint64_t *tag = &c->tag[set * c->assoc];
		if (tag[0] == key)
			return (int)i;
		uint32_t w = 1;
		while (w < c->assoc && tag[w] != key)
			w++;
		bool miss = w == c->assoc;
		if (miss) {
			w = c->assoc - 1;
			*cold = tag[w] == 0;
		}
		memmove(tag + 1, tag, w * sizeof(uint64_t));
		tag[0] = key;
		if (!miss)
			return (int)i;
		missed[i] = true;
	}
	return -1;
}

/* Returns the worst level hit by the access (-1 = a miss of the last level).
 * *cold: every line that missed the last level was a cold miss (cache_line),
 * so the access might have hit a cache warmed by what came before. */
static int cache_access(struct edag_state *st, uint64_t addr, uint32_t size, bool *cold)
{
	bool missed[EDAG_MAX_LEVELS] = {false};
	uint32_t shift = st->lv[0].line_shift;
	int worst = 0;
	bool certain = false;
	for (uint64_t l = addr >> shift, e = (addr + size - 1) >> shift; l <= e; l++) {
		bool c = false;
		int h = cache_line(st, l << shift, missed, &c);
		if (h < 0 || worst < 0)
			worst = -1;
		else if (h > worst)
			worst = h;
		certain |= h < 0 && !c;
	}
	for (unsigned i = 0; i < st->cfg.nlevels; i++)
		st->mt.level_miss[i] += missed[i];
	if (worst >= 0)
		st->mt.level_hit[worst]++;
	*cold = worst < 0 && !certain;
	return worst;
}

void edag_cache_warm(struct edag_state *st, uint64_t addr, uint32_t size, bool write)
{
	if (!st->cfg.nlevels || size == 0 || addr > UINT64_MAX - size)
		return;
	if (st->cfg.cache_model == EDAG_CACHE_EDAN) {
		if (write)
			return; /* EDAN: stores never fill */
		size = 1;  /* loads probe with their first byte */
	}
	bool missed[EDAG_MAX_LEVELS] = {false}, cold;
	uint32_t shift = st->lv[0].line_shift;
	for (uint64_t l = addr >> shift, e = (addr + size - 1) >> shift; l <= e; l++)
		cache_line(st, l << shift, missed, &cold);
}

/* ---------------------------------------------------------------- histograms */

/* The histogram outgrew its bins: merge pairs (double the width) until x fits. */
static __attribute__((noinline)) uint64_t hist_widen(struct edag_histogram *h, uint64_t x)
{
	uint64_t i = x / h->width;
	while (i >= EDAG_LAYER_BINS) {
		for (unsigned k = 0; k < EDAG_LAYER_BINS / 2; k++) {
			h->count[k] = h->count[2 * k] + h->count[2 * k + 1];
			h->bytes[k] = h->bytes[2 * k] + h->bytes[2 * k + 1];
		}
		memset(&h->count[EDAG_LAYER_BINS / 2], 0, sizeof(h->count) / 2);
		memset(&h->bytes[EDAG_LAYER_BINS / 2], 0, sizeof(h->bytes) / 2);
		h->nbins = (h->nbins + 1) / 2;
		h->width *= 2;
		i = x / h->width;
	}
	return i;
}

static inline void hist_add(struct edag_histogram *h, uint64_t x, uint64_t bytes)
{
	uint64_t i = x / h->width;
	if (__builtin_expect(i >= EDAG_LAYER_BINS, 0))
		i = hist_widen(h, x);
	h->count[i]++;
	h->bytes[i] += bytes;
	if (i + 1 > h->nbins)
		h->nbins = (uint32_t)i + 1;
}

/* ---------------------------------------------------------------- the step */

static inline __attribute__((always_inline)) int insn_check(const struct edag_insn *in)
{
	if (in->cls >= EDAG_NCLASS || in->nread > EDAG_MAX_REGS || in->nwrite > EDAG_MAX_REGS)
		return -EINVAL;
	if (in->mem & ~(EDAG_MEM_READ | EDAG_MEM_WRITE))
		return -EINVAL;
	if (in->mem && (in->size == 0 || in->size > 4096 || in->addr > UINT64_MAX - in->size))
		return -EINVAL;
	return 0;
}

/* One instruction; `all` (all_deps) is a constant in each instantiation.
 * hint: the last-writer slot of the access's first word when the caller
 * looked it up and no insertion has moved it since, else NULL. */
static inline __attribute__((always_inline)) int step(struct edag_state *st, const struct edag_insn *in,
						      struct edag_vertex *vout, const bool all,
						      struct edag_rec *hint)
{
	const unsigned mem = in->mem;
	const uint64_t addr = in->addr, last = addr + in->size - 1;
	const uint64_t w0 = addr >> 3, w1 = last >> 3;
	const bool one = w0 == w1;				/* one word: probe each table once */
	const bool make = mem & EDAG_MEM_WRITE || (all && mem); /* the access sets records */
	struct edag_rec *pw = NULL, *pr = NULL;
	struct acc a = {.to = st->mt.vertices};

	/* make sure every word (and split word) it sets exists before anything changes */
	if (make) {
		if (((addr | in->size) & 7) != 0 &&
		    edag_mtab_reserve_splits(mem & EDAG_MEM_WRITE ? &st->w : &st->r, (size_t)(w1 - w0 + 1)) < 0)
			return -ENOMEM;
		for (uint64_t wd = w0; wd <= w1; wd++)
			if (!(pw = wd == w0 && hint ? hint : edag_mtab_get(&st->w, wd)) ||
			    (all && !(pr = edag_mtab_get(&st->r, wd))))
				return -ENOMEM;
	} else if (mem && one) {
		pw = hint ? hint : edag_mtab_find(&st->w, w0);
	}

	/* predecessors */
	for (unsigned i = 0; i < in->nread; i++) {
		unsigned r = in->rd[i];
		if (!r)
			continue;
		acc_add(st, &a, &st->reg_w[r], EDAG_DEP_RAW_REG);
		if (all)
			acc_add(st, &a, &st->reg_r[r], EDAG_DEP_FALSE_REG); /* RAR */
	}
	if (all)
		for (unsigned i = 0; i < in->nwrite; i++) {
			unsigned r = in->wr[i];
			if (!r)
				continue;
			acc_add(st, &a, &st->reg_w[r], EDAG_DEP_FALSE_REG); /* WAW */
			acc_add(st, &a, &st->reg_r[r], EDAG_DEP_FALSE_REG); /* WAR */
		}
	if (mem)
		for (uint64_t wd = w0; wd <= w1; wd++) {
			uint8_t m = word_mask(addr, last, wd);
			const struct edag_rec *w = one ? pw : edag_mtab_find(&st->w, wd);
			if (w) {
				if (mem & EDAG_MEM_READ)
					word_collect(st, &a, &st->w, w, m, EDAG_DEP_RAW_MEM);
				if (all && (mem & EDAG_MEM_WRITE))
					word_collect(st, &a, &st->w, w, m, EDAG_DEP_FALSE_MEM); /* WAW */
			}
			const struct edag_rec *r = !all ? NULL : one ? pr : edag_mtab_find(&st->r, wd);
			if (r)
				word_collect(st, &a, &st->r, r, m, EDAG_DEP_FALSE_MEM); /* WAR or RAR */
		}

	/* the vertex */
	bool memv = false, cold = false;
	int hit = -1;
	uint32_t cost = st->cfg.class_cost[in->cls];
	if (mem) {
		if (!st->cfg.nlevels) {
			hit = -1;
		} else if (st->cfg.cache_model != EDAG_CACHE_EDAN) {
			hit = cache_access(st, addr, in->size, &cold);
		} else if (mem & EDAG_MEM_WRITE) { /* EDAN: stores bypass, a miss at every level */
			hit = -1;
			for (unsigned i = 0; i < st->cfg.nlevels; i++)
				st->mt.level_miss[i]++;
		} else { /* EDAN: loads probe with their first byte */
			hit = cache_access(st, addr, 1, &cold);
		}
		memv = hit < 0;
		cost = memv ? st->cfg.alpha0 : st->cfg.level[hit].latency;
	}
	struct edag_rec self = {
	    .id = st->mt.vertices + 1,
	    .depth = a.r.depth + (memv && a.r.depth < UINT32_MAX),
	    .path = a.r.path + (a.r.path < UINT32_MAX),
	    .finish = a.r.finish + cost,
	    .comp = a.r.comp + (memv ? 0 : cost),
	};

	/* successors' view */
	if (all)
		for (unsigned i = 0; i < in->nread; i++)
			if (in->rd[i])
				st->reg_r[in->rd[i]] = self;
	for (unsigned i = 0; i < in->nwrite; i++) {
		unsigned r = in->wr[i];
		if (!r)
			continue;
		st->reg_w[r] = self;
		st->reg_r[r].id = 0;
	}
	if (make)
		for (uint64_t wd = w0; wd <= w1; wd++) {
			uint8_t m = word_mask(addr, last, wd);
			struct edag_rec *w = !(mem & EDAG_MEM_WRITE) ? NULL : one ? pw : edag_mtab_find(&st->w, wd);
			struct edag_rec *r = !all ? NULL : one ? pr : edag_mtab_find(&st->r, wd);
			if (w) {
				edag_word_set(&st->w, w, m, &self);
				if (all)
					edag_word_clear(&st->r, r, m);
			} else {
				edag_word_set(&st->r, r, m, &self);
			}
		}

	/* metrics */
	struct edag_metrics *mt = &st->mt;
	uint64_t nv = mt->vertices;
	if (__builtin_expect((nv & (nv - 1)) == 0, 0) && nv) { /* D before vertex 2^k + 1 */
		unsigned k = (unsigned)__builtin_ctzll(nv);
		if (k < EDAG_DEPTH_MARKS)
			mt->D_at_pow2[k] = mt->D;
	}
	mt->vertices++;
	if (mem) {
		mt->accesses++;
		if (memv) {
			mt->W++;
			mt->W_cold += cold;
			hist_add(&mt->by_depth, self.depth - 1, in->size);
			hist_add(&mt->by_time, self.finish - cost, in->size);
		}
	}
	if (self.depth > mt->D)
		mt->D = self.depth;
	if (self.path > mt->cp_vertices)
		mt->cp_vertices = self.path;
	if (self.finish > mt->cp_cost || (self.finish == mt->cp_cost && self.comp > mt->cp_compute)) {
		mt->cp_cost = self.finish;
		mt->cp_compute = self.comp;
	}
	if (vout) {
		vout->memory = memv;
		vout->cold = memv && cold;
		vout->hit_level = hit;
		vout->cost = cost;
		vout->depth = self.depth;
		vout->path = self.path;
		vout->finish = self.finish;
	}
	return a.stop ? -ECANCELED : 0;
}

static int step_true(struct edag_state *st, const struct edag_insn *in, struct edag_vertex *vout,
		     struct edag_rec *hint)
{
	return step(st, in, vout, false, hint);
}

static int step_all(struct edag_state *st, const struct edag_insn *in, struct edag_vertex *vout,
		    struct edag_rec *hint)
{
	return step(st, in, vout, true, hint);
}

int edag_step(struct edag_state *st, const struct edag_insn *in, struct edag_vertex *vout)
{
	if (insn_check(in) < 0)
		return -EINVAL;
	return st->cfg.all_deps ? step_all(st, in, vout, NULL) : step_true(st, in, vout, NULL);
}

int edag_step_batch(struct edag_state *st, const struct edag_insn *ins, size_t n)
{
	/* software pipelining in two stages: (big tables) the index entry of the
	 * page of the access FAR steps ahead starts loading; NEAR steps ahead (that entry
	 * loaded by now) the access's word slot is looked up, its line starts
	 * loading, and the step gets the slot (a ring of NEAR hints) instead of
	 * looking it up again, unless an insertion may have moved it since */
	enum { FAR = 32, NEAR = 12 };
	struct edag_rec *hint[NEAR] = {NULL};
	uint64_t epoch[NEAR] = {0};
	/* pipelining only pays when the table outgrows the CPU's caches (a
	 * 256 KiB working set ran 10% faster without, 4 MiB 15% slower), and
	 * stage 1 only when the page entries do (4 MiB: 7% slower with it) */
	const size_t entries = st->w.nreg * EDAG_REGION_PAGES * sizeof(struct edag_pent);
	const bool near = entries + st->w.words * sizeof(struct edag_rec) > ((size_t)2 << 20);
	const bool far = entries > ((size_t)256 << 10);
	int (*fn)(struct edag_state *, const struct edag_insn *, struct edag_vertex *, struct edag_rec *) =
	    st->cfg.all_deps ? step_all : step_true;
	if (!near) { /* a table this small is in cache: no pipelining */
		for (size_t i = 0; i < n; i++) {
			if (insn_check(&ins[i]) < 0)
				return -EINVAL;
			int rc = fn(st, &ins[i], NULL, NULL);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	for (size_t i = 0; i < n && i < NEAR; i++)
		if (ins[i].mem) {
			hint[i] = edag_mtab_prefetch(&st->w, ins[i].addr);
			epoch[i] = st->w.epoch;
		}
	for (size_t i = 0; i < n; i++) {
		unsigned k = (unsigned)(i % NEAR);
		struct edag_rec *h = ins[i].mem && epoch[k] == st->w.epoch ? hint[k] : NULL;
		if (far && i + FAR < n && ins[i + FAR].mem)
			edag_mtab_prefetch_index(&st->w, ins[i + FAR].addr);
		hint[k] = NULL;
		if (i + NEAR < n && ins[i + NEAR].mem) {
			hint[k] = edag_mtab_prefetch(&st->w, ins[i + NEAR].addr);
			epoch[k] = st->w.epoch;
		}
		if (insn_check(&ins[i]) < 0)
			return -EINVAL;
		int rc = fn(st, &ins[i], NULL, h);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void edag_metrics_get(const struct edag_state *st, struct edag_metrics *out)
{
	*out = st->mt;
	out->parallelism = out->cp_vertices ? (double)out->vertices / (double)out->cp_vertices : 0;
	out->cp_memory = (out->cp_cost - out->cp_compute) / st->cfg.alpha0;
}

int edag_build_window(const struct edag_config *cfg, const struct edag_insn *ins, size_t n,
		      struct edag_metrics *out)
{
	struct edag_state *st;
	int rc = edag_new(cfg, &st);
	if (rc < 0)
		return rc;
	rc = edag_step_batch(st, ins, n);
	if (rc == 0)
		edag_metrics_get(st, out);
	edag_free(st);
	return rc;
}

/* ---------------------------------------------------------------- bounds */

void edag_bounds(const struct edag_metrics *mt, double m, double alpha, double alpha0,
		 struct edag_bounds *out)
{
	double W = (double)mt->W, D = (double)mt->D, C = (double)mt->cp_compute;
	if (!(m >= 1))
		m = 1;
	out->m = m;
	out->alpha = alpha;
	out->alpha0 = alpha0;
	out->lambda = (W - D) / m + D;
	out->lower = fmax(D, W / m) * alpha;
	out->upper = out->lambda * alpha;
	double den = out->lambda * alpha0 + C;
	out->Lambda = den > 0 ? out->lambda / den : 0;
}

void edag_sweep(const struct edag_metrics *mt, uint32_t alpha0, const double *ms, size_t nm,
		const double *alphas, size_t nalpha, struct edag_bounds *out)
{
	for (size_t i = 0; i < nm; i++)
		for (size_t j = 0; j < nalpha; j++)
			edag_bounds(mt, ms[i], alphas[j], alpha0, &out[i * nalpha + j]);
}
