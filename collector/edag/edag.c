/* The streaming eDAG engine: last-writer tables for registers and bytes,
 * the cache model, per-vertex depth and longest paths, layering, bounds. */
#include "edag/edag.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* What a vertex leaves behind for its successors. id = vertex index + 1, 0 = none. */
struct rec {
	uint64_t id;
	uint64_t finish; /* longest path, cost */
	uint64_t comp;	 /* non-memory cost on that path */
	uint32_t depth;	 /* memory depth (saturates at 2^32-1) */
	uint32_t path;	 /* longest path, vertices (saturates likewise) */
};

/* Per-byte records of one 8-byte chunk: one shared record while every
 * present byte has the same one (the common case), 8 records when not. */
struct bytes {
	struct rec u;
	struct rec *sp; /* [8] when split */
	uint8_t mask;	/* bytes that have a record */
};

struct chunk {
	uint64_t key; /* (addr >> 3) + 1; 0 = empty slot */
	struct bytes b;
};

/* Open addressing, linear probing, cap a power of two; the hash keeps runs
 * of 8 consecutive chunks (one 64-byte line of the trace) in adjacent slots. */
struct table {
	struct chunk *slot;
	size_t cap, used;
};

struct cache_level {
	uint64_t nsets, set_mask; /* mask when nsets is a power of two, else 0 */
	uint32_t assoc, line_shift, latency;
	uint64_t *tag;	 /* line + 1, 0 = invalid; nsets * assoc */
	uint64_t *stamp; /* last use */
};

struct edag_state {
	struct edag_config cfg;
	edag_edge_cb edge_cb;
	void *edge_arg;
	struct rec reg_w[EDAG_NREGS], reg_r[EDAG_NREGS];
	struct table w; /* last writer of each byte */
	struct table r; /* last reader since that write (all_deps only) */
	size_t splits;
	struct cache_level lv[EDAG_MAX_LEVELS];
	uint64_t clock;
	struct edag_metrics mt;
};

/* ---------------------------------------------------------------- names */

static const char *const class_names[EDAG_NCLASS] = {"other", "load", "store", "int", "float", "branch"};

unsigned edag_default_mem(unsigned cls)
{
	return cls == EDAG_LOAD ? EDAG_MEM_READ : cls == EDAG_STORE ? EDAG_MEM_WRITE : 0;
}

const char *edag_class_name(unsigned cls)
{
	return cls < EDAG_NCLASS ? class_names[cls] : "?";
}

int edag_class_parse(const char *name, size_t len)
{
	for (unsigned c = 0; c < EDAG_NCLASS; c++)
		if (strlen(class_names[c]) == len && memcmp(name, class_names[c], len) == 0)
			return (int)c;
	if ((len == 7 && memcmp(name, "integer", 7) == 0))
		return EDAG_INT;
	if (len == 2 && memcmp(name, "fp", 2) == 0)
		return EDAG_FLOAT;
	return -EINVAL;
}

const char *edag_arch_name(unsigned arch)
{
	switch (arch) {
	case EDAG_ARCH_X86_64:
		return "x86_64";
	case EDAG_ARCH_AARCH64:
		return "aarch64";
	case EDAG_ARCH_ARM:
		return "arm";
	case EDAG_ARCH_RISCV64:
		return "riscv64";
	default:
		return "unknown";
	}
}

int edag_arch_parse(const char *name)
{
	if (strcmp(name, "x86_64") == 0 || strcmp(name, "x86-64") == 0)
		return EDAG_ARCH_X86_64;
	if (strcmp(name, "aarch64") == 0 || strcmp(name, "arm64") == 0)
		return EDAG_ARCH_AARCH64;
	if (strcmp(name, "arm") == 0 || strcmp(name, "armv7") == 0)
		return EDAG_ARCH_ARM;
	if (strcmp(name, "riscv64") == 0 || strcmp(name, "rv64") == 0)
		return EDAG_ARCH_RISCV64;
	return -EINVAL;
}

/* ---------------------------------------------------------------- configuration */

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
		c->set_mask = pow2(c->nsets) ? c->nsets - 1 : 0;
		c->tag = calloc(c->nsets * c->assoc, sizeof(uint64_t));
		c->stamp = calloc(c->nsets * c->assoc, sizeof(uint64_t));
		if (!c->tag || !c->stamp)
			return -ENOMEM;
	}
	return 0;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slot[i].b.sp);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static void table_clear(struct edag_state *st)
{
	table_free(&st->w);
	table_free(&st->r);
	st->splits = 0;
}

