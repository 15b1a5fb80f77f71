/* EDAN's QEMU execlog lines (RISC-V): "CPU;0xPC;DISASM[;0xADDR]...". Pure:
 * no I/O, no copies (fields are pointer + length into the line), mnemonics
 * looked up in a hash table, register names decided on their first bytes. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"
#include "trace/lex.h"

#define perr lx_err
#define eq lx_eq
#define trim lx_trim

/* ---------------------------------------------------------------- mnemonics */

enum mkind {
	MK_NONE,
	MK_LOAD,   /* size */
	MK_STORE,  /* size */
	MK_BRANCH, /* conditional: every operand read */
	MK_J,	   /* j, tail: no register */
	MK_JR,
	MK_RET,
	MK_JAL, /* jal, call */
	MK_JALR,
	MK_SYS,	  /* class other, no register effect */
	MK_GEN,	  /* generic: first operand written, the others read */
	MK_FBASE, /* generic, also with any ".fmt" suffix (fadd.d, fcvt.w.s) */
};

struct mnem {
	const char *name;
	uint8_t kind, size;
};

static const struct mnem mnems[] = {
    {"lb", MK_LOAD, 1}, {"lbu", MK_LOAD, 1}, {"lh", MK_LOAD, 2}, {"lhu", MK_LOAD, 2}, {"lw", MK_LOAD, 4},
    {"lwu", MK_LOAD, 4}, {"ld", MK_LOAD, 8}, {"flh", MK_LOAD, 2}, {"flw", MK_LOAD, 4}, {"fld", MK_LOAD, 8},
    {"flq", MK_LOAD, 16}, {"sb", MK_STORE, 1}, {"sh", MK_STORE, 2}, {"sw", MK_STORE, 4}, {"sd", MK_STORE, 8},
    {"fsh", MK_STORE, 2}, {"fsw", MK_STORE, 4}, {"fsd", MK_STORE, 8}, {"fsq", MK_STORE, 16},
    {"beq", MK_BRANCH, 0}, {"bne", MK_BRANCH, 0}, {"blt", MK_BRANCH, 0}, {"bge", MK_BRANCH, 0},
    {"bltu", MK_BRANCH, 0}, {"bgeu", MK_BRANCH, 0}, {"beqz", MK_BRANCH, 0}, {"bnez", MK_BRANCH, 0},
    {"blez", MK_BRANCH, 0}, {"bgez", MK_BRANCH, 0}, {"bltz", MK_BRANCH, 0}, {"bgtz", MK_BRANCH, 0},
    {"bgt", MK_BRANCH, 0}, {"ble", MK_BRANCH, 0}, {"bgtu", MK_BRANCH, 0}, {"bleu", MK_BRANCH, 0},
    {"j", MK_J, 0}, {"tail", MK_J, 0}, {"jr", MK_JR, 0}, {"ret", MK_RET, 0}, {"jal", MK_JAL, 0},
    {"call", MK_JAL, 0}, {"jalr", MK_JALR, 0}, {"ecall", MK_SYS, 0}, {"ebreak", MK_SYS, 0},
    {"fence", MK_SYS, 0}, {"fence.i", MK_SYS, 0}, {"nop", MK_SYS, 0}, {"wfi", MK_SYS, 0}, {"mret", MK_SYS, 0},
    {"sret", MK_SYS, 0}, {"uret", MK_SYS, 0},
    /* generic integer (RV64I, M, Zba, Zbb, Zbs, Zicond, pseudo-instructions) */
    {"add", MK_GEN, 0}, {"addi", MK_GEN, 0}, {"addw", MK_GEN, 0}, {"addiw", MK_GEN, 0}, {"sub", MK_GEN, 0},
    {"subw", MK_GEN, 0}, {"and", MK_GEN, 0}, {"andi", MK_GEN, 0}, {"or", MK_GEN, 0}, {"ori", MK_GEN, 0},
    {"xor", MK_GEN, 0}, {"xori", MK_GEN, 0}, {"sll", MK_GEN, 0}, {"slli", MK_GEN, 0}, {"sllw", MK_GEN, 0},
    {"slliw", MK_GEN, 0}, {"srl", MK_GEN, 0}, {"srli", MK_GEN, 0}, {"srlw", MK_GEN, 0}, {"srliw", MK_GEN, 0},
    {"sra", MK_GEN, 0}, {"srai", MK_GEN, 0}, {"sraw", MK_GEN, 0}, {"sraiw", MK_GEN, 0}, {"slt", MK_GEN, 0},
    {"slti", MK_GEN, 0}, {"sltu", MK_GEN, 0}, {"sltiu", MK_GEN, 0}, {"lui", MK_GEN, 0}, {"auipc", MK_GEN, 0},
    {"mul", MK_GEN, 0}, {"mulh", MK_GEN, 0}, {"mulhsu", MK_GEN, 0}, {"mulhu", MK_GEN, 0}, {"mulw", MK_GEN, 0},
    {"div", MK_GEN, 0}, {"divu", MK_GEN, 0}, {"divw", MK_GEN, 0}, {"divuw", MK_GEN, 0}, {"rem", MK_GEN, 0},
    {"remu", MK_GEN, 0}, {"remw", MK_GEN, 0}, {"remuw", MK_GEN, 0}, {"mv", MK_GEN, 0}, {"li", MK_GEN, 0},
    {"la", MK_GEN, 0}, {"lla", MK_GEN, 0}, {"not", MK_GEN, 0}, {"neg", MK_GEN, 0}, {"negw", MK_GEN, 0},
    {"sext.w", MK_GEN, 0}, {"sext.b", MK_GEN, 0}, {"sext.h", MK_GEN, 0}, {"zext.b", MK_GEN, 0},
    {"zext.h", MK_GEN, 0}, {"zext.w", MK_GEN, 0}, {"seqz", MK_GEN, 0}, {"snez", MK_GEN, 0}, {"sltz", MK_GEN, 0},
    {"sgtz", MK_GEN, 0}, {"sh1add", MK_GEN, 0}, {"sh2add", MK_GEN, 0}, {"sh3add", MK_GEN, 0},
    {"add.uw", MK_GEN, 0}, {"sh1add.uw", MK_GEN, 0}, {"sh2add.uw", MK_GEN, 0}, {"sh3add.uw", MK_GEN, 0},
    {"slli.uw", MK_GEN, 0}, {"andn", MK_GEN, 0}, {"orn", MK_GEN, 0}, {"xnor", MK_GEN, 0}, {"clz", MK_GEN, 0},
    {"clzw", MK_GEN, 0}, {"ctz", MK_GEN, 0}, {"ctzw", MK_GEN, 0}, {"cpop", MK_GEN, 0}, {"cpopw", MK_GEN, 0},
    {"max", MK_GEN, 0}, {"maxu", MK_GEN, 0}, {"min", MK_GEN, 0}, {"minu", MK_GEN, 0}, {"rol", MK_GEN, 0},
    {"rolw", MK_GEN, 0}, {"ror", MK_GEN, 0}, {"rori", MK_GEN, 0}, {"roriw", MK_GEN, 0}, {"rorw", MK_GEN, 0},
    {"rev8", MK_GEN, 0}, {"orc.b", MK_GEN, 0}, {"bclr", MK_GEN, 0}, {"bclri", MK_GEN, 0}, {"bext", MK_GEN, 0},
    {"bexti", MK_GEN, 0}, {"binv", MK_GEN, 0}, {"binvi", MK_GEN, 0}, {"bset", MK_GEN, 0}, {"bseti", MK_GEN, 0},
    {"czero.eqz", MK_GEN, 0}, {"czero.nez", MK_GEN, 0}, {"unimp", MK_GEN, 0}, {"addi4spn", MK_GEN, 0},
    {"addi16sp", MK_GEN, 0}, {"rdcycle", MK_GEN, 0}, {"rdtime", MK_GEN, 0}, {"rdinstret", MK_GEN, 0},
    /* CSR access (class other) and the F-extension CSR pseudo-instructions */
    {"csrr", MK_GEN, 0}, {"csrw", MK_GEN, 0}, {"csrs", MK_GEN, 0}, {"csrc", MK_GEN, 0}, {"csrrw", MK_GEN, 0},
    {"csrrs", MK_GEN, 0}, {"csrrc", MK_GEN, 0}, {"csrrwi", MK_GEN, 0}, {"csrrsi", MK_GEN, 0},
    {"csrrci", MK_GEN, 0}, {"csrwi", MK_GEN, 0}, {"csrsi", MK_GEN, 0}, {"csrci", MK_GEN, 0}, {"frcsr", MK_GEN, 0},
    {"fscsr", MK_GEN, 0}, {"frrm", MK_GEN, 0}, {"fsrm", MK_GEN, 0}, {"frflags", MK_GEN, 0},
    {"fsflags", MK_GEN, 0}, {"fsrmi", MK_GEN, 0}, {"fsflagsi", MK_GEN, 0},
    /* floating point (F, D, Q, Zfh, Zfa): the base, with any format suffix */
    {"fadd", MK_FBASE, 0}, {"fsub", MK_FBASE, 0}, {"fmul", MK_FBASE, 0}, {"fdiv", MK_FBASE, 0},
    {"fsqrt", MK_FBASE, 0}, {"fmin", MK_FBASE, 0}, {"fmax", MK_FBASE, 0}, {"fmadd", MK_FBASE, 0},
    {"fmsub", MK_FBASE, 0}, {"fnmadd", MK_FBASE, 0}, {"fnmsub", MK_FBASE, 0}, {"fsgnj", MK_FBASE, 0},
    {"fsgnjn", MK_FBASE, 0}, {"fsgnjx", MK_FBASE, 0}, {"fcvt", MK_FBASE, 0}, {"fmv", MK_FBASE, 0},
    {"feq", MK_FBASE, 0}, {"flt", MK_FBASE, 0}, {"fle", MK_FBASE, 0}, {"fclass", MK_FBASE, 0},
    {"fabs", MK_FBASE, 0}, {"fneg", MK_FBASE, 0}, {"fli", MK_FBASE, 0}, {"fminm", MK_FBASE, 0},
    {"fmaxm", MK_FBASE, 0}, {"fround", MK_FBASE, 0}, {"froundnx", MK_FBASE, 0}, {"fcvtmod", MK_FBASE, 0},
    {"fleq", MK_FBASE, 0}, {"fltq", MK_FBASE, 0},
};

