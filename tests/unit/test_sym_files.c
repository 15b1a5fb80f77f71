/* Host symbolization from real files: a C++ program compiled here (g++)
 * resolves to demangled names (libiberty) with the mangled ones kept; a
 * stripped copy resolves through its separate debug file
 * (objcopy --only-keep-debug) found by build-id under a debug directory, and
 * without it groups as "[module]" with the file offset kept; kernel addresses
 * resolve through a kallsyms file (this host's /proc/kallsyms where readable,
 * and a written one); Rust symbol strings (legacy and v0) demangle. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_buildid.h"
#include "profile_fixture.h"
#include "symbols.h"
#include "testproc.h"

#define MAP_START 0x555555000000ull

struct fx {
	char dir[256], bin[600];
	int have_bin;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || tp_tmpdir(f->dir, sizeof(f->dir), "symfiles") < 0)
		return -1;
	f->have_bin = pf_compile(f->dir, f->bin, sizeof(f->bin)) == 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (!getenv("PROF_KEEP_TMP"))
		tp_rm_rf(f->dir);
	free(f);
	return 0;
}

static struct sym_mapping mapping_of(const char *path, const uint8_t *bid, size_t bidlen)
{
	return (struct sym_mapping){.path = path, .build_id = bid, .build_id_len = bidlen, .start = MAP_START,
				    .end = MAP_START + 0x100000, .pgoff = 0};
}

static void test_sym_files_cxx_names_demangled(void **state)
{
	struct fx *f = *state;
	if (!f->have_bin) {
		print_message("skipped: g++ not installed: no C++ program\n");
		skip();
	}
	struct sym_resolver *r;
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	static const struct {
		const char *mangled, *demangled;
	} want[] = {
		{"_ZN4demo6Worker3runEl", "demo::Worker::run(long)"},
		{"_ZN4demo3hotIlEET_S1_", "long demo::hot<long>(long)"},
		{"_ZN4demo3hotIiEET_S1_", "int demo::hot<int>(int)"},
		{"_ZN4demo4coldEPi", "demo::cold(int*)"},
		{"main", "main"},
	};
	struct sym_mapping m = mapping_of(f->bin, NULL, 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t off, got_off;
		assert_int_equal(pf_sym_file_off(f->bin, want[i].mangled, &off), 0);
		const char *raw = NULL;
		const char *name = sym_resolve_raw(r, &m, MAP_START + off + 1, &got_off, &raw);
		assert_non_null(name);
		assert_string_equal(name, want[i].demangled);
		assert_string_equal(raw, want[i].mangled);
		assert_int_equal(got_off, off + 1);
	}
	sym_resolver_free(r);
}

static void test_sym_files_rust_names_demangled(void **state)
{
	(void)state;
	/* no Rust compiler in the image: the symbol strings as rustc emits them */
	char *d = sym_demangle("_ZN4core3fmt5write17h0123456789abcdefE"); /* legacy */
	assert_non_null(d);
	assert_string_equal(d, "core::fmt::write");
	free(d);
	d = sym_demangle("_RNvCs1234_7mycrate3foo"); /* v0 */
	assert_non_null(d);
	assert_string_equal(d, "mycrate::foo");
	free(d);
	assert_null(sym_demangle("main"));
	assert_null(sym_demangle("_Zgarbage"));
}

