/* The profile views over an in-memory stack_set (no store): folded lines
 * (merged, sorted, ';' in a name replaced), the flame tree's totals and
 * self counts, the diff table's gains and losses, the pprof encoding read
 * back with the generated decoder (ids, leaf-first locations, values, labels,
 * string table), the flame page's data and bounds (a stack of more than
 * STACKS_MAX_FRAMES frames is refused). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/flame.h"
#include "views/flame_tree.h"
#include "views/folded.h"
#include "views/func_stats.h"
#include "views/pprof.h"
#include "views/profile.pb-c.h"
#include "views/stacks.h"

static void fill(struct stack_set *s)
{
	stack_set_init(s);
	const char *a[] = {"main", "run", "hot"}, *b[] = {"main", "cold"}, *c[] = {"main", "run"},
		   *d[] = {"main", "odd;name"};
	struct stack_keys k = {.comm = "demo", .pid = 7, .tid = 8, .agent = "board-a"};
	assert_int_equal(stack_set_add_names(s, a, 3, 5, &k), 0);
	assert_int_equal(stack_set_add_names(s, b, 2, 3, &k), 0);
	assert_int_equal(stack_set_add_names(s, c, 2, 2, &k), 0);
	assert_int_equal(stack_set_add_names(s, a, 3, 1, &k), 0); /* the same stack again: merged in views */
	assert_int_equal(stack_set_add_names(s, d, 2, 1, NULL), 0);
	s->freq_hz = 100;
}

static char *render(int (*fn)(const struct flame_tree *, int, FILE *), const struct flame_tree *t, int side)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(fn(t, side, m), 0);
	fclose(m);
	return buf;
}

static void test_views_folded_and_tree(void **state)
{
	(void)state;
	struct stack_set s;
	fill(&s);
	assert_int_equal(s.total, 12);
	struct flame_tree t;
	assert_int_equal(flame_tree_init(&t), 0);
	struct flame_opts fo = {.process_level = true};
	assert_int_equal(flame_tree_add(&t, &s, 0, &fo), 0);
	assert_int_equal(t.nodes[0].total[0], 12);
	char *txt = render(folded_write, &t, 0);
	assert_string_equal(txt, "[unknown process];main;odd:name 1\n"
				 "demo;main;cold 3\n"
				 "demo;main;run 2\n"
				 "demo;main;run;hot 6\n");
	free(txt);
	flame_tree_free(&t);
	/* without the process level */
	assert_int_equal(flame_tree_init(&t), 0);
	assert_int_equal(flame_tree_add(&t, &s, 0, NULL), 0);
	txt = render(folded_write, &t, 0);
	assert_string_equal(txt, "main;cold 3\nmain;odd:name 1\nmain;run 2\nmain;run;hot 6\n");
	free(txt);
	/* the page's data: [name, module, total, self, totalA, [children]] */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct flame_render fr = {.title = "t"};
	assert_int_equal(flame_json(&t, &fr, m), 0);
	fclose(m);
	assert_non_null(strstr(buf, "[\"run\",\"[unknown]\",8,2,0,[[\"hot\",\"[unknown]\",6,6,0,[]]]]"));
	free(buf);
	flame_tree_free(&t);
	stack_set_free(&s);
}

static void test_views_bounds(void **state)
{
	(void)state;
	struct stack_set s;
	stack_set_init(&s);
	static const char *deep[STACKS_MAX_FRAMES + 1];
	for (size_t i = 0; i <= STACKS_MAX_FRAMES; i++)
		deep[i] = "f";
	assert_int_equal(stack_set_add_names(&s, deep, STACKS_MAX_FRAMES + 1, 1, NULL), -EINVAL);
	assert_int_equal(stack_set_add_names(&s, deep, 0, 1, NULL), -EINVAL);
	assert_int_equal(stack_set_add_names(&s, deep, STACKS_MAX_FRAMES, 1, NULL), 0);
	/* the deepest stack renders (folded and flame page) */
	struct flame_tree t;
	assert_int_equal(flame_tree_init(&t), 0);
	assert_int_equal(flame_tree_add(&t, &s, 0, NULL), 0);
	assert_int_equal(t.n, STACKS_MAX_FRAMES + 1);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct flame_render fr = {.title = "<deep>"};
	assert_int_equal(flame_html(&t, &fr, m), 0);
	fclose(m);
	assert_non_null(strstr(buf, "&lt;deep&gt;"));
	assert_null(strstr(buf, "<deep>"));
	free(buf);
	flame_tree_free(&t);
	stack_set_free(&s);
}