/* Open-addressing table over the mnemonic's first 16 bytes, filled once. */
#define MT_BITS 10
#define MT_SLOTS (1u << MT_BITS)
#define MNEM_MAX 16

struct mslot {
	uint64_t k0, k1;
	uint8_t kind, size;
};
static struct mslot mtab[MT_SLOTS];
static pthread_once_t mtab_once = PTHREAD_ONCE_INIT;
static int mtab_ready; /* set (release) once mtab is filled: skips pthread_once per line */

static inline void mkey(const char *s, size_t len, uint64_t *k0, uint64_t *k1)
{
	uint64_t a = 0, b = 0;
	for (size_t i = 0; i < len && i < 8; i++)
		a |= (uint64_t)(unsigned char)s[i] << (8 * i);
	for (size_t i = 8; i < len; i++)
		b |= (uint64_t)(unsigned char)s[i] << (8 * (i - 8));
	*k0 = a;
	*k1 = b;
}

static inline unsigned mhash(uint64_t k0, uint64_t k1)
{
	return (unsigned)(((k0 * 0x9E3779B97F4A7C15ull) ^ (k1 * 0xC2B2AE3D27D4EB4Full)) >> (64 - MT_BITS));
}

static void mtab_fill(void)
{
	for (size_t i = 0; i < sizeof(mnems) / sizeof(mnems[0]); i++) {
		uint64_t k0, k1;
		mkey(mnems[i].name, strlen(mnems[i].name), &k0, &k1);
		unsigned h = mhash(k0, k1);
		while (mtab[h].kind != MK_NONE)
			h = (h + 1) & (MT_SLOTS - 1);
		mtab[h] = (struct mslot){k0, k1, mnems[i].kind, mnems[i].size};
	}
	__atomic_store_n(&mtab_ready, 1, __ATOMIC_RELEASE);
}

