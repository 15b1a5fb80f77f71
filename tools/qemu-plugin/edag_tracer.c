/* edag_tracer: a QEMU TCG plugin (qemu-user, QEMU 7.2) that records every
 * executed instruction of the first vCPU with its memory access, in the
 * eDAG engine's native trace format (collector/edag/README.md).
 *
 *   qemu-riscv64 -plugin edag_tracer.so,out=trace.bin[,format=bin|text][,limit=N][,start=ADDR][,stats=FILE] ./prog
 *
 * At translation, each instruction's bytes are decoded once (agent/trace/
 * decode.h: Capstone for aarch64, x86_64 and arm (ARM or Thumb state, told apart
 * per translation block), our own RV64GC decoder for riscv64) into its class and
 * the registers it reads and writes. At execution, an instruction callback
 * starts a record and memory callbacks add the accesses QEMU performed (the
 * addresses are the real ones, not recomputed): the memory mode (read, write,
 * both) comes from those callbacks, so a predicated-off load has none and an
 * atomic or a load/store-multiple has its true span. Several accesses of one
 * instruction merge into one range when they touch or lie within 64 bytes
 * (ldp, ldm, push); otherwise the first is kept. Other vCPUs (guest threads
 * beyond the first) are counted, not traced. The plugin prints only on errors.
 *
 * out= may be a pipe (tools/qemu-plugin/qemu-trace gives /dev/fd/3, read by
 * agent trace-import): a full pipe blocks the writer (the program waits: the
 * reader's back-pressure); a reader that is gone ends the tracing (EPIPE, no
 * SIGPIPE for the guest) and the program runs on. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <capstone/capstone.h>

#include "trace/native.h"
#include "qemu_plugin_api.h"
#include "trace/decode.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MERGE_SPAN 64
#define ARENA_CHUNK 4096
#define OUT_BUF (1u << 20)

struct pinsn {
	uint64_t pc;
	uint8_t cls, nread, nwrite;
	uint8_t rd[TRACE_MAX_READ], wr[TRACE_MAX_WRITE];
};

struct arena {
	struct arena *next;
	size_t used;
	struct pinsn item[ARENA_CHUNK];
};

static struct {
	enum trace_arch arch;
	bool text;
	uint64_t limit; /* 0: no limit */
	uint64_t start; /* start=ADDR: record from the first execution of ADDR on */
	bool recording;
	char *stats_path;
	int out;     /* the trace: a file, or a pipe to agent trace-import (tools/qemu-plugin/qemu-trace) */
	uint8_t *buf; /* OUT_BUF bytes, written out when full */
	size_t nbuf;
	struct trace_decoder *dec;
	csh cs_arm, cs_thumb; /* arm: to tell the state of a block */
	pthread_mutex_t lock; /* translation */
	struct arena *arena;
	/* the instruction being executed (vCPU 0) */
	const struct pinsn *cur;
	uint64_t addr;
	uint32_t size;
	uint8_t mem;
	/* statistics */
	uint64_t insns, loads, stores, rmw, unmerged, undecodable, other_vcpu, translated;
	bool write_failed;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(msg, sizeof(msg), "edag_tracer: ");
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	strncat(msg, "\n", sizeof(msg) - strlen(msg) - 1);
	qemu_plugin_outs(msg);
}

static struct pinsn *pinsn_new(void)
{
	if (!g.arena || g.arena->used == ARENA_CHUNK) {
		struct arena *a = calloc(1, sizeof(*a));
		if (!a)
			return NULL;
		a->next = g.arena;
		g.arena = a;
	}
	return &g.arena->item[g.arena->used++];
}

/* ---------------------------------------------------------------- output */

/* write(2) all of buf. A pipe whose reader went away gives EPIPE here, not a
 * SIGPIPE for the guest: the signal is blocked around the write and the one
 * it raised is taken back. A full pipe blocks (the reader's back-pressure). */
