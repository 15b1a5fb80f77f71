/* Text that reaches a terminal: agent-supplied strings (agent ids, board,
 * kernel and host names, program, thread, kernel and function names,
 * calibration labels) are printed by every text output of the collector, and
 * a control character in them (an ESC sequence) would drive the reader's
 * terminal. One rule for all of them: C0 control characters, DEL and the C1
 * controls in their UTF-8 form (U+0080..U+009F, bytes 0xC2 0x80..0x9F, which
 * some terminals obey) each become one '?'. Other bytes pass unchanged. */
#ifndef COLLECTOR_REPORT_TEXT_SAFE_H
#define COLLECTOR_REPORT_TEXT_SAFE_H

#include <stddef.h>
#include <stdio.h>

/* Copy s for one field of a line (newline and tab become '?' too); NULL or
 * empty is "-". Returns buf, cut to len - 1 bytes. */
const char *text_safe_copy(char *buf, size_t len, const char *s);

/* A stream that writes everything given to it on to out under the rule, newline
 * and tab kept (multi-line text). Every text renderer writes through one.
 * Out of memory: out itself (logged). */
FILE *text_safe_open(FILE *out);
/* Close f, what text_safe_open(out) returned: flush what is pending into out
 * (which stays open) and free the stream; 0, or -EIO if writing failed. */
int text_safe_close(FILE *f, FILE *out);

#endif