static inline void mtab_init(void)
{
	if (!__atomic_load_n(&mtab_ready, __ATOMIC_ACQUIRE))
		pthread_once(&mtab_once, mtab_fill);
}

static inline const struct mslot *mlookup(const char *s, size_t len)
{
	if (len == 0 || len > MNEM_MAX)
		return NULL;
	uint64_t k0, k1;
	mkey(s, len, &k0, &k1);
	for (unsigned h = mhash(k0, k1);; h = (h + 1) & (MT_SLOTS - 1)) {
		const struct mslot *m = &mtab[h];
		if (m->kind == MK_NONE)
			return NULL;
		if (m->k0 == k0 && m->k1 == k1)
			return m;
	}
}

/* ---------------------------------------------------------------- operands */

struct operand {
	const char *s;
	size_t len;
};

static int mem_size_suffix(const char *m, size_t ml)
{
	/* ".w" / ".d" after the base (lr.w.aq, amoadd.d, ...) */
	for (size_t i = 0; i + 1 < ml; i++)
		if (m[i] == '.' && (m[i + 1] == 'w' || m[i + 1] == 'd') && (i + 2 == ml || m[i + 2] == '.'))
			return m[i + 1] == 'w' ? 4 : 8;
	return 0;
}

static int rv_reg(const char *s, size_t len)
{
	if (len == 0 || (s[0] >= '0' && s[0] <= '9') || s[0] == '-')
		return -ENOENT; /* an immediate */
	int r = lx_rv_reg(s, len);
	return r != -2 ? r : edag_reg_number(EDAG_ARCH_RISCV64, s, len);
}

