/* Unit tests of the trace readers: how EDAN and native text lines and
 * TraceWindow instructions are classified (instruction, comment, bad, with
 * the reason), the one-pass EDAN tokeniser against the general parser on
 * mutated lines, the RISC-V register fast path against the register table,
 * binary sniffing, escaping, and gzip/zstd streaming (collector/trace_in.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cmocka.h>

#include "edag/edag.h"
#include "isa_regs.h"
#include "testproc.h"
#include "trace_in.h"

static int edan(const char *l, struct edag_insn *in, struct edag_edan_info *info, char *err, size_t errlen)
{
	return edag_edan_parse(l, strlen(l), in, info, err, errlen);
}

static void test_edag_read_edan_classifies_lines(void **state)
{
	(void)state;
	struct edag_insn in;
	struct edag_edan_info info;
	char err[200];
	assert_int_equal(edan("0;0x104be;lw a4,0(a5);0x4000800210", &in, &info, err, sizeof(err)), 1);
	assert_false(info.unknown);
	assert_false(info.no_addr);
	assert_int_equal(in.size, 4);
	/* comments and blank lines are no instructions and not bad */
	assert_int_equal(edan("# qemu execlog", &in, &info, err, sizeof(err)), 0);
	assert_int_equal(edan("   \r", &in, &info, err, sizeof(err)), 0);
	/* text that is not an instruction */
	assert_int_equal(edan("garbage line here", &in, &info, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad operand 'line here'"));
	assert_int_equal(edan("0;0x10;ADD a0,a1", &in, &info, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad mnemonic"));
	assert_int_equal(edan("0;0x10;add a0,a1\x01", &in, &info, err, sizeof(err)), -EINVAL);
	assert_int_equal(edan("0;0x10;add a0,a1;0xZZZ", &in, &info, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad address '0xZZZ'"));
	/* a load with too few operands is bad; one without its address column is kept, flagged */
	assert_int_equal(edan("0;ld a1", &in, &info, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'ld' wants 2 operands"));
	assert_int_equal(edan("0;amoadd.w a0,(a2);0x10", &in, &info, err, sizeof(err)), -EINVAL);
	assert_int_equal(edan("0;fld fa5,0(a5)", &in, &info, err, sizeof(err)), 1);
	assert_true(info.no_addr);
	assert_int_equal(in.mem, 0);
	assert_int_equal(in.cls, EDAG_LOAD);
	/* unknown mnemonics: kept (class guessed), flagged with the name */
	assert_int_equal(edan("0;frobnicate q9,q10", &in, &info, err, sizeof(err)), 1);
	assert_true(info.unknown);
	assert_int_equal(info.mnem_len, 10);
	assert_memory_equal(info.mnem, "frobnicate", 10);
	assert_int_equal(in.cls, EDAG_FLOAT); /* the old guess from the first letter, unchanged */
	/* known ones with suffixes, compressed, CSR, vector: not unknown */
	const char *known[] = {"0;fcvt.w.d a0,fa0",	  "0;c.addi a0,1",	"0;csrrs a5,fflags,zero",
			       "0;vsetvli a0,a1,e32,m1", "0;sext.w a0,a0",	"0;fence rw,rw",
			       "0;jal ra,0x10450 <main>", "0;bne a3,a5,-6 # 0x104be"};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		assert_int_equal(edan(known[i], &in, &info, err, sizeof(err)), 1);
		assert_false(info.unknown);
	}
}

/* Lines of many shapes and random mutations of them: the one-pass
 * tokeniser (edag_edan_parse_next) answers exactly as the general parser. */
static void test_edag_read_edan_fast_path_equals_general(void **state)
{
	(void)state;
	static const char *const base[] = {
	    "0;0x104be;lw a4,0(a5);0x4000800210", "1;0x104c4;bne a3,a5,-6 # 0x104be", "0;0x200;sd s0,128(sp);0x7fff0",
	    "0;0x204;fmadd.d fa5,fa4,fa3,fa5",	   "0;0x208;amoadd.w a0,a1,(a2);0x9000;0x9000",
	    "0;0x20c;ret",			   "0x20c;jalr t0",
	    "addi a0,a0,1",			   "0;0x1;c.lw a0,4(a1);0x10",
	    "0;0x1;fld fa5,0(a5)",		   "0;0x1;frobnicate q9,q10",
	    "12;0x00000000000010000;add a0,a1,a2", "0;0x10;jal ra,0x10450 <main>;",
	    "0;0x10;mv a0,a1;;",		   "0;0x1;lr.w.aq a0,(a1);0x40",
	    "0;0x1;add a0,,a1",			   "0;0x1;add a0,a1,",
	    "0;0x1;fadd.d dyn,fa5,fa5,fa4",	   "0;0x1;fcvt.w.d a0,fa0,rtz",
	};
	static const char noise[] = " ;,#()x0a9\r\t.-<>zA\x01\xff";
	uint64_t rng = 42;
	struct edag_edan_cache *cache = edag_edan_cache_new(); /* hit by the repeated lines, checked by the mutated */
	assert_non_null(cache);
	char line[128], buf[160];
	for (int iter = 0; iter < 200000; iter++) {
		if (iter % 30000 == 0) { /* fresh: under 65536 lookups, the cache never bypasses itself */
			edag_edan_cache_free(cache);
			cache = edag_edan_cache_new();
		}
		const char *b = base[iter % (sizeof(base) / sizeof(base[0]))];
		size_t len = strlen(b);
		memcpy(line, b, len);
		int muts = iter < 100 ? 0 : 1 + (int)(iter % 3);
		for (int k = 0; k < muts; k++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			size_t pos = (size_t)(rng >> 33) % (len + 1);
			char c = noise[(rng >> 20) % (sizeof(noise) - 1)];
			if ((rng >> 60) & 1 && len + 1 < sizeof(line)) { /* insert */
				memmove(line + pos + 1, line + pos, len - pos);
				line[pos] = c;
				len++;
			} else if (pos < len) {
				line[pos] = c;
			}
		}
		if (memchr(line, '\n', len))
			continue;
		memcpy(buf, line, len);
		buf[len] = '\n';
		memcpy(buf + len + 1, "0;0x4;nop\n", 10); /* the next line must not be touched */
		struct edag_insn a, b2;
		struct edag_edan_info ia, ib;
		char ea[200] = "", eb[200] = "";
		size_t used = 0;
		int ra = edag_edan_parse(line, len, &a, &ia, ea, sizeof(ea));
		int rb = edag_edan_parse_next(buf, len + 11, &used, &b2, &ib, iter % 2 ? cache : NULL, eb, sizeof(eb));
		if (ra != rb || used != len + 1)
			fail_msg("'%.*s': general %d, one pass %d (used %zu)", (int)len, line, ra, rb, used);
		if (ra < 0) {
			assert_string_equal(ea, eb);
			continue;
		}
		assert_memory_equal(&a, &b2, sizeof(a));
		assert_int_equal(ia.cpu, ib.cpu);
		assert_int_equal(ia.unknown, ib.unknown);
		assert_int_equal(ia.no_addr, ib.no_addr);
		assert_int_equal(ia.mnem_len, ib.mnem_len);
		if (ia.mnem_len)
			assert_int_equal(ia.mnem - line, ib.mnem - buf);
	}
	edag_edan_cache_free(cache);
	/* the cache: the same PC with other text, or without the address, is decoded anew */
	cache = edag_edan_cache_new();
	struct {
		const char *line;
		uint8_t cls, mem, nread, nwrite;
		uint64_t addr;
	} seq[] = {
	    {"0;0x40;ld a0,8(a1);0x100\n", EDAG_LOAD, EDAG_MEM_READ, 1, 1, 0x100},
	    {"0;0x40;ld a0,8(a1);0x108\n", EDAG_LOAD, EDAG_MEM_READ, 1, 1, 0x108}, /* hit */
	    {"0;0x40;ld a0,8(a1)\n", EDAG_LOAD, 0, 1, 1, 0},			   /* no address */
	    {"0;0x40;sd a0,8(a1);0x110\n", EDAG_STORE, EDAG_MEM_WRITE, 2, 0, 0x110}, /* other text */
	    {"0;0x1040;add a0,a1,a2\n", EDAG_INT, 0, 2, 1, 0},		   /* same slot, other pc */
	    {"0;0x40;sd a0,8(a1);0x118\n", EDAG_STORE, EDAG_MEM_WRITE, 2, 0, 0x118},
	};
	/* a fresh cache's empty slots match no line: blank, comment, no disassembly */
	const char *none[] = {"\n", "0;\n", "0x0;\n", "# c\n", "  \n", "0;;0x10\n"};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		struct edag_insn in;
		struct edag_edan_info info;
		size_t used;
		char err[200];
		int want = edag_edan_parse(none[i], strlen(none[i]) - 1, &in, &info, err, sizeof(err));
		assert_int_equal(edag_edan_parse_next(none[i], strlen(none[i]), &used, &in, &info, cache, err, sizeof(err)),
				 want);
		assert_true(want <= 0);
	}
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		struct edag_insn in;
		struct edag_edan_info info;
		size_t used;
		const char *l = seq[i].line;
		assert_int_equal(edag_edan_parse_next(l, strlen(l), &used, &in, &info, cache, NULL, 0), 1);
		assert_int_equal(used, strlen(l));
		assert_int_equal(in.cls, seq[i].cls);
		assert_int_equal(in.mem, seq[i].mem);
		assert_int_equal(in.nread, seq[i].nread);
		assert_int_equal(in.nwrite, seq[i].nwrite);
		assert_int_equal(in.addr, seq[i].addr);
		assert_int_equal(info.no_addr, seq[i].mem == 0 && seq[i].cls == EDAG_LOAD);
	}
	edag_edan_cache_free(cache);
	/* no whole line: ask for more */
	struct edag_insn in;
	struct edag_edan_info info;
	size_t used;
	assert_int_equal(edag_edan_parse_next("0;0x1;add a0,a1,a2", 18, &used, &in, &info, NULL, NULL, 0), -EAGAIN);
}

/* The RISC-V register fast path gives what the register table gives, for
 * every name of up to 4 characters over [a-z0-9] and the longer ones. */
static void test_edag_read_rv_registers_match_table(void **state)
{
	(void)state;
	static const char al[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	char s[5];
	size_t na = sizeof(al) - 1;
	for (size_t len = 1; len <= 4; len++) {
		size_t total = 1;
		for (size_t i = 0; i < len; i++)
			total *= na;
		for (size_t x = 0; x < total; x++) {
			size_t v = x;
			for (size_t i = 0; i < len; i++, v /= na)
				s[i] = al[v % na];
			int want = isa_reg_number(ISA_RISCV64, s, len);
			int got = edag_reg_number(EDAG_ARCH_RISCV64, s, len);
			if (want != got)
				fail_msg("'%.*s': table %d, fast %d", (int)len, s, want, got);
		}
	}
	const char *longer[] = {"fflags", "fcsr", "fs10", "fs11", "ft10", "ft11", "s10", "s11", "x31", "f31", "v31"};
	for (size_t i = 0; i < sizeof(longer) / sizeof(longer[0]); i++)
		assert_int_equal(edag_reg_number(EDAG_ARCH_RISCV64, longer[i], strlen(longer[i])),
				 isa_reg_number(ISA_RISCV64, longer[i], strlen(longer[i])));
}

static void test_edag_read_native_classifies_lines(void **state)
{
	(void)state;
	unsigned arch = EDAG_ARCH_RISCV64;
	struct edag_insn in;
	struct edag_window_info wi;
	char err[200];
	const char *ok[] = {"0x104be load r=a5 w=a4 m=0x4000800210/4", "0x10 int r=a0,a1 w=a2", "0x20 branch"};
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(edag_parse_native_line(ok[i], strlen(ok[i]), &arch, &in, &wi, err, sizeof(err)), 1);
	assert_int_equal(edag_parse_native_line("# c", 3, &arch, &in, &wi, err, sizeof(err)), 0);
	struct {
		const char *line, *why;
	} bad[] = {
	    {"garbage line here", "bad pc 'garbage'"},
	    {"0x10 frob r=a0", "unknown class 'frob'"},
	    {"0x10 load r=a5 w=a4", "without m=ADDR/SIZE"},
	    {"0x10 int r=q9", "unknown register 'q9'"},
	    {"0x10 load m=0x10/0", "bad memory operand"},
	    {"0x10 load m=0x10/8 junk", "unexpected 'junk'"},
	    {"0xZZ int", "bad pc"},
	    {"0x10", "expected 'PC CLASS"},
	    {"arch vax", "unknown arch 'vax'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = edag_parse_native_line(bad[i].line, strlen(bad[i].line), &arch, &in, &wi, err, sizeof(err));
		assert_int_equal(rc, -EINVAL);
		if (!strstr(err, bad[i].why))
			fail_msg("'%s': '%s' lacks '%s'", bad[i].line, err, bad[i].why);
	}
}

/* A TraceWindow with a bad instruction in the middle: that one is reported
 * (-EBADMSG, why) and skipped, the next ones read from the right columns;
 * inconsistent columns stop the window (-EINVAL, why). */
static void test_edag_read_trace_window_bad_instruction(void **state)
{
	(void)state;
	struct edag_insn ins[3];
	memset(ins, 0, sizeof(ins));
	for (int i = 0; i < 3; i++) {
		ins[i].pc = 0x100 + 4 * (uint64_t)i;
		ins[i].cls = EDAG_LOAD;
		ins[i].mem = EDAG_MEM_READ;
		ins[i].addr = 0x1000 + 8 * (uint64_t)i;
		ins[i].size = 8;
		ins[i].nread = 1;
		ins[i].rd[0] = (uint8_t)(10 + i);
		ins[i].nwrite = 1;
		ins[i].wr[0] = (uint8_t)(20 + i);
	}
	Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
	assert_int_equal(edag_window_encode(ins, 3, &tw), 0);
	tw.regs_read[1] = 300; /* the second instruction reads register 300 */
	struct edag_window_iter it;
	struct edag_insn in;
	edag_window_iter_init(&it, &tw);
	assert_int_equal(edag_window_next(&it, &in), 1);
	assert_int_equal(edag_window_next(&it, &in), -EBADMSG);
	assert_non_null(strstr(it.why, "register"));
	assert_int_equal(edag_window_next(&it, &in), 1);
	assert_int_equal(in.pc, 0x108);
	assert_int_equal(in.addr, 0x1010);
	assert_int_equal(in.rd[0], 12);
	assert_int_equal(edag_window_next(&it, &in), 0);
	tw.regs_read[1] = 11;
	tw.n_size = 1; /* the size column is shorter than the memory instructions */
	edag_window_iter_init(&it, &tw);
	assert_int_equal(edag_window_next(&it, &in), 1);
	assert_int_equal(edag_window_next(&it, &in), -EINVAL);
	assert_non_null(strstr(it.why, "size"));
	tw.n_size = 3;
	edag_window_encode_free(&tw);
}

static void test_edag_read_sniff_and_escape(void **state)
{
	(void)state;
	const char *what;
	const char *text = "0;0x10;add a0,a1,a2\n";
	assert_int_equal(trace_sniff((const uint8_t *)text, strlen(text), &what), TRACE_SNIFF_TEXT);
	assert_int_equal(trace_sniff((const uint8_t *)"\x7f" "ELF\x02\x01", 6, &what), TRACE_SNIFF_BINARY);
	assert_non_null(strstr(what, "ELF"));
	assert_int_equal(trace_sniff((const uint8_t *)"abc\0def", 7, &what), TRACE_SNIFF_BINARY);
	assert_non_null(strstr(what, "NUL"));
	uint8_t bin[EDAG_BIN_HEADER];
	edag_bin_header_encode(bin, EDAG_ARCH_RISCV64);
	assert_int_equal(trace_sniff(bin, sizeof(bin), &what), TRACE_SNIFF_EDAG_BIN);
	char ctl[200];
	memset(ctl, 'a', sizeof(ctl));
	ctl[5] = 0x1b;
	ctl[6] = 0x07;
	ctl[7] = 0x08; /* 3 control bytes in 200: over 1% */
	assert_int_equal(trace_sniff((const uint8_t *)ctl, sizeof(ctl), &what), TRACE_SNIFF_BINARY);
	ctl[6] = ctl[7] = 'a'; /* 1 in 200: text (the line with it is then bad) */
	assert_int_equal(trace_sniff((const uint8_t *)ctl, sizeof(ctl), &what), TRACE_SNIFF_TEXT);

	char out[64];
	trace_escape("a\x01" "b\xff\xc3\xa9\\\t", 8, 100, out, sizeof(out));
	assert_string_equal(out, "a\\x01b\\xff\xc3\xa9\\\\\\t"); /* é (valid UTF-8) kept */
	trace_escape("\xe2\x82", 2, 100, out, sizeof(out));	   /* a cut UTF-8 sequence */
	assert_string_equal(out, "\\xe2\\x82");
	trace_escape("abcdefgh", 8, 4, out, sizeof(out));
	assert_string_equal(out, "abcd...");
	char small[10];
	trace_escape("\x01\x02\x03\x04\x05", 5, 100, small, sizeof(small));
	assert_true(strlen(small) < sizeof(small));
	for (const char *p = small; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f);
}

/* Read path back through trace_in with small reads. */
static char *read_all(const char *path, size_t cap, size_t *len, int *rc)
{
	struct trace_in *t;
	char err[300];
	*rc = trace_in_open(path, &t, err, sizeof(err));
	if (*rc < 0)
		return NULL;
	size_t n = 0, sz = 1 << 20;
	char *out = malloc(sz);
	for (;;) {
		if (n + cap > sz)
			out = realloc(out, sz *= 2);
		ssize_t got = trace_in_read(t, (uint8_t *)out + n, cap, err, sizeof(err));
		if (got < 0) {
			*rc = (int)got;
			break;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	trace_in_close(t);
	*len = n;
	return out;
}

static void test_edag_read_gzip_and_zstd_streamed(void **state)
{
	(void)state;
	char dir[256], plain[512], gz[512], zs[512], cut[512];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "edagread"), 0);
	snprintf(plain, sizeof(plain), "%s/t.edan", dir);
	snprintf(gz, sizeof(gz), "%s/t.edan.gz", dir);
	snprintf(zs, sizeof(zs), "%s/t.edan.zst", dir);
	snprintf(cut, sizeof(cut), "%s/cut.gz", dir);
	size_t n = 300000;
	char *data = malloc(n);
	for (size_t i = 0; i < n; i++)
		data[i] = "0;0x10;add a0,a1,a2\n"[i % 20];
	FILE *f = fopen(plain, "wb");
	fwrite(data, 1, n, f);
	fclose(f);
	/* two gzip members one after the other (as `cat a.gz b.gz`) */
	gzFile g = gzopen(gz, "wb");
	gzwrite(g, data, 100000);
	gzclose(g);
	g = gzopen(gz, "ab");
	gzwrite(g, data + 100000, (unsigned)(n - 100000));
	gzclose(g);
	size_t zcap = ZSTD_compressBound(n);
	char *z = malloc(zcap);
	size_t zn = ZSTD_compress(z, zcap, data, n, 3);
	assert_false(ZSTD_isError(zn));
	f = fopen(zs, "wb");
	fwrite(z, 1, zn, f);
	fclose(f);
	const char *paths[] = {plain, gz, zs};
	enum trace_in_comp comps[] = {TRACE_IN_PLAIN, TRACE_IN_GZIP, TRACE_IN_ZSTD};
	for (int i = 0; i < 3; i++) {
		struct trace_in *t;
		char err[300];
		assert_int_equal(trace_in_open(paths[i], &t, err, sizeof(err)), 0);
		assert_int_equal(trace_in_comp(t), comps[i]);
		trace_in_close(t);
		for (size_t cap = 7; cap < (1u << 20); cap *= 64) {
			size_t len;
			int rc;
			char *back = read_all(paths[i], cap, &len, &rc);
			assert_int_equal(rc, 0);
			assert_int_equal(len, n);
			assert_memory_equal(back, data, n);
			free(back);
		}
	}
	/* a truncated gzip file is an error, not a short trace */
	char *all = tp_slurp(gz);
	assert_non_null(all);
	f = fopen(cut, "wb");
	fwrite(all, 1, 2000, f);
	fclose(f);
	free(all);
	size_t len;
	int rc;
	free(read_all(cut, 65536, &len, &rc));
	assert_int_equal(rc, -EINVAL);
	/* a missing file names itself */
	struct trace_in *t;
	char err[300];
	assert_int_equal(trace_in_open("/nonexistent/t.edan", &t, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/t.edan"));
	free(z);
	free(data);
	tp_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_edag_read_edan_classifies_lines),
	    cmocka_unit_test(test_edag_read_edan_fast_path_equals_general),
	    cmocka_unit_test(test_edag_read_rv_registers_match_table),
	    cmocka_unit_test(test_edag_read_native_classifies_lines),
	    cmocka_unit_test(test_edag_read_trace_window_bad_instruction),
	    cmocka_unit_test(test_edag_read_sniff_and_escape),
	    cmocka_unit_test(test_edag_read_gzip_and_zstd_streamed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
