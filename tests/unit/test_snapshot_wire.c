/* The snapshot messages (proto/snapshot.proto, issue 36): what validate_snapshot.h and
 * envelope_validate accept and refuse, and a Pages answer surviving the frame codec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "profiler.pb-c.h"
#include "validate.h"
#include "validate_snapshot.h"

struct snap {
	Prof__TraceSnapshot s;
	Prof__SnapshotMap m[3], *mp[3];
	uint64_t regs[SNAPSHOT_REGS_AARCH64];
};

/* A good aarch64 snapshot: text r-x, data rw-, stack rw-; pc in the text. */
static void good(struct snap *x)
{
	memset(x, 0, sizeof(*x));
	prof__trace_snapshot__init(&x->s);
	uint64_t lo[3] = {0x400000, 0x600000, 0xfffff000}, hi[3] = {0x410000, 0x700000, 0x100000000ull};
	uint32_t prot[3] = {5, 3, 3};
	for (int i = 0; i < 3; i++) {
		prof__snapshot_map__init(&x->m[i]);
		x->m[i].start = lo[i];
		x->m[i].end = hi[i];
		x->m[i].prot = prot[i];
		x->mp[i] = &x->m[i];
	}
	x->regs[32] = 0x400100;
	x->s.snapshot_id = 7;
	x->s.arch = 2;
	x->s.n_regs = SNAPSHOT_REGS_AARCH64;
	x->s.regs = x->regs;
	x->s.n_maps = 3;
	x->s.maps = x->mp;
	x->s.page_size = 4096;
	x->s.max_pages = 1024;
	x->s.expires_ms = 10000;
}

static int check(const Prof__TraceSnapshot *s)
{
	char err[256];
	return validate_trace_snapshot(s, err, sizeof(err));
}

static void test_snapshot_wire_trace_snapshot_good_and_bad(void **state)
{
	(void)state;
	struct snap x;
	good(&x);
	assert_int_equal(check(&x.s), 0);
	/* 32-bit ARM: 17 registers, pc r15 */
	good(&x);
	x.s.arch = 3;
	x.s.n_regs = SNAPSHOT_REGS_ARM;
	x.regs[15] = 0x400200;
	assert_int_equal(check(&x.s), 0);
	x.regs[16] = 1ull << 32; /* a 32-bit register over 32 bits */
	assert_int_not_equal(check(&x.s), 0);
	/* each one thing wrong */
	good(&x), x.s.snapshot_id = 0, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.s.arch = 1, assert_int_not_equal(check(&x.s), 0);	     /* x86_64: the agent replays it */
	good(&x), x.s.arch = 4, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.s.n_regs = 33, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.s.arch = 3, assert_int_not_equal(check(&x.s), 0);	     /* 34 registers for arm */
	good(&x), x.s.page_size = 3000, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.s.page_size = 6144, assert_int_not_equal(check(&x.s), 0); /* not a power of two */
	good(&x), x.s.page_size = 1u << 17, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.s.max_pages = 0, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.s.max_pages = SNAPSHOT_WINDOW_PAGES + 1, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.s.expires_ms = 0, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.s.expires_ms = SNAPSHOT_EXPIRES_MS + 1, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.s.n_maps = 0, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.m[1].start = 0x600800, assert_int_not_equal(check(&x.s), 0); /* unaligned */
	good(&x), x.m[1].end = x.m[1].start, assert_int_not_equal(check(&x.s), 0); /* empty */
	good(&x), x.m[1].start = 0x40f000, assert_int_not_equal(check(&x.s), 0); /* overlaps the text */
	good(&x), x.m[0].prot = 8, assert_int_not_equal(check(&x.s), 0);
	good(&x), x.regs[32] = 0x600100, assert_int_not_equal(check(&x.s), 0);   /* pc in data (rw-) */
	good(&x), x.regs[32] = 0x500000, assert_int_not_equal(check(&x.s), 0);   /* pc in no map */
	good(&x), x.m[0].prot = 4, assert_int_not_equal(check(&x.s), 0);	 /* text not readable */
}

