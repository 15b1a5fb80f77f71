/* Unit tests of agent/cl_layer/cl_msg.c (layer -> agent messages) and
 * proto/validate_opencl.c (ClCommand and ClCommandBatch shape checks). */
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
	static struct pcl_cmd c;
	static struct pcl_msg m;
	memset(&c, 0, sizeof(c));
	c.id = 42;
	c.pid = 1234;
	c.queue_id = 2;
	c.type = 0x11F0;
	c.kernel = 7;
	c.work_dim = 2;
	c.has_local = 1;
	c.global[0] = 256, c.global[1] = 128, c.local[0] = 16, c.local[1] = 8;
	c.queued = 1, c.submit = 2, c.start = 3, c.end = 4, c.host_enqueue = 5, c.host_complete = 6;
	c.prev_in_queue = 41;
	c.n_wait = 2, c.wait[0] = 7, c.wait[1] = 9;
	c.n_read = 1, c.read[0] = 3;
	c.n_written = 1, c.written[0] = 4;
	uint8_t buf[PCL_MSG_MAX + 1];
	int len = pcl_encode_cmd(&c, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(pcl_decode(buf, (size_t)len, &m), len);
	assert_int_equal(m.type, PCL_MSG_CMD);
	const struct pcl_cmd *d = &m.u.cmd;
	assert_int_equal(d->id, 42);
	assert_int_equal(d->pid, 1234);
	assert_int_equal(d->kernel, 7);
	assert_int_equal(d->global[1], 128);
	assert_int_equal(d->local[0], 16);
	assert_int_equal(d->global[2], 0);
	assert_int_equal(d->end, 4);
	assert_int_equal(d->n_wait, 2);
	assert_int_equal(d->wait[1], 9);
	assert_int_equal(d->written[0], 4);
	/* Any truncation or a bad magic: refused; trailing bytes are the next message's. */
	for (int cut = 0; cut < len; cut += 7)
		assert_int_equal(pcl_decode(buf, (size_t)cut, &m), -EINVAL);
	buf[len] = 0;
	assert_int_equal(pcl_decode(buf, (size_t)len + 1, &m), len);
	buf[0] ^= 1;
	assert_int_equal(pcl_decode(buf, (size_t)len, &m), -EINVAL);
	buf[0] ^= 1;
	buf[6] = (uint8_t)(len + 8); /* a length that does not match the content */
	assert_int_equal(pcl_decode(buf, (size_t)len + 1, &m), -EINVAL);
	assert_int_equal(pcl_encode_cmd(&c, buf, 16), -EMSGSIZE);
}

/* A datagram of the layer: a kernel declaration, then commands naming it, back to back. */
static void test_cl_msg_datagram_of_messages(void **state)
{
	static uint8_t buf[PCL_DGRAM_MAX];
	static struct pcl_msg m;
	struct pcl_kdesc k = {.id = 3, .program_hash = 0xfeedfacecafebeefull};
	strcpy(k.name, "XgemmDirectTN");
	strcpy(k.options, "-DWGD=16 -DMDIMCD=8");
	size_t len = 0;
	int n = pcl_encode_kernel(&k, buf, sizeof(buf));
	assert_true(n > 0);
	len += (size_t)n;
	static struct pcl_cmd c;
	memset(&c, 0, sizeof(c));
	for (int i = 0; i < 10; i++) {
		c.id = (uint64_t)i + 1;
		c.kernel = 3;
		c.work_dim = 1;
		c.global[0] = 1024;
		n = pcl_encode_cmd(&c, buf + len, sizeof(buf) - len);
		assert_true(n > 0);
		len += (size_t)n;
	}
	size_t off = 0;
	int cmds = 0;
	while (off < len) {
		n = pcl_decode(buf + off, len - off, &m);
		assert_true(n > 0);
		if (off == 0) {
			assert_int_equal(m.type, PCL_MSG_KERNEL);
			assert_int_equal(m.u.kernel.id, 3);
			assert_int_equal(m.u.kernel.program_hash, 0xfeedfacecafebeefull);
			assert_string_equal(m.u.kernel.name, "XgemmDirectTN");
			assert_string_equal(m.u.kernel.options, "-DWGD=16 -DMDIMCD=8");
		} else {
			assert_int_equal(m.type, PCL_MSG_CMD);
			assert_int_equal(m.u.cmd.id, (uint64_t)++cmds);
		}
		off += (size_t)n;
	}
	assert_int_equal(cmds, 10);
	k.id = 0; /* declarations have ids >= 1 */
	n = pcl_encode_kernel(&k, buf, sizeof(buf));
	assert_int_equal(pcl_decode(buf, (size_t)n, &m), -EINVAL);
}

static void test_cl_msg_proc_roundtrip(void **state)
{
	struct pcl_proc p = {.pid = 5, .mode = PCL_MODE_PRELOAD, .flags = PCL_NOTE_DLOPEN_UNBRIDGED, .commands = 10,
			     .dropped = 3};
	strcpy(p.detail, "libOpenCL.so");
	static struct pcl_msg m;
	uint8_t buf[PCL_MSG_MAX];
	int len = pcl_encode_proc(PCL_MSG_NOTE, &p, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(pcl_decode(buf, (size_t)len, &m), len);
	assert_int_equal(m.type, PCL_MSG_NOTE);
	assert_int_equal(m.u.proc.pid, 5);
	assert_int_equal(m.u.proc.mode, PCL_MODE_PRELOAD);
	assert_int_equal(m.u.proc.flags, PCL_NOTE_DLOPEN_UNBRIDGED);
	assert_int_equal(m.u.proc.dropped, 3);
	assert_string_equal(m.u.proc.detail, "libOpenCL.so");
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

static void test_validate_opencl_batch(void **state)
{
	char err[256];
	Prof__ClCommand a = PROF__CL_COMMAND__INIT, b = PROF__CL_COMMAND__INIT, *cmds[2] = {&a, &b};
	a.id = 1, b.id = 2;
	a.queue_id = b.queue_id = 1;
	Prof__ClCommandBatch batch = PROF__CL_COMMAND_BATCH__INIT;
	batch.n_commands = 2;
	batch.commands = cmds;
	assert_int_equal(validate_cl_batch(&batch, err, sizeof(err)), 0);
	batch.n_commands = 0;
	assert_int_equal(validate_cl_batch(&batch, err, sizeof(err)), -EINVAL);
	batch.n_commands = 2;
	b.queue_id = 0; /* one bad command spoils the batch */
	assert_int_equal(validate_cl_batch(&batch, err, sizeof(err)), -EINVAL);
	b.queue_id = 1;
	Prof__ClKernelDesc k = PROF__CL_KERNEL_DESC__INIT, *ks[1] = {&k};
	k.id = 4;
	k.name = "axpy";
	a.n_new_kernels = b.n_new_kernels = 1;
	a.new_kernels = b.new_kernels = ks; /* the same id declared by two commands of the batch */
	assert_int_equal(validate_cl_batch(&batch, err, sizeof(err)), -EINVAL);
	b.n_new_kernels = 0;
	assert_int_equal(validate_cl_batch(&batch, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cl_msg_command_roundtrip),
		cmocka_unit_test(test_cl_msg_datagram_of_messages),
		cmocka_unit_test(test_cl_msg_proc_roundtrip),
		cmocka_unit_test(test_validate_opencl_shapes),
		cmocka_unit_test(test_validate_opencl_batch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