static void test_sym_files_debug_file_by_build_id(void **state)
{
	struct fx *f = *state;
	if (!f->have_bin) {
		print_message("skipped: g++ not installed: no C++ program\n");
		skip();
	}
	char stripped[700], dbg[1000], dbgdir[700], cmd[4000];
	snprintf(stripped, sizeof(stripped), "%s/demo.stripped", f->dir);
	snprintf(dbgdir, sizeof(dbgdir), "%s/debug", f->dir);
	uint8_t bid[BUILD_ID_MAX];
	int bl = elf_build_id(f->bin, bid, sizeof(bid));
	assert_true(bl > 2);
	char hex[2 * BUILD_ID_MAX + 1];
	sym_build_id_hex(bid, (size_t)bl, hex, sizeof(hex));
	snprintf(dbg, sizeof(dbg), "%s/.build-id/%.2s/%s.debug", dbgdir, hex, hex + 2);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/.build-id/%.2s && objcopy --only-keep-debug %s %s && objcopy --strip-all %s %s", dbgdir,
		 hex, f->bin, dbg, f->bin, stripped);
	assert_int_equal(system(cmd), 0);
	uint64_t off;
	assert_int_equal(pf_sym_file_off(f->bin, "_ZN4demo6Worker3runEl", &off), 0);
	struct sym_mapping m = mapping_of(stripped, bid, (size_t)bl);
	/* without the debug directory: no symbols (stripped), grouped per module */
	struct sym_resolver *r;
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	assert_int_equal(sym_resolver_set_debug_dir(r, "/nonexistent-debug"), 0);
	uint64_t got;
	assert_null(sym_resolve(r, &m, MAP_START + off + 1, &got));
	char buf[256];
	struct sym_frame fr;
	sym_describe(r, &m, MAP_START + off + 1, 0, buf, sizeof(buf), &fr);
	assert_string_equal(fr.name, "[demo.stripped]");
	assert_string_equal(fr.module, "demo.stripped");
	assert_int_equal(fr.file_off, off + 1);
	assert_int_equal(fr.resolved, 0);
	sym_resolver_free(r);
	/* with it: the separate debug file by build-id */
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	assert_int_equal(sym_resolver_set_debug_dir(r, dbgdir), 0);
	sym_describe(r, &m, MAP_START + off + 1, 0, buf, sizeof(buf), &fr);
	assert_string_equal(fr.name, "demo::Worker::run(long)");
	assert_string_equal(fr.raw, "_ZN4demo6Worker3runEl");
	assert_int_equal(fr.resolved, 1);
	sym_resolver_free(r);
	/* a debug file of another build-id is refused */
	uint8_t other[20];
	memset(other, 0x5a, sizeof(other));
	char odbg[3000];
	sym_build_id_hex(other, sizeof(other), hex, sizeof(hex));
	snprintf(odbg, sizeof(odbg), "mkdir -p %s/.build-id/%.2s && cp %s %s/.build-id/%.2s/%s.debug", dbgdir, hex, dbg,
		 dbgdir, hex, hex + 2);
	assert_int_equal(system(odbg), 0);
	struct sym_mapping mo = mapping_of(stripped, other, sizeof(other));
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	assert_int_equal(sym_resolver_set_debug_dir(r, dbgdir), 0);
	assert_null(sym_resolve(r, &mo, MAP_START + off + 1, &got));
	sym_resolver_free(r);
}

/* --debug-dir adds to /usr/lib/debug (issue 39: it replaced it). A board's libc that
 * is not on this host (its path missing here) is named from its debug file under
 * /usr/lib/debug (libc6-dbg: this host's libc stands for the board's), while
 * --debug-dir names another directory. */
static void test_sym_files_debug_dir_adds_to_default(void **state)
{
	struct fx *f = *state;
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint8_t bid[BUILD_ID_MAX];
	int bl = elf_build_id(libc, bid, sizeof(bid));
	assert_true(bl > 2);
	char hex[2 * BUILD_ID_MAX + 1], dbg[400];
	sym_build_id_hex(bid, (size_t)bl, hex, sizeof(hex));
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	/* __GI___fork's address from the debug file's symbols, its file offset from libc's
	 * executable segment (readelf, binutils) */
	unsigned long long va = 0, seg_off = 0, seg_va = 0;
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "readelf -sW %s 2>/dev/null | awk '$8==\"__GI___fork\" {print $2; exit}'", dbg);
	FILE *p = access(dbg, R_OK) == 0 ? popen(cmd, "r") : NULL;
	if (p) {
		if (fscanf(p, "%llx", &va) != 1)
			va = 0;
		pclose(p);
	}
	snprintf(cmd, sizeof(cmd), "readelf -lW %s | awk '$1==\"LOAD\" && $7==\"R\" && $8==\"E\" {print $2, $3}'", libc);
	p = va ? popen(cmd, "r") : NULL;
	if (p) {
		if (fscanf(p, "%llx %llx", &seg_off, &seg_va) != 2)
			va = 0;
		pclose(p);
	}
	if (!va) {
		print_message("skipped: no debug file of this host's libc (libc6-dbg) in /usr/lib/debug\n");
		skip();
	}
	uint64_t off = va - seg_va + seg_off;
	struct sym_mapping m = mapping_of("/nonexistent-board-root/lib/libc.so.6", bid, (size_t)bl);
	struct sym_resolver *r;
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	char other[600], buf[256];
	snprintf(other, sizeof(other), "%s/other-debug", f->dir);
	assert_int_equal(sym_resolver_set_debug_dir(r, other), 0);
	struct sym_frame fr;
	sym_describe(r, &m, MAP_START + off + 1, 0, buf, sizeof(buf), &fr);
	assert_int_equal(fr.resolved, 1);
	assert_string_equal(fr.module, "libc.so.6");
	assert_true(fr.name[0] && fr.name[0] != '[');
	fprintf(stderr, "# libc at +0x%llx with --debug-dir %s: %s\n", (unsigned long long)off + 1, other, fr.name);
	sym_resolver_free(r);
}

