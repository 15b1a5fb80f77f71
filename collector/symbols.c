#include "symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sym_priv.h"

#define MAX_FILES 256

/* The live collector's --debug-dir: set once by main before any thread starts
 * (sym_set_process_debug_dir), read-only afterwards. */
static const char *process_debug_dir;

void sym_set_process_debug_dir(const char *dir)
{
	process_debug_dir = dir;
}


struct segment {
	uint64_t off, filesz, vaddr;
};

struct symfile {
	char *key; /* path + build-id hex */
	bool ok;
	struct sym *syms;
	size_t nsyms;
	struct segment *segs;
	size_t nsegs;
	char *loaded;          /* the file the symbols came from */
	struct sym_dwarf *dwarf; /* its DWARF, opened on the first line lookup */
};

#define MAX_IMAGES 16

struct image { /* an ELF image given in memory (the agents' vdso) */
	uint8_t *data;
	size_t len;
	uint8_t bid[64];
	size_t bidlen;
};

struct sym_resolver {
	struct image images[MAX_IMAGES];
	size_t nimages;
	char *symfs;
	char *debug_dir;
	struct symfile files[MAX_FILES];
	size_t nfiles;
	struct sym *ksyms; /* kallsyms functions, sorted by address */
	size_t nksyms;
};

void sym_free(struct sym *s)
{
	if (s->raw != s->name)
		free(s->raw);
	free(s->name);
}

const char *sym_build_id_hex(const uint8_t *id, size_t len, char *buf, size_t buflen)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < len && o + 3 <= buflen; i++)
		o += (size_t)snprintf(buf + o, buflen - o, "%02x", id[i]);
	return buf;
}

int sym_resolver_create(const char *symfs, struct sym_resolver **out)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	struct sym_resolver *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (symfs && !(r->symfs = strdup(symfs))) {
		free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void sym_resolver_free(struct sym_resolver *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nfiles; i++) {
		for (size_t j = 0; j < r->files[i].nsyms; j++)
			sym_free(&r->files[i].syms[j]);
		free(r->files[i].syms);
		free(r->files[i].segs);
		free(r->files[i].key);
		free(r->files[i].loaded);
		sym_dwarf_close(r->files[i].dwarf);
	}
	for (size_t j = 0; j < r->nksyms; j++)
		sym_free(&r->ksyms[j]);
	free(r->ksyms);
	for (size_t i = 0; i < r->nimages; i++)
		free(r->images[i].data);
	free(r->symfs);
	free(r->debug_dir);
	free(r);
}

int sym_resolver_set_debug_dir(struct sym_resolver *r, const char *dir)
{
	char *d = dir ? strdup(dir) : NULL;
	if (dir && !d)
		return -ENOMEM;
	free(r->debug_dir);
	r->debug_dir = d;
	return 0;
}

char *sym_demangle(const char *name)
{
	/* _Z: Itanium C++ ABI (and Rust legacy, _ZN...17h<hash>E); _R: Rust v0 */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

/* name and raw of a symbol as read from a file: raw kept, name demangled. */
int sym_set_name(struct sym *s, const char *raw)
{
	s->raw = strdup(raw);
	if (!s->raw)
		return -ENOMEM;
	s->name = sym_demangle(raw);
	if (!s->name)
		s->name = s->raw;
	return 0;
}

int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Build-id of an open ELF (from its notes), length or 0. */
static size_t elf_note_build_id(Elf *e, uint8_t *out, size_t max)
{
	size_t n = 0;
	if (elf_getphdrnum(e, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!d)
			continue;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0) {
				size_t len = nh.n_descsz < max ? nh.n_descsz : max;
				memcpy(out, (char *)d->d_buf + desc_off, len);
				return len;
			}
		}
	}
	return 0;
}

/* Load symbols and PT_LOAD segments of path if its build-id matches (or
 * either is unknown). Returns 0 when the file has symbols. */