static inline void add_reg(struct edag_insn *in, bool write, const char *s, size_t len)
{
	int r = rv_reg(s, len);
	if (r < 0)
		return; /* immediates, CSR names, rounding modes */
	if (write && in->nwrite < EDAG_MAX_REGS)
		in->wr[in->nwrite++] = (uint8_t)r;
	else if (!write && in->nread < EDAG_MAX_REGS)
		in->rd[in->nread++] = (uint8_t)r;
}

static inline const char *find_ch(const char *s, size_t len, char c)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == c)
			return s + i;
	return NULL;
}

/* A RISC-V rounding-mode operand (rne, rtz, rdn, rup, rmm, dyn): no register. */
static bool rounding_mode(struct operand o)
{
	static const char names[6][4] = {"rne", "rtz", "rdn", "rup", "rmm", "dyn"};
	if (o.len != 3)
		return false;
	for (size_t i = 0; i < 6; i++)
		if (memcmp(o.s, names[i], 3) == 0)
			return true;
	return false;
}

/* "off(reg)" or "(reg)": the base register, read. */
static void add_base(struct edag_insn *in, struct operand o)
{
	const char *p = find_ch(o.s, o.len, '(');
	const char *q = p ? find_ch(p, o.len - (size_t)(p - o.s), ')') : NULL;
	if (p && q) {
		const char *b = p + 1;
		size_t bl = (size_t)(q - p - 1);
		trim(&b, &bl);
		add_reg(in, false, b, bl);
	} else {
		add_reg(in, false, o.s, o.len);
	}
}

/* Bytes an operand may hold: registers, immediates, CSR names, off(reg),
 * vector suffixes (v0.t, e32, m1) and symbols (sym+4, <sym>); bit 2: bytes
 * of a mnemonic. */
#define CH_OP 1
#define CH_MN 2
#define R(a, b, f) [a... b] = f
static const uint8_t ch_class[256] = {
    R('a', 'z', CH_OP | CH_MN), R('0', '9', CH_OP | CH_MN), R('A', 'Z', CH_OP), ['_'] = CH_OP | CH_MN,
    ['.'] = CH_OP | CH_MN,	['-'] = CH_OP,		    ['+'] = CH_OP,	  ['('] = CH_OP,
    [')'] = CH_OP,		['<'] = CH_OP,		    ['>'] = CH_OP,	  ['@'] = CH_OP,
    ['$'] = CH_OP,		[':'] = CH_OP,
};
#undef R

static inline bool operand_char(unsigned char c)
{
	return ch_class[c] & CH_OP;
}

static bool operand_ok(struct operand o)
{
	for (size_t i = 0; i < o.len; i++) {
		if (operand_char((unsigned char)o.s[i]))
			continue;
		if (!lx_space((unsigned char)o.s[i]))
			return false;
		/* "0x104d4 <main+12>": a symbol after the value is the only space allowed */
		size_t j = i;
		while (j < o.len && lx_space((unsigned char)o.s[j]))
			j++;
		return j < o.len && o.s[j] == '<' && o.s[o.len - 1] == '>';
	}
	return true;
}

static inline bool mnem_char(unsigned char c)
{
	return ch_class[c] & CH_MN;
}