static void test_sym_files_kallsyms(void **state)
{
	struct fx *f = *state;
	char path[400];
	snprintf(path, sizeof(path), "%s/kallsyms", f->dir);
	FILE *o = fopen(path, "w");
	assert_non_null(o);
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81001000 t do_syscall_64\n"
	      "ffffffff81001800 d some_data\n"
	      "ffffffff81002000 T __x64_sys_read\n"
	      "ffffffffc0100000 t kbase_job_done\t[mali_kbase]\n",
	      o);
	fclose(o);
	struct sym_resolver *r;
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	assert_null(sym_resolve_kernel(r, 0xffffffff81001010ull)); /* nothing loaded */
	assert_int_equal(sym_resolver_load_kallsyms(r, path), 0);
	assert_string_equal(sym_resolve_kernel(r, 0xffffffff81001010ull), "do_syscall_64");
	assert_string_equal(sym_resolve_kernel(r, 0xffffffff81001900ull), "do_syscall_64"); /* data is no function */
	assert_string_equal(sym_resolve_kernel(r, 0xffffffffc0100044ull), "kbase_job_done");
	assert_null(sym_resolve_kernel(r, 0xffffffff80000000ull));
	char buf[64];
	struct sym_frame fr;
	sym_describe(r, NULL, 0xffffffff81002001ull, 1, buf, sizeof(buf), &fr);
	assert_string_equal(fr.name, "__x64_sys_read");
	assert_string_equal(fr.module, "[kernel]");
	sym_resolver_free(r);
	/* read without privilege: every address 0 */
	o = fopen(path, "w");
	fputs("0000000000000000 T _stext\n0000000000000000 t do_syscall_64\n", o);
	fclose(o);
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	assert_int_equal(sym_resolver_load_kallsyms(r, path), -ENOENT);
	sym_describe(r, NULL, 0xffffffff81002001ull, 1, buf, sizeof(buf), &fr);
	assert_string_equal(fr.name, "[kernel]");
	o = fopen(path, "w");
	fputs("not kallsyms\n", o);
	fclose(o);
	assert_int_equal(sym_resolver_load_kallsyms(r, path), -EINVAL);
	sym_resolver_free(r);
	/* this host's own table, where readable (root): a known function resolves */
	FILE *k = fopen("/proc/kallsyms", "r");
	unsigned long long addr = 0;
	char line[512];
	while (k && fgets(line, sizeof(line), k)) {
		char type, name[256];
		unsigned long long a;
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && a && (type == 'T' || type == 't') &&
		    strcmp(name, "schedule") == 0) {
			addr = a;
			break;
		}
	}
	if (k)
		fclose(k);
	if (!addr) {
		print_message("/proc/kallsyms has no readable address of schedule here: host check left out\n");
		return;
	}
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	assert_int_equal(sym_resolver_load_kallsyms(r, "/proc/kallsyms"), 0);
	assert_string_equal(sym_resolve_kernel(r, addr + 1), "schedule");
	sym_resolver_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sym_files_cxx_names_demangled),
		cmocka_unit_test(test_sym_files_rust_names_demangled),
		cmocka_unit_test(test_sym_files_debug_file_by_build_id),
		cmocka_unit_test(test_sym_files_debug_dir_adds_to_default),
		cmocka_unit_test(test_sym_files_kallsyms),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
