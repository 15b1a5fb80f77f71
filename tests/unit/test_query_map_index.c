/* The mapping of an address found through a process's index by address (collector/query/query_sess.c:
 * qm_find_map_indexed, review r6 of w45d: the frame cache's key needs the mapping of every frame, and
 * scanning a process's thousands of mappings at each one made the query's CPU grow with them) is the
 * one the scan (qm_find_map) finds: the latest declared holding it, NULL where none does, over
 * processes of a few mappings (scanned) and of many, with mappings that overlap (a file mapped again
 * where another was), nest, touch and repeat, addresses at their edges, and look-ups that alternate
 * between processes more than the index keeps (its slots by pid). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>

#include "query/query_priv.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

enum { NPIDS = 200, MAXMAPS = 400, PAGE = 0x1000 };

/* pid p has p % 7 == 0 ? 100..MAXMAPS mappings : 0..20, in a space of 64 MiB (overlaps likely where
 * overlap, else laid out apart); ids in declaration order. */
static void make_sess(struct sess *se, bool overlap)
{
	memset(se, 0, sizeof(*se));
	se->maps = calloc((size_t)NPIDS * MAXMAPS, sizeof(*se->maps));
	assert_non_null(se->maps);
	int64_t id = 1;
	for (int32_t p = 1; p <= NPIDS; p++) {
		size_t n = p % 7 == 0 ? 100 + rnd() % (MAXMAPS - 100) : rnd() % 21;
		uint64_t at = 0x400000;
		for (size_t i = 0; i < n; i++) {
			struct map_row *m = &se->maps[se->nmaps++];
			m->id = id++;
			m->pid = p;
			if (overlap) {
				m->start = 0x400000 + (rnd() % 16384) * PAGE;
				m->end = m->start + (1 + rnd() % 64) * PAGE;
			} else {
				m->start = at + (rnd() % 3) * PAGE; /* 0: touching the last one */
				m->end = m->start + (1 + rnd() % 16) * PAGE;
				at = m->end;
			}
			m->path = "/x";
		}
	}
}

static void compare(bool overlap)
{
	struct sess se;
	make_sess(&se, overlap);
	size_t found = 0, none = 0;
	for (int round = 0; round < 200000; round++) {
		int32_t pid = 1 + (int32_t)(rnd() % (NPIDS + 1)); /* NPIDS + 1: no mappings at all */
		uint64_t ip;
		if (rnd() % 4 == 0 && se.nmaps) { /* an edge of some mapping */
			const struct map_row *m = &se.maps[rnd() % se.nmaps];
			ip = rnd() % 2 ? m->start : m->end - (rnd() % 2);
		} else {
			ip = 0x3ff000 + (rnd() % (16384 + 256)) * PAGE + rnd() % PAGE;
		}
		const struct map_row *want = qm_find_map(&se, pid, QM_INC_ANY, ip);
		const struct map_row *got = qm_find_map_indexed(&se, pid, QM_INC_ANY, ip);
		assert_ptr_equal(got, want);
		found += want != NULL;
		none += want == NULL;
	}
	assert_true(found > 10000 && none > 10000); /* both outcomes exercised */
	qm_sess_free(&se);
}

static void test_query_map_index_as_scan_overlapping(void **state)
{
	(void)state;
	compare(true);
}

static void test_query_map_index_as_scan_apart(void **state)
{
	(void)state;
	compare(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_query_map_index_as_scan_overlapping),
	    cmocka_unit_test(test_query_map_index_as_scan_apart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
