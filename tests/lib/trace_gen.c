#include "trace_gen.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static uint32_t next(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

void trace_gen(struct edag_insn *ins, size_t n, uint32_t seed)
{
	uint32_t s = seed ? seed : 1;
	uint64_t pc = 0x10000;
	for (size_t i = 0; i < n; i++) {
		struct edag_insn *in = &ins[i];
		memset(in, 0, sizeof(*in));
		in->pc = pc;
		pc = (next(&s) % 16 == 0) ? 0x10000 + (next(&s) % 64) * 4 : pc + 4;
		uint32_t k = next(&s) % 10;
		uint8_t a = (uint8_t)(1 + next(&s) % 31), b = (uint8_t)(1 + next(&s) % 31);
		in->rd[in->nread++] = a;
		in->wr[in->nwrite++] = b;
		if (k < 3 || k == 9) { /* load (k == 9: read-modify-write as an int with +rw) */
			in->cls = k == 9 ? EDAG_INT : EDAG_LOAD;
			in->mem = k == 9 ? (EDAG_MEM_READ | EDAG_MEM_WRITE) : EDAG_MEM_READ;
		} else if (k < 5) {
			in->cls = EDAG_STORE;
			in->mem = EDAG_MEM_WRITE;
			in->nwrite = 0;
			in->rd[in->nread++] = b;
		} else {
			in->cls = k == 5 ? EDAG_FLOAT : k == 6 ? EDAG_BRANCH : k == 7 ? EDAG_OTHER : EDAG_INT;
		}
		if (in->mem) {
			static const uint32_t sizes[] = {1, 2, 4, 8, 16, 64};
			in->size = sizes[next(&s) % 6];
			/* 256 KiB region, mostly near the last address */
			in->addr = 0x400000 + (next(&s) % 4 == 0 ? next(&s) % (256u << 10) : (i * 8) % (256u << 10));
		}
		if (i % 97 == 0) { /* an instruction with many registers */
			in->nread = EDAG_MAX_REGS;
			for (unsigned r = 0; r < EDAG_MAX_REGS; r++)
				in->rd[r] = (uint8_t)(r + 1);
		}
	}
}

int trace_gen_write_bin(const char *path, unsigned arch, const struct edag_insn *ins, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -errno;
	uint8_t hdr[EDAG_BIN_HEADER], rec[EDAG_BIN_MAX_RECORD];
	edag_bin_header_encode(hdr, arch);
	fwrite(hdr, 1, sizeof(hdr), f);
	for (size_t i = 0; i < n; i++)
		fwrite(rec, 1, edag_bin_encode(&ins[i], rec), f);
	return fclose(f) == 0 ? 0 : -EIO;
}
