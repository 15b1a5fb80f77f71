/* The collector's replay of board windows from a snapshot (collector/trace_replay/,
 * issue 36) against ground truth: a freestanding program (tests/data/replay/walk.c)
 * built with the board cross compilers for AArch64 and 32-bit ARM (Thumb-2, the
 * armhf default, and ARM state) is snapshot at its ELF entry (registers, a stack,
 * its segments served as pages) and a window (warm-up + recorded span) replayed
 * in Unicorn, its pages asked for one by one and the replay resumed (the wire's way);
 * the same span of its full trace under qemu-aarch64/qemu-arm with the
 * project's plugin (tools/qemu-plugin) must give the same instructions, addresses
 * and registers, and the same W, D and lambda with a 32K+1M cache model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "edag/edag.h"
#include "profiler.pb-c.h"
#include "trace/window_codec.h"
#include "trace_replay/snap_session.h"
#include "trace_replay/trace_replay.h"
#include "replay_prog.h"
#include "validate_snapshot.h"

#define PAGE REPLAY_PROG_PAGE
#define MAX_SEGS REPLAY_PROG_MAX_SEGS
#define prog replay_prog
#define STACK_TOP REPLAY_PROG_STACK_TOP

static char tmpdir[64];
static const char *plugin_path(void)
{
	static char p[4096];
	const char *bin = getenv("PROF_BIN_DIR");
	snprintf(p, sizeof(p), "%s/qemu-plugin/edag_tracer.so", bin ? bin : "build/host-san");
	return p;
}

static bool have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_trace_replay_arm.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Build walk.c with cc and flags into tmpdir/name; false (and why) when a tool is missing. */
static bool build(const char *cc, const char *flags, const char *name, const char *qemu, char *exe, size_t n)
{
	if (!have(qemu) || access(plugin_path(), R_OK) != 0) {
		fprintf(stderr, "SKIP: needs %s and %s\n", qemu, plugin_path());
		return false;
	}
	return replay_prog_build(cc, flags, tmpdir, name, exe, n);
}

#define load_elf replay_prog_load
static int fetch(void *arg, uint64_t addr, uint8_t *buf, uint32_t ps)
{
	return replay_prog_fetch(arg, addr, buf, ps);
}

/* A page source holding only the pages listed (as pages received from an agent). */
struct prog_pages {
	struct prog *p;
	uint64_t have[64];
	size_t n;
};

static int fetch_have(void *arg, uint64_t addr, uint8_t *buf, uint32_t ps)
{
	struct prog_pages *pp = arg;
	for (size_t i = 0; i < pp->n; i++)
		if (pp->have[i] == addr)
			return fetch(pp->p, addr, buf, ps);
	return -EAGAIN;
}

#define snap_of replay_prog_snap

/* The program's full trace under qemu-user with the plugin (native binary). */
static struct edag_insn *qemu_trace(const char *qemu, const char *exe, size_t *n)
{
	char out[128], cmd[8192];
	snprintf(out, sizeof(out), "%s/trace.bin", tmpdir);
	int len_cmd = snprintf(cmd, sizeof(cmd), "timeout 60 %s -plugin '%s',out='%s' '%s'", qemu, plugin_path(), out, exe);
	assert_true(len_cmd > 0 && (size_t)len_cmd < sizeof(cmd));
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(out, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size_t len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, len, f), len);
	fclose(f);
	unsigned arch;
	assert_int_equal(edag_bin_header_decode(buf, len, &arch), 0);
	size_t cap = len, k = 0; /* a record is at least one byte */
	struct edag_insn *ins = malloc(cap * sizeof(*ins));
	assert_non_null(ins);
	for (size_t off = EDAG_BIN_HEADER; off < len;) {
		assert_true(k < cap);
		int used = edag_bin_decode(buf + off, len - off, &ins[k]);
		assert_true(used > 0);
		off += (size_t)used;
		k++;
	}
	free(buf);
	*n = k;
	return ins;
}

static bool same_set(const uint8_t *a, uint8_t na, const uint8_t *b, uint8_t nb)
{
	if (na != nb)
		return false;
	for (uint8_t i = 0; i < na; i++) {
		bool found = false;
		for (uint8_t j = 0; j < nb; j++)
			found |= a[i] == b[j];
		if (!found)
			return false;
	}
	return true;
}

