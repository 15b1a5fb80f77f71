/* Minimal JSON output helpers for the CLI (no dependency): strings are
 * escaped and made valid UTF-8 (bad bytes become U+FFFD). */
#ifndef COLLECTOR_JSON_H
#define COLLECTOR_JSON_H

#include <stdint.h>
#include <stdio.h>

/* Write s as a JSON string literal, quotes included; NULL writes null. */
void json_string(FILE *f, const char *s);
/* "key": with a leading comma unless first. */
void json_key(FILE *f, int first, const char *key);
void json_u64(FILE *f, uint64_t v);
void json_i64(FILE *f, int64_t v);
/* A finite double with enough digits, null if not finite. */
void json_double(FILE *f, double v);

#endif
