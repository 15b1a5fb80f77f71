/* Unit tests of collector/store/store_opencl.c: ClCommand and ClCommandBatch
 * records into cl_kernels / cl_commands, exactly once, read back with their
 * dependency lists; collector/report/cl_data.c on top (names, busy time,
 * clock offset); store_target.c (TargetEnd); and the --opencl report's rows
 * (one per kernel declaration and NDRange shape, full names) and its words
 * on a crashed program and on a session without commands. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "log.h"
#include "validate.h"
#include "validate_opencl.h"
#include "report/cl_data.h"
#include "store/store.h"
#include "report/report.h"
#include "store/store_opencl.h"
#include "store/store_target.h"

static int64_t open_session(struct store *s)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = 1;
	h.agent_id = "board";
	h.boot_id = 9;
	int64_t sid;
	uint64_t max;
	assert_int_equal(store_session_open(s, &h, "peer", &sid, &max, NULL), 0);
	return sid;
}

static int put(struct store *s, int64_t sid, uint64_t seq, uint64_t id, uint32_t kernel, uint64_t start,
	       uint64_t end, const uint64_t *wait, size_t nwait, bool declare)
{
	Prof__ClCommand c = PROF__CL_COMMAND__INIT;
	Prof__ClKernelDesc k = PROF__CL_KERNEL_DESC__INIT, *ks[1] = {&k};
	uint64_t g[1] = {1024}, rd[1] = {11}, wr[1] = {12};
	c.id = id;
	c.pid = 100;
	c.queue_id = 1;
	c.type = kernel ? 0x11F0 : 0x11F3;
	c.kernel_id = kernel;
	c.work_dim = kernel ? 1 : 0;
	c.n_global_size = kernel ? 1 : 0;
	c.global_size = g;
	c.queued_ns = start - 100;
	c.submit_ns = start - 50;
	c.start_ns = start;
	c.end_ns = end;
	c.host_enqueue_ns = start - 100 + 5000; /* device clock 5 us behind the host's */
	c.wait_ids = (uint64_t *)wait;
	c.n_wait_ids = nwait;
	c.mem_read = rd;
	c.n_mem_read = 1;
	c.mem_written = wr;
	c.n_mem_written = 1;
	if (declare) {
		k.id = kernel;
		k.name = "saxpy";
		k.build_options = "-O3";
		c.new_kernels = ks;
		c.n_new_kernels = 1;
	}
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_CL_COMMAND;
	env.cl_command = &c;
	return store_put_record(s, sid, &env, 100);
}

struct seen {
	int n;
	uint64_t wait0;
	size_t nwait;
	uint64_t read0;
};

static int count_cmd(const struct store_cl_command_row *r, void *arg)
{
	struct seen *s = arg;
	if (r->id == 2) {
		s->nwait = r->n_wait;
		s->wait0 = r->n_wait ? r->wait_ids[0] : 0;
		s->read0 = r->n_read ? r->mem_read[0] : 0;
	}
	s->n++;
	return 0;
}

static void test_store_opencl_commands_roundtrip(void **state)
{
	struct store *s;
	assert_int_equal(store_open(":memory:", 0, &s), 0);
	int64_t sid = open_session(s);
	uint64_t w[1] = {1};
	assert_int_equal(put(s, sid, 1, 1, 1, 1000, 3000, NULL, 0, true), 1);
	assert_int_equal(put(s, sid, 2, 2, 1, 2000, 5000, w, 1, false), 1);
	assert_int_equal(put(s, sid, 2, 2, 1, 2000, 5000, w, 1, false), 0); /* duplicate seq */
	assert_int_equal(put(s, sid, 3, 3, 0, 6000, 6500, NULL, 0, false), 1);
	assert_int_equal(store_commit(s), 0);
	struct seen seen = {0};
	assert_int_equal(store_cl_commands(s, sid, count_cmd, &seen), 0);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.nwait, 1);
	assert_int_equal(seen.wait0, 1);
	assert_int_equal(seen.read0, 11);

	struct cl_data d;
	assert_int_equal(cl_data_load(s, sid, &d), 0);
	assert_int_equal(d.n, 3);
	assert_string_equal(d.cmds[0].name, "saxpy");
	assert_string_equal(d.cmds[2].name, "read buffer");
	assert_int_equal(d.busy_ns, 4500);	       /* [1000,5000] and [6000,6500] */
	assert_int_equal(d.device_to_host_ns, 5000);
	assert_int_equal(d.dag.n_edges, 1); /* 1 -> 2 by its wait list; nobody wrote buffer 11 */
	cl_data_free(&d);
	store_close(s);
}

static void test_store_opencl_overflowing_time_refused(void **state)
{
	struct store *s;
	assert_int_equal(store_open(":memory:", 0, &s), 0);
	int64_t sid = open_session(s);
	assert_int_equal(put(s, sid, 1, 1, 1, 1000, UINT64_MAX, NULL, 0, true), -ERANGE);
	store_rollback(s);
	store_close(s);
}

