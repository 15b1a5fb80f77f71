/* The replay's pages as runs in Unicorn (collector/trace_replay/page_runs.c, issue 36), fed
 * directly in a real Unicorn engine of each architecture the replay opens (replay_arm.c
 * trace_replay_open: UC_ARCH_ARM64, UC_ARCH_ARM): a sequential sweep of 8,192 pages (32 MiB;
 * joined without a bound it cost ~N^2/2 pages of unmapping, 4,096 pages 4.7-8.4 s) ends in 32
 * regions, one per aligned chunk of 256 pages, with every page's bytes in place; a descending
 * sweep and pages filled in between separate ones give the same; the region limit refuses a
 * separate page but takes one that joins; after Unicorn refuses a map every later add is
 * refused. (1,024 separate pages against the emulator's own limit of 960: test_trace_replay_arm
 * separate_pages, through the replay; each map costs time per region mapped.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicorn/unicorn.h>

#include "trace_replay/page_runs.h"

#define PS 4096u
#define BASE 0x10000000ull
#define NPAGES 8192u /* 32 MiB of 4 KiB pages */
#define CHUNK 256u   /* page_runs.c RUN_CHUNK */

static uint8_t page_buf[PS];

static uc_engine *open_uc(int a64)
{
	uc_engine *uc = NULL;
	assert_int_equal(uc_open(a64 ? UC_ARCH_ARM64 : UC_ARCH_ARM, a64 ? UC_MODE_ARM : UC_MODE_ARM, &uc), UC_ERR_OK);
	return uc;
}

static uint32_t regions_in(uc_engine *uc)
{
	uc_mem_region *r = NULL;
	uint32_t n = 0;
	assert_int_equal(uc_mem_regions(uc, &r, &n), UC_ERR_OK);
	uc_free(r);
	return n;
}

static int add(struct page_runs *p, uc_engine *uc, const struct trace_replay_snap *s, uint32_t k)
{
	memset(page_buf, (int)(k * 7 + 1), PS);
	memcpy(page_buf, &k, sizeof(k));
	return page_runs_add(p, uc, s, 0, BASE + (uint64_t)k * PS, page_buf, UC_PROT_READ | UC_PROT_WRITE);
}

/* every page in Unicorn holds the bytes it was added with (its index, then its fill) */
static void check_bytes(uc_engine *uc, uint32_t npages)
{
	size_t bad = 0;
	for (uint32_t k = 0; k < npages; k++) {
		uint8_t b[8];
		uint32_t got;
		if (uc_mem_read(uc, BASE + (uint64_t)k * PS + PS - 8, b, sizeof(b)) != UC_ERR_OK ||
		    uc_mem_read(uc, BASE + (uint64_t)k * PS, &got, sizeof(got)) != UC_ERR_OK) {
			bad++;
			continue;
		}
		bad += got != k || b[7] != (uint8_t)(k * 7 + 1);
	}
	assert_int_equal(bad, 0);
}

/* order 0: ascending, 1: descending */
static void sweep(int a64, int order)
{
	const struct trace_replay_map map = {.start = BASE, .end = BASE + (uint64_t)NPAGES * PS, .prot = 3};
	const struct trace_replay_snap s = {.maps = &map, .nmaps = 1, .page_size = PS};
	uc_engine *uc = open_uc(a64);
	struct page_runs p;
	size_t limit = page_runs_limit(uc);
	assert_true(limit >= 960);
	assert_int_equal(page_runs_init(&p, &s, limit), 0);
	size_t refused = 0;
	for (uint32_t j = 0; j < NPAGES; j++) {
		uint32_t k = order == 0 ? j : NPAGES - 1 - j;
		refused += add(&p, uc, &s, k) != 0;
	}
	assert_int_equal(refused, 0);
	assert_false(p.failed);
	assert_int_equal(p.regions, NPAGES / CHUNK); /* 32: a region per aligned chunk */
	assert_int_equal(regions_in(uc), NPAGES / CHUNK);
	check_bytes(uc, NPAGES);
	fprintf(stderr, "%s, order %d: %zu regions, %zu pages refused\n", a64 ? "aarch64" : "arm", order, p.regions,
		refused);
	uc_close(uc);
	page_runs_free(&p);
}