static int load_elf(struct symfile *f, Elf *e, const char *path, const uint8_t *bid, size_t bidlen)
{
	int rc = -ENOENT;
	if (!e || elf_kind(e) != ELF_K_ELF)
		return rc;
	uint8_t fb[64];
	size_t fbl = elf_note_build_id(e, fb, sizeof(fb));
	if (bidlen && fbl && (fbl != bidlen || memcmp(fb, bid, bidlen) != 0)) {
		log_debug("symbols: %s has another build-id: not used", path);
		return -ESTALE;
	}
	size_t nph = 0;
	elf_getphdrnum(e, &nph);
	f->segs = calloc(nph + 1, sizeof(*f->segs));
	for (size_t i = 0; f->segs && i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD)
			f->segs[f->nsegs++] = (struct segment){ph.p_offset, ph.p_filesz, ph.p_vaddr};
	}
	size_t cap = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || sh.sh_entsize == 0)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_value == 0)
				continue;
			const char *name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			if (f->nsyms == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct sym *ns = realloc(f->syms, nc * sizeof(*ns));
				if (!ns)
					break;
				f->syms = ns;
				cap = nc;
			}
			f->syms[f->nsyms].addr = s.st_value;
			f->syms[f->nsyms].size = s.st_size;
			if (sym_set_name(&f->syms[f->nsyms], name) == 0)
				f->nsyms++;
		}
	}
	if (f->nsyms) {
		qsort(f->syms, f->nsyms, sizeof(*f->syms), sym_cmp);
		rc = 0;
	}
	return rc;
}