static void test_views_diff_table(void **state)
{
	(void)state;
	struct stack_set a, b;
	stack_set_init(&a);
	stack_set_init(&b);
	const char *hot[] = {"main", "hot"}, *cold[] = {"main", "cold"};
	assert_int_equal(stack_set_add_names(&a, hot, 2, 10, NULL), 0);
	assert_int_equal(stack_set_add_names(&a, cold, 2, 30, NULL), 0);
	assert_int_equal(stack_set_add_names(&b, hot, 2, 40, NULL), 0);
	assert_int_equal(stack_set_add_names(&b, cold, 2, 10, NULL), 0);
	struct func_stats fs;
	func_stats_init(&fs);
	assert_int_equal(func_stats_add(&fs, &a, 0), 0);
	assert_int_equal(func_stats_add(&fs, &b, 1), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_int_equal(func_stats_diff_table(&fs, 5, 1, m), 0);
	fclose(m);
	/* hot: 25% -> 80% self; cold 75% -> 20%; main never a leaf */
	assert_string_equal(buf, "{\"samples_a\":40,\"samples_b\":50,\"gains\":[{\"function\":\"hot\",\"module\":"
				 "\"[unknown]\",\"self_a\":10,\"self_b\":40,\"total_a\":10,\"total_b\":40,\"change_pct\":55}"
				 "],\"losses\":[{\"function\":\"cold\",\"module\":\"[unknown]\",\"self_a\":30,\"self_b\":10,"
				 "\"total_a\":30,\"total_b\":10,\"change_pct\":-55}]}\n");
	free(buf);
	func_stats_free(&fs);
	stack_set_free(&a);
	stack_set_free(&b);
}

static const char *pstr(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static void test_views_pprof_decodes(void **state)
{
	(void)state;
	struct stack_set s;
	fill(&s);
	/* an unresolved frame keeps its address, no line */
	struct sym_frame fr[2] = {{.name = "[libx.so]", .module = "libx.so", .ip = 0x7f0000001234, .file_off = 0x1234},
				  {.name = "main", .raw = "main", .module = "demo", .resolved = 1}};
	assert_int_equal(stack_set_add(&s, fr, 2, 4, NULL), 0);
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(pprof_encode(&s, &raw, &len), 0);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(p);
	assert_string_equal(pstr(p, 0), "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(pstr(p, p->sample_type[0]->type), "samples");
	assert_string_equal(pstr(p, p->sample_type[1]->unit), "nanoseconds");
	assert_int_equal(p->period, 10000000); /* 100 Hz */
	assert_int_equal(p->n_sample, s.nstacks);
	/* sample 0: main;run;hot x5, leaf first */
	const Perftools__Profiles__Sample *s0 = p->sample[0];
	assert_int_equal(s0->n_location_id, 3);
	assert_int_equal(s0->value[0], 5);
	assert_int_equal(s0->value[1], 5 * 10000000);
	const Perftools__Profiles__Location *leaf = p->location[s0->location_id[0] - 1];
	assert_int_equal(leaf->id, s0->location_id[0]);
	assert_int_equal(leaf->n_line, 1);
	assert_string_equal(pstr(p, p->function[leaf->line[0]->function_id - 1]->name), "hot");
	/* labels: comm, agent (strings), pid, tid (numbers) */
	int seen = 0;
	for (size_t i = 0; i < s0->n_label; i++) {
		const char *k = pstr(p, s0->label[i]->key);
		if (strcmp(k, "comm") == 0 && strcmp(pstr(p, s0->label[i]->str), "demo") == 0)
			seen |= 1;
		if (strcmp(k, "pid") == 0 && s0->label[i]->num == 7)
			seen |= 2;
		if (strcmp(k, "agent") == 0 && strcmp(pstr(p, s0->label[i]->str), "board-a") == 0)
			seen |= 4;
	}
	assert_int_equal(seen, 7);
	/* the unresolved frame: address = file offset, mapping libx.so, no line */
	const Perftools__Profiles__Sample *sl = p->sample[p->n_sample - 1];
	const Perftools__Profiles__Location *u = p->location[sl->location_id[0] - 1];
	assert_int_equal(u->address, 0x1234);
	assert_int_equal(u->n_line, 0);
	assert_string_equal(pstr(p, p->mapping[u->mapping_id - 1]->filename), "libx.so");
	/* the records' own timer period wins over 1 s / freq_hz (the agent's is 1/128 longer, off the
	 * kernel tick: agent/sampler.c choose_event), so time = counts x the period sampled with */
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	s.period = 10000000 + 10000000 / 128;
	assert_int_equal(pprof_encode(&s, &raw, &len), 0);
	p = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(p);
	assert_int_equal(p->period, 10078125);
	assert_int_equal(p->sample[0]->value[1], 5 * 10078125);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	/* gzip on disk */
	char *gz = NULL;
	size_t gzlen = 0;
	FILE *m = open_memstream(&gz, &gzlen);
	assert_int_equal(pprof_write(&s, m), 0);
	fclose(m);
	assert_true(gzlen > 20);
	assert_int_equal((unsigned char)gz[0], 0x1f);
	assert_int_equal((unsigned char)gz[1], 0x8b);
	free(gz);
	stack_set_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_views_folded_and_tree),
		cmocka_unit_test(test_views_bounds),
		cmocka_unit_test(test_views_diff_table),
		cmocka_unit_test(test_views_pprof_decodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
