/* OpenCL for the calibration benchmarks: the library is loaded at run time
 * (dlopen "libOpenCL.so.1", like agent/opencl_probe.c), one device is opened
 * with a profiling queue, and kernels are timed with event profiling.
 * Without CONFIG_AGENT_OPENCL every call returns -ENOTSUP. */
#ifndef AGENT_CALIB_CL_ENV_H
#define AGENT_CALIB_CL_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cl_env;
struct cl_prog;
typedef struct cl_buf cl_buf; /* opaque cl_mem */

struct cl_dev_info {
	char name[160];
	char vendor[128];
	char version[128];
	uint32_t type;        /* CL_DEVICE_TYPE bits (2 CPU, 4 GPU) */
	uint32_t compute_units;
	uint32_t clock_mhz;
	size_t max_wg;
	uint64_t global_mem;
	uint64_t max_alloc;
	bool fp16;
	bool is_cpu;
};

/* Open device index `index` over all platforms (-1: the first GPU, else the
 * first device). err gets a user-facing reason. */
int cl_env_open(int index, struct cl_env **out, char *err, size_t errlen);
void cl_env_close(struct cl_env *e);
const struct cl_dev_info *cl_env_info(const struct cl_env *e);

/* Build a program from source (options may be NULL); the build log goes to err. */
int cl_prog_build(struct cl_env *e, const char *src, const char *options, struct cl_prog **out, char *err,
		  size_t errlen);
void cl_prog_free(struct cl_prog *p);

/* Kernel arguments for cl_run: a buffer, or a scalar given by address and size. */
struct cl_arg {
	cl_buf *buf;
	const void *ptr;
	size_t size;
};
#define CL_ARG_BUF(b) ((struct cl_arg){.buf = (b)})
#define CL_ARG_VAL(v) ((struct cl_arg){.ptr = &(v), .size = sizeof(v)})

/* Run kernel `name` over global x local work-items (1-D; local 0: the
 * driver chooses) and return its device time in seconds (event profiling,
 * or wall time around clFinish where profiling is missing). */
int cl_run(struct cl_prog *p, const char *name, const struct cl_arg *args, unsigned nargs, size_t global,
	   size_t local, double *seconds);
/* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE of a kernel (0 if unknown). */
size_t cl_kernel_wg_multiple(struct cl_prog *p, const char *name);

/* Buffers: host_data may be NULL. */
int cl_buf_create(struct cl_env *e, size_t bytes, const void *host_data, cl_buf **out);
/* A buffer over caller memory (CL_MEM_USE_HOST_PTR: a CPU device uses it in
 * place, so the caller controls its pages, e.g. huge pages); host must stay
 * valid and untouched until cl_buf_free. */
int cl_buf_create_host(struct cl_env *e, size_t bytes, void *host, cl_buf **out);
int cl_buf_write(struct cl_env *e, cl_buf *b, const void *data, size_t bytes);
int cl_buf_read(struct cl_env *e, cl_buf *b, void *data, size_t bytes);
void cl_buf_free(struct cl_env *e, cl_buf *b);

#endif