static void metrics_init(struct edag_metrics *mt, uint64_t slice)
{
	memset(mt, 0, sizeof(*mt));
	mt->by_depth.width = 1;
	mt->by_time.width = slice ? slice : 1;
}

void edag_reset(struct edag_state *st)
{
	table_clear(st);
	memset(st->reg_w, 0, sizeof(st->reg_w));
	memset(st->reg_r, 0, sizeof(st->reg_r));
	for (unsigned i = 0; i < st->cfg.nlevels; i++) {
		struct cache_level *c = &st->lv[i];
		memset(c->tag, 0, c->nsets * c->assoc * sizeof(uint64_t));
		memset(c->stamp, 0, c->nsets * c->assoc * sizeof(uint64_t));
	}
	st->clock = 0;
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
	if (cache_init(st) < 0) {
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
	table_clear(st);
	for (unsigned i = 0; i < EDAG_MAX_LEVELS; i++) {
		free(st->lv[i].tag);
		free(st->lv[i].stamp);
	}
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
	size_t b = sizeof(*st) + (st->w.cap + st->r.cap) * sizeof(struct chunk) +
		   st->splits * 8 * sizeof(struct rec);
	for (unsigned i = 0; i < st->cfg.nlevels; i++)
		b += st->lv[i].nsets * st->lv[i].assoc * 2 * sizeof(uint64_t);
	return b;
}

/* ---------------------------------------------------------------- memory table */

static inline size_t hash_key(uint64_t k)
{
	uint64_t h = (k >> 3) * 0x9e3779b97f4a7c15ull;
	return (size_t)(((h ^ (h >> 32)) << 3) | (k & 7));
}

static struct chunk *slots_alloc(size_t n)
{
	size_t bytes = n * sizeof(struct chunk);
	if (bytes >= (4u << 20)) {
		/* big tables: ask for transparent huge pages (random probes, far fewer TLB misses) */
		void *p = aligned_alloc(2u << 20, (bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1));
		if (p) {
			madvise(p, bytes, MADV_HUGEPAGE);
			memset(p, 0, bytes);
			return p;
		}
	}
	return calloc(n, sizeof(struct chunk));
}

static int table_grow(struct table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	struct chunk *nt = slots_alloc(ncap);
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		struct chunk *c = &t->slot[i];
		if (!c->key)
			continue;
		size_t j = hash_key(c->key) & (ncap - 1);
		while (nt[j].key)
			j = (j + 1) & (ncap - 1);
		nt[j] = *c;
	}
	free(t->slot);
	t->slot = nt;
	t->cap = ncap;
	return 0;
}

/* The chunk of key, NULL if absent (create = false) or on ENOMEM. */
static inline struct chunk *table_get(struct table *t, uint64_t key, bool create)
{
	if (t->cap) {
		size_t j = hash_key(key) & (t->cap - 1);
		for (;;) {
			struct chunk *c = &t->slot[j];
			if (c->key == key)
				return c;
			if (!c->key)
				break;
			j = (j + 1) & (t->cap - 1);
		}
	}
	if (!create)
		return NULL;
	if ((t->used + 1) * 2 > t->cap && table_grow(t) < 0)
		return NULL;
	size_t j = hash_key(key) & (t->cap - 1);
	while (t->slot[j].key)
		j = (j + 1) & (t->cap - 1);
	t->slot[j].key = key;
	t->used++;
	return &t->slot[j];
}

/* ---------------------------------------------------------------- per-vertex accumulation */

struct acc {
	struct rec r; /* max over predecessors (finish with its comp) */
	uint64_t to;  /* this vertex's id - 1, for the edge observer */
	int stop;
};

static inline void acc_add(struct edag_state *st, struct acc *a, const struct rec *p, enum edag_dep kind)
{
	if (!p->id)
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
	if (st->edge_cb && !a->stop)
		a->stop = st->edge_cb(st->edge_arg, p->id - 1, a->to, kind);
}

static void bytes_collect(struct edag_state *st, struct acc *a, const struct bytes *b, uint8_t m,
			  enum edag_dep kind)
{
	if (!(b->mask & m))
		return;
	if (!b->sp) {
		acc_add(st, a, &b->u, kind);
		return;
	}
	for (unsigned i = 0; i < 8; i++)
		if (b->mask & m & (1u << i))
			acc_add(st, a, &b->sp[i], kind);
}

