/* The per-kernel work model file: one OpenCL kernel a line,
 *     # comment
 *     KERNEL_NAME ops=OPS_PER_WORK_ITEM bytes=BYTES_PER_WORK_ITEM
 * read by `agent profile --kernel-model` (sent with the kernel declarations)
 * and `collector report/roofline --kernel-model` (an override). The roofline
 * dot of a kernel has W = ops x work-items and Q = bytes x work-items over
 * its enqueues. Pure: no I/O but kernel_model_load. */
#ifndef COMMON_KERNEL_MODEL_H
#define COMMON_KERNEL_MODEL_H

#include <stddef.h>

#define KERNEL_MODEL_NAME_MAX 128
#define KERNEL_MODEL_MAX_ENTRIES 4096

struct kernel_model_entry {
	char name[KERNEL_MODEL_NAME_MAX];
	double ops, bytes; /* per work-item */
};

/* Parse one line: 1 and *out filled, 0 for a blank or comment line, -EINVAL
 * with a reason in err. */
int kernel_model_parse_line(const char *line, struct kernel_model_entry *out, char *err, size_t errlen);
/* Read a whole file (malloc'd array in *out, *n entries). -errno with a
 * user-facing reason (path:line: what is wrong) in err. */
int kernel_model_load(const char *path, struct kernel_model_entry **out, size_t *n, char *err, size_t errlen);
/* The entry named name, or NULL. */
const struct kernel_model_entry *kernel_model_find(const struct kernel_model_entry *e, size_t n, const char *name);

#endif
