/* sym_describe(): one sampled address as the views show it. Resolved user
 * addresses are their (demangled) function; unresolved ones group per module
 * as "[module]" (raw address and file offset kept for exports); kernel
 * addresses are the kallsyms function where one is loaded, else "[kernel]". */
#include <stdio.h>
#include <string.h>

#include "sym_priv.h"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

void sym_describe(struct sym_resolver *r, const struct sym_mapping *m, uint64_t ip, int kernel, char *buf,
		  size_t buflen, struct sym_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->ip = ip;
	if (kernel) {
		out->module = "[kernel]";
		const char *fn = r ? sym_resolve_kernel(r, ip) : NULL;
		out->name = fn ? fn : "[kernel]";
		out->raw = fn;
		out->resolved = fn != NULL;
		return;
	}
	if (!m) {
		out->module = out->name = "[unknown]";
		return;
	}
	const char *raw = NULL;
	const char *fn = r ? sym_resolve_raw(r, m, ip, &out->file_off, &raw) : NULL;
	if (!r)
		out->file_off = ip - m->start + m->pgoff;
	out->module = base_name(m->path ? m->path : "[unknown]");
	if (fn) {
		out->name = fn;
		out->raw = raw;
		out->resolved = 1;
		if (sym_source_line(r, m, ip, &out->src_file, &out->src_line) < 0) {
			out->src_file = NULL;
			out->src_line = 0;
		}
		return;
	}
	snprintf(buf, buflen, "[%s]", out->module);
	out->name = buf;
}
