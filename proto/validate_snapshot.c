/* Snapshot message checks (validate_snapshot.h). */
#include "validate_snapshot.h"

#include "fail.h"

int validate_trace_snapshot(const Prof__TraceSnapshot *s, char *err, size_t errlen)
{
	if (s->snapshot_id == 0)
		return fail(err, errlen, "trace_snapshot: id 0");
	size_t want = s->arch == 2 ? SNAPSHOT_REGS_AARCH64 : s->arch == 3 ? SNAPSHOT_REGS_ARM : 0;
	if (!want)
		return fail(err, errlen, "trace_snapshot: arch %u (2 aarch64 or 3 arm)", s->arch);
	if (s->n_regs != want)
		return fail(err, errlen, "trace_snapshot: %zu registers (arch %u has %zu)", s->n_regs, s->arch, want);
	uint32_t ps = s->page_size;
	if (ps < 4096 || ps > 65536 || (ps & (ps - 1)))
		return fail(err, errlen, "trace_snapshot: page size %u (a power of two, 4096..65536)", ps);
	if (s->max_pages == 0 || s->max_pages > SNAPSHOT_WINDOW_PAGES)
		return fail(err, errlen, "trace_snapshot: page budget %u (1..%u)", s->max_pages, SNAPSHOT_WINDOW_PAGES);
	if (s->expires_ms == 0 || s->expires_ms > SNAPSHOT_EXPIRES_MS)
		return fail(err, errlen, "trace_snapshot: expires in %u ms (1..%u)", s->expires_ms, SNAPSHOT_EXPIRES_MS);
	if (s->n_maps == 0 || s->n_maps > SNAPSHOT_MAPS_MAX)
		return fail(err, errlen, "trace_snapshot: %zu maps (1..%u)", s->n_maps, SNAPSHOT_MAPS_MAX);
	uint64_t pc = s->arch == 2 ? s->regs[32] : s->regs[15], prev_end = 0;
	if (s->arch == 3 && (pc >> 32 || s->regs[16] >> 32))
		return fail(err, errlen, "trace_snapshot: arm register over 32 bits");
	int pc_in = 0;
	for (size_t i = 0; i < s->n_maps; i++) {
		const Prof__SnapshotMap *m = s->maps[i];
		if (m->start >= m->end || (m->start | m->end) & (ps - 1) || (i && m->start < prev_end))
			return fail(err, errlen, "trace_snapshot: map %zu [0x%llx, 0x%llx) empty, unaligned or not after the previous",
				    i, (unsigned long long)m->start, (unsigned long long)m->end);
		if (m->prot > 7)
			return fail(err, errlen, "trace_snapshot: map %zu prot %u", i, m->prot);
		prev_end = m->end;
		pc_in |= pc >= m->start && pc < m->end && (m->prot & 5) == 5;
	}
	if (!pc_in)
		return fail(err, errlen, "trace_snapshot: pc 0x%llx in no readable executable map", (unsigned long long)pc);
	return 0;
}

static int addrs_ok(const char *what, uint32_t id, const uint64_t *a, size_t n, uint32_t ps, char *err, size_t errlen)
{
	if (id == 0)
		return fail(err, errlen, "%s: snapshot id 0", what);
	if (n == 0 || n > SNAPSHOT_REQ_PAGES)
		return fail(err, errlen, "%s: %zu pages (1..%u)", what, n, SNAPSHOT_REQ_PAGES);
	uint64_t mask = (ps ? ps : 4096) - 1;
	for (size_t i = 0; i < n; i++)
		if (a[i] & mask)
			return fail(err, errlen, "%s: address 0x%llx not page-aligned", what, (unsigned long long)a[i]);
	return 0;
}

int validate_page_request(const Prof__PageRequest *r, uint32_t page_size, char *err, size_t errlen)
{
	return addrs_ok("page_request", r->snapshot_id, r->addr, r->n_addr, page_size, err, errlen);
}

int validate_pages(const Prof__Pages *p, uint32_t page_size, char *err, size_t errlen)
{
	int rc = addrs_ok("pages", p->snapshot_id, p->addr, p->n_addr, page_size, err, errlen);
	if (rc < 0)
		return rc;
	if (p->n_status != p->n_addr)
		return fail(err, errlen, "pages: %zu statuses for %zu addresses", p->n_status, p->n_addr);
	size_t ok = 0;
	for (size_t i = 0; i < p->n_status; i++)
		ok += p->status[i] == 0;
	if (page_size ? p->data.len != ok * page_size
		      : p->data.len % 4096 || p->data.len > (size_t)SNAPSHOT_REQ_PAGES * 65536 || (ok == 0) != (p->data.len == 0))
		return fail(err, errlen, "pages: %zu bytes of data for %zu pages of %u bytes", p->data.len, ok, page_size);
	return 0;
}