static int model_cb(const struct store_cl_kernel_row *r, void *arg)
{
	double *m = arg;
	m[0] = r->model_ops;
	m[1] = r->model_bytes;
	return 0;
}

/* The kernel work model of agent profile --kernel-model: validated, stored with the declaration. */
static void test_store_opencl_kernel_model_kept(void **state)
{
	(void)state;
	Prof__ClCommand c = PROF__CL_COMMAND__INIT;
	Prof__ClKernelDesc k = PROF__CL_KERNEL_DESC__INIT, *ks[1] = {&k};
	uint64_t g[1] = {64};
	c.id = 1;
	c.pid = 100;
	c.queue_id = 1;
	c.type = 0x11F0;
	c.kernel_id = 1;
	c.work_dim = 1;
	c.n_global_size = 1;
	c.global_size = g;
	c.start_ns = 1000;
	c.end_ns = 2000;
	k.id = 1;
	k.name = "matmul";
	c.new_kernels = ks;
	c.n_new_kernels = 1;
	char err[256];
	const double bad[] = {-1, NAN, INFINITY, 1e16};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k.model_ops = bad[i];
		k.model_bytes = 4;
		assert_int_equal(validate_cl_command(&c, err, sizeof(err)), -EINVAL);
	}
	k.model_ops = 768;
	k.model_bytes = 3076;
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), 0);
	struct store *s;
	assert_int_equal(store_open(":memory:", 0, &s), 0);
	int64_t sid = open_session(s);
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_CL_COMMAND;
	env.cl_command = &c;
	assert_int_equal(store_put_record(s, sid, &env, 100), 1);
	assert_int_equal(store_commit(s), 0);
	double m[2] = {0, 0};
	assert_int_equal(store_cl_kernels(s, sid, model_cb, m), 0);
	assert_float_equal(m[0], 768, 0);
	assert_float_equal(m[1], 3076, 0);
	store_close(s);
}

/* One launch of kernel id (declared with name and program hash when declare), NDRange global x local. */
static void launch(Prof__ClCommand *c, uint64_t *g, uint64_t *l, uint64_t id, uint32_t kernel, uint64_t global,
		   uint64_t local, uint64_t start)
{
	prof__cl_command__init(c);
	g[0] = global;
	l[0] = local;
	c->id = id;
	c->pid = 7;
	c->queue_id = 1;
	c->type = 0x11F0;
	c->kernel_id = kernel;
	c->work_dim = 1;
	c->n_global_size = 1;
	c->global_size = g;
	c->n_local_size = local ? 1 : 0;
	c->local_size = l;
	c->queued_ns = start - 10;
	c->submit_ns = start - 5;
	c->start_ns = start;
	c->end_ns = start + 100 * kernel;
}

static char *report_text(struct store *s, int64_t sid, bool json, enum report_sort sort)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct report_opts o = {.json = json, .limit = 20, .sort = sort};
	assert_int_equal(report_opencl(s, sid, &o, f), 0);
	fclose(f);
	return buf;
}

/* CLBlast's tuner: one kernel name in several programs (its tuned variants) and shapes: a row each,
 * with the work sizes; a long name whole; the rows of a batch record, exactly once. */