static int bytes_set(struct edag_state *st, struct bytes *b, uint8_t m, const struct rec *r)
{
	if ((b->mask & ~m) == 0) { /* every present byte is overwritten: one record again */
		if (b->sp) {
			free(b->sp);
			b->sp = NULL;
			st->splits--;
		}
		b->u = *r;
		b->mask = m;
		return 0;
	}
	if (!b->sp) {
		b->sp = malloc(8 * sizeof(struct rec));
		if (!b->sp)
			return -ENOMEM;
		st->splits++;
		for (unsigned i = 0; i < 8; i++)
			b->sp[i] = b->u;
	}
	for (unsigned i = 0; i < 8; i++)
		if (m & (1u << i))
			b->sp[i] = *r;
	b->mask |= m;
	return 0;
}

static void bytes_clear(struct edag_state *st, struct bytes *b, uint8_t m)
{
	b->mask &= (uint8_t)~m;
	if (!b->mask && b->sp) {
		free(b->sp);
		b->sp = NULL;
		st->splits--;
	}
}

/* Call fn for each 8-byte chunk of [addr, addr + size) with its byte mask. */
#define FOR_CHUNKS(addr, size, key, m)                                                                       \
	for (uint64_t key = ((addr) >> 3) + 1, end_ = (((addr) + (size)-1) >> 3) + 1, first_ = key;          \
	     key <= end_; key++)                                                                             \
		for (uint8_t m = chunk_mask(addr, size, key - 1, first_ - 1, end_ - 1), once_ = 1; once_;    \
		     once_ = 0)

static inline uint8_t chunk_mask(uint64_t addr, uint32_t size, uint64_t chunk, uint64_t first, uint64_t last)
{
	unsigned lo = chunk == first ? (unsigned)(addr & 7) : 0;
	unsigned hi = chunk == last ? (unsigned)((addr + size - 1) & 7) : 7;
	return (uint8_t)(((2u << hi) - 1) & ~((1u << lo) - 1));
}

/* ---------------------------------------------------------------- cache model */

/* Level that hits for line-granular access of one line (-1: memory). */
static int cache_line(struct edag_state *st, uint64_t addr, bool *missed)
{
	uint64_t now = ++st->clock;
	for (unsigned i = 0; i < st->cfg.nlevels; i++) {
		struct cache_level *c = &st->lv[i];
		uint64_t line = addr >> c->line_shift;
		uint64_t set = c->set_mask ? (line & c->set_mask) : (line % c->nsets);
		uint64_t *tag = &c->tag[set * c->assoc], *stamp = &c->stamp[set * c->assoc];
		uint32_t victim = 0;
		for (uint32_t w = 0; w < c->assoc; w++) {
			if (tag[w] == line + 1) {
				stamp[w] = now;
				return (int)i;
			}
			if (stamp[w] < stamp[victim])
				victim = w;
		}
		missed[i] = true;
		tag[victim] = line + 1;
		stamp[victim] = now;
	}
	return -1;
}

/* Returns the worst level hit by the access (-1 = a miss of the last level). */
static int cache_access(struct edag_state *st, uint64_t addr, uint32_t size)
{
	bool missed[EDAG_MAX_LEVELS] = {false};
	uint32_t shift = st->lv[0].line_shift;
	int worst = 0;
	for (uint64_t l = addr >> shift, e = (addr + size - 1) >> shift; l <= e; l++) {
		int h = cache_line(st, l << shift, missed);
		if (h < 0 || worst < 0)
			worst = -1;
		else if (h > worst)
			worst = h;
	}
	for (unsigned i = 0; i < st->cfg.nlevels; i++)
		st->mt.level_miss[i] += missed[i];
	if (worst >= 0)
		st->mt.level_hit[worst]++;
	return worst;
}

/* ---------------------------------------------------------------- histograms */

static void hist_add(struct edag_histogram *h, uint64_t x, uint64_t bytes)
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
	h->count[i]++;
	h->bytes[i] += bytes;
	if (i + 1 > h->nbins)
		h->nbins = (uint32_t)i + 1;
}

/* ---------------------------------------------------------------- the step */

