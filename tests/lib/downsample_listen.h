/* The listening collector downsamples by itself (#40, --downsample-after D
 * --downsample-per W; collector/server/downsampler.c), checked on one store
 * (an SQLite path or a postgresql:// URI; dir for its log and port file): a
 * session of an hour ago written into it, then a collector started with
 * --compact-after 1s --compact-per 2ms --downsample-after 1s --downsample-per
 * 10ms merges its 40 blocks into 21 (compaction, one per 2 ms) and those into 5
 * (one per 10 ms window) in the background, with the totals and a pid's
 * samples as they were and one log line per tier; it stops cleanly, and on SQLite the thread's
 * connection (STORE_SECOND) left no writer row (the store reads as closed
 * cleanly). cmocka asserts. */
#ifndef TESTS_LIB_DOWNSAMPLE_LISTEN_H
#define TESTS_LIB_DOWNSAMPLE_LISTEN_H

#include <stdbool.h>

void tp_downsample_listen(const char *dir, const char *db, bool pg);

#endif
