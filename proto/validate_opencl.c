#include "validate_opencl.h"
#include "fail.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int check_kernel(const Prof__ClKernelDesc *k, char *err, size_t errlen)
{
	if (k->id == 0)
		return fail(err, errlen, "cl_command: kernel declaration with id 0");
	if (!k->name || !k->name[0] || strlen(k->name) > VALIDATE_CL_MAX_NAME)
		return fail(err, errlen, "cl_command: kernel %u has an empty or overlong name", k->id);
	if (k->build_options && strlen(k->build_options) > VALIDATE_CL_MAX_OPTIONS)
		return fail(err, errlen, "cl_command: kernel %u build options longer than %u bytes", k->id,
			    VALIDATE_CL_MAX_OPTIONS);
	if (!isfinite(k->model_ops) || !isfinite(k->model_bytes) || k->model_ops < 0 || k->model_bytes < 0 ||
	    k->model_ops > 1e15 || k->model_bytes > 1e15)
		return fail(err, errlen, "cl_command: kernel %u model ops %g / bytes %g outside [0, 1e15]", k->id,
			    k->model_ops, k->model_bytes);
	return 0;
}

int validate_cl_command(const Prof__ClCommand *c, char *err, size_t errlen)
{
	if (c->id == 0)
		return fail(err, errlen, "cl_command: command id 0");
	if (c->queue_id == 0)
		return fail(err, errlen, "cl_command %llu: queue id 0", (unsigned long long)c->id);
	if (c->work_dim > 3)
		return fail(err, errlen, "cl_command %llu: work_dim %u (max 3)", (unsigned long long)c->id,
			    c->work_dim);
	if (c->n_global_size != c->work_dim)
		return fail(err, errlen, "cl_command %llu: %zu global sizes for work_dim %u",
			    (unsigned long long)c->id, c->n_global_size, c->work_dim);
	if (c->n_local_size != 0 && c->n_local_size != c->work_dim)
		return fail(err, errlen, "cl_command %llu: %zu local sizes for work_dim %u",
			    (unsigned long long)c->id, c->n_local_size, c->work_dim);
	if (c->n_global_offset != 0 && c->n_global_offset != c->work_dim)
		return fail(err, errlen, "cl_command %llu: %zu offsets for work_dim %u", (unsigned long long)c->id,
			    c->n_global_offset, c->work_dim);
	if (c->n_wait_ids > VALIDATE_CL_MAX_DEPS || c->n_mem_read > VALIDATE_CL_MAX_DEPS ||
	    c->n_mem_written > VALIDATE_CL_MAX_DEPS)
		return fail(err, errlen, "cl_command %llu: more than %u dependencies of one kind",
			    (unsigned long long)c->id, VALIDATE_CL_MAX_DEPS);
	for (size_t i = 0; i < c->n_wait_ids; i++)
		if (c->wait_ids[i] == 0 || c->wait_ids[i] >= c->id)
			return fail(err, errlen, "cl_command %llu: waits on command %llu (not an earlier one)",
				    (unsigned long long)c->id, (unsigned long long)c->wait_ids[i]);
	if (c->prev_in_queue >= c->id)
		return fail(err, errlen, "cl_command %llu: previous in queue %llu is not earlier",
			    (unsigned long long)c->id, (unsigned long long)c->prev_in_queue);
	if (c->n_new_kernels > VALIDATE_CL_MAX_KERNELS)
		return fail(err, errlen, "cl_command %llu: %zu kernel declarations (max %u)",
			    (unsigned long long)c->id, c->n_new_kernels, VALIDATE_CL_MAX_KERNELS);
	for (size_t i = 0; i < c->n_new_kernels; i++) {
		int rc = check_kernel(c->new_kernels[i], err, errlen);
		if (rc < 0)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (c->new_kernels[j]->id == c->new_kernels[i]->id)
				return fail(err, errlen, "cl_command: kernel id %u declared twice",
					    c->new_kernels[i]->id);
	}
	if ((c->work_dim == 0) != (c->kernel_id == 0))
		return fail(err, errlen, "cl_command %llu: kernel_id %u with work_dim %u",
			    (unsigned long long)c->id, c->kernel_id, c->work_dim);
	return 0;
}

int validate_cl_batch(const Prof__ClCommandBatch *b, char *err, size_t errlen)
{
	if (b->n_commands == 0 || b->n_commands > VALIDATE_CL_MAX_BATCH)
		return fail(err, errlen, "cl_batch: %zu commands (need 1..%u)", b->n_commands, VALIDATE_CL_MAX_BATCH);
	size_t declared = 0;
	for (size_t i = 0; i < b->n_commands; i++) {
		int rc = validate_cl_command(b->commands[i], err, errlen);
		if (rc < 0)
			return rc;
		declared += b->commands[i]->n_new_kernels;
	}
	if (declared > VALIDATE_CL_MAX_KERNELS)
		return fail(err, errlen, "cl_batch: %zu kernel declarations (max %u)", declared, VALIDATE_CL_MAX_KERNELS);
	/* the same id twice in one batch: which declaration holds would depend on the order of the rows */
	for (size_t i = 0; i < b->n_commands; i++)
		for (size_t a = 0; a < b->commands[i]->n_new_kernels; a++)
			for (size_t j = i + 1; j < b->n_commands; j++)
				for (size_t c = 0; c < b->commands[j]->n_new_kernels; c++)
					if (b->commands[i]->new_kernels[a]->id == b->commands[j]->new_kernels[c]->id)
						return fail(err, errlen, "cl_batch: kernel id %u declared twice",
							    b->commands[j]->new_kernels[c]->id);
	return 0;
}
