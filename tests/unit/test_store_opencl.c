/* Unit tests of collector/store/store_opencl.c: ClCommand records into cl_kernels /
 * cl_commands, exactly once, read back with their dependency lists; and
 * collector/report/cl_data.c on top (names, busy time, clock offset). */
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
#include "validate_opencl.h"
#include "report/cl_data.h"
#include "store/store.h"
#include "store/store_opencl.h"

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

int main(void)
{
	log_init("test", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_opencl_commands_roundtrip),
		cmocka_unit_test(test_store_opencl_overflowing_time_refused),
		cmocka_unit_test(test_store_opencl_kernel_model_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
