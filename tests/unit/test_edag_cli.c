/* `collector edag --trace` on input that is not (all) a trace: one test per
 * message. Bad lines say FILE:LINE: why (printable), are counted, and over
 * the limit fail the run with status 2; unknown mnemonics are reported once
 * with a count and the metrics say how many vertices have a guessed class;
 * binary input is refused in one line naming the file; every option error
 * names the option and echoes the value in one line; gzip and zstd traces
 * give the metrics of the plain file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cmocka.h>

#include "edag/edag.h"
#include "log.h"
#include "testproc.h"

static char dir[256];

static int setup(void **state)
{
	(void)state;
	return tp_tmpdir(dir, sizeof(dir), "edagcli");
}

static int teardown(void **state)
{
	(void)state;
	tp_rm_rf(dir);
	return 0;
}

static const char *put(const char *name, const void *data, size_t len)
{
	static char path[8][512];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 512, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	return p;
}

/* collector edag ARGS...: stdout+stderr, exit status in *rc */
static char *run(int *rc, ...)
{
	char bin[512], out[600];
	tp_bin("collector", bin, sizeof(bin));
	snprintf(out, sizeof(out), "%s/out.txt", dir);
	unlink(out);
	char *argv[32];
	int n = 0;
	argv[n++] = bin;
	argv[n++] = "edag";
	va_list ap;
	va_start(ap, rc);
	for (char *a; (a = va_arg(ap, char *)) != NULL && n < 31;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	pid_t pid = tp_spawn(argv, out);
	assert_true(pid > 0);
	int status;
	assert_int_equal(tp_wait(pid, 60000, &status), 0);
	assert_true(WIFEXITED(status));
	*rc = WEXITSTATUS(status);
	char *s = tp_slurp(out);
	assert_non_null(s);
	return s;
}

static int lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void has(const char *out, const char *what)
{
	if (!strstr(out, what))
		fail_msg("expected '%s' in:\n%s", what, out);
}

static const char good[] = "0;0x10000;addi a1,zero,1\n0;0x10004;addi a2,a1,1\n0;0x10008;ld a3,0(a2);0x4000\n";

static void test_edag_cli_garbage_line_fails_with_its_line(void **state)
{
	(void)state;
	const char *f = put("g.edan", "0;li a0,0\ngarbage line here\n", 28);
	int rc;
	char *out = run(&rc, "--trace", f, "--format", "edan", NULL);
	assert_int_equal(rc, 2);
	char want[600];
	snprintf(want, sizeof(want), "%s:2: bad operand 'line here' of 'garbage'", f);
	has(out, want);
	has(out, "1 of 2 lines are bad");
	assert_null(strstr(out, "vertices")); /* no metrics from garbage */
	free(out);
}

static void test_edag_cli_max_bad_accepts_and_counts(void **state)
{
	(void)state;
	char text[8192] = "";
	for (int i = 0; i < 50; i++)
		strcat(text, "0;0x10;addi a0,a0,1\n");
	strcat(text, "0;ld a1\n"); /* 1 bad line in 51: 2%, over the default limit */
	const char *f = put("b.edan", text, strlen(text));
	int rc;
	char *out = run(&rc, "--trace", f, "--format", "edan", NULL);
	assert_int_equal(rc, 2);
	has(out, ":51: 'ld' wants 2 operands (rd, offset(base)), not 1");
	free(out);
	out = run(&rc, "--trace", f, "--format", "edan", "--max-bad", "1", NULL);
	assert_int_equal(rc, 0);
	has(out, "1 of 51 lines bad and skipped");
	has(out, "50 instructions");
	free(out);
	/* over 100 bad lines: stops reading */
	char *big = malloc(200 * 8 + 1);
	big[0] = 0;
	for (int i = 0; i < 200; i++)
		strcat(big, "0;ld a1\n");
	f = put("many.edan", big, strlen(big));
	free(big);
	out = run(&rc, "--trace", f, "--format", "edan", NULL);
	assert_int_equal(rc, 2);
	has(out, "more than 100 bad lines: stopped");
	has(out, "further bad lines are counted, not shown");
	assert_true(lines(out) <= 14); /* 10 shown, then one line each */
	free(out);
}

static void test_edag_cli_unknown_mnemonic_reported_once(void **state)
{
	(void)state;
	const char text[] = "0;li a0,0\n0;frobnicate q9,q10\n0;frobnicate a1\n0;zorble a0\n";
	const char *f = put("u.edan", text, strlen(text));
	int rc;
	char *out = run(&rc, "--trace", f, "--format", "edan", NULL);
	assert_int_equal(rc, 0);
	has(out, "unknown mnemonic 'frobnicate': 2 instructions (first at line 2), class guessed");
	has(out, "unknown mnemonic 'zorble': 1 instructions (first at line 4)");
	has(out, "unknown class: 3 vertices");
	free(out);
	out = run(&rc, "--trace", f, "--format", "edan", "--json", NULL);
	assert_int_equal(rc, 0);
	has(out, "\"unknown_class\":3");
	free(out);
	/* a clean trace says nothing about it */
	f = put("good.edan", good, strlen(good));
	out = run(&rc, "--trace", f, "--format", "edan", NULL);
	assert_int_equal(rc, 0);
	assert_null(strstr(out, "unknown"));
	free(out);
}

static void test_edag_cli_load_without_address_warned(void **state)
{
	(void)state;
	const char text[] = "0;li a5,0\n0;fld fa5,0(a5)\n";
	const char *f = put("na.edan", text, strlen(text));
	int rc;
	char *out = run(&rc, "--trace", f, "--format", "edan", NULL);
	assert_int_equal(rc, 0);
	has(out, "1 memory instructions without an address column (first at line 2)");
	has(out, "memory accesses 0");
	free(out);
}

static void test_edag_cli_elf_refused_in_one_line(void **state)
{
	(void)state;
	FILE *self = fopen("/proc/self/exe", "rb");
	assert_non_null(self);
	char buf[4096];
	size_t n = fread(buf, 1, sizeof(buf), self);
	fclose(self);
	const char *f = put("prog", buf, n);
	int rc;
	char *out = run(&rc, "--trace", f, "--format", "edan", NULL);
	assert_int_equal(rc, 2);
	char want[600];
	snprintf(want, sizeof(want), "%s: not a text trace: it looks like an ELF file", f);
	has(out, want);
	assert_int_equal(lines(out), 1);
	free(out);
}

static void test_edag_cli_random_bytes_refused(void **state)
{
	(void)state;
	uint8_t buf[200000];
	uint64_t x = 7;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (uint8_t)(x >> 56);
	}
	const char *f = put("rand", buf, sizeof(buf));
	int rc;
	char *out = run(&rc, "--trace", f, "--format", "native", NULL);
	assert_int_equal(rc, 2);
	has(out, "not a text trace: it looks like binary data");
	assert_int_equal(lines(out), 1);
	for (const char *p = out; *p; p++)
		assert_true(*p == '\n' || (*p >= 0x20 && *p < 0x7f));
	free(out);
}

