/* The agent's own vdso (getauxval(AT_SYSINFO_EHDR)): the kernel maps the same
 * image into every process of a boot and ABI, so its build-id names the
 * [vdso] mappings the agent tracks and its image, sent once per session
 * (Vdso record, proto/vdso.proto), lets the collector name the functions. */
#ifndef AGENT_VDSO_H
#define AGENT_VDSO_H

#include <stddef.h>
#include <stdint.h>

struct session;

/* The vdso's image and size (headers to section headers), NULL if none. */
const uint8_t *vdso_image(size_t *len);
/* Its build-id into out; length, or 0 if unknown. */
size_t vdso_build_id(uint8_t *out, size_t max);
/* Send the image (Vdso record). 0, -ENOENT (no vdso) or session_send's error. */
int vdso_send(struct session *s);

#endif
