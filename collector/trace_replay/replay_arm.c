/* Replay of an ARM/AArch64 window from a snapshot in Unicorn 2 (trace_replay.h). */
#include "trace_replay.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicorn/unicorn.h>

#include "page_runs.h"
#include "trace/warm.h"

#define MAX_PAGES_WIRE 16384u /* proto/snapshot.proto: the agent's page budget at most */
#define MAX_RECORD (1u << 24)
#define MERGE_SPAN 64 /* accesses of one instruction within this become one range (tools/qemu-plugin on_mem) */
#define EXCP_SWI 2    /* QEMU target/arm: the exception an svc raises */

/* Decoded instructions by pc (direct-mapped, checked against the bytes: code that changes
 * decodes again): a window's loops decode once. */
#define DCACHE 4096
struct dentry {
	uint64_t pc;
	uint8_t bytes[4], size, thumb, ok;
	struct edag_insn in;
};

struct run {
	struct dentry *dcache;
	const struct trace_replay_snap *snap;
	trace_replay_fetch_fn fetch;
	void *arg;
	const struct trace_replay_config *cfg;
	struct trace_replay_result *out;
	struct trace_replay_dec *dec;
	uc_engine *uc;
	uint8_t *page;
	uint32_t max_pages;
	uint64_t count; /* instructions started */
	bool have_cur, stopping;
	struct edag_insn cur;
	bool ended; /* out->end and why set by a hook */
	struct trace_warm warm;
	bool warm_failed;
	bool waiting;	/* stopped for a page the source does not have yet (-EAGAIN) */
	bool fetch_miss; /* ... on an instruction fetch: the instruction before it completed */
	uint64_t start; /* where the emulation (re)starts (arm: | 1 in Thumb state) */
	bool done;
	bool yielding;	/* paused at cfg->slice instructions of this resume (yield_pc not run yet) */
	uint64_t ran;	/* instructions started in this resume */
	uint64_t yield_pc;
	struct page_runs runs; /* the pages mapped, as runs (Unicorn's region limit) */
};

const char *trace_replay_end_name(enum trace_replay_end e)
{
	switch (e) {
	case TRACE_REPLAY_END_LIMIT: return "limit";
	case TRACE_REPLAY_END_SYSCALL: return "syscall";
	case TRACE_REPLAY_END_UNMAPPED: return "unmapped";
	case TRACE_REPLAY_END_PAGES: return "pages";
	case TRACE_REPLAY_END_FAULT: return "fault";
	}
	return "?";
}

static void end(struct run *r, enum trace_replay_end e, const char *fmt, uint64_t v)
{
	if (r->ended)
		return;
	r->ended = true;
	r->out->end = e;
	snprintf(r->out->why, sizeof(r->out->why), fmt, v);
}

/* The instruction before this one is complete: keep it if it is in the recorded span. */
static void finish_cur(struct run *r)
{
	if (!r->have_cur)
		return;
	r->have_cur = false;
	if (r->count <= r->cfg->warmup)
		return;
	struct edag_insn *in = &r->cur;
	if (in->mem && in->cls != EDAG_LOAD && in->cls != EDAG_STORE && in->cls != EDAG_BRANCH)
		in->cls = (in->mem & EDAG_MEM_WRITE) ? EDAG_STORE : EDAG_LOAD;
	r->out->ins[r->out->n++] = *in;
}

static void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
	struct run *r = user;
	if (r->stopping)
		return;
	finish_cur(r);
	if (r->count >= r->cfg->warmup + r->cfg->record) {
		r->stopping = true;
		end(r, TRACE_REPLAY_END_LIMIT, "%" PRIu64 " instructions", r->count);
		uc_emu_stop(uc);
		return;
	}
	if (r->cfg->slice && r->ran >= r->cfg->slice) { /* this resume's share: stop before addr runs */
		uint32_t cpsr = 0;
		if (r->snap->arch == EDAG_ARCH_ARM)
			uc_reg_read(uc, UC_ARM_REG_CPSR, &cpsr);
		r->yield_pc = addr | ((cpsr >> 5) & 1);
		r->yielding = r->stopping = true;
		uc_emu_stop(uc);
		return;
	}
	r->ran++;
	r->count++;
	if (r->count <= r->cfg->warmup) {
		r->out->warm_done = r->count;
		return;
	}
	uint8_t code[16];
	int thumb = 0;
	if (size == 0 || size > sizeof(code) || uc_mem_read(uc, addr, code, size) != UC_ERR_OK)
		size = 0;
	if (r->snap->arch == EDAG_ARCH_ARM) {
		uint32_t cpsr = 0;
		uc_reg_read(uc, UC_ARM_REG_CPSR, &cpsr);
		thumb = (cpsr >> 5) & 1;
	}
	struct dentry *de = &r->dcache[(addr >> 1) & (DCACHE - 1)];
	if (size && size <= 4 && de->ok && de->pc == addr && de->size == size && de->thumb == thumb &&
	    memcmp(de->bytes, code, size) == 0) {
		r->cur = de->in;
	} else if (size && trace_replay_decode(r->dec, addr, code, size, thumb, &r->cur)) {
		if (size <= 4) {
			*de = (struct dentry){.pc = addr, .size = (uint8_t)size, .thumb = (uint8_t)thumb, .ok = 1,
					      .in = r->cur};
			memcpy(de->bytes, code, size);
		}
	} else {
		memset(&r->cur, 0, sizeof(r->cur));
		r->cur.pc = addr;
		r->out->undecoded++;
	}
	r->have_cur = true;
}

