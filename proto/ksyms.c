/* KernelSymbols chunks: encode (agent) and check + decode (collector). */
#include "ksyms.h"
#include "fail.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ksyms_chunk_decode(const Prof__KernelSymbols *m, ksyms_fn fn, void *arg, char *err, size_t errlen)
{
	size_t bl = m->kernel_boot_id ? strlen(m->kernel_boot_id) : 0;
	if (bl == 0 || bl > KSYMS_BOOT_ID_MAX)
		return fail(err, errlen, "kernel_symbols: boot id of %zu bytes (1..%u, KSYMS_BOOT_ID_MAX)",
			    bl, KSYMS_BOOT_ID_MAX);
	for (size_t i = 0; i < bl; i++)
		if (m->kernel_boot_id[i] < 0x21 || m->kernel_boot_id[i] > 0x7e)
			return fail(err, errlen, "kernel_symbols: boot id with a byte 0x%02x",
				    (unsigned char)m->kernel_boot_id[i]);
	if (m->chunks == 0 || m->chunks > KSYMS_MAX_CHUNKS || m->chunk >= m->chunks)
		return fail(err, errlen,
			    "kernel_symbols: chunk %u of %u (at most %u chunks, KSYMS_MAX_CHUNKS)", m->chunk,
			    m->chunks, KSYMS_MAX_CHUNKS);
	if ((uint64_t)m->total > (uint64_t)m->chunks * KSYMS_MAX_CHUNK_SYMS ||
	    m->total > KSYMS_MAX_TABLE_SYMS)
		return fail(err, errlen,
			    "kernel_symbols: %u symbols in %u chunks (at most %u a chunk, %u a table: "
			    "KSYMS_MAX_TABLE_SYMS)",
			    m->total, m->chunks, KSYMS_MAX_CHUNK_SYMS, KSYMS_MAX_TABLE_SYMS);
	size_t n = m->n_addr_delta;
	if (n == 0 && m->n_shared == 0 && m->suffixes.len == 0 && m->chunk == 0)
		return 0; /* a reference to the table sent in an earlier session of this boot */
	if (n == 0 || n > KSYMS_MAX_CHUNK_SYMS || m->n_shared != n)
		return fail(err, errlen,
			    "kernel_symbols: %zu addresses and %zu name prefixes (1..%u, equal; "
			    "KSYMS_MAX_CHUNK_SYMS)",
			    n, m->n_shared, KSYMS_MAX_CHUNK_SYMS);
	if (n > m->total)
		return fail(err, errlen, "kernel_symbols: %zu symbols in a chunk of a %u-symbol table", n,
			    m->total);
	if (m->suffixes.len > KSYMS_MAX_SUFFIX_BYTES)
		return fail(err, errlen, "kernel_symbols: %zu name bytes (max %u, KSYMS_MAX_SUFFIX_BYTES)",
			    m->suffixes.len, KSYMS_MAX_SUFFIX_BYTES);
	if (!m->suffixes.len || !m->suffixes.data) /* (NULL + 0 is undefined: found by fuzz_records) */
		return fail(err, errlen, "kernel_symbols: %zu symbols without names", n);
	const uint8_t *p = m->suffixes.data, *end = p + m->suffixes.len;
	char name[KSYMS_NAME_MAX + 1];
	size_t prev_len = 0, decoded = 0;
	uint64_t addr = 0;
	for (size_t i = 0; i < n; i++) {
		addr = i ? addr + (uint64_t)m->addr_delta[i] : (uint64_t)m->addr_delta[0]; /* modulo 2^64 */
		if (m->shared[i] > prev_len)
			return fail(err, errlen,
				    "kernel_symbols: name %zu shares %u bytes of a %zu-byte name", i,
				    m->shared[i], prev_len);
		const uint8_t *z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
		if (!z)
			return fail(err, errlen, "kernel_symbols: name %zu is not ended", i);
		size_t sl = (size_t)(z - p), len = m->shared[i] + sl;
		if (len == 0 || len > KSYMS_NAME_MAX)
			return fail(err, errlen,
				    "kernel_symbols: name %zu of %zu bytes (1..%u, KSYMS_NAME_MAX)", i, len,
				    KSYMS_NAME_MAX);
		decoded += len + 1;
		if (decoded > KSYMS_MAX_CHUNK_NAME_BYTES)
			return fail(err, errlen,
				    "kernel_symbols: names of more than %u bytes decoded in one chunk "
				    "(KSYMS_MAX_CHUNK_NAME_BYTES; name %zu of %zu)",
				    KSYMS_MAX_CHUNK_NAME_BYTES, i, n);
		memcpy(name + m->shared[i], p, sl);
		name[len] = 0;
		prev_len = len;
		p = z + 1;
		if (fn) {
			int rc = fn(arg, addr, name);
			if (rc < 0)
				return rc;
		}
	}
	if (p != end)
		return fail(err, errlen, "kernel_symbols: %zu name bytes after the last name",
			    (size_t)(end - p));
	return 0;
}