/* ---------------------------------------------------------------- lines */

static int need_ops(const char *m, size_t ml, size_t nop, size_t want, const char *shape, char *err, size_t errlen)
{
	if (nop >= want)
		return 0;
	return perr(err, errlen, "'%.*s' wants %zu operands (%s), not %zu", (int)ml, m, want, shape, nop);
}

/* What the mnemonic and operands of an instruction mean (both tokenisers
 * below end here). in is zeroed, pc/addr/cpu already set. */
static int decode(const char *m, size_t ml, const struct operand *op, size_t nop, bool has_addr,
		  struct edag_insn *in, struct edag_edan_info *info, char *err, size_t errlen)
{
	info->mnem = m;
	info->mnem_len = ml;
	const struct mslot *ms = mlookup(m, ml);
	if (!ms) {
		const char *dot = memchr(m, '.', ml);
		if (dot) {
			ms = mlookup(m, (size_t)(dot - m));
			if (ms && ms->kind != MK_FBASE)
				ms = NULL;
		}
	}
	unsigned kind = ms ? ms->kind : MK_NONE;
	unsigned size = 0;
	if (kind == MK_LOAD || (ml > 3 && memcmp(m, "lr.", 3) == 0)) {
		if (need_ops(m, ml, nop, 2, "rd, offset(base)", err, errlen) < 0)
			return -EINVAL;
		in->cls = EDAG_LOAD;
		in->mem = EDAG_MEM_READ;
		size = kind == MK_LOAD ? ms->size : (unsigned)mem_size_suffix(m, ml);
		add_reg(in, true, op[0].s, op[0].len);
		add_base(in, op[1]);
	} else if (kind == MK_STORE) {
		if (need_ops(m, ml, nop, 2, "rs, offset(base)", err, errlen) < 0)
			return -EINVAL;
		in->cls = EDAG_STORE;
		in->mem = EDAG_MEM_WRITE;
		size = ms->size;
		add_reg(in, false, op[0].s, op[0].len);
		add_base(in, op[1]);
	} else if ((ml > 3 && memcmp(m, "sc.", 3) == 0) || (ml > 4 && memcmp(m, "amo", 3) == 0)) {
		if (need_ops(m, ml, nop, 3, "rd, rs, (base)", err, errlen) < 0)
			return -EINVAL;
		bool sc = m[0] == 's';
		in->cls = sc ? EDAG_STORE : EDAG_LOAD;
		in->mem = sc ? EDAG_MEM_WRITE : EDAG_MEM_READ | EDAG_MEM_WRITE;
		size = (unsigned)mem_size_suffix(m, ml);
		add_reg(in, true, op[0].s, op[0].len);
		add_reg(in, false, op[1].s, op[1].len);
		add_base(in, op[2]);
	} else if (kind == MK_BRANCH) {
		in->cls = EDAG_BRANCH;
		for (size_t i = 0; i < nop; i++)
			add_reg(in, false, op[i].s, op[i].len);
	} else if (kind == MK_J || kind == MK_JR || kind == MK_RET || kind == MK_JAL || kind == MK_JALR) {
		in->cls = EDAG_BRANCH;
		if (kind == MK_RET) {
			in->rd[in->nread++] = 1; /* ra */
		} else if (kind == MK_JR) {
			if (nop >= 1)
				add_base(in, op[0]);
		} else if (kind == MK_JAL) {
			if (nop >= 2)
				add_reg(in, true, op[0].s, op[0].len);
			else
				in->wr[in->nwrite++] = 1; /* jal offset: rd = ra */
		} else if (kind == MK_JALR) {
			if (nop == 1) {
				add_base(in, op[0]);
				in->wr[in->nwrite++] = 1;
			} else {
				if (nop >= 1)
					add_reg(in, true, op[0].s, op[0].len);
				for (size_t i = 1; i < nop; i++)
					add_base(in, op[i]);
			}
		}
	} else if (kind == MK_SYS) {
		in->cls = EDAG_OTHER;
	} else {
		/* generic: first operand written, the others read. Unknown
		 * mnemonics too (flagged): their class is a guess */
		info->unknown = kind == MK_NONE && m[0] != 'v';
		if (ml >= 3 && memcmp(m, "csr", 3) == 0)
			in->cls = EDAG_OTHER;
		else if (m[0] == 'f')
			in->cls = EDAG_FLOAT;
		else if (m[0] == 'v')
			in->cls = EDAG_OTHER;
		else
			in->cls = EDAG_INT;
		/* QEMU 7.2 prints an explicit rounding mode first (fadd.d dyn,fa5,fa5,fa4): the
		 * destination is the first operand after it */
		size_t dst = 0;
		while (dst < nop && rounding_mode(op[dst]))
			dst++;
		for (size_t i = dst; i < nop; i++) {
			if (find_ch(op[i].s, op[i].len, '('))
				add_base(in, op[i]);
			else
				add_reg(in, i == dst, op[i].s, op[i].len);
		}
	}
	if (in->mem) {
		if (!has_addr) {
			/* a memory instruction the tracer gave no address for: keep the vertex, no access */
			in->mem = 0;
			info->no_addr = true;
		} else {
			if (!size)
				return perr(err, errlen, "unknown access size of '%.*s'", (int)ml, m);
			in->size = size;
		}
	}
	return 1;
}