static int write_all(const uint8_t *p, size_t n)
{
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	int err = 0;
	while (n > 0) {
		ssize_t w = write(g.out, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? errno : EIO;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	if (err == EPIPE && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = {0, 0};
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

static void out_flush(void)
{
	if (g.nbuf == 0 || g.write_failed)
		return;
	int rc = write_all(g.buf, g.nbuf);
	g.nbuf = 0;
	if (rc < 0) {
		g.write_failed = true;
		say("writing the trace failed: %s (%s; the rest of the run is not recorded, the program goes on)",
		    strerror(-rc), rc == -EPIPE ? "the reader of the pipe is gone" : "disk full?");
	}
}

static void out_put(const void *p, size_t n)
{
	if (g.nbuf + n > OUT_BUF)
		out_flush();
	memcpy(g.buf + g.nbuf, p, n);
	g.nbuf += n;
}

static void emit(const struct pinsn *p, uint64_t addr, uint32_t size, uint8_t mem)
{
	struct edag_insn in;
	in.pc = p->pc;
	in.cls = p->cls;
	in.mem = mem;
	in.addr = mem ? addr : 0;
	in.size = mem ? size : 0;
	if (mem && in.cls != EDAG_LOAD && in.cls != EDAG_STORE && in.cls != EDAG_BRANCH)
		in.cls = (mem & EDAG_MEM_WRITE) ? EDAG_STORE : EDAG_LOAD; /* push, swp, ... */
	in.nread = p->nread;
	in.nwrite = p->nwrite;
	memcpy(in.rd, p->rd, p->nread);
	memcpy(in.wr, p->wr, p->nwrite);
	g.insns++;
	g.loads += mem == EDAG_MEM_READ;
	g.stores += mem == EDAG_MEM_WRITE;
	g.rmw += mem == (EDAG_MEM_READ | EDAG_MEM_WRITE);
	if (g.write_failed)
		return;
	if (!g.text) {
		uint8_t rec[EDAG_BIN_MAX_RECORD];
		out_put(rec, edag_bin_encode(&in, rec));
	} else {
		char line[256];
		static const char *const mode[4] = {"+none", "+r", "+w", "+rw"};
		int n = snprintf(line, sizeof(line), "0x%" PRIx64 " %s%s", in.pc, edag_class_name(in.cls),
				 in.mem != edag_default_mem(in.cls) ? mode[in.mem] : "");
		for (int k = 0; k < 2; k++) {
			const uint8_t *r = k ? in.wr : in.rd;
			uint8_t nr = k ? in.nwrite : in.nread;
			for (uint8_t i = 0; i < nr; i++)
				n += snprintf(line + n, sizeof(line) - (size_t)n, "%s#%u", i ? "," : k ? " w=" : " r=", r[i]);
		}
		if (in.mem)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " m=0x%" PRIx64 "/%u", in.addr, in.size);
		line[n++] = '\n';
		out_put(line, (size_t)n);
	}
}

static void flush_current(void)
{
	if (g.cur && (!g.limit || g.insns < g.limit))
		emit(g.cur, g.addr, g.size, g.mem);
	g.cur = NULL;
}

/* ---------------------------------------------------------------- execution callbacks */

static void on_exec(unsigned int vcpu, void *udata)
{
	if (vcpu != 0) {
		__atomic_fetch_add(&g.other_vcpu, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!g.recording) { /* start=ADDR: nothing before the first execution of ADDR */
		if (((const struct pinsn *)udata)->pc != g.start)
			return;
		g.recording = true;
	}
	flush_current();
	g.cur = udata;
	g.mem = 0;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	if (vcpu != 0 || !g.cur)
		return;
	uint32_t size = 1u << qemu_plugin_mem_size_shift(info);
	uint8_t rw = qemu_plugin_mem_is_store(info) ? EDAG_MEM_WRITE : EDAG_MEM_READ;
	if (!g.mem) {
		g.addr = vaddr;
		g.size = size;
		g.mem = rw;
		return;
	}
	uint64_t lo = vaddr < g.addr ? vaddr : g.addr;
	uint64_t hi = vaddr + size > g.addr + g.size ? vaddr + size : g.addr + g.size;
	bool touch = vaddr <= g.addr + g.size && g.addr <= vaddr + size;
	if (touch || hi - lo <= MERGE_SPAN) {
		if (hi - lo <= 4096) {
			g.addr = lo;
			g.size = (uint32_t)(hi - lo);
		}
		g.mem |= rw;
	} else {
		g.unmerged++;
		g.mem |= rw;
	}
}

/* ---------------------------------------------------------------- translation */

static bool thumb_prefix(const uint8_t *b)
{
	unsigned top = (unsigned)b[1] >> 3; /* first halfword, bits 15..11 */
	return top == 0x1d || top == 0x1e || top == 0x1f;
}

/* The first token of QEMU's disassembly equals Capstone's mnemonic in this state? */
static bool same_mnemonic(csh cs, const struct qemu_plugin_insn *insn, const char *disas)
{
	cs_insn *ci = NULL;
	size_t n = cs_disasm(cs, qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn),
			     qemu_plugin_insn_vaddr(insn), 1, &ci);
	bool same = false;
	if (n == 1) {
		size_t ml = strlen(ci->mnemonic);
		same = strncmp(disas, ci->mnemonic, ml) == 0 && (disas[ml] == ' ' || disas[ml] == '\t' || !disas[ml]);
	}
	if (ci)
		cs_free(ci, n);
	return same;
}

/* arm: is this block in Thumb state? Instruction sizes decide in most blocks (a
 * 2-byte instruction, or a 4-byte one without a Thumb-2 prefix); otherwise
 * QEMU's own disassembly (which knows the state) is matched against both. */
static bool block_is_thumb(struct qemu_plugin_tb *tb, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		if (qemu_plugin_insn_size(insn) == 2)
			return true;
		if (!thumb_prefix(qemu_plugin_insn_data(insn)))
			return false;
	}
	struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
	char *d = qemu_plugin_insn_disas(first);
	bool thumb = false;
	if (d) {
		const char *s = d;
		while (*s == ' ' || *s == '\t')
			s++;
		thumb = same_mnemonic(g.cs_thumb, first, s) && !same_mnemonic(g.cs_arm, first, s);
		free(d);
	}
	return thumb;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	if (n == 0)
		return;
	pthread_mutex_lock(&g.lock);
	if (g.arch == TRACE_ARCH_ARM)
		trace_decoder_set_thumb(g.dec, block_is_thumb(tb, n));
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		struct pinsn *p = pinsn_new();
		if (!p) {
			say("out of memory");
			break;
		}
		p->pc = qemu_plugin_insn_vaddr(insn);
		const struct trace_decoded *d;
		if (trace_decode(g.dec, p->pc, qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn), &d) == 0) {
			p->cls = d->iclass;
			p->nread = d->nread < EDAG_MAX_REGS ? d->nread : EDAG_MAX_REGS;
			p->nwrite = d->nwrite < EDAG_MAX_REGS ? d->nwrite : EDAG_MAX_REGS;
			memcpy(p->rd, d->read, p->nread);
			memcpy(p->wr, d->written, p->nwrite);
		} else {
			p->cls = EDAG_OTHER; /* kept as a vertex without registers */
			g.undecodable++;
		}
		g.translated++;
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_exec, QEMU_PLUGIN_CB_NO_REGS, p);
		qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
	}
	pthread_mutex_unlock(&g.lock);
}

