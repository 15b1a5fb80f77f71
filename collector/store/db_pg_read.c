/* PostgreSQL engine: a read command's one snapshot (#40 w46b, db_read_begin). Autocommit gives
 * every statement its own snapshot: a query that reads a session's key dictionary and then its
 * blocks could meet a block committed in between, referring to ids past the dictionary read
 * (review r7 #3). A REPEATABLE READ READ ONLY transaction gives all of a request's statements
 * the snapshot of its first one; it takes no lock a writer waits for. */
#include "generated/config.h"

#ifdef CONFIG_STORE_POSTGRESQL

#include "db_pg_priv.h"

int dbpg_read_begin(struct db *d)
{
	struct pg *p = pgd(d);
	/* a lost connection: no transaction (the reads fail as they would); an open one (a writer's
	 * batch): the reads join it, as before */
	if (!p->conn || p->broken || PQstatus(p->conn) != CONNECTION_OK)
		return 0;
	/* statements sent before it synced first: in one pipeline segment they would be the implicit
	 * transaction's first queries, and its isolation level can be set only before any */
	int rc = dbpg_drain(p);
	if (rc < 0)
		return rc;
	if (PQtransactionStatus(p->conn) != PQTRANS_IDLE)
		return 0;
	/* pipelined: no round trip of its own; the snapshot is taken at the first read */
	rc = dbpg_send_simple(p, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", P_CMD, "begin a read");
	return rc < 0 ? rc : 1;
}

void dbpg_read_end(struct db *d)
{
	struct pg *p = pgd(d);
	if (!p->conn || p->broken || PQstatus(p->conn) != CONNECTION_OK) {
		p->qlen = 0;
		return;
	}
	/* COMMIT of a transaction that an error ended rolls it back: either way none stays open (a held
	 * snapshot holds back vacuum) */
	dbpg_send_simple(p, "COMMIT", P_IGNORE, "end a read");
	dbpg_drain(p);
}

#endif
