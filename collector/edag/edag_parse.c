/* Pure parsers: register names, the native trace formats (text line and
 * binary record), EDAN's QEMU execlog lines (RISC-V), the machine model JSON. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"
#include "isa_regs.h"

static int perr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---------------------------------------------------------------- register names */

static bool eq(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

int edag_reg_number(unsigned arch, const char *name, size_t len)
{
	if (len >= 2 && name[0] == '#') {
		char *end;
		char buf[8];
		if (len > 4)
			return -ENOENT;
		memcpy(buf, name + 1, len - 1);
		buf[len - 1] = 0;
		long v = strtol(buf, &end, 10);
		return *end || v < 0 || v >= EDAG_NREGS ? -ENOENT : (int)v;
	}
	return isa_reg_number(arch, name, len);
}

/* ---------------------------------------------------------------- small lexing helpers */

static void trim(const char **s, size_t *len)
{
	while (*len && isspace((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

static int parse_u64(const char *s, size_t len, int base, uint64_t *out)
{
	char buf[40];
	if (len == 0 || len >= sizeof(buf) || s[0] == '-' || s[0] == '+')
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, base);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_hex(const char *s, size_t len, uint64_t *out)
{
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	return parse_u64(s, len, 16, out);
}

/* Add the comma-separated register list s to regs. */
static int reg_list(unsigned arch, const char *s, size_t len, uint8_t *regs, uint8_t *n, char *err,
		    size_t errlen)
{
	while (len) {
		const char *c = memchr(s, ',', len);
		size_t l = c ? (size_t)(c - s) : len;
		if (l) {
			int r = edag_reg_number(arch, s, l);
			if (r < 0)
				return perr(err, errlen, "unknown register '%.*s' for %s", (int)l, s,
					    edag_arch_name(arch));
			if (*n >= EDAG_MAX_REGS)
				return perr(err, errlen, "more than %d registers", EDAG_MAX_REGS);
			regs[(*n)++] = (uint8_t)r;
		}
		s += l + (c ? 1 : 0);
		len -= l + (c ? 1 : 0);
	}
	return 0;
}

/* ---------------------------------------------------------------- native text */

static int native_window(const char *s, size_t len, struct edag_window_info *win, char *err, size_t errlen)
{
	memset(win, 0, sizeof(*win));
	win->share = 1;
	while (len) {
		while (len && isspace((unsigned char)*s))
			s++, len--;
		size_t l = 0;
		while (l < len && !isspace((unsigned char)s[l]))
			l++;
		if (!l)
			break;
		const char *eqs = memchr(s, '=', l);
		if (!eqs)
			return perr(err, errlen, "window: expected KEY=VALUE, not '%.*s'", (int)l, s);
		size_t kl = (size_t)(eqs - s), vl = l - kl - 1;
		const char *v = eqs + 1;
		char buf[40];
		if (vl == 0 || vl >= sizeof(buf))
			return perr(err, errlen, "window: bad value for '%.*s'", (int)kl, s);
		memcpy(buf, v, vl);
		buf[vl] = 0;
		char *end;
		errno = 0;
		if (eq(s, kl, "share")) {
			win->share = strtod(buf, &end);
			if (*end || !(win->share > 0 && win->share <= 1))
				return perr(err, errlen, "window: share must be in (0,1], not '%s'", buf);
		} else {
			long long x = strtoll(buf, &end, 10);
			if (*end || errno || x < 0)
				return perr(err, errlen, "window: bad number '%s'", buf);
			if (eq(s, kl, "index"))
				win->index = (uint32_t)x;
			else if (eq(s, kl, "pid"))
				win->pid = (int32_t)x;
			else if (eq(s, kl, "tid"))
				win->tid = (int32_t)x;
			else if (eq(s, kl, "t_ns"))
				win->t_ns = (uint64_t)x;
			else if (eq(s, kl, "represented"))
				win->represented_insns = (uint64_t)x;
			else
				return perr(err, errlen, "window: unknown key '%.*s'", (int)kl, s);
		}
		s += l;
		len -= l;
	}
	return 2;
}

int edag_parse_native_line(const char *line, size_t len, unsigned *arch, struct edag_insn *in,
			   struct edag_window_info *win, char *err, size_t errlen)
{
	trim(&line, &len);
	if (!len || line[0] == '#')
		return 0;
	if (len > 5 && memcmp(line, "arch", 4) == 0 && isspace((unsigned char)line[4])) {
		const char *a = line + 5;
		size_t al = len - 5;
		trim(&a, &al);
		char buf[16];
		if (al >= sizeof(buf))
			return perr(err, errlen, "unknown arch '%.*s'", (int)al, a);
		memcpy(buf, a, al);
		buf[al] = 0;
		int ar = edag_arch_parse(buf);
		if (ar < 0)
			return perr(err, errlen, "unknown arch '%s' (x86_64, aarch64, arm, riscv64)", buf);
		*arch = (unsigned)ar;
		return 0;
	}
	if (len >= 6 && memcmp(line, "window", 6) == 0 && (len == 6 || isspace((unsigned char)line[6])))
		return native_window(line + 6, len - 6, win, err, errlen);

	memset(in, 0, sizeof(*in));
	int field = 0;
	bool mem_explicit = false, has_m = false;
	unsigned mem_mode = 0;
	while (len) {
		size_t l = 0;
		while (l < len && !isspace((unsigned char)line[l]))
			l++;
		const char *t = line;
		if (field == 0) {
			if (parse_hex(t, l, &in->pc) < 0)
				return perr(err, errlen, "bad pc '%.*s' (hex)", (int)l, t);
		} else if (field == 1) {
			const char *plus = memchr(t, '+', l);
			size_t cl = plus ? (size_t)(plus - t) : l;
			int c = edag_class_parse(t, cl);
			if (c < 0)
				return perr(err, errlen,
					    "unknown class '%.*s' (load, store, int, float, branch, other)",
					    (int)cl, t);
			in->cls = (uint8_t)c;
			if (plus) {
				const char *md = plus + 1;
				size_t ml = l - cl - 1;
				mem_explicit = true;
				if (eq(md, ml, "r"))
					mem_mode = EDAG_MEM_READ;
				else if (eq(md, ml, "w"))
					mem_mode = EDAG_MEM_WRITE;
				else if (eq(md, ml, "rw"))
					mem_mode = EDAG_MEM_READ | EDAG_MEM_WRITE;
				else if (eq(md, ml, "none"))
					mem_mode = 0;
				else
					return perr(err, errlen,
						    "bad memory mode '+%.*s' (+r, +w, +rw, +none)", (int)ml,
						    md);
			}
		} else if (l > 2 && t[1] == '=' && (t[0] == 'r' || t[0] == 'w')) {
			int rc = t[0] == 'r'
				     ? reg_list(*arch, t + 2, l - 2, in->rd, &in->nread, err, errlen)
				     : reg_list(*arch, t + 2, l - 2, in->wr, &in->nwrite, err, errlen);
			if (rc < 0)
				return rc;
		} else if (l > 2 && t[0] == 'm' && t[1] == '=') {
			const char *slash = memchr(t, '/', l);
			uint64_t sz;
			if (!slash || parse_hex(t + 2, (size_t)(slash - t - 2), &in->addr) < 0 ||
			    parse_u64(slash + 1, (size_t)(t + l - slash - 1), 10, &sz) < 0 || sz == 0 ||
			    sz > 4096)
				return perr(err, errlen,
					    "bad memory operand '%.*s' (m=0xADDR/SIZE, size 1..4096)", (int)l,
					    t);
			in->size = (uint32_t)sz;
			has_m = true;
		} else {
			return perr(err, errlen, "unexpected '%.*s'", (int)l, t);
		}
		field++;
		line += l;
		len -= l;
		while (len && isspace((unsigned char)*line))
			line++, len--;
	}
	if (field < 2)
		return perr(err, errlen, "expected 'PC CLASS [r=..] [w=..] [m=ADDR/SIZE]'");
	in->mem = (uint8_t)(mem_explicit ? mem_mode : edag_default_mem(in->cls));
	if (in->mem && !has_m)
		return perr(err, errlen, "%s instruction without m=ADDR/SIZE", edag_class_name(in->cls));
	if (!in->mem && has_m)
		return perr(err, errlen,
			    "memory operand on an instruction that does not access memory (+none)");
	return 1;
}

/* ---------------------------------------------------------------- native binary */

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void edag_bin_header_encode(uint8_t out[EDAG_BIN_HEADER], unsigned arch)
{
	memcpy(out, EDAG_BIN_MAGIC, 8);
	put_le(out + 8, arch, 4);
	put_le(out + 12, 0, 4);
}

int edag_bin_header_decode(const uint8_t *buf, size_t len, unsigned *arch)
{
	if (len < EDAG_BIN_HEADER || memcmp(buf, EDAG_BIN_MAGIC, 8) != 0)
		return -EINVAL;
	*arch = (unsigned)get_le(buf + 8, 4);
	return 0;
}

/* Record: u64 pc, u8 class | mem << 3 | has-explicit-mem << 5, u8 nread, u8 nwrite,
 * [u64 addr, u32 size when mem], nread + nwrite register bytes. */
size_t edag_bin_encode(const struct edag_insn *in, uint8_t *out)
{
	size_t n = 0;
	put_le(out, in->pc, 8);
	n += 8;
	out[n++] = (uint8_t)(in->cls | (in->mem << 3) | (1u << 5));
	out[n++] = in->nread;
	out[n++] = in->nwrite;
	if (in->mem) {
		put_le(out + n, in->addr, 8);
		put_le(out + n + 8, in->size, 4);
		n += 12;
	}
	memcpy(out + n, in->rd, in->nread);
	n += in->nread;
	memcpy(out + n, in->wr, in->nwrite);
	return n + in->nwrite;
}

int edag_bin_decode(const uint8_t *buf, size_t len, struct edag_insn *in)
{
	if (len < 11)
		return 0;
	memset(in, 0, sizeof(*in));
	in->pc = get_le(buf, 8);
	uint8_t b = buf[8];
	in->cls = b & 7;
	in->mem = (uint8_t)((b & 0x20) ? (b >> 3) & 3 : edag_default_mem(in->cls));
	in->nread = buf[9];
	in->nwrite = buf[10];
	if (in->cls >= EDAG_NCLASS || (b & 0xc0) || in->nread > EDAG_MAX_REGS || in->nwrite > EDAG_MAX_REGS)
		return -EINVAL;
	size_t need = 11 + (in->mem ? 12 : 0) + in->nread + in->nwrite;
	if (len < need)
		return 0;
	size_t n = 11;
	if (in->mem) {
		in->addr = get_le(buf + n, 8);
		in->size = (uint32_t)get_le(buf + n + 8, 4);
		n += 12;
		if (in->size == 0 || in->size > 4096)
			return -EINVAL;
	}
	memcpy(in->rd, buf + n, in->nread);
	n += in->nread;
	memcpy(in->wr, buf + n, in->nwrite);
	return (int)need;
}

/* ---------------------------------------------------------------- EDAN (QEMU execlog, RISC-V) */

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

static void add_reg(struct edag_insn *in, bool write, const char *s, size_t len)
{
	trim(&s, &len);
	int r = edag_reg_number(EDAG_ARCH_RISCV64, s, len);
	if (r < 0)
		return; /* immediates, CSR names, rounding modes */
	if (write && in->nwrite < EDAG_MAX_REGS)
		in->wr[in->nwrite++] = (uint8_t)r;
	else if (!write && in->nread < EDAG_MAX_REGS)
		in->rd[in->nread++] = (uint8_t)r;
}

/* "off(reg)" or "(reg)": the base register, read. */
static void add_base(struct edag_insn *in, struct operand o)
{
	const char *p = memchr(o.s, '(', o.len);
	const char *q = p ? memchr(p, ')', o.len - (size_t)(p - o.s)) : NULL;
	if (p && q)
		add_reg(in, false, p + 1, (size_t)(q - p - 1));
	else
		add_reg(in, false, o.s, o.len);
}

static bool in_set(const char *m, size_t ml, const char *const *set)
{
	for (; *set; set++)
		if (eq(m, ml, *set))
			return true;
	return false;
}

int edag_parse_edan_line(const char *line, size_t len, struct edag_insn *in, int *cpu, char *err,
			 size_t errlen)
{
	trim(&line, &len);
	memset(in, 0, sizeof(*in));
	*cpu = -1;
	if (!len)
		return 0;
	/* split on ';' */
	struct operand f[8];
	size_t nf = 0;
	for (const char *s = line, *e = line + len; s <= e && nf < 8;) {
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
	if (nf > 1 && f[0].len && f[0].len <= 4 && parse_u64(f[0].s, f[0].len, 10, &v) == 0) {
		*cpu = (int)v;
		k++;
	}
	if (k < nf && f[k].len > 2 && f[k].s[0] == '0' && f[k].s[1] == 'x') {
		if (parse_hex(f[k].s, f[k].len, &in->pc) < 0)
			return perr(err, errlen, "bad pc '%.*s'", (int)f[k].len, f[k].s);
		k++;
	}
	if (k >= nf || !f[k].len)
		return perr(err, errlen, "no instruction in '%.*s'", (int)len, line);
	struct operand dis = f[k++];
	bool has_addr = false;
	if (k < nf && f[k].len) {
		if (parse_hex(f[k].s, f[k].len, &in->addr) < 0)
			return perr(err, errlen, "bad address '%.*s'", (int)f[k].len, f[k].s);
		has_addr = true;
	}
	/* strip "# comment" */
	const char *hash = memchr(dis.s, '#', dis.len);
	if (hash)
		dis.len = (size_t)(hash - dis.s);
	trim(&dis.s, &dis.len);
	size_t ml = 0;
	while (ml < dis.len && !isspace((unsigned char)dis.s[ml]))
		ml++;
	const char *m = dis.s;
	if (ml > 2 && m[0] == 'c' && m[1] == '.') {
		m += 2;
		ml -= 2;
	}
	struct operand op[8];
	size_t nop = 0;
	const char *r = dis.s + (m - dis.s) + ml;
	size_t rl = dis.len - (size_t)(r - dis.s);
	trim(&r, &rl);
	while (rl && nop < 8) {
		const char *c = memchr(r, ',', rl);
		size_t l = c ? (size_t)(c - r) : rl;
		op[nop].s = r;
		op[nop].len = l;
		trim(&op[nop].s, &op[nop].len);
		nop++;
		if (!c)
			break;
		r = c + 1;
		rl -= l + 1;
	}

	static const char *const loads[] = {"lb", "lbu", "lh",	"lhu", "lw",  "lwu",
					    "ld", "flh", "flw", "fld", "flq", NULL};
	static const int load_size[] = {1, 1, 2, 2, 4, 4, 8, 2, 4, 8, 16};
	static const char *const stores[] = {"sb", "sh", "sw", "sd", "fsh", "fsw", "fsd", "fsq", NULL};
	static const int store_size[] = {1, 2, 4, 8, 2, 4, 8, 16};
	static const char *const branches[] = {"beq",  "bne",  "blt",  "bge",  "bltu", "bgeu",
					       "beqz", "bnez", "blez", "bgez", "bltz", "bgtz",
					       "bgt",  "ble",  "bgtu", "bleu", NULL};
	static const char *const sys[] = {"ecall", "ebreak", "fence", "fence.i", "nop",
					  "wfi",   "mret",   "sret",  "uret",	 NULL};
	int li = -1;
	for (int i = 0; loads[i]; i++)
		if (eq(m, ml, loads[i]))
			li = i;
	int si = -1;
	for (int i = 0; stores[i]; i++)
		if (eq(m, ml, stores[i]))
			si = i;

	unsigned size = 0;
	if (li >= 0) {
		in->cls = EDAG_LOAD;
		in->mem = EDAG_MEM_READ;
		size = (unsigned)load_size[li];
		if (nop >= 1)
			add_reg(in, true, op[0].s, op[0].len);
		if (nop >= 2)
			add_base(in, op[1]);
	} else if (si >= 0) {
		in->cls = EDAG_STORE;
		in->mem = EDAG_MEM_WRITE;
		size = (unsigned)store_size[si];
		if (nop >= 1)
			add_reg(in, false, op[0].s, op[0].len);
		if (nop >= 2)
			add_base(in, op[1]);
	} else if (ml > 3 && memcmp(m, "lr.", 3) == 0) {
		in->cls = EDAG_LOAD;
		in->mem = EDAG_MEM_READ;
		size = (unsigned)mem_size_suffix(m, ml);
		if (nop >= 1)
			add_reg(in, true, op[0].s, op[0].len);
		if (nop >= 2)
			add_base(in, op[1]);
	} else if ((ml > 3 && memcmp(m, "sc.", 3) == 0) || (ml > 4 && memcmp(m, "amo", 3) == 0)) {
		bool sc = m[0] == 's';
		in->cls = sc ? EDAG_STORE : EDAG_LOAD;
		in->mem = sc ? EDAG_MEM_WRITE : EDAG_MEM_READ | EDAG_MEM_WRITE;
		size = (unsigned)mem_size_suffix(m, ml);
		if (nop >= 1)
			add_reg(in, true, op[0].s, op[0].len);
		if (nop >= 2)
			add_reg(in, false, op[1].s, op[1].len);
		if (nop >= 3)
			add_base(in, op[2]);
	} else if (in_set(m, ml, branches)) {
		in->cls = EDAG_BRANCH;
		for (size_t i = 0; i < nop; i++)
			add_reg(in, false, op[i].s, op[i].len);
	} else if (eq(m, ml, "j") || eq(m, ml, "jr") || eq(m, ml, "ret") || eq(m, ml, "jal") ||
		   eq(m, ml, "jalr") || eq(m, ml, "call") || eq(m, ml, "tail")) {
		in->cls = EDAG_BRANCH;
		if (eq(m, ml, "ret")) {
			in->rd[in->nread++] = 1; /* ra */
		} else if (eq(m, ml, "jr")) {
			if (nop >= 1)
				add_base(in, op[0]);
		} else if (eq(m, ml, "jal") || eq(m, ml, "call")) {
			if (nop >= 2)
				add_reg(in, true, op[0].s, op[0].len);
			else
				in->wr[in->nwrite++] = 1; /* jal offset: rd = ra */
		} else if (eq(m, ml, "jalr")) {
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
	} else if (in_set(m, ml, sys)) {
		in->cls = EDAG_OTHER;
	} else {
		/* generic: first operand written, the others read */
		if (ml >= 3 && memcmp(m, "csr", 3) == 0)
			in->cls = EDAG_OTHER;
		else if (m[0] == 'f')
			in->cls = EDAG_FLOAT;
		else if (m[0] == 'v')
			in->cls = EDAG_OTHER;
		else
			in->cls = EDAG_INT;
		for (size_t i = 0; i < nop; i++) {
			if (memchr(op[i].s, '(', op[i].len))
				add_base(in, op[i]);
			else
				add_reg(in, i == 0, op[i].s, op[i].len);
		}
	}
	if (in->mem) {
		if (!has_addr) {
			/* a memory instruction the tracer gave no address for: keep the vertex, no access */
			in->mem = 0;
		} else {
			if (!size)
				return perr(err, errlen, "unknown access size of '%.*s'", (int)ml, m);
			in->size = size;
		}
	}
	return 1;
}

/* ---------------------------------------------------------------- machine model JSON */

struct jp {
	const char *start, *s, *e;
	char *err;
	size_t errlen;
};

static void jws(struct jp *p)
{
	while (p->s < p->e && isspace((unsigned char)*p->s))
		p->s++;
}

static int jexpect(struct jp *p, char c)
{
	jws(p);
	if (p->s >= p->e || *p->s != c)
		return perr(p->err, p->errlen, "machine model: expected '%c' at offset %td", c,
			    p->s - p->start);
	p->s++;
	return 0;
}

static int jstring(struct jp *p, char *out, size_t outlen)
{
	jws(p);
	if (p->s >= p->e || *p->s != '"')
		return perr(p->err, p->errlen, "machine model: expected a string");
	p->s++;
	size_t n = 0;
	while (p->s < p->e && *p->s != '"') {
		char c = *p->s++;
		if (c == '\\' && p->s < p->e)
			c = *p->s++;
		if (n + 1 < outlen)
			out[n++] = c;
	}
	if (p->s >= p->e)
		return perr(p->err, p->errlen, "machine model: unterminated string");
	p->s++;
	if (outlen)
		out[n] = 0;
	return 0;
}

/* A number, or a string "32K"/"1M"/"64" (sizes). */
static int jnumber(struct jp *p, double *out)
{
	jws(p);
	char buf[40];
	if (p->s < p->e && *p->s == '"') {
		if (jstring(p, buf, sizeof(buf)) < 0)
			return -EINVAL;
		char *end;
		double v = strtod(buf, &end);
		if (end == buf)
			return perr(p->err, p->errlen, "machine model: '%s' is not a number", buf);
		if (*end == 'K' || *end == 'k')
			v *= 1024, end++;
		else if (*end == 'M' || *end == 'm')
			v *= 1024 * 1024, end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B')
			end++;
		if (*end)
			return perr(p->err, p->errlen, "machine model: '%s' is not a size", buf);
		*out = v;
		return 0;
	}
	size_t n = 0;
	while (p->s + n < p->e && n + 1 < sizeof(buf) && strchr("+-0123456789.eE", p->s[n]))
		n++;
	memcpy(buf, p->s, n);
	buf[n] = 0;
	char *end;
	double v = strtod(buf, &end);
	if (n == 0 || *end || !isfinite(v))
		return perr(p->err, p->errlen, "machine model: expected a number");
	p->s += n;
	*out = v;
	return 0;
}

static int jskip(struct jp *p, int depth)
{
	jws(p);
	if (p->s >= p->e || depth > 64)
		return perr(p->err, p->errlen, "machine model: unexpected end or nesting too deep");
	char c = *p->s;
	if (c == '"') {
		char tmp[1];
		return jstring(p, tmp, 0);
	}
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		p->s++;
		jws(p);
		if (p->s < p->e && *p->s == close) {
			p->s++;
			return 0;
		}
		for (;;) {
			if (c == '{') {
				char tmp[1];
				if (jstring(p, tmp, 0) < 0 || jexpect(p, ':') < 0)
					return -EINVAL;
			}
			if (jskip(p, depth + 1) < 0)
				return -EINVAL;
			jws(p);
			if (p->s < p->e && *p->s == ',') {
				p->s++;
				continue;
			}
			return jexpect(p, close);
		}
	}
	static const char *const lits[] = {"true", "false", "null"};
	for (int i = 0; i < 3; i++) {
		size_t l = strlen(lits[i]);
		if ((size_t)(p->e - p->s) >= l && memcmp(p->s, lits[i], l) == 0) {
			p->s += l;
			return 0;
		}
	}
	double d;
	return jnumber(p, &d);
}

/* Iterate an object: calls fn(p, key, arg) positioned on each value, which
 * must consume it. */
static int jobject(struct jp *p, int (*fn)(struct jp *, const char *, void *), void *arg)
{
	if (jexpect(p, '{') < 0)
		return -EINVAL;
	jws(p);
	if (p->s < p->e && *p->s == '}') {
		p->s++;
		return 0;
	}
	for (;;) {
		char key[64];
		if (jstring(p, key, sizeof(key)) < 0 || jexpect(p, ':') < 0)
			return -EINVAL;
		if (fn(p, key, arg) < 0)
			return -EINVAL;
		jws(p);
		if (p->s < p->e && *p->s == ',') {
			p->s++;
			continue;
		}
		return jexpect(p, '}');
	}
}

struct jlevel {
	struct edag_cache_level *l;
	unsigned idx;
};

static int jnum_u32(struct jp *p, const char *what, uint64_t max, uint64_t *out)
{
	double v;
	if (jnumber(p, &v) < 0)
		return -EINVAL;
	if (!(v >= 0) || v > (double)max || v != floor(v))
		return perr(p->err, p->errlen, "machine model: %s must be an integer in 0..%llu", what,
			    (unsigned long long)max);
	*out = (uint64_t)v;
	return 0;
}

/* A JSON null (an unknown value in a calibrated model): consumed, returns 1. */
static int jnull(struct jp *p)
{
	jws(p);
	if (p->e - p->s >= 4 && memcmp(p->s, "null", 4) == 0) {
		p->s += 4;
		return 1;
	}
	return 0;
}

static int level_key(struct jp *p, const char *key, void *arg)
{
	struct jlevel *jl = arg;
	uint64_t v;
	double d;
	if (jnull(p))
		return 0; /* unknown: filled in by level_complete() */
	if (strcmp(key, "latency_cycles") == 0) { /* calibration: measured, fractional */
		if (jnumber(p, &d) < 0 || !(d >= 0) || d > (double)(1u << 20))
			return perr(p->err, p->errlen, "machine model: latency_cycles must be in 0..%u", 1u << 20);
		jl->l->latency = (uint32_t)lround(d);
		return 0;
	}
	if (strcmp(key, "name") == 0)
		return jstring(p, jl->l->name, sizeof(jl->l->name));
	if (strcmp(key, "size") == 0 || strcmp(key, "size_bytes") == 0) {
		if (jnum_u32(p, "size", 1ull << 34, &v) < 0)
			return -EINVAL;
		jl->l->size = v;
	} else if (strcmp(key, "assoc") == 0 || strcmp(key, "ways") == 0) {
		if (jnum_u32(p, "assoc", 64, &v) < 0)
			return -EINVAL;
		jl->l->assoc = (uint32_t)v;
	} else if (strcmp(key, "line") == 0 || strcmp(key, "line_bytes") == 0) {
		if (jnum_u32(p, "line", 4096, &v) < 0)
			return -EINVAL;
		jl->l->line = (uint32_t)v;
	} else if (strcmp(key, "latency") == 0 || strcmp(key, "latency_cycles") == 0) {
		if (jnum_u32(p, "latency", 1u << 20, &v) < 0)
			return -EINVAL;
		jl->l->latency = (uint32_t)v;
	} else {
		return jskip(p, 1);
	}
	return 0;
}

/* Levels measured by calibration have sizes of plateaus (not a whole number of
 * sets) and may lack the associativity or line size: make a cache the model
 * can simulate — 8 ways and 64-byte lines where unknown, size rounded down to
 * a whole number of sets (at least one). */
static void level_complete(struct edag_cache_level *l)
{
	if (l->line == 0)
		l->line = 64;
	if (l->assoc == 0)
		l->assoc = 8;
	uint64_t set = (uint64_t)l->assoc * l->line;
	l->size = l->size < set ? set : l->size / set * set;
}

static int cost_key(struct jp *p, const char *key, void *arg)
{
	struct edag_config *cfg = arg;
	int c = edag_class_parse(key, strlen(key));
	if (c < 0)
		return jskip(p, 1);
	uint64_t v;
	if (jnum_u32(p, "a class cost", 1u << 20, &v) < 0)
		return -EINVAL;
	cfg->class_cost[c] = (uint32_t)v;
	return 0;
}

static int machine_key(struct jp *p, const char *key, void *arg)
{
	struct edag_config *cfg = arg;
	double v;
	if (jnull(p))
		return 0; /* unknown: keep the default */
	if (strcmp(key, "alpha0") == 0 || strcmp(key, "memory_latency") == 0) {
		uint64_t u;
		if (jnum_u32(p, "alpha0", 1u << 24, &u) < 0)
			return -EINVAL;
		cfg->alpha0 = (uint32_t)u;
		return 0;
	}
	if (strcmp(key, "m") == 0 || strcmp(key, "memory_slots") == 0) {
		if (jnumber(p, &v) < 0)
			return -EINVAL;
		cfg->m = v;
		return 0;
	}
	if (strcmp(key, "alpha") == 0) {
		if (jnumber(p, &v) < 0)
			return -EINVAL;
		cfg->alpha = v;
		return 0;
	}
	if (strcmp(key, "costs") == 0)
		return jobject(p, cost_key, cfg);
	/* "caches": hand-written, checked as written; "cache_levels": measured by
	 * `collector calibrate --model`, completed into a geometry the model can simulate */
	bool measured = strcmp(key, "cache_levels") == 0;
	if (strcmp(key, "caches") == 0 || measured) {
		if (jexpect(p, '[') < 0)
			return -EINVAL;
		cfg->nlevels = 0;
		jws(p);
		if (p->s < p->e && *p->s == ']') {
			p->s++;
			return 0;
		}
		for (;;) {
			if (cfg->nlevels >= EDAG_MAX_LEVELS)
				return perr(p->err, p->errlen, "machine model: more than %d cache levels",
					    EDAG_MAX_LEVELS);
			struct jlevel jl = {.l = &cfg->level[cfg->nlevels], .idx = cfg->nlevels};
			memset(jl.l, 0, sizeof(*jl.l));
			snprintf(jl.l->name, sizeof(jl.l->name), "L%u", cfg->nlevels + 1);
			if (jobject(p, level_key, &jl) < 0)
				return -EINVAL;
			if (jl.l->size == 0)
				return perr(p->err, p->errlen, "machine model: cache level %u without a size",
					    cfg->nlevels + 1);
			if (measured)
				level_complete(jl.l);
			cfg->nlevels++;
			jws(p);
			if (p->s < p->e && *p->s == ',') {
				p->s++;
				continue;
			}
			return jexpect(p, ']');
		}
	}
	return jskip(p, 1);
}

int edag_machine_parse(const char *json, size_t len, struct edag_config *cfg, char *err, size_t errlen)
{
	struct edag_config tmp = *cfg;
	struct jp p = {.start = json, .s = json, .e = json + len, .err = err, .errlen = errlen};
	if (jobject(&p, machine_key, &tmp) < 0)
		return -EINVAL;
	jws(&p);
	if (p.s != p.e)
		return perr(err, errlen, "machine model: trailing data after the object");
	if (edag_config_check(&tmp, err, errlen) < 0)
		return -EINVAL;
	*cfg = tmp;
	return 0;
}

int edag_cache_level_parse(const char *spec, struct edag_cache_level *out)
{
	memset(out, 0, sizeof(*out));
	char *end;
	errno = 0;
	double size = strtod(spec, &end);
	if (end == spec || errno || !(size > 0))
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		size *= 1024, end++;
	else if (*end == 'M' || *end == 'm')
		size *= 1024 * 1024, end++;
	if (*end != ':' || size > (double)(1ull << 34))
		return -EINVAL;
	unsigned long assoc, line, lat;
	char *p = end + 1;
	assoc = strtoul(p, &end, 10);
	if (end == p || *end != ':')
		return -EINVAL;
	p = end + 1;
	line = strtoul(p, &end, 10);
	if (end == p || *end != ':')
		return -EINVAL;
	p = end + 1;
	lat = strtoul(p, &end, 10);
	if (end == p || *end || assoc > 64 || line > 4096 || lat > (1u << 20))
		return -EINVAL;
	out->size = (uint64_t)size;
	out->assoc = (uint32_t)assoc;
	out->line = (uint32_t)line;
	out->latency = (uint32_t)lat;
	return 0;
}