static void test_store_opencl_batch_rows_per_variant_and_shape(void **state)
{
	(void)state;
	static const char long_name[] = "gemm_kernel_with_a_name_much_longer_than_twenty_eight_characters";
	Prof__ClKernelDesc k1 = PROF__CL_KERNEL_DESC__INIT, k2 = PROF__CL_KERNEL_DESC__INIT,
			   k3 = PROF__CL_KERNEL_DESC__INIT;
	Prof__ClKernelDesc *d1[1] = {&k1}, *d2[1] = {&k2}, *d3[1] = {&k3};
	k1.id = 1, k1.name = "XaxpyFastest", k1.program_hash = 0x1111111100000000ull, k1.build_options = "-DWGS=64";
	k2.id = 2, k2.name = "XaxpyFastest", k2.program_hash = 0x2222222200000000ull, k2.build_options = "-DWGS=128";
	k3.id = 3, k3.name = (char *)long_name, k3.program_hash = 0x3333333300000000ull;
	Prof__ClCommand c[6], *cp[6];
	uint64_t g[6][1], l[6][1];
	launch(&c[0], g[0], l[0], 1, 1, 1024, 64, 1000); /* variant 1, 1024 x 64: twice */
	launch(&c[1], g[1], l[1], 2, 1, 1024, 64, 2000);
	launch(&c[2], g[2], l[2], 3, 1, 2048, 64, 3000); /* variant 1, another shape */
	launch(&c[3], g[3], l[3], 4, 2, 1024, 128, 4000); /* variant 2 */
	launch(&c[4], g[4], l[4], 5, 3, 64, 0, 5000);	  /* the long name, local chosen by the runtime */
	launch(&c[5], g[5], l[5], 6, 3, 64, 0, 6000);
	c[0].new_kernels = d1, c[0].n_new_kernels = 1;
	c[3].new_kernels = d2, c[3].n_new_kernels = 1;
	c[4].new_kernels = d3, c[4].n_new_kernels = 1;
	for (int i = 0; i < 6; i++)
		cp[i] = &c[i];
	Prof__ClCommandBatch b = PROF__CL_COMMAND_BATCH__INIT;
	b.n_commands = 6;
	b.commands = cp;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_CL_BATCH;
	env.cl_batch = &b;
	char err[256];
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);
	struct store *s;
	assert_int_equal(store_open(":memory:", 0, &s), 0);
	int64_t sid = open_session(s);
	assert_int_equal(store_put_record(s, sid, &env, 100), 1);
	assert_int_equal(store_put_record(s, sid, &env, 100), 0); /* a replay: nothing twice */
	assert_int_equal(store_commit(s), 0);
	struct seen seen = {0};
	assert_int_equal(store_cl_commands(s, sid, count_cmd, &seen), 0);
	assert_int_equal(seen.n, 6);

	char *txt = report_text(s, sid, false, REPORT_SORT_TOTAL);
	fprintf(stderr, "%s", txt);
	int rows = 0;
	for (const char *p = txt; (p = strstr(p, "\nXaxpyFastest ")) != NULL; p++)
		rows++;
	assert_int_equal(rows, 3); /* two programs, and two shapes of the first */
	assert_non_null(strstr(txt, long_name));
	assert_non_null(strstr(txt, "11111111"));
	assert_non_null(strstr(txt, "2048"));
	free(txt);
	char *js = report_text(s, sid, true, REPORT_SORT_COUNT);
	assert_non_null(strstr(js, "\"global\":[1024],\"local\":[64],\"count\":2"));
	assert_non_null(strstr(js, "\"build_options\":\"-DWGS=128\""));
	assert_non_null(strstr(js, "\"local\":null"));
	/* sorted by count: the two-launch rows first */
	assert_true(strstr(js, "\"count\":2") < strstr(js, "\"count\":1"));
	free(js);
	store_close(s);
}

static void put_target_end(struct store *s, int64_t sid, uint64_t seq, uint32_t sig, uint32_t inside,
			   const char *detail, const char *note)
{
	Prof__TargetEnd t = PROF__TARGET_END__INIT;
	t.pid = 42;
	t.signal = sig;
	t.exit_code = sig ? 128 + (int)sig : 0;
	t.capture_inside = inside;
	t.capture_detail = (char *)detail;
	t.opencl_note = (char *)note;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_TARGET_END;
	env.target_end = &t;
	char err[256];
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);
	assert_int_equal(store_put_record(s, sid, &env, 100), 1);
	assert_int_equal(store_commit(s), 0);
}

/* What became of the program: a crash with the library inside a call of its own, and a session
 * without commands that says why. */
static void test_store_opencl_program_end_in_the_report(void **state)
{
	(void)state;
	struct store *s;
	assert_int_equal(store_open(":memory:", 0, &s), 0);
	int64_t sid = open_session(s);
	put_target_end(s, sid, 1, 11, 3, "thread 12 in clSetKernelArg, in the library's own call to clGetKernelArgInfo",
		       "no process initialised the layer: the program made no OpenCL call through an ICD loader");
	struct store_target_end_row r;
	assert_int_equal(store_target_end(s, sid, &r), 1);
	assert_int_equal(r.signal, 11);
	assert_int_equal(r.exit_code, 139);
	assert_int_equal(r.capture_inside, 3);
	char *txt = report_text(s, sid, false, REPORT_SORT_TOTAL);
	fprintf(stderr, "%s", txt);
	assert_non_null(strstr(txt, "no commands in session"));
	assert_non_null(strstr(txt, "no process initialised the layer"));
	assert_non_null(strstr(txt, "program: CRASHED by signal 11 (SIGSEGV), exit code 139"));
	assert_non_null(strstr(txt, "in a call of its own then: thread 12 in clSetKernelArg"));
	free(txt);
	char *js = report_text(s, sid, true, REPORT_SORT_TOTAL);
	assert_non_null(strstr(js, "\"crashed\":true"));
	assert_non_null(strstr(js, "\"capture_inside\":\"own\""));
	assert_non_null(strstr(js, "\"why_no_commands\":\"no process initialised the layer"));
	free(js);
	store_close(s);
}

int main(void)
{
	log_init("test", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_opencl_commands_roundtrip),
		cmocka_unit_test(test_store_opencl_overflowing_time_refused),
		cmocka_unit_test(test_store_opencl_kernel_model_kept),
		cmocka_unit_test(test_store_opencl_batch_rows_per_variant_and_shape),
		cmocka_unit_test(test_store_opencl_program_end_in_the_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
