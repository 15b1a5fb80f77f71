/* KernelSymbols (proto/ksyms.h, agent/kallsyms.c): a kallsyms file read
 * as the agent reads /proc/kallsyms (text symbols only, modules, duplicates,
 * a file without addresses refused), encoded in chunks that pass the
 * envelope's validation after a pack/unpack round trip and decode to the
 * same table; the resolver names addresses from it; damaged chunks are
 * refused with a reason, never read out of bounds (ASan build); what a chunk
 * decodes to and a table's declared size are bounded (ksyms.h). The real
 * /proc/kallsyms of this host, where it shows addresses, round-trips too. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kallsyms.h"
#include "ksyms.h"
#include "profiler.pb-c.h"
#include "symbols.h"
#include "validate.h"

struct table {
	uint64_t *addr;
	char **name;
	size_t n, cap;
	size_t chunks, bytes, total;
	int last_chunks;
};

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->name[i]);
	free(t->name);
	free(t->addr);
	memset(t, 0, sizeof(*t));
}

static int collect(void *arg, uint64_t addr, const char *name)
{
	struct table *t = arg;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->addr = realloc(t->addr, t->cap * sizeof(*t->addr));
		t->name = realloc(t->name, t->cap * sizeof(*t->name));
		assert_non_null(t->addr);
		assert_non_null(t->name);
	}
	t->addr[t->n] = addr;
	t->name[t->n++] = strdup(name);
	return 0;
}

/* What the collector does with a record: frame it as an Envelope, unpack, validate, decode. */
static int emit_roundtrip(void *arg, const Prof__KernelSymbols *m)
{
	struct table *t = arg;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 7;
	env.body_case = PROF__ENVELOPE__BODY_KERNEL_SYMBOLS;
	env.kernel_symbols = (Prof__KernelSymbols *)m;
	size_t len = prof__envelope__get_packed_size(&env);
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	prof__envelope__pack(&env, buf);
	assert_true(len < 256 * 1024); /* well under the 1 MiB frame limit */
	Prof__Envelope *back = prof__envelope__unpack(NULL, len, buf);
	assert_non_null(back);
	char err[200] = "";
	if (envelope_validate(back, err, sizeof(err)) != 0)
		fail_msg("a chunk the encoder made is refused: %s", err);
	assert_int_equal(back->kernel_symbols->chunk, t->chunks);
	t->last_chunks = (int)back->kernel_symbols->chunks;
	t->total = back->kernel_symbols->total;
	assert_int_equal(ksyms_chunk_decode(back->kernel_symbols, collect, t, err, sizeof(err)), 0);
	prof__envelope__free_unpacked(back, NULL);
	free(buf);
	t->chunks++;
	t->bytes += len;
	return 0;
}

