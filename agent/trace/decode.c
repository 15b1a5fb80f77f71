#include "generated/config.h"
#ifdef CONFIG_AGENT_TRACER

#include "decode.h"

#include "cs_api.h"
#include "decode_riscv.h"
#include "isa_regs.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MAX (1u << 20) /* decoded instructions kept; cleared when full */

struct trace_decoder {
	enum trace_arch arch;
	bool thumb; /* arm: Thumb state */
	const struct cs_api *api; /* Capstone (cs_api.h); NULL for riscv64 */
	csh cs;     /* 0 for riscv64 (own decoder) */
	cs_insn *insn;
	uint8_t canon[4096]; /* capstone reg id → register number (filled lazily: 0xff = not yet) */
	/* pc → decoded, open addressing */
	uint64_t *keys;
	uint32_t *slots; /* index+1 into items, 0 = empty */
	size_t cap;      /* power of two */
	struct trace_decoded *items;
	size_t nitems, items_cap;
	uint64_t hits, misses;
};

uint8_t trace_reg_canonical(enum trace_arch arch, const char *name)
{
	if (!name)
		return TRACE_REG_NONE;
	char buf[16];
	size_t len = strlen(name);
	/* Capstone names x87 registers st(N); the numbering calls them stN. */
	if (len == 5 && strncmp(name, "st(", 3) == 0 && name[4] == ')') {
		snprintf(buf, sizeof(buf), "st%c", name[3]);
		name = buf;
		len = 3;
	}
	int r = isa_reg_number((unsigned)arch, name, len);
	if (r < 0)
		return TRACE_REG_NONE; /* segment selectors, system registers: no data dependency here */
	/* The program counter is not a data dependency: every branch writes it. */
	if ((arch == TRACE_ARCH_X86_64 && r == 17) || (arch == TRACE_ARCH_ARM && r == 16))
		return TRACE_REG_NONE;
	return (uint8_t)r;
}

