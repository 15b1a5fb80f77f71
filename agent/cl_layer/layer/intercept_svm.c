/* The shared-virtual-memory enqueues (issue #41): memcpy, fill, map, unmap
 * and migrate, tracked like every enqueue (intercept_enqueue.c). Bytes are
 * the sizes the app passed (an unmap: its map's, a write-back only if mapped
 * for writing; a migration with no sizes: the allocations'); dependencies
 * are the allocations the pointers fall in (tables.c, by address range). */
#include "intercept.h"

/* The allocation holding p as read or written by the command. */
static void svm_dep(struct enq *e, const void *p, bool write)
{
	struct pcl_mem_info mi;
	if (!e->p || !p || !pcl_svm_lookup(p, &mi))
		return;
	struct pcl_cmd *c = &e->p->cmd;
	if (write)
		pcl_add_id(c->written, &c->n_written, mi.id);
	else
		pcl_add_id(c->read, &c->n_read, mi.id);
}

static void set_bytes(struct enq *e, uint64_t bytes)
{
	if (e->p)
		e->p->cmd.bytes = bytes;
}

cl_int CL_API_CALL pcl_clEnqueueSVMMemcpy(cl_command_queue q, cl_bool block, void *dst, const void *src, size_t size,
					  cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueSVMMemcpy, pcl_next.clEnqueueSVMMemcpy(q, block, dst, src, size, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_SVM_MEMCPY, nwait, wait, ev);
	set_bytes(&e, size);
	svm_dep(&e, src, false);
	svm_dep(&e, dst, true);
	cl_int rc = pcl_next.clEnqueueSVMMemcpy(q, block, dst, src, size, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueSVMMemFill(cl_command_queue q, void *ptr, const void *pattern, size_t psize,
					   size_t size, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueSVMMemFill, pcl_next.clEnqueueSVMMemFill(q, ptr, pattern, psize, size, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_SVM_MEMFILL, nwait, wait, ev);
	set_bytes(&e, size);
	svm_dep(&e, ptr, true);
	cl_int rc = pcl_next.clEnqueueSVMMemFill(q, ptr, pattern, psize, size, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueSVMMap(cl_command_queue q, cl_bool block, cl_map_flags flags, void *ptr, size_t size,
				       cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueSVMMap, pcl_next.clEnqueueSVMMap(q, block, flags, ptr, size, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_SVM_MAP, nwait, wait, ev);
	set_bytes(&e, size);
	svm_dep(&e, ptr, false);
	cl_int rc = pcl_next.clEnqueueSVMMap(q, block, flags, ptr, size, nwait, wait, e.evp);
	if (rc == CL_SUCCESS)
		pcl_map_remember(ptr, NULL, size, (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueSVMUnmap(cl_command_queue q, void *ptr, cl_uint nwait, const cl_event *wait,
					 cl_event *ev)
{
	PCL_BEGIN(clEnqueueSVMUnmap, pcl_next.clEnqueueSVMUnmap(q, ptr, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_SVM_UNMAP, nwait, wait, ev);
	cl_mem none;
	uint64_t bytes = 0;
	bool write = false;
	if (pcl_map_forget(ptr, &none, &bytes, &write)) {
		set_bytes(&e, write ? bytes : 0);
		if (write)
			svm_dep(&e, ptr, true);
	}
	cl_int rc = pcl_next.clEnqueueSVMUnmap(q, ptr, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueSVMMigrateMem(cl_command_queue q, cl_uint n, const void **ptrs, const size_t *sizes,
					      cl_mem_migration_flags flags, cl_uint nwait, const cl_event *wait,
					      cl_event *ev)
{
	PCL_BEGIN(clEnqueueSVMMigrateMem, pcl_next.clEnqueueSVMMigrateMem(q, n, ptrs, sizes, flags, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_SVM_MIGRATE_MEM, nwait, wait, ev);
	uint64_t bytes = 0;
	for (cl_uint i = 0; ptrs && i < n; i++) {
		struct pcl_mem_info mi;
		if (sizes && sizes[i])
			bytes += sizes[i];
		else if (pcl_svm_lookup(ptrs[i], &mi)) /* 0: the whole allocation */
			bytes += mi.size;
		svm_dep(&e, ptrs[i], true);
	}
	set_bytes(&e, flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED ? 0 : bytes);
	cl_int rc = pcl_next.clEnqueueSVMMigrateMem(q, n, ptrs, sizes, flags, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}
