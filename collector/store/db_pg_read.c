/* PostgreSQL engine: a read command's one snapshot (#40 w46b, db_read_begin). Autocommit gives
 * every statement its own snapshot: a query that reads a session's key dictionary and then its
 * blocks could meet a block committed in between, referring to ids past the dictionary read
 * (review r7 #3). A REPEATABLE READ READ ONLY transaction gives all of a request's statements
 * the snapshot of its first one; it takes no lock a writer waits for. */
#include "generated/config.h"

#ifdef CONFIG_STORE_POSTGRESQL

#include "db_pg_priv.h"
#include "log.h"

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
	if (rc < 0)
		return rc;
	p->read_tx = true;
	return 1;
}

/* Before a statement of an open read (send_stmt): a statement that failed in it left the transaction
 * unable to run any other ("current transaction is aborted", 25P02), and the callers that tolerate a
 * failure (a kernel table not read, a page's CPU list left out: review r9 F1) go on reading. So the
 * failed transaction is ended and a new snapshot begun: the rest of the request reads as it did before
 * there was a read transaction, from a later state of the store. The state is known only once the
 * pipeline has run (an error is reported when it has). */
int dbpg_read_mend(struct pg *p)
{
	if (!p->read_tx || !p->conn || p->broken || PQtransactionStatus(p->conn) != PQTRANS_INERROR)
		return 0;
	log_debug("store %s: a statement failed in a read; its snapshot renewed", p->base.name);
	int rc = dbpg_send_simple(p, "ROLLBACK", P_CMD, "end a failed read");
	if (rc == 0)
		rc = dbpg_drain(p); /* the BEGIN first in its pipeline segment, as in dbpg_read_begin */
	if (rc == 0)
		rc = dbpg_send_simple(p, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", P_CMD, "begin a read");
	return rc;
}

void dbpg_read_end(struct db *d)
{
	struct pg *p = pgd(d);
	p->read_tx = false;
	if (!p->conn || p->broken || PQstatus(p->conn) != CONNECTION_OK) {
		p->qlen = 0;
		return;
	}
	/* COMMIT of a transaction that an error ended rolls it back: either way none stays open (a held
	 * snapshot holds back vacuum). In a pipeline segment of its own: after a failed statement the server
	 * skips the rest of its segment, and a COMMIT skipped so left the transaction open and failed, each
	 * later statement on the connection failing with 25P02 (review r12 F1) */
	dbpg_drain(p);
	dbpg_send_simple(p, "COMMIT", P_IGNORE, "end a read");
	dbpg_drain(p);
}

#endif