/* ---------------------------------------------------------------- setup and exit */

static void on_exit_cb(qemu_plugin_id_t id, void *udata)
{
	flush_current();
	out_flush();
	if (close(g.out) != 0 && !g.write_failed)
		say("writing the trace failed: %s", strerror(errno));
	if (g.stats_path) {
		FILE *f = fopen(g.stats_path, "w");
		if (!f) {
			say("cannot write %s: %s", g.stats_path, strerror(errno));
		} else {
			fprintf(f,
				"arch=%s insns=%" PRIu64 " loads=%" PRIu64 " stores=%" PRIu64 " rmw=%" PRIu64
				" unmerged=%" PRIu64 " undecodable=%" PRIu64 " translated=%" PRIu64
				" other_vcpu_insns=%" PRIu64 "\n",
				edag_arch_name(g.arch), g.insns, g.loads, g.stores, g.rmw, g.unmerged, g.undecodable,
				g.translated, g.other_vcpu);
			fclose(f);
		}
	}
	trace_decoder_close(g.dec);
	if (g.cs_arm)
		cs_close(&g.cs_arm);
	if (g.cs_thumb)
		cs_close(&g.cs_thumb);
	while (g.arena) {
		struct arena *a = g.arena->next;
		free(g.arena);
		g.arena = a;
	}
	free(g.buf);
	free(g.stats_path);
}

