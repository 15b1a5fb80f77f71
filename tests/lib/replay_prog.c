/* A cross-built program snapshot at its entry (replay_prog.h). */
#include "replay_prog.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"

#define PAGE REPLAY_PROG_PAGE
#define STACK_TOP REPLAY_PROG_STACK_TOP
#define STACK_PAGES REPLAY_PROG_STACK_PAGES

static bool have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

bool replay_prog_build(const char *cc, const char *flags, const char *dir, const char *name, char *exe, size_t n)
{
	return replay_prog_build_src(cc, flags, "walk.c", dir, name, exe, n);
}

bool replay_prog_build_src(const char *cc, const char *flags, const char *file, const char *dir, const char *name,
			   char *exe, size_t n)
{
	if (!have(cc)) {
		fprintf(stderr, "SKIP: needs %s (scripts/deps.sh installs the board cross compilers)\n", cc);
		return false;
	}
	const char *src = getenv("PROF_SRC_DIR");
	int len_exe = snprintf(exe, n, "%s/%s", dir, name);
	assert_true(len_exe > 0 && (size_t)len_exe < n);
	char cmd[8192];
	int len_cmd = snprintf(cmd, sizeof(cmd),
			       "%s %s -O2 -static -nostdlib -ffreestanding -fno-stack-protector -fno-tree-vectorize "
			       "-o '%s' '%s/tests/data/replay/%s'",
			       cc, flags, exe, src ? src : ".", file);
	assert_true(len_cmd > 0 && (size_t)len_cmd < sizeof(cmd));
	assert_int_equal(system(cmd), 0);
	return true;
}

/* One PT_LOAD segment of either ELF class: its file part and its page-aligned map. */
static void add_load(struct replay_prog *p, uint64_t vaddr, uint64_t filesz, uint64_t memsz, uint64_t off,
		     uint32_t flags)
{
	if (p->nseg >= REPLAY_PROG_MAX_SEGS)
		return;
	p->seg[p->nseg++] = (struct replay_prog_seg){vaddr, filesz, memsz, off};
	p->maps[p->nmaps++] = (struct trace_replay_map){
	    vaddr & ~(uint64_t)(PAGE - 1), (vaddr + memsz + PAGE - 1) & ~(uint64_t)(PAGE - 1),
	    (flags & PF_R ? 1u : 0) | (flags & PF_W ? 2u : 0) | (flags & PF_X ? 4u : 0)};
}

void replay_prog_load(const char *path, struct replay_prog *p)
{
	memset(p, 0, sizeof(*p));
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	p->len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	p->file = malloc(p->len);
	assert_non_null(p->file);
	assert_int_equal(fread(p->file, 1, p->len, f), p->len);
	fclose(f);
	uint64_t entry;
	if (p->file[EI_CLASS] == ELFCLASS64) {
		const Elf64_Ehdr *eh = (const void *)p->file;
		p->arch = EDAG_ARCH_AARCH64;
		entry = eh->e_entry;
		for (unsigned i = 0; i < eh->e_phnum; i++) {
			const Elf64_Phdr *ph = (const void *)(p->file + eh->e_phoff + i * eh->e_phentsize);
			if (ph->p_type == PT_LOAD)
				add_load(p, ph->p_vaddr, ph->p_filesz, ph->p_memsz, ph->p_offset, ph->p_flags);
		}
	} else {
		const Elf32_Ehdr *eh = (const void *)p->file;
		p->arch = EDAG_ARCH_ARM;
		entry = eh->e_entry;
		for (unsigned i = 0; i < eh->e_phnum; i++) {
			const Elf32_Phdr *ph = (const void *)(p->file + eh->e_phoff + i * eh->e_phentsize);
			if (ph->p_type == PT_LOAD)
				add_load(p, ph->p_vaddr, ph->p_filesz, ph->p_memsz, ph->p_offset, ph->p_flags);
		}
	}
	for (size_t i = 1; i < p->nmaps; i++)
		assert_true(p->maps[i].start >= p->maps[i - 1].end); /* the linker's layout: sorted, disjoint */
	p->maps[p->nmaps++] = (struct trace_replay_map){STACK_TOP - STACK_PAGES * PAGE, STACK_TOP, 3};
	/* the registers at the entry, as a snapshot gives them (walk.c reads none but sp and pc) */
	if (p->arch == EDAG_ARCH_AARCH64) {
		p->nregs = 34;
		p->regs[31] = STACK_TOP - 64;
		p->regs[32] = entry;
	} else {
		p->nregs = 17;
		p->regs[13] = STACK_TOP - 64;
		p->regs[15] = entry & ~1ull;
		p->regs[16] = 0x10 | ((entry & 1) << 5); /* user mode, T from the entry's low bit */
	}
}

void replay_prog_free(struct replay_prog *p)
{
	free(p->file);
	p->file = NULL;
}

int replay_prog_fetch(void *arg, uint64_t addr, uint8_t *buf, uint32_t ps)
{
	struct replay_prog *p = arg;
	p->fetched++;
	memset(buf, 0, ps);
	bool mapped = addr >= STACK_TOP - STACK_PAGES * PAGE && addr < STACK_TOP;
	for (size_t i = 0; i < p->nseg; i++) {
		const struct replay_prog_seg *s = &p->seg[i];
		if (addr + ps <= s->vaddr || addr >= s->vaddr + s->memsz)
			continue;
		mapped = true;
		uint64_t lo = addr > s->vaddr ? addr : s->vaddr;
		uint64_t hi = addr + ps < s->vaddr + s->filesz ? addr + ps : s->vaddr + s->filesz;
		if (hi > lo)
			memcpy(buf + (lo - addr), p->file + s->off + (lo - s->vaddr), hi - lo);
	}
	return mapped ? 0 : -EFAULT;
}

void replay_prog_snap(const struct replay_prog *p, struct trace_replay_snap *s)
{
	*s = (struct trace_replay_snap){.arch = p->arch, .regs = p->regs, .nregs = p->nregs, .maps = p->maps,
					.nmaps = p->nmaps, .page_size = PAGE};
}

void replay_prog_snapshot(struct replay_prog *p, Prof__TraceSnapshot *ts, uint32_t id, uint32_t max_pages)
{
	prof__trace_snapshot__init(ts);
	for (size_t i = 0; i < p->nmaps; i++) {
		prof__snapshot_map__init(&p->mb[i]);
		p->mb[i].start = p->maps[i].start;
		p->mb[i].end = p->maps[i].end;
		p->mb[i].prot = p->maps[i].prot;
		p->mp[i] = &p->mb[i];
	}
	ts->snapshot_id = id;
	ts->arch = p->arch;
	ts->n_regs = p->nregs;
	ts->regs = p->regs;
	ts->n_maps = p->nmaps;
	ts->maps = p->mp;
	ts->page_size = PAGE;
	ts->max_pages = max_pages;
	ts->expires_ms = 60000;
}