int ksyms_encode(const uint64_t *addr, const char *const *names, size_t n, const char *boot_id,
		 int (*emit)(void *arg, const Prof__KernelSymbols *m), void *arg)
{
	if (n == 0)
		return 0;
	if (n > KSYMS_MAX_TABLE_SYMS)
		return -EFBIG;
	size_t chunks = (n + KSYMS_CHUNK_SYMS - 1) / KSYMS_CHUNK_SYMS;
	if (chunks > KSYMS_MAX_CHUNKS)
		return -EFBIG;
	int rc = 0;
	for (size_t c = 0; rc == 0 && c < chunks; c++) {
		size_t lo = c * KSYMS_CHUNK_SYMS, hi = lo + KSYMS_CHUNK_SYMS < n ? lo + KSYMS_CHUNK_SYMS : n;
		rc = ksyms_encode_chunk(addr + lo, names + lo, hi - lo, (uint32_t)c, (uint32_t)chunks, (uint32_t)n, boot_id,
					emit, arg);
	}
	return rc;
}

int ksyms_encode_chunk(const uint64_t *addr, const char *const *names, size_t n, uint32_t chunk, uint32_t chunks,
		       uint32_t total, const char *boot_id, int (*emit)(void *arg, const Prof__KernelSymbols *m),
		       void *arg)
{
	if (n > KSYMS_CHUNK_SYMS || chunk >= chunks || chunks > KSYMS_MAX_CHUNKS)
		return -EINVAL;
	int64_t *delta = malloc((n ? n : 1) * sizeof(*delta));
	uint32_t *shared = malloc((n ? n : 1) * sizeof(*shared));
	size_t bytes = 1;
	for (size_t i = 0; i < n; i++)
		bytes += strnlen(names[i], KSYMS_NAME_MAX) + 1;
	uint8_t *buf = malloc(bytes);
	int rc = delta && shared && buf ? 0 : -ENOMEM;
	if (rc == 0) {
		size_t lo = 0, hi = n, off = 0;
		for (size_t i = lo; i < hi; i++) {
			const char *nm = names[i];
			size_t len = strnlen(nm, KSYMS_NAME_MAX), sh = 0;
			if (i > lo) {
				const char *pv = names[i - 1];
				size_t pl = strnlen(pv, KSYMS_NAME_MAX);
				while (sh < len && sh < pl && nm[sh] == pv[sh])
					sh++;
			}
			delta[i - lo] = (int64_t)(i > lo ? addr[i] - addr[i - 1] : addr[i]);
			shared[i - lo] = (uint32_t)sh;
			memcpy(buf + off, nm + sh, len - sh);
			off += len - sh;
			buf[off++] = 0;
		}
		Prof__KernelSymbols m = PROF__KERNEL_SYMBOLS__INIT;
		m.kernel_boot_id = (char *)boot_id;
		m.chunk = chunk;
		m.chunks = chunks;
		m.total = total;
		m.n_addr_delta = m.n_shared = hi - lo;
		m.addr_delta = delta;
		m.shared = shared;
		m.suffixes.data = buf;
		m.suffixes.len = off;
		rc = emit(arg, &m);
	}
	free(delta);
	free(shared);
	free(buf);
	return rc;
}
