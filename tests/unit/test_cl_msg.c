/* Unit tests of agent/cl_layer/cl_msg.c (layer -> agent messages) and
 * proto/validate_opencl.c (ClCommand shape checks). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cl_layer/cl_msg.h"
#include "validate_opencl.h"

static void test_cl_msg_command_roundtrip(void **state)
{
	static struct pcl_cmd c, d;
	memset(&c, 0, sizeof(c));
	c.id = 42;
	c.pid = 1234;
	c.queue_id = 2;
	c.type = 0x11F0;
	c.work_dim = 2;
	c.has_local = 1;
	c.global[0] = 256, c.global[1] = 128, c.local[0] = 16, c.local[1] = 8;
	c.queued = 1, c.submit = 2, c.start = 3, c.end = 4, c.host_enqueue = 5, c.host_complete = 6;
	c.prev_in_queue = 41;
	c.n_wait = 2, c.wait[0] = 7, c.wait[1] = 9;
	c.n_read = 1, c.read[0] = 3;
	c.n_written = 1, c.written[0] = 4;
	c.program_hash = 0xfeedfacecafebeefull;
	strcpy(c.kernel, "matmul");
	strcpy(c.options, "-cl-fast-relaxed-math");
	uint8_t buf[PCL_MSG_MAX];
	int len = pcl_encode_cmd(&c, buf, sizeof(buf));
	assert_true(len > 0);
	struct pcl_proc p;
	assert_int_equal(pcl_decode(buf, (size_t)len, &p, &d), PCL_MSG_CMD);
	assert_int_equal(d.id, 42);
	assert_int_equal(d.pid, 1234);
	assert_int_equal(d.global[1], 128);
	assert_int_equal(d.local[0], 16);
	assert_int_equal(d.end, 4);
	assert_int_equal(d.n_wait, 2);
	assert_int_equal(d.wait[1], 9);
	assert_int_equal(d.written[0], 4);
	assert_int_equal(d.program_hash, 0xfeedfacecafebeefull);
	assert_string_equal(d.kernel, "matmul");
	assert_string_equal(d.options, "-cl-fast-relaxed-math");
	/* Any truncation, a bad magic or trailing bytes: refused. */
	for (int cut = 0; cut < len; cut += 7)
		assert_int_equal(pcl_decode(buf, (size_t)cut, &p, &d), -EINVAL);
	buf[len] = 0;
	assert_int_equal(pcl_decode(buf, (size_t)len + 1, &p, &d), -EINVAL);
	buf[0] ^= 1;
	assert_int_equal(pcl_decode(buf, (size_t)len, &p, &d), -EINVAL);
	assert_int_equal(pcl_encode_cmd(&c, buf, 16), -EMSGSIZE);
}

static void test_cl_msg_proc_roundtrip(void **state)
{
	struct pcl_proc p = {.pid = 5, .mode = PCL_MODE_PRELOAD, .commands = 10, .dropped = 3}, q;
	static struct pcl_cmd c;
	uint8_t buf[64];
	int len = pcl_encode_proc(PCL_MSG_BYE, &p, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(pcl_decode(buf, (size_t)len, &q, &c), PCL_MSG_BYE);
	assert_int_equal(q.pid, 5);
	assert_int_equal(q.mode, PCL_MODE_PRELOAD);
	assert_int_equal(q.dropped, 3);
}

static void test_validate_opencl_shapes(void **state)
{
	char err[256];
	Prof__ClCommand c = PROF__CL_COMMAND__INIT;
	uint64_t g[2] = {64, 64}, w[1] = {3};
	c.id = 5;
	c.queue_id = 1;
	c.kernel_id = 1;
	c.work_dim = 2;
	c.n_global_size = 2;
	c.global_size = g;
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), 0);
	c.n_global_size = 1; /* does not match work_dim */
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), -EINVAL);
	c.n_global_size = 2;
	c.n_wait_ids = 1;
	c.wait_ids = w;
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), 0);
	w[0] = 5; /* waits on itself */
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), -EINVAL);
	w[0] = 3;
	Prof__ClKernelDesc k = PROF__CL_KERNEL_DESC__INIT, *ks[2] = {&k, &k};
	k.id = 1;
	k.name = "";
	c.n_new_kernels = 1;
	c.new_kernels = ks;
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), -EINVAL); /* empty name */
	k.name = "matmul";
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), 0);
	c.n_new_kernels = 2; /* declared twice */
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), -EINVAL);
	c.n_new_kernels = 0;
	c.work_dim = 0; /* a kernel id without a kernel launch */
	c.n_global_size = 0;
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), -EINVAL);
	c.kernel_id = 0;
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), 0);
	c.queue_id = 0;
	assert_int_equal(validate_cl_command(&c, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cl_msg_command_roundtrip),
		cmocka_unit_test(test_cl_msg_proc_roundtrip),
		cmocka_unit_test(test_validate_opencl_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
