/* Unit tests of common/json.c, the one JSON string escaper of every JSON
 * writer: nothing is dropped, everything that would break a JSON (or
 * JavaScript) string literal is escaped, invalid UTF-8 becomes U+FFFD. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"

static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	json_string(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void expect(const char *in, const char *want)
{
	char *got = escaped(in);
	if (strcmp(got, want) != 0)
		fail_msg("json_string(%s): got %s, want %s", in ? in : "NULL", got, want);
	free(got);
}

static void test_json_string_quotes_and_backslashes(void **state)
{
	(void)state;
	expect("plain", "\"plain\"");
	expect("a\"b", "\"a\\\"b\"");
	expect("c:\\dir\\", "\"c:\\\\dir\\\\\"");
	expect("\"\\\"", "\"\\\"\\\\\\\"\"");
	expect("", "\"\"");
	expect(NULL, "null");
}

static void test_json_string_control_characters(void **state)
{
	(void)state;
	expect("a\nb\rc\td", "\"a\\nb\\rc\\td\"");
	expect("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	expect("bell\a", "\"bell\\u0007\"");
}

static void test_json_string_line_separators(void **state)
{
	(void)state;
	/* U+2028 / U+2029 are valid JSON but end a line in JavaScript before ES2019 */
	expect("x\xe2\x80\xa8y\xe2\x80\xa9z", "\"x\\u2028y\\u2029z\"");
	/* other characters of the same block pass through as UTF-8 */
	expect("\xe2\x80\xa6", "\"\xe2\x80\xa6\"");
	expect("caf\xc3\xa9 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
}

static void test_json_string_html_specials(void **state)
{
	(void)state;
	/* JSON that a browser sniffs as HTML, or that is embedded in a <script>, cannot close or open a tag */
	expect("</script><script>alert(1)</script>",
	       "\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\"");
	expect("a&amp;<!--", "\"a\\u0026amp;\\u003c!--\"");
}

static void test_json_string_invalid_utf8(void **state)
{
	(void)state;
	expect("a\xff"
	       "b",
	       "\"a\\ufffdb\"");
	expect("\xc0\xaf", "\"\\ufffd\\ufffd\"");	     /* overlong '/' */
	expect("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* a surrogate */
	expect("\xe2\x80", "\"\\ufffd\\ufffd\"");	     /* cut short at the end */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_string_quotes_and_backslashes),
	    cmocka_unit_test(test_json_string_control_characters),
	    cmocka_unit_test(test_json_string_line_separators),
	    cmocka_unit_test(test_json_string_html_specials),
	    cmocka_unit_test(test_json_string_invalid_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
