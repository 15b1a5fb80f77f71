/* A freestanding program (tests/data/replay/walk.c) built with a board cross
 * compiler and "snapshot" at its ELF entry as a board agent would (registers, a
 * stack, its PT_LOAD segments served as pages): the page source and the
 * TraceSnapshot of the collector's replay tests (test_trace_replay_arm,
 * test_server_snapshots). Failures are cmocka assertions. */
#ifndef TESTS_LIB_REPLAY_PROG_H
#define TESTS_LIB_REPLAY_PROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"
#include "trace_replay/trace_replay.h"

#define REPLAY_PROG_PAGE 4096u
#define REPLAY_PROG_STACK_TOP 0x7fff0000u
#define REPLAY_PROG_STACK_PAGES 4u
#define REPLAY_PROG_MAX_SEGS 8

struct replay_prog_seg {
	uint64_t vaddr, filesz, memsz, off;
};

struct replay_prog {
	unsigned arch;
	uint8_t *file;
	size_t len;
	struct replay_prog_seg seg[REPLAY_PROG_MAX_SEGS];
	size_t nseg;
	struct trace_replay_map maps[REPLAY_PROG_MAX_SEGS + 1];
	size_t nmaps;
	uint64_t regs[34];
	size_t nregs;
	unsigned fetched; /* pages served so far */
	/* the TraceSnapshot's maps (replay_prog_snapshot) */
	Prof__SnapshotMap mb[REPLAY_PROG_MAX_SEGS + 1];
	Prof__SnapshotMap *mp[REPLAY_PROG_MAX_SEGS + 1];
};

/* Build walk.c with cc and flags into dir/name (exe); false (and a SKIP line) when cc is
 * missing. */
bool replay_prog_build(const char *cc, const char *flags, const char *dir, const char *name, char *exe, size_t n);
/* The same of tests/data/replay/SRC (a freestanding program of that folder). */
bool replay_prog_build_src(const char *cc, const char *flags, const char *src, const char *dir, const char *name,
			   char *exe, size_t n);
/* Load the ELF: segments, maps (+ the stack), registers at the entry. */
void replay_prog_load(const char *path, struct replay_prog *p);
void replay_prog_free(struct replay_prog *p);
/* The page source: the ELF's segments (file bytes, zeros past them), the stack zero;
 * -EFAULT outside them. */
int replay_prog_fetch(void *arg, uint64_t addr, uint8_t *buf, uint32_t ps);
void replay_prog_snap(const struct replay_prog *p, struct trace_replay_snap *s);
/* The TraceSnapshot an agent would send for it (pointers into p). */
void replay_prog_snapshot(struct replay_prog *p, Prof__TraceSnapshot *ts, uint32_t id, uint32_t max_pages);

#endif
