#include "validate_target.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int validate_target_end(const Prof__TargetEnd *t, char *err, size_t errlen)
{
	if (t->signal > 64) {
		snprintf(err, errlen, "target_end: signal %u (max 64)", t->signal);
		return -EINVAL;
	}
	if (t->capture_inside > 3) {
		snprintf(err, errlen, "target_end: capture_inside %u (0..3)", t->capture_inside);
		return -EINVAL;
	}
	if ((t->capture_detail && strlen(t->capture_detail) > VALIDATE_TARGET_MAX_TEXT) ||
	    (t->opencl_note && strlen(t->opencl_note) > VALIDATE_TARGET_MAX_TEXT)) {
		snprintf(err, errlen, "target_end: text longer than %u bytes", VALIDATE_TARGET_MAX_TEXT);
		return -EINVAL;
	}
	return 0;
}
