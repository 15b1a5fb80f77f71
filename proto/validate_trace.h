/* Shape checks of TraceWindow records (proto/trace.proto), shared by both sides. */
#ifndef PROTO_VALIDATE_TRACE_H
#define PROTO_VALIDATE_TRACE_H

#include <stddef.h>

#include "profiler.pb-c.h"

#define VALIDATE_TRACE_MAX_INSNS (1u << 20) /* instructions per window */
#define VALIDATE_TRACE_MAX_REGS 16u	    /* registers read (written) per instruction */
#define VALIDATE_TRACE_MAX_ACCESS 4096u	    /* bytes per memory access */
#define VALIDATE_TRACE_MAX_WARM (1u << 22) /* warm-up lines of one window */

/* 0 if tw is consistent (column lengths, classes, registers, sizes, share),
 * -EINVAL with a reason in err otherwise. */
int validate_trace_window(const Prof__TraceWindow *tw, char *err, size_t errlen);

#endif
