/* Shape checks of TargetEnd records (proto/target.proto). */
#ifndef PROTO_VALIDATE_TARGET_H
#define PROTO_VALIDATE_TARGET_H

#include <stddef.h>

#include "target.pb-c.h"

#define VALIDATE_TARGET_MAX_TEXT 1024u /* capture_detail, opencl_note */

/* 0 if t is well-formed, -EINVAL with a reason in err otherwise. */
int validate_target_end(const Prof__TargetEnd *t, char *err, size_t errlen);

#endif
