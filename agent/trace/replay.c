/* Replay windows in Unicorn 2 (replay.h). */
#include "generated/config.h"
#if defined(CONFIG_AGENT_TRACER) && defined(CONFIG_AGENT_TRACE_REPLAY)

#include "replay.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

#include "boost.h"
#include "net.h"
#include "snapshot.h"
#include "trace/warm.h"
#include "uc_api.h"

#define PAGE 4096u
/* Read from the process at a time: 1 MiB when all of it is readable (few, large
 * regions: Unicorn looks a region up on every miss of its TLB, in a list), else
 * 64 KiB, else the page. */
static const uint64_t chunk_size[3] = {1u << 20, 64u << 10, PAGE};
#define BLOCK (4u * 1024u * 1024u) /* host memory is taken in blocks of this (>= the largest chunk) */
#define MERGE_SPAN 64		   /* accesses of one instruction within this become one range */

struct block {
	struct block *next;
	size_t used, size;
	uint8_t *mem;
};

struct replay {
	const struct uc_api *uc;
	uc_engine *e;
	pid_t tid;
	int memfd; /* a snapshot's /proc/PID/mem (-1: process_vm_readv), see read_process */
	struct trace_decoder *d;
	struct trace_window *w;
	/* memory: host copies of the process's pages, mapped into the emulator */
	struct block *blocks;
	size_t copied;
	uint64_t *pages; /* set of mapped page numbers + 1 (open addressing) */
	size_t npages, cap;
	uint64_t *chunks[2]; /* per chunk size: chunk numbers + 1 tried whole (mapped or not) */
	size_t nchunks[2], ccap[2];
	bool over_budget;
	/* recording */
	bool measuring;
	size_t limit;
	uint64_t warm_done; /* warm-up instructions run */
	struct trace_warm warm;
	bool warm_failed; /* out of memory for the summary */
	bool warm_full;	  /* the summary holds its most lines: the warm-up ended there */
	enum trace_end stopped; /* set by a hook that stopped the emulation */
};

#if defined(__x86_64__)
/* Unicorn's first emulation in a process pays one-time set-up (about 0.1-0.3 s
 * here): run a few instructions of a local loop once, before any thread is
 * stopped. */
static void prime(const struct uc_api *uc)
{
	static const uint8_t loop[] = {0x48, 0xff, 0xc0, 0x48, 0x39, 0xc8, 0x75, 0xf8, 0xf4}; /* inc rax; cmp rax,rcx; jne; hlt */
	uint8_t *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uc_engine *e;
	if (page == MAP_FAILED)
		return;
	memcpy(page, loop, sizeof(loop));
	if (uc->open(UC_ARCH_X86, UC_MODE_64, &e) == UC_ERR_OK) {
		uint64_t n = 1000, zero = 0;
		uc->reg_write(e, UC_X86_REG_RCX, &n);
		uc->reg_write(e, UC_X86_REG_RAX, &zero);
		if (uc->mem_map_ptr(e, 0x10000, PAGE, UC_PROT_ALL, page) == UC_ERR_OK)
			uc->emu_start(e, 0x10000, UINT64_MAX, 1000000, 3000);
		uc->close(e);
	}
	munmap(page, PAGE);
}
#endif

int trace_replay_supported(char *err, size_t errlen)
{
#if defined(__x86_64__)
	const struct uc_api *uc;
	if (uc_api_load(&uc) < 0) {
		snprintf(err, errlen, "%s", uc_api_error());
		return -ELIBACC;
	}
	static bool primed;
	if (!primed) {
		prime(uc);
		primed = true;
	}
	return 0;
#else
	snprintf(err, errlen, "replay windows are implemented for x86_64 threads only");
	return -ENOTSUP;
#endif
}

#if defined(__x86_64__)

/* ---------------------------------------------------------------- sets of page numbers */

static uint64_t *set_find(uint64_t *t, size_t cap, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
	while (t[i] && t[i] != key)
		i = (i + 1) & (cap - 1);
	return &t[i];
}