static int insn_check(const struct edag_insn *in)
{
	if (in->cls >= EDAG_NCLASS || in->nread > EDAG_MAX_REGS || in->nwrite > EDAG_MAX_REGS)
		return -EINVAL;
	if (in->mem & ~(EDAG_MEM_READ | EDAG_MEM_WRITE))
		return -EINVAL;
	if (in->mem && (in->size == 0 || in->size > 4096 || in->addr > UINT64_MAX - in->size))
		return -EINVAL;
	return 0;
}

int edag_step(struct edag_state *st, const struct edag_insn *in, struct edag_vertex *vout)
{
	if (insn_check(in) < 0)
		return -EINVAL;
	const bool all = st->cfg.all_deps;
	const unsigned mem = in->mem;
	struct acc a = {.to = st->mt.vertices};
	/* make sure every chunk it writes exists before anything changes */
	if (mem & EDAG_MEM_WRITE || (all && mem))
		FOR_CHUNKS(in->addr, in->size, key, m)
		{
			(void)m;
			if (!table_get(&st->w, key, true) || (all && !table_get(&st->r, key, true)))
				return -ENOMEM;
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
	if (mem && st->w.cap) {
		FOR_CHUNKS(in->addr, in->size, key, m)
		{
			struct chunk *c = table_get(&st->w, key, false);
			if (c) {
				if (mem & EDAG_MEM_READ)
					bytes_collect(st, &a, &c->b, m, EDAG_DEP_RAW_MEM);
				if (all && (mem & EDAG_MEM_WRITE))
					bytes_collect(st, &a, &c->b, m, EDAG_DEP_FALSE_MEM); /* WAW */
			}
			if (all && (c = table_get(&st->r, key, false)))
				bytes_collect(st, &a, &c->b, m, EDAG_DEP_FALSE_MEM); /* WAR or RAR */
		}
	}

	/* the vertex */
	bool memv = false;
	int hit = -1;
	uint32_t cost = st->cfg.class_cost[in->cls];
	if (mem) {
		hit = st->cfg.nlevels ? cache_access(st, in->addr, in->size) : -1;
		memv = hit < 0;
		cost = memv ? st->cfg.alpha0 : st->cfg.level[hit].latency;
	}
	struct rec self = {
	    .id = st->mt.vertices + 1,
	    .depth = a.r.depth + (memv && a.r.depth < UINT32_MAX),
	    .path = a.r.path + (a.r.path < UINT32_MAX),
	    .finish = a.r.finish + cost,
	    .comp = a.r.comp + (memv ? 0 : cost),
	};

	/* successors' view */
	for (unsigned i = 0; i < in->nread && all; i++)
		if (in->rd[i])
			st->reg_r[in->rd[i]] = self;
	for (unsigned i = 0; i < in->nwrite; i++) {
		unsigned r = in->wr[i];
		if (!r)
			continue;
		st->reg_w[r] = self;
		st->reg_r[r].id = 0;
	}
	if (mem & EDAG_MEM_WRITE || (all && mem)) {
		FOR_CHUNKS(in->addr, in->size, key, m)
		{
			int rc = 0;
			if (mem & EDAG_MEM_WRITE) {
				rc = bytes_set(st, &table_get(&st->w, key, false)->b, m, &self);
				if (all)
					bytes_clear(st, &table_get(&st->r, key, false)->b, m);
			} else {
				rc = bytes_set(st, &table_get(&st->r, key, false)->b, m, &self);
			}
			if (rc < 0)
				return rc;
		}
	}

	/* metrics */
	struct edag_metrics *mt = &st->mt;
	mt->vertices++;
	if (mem) {
		mt->accesses++;
		if (memv) {
			mt->W++;
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
		vout->hit_level = hit;
		vout->cost = cost;
		vout->depth = self.depth;
		vout->path = self.path;
		vout->finish = self.finish;
	}
	return a.stop ? -ECANCELED : 0;
}

int edag_step_batch(struct edag_state *st, const struct edag_insn *ins, size_t n)
{
	enum { AHEAD = 12 };
	for (size_t i = 0; i < n; i++) {
		/* software pipelining: start loading the slot a later access will probe */
		if (i + AHEAD < n && ins[i + AHEAD].mem && st->w.cap) {
			uint64_t key = (ins[i + AHEAD].addr >> 3) + 1;
			__builtin_prefetch(&st->w.slot[hash_key(key) & (st->w.cap - 1)]);
		}
		int rc = edag_step(st, &ins[i], NULL);
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
