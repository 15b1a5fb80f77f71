#include "elf_buildid.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_MAX (256u * 1024u) /* notes sit right after the program headers */

static uint64_t rd(const uint8_t *p, size_t n, bool be)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
	return v;
}

static int scan_notes(const uint8_t *buf, size_t len, uint64_t off, uint64_t size, bool be, uint8_t *out,
		      size_t max)
{
	if (off > len || size > len - off)
		return -ENOENT;
	const uint8_t *p = buf + off, *end = p + size;
	while (end - p >= 12) {
		uint32_t namesz = (uint32_t)rd(p, 4, be), descsz = (uint32_t)rd(p + 4, 4, be);
		uint32_t type = (uint32_t)rd(p + 8, 4, be);
		size_t nalign = ((size_t)namesz + 3) & ~(size_t)3, dalign = ((size_t)descsz + 3) & ~(size_t)3;
		p += 12;
		if ((size_t)(end - p) < nalign || (size_t)(end - p) - nalign < dalign)
			return -ENOENT;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p, "GNU", 4) == 0 && descsz > 0) {
			size_t n = descsz < max ? descsz : max;
			memcpy(out, p + nalign, n);
			return (int)n;
		}
		p += nalign + dalign;
	}
	return -ENOENT;
}

int elf_build_id_mem(const uint8_t *buf, size_t len, uint8_t *out, size_t max)
{
	if (len < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	bool is64 = buf[EI_CLASS] == ELFCLASS64, be = buf[EI_DATA] == ELFDATA2MSB;
	size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (len < ehsize)
		return -ENOEXEC;
	uint64_t phoff = is64 ? rd(buf + 32, 8, be) : rd(buf + 28, 4, be);
	size_t phentsize = (size_t)rd(buf + (is64 ? 54 : 42), 2, be);
	size_t phnum = (size_t)rd(buf + (is64 ? 56 : 44), 2, be);
	if (phentsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return -ENOENT;
	for (size_t i = 0; i < phnum; i++) {
		uint64_t o = phoff + i * phentsize;
		if (o > len || len - o < phentsize)
			break;
		const uint8_t *ph = buf + o;
		if (rd(ph, 4, be) != PT_NOTE)
			continue;
		uint64_t noff = is64 ? rd(ph + 8, 8, be) : rd(ph + 4, 4, be);
		uint64_t nsz = is64 ? rd(ph + 32, 8, be) : rd(ph + 16, 4, be);
		int rc = scan_notes(buf, len, noff, nsz, be, out, max);
		if (rc > 0)
			return rc;
	}
	return -ENOENT;
}

int elf_build_id(const char *path, uint8_t *out, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	/* The note sits right after the program headers, in the first page, in what
	 * linkers write: read that first (a busy host maps thousands of files a
	 * minute), the first READ_MAX bytes only where it is not there. */
	uint8_t page[4096];
	ssize_t r0 = pread(fd, page, sizeof(page), 0);
	if (r0 < 0 || (size_t)r0 < sizeof(page) || st.st_size <= (off_t)sizeof(page)) {
		int rc0 = r0 < 0 ? -errno : elf_build_id_mem(page, (size_t)r0, out, max);
		close(fd);
		return rc0;
	}
	int rc0 = elf_build_id_mem(page, (size_t)r0, out, max);
	if (rc0 != -ENOENT) {
		close(fd);
		return rc0;
	}
	size_t want = st.st_size < (off_t)READ_MAX ? (size_t)st.st_size : READ_MAX;
	uint8_t *buf = malloc(want ? want : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	ssize_t r = pread(fd, buf, want, 0);
	int rc = r < 0 ? -errno : elf_build_id_mem(buf, (size_t)r, out, max);
	free(buf);
	close(fd);
	return rc;
}