static void test_edag_cli_bad_bytes_escaped(void **state)
{
	(void)state;
	char text[20000] = "";
	for (int i = 0; i < 300; i++)
		strcat(text, "0;0x10;addi a0,a0,1\n");
	strcat(text, "0;0x14;add a0,a1\x01\xff\n"); /* 2 odd bytes in 6 KB: text, one bad line */
	const char *f = put("esc.edan", text, strlen(text));
	int rc;
	char *out = run(&rc, "--trace", f, "--format", "edan", NULL);
	assert_int_equal(rc, 0); /* 1 of 301 lines: under the limit */
	has(out, ":301: bad operand 'a1\\x01\\xff' of 'add' (skipped)");
	for (const char *p = out; *p; p++)
		assert_true(*p == '\n' || (*p >= 0x20 && *p < 0x7f));
	free(out);
}

static void test_edag_cli_empty_file_named(void **state)
{
	(void)state;
	const char *f = put("empty.edan", "", 0);
	int rc;
	char *out = run(&rc, "--trace", f, "--format", "edan", NULL);
	assert_int_equal(rc, 1);
	char want[600];
	snprintf(want, sizeof(want), "%s: no instructions found", f);
	has(out, want);
	assert_int_equal(lines(out), 1);
	free(out);
}

static void test_edag_cli_missing_file_one_line(void **state)
{
	(void)state;
	int rc;
	char *out = run(&rc, "--trace", "/nonexistent/t.edan", "--format", "edan", NULL);
	assert_int_equal(rc, 1);
	has(out, "cannot open the trace /nonexistent/t.edan: No such file or directory");
	assert_int_equal(lines(out), 1);
	free(out);
}