int trace_decoder_open(struct trace_decoder **out, enum trace_arch arch)
{
	cs_arch a;
	cs_mode m;
	switch (arch) {
	case TRACE_ARCH_X86_64: a = CS_ARCH_X86; m = CS_MODE_64; break;
	case TRACE_ARCH_AARCH64: a = CS_ARCH_ARM64; m = CS_MODE_LITTLE_ENDIAN; break;
	case TRACE_ARCH_ARM: a = CS_ARCH_ARM; m = CS_MODE_ARM; break;
#ifdef CONFIG_AGENT_TRACE_RISCV
	case TRACE_ARCH_RISCV64: a = CS_ARCH_ALL; m = 0; break; /* not in Capstone 4: decode_riscv.c */
#endif
	default: return -ENOTSUP;
	}
	struct trace_decoder *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->arch = arch;
	if (arch != TRACE_ARCH_RISCV64) {
		int rc = cs_api_load(&d->api);
		if (rc < 0) {
			free(d);
			return rc;
		}
		if (d->api->open(a, m, &d->cs) != CS_ERR_OK) {
			free(d);
			return -ENOTSUP;
		}
		d->api->option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
		d->insn = d->api->malloc_insn(d->cs);
		if (!d->insn) {
			trace_decoder_close(d);
			return -ENOMEM;
		}
	}
	d->cap = 4096;
	d->keys = calloc(d->cap, sizeof(*d->keys));
	d->slots = calloc(d->cap, sizeof(*d->slots));
	memset(d->canon, 0xff, sizeof(d->canon));
	if (!d->keys || !d->slots) {
		trace_decoder_close(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void trace_decoder_close(struct trace_decoder *d)
{
	if (!d)
		return;
	if (d->insn)
		d->api->free_insn(d->insn, 1);
	if (d->cs)
		d->api->close(&d->cs);
	free(d->keys);
	free(d->slots);
	free(d->items);
	free(d);
}

int trace_decoder_set_thumb(struct trace_decoder *d, bool thumb)
{
	if (d->arch != TRACE_ARCH_ARM)
		return -EINVAL;
	if (d->thumb == thumb)
		return 0;
	if (d->api->option(d->cs, CS_OPT_MODE, thumb ? CS_MODE_THUMB : CS_MODE_ARM) != CS_ERR_OK)
		return -ENOTSUP;
	d->thumb = thumb;
	return 0;
}

uint64_t trace_decoder_hits(const struct trace_decoder *d)
{
	return d->hits;
}

uint64_t trace_decoder_misses(const struct trace_decoder *d)
{
	return d->misses;
}

static uint8_t canon_id(struct trace_decoder *d, unsigned id)
{
	if (id == 0)
		return TRACE_REG_NONE;
	if (id >= sizeof(d->canon))
		return trace_reg_canonical(d->arch, d->api->reg_name(d->cs, id));
	if (d->canon[id] == 0xff) /* not looked up yet (255 is no register number in use) */
		d->canon[id] = trace_reg_canonical(d->arch, d->api->reg_name(d->cs, id));
	return d->canon[id];
}

static void add_reg(uint8_t *arr, uint8_t *n, uint8_t max, uint8_t r)
{
	if (r == TRACE_REG_NONE)
		return;
	for (uint8_t i = 0; i < *n; i++)
		if (arr[i] == r)
			return;
	if (*n < max)
		arr[(*n)++] = r;
}

static void add_canon(struct trace_decoder *d, uint8_t *arr, uint8_t *n, uint8_t max, unsigned id)
{
	uint8_t r = canon_id(d, id);
	add_reg(arr, n, max, r);
	if (d->arch == TRACE_ARCH_ARM && r != TRACE_REG_NONE) {
		const char *name = d->api->reg_name(d->cs, id);
		if (name && name[0] == 'q')
			add_reg(arr, n, max, (uint8_t)(r + 1)); /* qN covers d2N and d2N+1 */
	}
}

static uint8_t width_of(const char *reg)
{
	if (!reg)
		return 8;
	switch (reg[0]) {
	case 'x': return 8;
	case 'w': return 4;
	case 'q': return 16;
	case 'd': return 8;
	case 's': return 4;
	case 'h': return 2;
	case 'b': return 1;
	case 'r': return 4; /* arm core registers */
	default: return 8;
	}
}

static void decode_x86(struct trace_decoder *d, const cs_insn *in, struct trace_decoded *o)
{
	const cs_x86 *x = &in->detail->x86;
	for (uint8_t i = 0; i < x->op_count && o->nmem < TRACE_MAX_MEM; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM)
			continue;
		if (in->id == X86_INS_LEA || in->id == X86_INS_NOP)
			continue; /* address arithmetic / hint: no access */
		struct trace_memop *m = &o->mem[o->nmem++];
		m->base = op->mem.base == X86_REG_RIP ? TRACE_REG_NONE : canon_id(d, op->mem.base);
		m->pc_relative = op->mem.base == X86_REG_RIP;
		m->pc_bias = (uint8_t)in->size;
		m->index = canon_id(d, op->mem.index);
		m->scale = (int8_t)op->mem.scale;
		m->disp = op->mem.disp;
		m->seg = op->mem.segment == X86_REG_FS ? 144 : op->mem.segment == X86_REG_GS ? 145 : TRACE_REG_NONE;
		m->size = op->size;
		m->read = (op->access & CS_AC_READ) != 0;
		m->write = (op->access & CS_AC_WRITE) != 0;
		if (!m->read && !m->write)
			m->read = true;
	}
	/* Implicit stack accesses. */
	bool push = in->id == X86_INS_PUSH || in->id == X86_INS_CALL || in->id == X86_INS_PUSHFQ;
	bool pop = in->id == X86_INS_POP || in->id == X86_INS_RET || in->id == X86_INS_POPFQ;
	if ((push || pop) && o->nmem < TRACE_MAX_MEM) {
		struct trace_memop *m = &o->mem[o->nmem++];
		memset(m, 0, sizeof(*m));
		m->base = 5; /* rsp */
		m->index = TRACE_REG_NONE;
		m->seg = TRACE_REG_NONE;
		m->scale = 1;
		m->size = 8;
		m->disp = push ? -8 : 0;
		m->write = push;
		m->read = pop;
	}
	if (in->id == X86_INS_LEAVE && o->nmem < TRACE_MAX_MEM) {
		struct trace_memop *m = &o->mem[o->nmem++];
		memset(m, 0, sizeof(*m));
		m->base = 6; /* rbp: mov rsp, rbp; pop rbp */
		m->index = TRACE_REG_NONE;
		m->seg = TRACE_REG_NONE;
		m->scale = 1;
		m->size = 8;
		m->read = true;
	}
}

static void decode_aarch64(struct trace_decoder *d, const cs_insn *in, struct trace_decoded *o)
{
	const cs_arm64 *a = &in->detail->arm64;
	const char *mn = in->mnemonic;
	bool is_load = mn[0] == 'l' && mn[1] == 'd';
	bool is_store = mn[0] == 's' && mn[1] == 't';
	if (!is_load && !is_store)
		return;
	const char *first = a->op_count > 0 && a->operands[0].type == ARM64_OP_REG
				    ? d->api->reg_name(d->cs, a->operands[0].reg)
				    : NULL;
	uint8_t size = width_of(first);
	size_t ml = strlen(mn);
	if (strstr(mn, "p") && (strncmp(mn, "ldp", 3) == 0 || strncmp(mn, "stp", 3) == 0 || strncmp(mn, "ldnp", 4) == 0 ||
				strncmp(mn, "stnp", 4) == 0))
		size = (uint8_t)(size * 2);
	else if (ml > 0 && mn[ml - 1] == 'b' && strncmp(mn, "ld", 2) == 0 && strcmp(mn, "ldsb") != 0)
		size = 1;
	else if (ml > 0 && mn[ml - 1] == 'b')
		size = 1;
	else if (ml > 0 && mn[ml - 1] == 'h')
		size = 2;
	else if (strcmp(mn, "ldrsw") == 0 || strcmp(mn, "ldursw") == 0)
		size = 4;
	for (uint8_t i = 0; i < a->op_count && o->nmem < TRACE_MAX_MEM; i++) {
		const cs_arm64_op *op = &a->operands[i];
		if (op->type != ARM64_OP_MEM)
			continue;
		struct trace_memop *m = &o->mem[o->nmem++];
		m->base = canon_id(d, op->mem.base);
		m->index = canon_id(d, op->mem.index);
		m->scale = (int8_t)(op->shift.type == ARM64_SFT_LSL ? 1 << op->shift.value : 1);
		m->disp = a->writeback && i + 1 < a->op_count && a->operands[i + 1].type == ARM64_OP_IMM
				  ? 0 /* post-index: the access uses the base as it is */
				  : op->mem.disp;
		m->seg = TRACE_REG_NONE;
		m->size = size;
		m->read = is_load;
		m->write = is_store;
	}
}

static void decode_arm(struct trace_decoder *d, const cs_insn *in, struct trace_decoded *o)
{
	const cs_arm *a = &in->detail->arm;
	const char *mn = in->mnemonic;
	bool is_load = strncmp(mn, "ldr", 3) == 0 || strncmp(mn, "vldr", 4) == 0;
	bool is_store = strncmp(mn, "str", 3) == 0 || strncmp(mn, "vstr", 4) == 0;
	if (!is_load && !is_store)
		return; /* ldm/stm/push/pop: multi-register transfers are not modelled yet */
	const char *first = a->op_count > 0 && a->operands[0].type == ARM_OP_REG ? d->api->reg_name(d->cs, a->operands[0].reg)
										  : NULL;
	uint8_t size = width_of(first);
	if (strstr(mn, "b") && (strncmp(mn, "ldrb", 4) == 0 || strncmp(mn, "strb", 4) == 0 || strncmp(mn, "ldrsb", 5) == 0))
		size = 1;
	else if (strncmp(mn, "ldrh", 4) == 0 || strncmp(mn, "strh", 4) == 0 || strncmp(mn, "ldrsh", 5) == 0)
		size = 2;
	else if (strncmp(mn, "ldrd", 4) == 0 || strncmp(mn, "strd", 4) == 0)
		size = 8;
	for (uint8_t i = 0; i < a->op_count && o->nmem < TRACE_MAX_MEM; i++) {
		const cs_arm_op *op = &a->operands[i];
		if (op->type != ARM_OP_MEM)
			continue;
		struct trace_memop *m = &o->mem[o->nmem++];
		m->base = canon_id(d, op->mem.base);
		m->pc_relative = m->base == 16; /* r15 = pc */
		m->pc_bias = d->thumb ? 4 : 8; /* pc reads as the instruction's address + 8 (Thumb: + 4) */
		if (m->pc_relative)
			m->base = TRACE_REG_NONE;
		m->index = canon_id(d, op->mem.index);
		m->scale = (int8_t)(op->mem.scale < 0 ? -1 : 1) * (int8_t)(op->mem.lshift ? 1 << op->mem.lshift : 1);
		m->disp = op->mem.disp;
		m->seg = TRACE_REG_NONE;
		m->size = size;
		m->read = is_load;
		m->write = is_store;
	}
}

static bool in_group(const cs_insn *in, uint8_t g)
{
	for (uint8_t i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

static void classify(struct trace_decoded *o, const cs_insn *in)
{
	bool store = false, load = false;
	for (uint8_t i = 0; i < o->nmem; i++) {
		store |= o->mem[i].write;
		load |= o->mem[i].read;
	}
	bool branch = in_group(in, CS_GRP_JUMP) || in_group(in, CS_GRP_CALL) || in_group(in, CS_GRP_RET) ||
		      in_group(in, CS_GRP_BRANCH_RELATIVE);
	bool fp = false;
	for (uint8_t i = 0; i < o->nread; i++)
		fp |= o->read[i] >= TRACE_REG_FLOAT_FIRST && o->read[i] <= TRACE_REG_FLOAT_LAST;
	for (uint8_t i = 0; i < o->nwrite; i++)
		fp |= o->written[i] >= TRACE_REG_FLOAT_FIRST && o->written[i] <= TRACE_REG_FLOAT_LAST;
	if (branch)
		o->iclass = TRACE_BRANCH;
	else if (store)
		o->iclass = TRACE_STORE;
	else if (load)
		o->iclass = TRACE_LOAD;
	else if (fp)
		o->iclass = TRACE_FLOAT;
	else if (o->nwrite > 0)
		o->iclass = TRACE_INT;
	else
		o->iclass = TRACE_OTHER;
}

/* Capstone 4 lists the destination of mov/movi/fmov/vmov of an immediate as
 * read too (movk/movt do read it): drop it when the instruction writes it. */
static void drop_dest_read(struct trace_decoder *d, struct trace_decoded *o, unsigned reg)
{
	uint8_t r = canon_id(d, reg);
	bool written = false;
	for (uint8_t i = 0; i < o->nwrite; i++)
		written |= o->written[i] == r;
	if (!written)
		return;
	uint8_t k = 0;
	for (uint8_t i = 0; i < o->nread; i++)
		if (o->read[i] != r)
			o->read[k++] = o->read[i];
	o->nread = k;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* aarch64: registers from the operand list, because Capstone 4's access lists
 * are wrong for aliases (cmp x0, x1 "writes" x0; lsl x1, x0, #3 "reads" x1).
 * The first operand is the destination of data-processing instructions (also
 * read by the accumulating ones: movk, bfi, fmla, ...); compares, branches and
 * stores only read (store-exclusives write their status register); loads write
 * the registers before the address (atomics ldadd/swp/cas read the first); a
 * base register with writeback is also written; flags as Capstone's implicit
 * lists and update_flags say. */
static void aarch64_regs(struct trace_decoder *d, const cs_insn *in, struct trace_decoded *o)
{
	const cs_arm64 *a = &in->detail->arm64;
	const char *mn = in->mnemonic;
	static const char *const nodest[] = {"cmp", "cmn", "tst", "fcmp", "fcmpe", "ccmp", "ccmn", "fccmp", "fccmpe",
					     "b", "bl", "br", "blr", "ret", "cbz", "cbnz", "tbz", "tbnz", "prfm",
					     "prfum", "msr", "dc", "ic", "hint", "nop", "isb", "dsb", "dmb", "svc"};
	static const char *const accum[] = {"movk", "bfi", "bfxil", "bfm", "fmla", "fmls", "mla", "mls", "sli",
					    "sri", "ins", "tbx", "cas", "casa", "casl", "casal", "bsl", "bit", "bif"};
	bool no_dest = starts(mn, "b."), acc = false;
	for (size_t i = 0; i < sizeof(nodest) / sizeof(nodest[0]); i++)
		no_dest |= strcmp(mn, nodest[i]) == 0;
	for (size_t i = 0; i < sizeof(accum) / sizeof(accum[0]); i++)
		acc |= strcmp(mn, accum[i]) == 0 || (starts(mn, "cas") && strlen(mn) <= 6);
	bool atomic = starts(mn, "ldadd") || starts(mn, "ldclr") || starts(mn, "ldeor") || starts(mn, "ldset") ||
		      starts(mn, "ldsmax") || starts(mn, "ldsmin") || starts(mn, "ldumax") || starts(mn, "ldumin") ||
		      starts(mn, "swp") || starts(mn, "cas");
	bool store = mn[0] == 's' && mn[1] == 't' && !atomic;
	bool store_status = store && (starts(mn, "stxr") || starts(mn, "stlxr") || starts(mn, "stxp") ||
				      starts(mn, "stlxp"));
	bool load = mn[0] == 'l' && mn[1] == 'd' && !atomic;
	bool before_mem = true;
	o->nread = o->nwrite = 0;
	for (uint8_t i = 0; i < a->op_count; i++) {
		const cs_arm64_op *op = &a->operands[i];
		if (op->type == ARM64_OP_MEM) {
			add_canon(d, o->read, &o->nread, TRACE_MAX_READ, op->mem.base);
			add_canon(d, o->read, &o->nread, TRACE_MAX_READ, op->mem.index);
			if (a->writeback)
				add_canon(d, o->written, &o->nwrite, TRACE_MAX_WRITE, op->mem.base);
			before_mem = false;
			continue;
		}
		if (op->type != ARM64_OP_REG)
			continue;
		bool w, r;
		if (load) {
			w = before_mem;
			r = !before_mem;
		} else if (store) {
			w = store_status && i == 0;
			r = !w;
		} else if (atomic) { /* ldadd xs, xt, [xn]; swp xs, xt, [xn]; cas xs, xt, [xn] */
			w = i == 1 || (i == 0 && acc);
			r = i == 0;
		} else {
			w = i == 0 && !no_dest;
			r = !w || acc;
		}
		if (r)
			add_canon(d, o->read, &o->nread, TRACE_MAX_READ, op->reg);
		if (w)
			add_canon(d, o->written, &o->nwrite, TRACE_MAX_WRITE, op->reg);
	}
	for (uint8_t i = 0; i < in->detail->regs_read_count; i++)
		add_canon(d, o->read, &o->nread, TRACE_MAX_READ, in->detail->regs_read[i]);
	for (uint8_t i = 0; i < in->detail->regs_write_count; i++)
		add_canon(d, o->written, &o->nwrite, TRACE_MAX_WRITE, in->detail->regs_write[i]);
	if (a->update_flags)
		add_reg(o->written, &o->nwrite, TRACE_MAX_WRITE, 128);
	if (strcmp(mn, "bl") == 0 || strcmp(mn, "blr") == 0)
		add_reg(o->written, &o->nwrite, TRACE_MAX_WRITE, 31); /* x30 */
	if (strcmp(mn, "ret") == 0 && a->op_count == 0)
		add_reg(o->read, &o->nread, TRACE_MAX_READ, 31);
}

/* What Capstone 4's register-access lists miss on arm and aarch64: the flags a
 * conditional instruction reads, the registers of a transfer list (vstmia,
 * st1 {v0.16b}: read by stores, written by loads), and moves of an immediate,
 * which read nothing of their destination. */
static void fixup_arm_regs(struct trace_decoder *d, const cs_insn *in, struct trace_decoded *o)
{
	bool cond, store, load;
	const char *mn = in->mnemonic;
	if (d->arch == TRACE_ARCH_ARM) {
		const cs_arm *a = &in->detail->arm;
		cond = a->cc != ARM_CC_INVALID && a->cc != ARM_CC_AL;
		store = strncmp(mn, "st", 2) == 0 || strncmp(mn, "vst", 3) == 0 || strncmp(mn, "push", 4) == 0 ||
			strncmp(mn, "vpush", 5) == 0;
		load = strncmp(mn, "ld", 2) == 0 || strncmp(mn, "vld", 3) == 0 || strncmp(mn, "pop", 3) == 0 ||
		       strncmp(mn, "vpop", 4) == 0;
		for (uint8_t i = 0; i < a->op_count; i++) {
			const cs_arm_op *op = &a->operands[i];
			if (op->type != ARM_OP_REG)
				continue;
			uint8_t acc = op->access ? op->access : store ? CS_AC_READ : load ? CS_AC_WRITE : 0;
			if (acc & CS_AC_READ)
				add_canon(d, o->read, &o->nread, TRACE_MAX_READ, op->reg);
			if (acc & CS_AC_WRITE)
				add_canon(d, o->written, &o->nwrite, TRACE_MAX_WRITE, op->reg);
		}
		if (a->op_count == 2 && a->operands[0].type == ARM_OP_REG &&
		    (a->operands[1].type == ARM_OP_IMM || a->operands[1].type == ARM_OP_FP) &&
		    strncmp(mn, "movt", 4) != 0)
			drop_dest_read(d, o, a->operands[0].reg);
	} else {
		const cs_arm64 *a = &in->detail->arm64;
		cond = a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL && a->cc != ARM64_CC_NV;
		aarch64_regs(d, in, o);
	}
	if (cond)
		add_reg(o->read, &o->nread, TRACE_MAX_READ, 128); /* cpsr / nzcv */
}

static int decode_one(struct trace_decoder *d, uint64_t pc, const uint8_t *code, size_t len, struct trace_decoded *o)
{
#ifdef CONFIG_AGENT_TRACE_RISCV
	if (d->arch == TRACE_ARCH_RISCV64)
		return trace_decode_riscv(pc, code, len, o);
#endif
	const uint8_t *p = code;
	size_t n = len;
	uint64_t addr = pc;
	if (!d->api->disasm_iter(d->cs, &p, &n, &addr, d->insn))
		return -EILSEQ;
	const cs_insn *in = d->insn;
	memset(o, 0, sizeof(*o));
	o->pc = pc;
	o->len = (uint8_t)in->size;
	snprintf(o->mnemonic, sizeof(o->mnemonic), "%s", in->mnemonic);
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0;
	if (d->api->regs_access(d->cs, in, rr, &nr, rw, &nw) == CS_ERR_OK) {
		for (uint8_t i = 0; i < nr; i++)
			add_canon(d, o->read, &o->nread, TRACE_MAX_READ, rr[i]);
		for (uint8_t i = 0; i < nw; i++)
			add_canon(d, o->written, &o->nwrite, TRACE_MAX_WRITE, rw[i]);
	}
	switch (d->arch) {
	case TRACE_ARCH_X86_64: decode_x86(d, in, o); break;
	case TRACE_ARCH_AARCH64: decode_aarch64(d, in, o); break;
	case TRACE_ARCH_ARM: decode_arm(d, in, o); break;
	default: break;
	}
	if (d->arch == TRACE_ARCH_ARM || d->arch == TRACE_ARCH_AARCH64)
		fixup_arm_regs(d, in, o);
	/* x86 xor r, r (and sub r, r) is a zeroing idiom: no true dependency on r. */
	if (d->arch == TRACE_ARCH_X86_64 && (in->id == X86_INS_XOR || in->id == X86_INS_SUB) &&
	    in->detail->x86.op_count == 2 && in->detail->x86.operands[0].type == X86_OP_REG &&
	    in->detail->x86.operands[1].type == X86_OP_REG &&
	    in->detail->x86.operands[0].reg == in->detail->x86.operands[1].reg) {
		uint8_t r = canon_id(d, in->detail->x86.operands[0].reg);
		uint8_t k = 0;
		for (uint8_t i = 0; i < o->nread; i++)
			if (o->read[i] != r)
				o->read[k++] = o->read[i];
		o->nread = k;
	}
	classify(o, in);
	return 0;
}

static uint64_t hash_pc(uint64_t pc)
{
	pc ^= pc >> 33;
	pc *= 0xff51afd7ed558ccdull;
	pc ^= pc >> 33;
	return pc;
}

static int cache_grow(struct trace_decoder *d)
{
	size_t ncap = d->cap * 2;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint32_t *ns = calloc(ncap, sizeof(*ns));
	if (!nk || !ns) {
		free(nk);
		free(ns);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->cap; i++) {
		if (!d->slots[i])
			continue;
		size_t j = hash_pc(d->keys[i]) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = d->keys[i];
		ns[j] = d->slots[i];
	}
	free(d->keys);
	free(d->slots);
	d->keys = nk;
	d->slots = ns;
	d->cap = ncap;
	return 0;
}

int trace_decode_lookup(struct trace_decoder *d, uint64_t pc, const struct trace_decoded **out)
{
	for (size_t j = hash_pc(pc) & (d->cap - 1); d->slots[j]; j = (j + 1) & (d->cap - 1))
		if (d->keys[j] == pc) {
			d->hits++;
			*out = &d->items[d->slots[j] - 1];
			return 0;
		}
	return -ENOENT;
}

int trace_decode(struct trace_decoder *d, uint64_t pc, const uint8_t *code, size_t len,
		 const struct trace_decoded **out)
{
	if (trace_decode_lookup(d, pc, out) == 0)
		return 0;
	size_t j = hash_pc(pc) & (d->cap - 1);
	while (d->slots[j])
		j = (j + 1) & (d->cap - 1);
	d->misses++;
	if (d->nitems == CACHE_MAX) { /* self-modifying or huge code: start over */
		memset(d->slots, 0, d->cap * sizeof(*d->slots));
		d->nitems = 0;
		j = hash_pc(pc) & (d->cap - 1);
	}
	if (d->nitems == d->items_cap) {
		size_t nc = d->items_cap ? d->items_cap * 2 : 1024;
		struct trace_decoded *ni = realloc(d->items, nc * sizeof(*ni));
		if (!ni)
			return -ENOMEM;
		d->items = ni;
		d->items_cap = nc;
	}
	struct trace_decoded *o = &d->items[d->nitems];
	int rc = decode_one(d, pc, code, len, o);
	if (rc < 0)
		return rc;
	d->nitems++;
	d->keys[j] = pc;
	d->slots[j] = (uint32_t)d->nitems;
	if (d->nitems * 2 > d->cap && cache_grow(d) < 0)
		return -ENOMEM;
	*out = o;
	return 0;
}

uint64_t trace_memop_address(const struct trace_decoded *insn, const struct trace_memop *m,
			     uint64_t (*reg_value)(void *ctx, uint8_t reg), void *ctx)
{
	uint64_t a = (uint64_t)m->disp;
	if (m->pc_relative)
		a += insn->pc + m->pc_bias;
	if (m->base != TRACE_REG_NONE)
		a += reg_value(ctx, m->base);
	if (m->index != TRACE_REG_NONE)
		a += reg_value(ctx, m->index) * (uint64_t)(int64_t)m->scale;
	if (m->seg != TRACE_REG_NONE)
		a += reg_value(ctx, m->seg);
	return a;
}

#endif /* CONFIG_AGENT_TRACER */
