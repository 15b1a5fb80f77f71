/* Minimal JSON output helpers (no dependency), the one string escaper of
 * every JSON writer (collector CLI, HTTP, reports; agent calibration files):
 * '"' and '\\' are backslash-escaped, control characters and DEL become
 * \n \r \t or \u00XX, U+2028 / U+2029 become \u2028 / \u2029 (so the output
 * is also a valid JavaScript literal), '<', '>' and '&' become \u003c, \u003e
 * and \u0026 (a string never closes a <script> element or opens an HTML
 * comment or entity when JSON is embedded in, or sniffed as, HTML), and bytes
 * that are not valid UTF-8 become \ufffd. Nothing is dropped. */
#ifndef COMMON_JSON_H
#define COMMON_JSON_H

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
/* "key": value in one call (json_key, then the value as above). */
void json_str_key(FILE *f, int first, const char *key, const char *v);
void json_u64_key(FILE *f, int first, const char *key, uint64_t v);
void json_i64_key(FILE *f, int first, const char *key, int64_t v);
void json_num_key(FILE *f, int first, const char *key, double v);

#endif
