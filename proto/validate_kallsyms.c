#include "validate_kallsyms.h"

#include "ksyms.h"

int validate_kernel_symbols(const Prof__KernelSymbols *m, char *err, size_t errlen)
{
	/* the decoder checks every byte it would read; without a callback it only checks */
	return ksyms_chunk_decode(m, NULL, NULL, err, errlen);
}
