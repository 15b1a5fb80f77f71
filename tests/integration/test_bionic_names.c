/* The OpenCL helper's sources stay buildable for Android without a bionic tree (issue 35):
 * scripts/bionic-names-check.sh, run at every link of prof-clhelper (mk/cl_layer.mk), compares
 * what a glibc build of a program imports with bionic's public API list for the Android board
 * (board/android-arm64/bionic-api.txt: API 29, arm64, from bionic's own libc/libdl/libm maps).
 * The built helper passes; a program calling glibc-only functions (qsort_r, dlinfo,
 * pthread_timedjoin_np: none is in bionic at API 29) fails, naming each; glibc's own spellings
 * of what bionic has (errno's __errno_location, scanf's __isoc99_ names, the entry's
 * __libc_start_main) pass. The small programs are compiled here with the host's /usr/bin/cc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testproc.h"

struct env {
	char dir[256], script[512], list[512], log[300];
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	if (!e || tp_tmpdir(e->dir, sizeof(e->dir), "bionic-names") < 0) {
		free(e);
		return -1;
	}
	const char *src = getenv("PROF_SRC_DIR");
	snprintf(e->script, sizeof(e->script), "%s/scripts/bionic-names-check.sh", src ? src : ".");
	snprintf(e->list, sizeof(e->list), "%s/board/android-arm64/bionic-api.txt", src ? src : ".");
	snprintf(e->log, sizeof(e->log), "%s/check.log", e->dir);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	if (!getenv("PROF_KEEP_TMP"))
		tp_rm_rf(e->dir);
	free(e);
	return 0;
}

/* The check's exit status on FILE, its output in e->log. */
static int check(struct env *e, const char *file)
{
	unlink(e->log);
	char *argv[] = {e->script, "readelf", e->list, (char *)file, NULL};
	return tp_run(argv, e->log, 30000);
}

/* DIR/name built by the host's cc from the C source text. */
static void build(struct env *e, const char *name, const char *source, char *out, size_t len)
{
	char c[400], clog[400];
	snprintf(c, sizeof(c), "%s/%s.c", e->dir, name);
	snprintf(clog, sizeof(clog), "%s/%s.cc.log", e->dir, name);
	snprintf(out, len, "%s/%s", e->dir, name);
	FILE *f = fopen(c, "w");
	assert_non_null(f);
	fputs(source, f);
	fclose(f);
	char *argv[] = {"/usr/bin/cc", "-O0", "-w", "-o", out, c, NULL};
	if (tp_run(argv, clog, 60000) != 0) {
		tp_dump_file(clog);
		fail_msg("cc %s failed", c);
	}
}

static void test_bionic_names_helper_passes(void **state)
{
	struct env *e = *state;
	char helper[512];
	tp_bin("lib/prof-clhelper", helper, sizeof(helper));
	if (access(helper, R_OK) != 0)
		skip(); /* a build without OpenCL (CONFIG_AGENT_OPENCL off) has no helper */
	int rc = check(e, helper);
	if (rc != 0)
		tp_dump_file(e->log);
	assert_int_equal(rc, 0);
}

static void test_bionic_names_refuses_glibc_only_calls(void **state)
{
	struct env *e = *state;
	char prog[400];
	build(
	    e, "glibc_only",
	    "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <pthread.h>\n#include <stdlib.h>\n#include "
	    "<time.h>\n"
	    "static int cmp(const void *a, const void *b, void *c) { return *(const int *)a - *(const int "
	    "*)b; }\n"
	    "int main(int argc, char **argv) {\n"
	    "  int v[2] = {argc, 1}; qsort_r(v, 2, sizeof(int), cmp, NULL);\n"
	    "  void *h = dlopen(NULL, RTLD_NOW); void *l = NULL; if (h) dlinfo(h, RTLD_DI_LINKMAP, &l);\n"
	    "  struct timespec ts = {0, 0}; if (argc > 5) pthread_timedjoin_np(pthread_self(), NULL, &ts);\n"
	    "  return v[0] + (l != NULL); }\n",
	    prog, sizeof(prog));
	assert_int_equal(check(e, prog), 1);
	char *out = tp_slurp(e->log);
	assert_non_null(out);
	assert_non_null(strstr(out, "FAIL"));
	assert_non_null(strstr(out, "qsort_r"));
	assert_non_null(strstr(out, "dlinfo"));
	assert_non_null(strstr(out, "pthread_timedjoin_np"));
	assert_null(strstr(out, "dlopen ")); /* bionic has dlopen */
	free(out);
}

static void test_bionic_names_maps_glibc_spellings(void **state)
{
	struct env *e = *state;
	char prog[400];
	build(e, "glibc_spellings",
	      "#include <errno.h>\n#include <stdio.h>\n"
	      "int main(int argc, char **argv) { int x = 0;\n"
	      "  if (argc > 1 && sscanf(argv[1], \"%d\", &x) != 1) return errno;\n"
	      "  return x; }\n",
	      prog, sizeof(prog));
	int rc = check(e, prog);
	if (rc != 0)
		tp_dump_file(e->log);
	assert_int_equal(rc, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bionic_names_helper_passes),
	    cmocka_unit_test(test_bionic_names_refuses_glibc_only_calls),
	    cmocka_unit_test(test_bionic_names_maps_glibc_spellings),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