static void test_snapshot_wire_page_request_and_pages(void **state)
{
	(void)state;
	char err[256];
	uint64_t a[SNAPSHOT_REQ_PAGES + 1];
	for (int i = 0; i <= SNAPSHOT_REQ_PAGES; i++)
		a[i] = 0x400000 + (uint64_t)i * 4096;
	Prof__PageRequest r = PROF__PAGE_REQUEST__INIT;
	r.snapshot_id = 3;
	r.addr = a;
	r.n_addr = 2;
	assert_int_equal(validate_page_request(&r, 4096, err, sizeof(err)), 0);
	assert_int_not_equal(validate_page_request(&r, 65536, err, sizeof(err)), 0); /* 0x401000: not a 64 KiB page */
	r.n_addr = 0;
	assert_int_not_equal(validate_page_request(&r, 4096, err, sizeof(err)), 0);
	r.n_addr = SNAPSHOT_REQ_PAGES + 1;
	assert_int_not_equal(validate_page_request(&r, 4096, err, sizeof(err)), 0);
	r.n_addr = 2;
	r.snapshot_id = 0;
	assert_int_not_equal(validate_page_request(&r, 4096, err, sizeof(err)), 0);
	r.snapshot_id = 3;
	a[1] = 0x401001;
	assert_int_not_equal(validate_page_request(&r, 4096, err, sizeof(err)), 0);
	a[1] = 0x401000;

	static uint8_t data[2 * 4096];
	uint32_t st[2] = {0, 14 /* EFAULT */};
	Prof__Pages p = PROF__PAGES__INIT;
	p.snapshot_id = 3;
	p.addr = a;
	p.n_addr = 2;
	p.status = st;
	p.n_status = 2;
	p.data.data = data;
	p.data.len = 4096;
	assert_int_equal(validate_pages(&p, 4096, err, sizeof(err)), 0);
	assert_int_equal(validate_pages(&p, 0, err, sizeof(err)), 0);
	p.data.len = 8192; /* a page for the failed one too */
	assert_int_not_equal(validate_pages(&p, 4096, err, sizeof(err)), 0);
	p.data.len = 4000;
	assert_int_not_equal(validate_pages(&p, 0, err, sizeof(err)), 0);
	p.data.len = 4096;
	p.n_status = 1;
	assert_int_not_equal(validate_pages(&p, 4096, err, sizeof(err)), 0);
	p.n_status = 2;
	st[0] = 14; /* nothing served, yet data */
	assert_int_not_equal(validate_pages(&p, 0, err, sizeof(err)), 0);
}

/* Live messages: seq 0 only, checked through the envelope; a Pages frame round trip. */
static void test_snapshot_wire_envelope_live_only(void **state)
{
	(void)state;
	char err[256];
	struct snap x;
	good(&x);
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_TRACE_SNAPSHOT;
	env.trace_snapshot = &x.s;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);
	assert_string_equal(envelope_kind(&env), "trace_snapshot");
	env.seq = 5;
	assert_int_not_equal(envelope_validate(&env, err, sizeof(err)), 0);
	env.seq = 0;
	x.s.arch = 9;
	assert_int_not_equal(envelope_validate(&env, err, sizeof(err)), 0);

	Prof__SnapshotDone d = PROF__SNAPSHOT_DONE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_SNAPSHOT_DONE;
	env.snapshot_done = &d;
	assert_int_not_equal(envelope_validate(&env, err, sizeof(err)), 0); /* id 0 */
	d.snapshot_id = 2;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);

	uint64_t a[1] = {0x7000};
	uint32_t st[1] = {0};
	static uint8_t page[4096];
	for (int i = 0; i < 4096; i++)
		page[i] = (uint8_t)(i * 7);
	Prof__Pages p = PROF__PAGES__INIT;
	p.snapshot_id = 2;
	p.addr = a;
	p.n_addr = 1;
	p.status = st;
	p.n_status = 1;
	p.data.data = page;
	p.data.len = sizeof(page);
	env.body_case = PROF__ENVELOPE__BODY_PAGES;
	env.pages = &p;
	uint8_t *frame = NULL;
	size_t len = 0;
	assert_int_equal(frame_encode(&env, 1 << 20, &frame, &len), 0);
	uint32_t body = 0;
	int h = frame_get_varint(frame, len, &body);
	assert_true(h > 0);
	Prof__Envelope *back = prof__envelope__unpack(NULL, body, frame + h);
	assert_non_null(back);
	assert_int_equal(back->body_case, PROF__ENVELOPE__BODY_PAGES);
	assert_int_equal(envelope_validate(back, err, sizeof(err)), 0);
	assert_int_equal(validate_pages(back->pages, 4096, err, sizeof(err)), 0);
	assert_memory_equal(back->pages->data.data, page, sizeof(page));
	prof__envelope__free_unpacked(back, NULL);
	free(frame);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_snapshot_wire_trace_snapshot_good_and_bad),
	    cmocka_unit_test(test_snapshot_wire_page_request_and_pages),
	    cmocka_unit_test(test_snapshot_wire_envelope_live_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
