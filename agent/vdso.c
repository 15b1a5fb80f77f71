/* The agent's vdso image and build-id (vdso.h). */
#include "vdso.h"

#include <errno.h>
#include <link.h>
#include <sys/auxv.h>

#include "elf_buildid.h"
#include "profiler.pb-c.h"
#include "session.h"

const uint8_t *vdso_image(size_t *len)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR);
	if (!eh || eh->e_ident[EI_MAG0] != ELFMAG0 || eh->e_ident[EI_MAG1] != ELFMAG1)
		return NULL;
	/* the kernel's vdso image ends with its section headers (a few KiB; 64 KiB at most here) */
	size_t n = (size_t)eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (n < sizeof(*eh) || n > 65536)
		return NULL;
	*len = n;
	return (const uint8_t *)eh;
}

size_t vdso_build_id(uint8_t *out, size_t max)
{
	size_t len = 0;
	const uint8_t *img = vdso_image(&len);
	int rc = img ? elf_build_id_mem(img, len, out, max) : -ENOENT;
	return rc > 0 ? (size_t)rc : 0;
}

int vdso_send(struct session *s)
{
	size_t len = 0;
	const uint8_t *img = vdso_image(&len);
	if (!img)
		return -ENOENT;
	Prof__Vdso m = PROF__VDSO__INIT;
	m.image.data = (uint8_t *)img;
	m.image.len = len;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_VDSO;
	env.vdso = &m;
	return session_send(s, &env);
}