static void test_page_runs_sweep_ascending(void **state)
{
	(void)state;
	sweep(1, 0);
	sweep(0, 0);
}

static void test_page_runs_sweep_descending(void **state)
{
	(void)state;
	sweep(0, 1);
}

/* every 16th page of two chunks (32 runs), then the rest: runs join inside their chunk only (2) */
static void test_page_runs_fill_in(void **state)
{
	(void)state;
	const struct trace_replay_map map = {.start = BASE, .end = BASE + 2ull * CHUNK * PS, .prot = 3};
	const struct trace_replay_snap s = {.maps = &map, .nmaps = 1, .page_size = PS};
	uc_engine *uc = open_uc(0);
	struct page_runs p;
	assert_int_equal(page_runs_init(&p, &s, page_runs_limit(uc)), 0);
	for (uint32_t k = 0; k < 2 * CHUNK; k += 16)
		assert_int_equal(add(&p, uc, &s, k), 0);
	assert_int_equal(p.regions, 2 * CHUNK / 16);
	for (uint32_t k = 0; k < 2 * CHUNK; k++)
		if (k % 16)
			assert_int_equal(add(&p, uc, &s, k), 0);
	assert_int_equal(p.regions, 2);
	assert_int_equal(regions_in(uc), 2);
	check_bytes(uc, 2 * CHUNK);
	uc_close(uc);
	page_runs_free(&p);
}

/* max_regions 2: a third separate page is refused, a page joining a run is not */
static void test_page_runs_limit_takes_joins(void **state)
{
	(void)state;
	const struct trace_replay_map map = {.start = BASE, .end = BASE + 64ull * PS, .prot = 3};
	const struct trace_replay_snap s = {.maps = &map, .nmaps = 1, .page_size = PS};
	uc_engine *uc = open_uc(1);
	struct page_runs p;
	assert_int_equal(page_runs_init(&p, &s, 2), 0);
	assert_int_equal(add(&p, uc, &s, 0), 0);
	assert_int_equal(add(&p, uc, &s, 10), 0);
	assert_int_equal(add(&p, uc, &s, 20), -ENOSPC);
	assert_int_equal(add(&p, uc, &s, 11), 0);
	assert_int_equal(add(&p, uc, &s, 1), 0);
	assert_int_equal(p.regions, 2);
	assert_false(p.failed);
	uc_close(uc);
	page_runs_free(&p);
}

/* Unicorn refuses the joined run (page 1 already mapped outside page_runs, after page 0's run
 * was unmapped): -EIO, and every later add is refused without touching Unicorn. */
static void test_page_runs_refuses_after_failure(void **state)
{
	(void)state;
	const struct trace_replay_map map = {.start = BASE, .end = BASE + 64ull * PS, .prot = 3};
	const struct trace_replay_snap s = {.maps = &map, .nmaps = 1, .page_size = PS};
	uc_engine *uc = open_uc(0);
	struct page_runs p;
	assert_int_equal(page_runs_init(&p, &s, page_runs_limit(uc)), 0);
	assert_int_equal(add(&p, uc, &s, 0), 0);
	assert_int_equal(uc_mem_map(uc, BASE + PS, PS, UC_PROT_READ), UC_ERR_OK);
	assert_int_equal(add(&p, uc, &s, 1), -EIO);
	assert_true(p.failed);
	assert_int_equal(add(&p, uc, &s, 30), -EIO);
	uint8_t b;
	assert_int_not_equal(uc_mem_read(uc, BASE + 30ull * PS, &b, 1), UC_ERR_OK); /* never mapped */
	uc_close(uc);
	page_runs_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_runs_sweep_ascending),
		cmocka_unit_test(test_page_runs_sweep_descending),
		cmocka_unit_test(test_page_runs_fill_in),
		cmocka_unit_test(test_page_runs_limit_takes_joins),
		cmocka_unit_test(test_page_runs_refuses_after_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