static int usage(const char *why)
{
	say("%s; usage: -plugin edag_tracer.so,out=FILE[,format=bin|text][,limit=N][,start=ADDR][,stats=FILE]", why);
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	const char *out = NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "out=", 4) == 0) {
			out = a + 4;
		} else if (strcmp(a, "format=text") == 0) {
			g.text = true;
		} else if (strcmp(a, "format=bin") == 0) {
			g.text = false;
		} else if (strncmp(a, "limit=", 6) == 0) {
			char *end;
			g.limit = strtoull(a + 6, &end, 10);
			if (*end || !a[6])
				return usage("limit= expects a number of instructions");
		} else if (strncmp(a, "start=", 6) == 0) {
			char *end;
			g.start = strtoull(a + 6, &end, 0);
			if (*end || !a[6] || !g.start)
				return usage("start= expects an instruction address (0x...)");
		} else if (strncmp(a, "stats=", 6) == 0) {
			g.stats_path = strdup(a + 6);
		} else {
			char why[128];
			snprintf(why, sizeof(why), "unknown argument '%s'", a);
			return usage(why);
		}
	}
	if (!out || !*out)
		return usage("out= is required");
	g.recording = g.start == 0;
	if (info->system_emulation)
		return usage("qemu-user only (one process)");
	if (strcmp(info->target_name, "aarch64") == 0) {
		g.arch = TRACE_ARCH_AARCH64;
	} else if (strcmp(info->target_name, "arm") == 0) {
		g.arch = TRACE_ARCH_ARM;
	} else if (strcmp(info->target_name, "riscv64") == 0) {
		g.arch = TRACE_ARCH_RISCV64;
	} else if (strcmp(info->target_name, "x86_64") == 0) {
		g.arch = TRACE_ARCH_X86_64;
	} else {
		say("target %s is not supported (aarch64, arm, riscv64, x86_64)", info->target_name);
		return -1;
	}
	int rc = trace_decoder_open(&g.dec, g.arch);
	if (rc < 0) {
		say("no decoder for %s: %s", info->target_name, strerror(-rc));
		return -1;
	}
	if (g.arch == TRACE_ARCH_ARM && (cs_open(CS_ARCH_ARM, CS_MODE_ARM, &g.cs_arm) != CS_ERR_OK ||
					 cs_open(CS_ARCH_ARM, CS_MODE_THUMB, &g.cs_thumb) != CS_ERR_OK)) {
		say("Capstone cannot open ARM/Thumb");
		return -1;
	}
	g.buf = malloc(OUT_BUF);
	if (!g.buf) {
		say("out of memory");
		return -1;
	}
	g.out = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (g.out < 0) {
		say("cannot create %s: %s", out, strerror(errno));
		return -1;
	}
	if (g.text) {
		char hdr[128];
		int n = snprintf(hdr, sizeof(hdr), "# edag_tracer (QEMU %s)\narch %s\n", info->target_name,
				 edag_arch_name(g.arch));
		out_put(hdr, (size_t)n);
	} else {
		uint8_t hdr[EDAG_BIN_HEADER];
		edag_bin_header_encode(hdr, g.arch);
		out_put(hdr, sizeof(hdr));
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
	return 0;
}
