/* collector report's sensitivity per function (report/overview_sensf.c): a
 * session whose mapping is this test's own executable and whose trace windows
 * run a pointer chase in one function and a dense loop in another; the report
 * names both functions (the session's symbols), the chase holds the thread's
 * Lambda*alpha0 and the dense loop none, and the split adds up to the row. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "edag/edag.h"
#include "profile_fixture.h"
#include "report/overview.h"
#include "report_fixture.h"
#include "store/store.h"

#define MAP_START 0x555500000000ull
enum { PID = 300, TID = 301, PER = 400, NWIN = 3 };

/* the two functions the windows' PCs fall in (never called) */
__attribute__((noinline, used)) int sensf_chase_fn(const int *p)
{
	return p[0];
}
__attribute__((noinline, used)) int sensf_dense_fn(int x)
{
	return x * 3 + 1;
}

/* PER/2 chase loads (r1 = [r1], far apart: each a miss without a cache model)
 * in the chase function, then PER/2 register adds in the dense one */
static int put_window(struct store *st, int64_t sid, uint32_t w, uint64_t off_chase, uint64_t off_dense)
{
	struct edag_insn ins[PER];
	memset(ins, 0, sizeof(ins));
	for (int i = 0; i < PER; i++) {
		struct edag_insn *in = &ins[i];
		if (i < PER / 2) {
			in->pc = MAP_START + off_chase + (uint64_t)(i % 4);
			in->cls = EDAG_LOAD;
			in->mem = EDAG_MEM_READ;
			in->addr = 0x10000000ull + ((uint64_t)w * PER + (uint64_t)i) * 8192;
			in->size = 8;
			in->nread = in->nwrite = 1;
			in->rd[0] = in->wr[0] = 1;
		} else {
			in->pc = MAP_START + off_dense + (uint64_t)(i % 4);
			in->cls = EDAG_INT;
			in->nread = 2;
			in->rd[0] = 2;
			in->rd[1] = 3;
			in->nwrite = 1;
			in->wr[0] = 2;
		}
	}
	Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
	int rc = edag_window_encode(ins, PER, &tw);
	if (rc < 0)
		return rc;
	tw.arch = EDAG_ARCH_X86_64;
	tw.pid = PID;
	tw.tid = TID;
	tw.window_index = w;
	tw.sampled_share = 1;
	tw.represented_insns = PER;
	tw.capture = 2; /* replay windows of full length: they vote */
	Prof__Envelope e = PROF__ENVELOPE__INIT;
	e.seq = 2 + w;
	e.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
	e.trace_window = &tw;
	rc = store_put_record(st, sid, &e, 100);
	edag_window_encode_free(&tw);
	return rc < 0 ? rc : store_commit(st);
}

static void test_report_sensitivity_per_function(void **state)
{
	(void)state;
	char bin[PATH_MAX];
	ssize_t bl = readlink("/proc/self/exe", bin, sizeof(bin) - 1);
	assert_true(bl > 0);
	bin[bl] = '\0';
	uint64_t off_chase, off_dense;
	assert_int_equal(pf_sym_file_off(bin, "sensf_chase_fn", &off_chase), 0);
	assert_int_equal(pf_sym_file_off(bin, "sensf_dense_fn", &off_dense), 0);
	struct store *st;
	int64_t sid;
	assert_int_equal(store_open(":memory:", 0, &st), 0);
	assert_int_equal(rf_make_trace_session(st, "sensf", 0, 1, &sid), 0);
	assert_int_equal(rf_add_mapping(st, sid, 1, PID, MAP_START, MAP_START + 0x10000000ull, bin), 0);
	for (uint32_t w = 0; w < NWIN; w++)
		assert_int_equal(put_window(st, sid, w, off_chase, off_dense), 0);

	struct overview_opts oo = {.sections = true, .limit = 20};
	struct overview ov;
	assert_int_equal(overview_load(st, sid, &oo, &ov), 0);
	assert_int_equal(ov.nsens, 1);
	assert_int_equal(ov.nsensf, 2);
	const struct sens_func_row *c = &ov.sensf[0], *d = &ov.sensf[1];
	assert_string_equal(c->name, "sensf_chase_fn"); /* the largest first */
	assert_string_equal(d->name, "sensf_dense_fn");
	assert_string_equal(c->module, strrchr(bin, '/') + 1); /* the mapping's file */
	assert_true(c->split == 1 && d->split == 0);
	assert_int_equal(c->insns, NWIN * PER / 2);
	assert_int_equal(d->insns, NWIN * PER / 2);
	assert_true(c->W_share == 1 && d->W_share == 0);
	assert_true(d->mem_share == 0 && d->lambda_per_insn == 0);
	/* the chase holds the whole row: lambda_f / insn = 1 (every load a miss, one chain) */
	assert_true(fabs(c->mem_share - ov.sens[0].mem_share) < 1e-9);
	assert_true(c->mem_share > 0);
	assert_true(fabs(c->lambda_per_insn - 1) < 1e-9);
	assert_true(c->mem_lo <= c->mem_share && c->mem_share <= c->mem_hi);

	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(overview_text(&ov, m), 0);
	assert_int_equal(fclose(m), 0);
	assert_non_null(strstr(buf, "by function"));
	assert_non_null(strstr(buf, "sensf_chase_fn"));
	free(buf);
	buf = NULL;
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(overview_json(&ov, m), 0);
	assert_int_equal(fclose(m), 0);
	assert_non_null(strstr(buf, "\"functions\":[{\"name\":\"sensf_chase_fn\""));
	free(buf);
	buf = NULL; /* the HTML page's sensitivity section shows the rows too */
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(overview_html(&ov, m), 0);
	assert_int_equal(fclose(m), 0);
	const char *sec = strstr(buf, "id=\"sensitivity\"");
	assert_non_null(sec);
	assert_non_null(strstr(sec, "sensf_chase_fn"));
	free(buf);
	overview_free(&ov);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_sensitivity_per_function),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
