/* Semantic checks of decoded envelopes, shared by both sides: what protobuf
 * accepts but the profiler must not (inconsistent shapes, unbounded strings). */
#ifndef PROTO_VALIDATE_H
#define PROTO_VALIDATE_H

#include <stddef.h>

#include "profiler.pb-c.h"

#define VALIDATE_MAX_STRING 1024u
#define VALIDATE_MAX_CPUS 4096u
#define VALIDATE_MAX_GPUS 64u
#define VALIDATE_MAX_EVENTS 256u
#define VALIDATE_MAX_AUTH 64u  /* Hello.auth and Challenge.nonce */
#define VALIDATE_MIN_NONCE 16u

/* Returns 0 if env is well-formed, -EINVAL with a reason in err otherwise. */
int envelope_validate(const Prof__Envelope *env, char *err, size_t errlen);

/* Name of the body case, for logs ("hello", "counters", ...). */
const char *envelope_kind(const Prof__Envelope *env);

#endif
