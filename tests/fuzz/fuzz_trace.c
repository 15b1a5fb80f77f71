/* libFuzzer target: the trace readers of `collector edag --trace`. The
 * first byte picks the reader: EDAN lines (the one-pass tokeniser must
 * answer exactly as the general parser: abort otherwise), native text lines,
 * native binary records, a TraceWindow record, and the binary sniffing and
 * escaping done before any of them. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"
#include "trace_in.h"

static struct edag_edan_cache *cache;

static void edan_lines(const char *s, size_t n)
{
	size_t off = 0;
	if (!cache)
		cache = edag_edan_cache_new(); /* kept across inputs: stale entries must never answer */
	while (off < n) {
		const char *nl = memchr(s + off, '\n', n - off);
		size_t len = nl ? (size_t)(nl - (s + off)) : n - off;
		struct edag_insn a, b;
		struct edag_edan_info ia, ib;
		char ea[200] = "", eb[200] = "";
		int ra = edag_edan_parse(s + off, len, &a, &ia, ea, sizeof(ea));
		if (nl) {
			size_t used = 0;
			int rb = edag_edan_parse_next(s + off, n - off, &used, &b, &ib, cache, eb, sizeof(eb));
			if (rb != ra || used != len + 1 || (ra < 0 && strcmp(ea, eb) != 0) ||
			    (ra > 0 && (memcmp(&a, &b, sizeof(a)) != 0 || ia.cpu != ib.cpu || ia.unknown != ib.unknown ||
					ia.no_addr != ib.no_addr || ia.mnem_len != ib.mnem_len)))
				abort();
		}
		if (ra < 0) {
			char out[256];
			trace_escape(ea, strlen(ea), 200, out, sizeof(out));
		}
		off += len + 1;
	}
}

static void native_lines(const char *s, size_t n)
{
	unsigned arch = EDAG_ARCH_RISCV64;
	size_t off = 0;
	while (off < n) {
		const char *nl = memchr(s + off, '\n', n - off);
		size_t len = nl ? (size_t)(nl - (s + off)) : n - off;
		struct edag_insn in;
		struct edag_window_info wi;
		char err[200];
		edag_parse_native_line(s + off, len, &arch, &in, &wi, err, sizeof(err));
		off += len + 1;
	}
}

static void native_bin(const uint8_t *d, size_t n)
{
	unsigned arch;
	edag_bin_header_decode(d, n, &arch);
	size_t off = 0;
	struct edag_insn in;
	int used;
	while (off < n && (used = edag_bin_decode(d + off, n - off, &in)) > 0) {
		uint8_t back[EDAG_BIN_MAX_RECORD];
		if (edag_bin_encode(&in, back) != (size_t)used)
			abort();
		off += (size_t)used;
	}
}

static void trace_window(const uint8_t *d, size_t n)
{
	Prof__TraceWindow *tw = prof__trace_window__unpack(NULL, n, d);
	if (!tw)
		return;
	struct edag_window_iter it;
	struct edag_insn in;
	edag_window_iter_init(&it, tw);
	int rc;
	size_t k = 0;
	while ((rc = edag_window_next(&it, &in)) != 0 && rc != -EINVAL && k++ < 100000)
		if (rc < 0 && !it.why)
			abort(); /* every bad instruction says why */
	prof__trace_window__free_unpacked(tw, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned which = data[0] % 4;
	data++;
	size--;
	const char *what;
	trace_sniff(data, size, &what);
	char esc[128];
	trace_escape((const char *)data, size, 64, esc, sizeof(esc));
	switch (which) {
	case 0:
		edan_lines((const char *)data, size);
		break;
	case 1:
		native_lines((const char *)data, size);
		break;
	case 2:
		native_bin(data, size);
		break;
	default:
		trace_window(data, size);
		break;
	}
	return 0;
}