static void cache_config(struct edag_config *cfg)
{
	edag_config_default(cfg);
	cfg->nlevels = 2;
	assert_int_equal(edag_cache_level_parse("32K:8:64:4", &cfg->level[0]), 0);
	assert_int_equal(edag_cache_level_parse("1M:16:64:20", &cfg->level[1]), 0);
	cfg->m = 4;
}

/* Replay [warmup, warmup+record) and compare it with the same span of the full trace. */
static void compare(const char *cc, const char *flags, const char *name, const char *qemu)
{
	char exe[256];
	if (!build(cc, flags, name, qemu, exe, sizeof(exe))) {
		skip();
		return;
	}
	struct prog p;
	load_elf(exe, &p);
	size_t ntrace;
	struct edag_insn *full = qemu_trace(qemu, exe, &ntrace);
	const uint64_t warmup = 60000, record = 30000;
	assert_true(ntrace > warmup + record);

	struct trace_replay_snap s;
	snap_of(&p, &s);
	/* in slices of 7001 instructions, as the collector's event loop runs it: each pause stops
	 * before an instruction runs, so the span is the one qemu traced */
	struct trace_replay_config cfg = {.warmup = warmup, .record = record, .slice = 7001};
	struct trace_replay_result r;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* pages as the wire gives them: asked for one by one, the replay resumed each time */
	struct prog_pages pp = {.p = &p};
	struct trace_replay *t;
	assert_int_equal(trace_replay_open(&s, fetch_have, &pp, &cfg, &r, &t), 0);
	int rc;
	unsigned slices = 0;
	while ((rc = trace_replay_resume(t)) == 1) {
		if (r.need_page == 0) {
			slices++;
			continue;
		}
		assert_true(pp.n < 64);
		pp.have[pp.n++] = r.need_page;
	}
	assert_int_equal(rc, 0);
	assert_true(slices >= 1); /* it did pause, and resumed where it paused */
	trace_replay_close(t);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_int_equal(r.end, TRACE_REPLAY_END_LIMIT);
	assert_int_equal(r.warm_done, warmup);
	assert_int_equal(r.n, record);
	assert_int_equal(r.undecoded, 0);

	const struct edag_insn *truth = full + warmup;
	size_t pc_diff = 0, mem_diff = 0, reg_diff = 0, cls_diff = 0, accesses = 0;
	for (size_t i = 0; i < record; i++) {
		const struct edag_insn *a = &r.ins[i], *b = &truth[i];
		pc_diff += a->pc != b->pc;
		accesses += b->mem != 0;
		mem_diff += a->mem != b->mem || (b->mem && (a->addr != b->addr || a->size != b->size));
		cls_diff += a->cls != b->cls;
		bool rd = same_set(a->rd, a->nread, b->rd, b->nread), wr = same_set(a->wr, a->nwrite, b->wr, b->nwrite);
		if ((!rd || !wr) && reg_diff++ < 5)
			fprintf(stderr, "  regs differ at 0x%" PRIx64 ": replay r%u w%u, trace r%u w%u\n", a->pc, a->nread,
				a->nwrite, b->nread, b->nwrite);
	}
	struct edag_config ec;
	cache_config(&ec);
	struct edag_metrics mr, mt;
	assert_int_equal(edag_build_window(&ec, r.ins, r.n, &mr), 0);
	assert_int_equal(edag_build_window(&ec, truth, record, &mt), 0);
	struct edag_bounds br, bt;
	edag_bounds(&mr, ec.m, ec.alpha, ec.alpha0, &br);
	edag_bounds(&mt, ec.m, ec.alpha, ec.alpha0, &bt);
	fprintf(stderr,
		"%s: %" PRIu64 "+%" PRIu64 " insns replayed in %.1f ms (%u pages, asked one by one); accesses %zu; differ: pc %zu mem %zu "
		"class %zu regs %zu; W %" PRIu64 "/%" PRIu64 " D %" PRIu64 "/%" PRIu64 " lambda %.2f/%.2f (replay/trace)\n",
		name, warmup, record, ms, r.pages, accesses, pc_diff, mem_diff, cls_diff, reg_diff, mr.W, mt.W, mr.D, mt.D,
		br.lambda, bt.lambda);
	assert_int_equal(pc_diff, 0);
	assert_int_equal(mem_diff, 0);
	assert_true(accesses > record / 10);
	assert_int_equal(cls_diff, 0);
	assert_int_equal(reg_diff, 0);
	assert_int_equal(mr.W, mt.W);
	assert_int_equal(mr.D, mt.D);
	assert_true(mt.W > 0);

	/* the window as the eDAG pipeline takes it (a TraceWindow, its warm-up summary
	 * warming the cache model) against the full trace whose first warmup instructions
	 * only warmed the caches */
	Prof__TraceWindow tw;
	assert_int_equal(trace_replay_window(&s, &r, 100, 101, 7, &tw), 0);
	assert_int_equal(tw.arch, p.arch);
	assert_int_equal(tw.capture, 2);
	assert_int_equal(tw.warm_insns, warmup);
	assert_int_equal(tw.end_reason, 0);
	assert_true(tw.n_warm_lines > 0);
	struct edag_state *st;
	assert_int_equal(edag_new(&ec, &st), 0);
	assert_true(edag_window_start(st, &tw) > 0);
	struct edag_window_iter it;
	struct edag_insn in;
	size_t k = 0;
	edag_window_iter_init(&it, &tw);
	while (edag_window_next(&it, &in) == 1) {
		assert_int_equal(edag_step(st, &in, NULL), 0);
		k++;
	}
	assert_int_equal(k, record);
	edag_metrics_get(st, &mr);
	edag_reset(st);
	assert_int_equal(edag_step_batch(st, full, warmup), 0);
	edag_reset_keep_cache(st);
	assert_int_equal(edag_step_batch(st, truth, record), 0);
	edag_metrics_get(st, &mt);
	edag_free(st);
	edag_window_encode_free(&tw);
	edag_bounds(&mr, ec.m, ec.alpha, ec.alpha0, &br);
	edag_bounds(&mt, ec.m, ec.alpha, ec.alpha0, &bt);
	fprintf(stderr, "%s window (%zu warm-up lines): W %" PRIu64 "/%" PRIu64 " D %" PRIu64 "/%" PRIu64
		" lambda %.2f/%.2f (replay/warmed trace)\n", name, r.nwarm, mr.W, mt.W, mr.D, mt.D,
		br.lambda, bt.lambda);
	assert_int_equal(mr.W, mt.W);
	assert_int_equal(mr.D, mt.D);
	trace_replay_result_free(&r);
	free(full);
	free(p.file);
}

