/* Read the GNU build-id note of an ELF file (32/64-bit, either endianness)
 * without libelf, so the agent stays small and static-linkable. */
#ifndef AGENT_ELF_BUILDID_H
#define AGENT_ELF_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define BUILD_ID_MAX 64u

/* Returns the build-id length (> 0), or -ENOENT (no note), -ENOEXEC (not
 * ELF), or another -errno. */
int elf_build_id(const char *path, uint8_t *out, size_t max);
/* Same, from a buffer holding the start of the file (headers and notes). */
int elf_build_id_mem(const uint8_t *buf, size_t len, uint8_t *out, size_t max);

#endif