static void on_mem(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
	(void)uc, (void)value;
	struct run *r = user;
	uint8_t rw = type == UC_MEM_WRITE ? EDAG_MEM_WRITE : EDAG_MEM_READ;
	if (r->stopping || size <= 0)
		return;
	if (r->count <= r->cfg->warmup) { /* the warm-up: only its lines, for the cache model */
		if (!r->warm_failed && trace_warm_add(&r->warm, addr, (uint32_t)size,
						      rw == EDAG_MEM_WRITE ? TRACE_WARM_WRITE : TRACE_WARM_READ) < 0)
			r->warm_failed = true;
		return;
	}
	if (!r->have_cur)
		return;
	struct edag_insn *in = &r->cur;
	if (!in->mem) {
		in->addr = addr;
		in->size = (uint32_t)size;
		in->mem = rw;
		return;
	}
	uint64_t lo = addr < in->addr ? addr : in->addr;
	uint64_t hi = addr + (uint64_t)size > in->addr + in->size ? addr + (uint64_t)size : in->addr + in->size;
	bool touch = addr <= in->addr + in->size && in->addr <= addr + (uint64_t)size;
	if ((touch || hi - lo <= MERGE_SPAN) && hi - lo <= 4096) {
		in->addr = lo;
		in->size = (uint32_t)(hi - lo);
	}
	in->mem |= rw;
}

static const struct trace_replay_map *map_of(const struct trace_replay_snap *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < s->maps[mid].start)
			hi = mid;
		else if (addr >= s->maps[mid].end)
			lo = mid + 1;
		else
			return &s->maps[mid];
	}
	return NULL;
}

/* First touch of a page: fetch it from the page source and map it with the snapshot's protection. */
static bool on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
	(void)size, (void)value;
	struct run *r = user;
	uint32_t ps = r->snap->page_size;
	uint64_t page = addr & ~(uint64_t)(ps - 1);
	const struct trace_replay_map *m = map_of(r->snap, addr);
	const char *what = type == UC_MEM_FETCH_UNMAPPED ? "fetch" : type == UC_MEM_WRITE_UNMAPPED ? "write" : "read";
	if (!m || !(m->prot & 1)) {
		char fmt[96];
		snprintf(fmt, sizeof(fmt), "%s of 0x%%" PRIx64 " outside the snapshot's readable maps", what);
		end(r, TRACE_REPLAY_END_UNMAPPED, fmt, addr);
		return false;
	}
	if (r->out->pages >= r->max_pages) {
		end(r, TRACE_REPLAY_END_PAGES, "page budget (%" PRIu64 " pages) spent", r->max_pages);
		return false;
	}
	int rc = r->fetch(r->arg, page, r->page, ps);
	if (rc < 0) {
		if (rc == -EAGAIN) { /* the caller fetches it and resumes (trace_replay_resume) */
			r->out->need_page = page;
			r->waiting = true;
			r->fetch_miss = type == UC_MEM_FETCH_UNMAPPED;
			return false;
		}
		char fmt[96];
		snprintf(fmt, sizeof(fmt), "page 0x%%" PRIx64 " not served: %s", strerror(-rc));
		end(r, TRACE_REPLAY_END_PAGES, fmt, page);
		return false;
	}
	uint32_t prot = UC_PROT_READ | (m->prot & 2 ? UC_PROT_WRITE : 0) | (m->prot & 4 ? UC_PROT_EXEC : 0);
	rc = page_runs_add(&r->runs, uc, r->snap, (size_t)(m - r->snap->maps), page, r->page, prot);
	if (rc == -ENOSPC) {
		end(r, TRACE_REPLAY_END_PAGES, "the emulator's map is full (%" PRIu64 " separate runs of pages)",
		    (uint64_t)r->runs.regions);
		return false;
	}
	if (rc < 0) {
		end(r, TRACE_REPLAY_END_FAULT, "page 0x%" PRIx64 " could not be mapped in the emulator", page);
		return false;
	}
	r->out->pages++;
	return true;
}