static void test_edag_cli_option_errors_name_option_and_value(void **state)
{
	(void)state;
	const char *f = put("opt.edan", good, strlen(good));
	struct {
		const char *opt, *val, *want;
	} c[] = {
	    {"-m", "0", "-m '0': expected a number >= 1"},
	    {"--format", "foo", "--format 'foo': expected edan or native"},
	    {"--max-bad", "x", "--max-bad 'x': expected a number of lines >= 0"},
	    {"--alpha0", "0", "--alpha0 '0': expected an integer in 1..16777216"},
	    {"--cpu", "-1", "--cpu '-1': expected a vCPU number >= 0"},
	    {"--cache", "32K:8", "--cache '32K:8': expected SIZE:WAYS:LINE:LATENCY"},
	    {"--cost", "fma=3", "--cost 'fma=3': expected CLASS=N"},
	    {"--arch", "vax", "--arch 'vax': expected x86_64, aarch64, arm or riscv64"},
	    {"--max-vertices", "", "--max-vertices '': expected an integer in 1..10000000"},
	    {"--slice", "0", "--slice '0': expected a positive integer"},
	    {"--threads", "4", "--threads '4': expected 1 (one thread)"},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int rc;
		char *out;
		if (strcmp(c[i].opt, "--format") == 0)
			out = run(&rc, "--trace", f, "--format", c[i].val, NULL);
		else
			out = run(&rc, "--trace", f, "--format", "edan", c[i].opt, c[i].val, NULL);
		assert_int_equal(rc, 2);
		has(out, c[i].want);
		assert_int_equal(lines(out), 1);
		free(out);
	}
	int rc;
	const char *mj = put("m.json", "{\"alpha0\": \"x\"}", 15);
	char *out = run(&rc, "--trace", f, "--format", "edan", "--machine", mj, NULL);
	assert_int_equal(rc, 1);
	char want[700];
	snprintf(want, sizeof(want), "--machine '%s': machine model:", mj);
	has(out, want);
	assert_int_equal(lines(out), 1);
	free(out);
	out = run(&rc, "--trace", f, "--format", "edan", "--machine", "/nonexistent/m.json", NULL);
	assert_int_equal(rc, 1);
	has(out, "--machine '/nonexistent/m.json': cannot read the machine model: No such file or directory");
	assert_int_equal(lines(out), 1);
	free(out);
	out = run(&rc, "--trace", f, "--format", "edan", "--bogus", NULL);
	assert_int_equal(rc, 2);
	has(out, "unknown option '--bogus'");
	assert_int_equal(lines(out), 1);
	free(out);
	out = run(&rc, "--trace", f, "--format", "edan", "-m", NULL);
	assert_int_equal(rc, 2);
	has(out, "-m needs a value");
	free(out);
}