static bool set_has(const uint64_t *t, size_t cap, uint64_t v)
{
	return cap && *set_find((uint64_t *)t, cap, v + 1) != 0;
}

static int set_add(uint64_t **t, size_t *n, size_t *cap, uint64_t v)
{
	if ((*n + 1) * 2 > *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		uint64_t *nt = calloc(nc, sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		for (size_t i = 0; i < *cap; i++)
			if ((*t)[i])
				*set_find(nt, nc, (*t)[i]) = (*t)[i];
		free(*t);
		*t = nt;
		*cap = nc;
	}
	uint64_t *s = set_find(*t, *cap, v + 1);
	if (!*s) {
		*s = v + 1;
		(*n)++;
	}
	return 0;
}

/* ---------------------------------------------------------------- process memory on demand */

static uint8_t *host_alloc(struct replay *r, size_t len)
{
	if (r->copied + len > (r->tid != r->w->tid ? TRACE_REPLAY_SNAP_MAX_BYTES : TRACE_REPLAY_MAX_BYTES)) {
		r->over_budget = true;
		return NULL;
	}
	if (!r->blocks || r->blocks->used + len > r->blocks->size) {
		struct block *b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		b->size = len > BLOCK ? (len + PAGE - 1) / PAGE * PAGE : BLOCK; /* a whole mapping (snapshot) */
		b->mem = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (b->mem == MAP_FAILED) {
			free(b);
			return NULL;
		}
		b->next = r->blocks;
		r->blocks = b;
	}
	uint8_t *p = r->blocks->mem + r->blocks->used;
	r->blocks->used += len;
	r->copied += len;
	return p;
}

/* A snapshot's pages are read through /proc/PID/mem: process_vm_readv pins them, and since
 * Linux 5.19 pinning a copy-on-write-shared anonymous page copies it first (the unshare of
 * R/O pins), so reading a 256 MiB snapshot copied all 256 MiB into it (bench/RESULTS.md);
 * /proc/PID/mem reads them where they are. In place (the thread itself, stopped) nothing
 * is shared: process_vm_readv. */
static bool read_process(const struct replay *r, uint64_t addr, void *buf, size_t len)
{
	if (r->memfd >= 0) {
		for (size_t done = 0; done < len;) {
			ssize_t got = pread(r->memfd, (uint8_t *)buf + done, len - done, (off_t)(addr + done));
			if (got <= 0)
				return false;
			done += (size_t)got;
		}
		return true;
	}
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	return process_vm_readv(r->tid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static bool map_copy(struct replay *r, uint64_t addr, size_t len)
{
	uint8_t *p = host_alloc(r, len);
	if (!p || !read_process(r, addr, p, len)) {
		if (p) { /* give the space back: it is the last allocation */
			r->blocks->used -= len;
			r->copied -= len;
		}
		return false;
	}
	if (r->uc->mem_map_ptr(r->e, addr, len, UC_PROT_ALL, p) != UC_ERR_OK)
		return false;
	for (uint64_t a = addr; a < addr + len; a += PAGE)
		if (set_add(&r->pages, &r->npages, &r->cap, a / PAGE) < 0)
			return false;
	return true;
}

/* [lo, hi) of the mapping named name ("[vvar]") in /proc/PID/maps (pid 0:
 * this process); false when there is none. */
static bool special_range(pid_t pid, const char *name, uint64_t *lo, uint64_t *hi)
{
	char path[64], line[512];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool found = false;
	size_t nl = strlen(name);
	while (!found && fgets(line, sizeof(line), f)) {
		size_t l = strlen(line);
		while (l && (line[l - 1] == '\n' || line[l - 1] == ' '))
			line[--l] = '\0';
		unsigned long long a, b;
		if (l > nl && strcmp(line + l - nl, name) == 0 && line[l - nl - 1] == ' ' &&
		    sscanf(line, "%llx-%llx", &a, &b) == 2) {
			*lo = a;
			*hi = b;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* Copy len bytes at src of this process into dst without faulting: through a
 * pipe, so an unreadable page is an error (EFAULT), not a signal. */
static bool safe_copy(void *dst, const void *src, size_t len)
{
	int p[2];
	if (pipe(p) < 0)
		return false;
	bool ok = write(p[1], src, len) == (ssize_t)len && read(p[0], dst, len) == (ssize_t)len;
	close(p[0]);
	close(p[1]);
	return ok;
}

/* The kernel's time data pages ([vvar], [vvar_vclock], read by the vDSO's
 * clock_gettime) are special mappings process_vm_readv cannot read. They are
 * the same in every process of this system: the page of addr is copied from
 * this process's own mapping of the same name. */
static bool map_special(struct replay *r, uint64_t addr)
{
	static const char *const names[] = {"[vvar]", "[vvar_vclock]"};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		uint64_t lo, hi, mlo, mhi;
		if (!special_range(r->tid, names[k], &lo, &hi) || addr < lo || addr >= hi ||
		    !special_range(0, names[k], &mlo, &mhi) || mhi - mlo != hi - lo)
			continue;
		uint64_t page = addr / PAGE * PAGE;
		uint8_t *p = host_alloc(r, PAGE);
		if (!p || !safe_copy(p, (const void *)(uintptr_t)(mlo + (page - lo)), PAGE))
			return false;
		if (r->uc->mem_map_ptr(r->e, page, PAGE, UC_PROT_ALL, p) != UC_ERR_OK)
			return false;
		return set_add(&r->pages, &r->npages, &r->cap, page / PAGE) == 0;
	}
	return false;
}

/* From a snapshot (frozen memory): the whole readable mapping of addr in one region
 * when none of it is mapped yet and it fits the budget (Unicorn looks a region up on
 * every miss of its TLB and each new region costs a flush: a 256 MiB chase mapped chunk
 * by chunk took seconds for a few thousand instructions). */
static bool map_vma(struct replay *r, uint64_t addr)
{
	char path[48], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)r->tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	unsigned long long lo = 0, hi = 0;
	char perm[8] = "";
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx-%llx %7s", &lo, &hi, perm) == 3 && addr >= lo && addr < hi;
	fclose(f);
	if (!found || perm[0] != 'r' || hi - lo > TRACE_REPLAY_SNAP_MAX_BYTES - r->copied)
		return false;
	for (uint64_t p = lo / PAGE; p < hi / PAGE; p++)
		if (set_has(r->pages, r->cap, p))
			return false;
	return map_copy(r, lo, (size_t)(hi - lo));
}

/* Map the page of addr: its whole 1 MiB chunk when all of it is readable and
 * none of it is mapped yet, else its 64 KiB chunk likewise, else the page
 * alone. */
static bool map_page(struct replay *r, uint64_t addr)
{
	uint64_t page = addr / PAGE;
	if (set_has(r->pages, r->cap, page))
		return true;
	if (r->tid != r->w->tid && map_vma(r, addr))
		return true;
	for (int k = 0; k < 2; k++) {
		uint64_t size = chunk_size[k], chunk = addr / size;
		if (set_has(r->chunks[k], r->ccap[k], chunk))
			continue; /* tried before: not all readable, or partly mapped */
		if (set_add(&r->chunks[k], &r->nchunks[k], &r->ccap[k], chunk) < 0)
			return false;
		bool none = true;
		for (uint64_t p = chunk * (size / PAGE); p < (chunk + 1) * (size / PAGE) && none; p++)
			none = !set_has(r->pages, r->cap, p);
		if (none && map_copy(r, chunk * size, size))
			return true;
	}
	return map_copy(r, page * PAGE, PAGE) || map_special(r, addr);
}

static bool on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *arg)
{
	(void)uc;
	(void)type;
	(void)value;
	struct replay *r = arg;
	uint64_t last = addr + (uint64_t)(size > 0 ? size - 1 : 0);
	return map_page(r, addr) && (last / PAGE == addr / PAGE || map_page(r, last));
}

/* ---------------------------------------------------------------- recording */

static void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *arg)
{
	struct replay *r = arg;
	if (!r->measuring) {
		r->warm_done++; /* the warm-up: only counted */
		/* The summary keeps the max_lines most recent distinct lines: once it holds that
		 * many, the ones it would keep at any later end of the warm-up are the same kind
		 * of thing (the most recent lines before the recorded part), so the warm-up ends
		 * here. A pointer chase over 256 MiB filled it after ~200000 of its 500000
		 * instructions, each of them a miss of the emulator's TLB. */
		if (r->warm.n >= r->warm.max_lines && !r->warm_full) {
			r->warm_full = true;
			r->uc->emu_stop(uc);
		}
		return;
	}
	struct trace_window *w = r->w;
	if (w->n >= r->limit) {
		r->uc->emu_stop(uc);
		return;
	}
	struct trace_rec *rec = &w->rec[w->n++];
	memset(rec, 0, sizeof(*rec));
	rec->pc = addr;
	const struct trace_decoded *ins;
	if (trace_decode_lookup(r->d, addr, &ins) < 0) {
		uint8_t code[16];
		size_t len = size > 0 && size <= sizeof(code) ? size : sizeof(code);
		if (r->uc->mem_read(uc, addr, code, len) != UC_ERR_OK || trace_decode(r->d, addr, code, len, &ins) < 0) {
			w->undecodable++;
			return;
		}
	}
	rec->iclass = ins->iclass;
	rec->nread = ins->nread;
	rec->nwrite = ins->nwrite;
	memcpy(rec->read, ins->read, sizeof(ins->read));
	memcpy(rec->written, ins->written, sizeof(ins->written));
}

/* An access of the instruction being recorded: merged into its first range
 * when they touch or lie within MERGE_SPAN bytes (push, rmw, movs within a
 * line), else its second; a third is dropped (counted). */
static void rec_access(struct trace_window *w, uint64_t addr, uint32_t size, uint8_t rw)
{
	if (w->n == 0)
		return;
	struct trace_rec *rec = &w->rec[w->n - 1];
	for (uint8_t i = 0; i < rec->nmem; i++) {
		uint64_t lo = addr < rec->addr[i] ? addr : rec->addr[i];
		uint64_t hi = addr + size > rec->addr[i] + rec->size[i] ? addr + size : rec->addr[i] + rec->size[i];
		if (hi - lo <= MERGE_SPAN) {
			rec->addr[i] = lo;
			rec->size[i] = (uint16_t)(hi - lo);
			rec->rw[i] |= rw;
			return;
		}
	}
	if (rec->nmem == TRACE_MAX_MEM) {
		w->dropped_accesses++;
		return;
	}
	rec->addr[rec->nmem] = addr;
	rec->size[rec->nmem] = (uint16_t)(size ? size : 1);
	rec->rw[rec->nmem] = rw;
	rec->nmem++;
}

static void on_mem(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *arg)
{
	(void)uc;
	(void)value;
	struct replay *r = arg;
	uint8_t rw = type == UC_MEM_WRITE ? 2 : 1;
	uint32_t sz = size > 0 && size <= 4096 ? (uint32_t)size : 1;
	if (r->measuring)
		rec_access(r->w, addr, sz, rw);
	else if (trace_warm_add(&r->warm, addr, sz, rw) < 0)
		r->warm_failed = true;
}

static void on_syscall(uc_engine *uc, void *arg)
{
	struct replay *r = arg;
	r->stopped = TRACE_END_SYSCALL;
	r->uc->emu_stop(uc);
}

static void on_intr(uc_engine *uc, uint32_t intno, void *arg)
{
	(void)intno;
	struct replay *r = arg;
	r->stopped = TRACE_END_SYSCALL; /* int 0x80, int3: into the kernel */
	r->uc->emu_stop(uc);
}

/* ---------------------------------------------------------------- registers (x86_64) */

static int load_regs(struct replay *r, char *err, size_t errlen, uint64_t *pc, bool *in_syscall)
{
	struct user_regs_struct g;
	struct user_fpregs_struct f;
	if (ptrace(PTRACE_GETREGS, r->tid, NULL, &g) < 0 || ptrace(PTRACE_GETFPREGS, r->tid, NULL, &f) < 0) {
		int e = errno;
		snprintf(err, errlen, "thread %d: reading its registers: %s", (int)r->tid, strerror(e));
		return -e;
	}
	/* orig_rax is the system call a stopped thread is in (-1: none) */
	*in_syscall = (long long)g.orig_rax != -1;
	*pc = g.rip;
	static const int ids[] = {UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX,    UC_X86_REG_RDX,
				  UC_X86_REG_RSI, UC_X86_REG_RDI, UC_X86_REG_RBP,    UC_X86_REG_RSP,
				  UC_X86_REG_R8,  UC_X86_REG_R9,  UC_X86_REG_R10,    UC_X86_REG_R11,
				  UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14,    UC_X86_REG_R15,
				  UC_X86_REG_RIP, UC_X86_REG_EFLAGS, UC_X86_REG_FS_BASE, UC_X86_REG_GS_BASE};
	const uint64_t v[] = {g.rax, g.rbx, g.rcx, g.rdx, g.rsi, g.rdi,	   g.rbp,    g.rsp,   g.r8,    g.r9,
			      g.r10, g.r11, g.r12, g.r13, g.r14, g.r15, g.rip, g.eflags, g.fs_base, g.gs_base};
	uc_err ue = UC_ERR_OK;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]) && ue == UC_ERR_OK; i++)
		ue = r->uc->reg_write(r->e, ids[i], &v[i]);
	for (int i = 0; i < 16 && ue == UC_ERR_OK; i++)
		ue = r->uc->reg_write(r->e, UC_X86_REG_XMM0 + i, (const uint8_t *)f.xmm_space + 16 * i);
	uint32_t mxcsr = f.mxcsr;
	uint16_t cw = f.cwd, sw = f.swd, tag = 0;
	for (int i = 0; i < 8; i++) /* FXSAVE's abridged tag (1 = in use) -> full tag word (3 = empty) */
		if (!(f.ftw & (1u << i)))
			tag = (uint16_t)(tag | 3u << (2 * i));
	if (ue == UC_ERR_OK)
		ue = r->uc->reg_write(r->e, UC_X86_REG_MXCSR, &mxcsr);
	if (ue == UC_ERR_OK)
		ue = r->uc->reg_write(r->e, UC_X86_REG_FPCW, &cw);
	if (ue == UC_ERR_OK)
		ue = r->uc->reg_write(r->e, UC_X86_REG_FPSW, &sw);
	if (ue == UC_ERR_OK)
		ue = r->uc->reg_write(r->e, UC_X86_REG_FPTAG, &tag);
	/* ST(i) relative to the top the status word (written above) sets, as FXSAVE stores
	 * them: 64-bit mantissa then 16-bit sign and exponent, Unicorn's layout too */
	for (int i = 0; i < 8 && ue == UC_ERR_OK; i++)
		ue = r->uc->reg_write(r->e, UC_X86_REG_ST0 + i, (const uint8_t *)f.st_space + 16 * i);
	if (ue != UC_ERR_OK) {
		snprintf(err, errlen, "Unicorn refused a register: %s", r->uc->strerror(ue));
		return -EIO;
	}
	return 0;
}