static void on_intr(uc_engine *uc, uint32_t intno, void *user)
{
	struct run *r = user;
	uint64_t pc = r->have_cur ? r->cur.pc : 0;
	if (intno == EXCP_SWI) {
		r->have_cur = false; /* as the agent's replay windows: they end before the svc (agent/trace/window.h) */
		end(r, TRACE_REPLAY_END_SYSCALL, "svc at 0x%" PRIx64, pc);
	} else {
		r->have_cur = false;
		end(r, TRACE_REPLAY_END_FAULT, "exception at 0x%" PRIx64, pc);
	}
	r->stopping = true;
	uc_emu_stop(uc);
}

static int set_regs(struct run *r, uint64_t *start)
{
	const struct trace_replay_snap *s = r->snap;
	uc_engine *uc = r->uc;
	if (s->arch == EDAG_ARCH_AARCH64) {
		for (int i = 0; i < 29; i++)
			uc_reg_write(uc, UC_ARM64_REG_X0 + i, &s->regs[i]);
		uc_reg_write(uc, UC_ARM64_REG_X29, &s->regs[29]);
		uc_reg_write(uc, UC_ARM64_REG_X30, &s->regs[30]);
		uc_reg_write(uc, UC_ARM64_REG_SP, &s->regs[31]);
		uint64_t nzcv = s->regs[33] & 0xf0000000u;
		uc_reg_write(uc, UC_ARM64_REG_NZCV, &nzcv);
		uc_arm64_cp_reg tp = {.crn = 13, .crm = 0, .op0 = 3, .op1 = 3, .op2 = 2, .val = s->tls}; /* tpidr_el0 */
		if (uc_reg_write(uc, UC_ARM64_REG_CP_REG, &tp) != UC_ERR_OK)
			return -EIO;
		*start = s->regs[32];
		return 0;
	}
	for (int i = 0; i < 13; i++) {
		uint32_t v = (uint32_t)s->regs[i];
		uc_reg_write(uc, UC_ARM_REG_R0 + i, &v);
	}
	uint32_t sp = (uint32_t)s->regs[13], lr = (uint32_t)s->regs[14], apsr = (uint32_t)s->regs[16] & 0xf80f0000u;
	uc_reg_write(uc, UC_ARM_REG_SP, &sp);
	uc_reg_write(uc, UC_ARM_REG_LR, &lr);
	uc_reg_write(uc, UC_ARM_REG_APSR, &apsr);
	uc_arm_cp_reg tp = {.cp = 15, .crn = 13, .crm = 0, .opc1 = 0, .opc2 = 3, .val = (uint32_t)s->tls}; /* TPIDRURO */
	if (uc_reg_write(uc, UC_ARM_REG_CP_REG, &tp) != UC_ERR_OK)
		return -EIO;
	/* VFP/Advanced SIMD on, as Linux runs a user thread (arch/arm/vfp/vfpmodule.c: CPACR cp10/cp11
	 * full access at boot, FPEXC.EN set for the thread that uses it): Unicorn starts with both
	 * off, and a hard-float program's first VFP instruction ended the replay as an invalid one
	 * (busy in the armhf guest, ~555000 instructions into the default window). The snapshot
	 * carries no VFP registers: they start at 0 here. */
	uc_arm_cp_reg cpacr = {.cp = 15, .crn = 1, .crm = 0, .opc1 = 0, .opc2 = 2, .val = 0xf00000};
	uint32_t fpexc = 0x40000000u;
	if (uc_reg_write(uc, UC_ARM_REG_CP_REG, &cpacr) != UC_ERR_OK || uc_reg_write(uc, UC_ARM_REG_FPEXC, &fpexc) != UC_ERR_OK)
		return -EIO;
	*start = ((uint32_t)s->regs[15] & ~1u) | ((s->regs[16] >> 5) & 1); /* Thumb from CPSR.T */
	return 0;
}