static char *write_file(const char *text)
{
	char *path = strdup("/tmp/test_ksyms.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_ksyms_file_read_as_the_agent_does(void **state)
{
	(void)state;
	char *boot = write_file("3d378104-5cc6-40bd-a643-6c890adeaa7d\n");
	char *ks = write_file("ffffffff81000000 T _stext\n"
			      "ffffffff81000000 T _stext\n" /* the same symbol twice: once */
			      "ffffffff81000100 t do_one_initcall\n"
			      "ffffffff81000200 D some_data\n" /* data: not a function */
			      "ffffffff81000300 W weak_fn\n"
			      "ffffffffc0001000 t mod_fn\t[snd_hda]\n"
			      "garbage line\n");
	struct table t = {0};
	struct kallsyms_stats st;
	assert_int_equal(kallsyms_read_send(ks, boot, emit_roundtrip, &t, &st), 0);
	assert_int_equal(st.symbols, 4);
	assert_int_equal(t.n, 4);
	assert_int_equal(t.chunks, 1);
	assert_int_equal(t.total, 4);
	/* sorted by name for the front coding */
	assert_string_equal(t.name[0], "_stext");
	assert_true(t.addr[0] == 0xffffffff81000000ull);
	assert_string_equal(t.name[1], "do_one_initcall");
	assert_string_equal(t.name[2], "mod_fn");
	assert_true(t.addr[2] == 0xffffffffc0001000ull);
	assert_string_equal(t.name[3], "weak_fn");
	/* the resolver names addresses inside each function */
	struct sym_resolver *r;
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	assert_int_equal(sym_resolver_set_kernel(r, t.addr, (const char *const *)t.name, t.n), 0);
	assert_string_equal(sym_resolve_kernel(r, 0xffffffff81000180ull), "do_one_initcall");
	assert_string_equal(sym_resolve_kernel(r, 0xffffffff81000000ull), "_stext");
	assert_string_equal(sym_resolve_kernel(r, 0xffffffffc0001010ull), "mod_fn");
	assert_null(sym_resolve_kernel(r, 0xffffffff80000000ull));
	sym_resolver_free(r);
	table_free(&t);
	unlink(ks);
	free(ks);
	/* kptr_restrict: every address reads 0: nothing is sent */
	ks = write_file("0000000000000000 T _stext\n0000000000000000 t do_one_initcall\n");
	memset(&t, 0, sizeof(t));
	assert_int_equal(kallsyms_read_send(ks, boot, emit_roundtrip, &t, &st), -ENOENT);
	assert_int_equal(t.chunks, 0);
	unlink(ks);
	free(ks);
	unlink(boot);
	free(boot);
}

/* Many symbols: several chunks, front coding of long shared prefixes. */
static void test_ksyms_chunks_round_trip(void **state)
{
	(void)state;
	size_t n = 3 * KSYMS_CHUNK_SYMS + 17;
	uint64_t *addr = malloc(n * sizeof(*addr));
	char **names = malloc(n * sizeof(*names));
	assert_non_null(addr);
	assert_non_null(names);
	for (size_t i = 0; i < n; i++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s_%05zu", i % 3 ? "ext4_file_write" : "tcp_v4", i);
		names[i] = strdup(buf);
		addr[i] = 0xffffffff81000000ull + (i * 2654435761u) % 0x1000000; /* not in name order */
	}
	/* the encoder wants them by name: the names above sort as built within each prefix */
	struct table in = {0};
	for (size_t i = 0; i < n; i++)
		if (i % 3 == 0)
			collect(&in, addr[i], names[i]);
	for (size_t i = 0; i < n; i++)
		if (i % 3)
			collect(&in, addr[i], names[i]);
	/* ext4... < tcp...: put them in that order */
	struct table sorted = {0};
	for (size_t i = 0; i < in.n; i++)
		if (in.name[i][0] == 'e')
			collect(&sorted, in.addr[i], in.name[i]);
	for (size_t i = 0; i < in.n; i++)
		if (in.name[i][0] == 't')
			collect(&sorted, in.addr[i], in.name[i]);
	struct table out = {0};
	assert_int_equal(ksyms_encode(sorted.addr, (const char *const *)sorted.name, sorted.n, "boot-1", emit_roundtrip,
				      &out),
			 0);
	assert_int_equal(out.chunks, 4);
	assert_int_equal(out.last_chunks, 4);
	assert_int_equal(out.n, n);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(out.name[i], sorted.name[i]);
		assert_true(out.addr[i] == sorted.addr[i]);
	}
	double per = (double)out.bytes / (double)n;
	fprintf(stderr, "# %zu symbols in %zu chunks: %zu bytes (%.1f a symbol)\n", n, out.chunks, out.bytes, per);
	assert_true(per < 12); /* ~20-byte names front-coded, 3-byte deltas */
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(addr);
	table_free(&in);
	table_free(&sorted);
	table_free(&out);
}

static int refused(Prof__KernelSymbols *m, const char *why)
{
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 3;
	env.body_case = PROF__ENVELOPE__BODY_KERNEL_SYMBOLS;
	env.kernel_symbols = m;
	char err[200] = "";
	int rc = envelope_validate(&env, err, sizeof(err));
	if (rc != -EINVAL)
		fail_msg("%s: accepted", why);
	fprintf(stderr, "# %s: %s\n", why, err);
	return rc;
}

/* Damaged or hostile chunks: refused with a reason (the decoder reads within the message only). */
static void test_ksyms_validate_refuses_bad_chunks(void **state)
{
	(void)state;
	int64_t d[3] = {(int64_t)0xffffffff81000000ull, 16, 16};
	uint32_t sh[3] = {0, 3, 3};
	uint8_t names[] = "abc\0d\0e"; /* "abc", "abcd", "abce" */
	Prof__KernelSymbols good = PROF__KERNEL_SYMBOLS__INIT;
	good.kernel_boot_id = "boot";
	good.chunks = 1;
	good.total = 3;
	good.n_addr_delta = good.n_shared = 3;
	good.addr_delta = d;
	good.shared = sh;
	good.suffixes.data = names;
	good.suffixes.len = sizeof(names); /* the last name ended by the array's 0 */
	struct table t = {0};
	char err[200];
	assert_int_equal(ksyms_chunk_decode(&good, collect, &t, err, sizeof(err)), 0);
	assert_int_equal(t.n, 3);
	assert_string_equal(t.name[2], "abce");
	assert_true(t.addr[2] == 0xffffffff81000020ull);
	table_free(&t);

	Prof__KernelSymbols m = good;
	m.kernel_boot_id = "";
	refused(&m, "empty boot id");
	m = good;
	m.kernel_boot_id = "bad boot";
	refused(&m, "boot id with a space");
	m = good;
	m.chunk = 1;
	refused(&m, "chunk past chunks");
	m = good;
	m.chunks = KSYMS_MAX_CHUNKS + 1;
	refused(&m, "too many chunks");
	m = good;
	m.n_shared = 2;
	refused(&m, "columns of different lengths");
	m = good;
	uint32_t sh2[3] = {0, 4, 3};
	m.shared = sh2;
	refused(&m, "a prefix longer than the previous name");
	m = good;
	m.suffixes.len = sizeof(names) - 1;
	refused(&m, "last name not ended");
	m = good;
	m.suffixes.data = NULL; /* what protobuf-c leaves for an absent bytes field (found by fuzz_records) */
	m.suffixes.len = 0;
	refused(&m, "symbols without names");
	m = good;
	uint8_t extra[] = "abc\0d\0e\0zz";
	m.suffixes.data = extra;
	m.suffixes.len = sizeof(extra);
	refused(&m, "bytes after the last name");
	m = good;
	m.total = 2;
	refused(&m, "more symbols than the table");
	m = good;
	uint8_t empty[] = "abc\0\0e";
	uint32_t sh0[3] = {0, 0, 3};
	m.shared = sh0;
	m.suffixes.data = empty;
	m.suffixes.len = sizeof(empty);
	refused(&m, "an empty name");
	/* a name over KSYMS_NAME_MAX: the shared prefix and the suffix add up past it */
	m = good;
	uint8_t *longn = malloc(2 * KSYMS_NAME_MAX);
	assert_non_null(longn);
	memset(longn, 'x', 2 * KSYMS_NAME_MAX);
	longn[KSYMS_NAME_MAX - 1] = 0;		/* 510 bytes */
	longn[KSYMS_NAME_MAX + 1] = 0;		/* "x": 510 + 1 */
	longn[2 * KSYMS_NAME_MAX - 1] = 0;	/* 509 + 510: over */
	uint32_t shl[3] = {0, KSYMS_NAME_MAX - 1, KSYMS_NAME_MAX};
	m.shared = shl;
	m.suffixes.data = longn;
	m.suffixes.len = 2 * KSYMS_NAME_MAX;
	refused(&m, "a name over 511 bytes");
	free(longn);
	/* a reference (no symbols) is well-formed; a reference with names is not */
	m = good;
	m.n_addr_delta = m.n_shared = 0;
	m.suffixes.len = 0;
	m.total = 0;
	assert_int_equal(ksyms_chunk_decode(&m, collect, &t, err, sizeof(err)), 0);
	assert_int_equal(t.n, 0);
	m.suffixes.len = 3;
	refused(&m, "names without addresses");
}

/* Front coding lets 2 wire bytes stand for a 511-byte name: a chunk whose names decode past
 * KSYMS_MAX_CHUNK_NAME_BYTES, or a table declaring more than KSYMS_MAX_TABLE_SYMS symbols, is
 * refused before a single name is handed on; the encoder refuses such a table too. */
static void test_ksyms_decoded_size_is_bounded(void **state)
{
	(void)state;
	size_t n = KSYMS_MAX_CHUNK_SYMS;
	int64_t *d = calloc(n, sizeof(*d));
	uint32_t *sh = calloc(n, sizeof(*sh));
	size_t slen = KSYMS_NAME_MAX + 1 + 2 * (n - 1);
	uint8_t *suf = malloc(slen);
	assert_true(d && sh && suf);
	/* name 0: 511 'x'; every next one shares 510 bytes and adds one: 16384 names of 511 bytes
	 * (8 MiB decoded) from 83 KB of message */
	memset(suf, 'x', KSYMS_NAME_MAX);
	suf[KSYMS_NAME_MAX] = 0;
	for (size_t i = 1; i < n; i++) {
		d[i] = 16;
		sh[i] = KSYMS_NAME_MAX - 1;
		suf[KSYMS_NAME_MAX + 1 + 2 * (i - 1)] = (uint8_t)('a' + i % 26);
		suf[KSYMS_NAME_MAX + 2 + 2 * (i - 1)] = 0;
	}
	d[0] = (int64_t)0xffffffff81000000ull;
	Prof__KernelSymbols m = PROF__KERNEL_SYMBOLS__INIT;
	m.kernel_boot_id = "boot";
	m.chunks = 1;
	m.total = (uint32_t)n;
	m.n_addr_delta = m.n_shared = n;
	m.addr_delta = d;
	m.shared = sh;
	m.suffixes.data = suf;
	m.suffixes.len = slen;
	fprintf(stderr, "# forged chunk: %zu bytes packed, %zu decoded\n",
		prof__kernel_symbols__get_packed_size(&m), n * (KSYMS_NAME_MAX + 1));
	refused(&m, "names decoding past KSYMS_MAX_CHUNK_NAME_BYTES");
	struct table t = {0};
	char err[200];
	assert_int_equal(ksyms_chunk_decode(&m, collect, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "KSYMS_MAX_CHUNK_NAME_BYTES"));
	/* the callback saw at most the chunk limit's worth of names */
	assert_true(t.n * (KSYMS_NAME_MAX + 1) <= KSYMS_MAX_CHUNK_NAME_BYTES);
	table_free(&t);
	/* exactly at the limit (the agent's own worst case: 4096 names of 511 bytes) passes */
	m.total = m.n_addr_delta = m.n_shared = KSYMS_CHUNK_SYMS;
	suf[KSYMS_NAME_MAX + 2 + 2 * (KSYMS_CHUNK_SYMS - 2)] = 0;
	m.suffixes.len = KSYMS_NAME_MAX + 1 + 2 * (KSYMS_CHUNK_SYMS - 1);
	assert_int_equal(ksyms_chunk_decode(&m, NULL, NULL, err, sizeof(err)), 0);
	/* a table declaring more symbols than KSYMS_MAX_TABLE_SYMS (the query used to find out after
	 * loading 4 M of them) */
	m.n_addr_delta = m.n_shared = 3;
	m.suffixes.len = KSYMS_NAME_MAX + 1 + 2 * 2;
	m.chunks = KSYMS_MAX_TABLE_SYMS / KSYMS_MAX_CHUNK_SYMS + 1;
	m.total = KSYMS_MAX_TABLE_SYMS + 1;
	refused(&m, "a table over KSYMS_MAX_TABLE_SYMS");
	assert_int_equal(ksyms_chunk_decode(&m, NULL, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a table"));
	free(d);
	free(sh);
	free(suf);
	/* the agent's encoder refuses such a table before sending anything */
	size_t big = KSYMS_MAX_TABLE_SYMS + 1;
	uint64_t *addr = calloc(big, sizeof(*addr));
	const char **names = calloc(big, sizeof(*names));
	assert_true(addr && names);
	for (size_t i = 0; i < big; i++)
		names[i] = "f";
	assert_int_equal(ksyms_encode(addr, names, big, "boot", emit_roundtrip, &t), -EFBIG);
	assert_int_equal(t.n, 0);
	free(addr);
	free(names);
}

/* This host's own table (as root, kptr_restrict 0 or 1): what an agent here sends. */
static void test_ksyms_proc_kallsyms_round_trip(void **state)
{
	(void)state;
	struct table t = {0};
	struct kallsyms_stats st;
	int rc = kallsyms_read_send("/proc/kallsyms", NULL, emit_roundtrip, &t, &st);
	if (rc == -ENOENT) {
		fprintf(stderr, "skipped: /proc/kallsyms shows no addresses here (not root, or kptr_restrict 2)\n");
		skip();
	}
	assert_int_equal(rc, 0);
	assert_int_equal(t.n, st.symbols);
	assert_true(t.n > 1000);
	fprintf(stderr, "# /proc/kallsyms: %zu text symbols in %zu records, %zu bytes (%.1f a symbol)\n", t.n, t.chunks,
		t.bytes, (double)t.bytes / (double)t.n);
	/* the resolver names a function from this table as /proc/kallsyms does */
	struct sym_resolver *r;
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	assert_int_equal(sym_resolver_set_kernel(r, t.addr, (const char *const *)t.name, t.n), 0);
	FILE *f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	char line[600];
	unsigned long long a = 0;
	char type, name[512] = "";
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %511s", &a, &type, name) == 3 && strcmp(name, "schedule") == 0)
			break;
	fclose(f);
	if (strcmp(name, "schedule") == 0)
		assert_string_equal(sym_resolve_kernel(r, a + 1), "schedule");
	sym_resolver_free(r);
	table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ksyms_file_read_as_the_agent_does),
	    cmocka_unit_test(test_ksyms_chunks_round_trip),
	    cmocka_unit_test(test_ksyms_validate_refuses_bad_chunks),
	    cmocka_unit_test(test_ksyms_decoded_size_is_bounded),
	    cmocka_unit_test(test_ksyms_proc_kallsyms_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