static void test_trace_replay_arm_aarch64_matches_qemu_trace(void **state)
{
	(void)state;
	compare("aarch64-linux-gnu-gcc", "", "walk.a64", "qemu-aarch64");
}

static void test_trace_replay_arm_thumb2_matches_qemu_trace(void **state)
{
	(void)state;
	compare("arm-linux-gnueabihf-gcc", "-mthumb", "walk.t32", "qemu-arm");
}

static void test_trace_replay_arm_arm_state_matches_qemu_trace(void **state)
{
	(void)state;
	compare("arm-linux-gnueabihf-gcc", "-marm", "walk.a32", "qemu-arm");
}

/* The window ends cleanly with its reason: at the program's exit svc, at a page outside the
 * snapshot's maps, when the page budget is spent, and on a bad snapshot. */
static void test_trace_replay_arm_stops_with_reason(void **state)
{
	(void)state;
	char exe[256];
	if (!build("aarch64-linux-gnu-gcc", "", "walk.stop", "qemu-aarch64", exe, sizeof(exe))) {
		skip();
		return;
	}
	struct prog p;
	load_elf(exe, &p);
	struct trace_replay_snap s;
	snap_of(&p, &s);
	struct trace_replay_result r;
	struct trace_replay_config cfg = {.warmup = 0, .record = 1u << 20};
	assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &r), 0);
	assert_int_equal(r.end, TRACE_REPLAY_END_SYSCALL); /* exit(0) after ~150k instructions */
	assert_true(r.n > 50000 && r.n < cfg.record);
	assert_non_null(strstr(r.why, "svc"));
	trace_replay_result_free(&r);

	/* without the data map (the table in .bss): its first store is outside the maps */
	struct trace_replay_map maps[MAX_SEGS + 1];
	size_t nm = 0;
	for (size_t i = 0; i < p.nmaps; i++)
		if (!(p.maps[i].prot & 4) && p.maps[i].end != STACK_TOP)
			continue;
		else
			maps[nm++] = p.maps[i];
	assert_true(nm < p.nmaps);
	s.maps = maps;
	s.nmaps = nm;
	assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &r), 0);
	assert_int_equal(r.end, TRACE_REPLAY_END_UNMAPPED);
	assert_non_null(strstr(r.why, "outside the snapshot's readable maps"));
	assert_true(r.n < 100);
	trace_replay_result_free(&r);

	/* one page of budget: the code page, then the table's is refused */
	snap_of(&p, &s);
	cfg.max_pages = 1;
	assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &r), 0);
	assert_int_equal(r.end, TRACE_REPLAY_END_PAGES);
	assert_int_equal(r.pages, 1);
	trace_replay_result_free(&r);

	/* a source that has only the pages it was given (the wire's way): the replay stops at
	 * each page it lacks (-EAGAIN), names it, and resumes where it stopped once the page is
	 * there, giving the window a source with every page gives */
	snap_of(&p, &s);
	cfg = (struct trace_replay_config){.warmup = 60000, .record = 30000};
	struct trace_replay_result whole;
	assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &whole), 0);
	assert_int_equal(whole.end, TRACE_REPLAY_END_LIMIT);
	struct prog_pages pp = {.p = &p};
	struct trace_replay *t;
	assert_int_equal(trace_replay_open(&s, fetch_have, &pp, &cfg, &r, &t), 0);
	int rc;
	while ((rc = trace_replay_resume(t)) == 1) {
		assert_true(r.need_page != 0);
		assert_true(pp.n < 64);
		pp.have[pp.n++] = r.need_page;
	}
	assert_int_equal(rc, 0);
	trace_replay_close(t);
	assert_int_equal(r.end, TRACE_REPLAY_END_LIMIT);
	assert_int_equal(pp.n, whole.pages); /* every page asked for once */
	assert_int_equal(r.warm_done, whole.warm_done);
	assert_int_equal(r.n, whole.n);
	size_t differ = 0;
	for (size_t i = 0; i < r.n; i++)
		differ += memcmp(&r.ins[i], &whole.ins[i], sizeof(r.ins[i])) != 0;
	assert_int_equal(differ, 0);
	assert_int_equal(r.nwarm, whole.nwarm);
	assert_memory_equal(r.warm_lines, whole.warm_lines, r.nwarm * sizeof(*r.warm_lines));
	trace_replay_result_free(&r);
	/* without resuming, a page the source lacks ends the window */
	pp.n = 0;
	assert_int_equal(trace_replay_run(&s, fetch_have, &pp, &cfg, &r), 0);
	assert_int_equal(r.end, TRACE_REPLAY_END_PAGES);
	assert_true(r.need_page != 0);
	trace_replay_result_free(&r);
	trace_replay_result_free(&whole);

	/* a snapshot with the wrong register count is refused before anything runs */
	s.nregs = 17;
	assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &r), -EINVAL);
	assert_non_null(strstr(r.why, "registers"));
	free(p.file);
}