static uint64_t read_pc(struct replay *r)
{
	uint64_t pc = 0;
	r->uc->reg_read(r->e, UC_X86_REG_RIP, &pc);
	return pc;
}

static int open_engine(struct replay *r, char *err, size_t errlen)
{
	uc_err ue = r->uc->open(UC_ARCH_X86, UC_MODE_64, &r->e);
	if (ue != UC_ERR_OK) {
		snprintf(err, errlen, "Unicorn: %s", r->uc->strerror(ue));
		return -EIO;
	}
	uc_hook h;
	if (r->uc->hook_add(r->e, &h, UC_HOOK_INSN, (void *)on_syscall, r, 1, 0, UC_X86_INS_SYSCALL) != UC_ERR_OK ||
	    r->uc->hook_add(r->e, &h, UC_HOOK_INSN, (void *)on_syscall, r, 1, 0, UC_X86_INS_SYSENTER) != UC_ERR_OK)
		return -EIO;
	return 0;
}

/* ---------------------------------------------------------------- the window */

static enum trace_end end_of(uc_err ue)
{
	switch (ue) {
	case UC_ERR_OK: return TRACE_END_COMPLETE;
	case UC_ERR_INSN_INVALID:
	case UC_ERR_EXCEPTION: return TRACE_END_UNSUPPORTED;
	case UC_ERR_READ_UNMAPPED:
	case UC_ERR_WRITE_UNMAPPED:
	case UC_ERR_FETCH_UNMAPPED:
	case UC_ERR_READ_PROT:
	case UC_ERR_WRITE_PROT:
	case UC_ERR_FETCH_PROT:
	case UC_ERR_READ_UNALIGNED:
	case UC_ERR_WRITE_UNALIGNED:
	case UC_ERR_FETCH_UNALIGNED: return TRACE_END_FAULT;
	default: return TRACE_END_ERROR;
	}
}