int edag_edan_parse(const char *line, size_t len, struct edag_insn *in, struct edag_edan_info *info, char *err,
		    size_t errlen)
{
	mtab_init();
	trim(&line, &len);
	memset(in, 0, sizeof(*in));
	info->cpu = -1;
	info->unknown = info->no_addr = false;
	info->mnem = NULL;
	info->mnem_len = 0;
	if (!len || line[0] == '#')
		return 0;
	/* split on ';' */
	struct operand f[8];
	size_t nf = 0;
	for (const char *s = line, *e = line + len; nf < 8;) {
		const char *c = memchr(s, ';', (size_t)(e - s));
		size_t l = c ? (size_t)(c - s) : (size_t)(e - s);
		f[nf].s = s;
		f[nf].len = l;
		trim(&f[nf].s, &f[nf].len);
		nf++;
		if (!c)
			break;
		s = c + 1;
	}
	size_t k = 0;
	uint64_t v;
	if (nf > 1 && f[0].len && f[0].len <= 4 && lx_dec(f[0].s, f[0].len, &v) == 0) {
		info->cpu = (int)v;
		k++;
	}
	if (k < nf && f[k].len > 2 && f[k].s[0] == '0' && f[k].s[1] == 'x') {
		if (lx_hex(f[k].s, f[k].len, &in->pc) < 0)
			return perr(err, errlen, "bad pc '%.*s'", (int)f[k].len, f[k].s);
		k++;
	}
	if (k >= nf || !f[k].len)
		return perr(err, errlen, "no instruction in '%.*s'", (int)len, line);
	struct operand dis = f[k++];
	bool has_addr = false;
	if (k < nf && f[k].len) {
		if (lx_hex(f[k].s, f[k].len, &in->addr) < 0)
			return perr(err, errlen, "bad address '%.*s'", (int)f[k].len, f[k].s);
		has_addr = true;
	}
	/* strip "# comment" */
	const char *hash = memchr(dis.s, '#', dis.len);
	if (hash)
		dis.len = (size_t)(hash - dis.s);
	trim(&dis.s, &dis.len);
	size_t ml = 0;
	while (ml < dis.len && !lx_space((unsigned char)dis.s[ml]))
		ml++;
	const char *m = dis.s;
	for (size_t i = 0; i < ml; i++)
		if (!mnem_char((unsigned char)m[i]))
			return perr(err, errlen, "bad mnemonic '%.*s'", (int)ml, m);
	if (ml == 0)
		return perr(err, errlen, "no instruction in '%.*s'", (int)len, line);
	if (ml > 2 && m[0] == 'c' && m[1] == '.') {
		m += 2;
		ml -= 2;
	}
	struct operand op[8];
	size_t nop = 0;
	const char *r = m + ml;
	size_t rl = dis.len - (size_t)(r - dis.s);
	trim(&r, &rl);
	while (rl && nop < 8) {
		const char *c = memchr(r, ',', rl);
		size_t l = c ? (size_t)(c - r) : rl;
		op[nop].s = r;
		op[nop].len = l;
		trim(&op[nop].s, &op[nop].len);
		if (!operand_ok(op[nop]))
			return perr(err, errlen, "bad operand '%.*s' of '%.*s'", (int)op[nop].len, op[nop].s, (int)ml, m);
		nop++;
		if (!c)
			break;
		r = c + 1;
		rl -= l + 1;
	}

	return decode(m, ml, op, nop, has_addr, in, info, err, errlen);
}