static int check(const struct trace_replay_snap *s, const struct trace_replay_config *cfg, char *why, size_t n)
{
	size_t want = s->arch == EDAG_ARCH_AARCH64 ? 34 : s->arch == EDAG_ARCH_ARM ? 17 : 0;
	if (!want)
		return snprintf(why, n, "arch %u is not replayed here (aarch64, arm)", s->arch), -EINVAL;
	if (s->nregs != want)
		return snprintf(why, n, "%zu registers, %zu expected", s->nregs, want), -EINVAL;
	if (s->page_size < 4096 || s->page_size > 65536 || (s->page_size & (s->page_size - 1)))
		return snprintf(why, n, "page size %u", s->page_size), -EINVAL;
	for (size_t i = 0; i < s->nmaps; i++)
		if (s->maps[i].start >= s->maps[i].end || (s->maps[i].start | s->maps[i].end) % s->page_size ||
		    (i && s->maps[i].start < s->maps[i - 1].end))
			return snprintf(why, n, "map %zu is not page-aligned, sorted and disjoint", i), -EINVAL;
	if (cfg->record < 1 || cfg->record > MAX_RECORD)
		return snprintf(why, n, "record %" PRIu64 " not in 1..%u", cfg->record, MAX_RECORD), -EINVAL;
	return 0;
}

struct trace_replay {
	struct run r;
};

static void close_run(struct run *r)
{
	trace_warm_free(&r->warm);
	if (r->uc)
		uc_close(r->uc);
	r->uc = NULL;
	page_runs_free(&r->runs);
	trace_replay_dec_free(r->dec);
	r->dec = NULL;
	free(r->page);
	r->page = NULL;
	free(r->dcache);
	r->dcache = NULL;
}

int trace_replay_open(const struct trace_replay_snap *snap, trace_replay_fetch_fn fetch, void *arg,
		      const struct trace_replay_config *cfg, struct trace_replay_result *out, struct trace_replay **tr)
{
	*tr = NULL;
	memset(out, 0, sizeof(*out));
	int rc = check(snap, cfg, out->why, sizeof(out->why));
	if (rc < 0)
		return rc;
	struct trace_replay *t = calloc(1, sizeof(*t));
	if (!t)
		return snprintf(out->why, sizeof(out->why), "out of memory"), -ENOMEM;
	struct run *r = &t->r;
	*r = (struct run){.snap = snap, .fetch = fetch, .arg = arg, .cfg = cfg, .out = out};
	r->max_pages = cfg->max_pages && cfg->max_pages < MAX_PAGES_WIRE ? cfg->max_pages : MAX_PAGES_WIRE;
	out->ins = malloc(cfg->record * sizeof(*out->ins));
	r->page = malloc(snap->page_size);
	r->dcache = calloc(DCACHE, sizeof(*r->dcache));
	if (!out->ins || !r->page || !r->dcache) {
		rc = -ENOMEM;
		snprintf(out->why, sizeof(out->why), "out of memory");
		goto fail;
	}
	rc = trace_warm_init(&r->warm, TRACE_REPLAY_WARM_LINE, cfg->warm_max_lines ? cfg->warm_max_lines : 65536);
	if (rc < 0) {
		snprintf(out->why, sizeof(out->why), "out of memory");
		goto fail;
	}
	rc = trace_replay_dec_new(snap->arch, &r->dec);
	if (rc < 0) {
		snprintf(out->why, sizeof(out->why), "Capstone: %s", strerror(-rc));
		goto fail;
	}
	bool a64 = snap->arch == EDAG_ARCH_AARCH64;
	uc_err e = uc_open(a64 ? UC_ARCH_ARM64 : UC_ARCH_ARM,
			   a64 ? UC_MODE_ARM : ((snap->regs[16] >> 5) & 1) ? UC_MODE_THUMB : UC_MODE_ARM, &r->uc);
	if (e != UC_ERR_OK) {
		rc = -ELIBACC;
		snprintf(out->why, sizeof(out->why), "Unicorn: %s", uc_strerror(e));
		goto fail;
	}
	size_t max_regions = page_runs_limit(r->uc);
	if (cfg->max_regions && cfg->max_regions < max_regions)
		max_regions = cfg->max_regions;
	if (page_runs_init(&r->runs, snap, max_regions) < 0) {
		rc = -ENOMEM;
		snprintf(out->why, sizeof(out->why), "out of memory");
		goto fail;
	}
	uc_hook h;
	if (uc_hook_add(r->uc, &h, UC_HOOK_CODE, (void *)on_code, r, 1, 0) != UC_ERR_OK ||
	    uc_hook_add(r->uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, (void *)on_mem, r, 1, 0) != UC_ERR_OK ||
	    uc_hook_add(r->uc, &h, UC_HOOK_MEM_UNMAPPED, (void *)on_unmapped, r, 1, 0) != UC_ERR_OK ||
	    uc_hook_add(r->uc, &h, UC_HOOK_INTR, (void *)on_intr, r, 1, 0) != UC_ERR_OK ||
	    set_regs(r, &r->start) < 0) {
		rc = -ELIBACC;
		snprintf(out->why, sizeof(out->why), "Unicorn: hooks or registers refused");
		goto fail;
	}
	*tr = t;
	return 0;
fail:
	close_run(r);
	free(t);
	free(out->ins);
	out->ins = NULL;
	return rc;
}

