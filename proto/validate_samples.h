/* Shape checks of Samples records (columns of equal length, bounded
 * declarations, ids in range). Called by envelope_validate(). */
#ifndef PROTO_VALIDATE_SAMPLES_H
#define PROTO_VALIDATE_SAMPLES_H

#include <stddef.h>

#include "profiler.pb-c.h"

#define VALIDATE_MAX_SAMPLE_KEYS 65536u
#define VALIDATE_MAX_MAPPINGS 4096u
#define VALIDATE_MAX_STACKS 16384u
#define VALIDATE_MAX_STACK_DEPTH 127u
#define VALIDATE_MAX_TASK_TIMES 16384u
#define VALIDATE_MAX_TASK_NAME 64u /* comm is 15 bytes; room for longer names elsewhere */
/* Values the collector sums: bounded so no total of a store can wrap (the query also saturates). */
#define VALIDATE_MAX_SAMPLE_COUNT 0xffffffffull	   /* samples of one key in one record */
#define VALIDATE_MAX_SAMPLE_LOST 0xffffffffull	   /* lost samples of one record */
#define VALIDATE_MAX_INTERVAL_NS 86400000000000ull /* one record's interval: a day */

/* Returns 0, or -EINVAL with a reason in err. */
int validate_samples(const Prof__Samples *s, char *err, size_t errlen);

#endif
