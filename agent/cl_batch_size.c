#include "cl_batch_size.h"
#include "generated/config.h"

#ifdef CONFIG_AGENT_OPENCL

/* Every field of ClCommand (proto/opencl.proto) but new_kernels: 17 scalars (uint64, int32, bool;
 * counted as 21, room for a few more) at most a 2-byte tag and a 10-byte varint each (an int32
 * below 0 takes 10); 6 packed lists at
 * most a 2-byte tag, a 5-byte length and 10 bytes an entry; as an entry of the batch, a tag and a
 * 5-byte length. tests/unit/test_cl_batch_size.c holds it against protobuf-c's own count. */
#define SCALARS 21u
#define LISTS 6u

size_t cl_command_size_bound(const Prof__ClCommand *m)
{
	size_t entries = m->n_global_size + m->n_local_size + m->n_global_offset + m->n_wait_ids +
			 m->n_mem_read + m->n_mem_written;
	return SCALARS * 12 + LISTS * 7 + entries * 10 + 1 + 5;
}

#endif /* CONFIG_AGENT_OPENCL */
