/* The one JSON reader (no dependency): a cursor over a buffer, with the
 * pieces a caller needs to read a known document shape — objects (a callback
 * per key), arrays, strings, numbers, booleans, null, skipping any value. The
 * machine-model readers (collector/calib/model_json.c: the calibration model;
 * collector/edag/edag_machine.c: the eDAG machine) are built on it. Strings:
 * the standard escapes; \uXXXX kept when ASCII, '?' otherwise. Nesting is
 * bounded (JSON_READ_MAX_DEPTH). Every function returns 0 or -EINVAL with
 * "WHAT: reason at byte N" in the caller's err. (Writing JSON: json.h.) */
#ifndef COMMON_JSON_READ_H
#define COMMON_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_READ_MAX_DEPTH 64
#define JSON_READ_KEY_MAX 128 /* longer keys are cut */

struct json_rd {
	const char *start, *s, *e;
	const char *what; /* prefix of error messages, e.g. "machine model" */
	char *err;
	size_t errlen;
	int depth;
};

void json_rd_init(struct json_rd *p, const char *buf, size_t len, const char *what, char *err, size_t errlen);
/* Set err to "WHAT: <fmt> at byte N"; returns -EINVAL. */
int json_rd_fail(struct json_rd *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void json_rd_ws(struct json_rd *p);
/* After white space: is the next byte c? (not consumed) */
bool json_rd_peek(struct json_rd *p, char c);
int json_rd_expect(struct json_rd *p, char c);
/* A string into out (cut to len-1 bytes, NUL-terminated); out may be NULL. */
int json_rd_string(struct json_rd *p, char *out, size_t len);
/* A number (strtod's reading of the JSON number characters; may overflow to inf). */
int json_rd_number(struct json_rd *p, double *v);
int json_rd_bool(struct json_rd *p, bool *v);
/* 1 if the next value is null (consumed), else 0. */
int json_rd_null(struct json_rd *p);
/* Skip any value. */
int json_rd_skip(struct json_rd *p);
/* An object: fn(p, key, arg) is called positioned on each value and must
 * consume it. */
typedef int (*json_key_fn)(struct json_rd *p, const char *key, void *arg);
int json_rd_object(struct json_rd *p, json_key_fn fn, void *arg);
/* An array: fn(p, index, arg) is called on each element and must consume it. */
typedef int (*json_elem_fn)(struct json_rd *p, size_t i, void *arg);
int json_rd_array(struct json_rd *p, json_elem_fn fn, void *arg);
/* Nothing but white space left. */
int json_rd_end(struct json_rd *p);

#endif