int edag_parse_edan_line(const char *line, size_t len, struct edag_insn *in, int *cpu, char *err, size_t errlen)
{
	struct edag_edan_info info;
	int rc = edag_edan_parse(line, len, in, &info, err, errlen);
	*cpu = info.cpu;
	return rc;
}

/* ---------------------------------------------------------------- one pass over a buffer */

/* A decoded-instruction cache by PC: a loop's lines repeat their
 * disassembly, so a line whose text after the PC equals the cached one's
 * gets the cached decoding (only pc and addr differ). */
#define DC_SLOTS 4096
#define DC_TEXT 46

struct dc_entry {
	uint64_t pc;
	struct edag_insn in; /* pc and addr not used */
	uint8_t dlen, has_addr, unknown, no_addr, mnem_off, mnem_len;
	char dis[DC_TEXT];
};

struct edag_edan_cache {
	struct dc_entry e[DC_SLOTS];
	uint32_t lookups, hits; /* of the current period of 65536 lookups */
	uint32_t bypass;	/* lines left without the cache (it hit under 1/8 in the last period) */
};

struct edag_edan_cache *edag_edan_cache_new(void)
{
	return calloc(1, sizeof(struct edag_edan_cache));
}

void edag_edan_cache_free(struct edag_edan_cache *c)
{
	free(c);
}

/* ";[0x]ADDR[;...]" or nothing, then '\n': -ENOTSUP for another shape. */
static inline int addr_part(const char **sp, const char *end, bool *has_addr, uint64_t *addr)
{
	const char *s = *sp;
	*has_addr = false;
	if (*s == ';') {
		s++;
		if (s + 1 < end && s[0] == '0' && s[1] == 'x')
			s += 2;
		const char *d = s;
		uint64_t v = 0;
		int h;
		while (s < end && s - d <= 16 && (h = lx_hexval((unsigned char)*s)) >= 0)
			v = v << 4 | (unsigned)h, s++;
		if (s == d || s - d > 16 || s >= end)
			return -ENOTSUP;
		if (*s == ';') {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			if (!nl)
				return -ENOTSUP;
			s = nl;
		}
		*addr = v;
		*has_addr = true;
	}
	if (s >= end || *s != '\n')
		return -ENOTSUP;
	*sp = s;
	return 0;
}

/* The common shape of a line, tokenised in one pass with the line split:
 * [CPU;][0xPC;]MNEMONIC[ OP,OP...][ # comment][;[0x]ADDR[;...]]\n, operands
 * without spaces. -ENOTSUP for any other shape (edag_edan_parse decides
 * then, so both give the same answer), -EINVAL for a bad instruction. */