int trace_replay_resume(struct trace_replay *t)
{
	struct run *r = &t->r;
	struct trace_replay_result *out = r->out;
	if (r->done)
		return 0;
	r->waiting = false;
	r->yielding = r->stopping = false;
	r->ran = 0;
	out->need_page = 0;
	uc_err e = uc_emu_start(r->uc, r->start, 0, 0, 0);
	if (r->yielding && !r->ended) {
		r->start = r->yield_pc;
		snprintf(out->why, sizeof(out->why), "paused after %" PRIu64 " instructions", r->ran);
		return 1;
	}
	if (r->waiting && !r->ended) {
		if (r->fetch_miss) {
			finish_cur(r); /* the instruction before the new page completed */
		} else if (r->have_cur || r->count > 0) {
			/* the access faulted inside an instruction: it runs again from its start */
			r->have_cur = false;
			r->count--;
			if (r->count < r->cfg->warmup)
				out->warm_done = r->count;
		}
		uint64_t pc = 0;
		if (r->snap->arch == EDAG_ARCH_AARCH64) {
			uc_reg_read(r->uc, UC_ARM64_REG_PC, &pc);
		} else {
			uint32_t pc32 = 0, cpsr = 0;
			uc_reg_read(r->uc, UC_ARM_REG_PC, &pc32);
			uc_reg_read(r->uc, UC_ARM_REG_CPSR, &cpsr);
			pc = pc32 | ((cpsr >> 5) & 1);
		}
		r->start = pc;
		snprintf(out->why, sizeof(out->why), "waiting for page 0x%" PRIx64, out->need_page);
		return 1;
	}
	if (!r->ended) {
		r->have_cur = false; /* the instruction that faulted did not complete */
		r->ended = true;
		out->end = e == UC_ERR_OK ? TRACE_REPLAY_END_LIMIT : TRACE_REPLAY_END_FAULT;
		snprintf(out->why, sizeof(out->why), "%s after %" PRIu64 " instructions",
			 e == UC_ERR_OK ? "emulation ended" : uc_strerror(e), r->count);
	}
	r->done = true;
	if (!r->warm_failed && trace_warm_lines(&r->warm, &out->warm_lines, &out->nwarm) < 0)
		r->warm_failed = true;
	if (r->warm_failed) { /* no summary: the window's cache model starts cold (the collector flags cold misses) */
		free(out->warm_lines);
		out->warm_lines = NULL;
		out->nwarm = 0;
	}
	return 0;
}

void trace_replay_close(struct trace_replay *t)
{
	if (!t)
		return;
	close_run(&t->r);
	free(t);
}

int trace_replay_run(const struct trace_replay_snap *snap, trace_replay_fetch_fn fetch, void *arg,
		     const struct trace_replay_config *cfg, struct trace_replay_result *out)
{
	struct trace_replay *t;
	int rc = trace_replay_open(snap, fetch, arg, cfg, out, &t);
	if (rc < 0)
		return rc;
	while ((rc = trace_replay_resume(t)) == 1 && out->need_page == 0)
		; /* paused for cfg->slice: every page is here, run on */
	if (rc == 1) { /* -EAGAIN from a source the caller does not resume: the window ends there */
		t->r.ended = t->r.done = true;
		out->end = TRACE_REPLAY_END_PAGES;
		snprintf(out->why, sizeof(out->why), "page 0x%" PRIx64 " not here yet", out->need_page);
		rc = 0;
	}
	trace_replay_close(t);
	return rc;
}

void trace_replay_result_free(struct trace_replay_result *r)
{
	free(r->warm_lines);
	r->warm_lines = NULL;
	r->nwarm = 0;
	free(r->ins);
	r->ins = NULL;
	r->n = 0;
}
