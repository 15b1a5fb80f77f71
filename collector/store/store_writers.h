/* Which processes have a SQLite store open for writing (store_writers table):
 * a row per writer, added when it opens the store and removed when it closes
 * it cleanly. A row whose process is gone (or from another boot) means the
 * store was not closed cleanly (a crash, kill -9, power loss): the case where
 * an integrity check is worth its cost (STORE_CHECK_AUTO, store.h). A row is
 * a process still running if its pid runs (not a zombie) on this boot and, where
 * the row has its start_ticks (#40 w46g), started at those ticks after boot.
 * PostgreSQL recovers by itself: not kept there. Part of the store core. */
#ifndef COLLECTOR_STORE_WRITERS_H
#define COLLECTOR_STORE_WRITERS_H

#include <stddef.h>

struct store;

/* 1: a writer that is gone left the store open (who, in why); 0: every writer closed it or is
 * still running; -ENOENT: a store written before the table existed (nothing is known). */
int store_writers_unclean(struct store *s, char *why, size_t whylen);
/* This process writes the store: drop the rows of writers that are gone (a check ran, or the
 * caller chose not to), add this one. 0 or -errno (logged). */
int store_writers_enter(struct store *s);
/* 1: another process that is still running has the store open for writing (its pid and the unix
 * time it opened it in *pid, *since; #40 w46c: before a schema upgrade an older collector would not
 * see); 0: none; -errno. */
int store_writers_other_live(struct store *s, long long *pid, long long *since);
/* Closed cleanly: remove this process's row. */
void store_writers_leave(struct store *s);

#endif
