/* Names of instruction classes and architectures (common/trace/native.h). */
#include <errno.h>
#include <string.h>

#include "trace/native.h"

/* ---------------------------------------------------------------- names */

static const char *const class_names[EDAG_NCLASS] = {"other", "load", "store", "int", "float", "branch"};

unsigned edag_default_mem(unsigned cls)
{
	return cls == EDAG_LOAD ? EDAG_MEM_READ : cls == EDAG_STORE ? EDAG_MEM_WRITE : 0;
}

const char *edag_class_name(unsigned cls)
{
	return cls < EDAG_NCLASS ? class_names[cls] : "?";
}

int edag_class_parse(const char *name, size_t len)
{
	for (unsigned c = 0; c < EDAG_NCLASS; c++)
		if (strlen(class_names[c]) == len && memcmp(name, class_names[c], len) == 0)
			return (int)c;
	if ((len == 7 && memcmp(name, "integer", 7) == 0))
		return EDAG_INT;
	if (len == 2 && memcmp(name, "fp", 2) == 0)
		return EDAG_FLOAT;
	return -EINVAL;
}

const char *edag_arch_name(unsigned arch)
{
	switch (arch) {
	case EDAG_ARCH_X86_64:
		return "x86_64";
	case EDAG_ARCH_AARCH64:
		return "aarch64";
	case EDAG_ARCH_ARM:
		return "arm";
	case EDAG_ARCH_RISCV64:
		return "riscv64";
	default:
		return "unknown";
	}
}

int edag_arch_parse(const char *name)
{
	if (strcmp(name, "x86_64") == 0 || strcmp(name, "x86-64") == 0)
		return EDAG_ARCH_X86_64;
	if (strcmp(name, "aarch64") == 0 || strcmp(name, "arm64") == 0)
		return EDAG_ARCH_AARCH64;
	if (strcmp(name, "arm") == 0 || strcmp(name, "armv7") == 0)
		return EDAG_ARCH_ARM;
	if (strcmp(name, "riscv64") == 0 || strcmp(name, "rv64") == 0)
		return EDAG_ARCH_RISCV64;
	return -EINVAL;
}