/* Run up to count instructions from pc, until deadline. The end reason. */
static enum trace_end run(struct replay *r, uint64_t pc, size_t count, uint64_t deadline)
{
	uint64_t now = clock_mono_ns();
	if (now >= deadline)
		return TRACE_END_TIME;
	r->stopped = TRACE_END_COMPLETE;
	uint64_t us = (deadline - now) / 1000 + 1;
	uint64_t before = r->measuring ? r->w->n : r->warm_done;
	uc_err ue = r->uc->emu_start(r->e, pc, UINT64_MAX, us, count);
	uint64_t ran = (r->measuring ? r->w->n : r->warm_done) - before;
	if (r->over_budget)
		return TRACE_END_FAULT;
	if (ue != UC_ERR_OK)
		return end_of(ue);
	if (r->stopped != TRACE_END_COMPLETE)
		return r->stopped;
	if (!r->measuring && r->warm_full)
		return TRACE_END_COMPLETE; /* the warm-up summary is full */
	return ran >= count ? TRACE_END_COMPLETE : TRACE_END_TIME; /* else the time limit stopped it */
}

static void replay_free(struct replay *r)
{
	if (r->memfd >= 0)
		close(r->memfd);
	r->memfd = -1;
	if (r->e)
		r->uc->close(r->e);
	while (r->blocks) {
		struct block *b = r->blocks->next;
		munmap(r->blocks->mem, r->blocks->size);
		free(r->blocks);
		r->blocks = b;
	}
	free(r->pages);
	free(r->chunks[0]);
	free(r->chunks[1]);
	trace_warm_free(&r->warm);
}