static void test_edag_cli_native_bad_line_and_binary_as_edan(void **state)
{
	(void)state;
	const char text[] = "arch riscv64\n0x10 int r=a0 w=a1\n0x14 frob r=a0\n";
	const char *f = put("n.txt", text, strlen(text));
	int rc;
	char *out = run(&rc, "--trace", f, "--format", "native", NULL);
	assert_int_equal(rc, 2);
	has(out, ":3: unknown class 'frob'");
	free(out);
	uint8_t bin[EDAG_BIN_HEADER + EDAG_BIN_MAX_RECORD];
	edag_bin_header_encode(bin, EDAG_ARCH_RISCV64);
	struct edag_insn in = {.pc = 0x10, .cls = EDAG_INT, .nread = 1, .rd = {10}};
	size_t n = EDAG_BIN_HEADER + edag_bin_encode(&in, bin + EDAG_BIN_HEADER);
	f = put("t.bin", bin, n);
	out = run(&rc, "--trace", f, "--format", "edan", NULL);
	assert_int_equal(rc, 2);
	has(out, "a native binary trace (EDAGTRC1), not EDAN text: use --format native");
	free(out);
	out = run(&rc, "--trace", f, "--format", "native", NULL);
	assert_int_equal(rc, 0);
	has(out, "1 instructions");
	free(out);
}

/* The same trace plain, gzip'd (two members) and zstd'd: the same output. */
static void test_edag_cli_gzip_zstd_same_metrics(void **state)
{
	(void)state;
	size_t cap = 400 * 64;
	char *text = malloc(cap);
	size_t len = 0;
	for (int i = 0; i < 400; i++)
		len += (size_t)snprintf(text + len, cap - len, "0;0x%x;ld a%d,8(a%d);0x%x\n", 0x10000 + 4 * i, i % 8,
					(i + 3) % 8, 0x4000 + 8 * (i * 7 % 64));
	const char *plain = put("p.edan", text, len);
	char gz[600], zs[600];
	snprintf(gz, sizeof(gz), "%s/p.edan.gz", dir);
	gzFile g = gzopen(gz, "wb");
	gzwrite(g, text, (unsigned)(len / 2));
	gzclose(g);
	g = gzopen(gz, "ab");
	gzwrite(g, text + len / 2, (unsigned)(len - len / 2));
	gzclose(g);
	size_t zcap = ZSTD_compressBound(len);
	char *z = malloc(zcap);
	size_t zn = ZSTD_compress(z, zcap, text, len, 3);
	snprintf(zs, sizeof(zs), "%s", put("p.edan.zst", z, zn));
	int rc;
	char *want = run(&rc, "--trace", plain, "--format", "edan", "--json", "--cache", "1K:2:64:4", NULL);
	assert_int_equal(rc, 0);
	has(want, "\"vertices\":400");
	char *a = run(&rc, "--trace", gz, "--format", "edan", "--json", "--cache", "1K:2:64:4", NULL);
	assert_int_equal(rc, 0);
	assert_string_equal(a, want);
	char *b = run(&rc, "--trace", zs, "--format", "edan", "--json", "--cache", "1K:2:64:4", NULL);
	assert_int_equal(rc, 0);
	assert_string_equal(b, want);
	free(a);
	free(b);
	free(want);
	/* a truncated .gz is an error, not a shorter trace */
	char *all = tp_slurp(gz);
	const char *cut = put("cut.gz", all, 300);
	a = run(&rc, "--trace", cut, "--format", "edan", NULL);
	assert_int_equal(rc, 1);
	has(a, "the gzip stream is truncated");
	free(a);
	free(all);
	free(z);
	free(text);
}

/* Text from the first "collector: " on each line (drops log timestamps). */
static char *strip_times(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) + 1 : strlen(s);
		const char *c = memmem(s, len, "collector: ", 11);
		const char *from = c ? c : s;
		memcpy(o, from, len - (size_t)(from - s));
		o += len - (size_t)(from - s);
		s += len;
	}
	*o = 0;
	return out;
}

/* A 3 MB trace with bad lines, unknown mnemonics, other vCPUs, loads
 * without addresses, comments, blank and CRLF lines spread over its
 * blocks: one thread, parser + engine, and two parsers + engine print the
 * same, reports and line numbers included. */