/* The collector's side of the wire: a TraceSnapshot as the agent sends it, PageRequests
 * answered by Pages as the agent's page server answers them (agent/trace/snapshot_serve.c:
 * one status per address, the page's bytes for status 0), the window at the end. */
static void answer(struct prog *p, uint32_t id, const uint64_t *addr, size_t n, int refuse_from, Prof__Pages *pg,
		   uint8_t *data, uint32_t *status)
{
	prof__pages__init(pg);
	pg->snapshot_id = id;
	pg->n_addr = pg->n_status = n;
	pg->addr = (uint64_t *)addr;
	pg->status = status;
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		int rc = refuse_from >= 0 && (int)p->fetched >= refuse_from ? -EFAULT : fetch(p, addr[i], data + off, PAGE);
		status[i] = rc < 0 ? (uint32_t)-rc : 0;
		if (rc == 0)
			off += PAGE;
	}
	pg->data.data = data;
	pg->data.len = off;
}

/* tests/data/replay/SRC built by cc with flags as name, loaded, and its snapshot at the ELF
 * entry into *s (skips the test when the cross compiler is missing). */
static void build_snap(const char *cc, const char *flags, const char *src, const char *name, struct prog *p,
		       struct trace_replay_snap *s)
{
	char exe[256];
	if (!replay_prog_build_src(cc, flags, src, tmpdir, name, exe, sizeof(exe)))
		skip();
	load_elf(exe, p);
	snap_of(p, s);
}

