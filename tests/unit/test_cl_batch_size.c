/* cl_command_size_bound (agent/cl_batch_size.c) against protobuf-c's own
 * count: a command with every field at its widest (and the longest lists the
 * layer sends, PCL_MAX_DEPS) and a typical kernel command, each as an entry of
 * a ClCommandBatch, never packs larger than the bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "cl_batch_size.h"
#include "cl_layer/cl_msg.h"
#include "generated/config.h"

#ifdef CONFIG_AGENT_OPENCL
/* The packed size of m as the only entry of a batch, less the batch's own nothing (it has no other field). */
static size_t as_entry(Prof__ClCommand *m)
{
	Prof__ClCommandBatch b = PROF__CL_COMMAND_BATCH__INIT;
	b.n_commands = 1;
	b.commands = &m;
	return prof__cl_command_batch__get_packed_size(&b);
}

static void test_cl_batch_size_widest_command(void **state)
{
	(void)state;
	static uint64_t dims[3] = {UINT64_MAX, UINT64_MAX, UINT64_MAX}, ids[PCL_MAX_DEPS];
	for (size_t i = 0; i < PCL_MAX_DEPS; i++)
		ids[i] = UINT64_MAX - i;
	Prof__ClCommand m = PROF__CL_COMMAND__INIT;
	m.id = m.queued_ns = m.submit_ns = m.start_ns = m.end_ns = UINT64_MAX;
	m.host_enqueue_ns = m.host_complete_ns = m.bytes = m.prev_in_queue = m.dropped_before = UINT64_MAX;
	m.pid = -1; /* an int32 below 0: a 10-byte varint */
	m.queue_id = m.type = m.kernel_id = m.work_dim = UINT32_MAX;
	m.forced_profiling = m.layer_event = 1;
	m.n_global_size = m.n_local_size = m.n_global_offset = 3;
	m.global_size = m.local_size = m.global_offset = dims;
	m.n_wait_ids = m.n_mem_read = m.n_mem_written = PCL_MAX_DEPS;
	m.wait_ids = m.mem_read = m.mem_written = ids;
	size_t packed = as_entry(&m), bound = cl_command_size_bound(&m);
	print_message("widest: packed %zu, bound %zu\n", packed, bound);
	assert_true(packed <= bound);
	assert_true(bound <= packed + 256); /* a bound, not a guess far off */
}

static void test_cl_batch_size_typical_kernel(void **state)
{
	(void)state;
	static uint64_t g[1] = {1}, mem[1] = {3};
	Prof__ClCommand m = PROF__CL_COMMAND__INIT;
	m.id = 12345;
	m.pid = 4242;
	m.queue_id = 1;
	m.type = 0x11F0;
	m.kernel_id = 2;
	m.work_dim = 1;
	m.n_global_size = m.n_local_size = 1;
	m.global_size = m.local_size = g;
	m.queued_ns = 1764900000000000000ull;
	m.submit_ns = m.queued_ns + 1000;
	m.start_ns = m.queued_ns + 20000;
	m.end_ns = m.queued_ns + 25000;
	m.host_enqueue_ns = 5000000000ull;
	m.host_complete_ns = 5000100000ull;
	m.prev_in_queue = 12344;
	m.n_mem_read = m.n_mem_written = 1;
	m.mem_read = m.mem_written = mem;
	size_t packed = as_entry(&m), bound = cl_command_size_bound(&m);
	print_message("typical: packed %zu, bound %zu\n", packed, bound);
	assert_true(packed <= bound);
}
#endif

int main(void)
{
#ifdef CONFIG_AGENT_OPENCL
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cl_batch_size_widest_command),
	    cmocka_unit_test(test_cl_batch_size_typical_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
#else
	fprintf(stderr, "skipped: built without CONFIG_AGENT_OPENCL\n");
	return 0;
#endif
}