static void test_edag_cli_threads_same_output(void **state)
{
	(void)state;
	size_t cap = 4u << 20, len = 0;
	char *text = malloc(cap);
	uint64_t x = 1;
	for (int i = 0; len + 200 < cap && i < 110000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned r = (unsigned)(x >> 40) % 1000;
		unsigned pc = 0x10000 + 4 * (unsigned)(i % 64);
		const char *l;
		char tmp[160];
		if (r == 0 && (i & 1))
			l = "0;ld a1\n"; /* bad: 0.05% */
		else if (r <= 1)
			l = "0;0x10;frobnicate a0,a1\n";
		else if (r == 2)
			l = "1;0x10;addi a0,a0,1\n"; /* another vCPU */
		else if (r == 3)
			l = "0;0x20;fld fa5,0(a5)\n"; /* no address */
		else if (r == 4)
			l = "# comment\n";
		else if (r == 5)
			l = "\n";
		else if (r == 6)
			l = "0;0x30;add a0, a1,a2\r\n"; /* the general parser's shapes */
		else {
			snprintf(tmp, sizeof(tmp), "0;0x%x;%s a%u,%u(a%u);0x%x\n", pc, r % 2 ? "ld" : "sd", r % 8, r % 64,
				 (r / 8) % 8, 0x40000 + 8 * (r % 512));
			l = tmp;
		}
		size_t ll = strlen(l);
		memcpy(text + len, l, ll);
		len += ll;
	}
	const char *f = put("big.edan", text, len);
	assert_true(len > (2u << 20));
	char *want = NULL;
	for (int th = 1; th <= 3; th++) {
		char ths[4];
		snprintf(ths, sizeof(ths), "%d", th);
		int rc;
		char *out = run(&rc, "--trace", f, "--format", "edan", "--json", "--threads", ths, NULL);
		assert_int_equal(rc, 0);
		has(out, "\"unknown_class\":");
		has(out, "lines bad and skipped");
		has(out, "of other vCPUs");
		has(out, "without an address column");
		char *s = strip_times(out);
		free(out);
		if (!want)
			want = s;
		else {
			assert_string_equal(s, want);
			free(s);
		}
	}
	free(want);
	/* over the limit: the same stop, at the same line */
	for (size_t i = 0; i + 8 < len; i += 9000)
		memcpy(text + i, "0;ld a\n\n", 8); /* bad lines every 9 KB (and blank ones) */
	f = put("bad.edan", text, len);
	want = NULL;
	for (int th = 1; th <= 3; th++) {
		char ths[4];
		snprintf(ths, sizeof(ths), "%d", th);
		int rc;
		char *out = run(&rc, "--trace", f, "--format", "edan", "--threads", ths, NULL);
		assert_int_equal(rc, 2);
		has(out, "more than 100 bad lines: stopped");
		char *s = strip_times(out);
		free(out);
		if (!want)
			want = s;
		else {
			assert_string_equal(s, want);
			free(s);
		}
	}
	free(want);
	free(text);
}

int main(void)
{
	log_init("test_edag_cli", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_edag_cli_garbage_line_fails_with_its_line),
	    cmocka_unit_test(test_edag_cli_max_bad_accepts_and_counts),
	    cmocka_unit_test(test_edag_cli_unknown_mnemonic_reported_once),
	    cmocka_unit_test(test_edag_cli_load_without_address_warned),
	    cmocka_unit_test(test_edag_cli_elf_refused_in_one_line),
	    cmocka_unit_test(test_edag_cli_random_bytes_refused),
	    cmocka_unit_test(test_edag_cli_bad_bytes_escaped),
	    cmocka_unit_test(test_edag_cli_empty_file_named),
	    cmocka_unit_test(test_edag_cli_missing_file_one_line),
	    cmocka_unit_test(test_edag_cli_option_errors_name_option_and_value),
	    cmocka_unit_test(test_edag_cli_native_bad_line_and_binary_as_edan),
	    cmocka_unit_test(test_edag_cli_gzip_zstd_same_metrics),
	    cmocka_unit_test(test_edag_cli_threads_same_output),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