/* The thread pointer (TraceSnapshot.tls): tests/data/replay/tls.c reads it (aarch64 tpidr_el0,
 * 32-bit ARM TPIDRURO) and loads through it; with the snapshot's tls at its writable map the
 * loads go there, with none (0) the first one reads unmapped page 0. */
static void tls_reads(const char *cc, const char *flags, const char *name)
{
	struct prog p;
	struct trace_replay_snap s;
	build_snap(cc, flags, "tls.c", name, &p, &s);
	for (size_t i = 0; i + 1 < p.nmaps && !s.tls; i++) /* the stack is the last map */
		if (p.maps[i].prot & 2)
			s.tls = p.maps[i].start;
	assert_true(s.tls != 0);
	struct trace_replay_config cfg = {.warmup = 0, .record = 3000};
	struct trace_replay_result r;
	assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &r), 0);
	size_t through = 0, loads = 0;
	for (size_t i = 0; i < r.n; i++) {
		if (!(r.ins[i].mem & EDAG_MEM_READ))
			continue;
		loads++;
		through += r.ins[i].addr >= s.tls && r.ins[i].addr < s.tls + 256;
	}
	fprintf(stderr, "%s: tls 0x%llx: %zu of %zu loads through it, end %s (%s)\n", name,
		(unsigned long long)s.tls, through, loads, trace_replay_end_name(r.end), r.why);
	assert_true(through >= 300 && through == loads); /* the loop: one load in ~6 instructions */
	trace_replay_result_free(&r);
	s.tls = 0; /* not known: the program reads 0 and loads from page 0 */
	assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &r), 0);
	assert_int_equal(r.end, TRACE_REPLAY_END_UNMAPPED);
	assert_non_null(strstr(r.why, "0x0 outside"));
	trace_replay_result_free(&r);
	free(p.file);
}

static void test_trace_replay_arm_thread_pointer(void **state)
{
	(void)state;
	tls_reads("aarch64-linux-gnu-gcc", "", "tls.a64");
	tls_reads("arm-linux-gnueabihf-gcc", "-mthumb", "tls.t32");
}

/* Floating point (tests/data/replay/vfp.c, doubles in a loop): a hard-float 32-bit ARM program
 * runs VFP instructions, which Unicorn refuses until CPACR and FPEXC enable them; the replay
 * must run through them to its limit, not end at the first one as an invalid instruction. */
static void vfp_runs(const char *cc, const char *flags, const char *name)
{
	struct prog p;
	struct trace_replay_snap s;
	build_snap(cc, flags, "vfp.c", name, &p, &s);
	struct trace_replay_config cfg = {.warmup = 1000, .record = 2000};
	struct trace_replay_result r;
	assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &r), 0);
	fprintf(stderr, "%s: %zu instructions after %llu warm-up, end %s (%s)\n", name, r.n,
		(unsigned long long)r.warm_done, trace_replay_end_name(r.end), r.why);
	assert_int_equal(r.end, TRACE_REPLAY_END_LIMIT);
	assert_int_equal(r.n, 2000);
	trace_replay_result_free(&r);
	free(p.file);
}

static void test_trace_replay_arm_vfp(void **state)
{
	(void)state;
	vfp_runs("arm-linux-gnueabihf-gcc", "", "vfp.a32");
	vfp_runs("arm-linux-gnueabihf-gcc", "-mthumb", "vfp.t32");
	vfp_runs("aarch64-linux-gnu-gcc", "", "vfp.a64");
}

