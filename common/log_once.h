/* Warnings said once per process for a given subject (a damaged kernel table,
 * a skipped session): a collector answers the same query every few seconds
 * for its live pages and must not repeat the same line each time. */
#ifndef COMMON_LOG_ONCE_H
#define COMMON_LOG_ONCE_H

#include <stdbool.h>

/* True the first time key is seen by this process (thread-safe). Keys are
 * remembered by a 64-bit hash in a fixed table of LOG_ONCE_KEYS entries:
 * memory is bounded; once it is full every key is new again (true). */
#define LOG_ONCE_KEYS 4096u
bool log_once(const char *key);
/* Forget every key (tests). */
void log_once_reset(void);

#endif