int trace_replay_capture(struct trace_decoder *d, pid_t tid, const struct trace_replay_opts *o,
			 struct trace_window *w, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->tid = tid;
	w->capture = TRACE_CAPTURE_REPLAY;
	if (o->n == 0 || o->n > TRACE_WINDOW_MAX || o->warm > TRACE_REPLAY_WARM_MAX) {
		snprintf(err, errlen, "window of %zu + %zu instructions (allowed 1..%u recorded after 0..%u)", o->warm,
			 o->n, TRACE_WINDOW_MAX, TRACE_REPLAY_WARM_MAX);
		return -EINVAL;
	}
	struct replay r = {.tid = tid, .memfd = -1, .d = d, .w = w, .limit = o->n};
	if (uc_api_load(&r.uc) < 0) {
		snprintf(err, errlen, "%s", uc_api_error());
		return -ELIBACC;
	}
	w->rec_borrowed = o->buf && o->buf_cap >= o->n;
	w->rec = w->rec_borrowed ? o->buf : malloc(o->n * sizeof(*w->rec));
	if (!w->rec || trace_warm_init(&r.warm, TRACE_REPLAY_LINE, TRACE_REPLAY_WARM_LINES) < 0) {
		snprintf(err, errlen, "out of memory for a %zu-instruction window", o->n);
		trace_window_free(w);
		return -ENOMEM;
	}
	w->cap = o->n;
	w->warm_line_bytes = TRACE_REPLAY_LINE;
	/* the engine before the thread stops: its set-up is no stop time */
	int rc = open_engine(&r, err, errlen);
	uc_hook h;
	if (rc == 0 &&
	    (r.uc->hook_add(r.e, &h, UC_HOOK_MEM_UNMAPPED, (void *)on_unmapped, &r, 1, 0) != UC_ERR_OK ||
	     r.uc->hook_add(r.e, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, (void *)on_mem, &r, 1, 0) != UC_ERR_OK ||
	     r.uc->hook_add(r.e, &h, UC_HOOK_INTR, (void *)on_intr, &r, 1, 0) != UC_ERR_OK ||
	     /* from the start: adding it later costs a flush of the translations (seconds the
	      * first time, Unicorn 2.0.1) */
	     r.uc->hook_add(r.e, &h, UC_HOOK_CODE, (void *)on_code, &r, 1, 0) != UC_ERR_OK)) {
		snprintf(err, errlen, "Unicorn: cannot add the memory hooks");
		rc = -EIO;
	}
	if (rc < 0) {
		replay_free(&r);
		trace_window_free(w);
		return rc;
	}
	/* what a snapshot needs, found while the thread runs: none of it is stop time */
	struct trace_snapshot_plan plan = {0};
	bool planned = false;
	if (o->snapshot) {
		uint64_t t = clock_mono_ns();
		planned = trace_snapshot_plan(tid, &plan, w->snap_why, sizeof(w->snap_why)) == 0;
		w->parts.checks = clock_mono_ns() - t;
	}
	struct trace_boost self = {0}, target = {0};
	if (planned && o->boost && trace_boost_on(&self, 0) == 0 && trace_boost_on(&target, tid) < 0)
		trace_boost_off(&self); /* both or neither */
	w->parts.boosted = target.on;
	w->start_ns = clock_mono_ns();
	uint64_t deadline = w->start_ns + o->max_ns;
	int sig = 0;
	rc = trace_seize(tid, deadline, w, &sig, err, errlen);
	if (rc != 0) {
		trace_boost_off(&target);
		trace_boost_off(&self);
		replay_free(&r);
		if (rc < 0)
			trace_window_free(w);
		return rc < 0 ? rc : 0;
	}
	w->parts.attach = clock_mono_ns() - w->start_ns;
	uint64_t pc = 0;
	bool in_syscall = false;
	pid_t snap = 0;
	rc = load_regs(&r, err, errlen, &pc, &in_syscall);
	w->parts.regs = clock_mono_ns() - w->start_ns - w->parts.attach;
	if (rc == 0 && !in_syscall && planned) {
		int ssig = 0;
		/* a few ms; a budget that small must not make it time out half-way */
		uint64_t sdl = deadline > w->start_ns + 2000000000ull ? deadline : w->start_ns + 2000000000ull;
		uint64_t t = clock_mono_ns();
		w->parts.regs = t - w->start_ns - w->parts.attach;
		int src = trace_snapshot_take(tid, &plan, sdl, &snap, &ssig, &w->parts.clone, w->snap_why,
					      sizeof(w->snap_why));
		bool reaped = src == -ESRCH && snap == -1; /* its end reaped in the clone's step */
		if (ssig && !sig && !reaped)
			sig = ssig;
		if (reaped) { /* ssig is the wait status */
			trace_boost_off(&target);
			trace_boost_off(&self);
			w->end = TRACE_END_EXITED;
			w->reaped = true;
			w->exit_status = ssig;
			w->stop_ns = clock_mono_ns() - w->start_ns;
			replay_free(&r);
			return 0;
		}
		if (src == 0) {
			/* the program goes on, at its own priority; the window replays from the snapshot */
			trace_boost_off(&target);
			ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
			uint64_t now = clock_mono_ns();
			trace_boost_off(&self);
			w->stop_ns = now - w->start_ns;
			w->parts.restore = w->stop_ns - w->parts.attach - w->parts.regs - w->parts.clone;
			w->snapshot = true;
			r.tid = snap;
			char mem[40];
			snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)snap);
			r.memfd = open(mem, O_RDONLY | O_CLOEXEC); /* -1: process_vm_readv, copying */
			if (trace_snapshot_ready(snap, &plan, w->snap_why, sizeof(w->snap_why)) < 0) {
				/* dropped, and the thread went on: no window this time */
				w->parts.child = clock_mono_ns() - now;
				w->snapshot = false;
				w->end = TRACE_END_ERROR;
				replay_free(&r);
				return 0;
			}
			w->parts.child = clock_mono_ns() - now;
			uint64_t lim = o->replay_max_ns > o->max_ns ? o->replay_max_ns : o->max_ns;
			deadline = clock_mono_ns() + lim;
		}
	}
	/* no snapshot: the replay (in place) runs at the priorities it had */
	trace_boost_off(&target);
	trace_boost_off(&self);
	uint64_t replay_from = clock_mono_ns();
	if (rc == 0 && in_syscall) {
		w->end = TRACE_END_IN_SYSCALL;
	} else if (rc == 0) {
		enum trace_end e = TRACE_END_COMPLETE;
		if (o->warm) {
			e = run(&r, pc, o->warm, deadline);
			w->warm_insns = r.warm_done;
			pc = read_pc(&r);
		}
		if (e == TRACE_END_COMPLETE) {
			r.measuring = true;
			{
				e = run(&r, pc, o->n, deadline);
				/* an instruction that faulted or could not be decoded by the emulator did not run */
				if (e != TRACE_END_COMPLETE && e != TRACE_END_SYSCALL && e != TRACE_END_TIME && w->n > 0 &&
				    w->rec[w->n - 1].pc == read_pc(&r))
					w->n--;

			}
		} else {
			w->n = 0;
		}
		w->end = e;
	}
	w->replay_ns = clock_mono_ns() - replay_from;
	if (snap) {
		trace_snapshot_drop(snap);
	} else {
		/* let the thread go before anything else */
		ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
		w->stop_ns = clock_mono_ns() - w->start_ns;
	}
	w->emulated = r.warm_done + w->n;
	if (rc == 0 && w->n > 0 && (r.warm_failed || trace_warm_lines(&r.warm, &w->warm_lines, &w->nwarm) < 0)) {
		snprintf(err, errlen, "out of memory for the warm-up summary");
		rc = -ENOMEM;
	}
	if (rc == 0 && w->n == 0)
		w->warm_insns = 0;
	replay_free(&r);
	if (rc < 0) {
		trace_window_free(w);
		return rc;
	}
	return 0;
}

#else /* not x86_64 */

int trace_replay_capture(struct trace_decoder *d, pid_t tid, const struct trace_replay_opts *o,
			 struct trace_window *w, char *err, size_t errlen)
{
	(void)d;
	(void)o;
	memset(w, 0, sizeof(*w));
	w->tid = tid;
	snprintf(err, errlen, "replay windows are implemented for x86_64 threads only");
	return -ENOTSUP;
}

#endif
#endif /* CONFIG_AGENT_TRACER && CONFIG_AGENT_TRACE_REPLAY */
