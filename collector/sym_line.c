/* Source file and line of an address from a file's DWARF line table (libdw,
 * elfutils): the CU that holds the address (dwarf_addrdie over .debug_aranges,
 * else a walk of the CUs' ranges with dwarf_haspc), then its line row
 * (dwarf_getsrc_die); the walk only in files without .debug_aranges, so an
 * address outside every CU costs one lookup. One Dwarf handle per symbol file, opened on first use. */
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "sym_priv.h"

struct sym_dwarf {
	int fd;
	Dwarf *dw; /* NULL: the file has no DWARF */
	bool aranges; /* it has .debug_aranges: an address they miss is in no CU (no walk) */
};

struct sym_dwarf *sym_dwarf_open(const char *path)
{
	struct sym_dwarf *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd >= 0)
		d->dw = dwarf_begin(d->fd, DWARF_C_READ);
	Dwarf_Aranges *ar;
	size_t n = 0;
	d->aranges = d->dw && dwarf_getaranges(d->dw, &ar, &n) == 0 && n > 0;
	return d;
}

void sym_dwarf_close(struct sym_dwarf *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}

static int cu_of(Dwarf *dw, bool aranges, uint64_t vaddr, Dwarf_Die *cu)
{
	if (dwarf_addrdie(dw, vaddr, cu))
		return 0;
	if (aranges)
		return -ENOENT;
	Dwarf_Off off = 0, next;
	size_t hsize;
	/* no .debug_aranges entry: walk the CUs (bounded by the file's CU count) */
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, vaddr) > 0)
			return 0;
		off = next;
	}
	return -ENOENT;
}

int sym_dwarf_line(struct sym_dwarf *d, uint64_t vaddr, const char **file, uint32_t *line)
{
	if (!d || !d->dw)
		return -ENOENT;
	Dwarf_Die cu;
	if (cu_of(d->dw, d->aranges, vaddr, &cu) < 0)
		return -ENOENT;
	Dwarf_Line *l = dwarf_getsrc_die(&cu, vaddr);
	int ln = 0;
	const char *f = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	if (!f || dwarf_lineno(l, &ln) != 0 || ln <= 0)
		return -ENOENT;
	*file = f;
	*line = (uint32_t)ln;
	return 0;
}
