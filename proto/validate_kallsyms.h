/* Shape checks of KernelSymbols records (proto/kallsyms.proto). */
#ifndef PROTO_VALIDATE_KALLSYMS_H
#define PROTO_VALIDATE_KALLSYMS_H

#include <stddef.h>

#include "kallsyms.pb-c.h"

/* 0 if m is well-formed (ksyms.h: limits, columns, names), -EINVAL with a reason in err otherwise. */
int validate_kernel_symbols(const Prof__KernelSymbols *m, char *err, size_t errlen);

#endif