static void test_trace_replay_arm_session_over_the_wire(void **state)
{
	(void)state;
	char exe[256];
	if (!build("aarch64-linux-gnu-gcc", "", "walk.wire", "qemu-aarch64", exe, sizeof(exe))) {
		skip();
		return;
	}
	struct prog p;
	load_elf(exe, &p);
	Prof__TraceSnapshot ts;
	replay_prog_snapshot(&p, &ts, 5, 64);
	ts.pid = 42;
	ts.tid = 43;
	ts.window_index = 9;
	char why[256];
	assert_int_equal(validate_trace_snapshot(&ts, why, sizeof(why)), 0);

	struct trace_replay_config cfg = {.warmup = 60000, .record = 30000};
	struct snap_session *ss;
	assert_int_equal(snap_session_new(&ts, &cfg, &ss, why, sizeof(why)), 0);
	assert_int_equal(snap_session_id(ss), 5);
	uint64_t addr[SNAP_SESSION_PREFETCH];
	size_t n;
	int rc;
	unsigned requests = 0, pages = 0;
	static uint8_t data[SNAP_SESSION_PREFETCH * PAGE];
	uint32_t status[SNAP_SESSION_PREFETCH];
	while ((rc = snap_session_step(ss, addr, &n)) == 1) {
		assert_true(n >= 1 && n <= SNAP_SESSION_PREFETCH);
		assert_true(++requests < 64);
		Prof__PageRequest req;
		prof__page_request__init(&req);
		req.snapshot_id = 5;
		req.n_addr = n;
		req.addr = addr;
		assert_int_equal(validate_page_request(&req, PAGE, why, sizeof(why)), 0);
		Prof__Pages pg;
		answer(&p, 5, addr, n, -1, &pg, data, status);
		assert_int_equal(validate_pages(&pg, PAGE, why, sizeof(why)), 0);
		pages += (unsigned)n;
		assert_int_equal(snap_session_pages(ss, &pg, why, sizeof(why)), 0);
		pg.snapshot_id = 6; /* another snapshot's answer is refused */
		assert_int_equal(snap_session_pages(ss, &pg, why, sizeof(why)), -EINVAL);
	}
	assert_int_equal(rc, 0);
	const struct trace_replay_result *res = snap_session_result(ss);
	struct trace_replay_snap s;
	snap_of(&p, &s);
	struct trace_replay_result whole;
	assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &whole), 0);
	assert_int_equal(res->end, TRACE_REPLAY_END_LIMIT);
	assert_int_equal(res->n, whole.n);
	size_t differ = 0;
	for (size_t i = 0; i < res->n; i++)
		differ += memcmp(&res->ins[i], &whole.ins[i], sizeof(res->ins[i])) != 0;
	assert_int_equal(differ, 0);
	assert_true(requests < whole.pages); /* the next pages of a map come with the missing one */
	fprintf(stderr, "wire: %u pages used, %u asked in %u requests\n", whole.pages, pages, requests);
	Prof__TraceWindow tw;
	assert_int_equal(snap_session_window(ss, &tw), 0);
	assert_int_equal(tw.pid, 42);
	assert_int_equal(tw.tid, 43);
	assert_int_equal(tw.window_index, 9);
	assert_int_equal(tw.n_pc_delta, 30000);
	edag_window_encode_free(&tw);
	snap_session_free(ss);
	trace_replay_result_free(&whole);

	/* an agent that cannot serve the pages after the first two (EFAULT): the window ends there */
	p.fetched = 0;
	assert_int_equal(snap_session_new(&ts, &cfg, &ss, why, sizeof(why)), 0);
	while ((rc = snap_session_step(ss, addr, &n)) == 1) {
		Prof__Pages pg;
		answer(&p, 5, addr, n, 2, &pg, data, status);
		assert_int_equal(snap_session_pages(ss, &pg, why, sizeof(why)), 0);
	}
	assert_int_equal(rc, 0);
	res = snap_session_result(ss);
	assert_int_equal(res->end, TRACE_REPLAY_END_PAGES);
	assert_non_null(strstr(res->why, "Bad address"));
	snap_session_free(ss);
	free(p.file);
}

/* A window over more pages than Unicorn has sections for (issue 36): tests/data/replay/pages.c
 * loads from every other page of the first 64 of a 4 MiB table, then from each of its 1024
 * pages. Mapped a region a page, the replay aborted the collector (qemu/exec.c phys_section_add,
 * 1024 sections); as runs of adjacent pages the window runs to the program's exit with all of
 * them. With the regions limited to 16 (cfg.max_regions), the 17th separate page ends the window
 * with its reason and the process goes on. Built with -DSEPARATE over 8 MiB it loads from 1,024
 * separate pages (every other one): with the emulator's own limit (960) the window ends with
 * 'pages' at the 961st run, the process goes on (the crash path itself; 32-bit ARM only, the
 * armhf boards': AArch64's Unicorn has the same 1 KiB target page and limit, and 960 runs cost
 * ~7 s of replay under ASan each, every page stopping it with that many regions mapped). Each
 * architecture is its own test: a missing cross compiler skips only its own. */