static int fast_line(const char *p, const char *end, size_t *used, struct edag_insn *in,
		     struct edag_edan_info *info, struct edag_edan_cache *cache, char *err, size_t errlen)
{
	const char *s = p;
	info->cpu = -1;
	info->unknown = info->no_addr = false;
	info->mnem = NULL;
	info->mnem_len = 0;
	if (s < end && *s >= '0' && *s <= '9' && !(s + 1 < end && s[0] == '0' && s[1] == 'x')) {
		const char *d = s;
		int v = 0;
		while (s < end && *s >= '0' && *s <= '9' && s - d < 5)
			v = v * 10 + (*s++ - '0');
		if (s - d > 4 || s >= end || *s != ';')
			return -ENOTSUP;
		info->cpu = v;
		s++;
	}
	uint64_t pc = 0;
	if (s + 1 < end && s[0] == '0' && s[1] == 'x') {
		s += 2;
		const char *d = s;
		int h;
		while (s < end && s - d <= 16 && (h = lx_hexval((unsigned char)*s)) >= 0)
			pc = pc << 4 | (unsigned)h, s++;
		if (s == d || s - d > 16 || s >= end || *s != ';')
			return -ENOTSUP;
		s++;
	}
	const char *dis = s; /* the disassembly: up to the next ';' or '\n' */
	struct dc_entry *ce = NULL;
	bool has_addr;
	uint64_t addr = 0;
	if (cache && cache->bypass) {
		cache->bypass--;
	} else if (cache) {
		if (++cache->lookups == 65536) {
			cache->bypass = cache->hits < 65536 / 8 ? 1u << 20 : 0;
			cache->lookups = cache->hits = 0;
		}
		const char *e = s;
		while (e < end && *e != ';' && *e != '\n')
			e++;
		if (e >= end)
			return -ENOTSUP;
		size_t dl = (size_t)(e - dis);
		if (addr_part(&e, end, &has_addr, &addr) < 0)
			return -ENOTSUP;
		ce = &cache->e[(pc >> 1) & (DC_SLOTS - 1)];
		/* empty slots (dlen 0) never answer */
		if (dl && ce->dlen == dl && ce->pc == pc && ce->has_addr == has_addr && memcmp(ce->dis, dis, dl) == 0) {
			*in = ce->in;
			in->pc = pc;
			in->addr = has_addr ? addr : 0;
			info->unknown = ce->unknown;
			info->no_addr = ce->no_addr;
			info->mnem = dis + ce->mnem_off;
			info->mnem_len = ce->mnem_len;
			*used = (size_t)(e + 1 - p);
			cache->hits++;
			return 1;
		}
		if (dl == 0 || dl > DC_TEXT)
			ce = NULL;
	}
	memset(in, 0, sizeof(*in));
	in->pc = pc;
	const char *m = s;
	while (s < end && mnem_char((unsigned char)*s))
		s++;
	size_t ml = (size_t)(s - m);
	if (ml == 0 || s >= end || (*s != ' ' && *s != ';' && *s != '\n'))
		return -ENOTSUP;
	struct operand op[8];
	size_t nop = 0;
	if (*s == ' ') {
		while (s < end && *s == ' ')
			s++;
		while (s < end && *s != ';' && *s != '\n' && *s != '#') {
			if (nop == 8)
				return -ENOTSUP;
			const char *o = s;
			if (*s == ' ')
				return -ENOTSUP; /* "a0, a1" */
			while (s < end && operand_char((unsigned char)*s))
				s++;
			if (s >= end)
				return -ENOTSUP;
			op[nop].s = o;
			op[nop].len = (size_t)(s - o);
			nop++;
			if (*s == ',') {
				s++;
				continue;
			}
			if (*s == ' ') {
				while (s < end && *s == ' ')
					s++;
				if (s < end && (*s == '#' || *s == ';' || *s == '\n'))
					break;
				return -ENOTSUP;
			}
			if (*s != ';' && *s != '\n' && *s != '#')
				return -ENOTSUP;
		}
		if (s < end && *s == '#')
			while (s < end && *s != ';' && *s != '\n')
				s++;
		if (s >= end)
			return -ENOTSUP;
	}
	size_t dl = (size_t)(s - dis);
	if (addr_part(&s, end, &has_addr, &addr) < 0)
		return -ENOTSUP;
	in->addr = has_addr ? addr : 0;
	*used = (size_t)(s + 1 - p);
	if (ml > 2 && m[0] == 'c' && m[1] == '.') {
		m += 2;
		ml -= 2;
	}
	int rc = decode(m, ml, op, nop, has_addr, in, info, err, errlen);
	if (rc == 1 && ce) {
		ce->pc = pc;
		ce->in = *in;
		ce->dlen = (uint8_t)dl;
		ce->has_addr = has_addr;
		ce->unknown = info->unknown;
		ce->no_addr = info->no_addr;
		ce->mnem_off = (uint8_t)(m - dis);
		ce->mnem_len = (uint8_t)ml;
		memcpy(ce->dis, dis, dl);
	}
	return rc;
}

int edag_edan_parse_next(const char *buf, size_t len, size_t *used, struct edag_insn *in,
			 struct edag_edan_info *info, struct edag_edan_cache *cache, char *err, size_t errlen)
{
	mtab_init();
	int rc = fast_line(buf, buf + len, used, in, info, cache, err, errlen);
	if (rc != -ENOTSUP)
		return rc;
	const char *nl = memchr(buf, '\n', len);
	if (!nl)
		return -EAGAIN;
	*used = (size_t)(nl - buf) + 1;
	return edag_edan_parse(buf, (size_t)(nl - buf), in, info, err, errlen);
}
