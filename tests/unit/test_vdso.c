/* The agent's vdso (agent/vdso.c) and its use on the host (issue 39): the image
 * read through getauxval(AT_SYSINFO_EHDR) lies inside this process's [vdso]
 * mapping (/proc/self/maps, the kernel's own account), is accepted by the wire
 * check and carries a build-id; the collector's resolver given the image names
 * an address of its __vdso_clock_gettime (its address read here with libelf)
 * in a "[vdso]" mapping of that build-id, and not in one of another build-id;
 * the wire check refuses what is no ELF image or too large. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.pb-c.h"
#include "symbols.h"
#include "validate.h"
#include "vdso.h"

static int validate_image(const uint8_t *img, size_t len)
{
	Prof__Vdso m = PROF__VDSO__INIT;
	m.image.data = (uint8_t *)img;
	m.image.len = len;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_VDSO;
	env.vdso = &m;
	char err[200] = "";
	return envelope_validate(&env, err, sizeof(err));
}

/* st_value of name in the image's dynamic symbols (libelf), 0 if absent. */
static uint64_t dynsym(const uint8_t *img, size_t len, const char *name)
{
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	Elf *e = elf_memory((char *)img, len);
	assert_non_null(e);
	uint64_t v = 0;
	Elf_Scn *scn = NULL;
	while (!v && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(e, sh.sh_link, s.st_name)) && strcmp(n, name) == 0)
				v = s.st_value;
		}
	}
	elf_end(e);
	return v;
}

static void test_vdso_image_named_on_the_host(void **state)
{
	(void)state;
	size_t len = 0;
	const uint8_t *img = vdso_image(&len);
	if (!img) {
		print_message("skipped: this process has no vdso (AT_SYSINFO_EHDR 0)\n");
		skip();
	}
	/* inside the [vdso] mapping the kernel reports */
	FILE *f = fopen("/proc/self/maps", "re");
	assert_non_null(f);
	char line[512];
	unsigned long long lo = 0, hi = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			break;
	fclose(f);
	assert_true(hi > lo);
	assert_int_equal((uintptr_t)img, lo);
	assert_true(len > 64 && (uintptr_t)img + len <= hi);
	assert_int_equal(validate_image(img, len), 0);
	uint8_t bid[64];
	size_t bl = vdso_build_id(bid, sizeof(bid));
	assert_true(bl > 0);
	uint64_t fn = dynsym(img, len, "__vdso_clock_gettime");
	if (!fn) {
		print_message("skipped: this vdso exports no __vdso_clock_gettime\n");
		skip();
	}
	struct sym_resolver *r;
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	assert_int_equal(sym_resolver_add_image(r, img, len), 0);
	struct sym_mapping m = {.path = "[vdso]", .build_id = bid, .build_id_len = bl, .start = lo, .end = hi};
	uint64_t off;
	const char *name = sym_resolve(r, &m, lo + fn + 1, &off);
	assert_non_null(name);
	fprintf(stderr, "# vdso %zu bytes, build-id %zu bytes, 0x%llx: %s\n", len, bl, (unsigned long long)(lo + fn + 1),
		name);
	assert_true(strcmp(name, "__vdso_clock_gettime") == 0 || strcmp(name, "clock_gettime") == 0);
	uint8_t other[64];
	memcpy(other, bid, bl);
	other[0] ^= 0xff;
	struct sym_mapping m2 = m;
	m2.build_id = other;
	assert_null(sym_resolve(r, &m2, lo + fn + 1, &off)); /* another boot's vdso: not this image */
	sym_resolver_free(r);
	/* the wire check: no ELF, or larger than 64 KiB */
	uint8_t *big = calloc(1, 65537);
	assert_non_null(big);
	memcpy(big, img, len);
	assert_int_equal(validate_image(big, 65537), -EINVAL);
	memset(big, 0, 4);
	assert_int_equal(validate_image(big, len), -EINVAL);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vdso_image_named_on_the_host),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
