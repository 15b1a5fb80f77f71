/* Unit tests of common/json_read.c, the one JSON reader (calibration and
 * eDAG machine models are built on it): values of every kind, skipping,
 * bounded nesting, and a clear error with the byte offset for bad input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_read.h"

struct doc {
	char name[16];
	double x;
	bool flag, x_null;
	double sum;
	size_t nelems;
};

static int elem(struct json_rd *p, size_t i, void *arg)
{
	struct doc *d = arg;
	double v;
	if (json_rd_number(p, &v) < 0)
		return -EINVAL;
	d->sum += v;
	d->nelems = i + 1;
	return 0;
}

static int key(struct json_rd *p, const char *k, void *arg)
{
	struct doc *d = arg;
	if (strcmp(k, "name") == 0)
		return json_rd_string(p, d->name, sizeof(d->name));
	if (strcmp(k, "x") == 0) {
		if (json_rd_null(p)) {
			d->x_null = true;
			return 0;
		}
		return json_rd_number(p, &d->x);
	}
	if (strcmp(k, "flag") == 0)
		return json_rd_bool(p, &d->flag);
	if (strcmp(k, "list") == 0)
		return json_rd_array(p, elem, d);
	return json_rd_skip(p);
}

static int parse(const char *s, struct doc *d, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	struct json_rd p;
	json_rd_init(&p, s, strlen(s), "doc", err, errlen);
	if (json_rd_object(&p, key, d) < 0)
		return -EINVAL;
	return json_rd_end(&p);
}

static void test_json_read_values(void **state)
{
	(void)state;
	struct doc d;
	char err[256] = "";
	const char *s = " { \"name\" : \"a\\tb\\u0041\\u00e9 and more text\", \"x\": -1.5e2, \"flag\": true,"
			" \"list\": [1, 2, 3.5], \"other\": {\"k\": [null, false, \"s\", {}], \"z\": 1} }\n";
	if (parse(s, &d, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_string_equal(d.name, "a\tbA? and more "); /* cut to the buffer; \u00e9 is not ASCII: '?' */
	assert_true(d.x == -150.0);
	assert_true(d.flag);
	assert_int_equal(d.nelems, 3);
	assert_true(d.sum == 6.5);
	assert_int_equal(parse("{\"x\": null, \"list\": []}", &d, err, sizeof(err)), 0);
	assert_true(d.x_null);
	assert_int_equal(d.nelems, 0);
}

static void expect_error(const char *s, const char *want)
{
	struct doc d;
	char err[256] = "";
	assert_int_equal(parse(s, &d, err, sizeof(err)), -EINVAL);
	if (strncmp(err, "doc: ", 5) != 0 || !strstr(err, want) || !strstr(err, " at byte "))
		fail_msg("%s: got '%s', want '%s'", s, err, want);
}

static void test_json_read_errors(void **state)
{
	(void)state;
	expect_error("", "expected '{'");
	expect_error("{\"x\": 1", "expected '}'");
	expect_error("{\"x\": abc}", "expected a number");
	expect_error("{\"flag\": 1}", "expected true or false");
	expect_error("{\"name\": \"abc", "unterminated string");
	expect_error("{\"name\": \"a\nb\"}", "control character");
	expect_error("{\"name\": \"\\u12\"}", "\\u escape");
	expect_error("{\"x\": 1} x", "trailing data");
	expect_error("{\"other\": }", "expected a number");
}

static void test_json_read_nesting_bounded(void **state)
{
	(void)state;
	char s[512];
	size_t n = 0;
	n += (size_t)snprintf(s + n, sizeof(s) - n, "{\"deep\": ");
	for (int i = 0; i < 100; i++)
		s[n++] = '[';
	s[n] = 0;
	expect_error(s, "nested too deeply");
	/* within the bound: fine */
	n = (size_t)snprintf(s, sizeof(s), "{\"deep\": ");
	for (int i = 0; i < 60; i++)
		s[n++] = '[';
	for (int i = 0; i < 60; i++)
		s[n++] = ']';
	s[n++] = '}';
	s[n] = 0;
	struct doc d;
	char err[256] = "";
	if (parse(s, &d, err, sizeof(err)) < 0)
		fail_msg("%s", err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_read_values),
	    cmocka_unit_test(test_json_read_errors),
	    cmocka_unit_test(test_json_read_nesting_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
