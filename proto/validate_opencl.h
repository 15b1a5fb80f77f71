/* Shape checks of ClCommand and ClCommandBatch records (proto/opencl.proto), applied by both
 * sides after unpacking: bounded arrays and strings, sizes that match the
 * work dimension, kernel declarations that make sense. Timestamps are not
 * judged here: the report shows what the device said. */
#ifndef PROTO_VALIDATE_OPENCL_H
#define PROTO_VALIDATE_OPENCL_H

#include <stddef.h>

#include "opencl.pb-c.h"

#define VALIDATE_CL_MAX_DEPS 1024u    /* wait_ids, mem_read, mem_written: each */
#define VALIDATE_CL_MAX_KERNELS 256u  /* new_kernels per record */
#define VALIDATE_CL_MAX_NAME 256u     /* kernel name */
#define VALIDATE_CL_MAX_OPTIONS 1024u /* build options */
#define VALIDATE_CL_MAX_BATCH 4096u   /* commands per ClCommandBatch */

/* 0 if c is well-formed, -EINVAL with a reason in err otherwise. */
int validate_cl_command(const Prof__ClCommand *c, char *err, size_t errlen);
/* Every command well-formed, 1..VALIDATE_CL_MAX_BATCH of them, each kernel declared once at most. */
int validate_cl_batch(const Prof__ClCommandBatch *b, char *err, size_t errlen);

#endif