static int load_file(struct symfile *f, const char *path, const uint8_t *bid, size_t bidlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int rc = load_elf(f, e, path, bid, bidlen);
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

int sym_resolver_add_image(struct sym_resolver *r, const void *data, size_t len)
{
	if (r->nimages == MAX_IMAGES)
		return -ENOSPC;
	struct image *im = &r->images[r->nimages];
	memset(im, 0, sizeof(*im));
	if (!(im->data = malloc(len ? len : 1)))
		return -ENOMEM;
	memcpy(im->data, data, len);
	im->len = len;
	Elf *e = elf_memory((char *)im->data, len);
	if (e && elf_kind(e) == ELF_K_ELF)
		im->bidlen = elf_note_build_id(e, im->bid, sizeof(im->bid));
	if (e)
		elf_end(e);
	if (!im->bidlen) { /* only found by build-id */
		free(im->data);
		return -ENOENT;
	}
	for (size_t i = 0; i < r->nimages; i++)
		if (r->images[i].bidlen == im->bidlen && memcmp(r->images[i].bid, im->bid, im->bidlen) == 0) {
			free(im->data);
			return 0; /* have it */
		}
	r->nimages++;
	return 0;
}

/* Symbols of an in-memory image with m's build-id (a "[vdso]" mapping). */
static int load_image(struct sym_resolver *r, struct symfile *f, const struct sym_mapping *m)
{
	for (size_t i = 0; i < r->nimages; i++) {
		struct image *im = &r->images[i];
		if (im->bidlen != m->build_id_len || memcmp(im->bid, m->build_id, im->bidlen) != 0)
			continue;
		Elf *e = elf_memory((char *)im->data, im->len);
		int rc = load_elf(f, e, m->path, m->build_id, m->build_id_len);
		if (e)
			elf_end(e);
		return rc;
	}
	return -ENOENT;
}

/* The sorted kernel table, for sym_kallsyms.c. */
struct sym **sym_resolver_ksyms(struct sym_resolver *r, size_t **n)
{
	*n = &r->nksyms;
	return &r->ksyms;
}

const struct sym *sym_resolver_ksyms_const(const struct sym_resolver *r, size_t *n)
{
	*n = r->nksyms;
	return r->ksyms;
}

const struct sym *sym_lookup(const struct sym *syms, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct sym *s = &syms[lo - 1];
	if (s->size && addr >= s->addr + s->size)
		return NULL;
	return s;
}

static struct symfile *get_file(struct sym_resolver *r, const struct sym_mapping *m)
{
	char hex[130], key[4400];
	sym_build_id_hex(m->build_id, m->build_id_len, hex, sizeof(hex));
	snprintf(key, sizeof(key), "%s@%s", m->path ? m->path : "", hex);
	for (size_t i = 0; i < r->nfiles; i++)
		if (strcmp(r->files[i].key, key) == 0)
			return &r->files[i];
	if (r->nfiles == MAX_FILES)
		return NULL;
	struct symfile *f = &r->files[r->nfiles];
	memset(f, 0, sizeof(*f));
	f->key = strdup(key);
	if (!f->key)
		return NULL;
	r->nfiles++;
	if (m->path && m->path[0] == '[') { /* "[vdso]": no file, an image the agent sent */
		f->ok = m->build_id_len && load_image(r, f, m) == 0;
		return f;
	}
	char cand[6][4400];
	int nc = 0;
	if (r->symfs && m->path)
		snprintf(cand[nc++], sizeof(cand[0]), "%s%s", r->symfs, m->path);
	/* --debug-dir adds to the default, first (issue 39: it used to replace it, and the
	 * system's libraries lost their debug files) */
	if (hex[0] && strlen(hex) > 2 && r->debug_dir && strcmp(r->debug_dir, "/usr/lib/debug") != 0)
		snprintf(cand[nc++], sizeof(cand[0]), "%s/.build-id/%.2s/%s.debug", r->debug_dir, hex, hex + 2);
	if (hex[0] && strlen(hex) > 2 && process_debug_dir && strcmp(process_debug_dir, "/usr/lib/debug") != 0 &&
	    (!r->debug_dir || strcmp(process_debug_dir, r->debug_dir) != 0))
		snprintf(cand[nc++], sizeof(cand[0]), "%s/.build-id/%.2s/%s.debug", process_debug_dir, hex, hex + 2);
	if (hex[0] && strlen(hex) > 2)
		snprintf(cand[nc++], sizeof(cand[0]), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	if (m->path && !r->symfs)
		snprintf(cand[nc++], sizeof(cand[0]), "%s", m->path);
	/* last: a debuginfod server, where DEBUGINFOD_URLS names one (cached by libdebuginfod) */
	if (m->build_id_len && sym_debuginfod_find(m->build_id, m->build_id_len, cand[nc], sizeof(cand[0])) == 0)
		nc++;
	for (int i = 0; i < nc && !f->ok; i++) {
		if (load_file(f, cand[i], m->build_id, m->build_id_len) == 0) {
			f->ok = true;
			f->loaded = strdup(cand[i]);
			log_debug("symbols: %s from %s (%zu functions)", m->path, cand[i], f->nsyms);
		} else {
			for (size_t j = 0; j < f->nsyms; j++)
				sym_free(&f->syms[j]);
			free(f->syms);
			free(f->segs);
			f->syms = NULL;
			f->segs = NULL;
			f->nsyms = f->nsegs = 0;
		}
	}
	return f;
}

const char *sym_resolve(struct sym_resolver *r, const struct sym_mapping *m, uint64_t ip, uint64_t *file_off)
{
	return sym_resolve_raw(r, m, ip, file_off, NULL);
}

/* ip's link-time address in f (through the PT_LOAD segment that holds its file offset). */
static uint64_t file_vaddr(const struct symfile *f, uint64_t off)
{
	for (size_t i = 0; i < f->nsegs; i++)
		if (off >= f->segs[i].off && off < f->segs[i].off + f->segs[i].filesz)
			return off - f->segs[i].off + f->segs[i].vaddr;
	return off;
}

const char *sym_resolve_raw(struct sym_resolver *r, const struct sym_mapping *m, uint64_t ip, uint64_t *file_off,
			    const char **raw)
{
	uint64_t off = ip - m->start + m->pgoff;
	*file_off = off;
	struct symfile *f = get_file(r, m);
	if (!f || !f->ok)
		return NULL;
	const struct sym *s = sym_lookup(f->syms, f->nsyms, file_vaddr(f, off));
	if (!s)
		return NULL;
	if (raw)
		*raw = s->raw;
	return s->name;
}

int sym_source_line(struct sym_resolver *r, const struct sym_mapping *m, uint64_t ip, const char **file,
		    uint32_t *line)
{
	struct symfile *f = get_file(r, m);
	if (!f || !f->ok || !f->loaded)
		return -ENOENT;
	if (!f->dwarf && !(f->dwarf = sym_dwarf_open(f->loaded)))
		return -ENOMEM;
	return sym_dwarf_line(f->dwarf, file_vaddr(f, ip - m->start + m->pgoff), file, line);
}