static void many_pages(const char *cc, const char *flags, const char *name)
{
	struct prog p;
	struct trace_replay_snap s;
	build_snap(cc, flags, "pages.c", name, &p, &s);
	for (int lim = 0; lim < 2; lim++) {
		struct trace_replay_config cfg = {.warmup = 0, .record = 1u << 20, .max_pages = 4096,
						  .max_regions = lim ? 16 : 0};
		struct trace_replay_result r;
		assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &r), 0);
		fprintf(stderr, "%s, regions %s: %u pages, %zu instructions, end %s (%s)\n", name, lim ? "16" : "960",
			r.pages, r.n, trace_replay_end_name(r.end), r.why);
		if (lim) {
			assert_int_equal(r.end, TRACE_REPLAY_END_PAGES);
			assert_non_null(strstr(r.why, "the emulator's map is full (16 separate runs"));
			assert_true(r.pages >= 16 && r.pages <= 18); /* the code's, the stack's, 16 - those */
		} else {
			assert_int_equal(r.end, TRACE_REPLAY_END_SYSCALL);
			assert_true(r.pages >= 1025); /* the table's pages, the code's */
		}
		trace_replay_result_free(&r);
	}
	free(p.file);
}

static void separate_pages(const char *cc, const char *flags, const char *name, unsigned span_kib)
{
	char fl[128];
	snprintf(fl, sizeof(fl), "%s -DSPAN_KIB=%uu -DSEPARATE", flags, span_kib);
	struct prog p;
	struct trace_replay_snap s;
	build_snap(cc, fl, "pages.c", name, &p, &s);
	struct trace_replay_config cfg = {.warmup = 0, .record = 1u << 20}; /* 16,384 pages at most */
	struct trace_replay_result r;
	assert_int_equal(trace_replay_run(&s, fetch, &p, &cfg, &r), 0);
	fprintf(stderr, "%s, %u separate pages: %u pages, %zu instructions, end %s (%s)\n", name, span_kib / 8,
		r.pages, r.n, trace_replay_end_name(r.end), r.why);
	assert_int_equal(r.end, TRACE_REPLAY_END_PAGES);
	assert_non_null(strstr(r.why, "the emulator's map is full"));
	/* the limit's worth of runs taken, fewer than the program's pages */
	assert_true(r.pages >= 900 && r.pages < span_kib / 8);
	trace_replay_result_free(&r);
	free(p.file);
}

static void test_trace_replay_arm_many_pages_thumb2(void **state)
{
	(void)state;
	many_pages("arm-linux-gnueabihf-gcc", "-mthumb", "pages.t32");
}

static void test_trace_replay_arm_many_pages_aarch64(void **state)
{
	(void)state;
	many_pages("aarch64-linux-gnu-gcc", "", "pages.a64");
}

static void test_trace_replay_arm_separate_pages_thumb2(void **state)
{
	(void)state;
	separate_pages("arm-linux-gnueabihf-gcc", "-mthumb", "sep.t32", 8192); /* 1,024 pages, limit 960 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_replay_arm_aarch64_matches_qemu_trace),
		cmocka_unit_test(test_trace_replay_arm_thumb2_matches_qemu_trace),
		cmocka_unit_test(test_trace_replay_arm_arm_state_matches_qemu_trace),
		cmocka_unit_test(test_trace_replay_arm_stops_with_reason),
		cmocka_unit_test(test_trace_replay_arm_thread_pointer),
		cmocka_unit_test(test_trace_replay_arm_vfp),
		cmocka_unit_test(test_trace_replay_arm_session_over_the_wire),
		cmocka_unit_test(test_trace_replay_arm_many_pages_thumb2),
		cmocka_unit_test(test_trace_replay_arm_many_pages_aarch64),
		cmocka_unit_test(test_trace_replay_arm_separate_pages_thumb2),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
