#include "pgserver.h"

#include <errno.h>
#include <glob.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "generated/config.h"
#include "testproc.h"

#ifdef CONFIG_STORE_POSTGRESQL
#include <libpq-fe.h>

static int find_bindir(char *out, size_t len)
{
	glob_t g;
	if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0)
		return -ENOENT;
	snprintf(out, len, "%s", g.gl_pathv[g.gl_pathc - 1]);
	globfree(&g);
	char *slash = strrchr(out, '/');
	*slash = 0;
	return 0;
}

/* Run a shell command, as `postgres` when we are root. */
static int run_as(const char *user, const char *cmd)
{
	char full[2048];
	if (user)
		snprintf(full, sizeof(full), "runuser -u %s -- sh -c '%s' >/dev/null 2>&1", user, cmd);
	else
		snprintf(full, sizeof(full), "sh -c '%s' >/dev/null 2>&1", cmd);
	return system(full) == 0 ? 0 : -EIO;
}

static const char *pg_user(void)
{
	if (geteuid() != 0)
		return NULL;
	return getpwnam("postgres") ? "postgres" : "";
}

int pg_start(struct pgserver *pg, char *why, size_t whylen)
{
	memset(pg, 0, sizeof(*pg));
	if (find_bindir(pg->bindir, sizeof(pg->bindir)) < 0) {
		snprintf(why, whylen, "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): "
				      "apt-get install postgresql");
		return -ENOENT;
	}
	const char *user = pg_user();
	if (user && !*user) {
		snprintf(why, whylen, "running as root and there is no 'postgres' user to run the server as");
		return -EPERM;
	}
	if (tp_tmpdir(pg->dir, sizeof(pg->dir), "pg") < 0) {
		snprintf(why, whylen, "cannot create a temp dir");
		return -EIO;
	}
	chmod(pg->dir, 0755);
	char cmd[1536];
	if (user) {
		snprintf(cmd, sizeof(cmd), "chown %s %s", user, pg->dir);
		if (system(cmd) != 0) {
			snprintf(why, whylen, "cannot chown %s to %s", pg->dir, user);
			return -EPERM;
		}
	}
	snprintf(cmd, sizeof(cmd), "%s/initdb -D %s/data -A trust -U prof --no-sync -E UTF8", pg->bindir, pg->dir);
	if (run_as(user, cmd) < 0) {
		snprintf(why, whylen, "initdb failed (%s)", cmd);
		return -EIO;
	}
	for (int attempt = 0; attempt < 3 && !pg->running; attempt++) {
		pg->port = 20000 + (int)((unsigned)getpid() * 7u + (unsigned)attempt * 131u) % 30000;
		snprintf(cmd, sizeof(cmd),
			 "%s/pg_ctl -D %s/data -w -t 30 -l %s/log -o \"-p %d -k %s -c listen_addresses=127.0.0.1 "
			 "-c fsync=off -c synchronous_commit=off -c max_connections=50\" start",
			 pg->bindir, pg->dir, pg->dir, pg->port, pg->dir);
		pg->running = run_as(user, cmd) == 0;
	}
	if (!pg->running) {
		snprintf(why, whylen, "pg_ctl start failed (log in %s/log)", pg->dir);
		return -EIO;
	}
	return 0;
}

void pg_stop(struct pgserver *pg)
{
	if (pg->running) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "%s/pg_ctl -D %s/data -m immediate -w -t 30 stop", pg->bindir, pg->dir);
		const char *user = pg_user();
		run_as(user && *user ? user : NULL, cmd);
		pg->running = 0;
	}
	if (pg->dir[0] && !getenv("PROF_KEEP_TMP"))
		tp_rm_rf(pg->dir);
}

int pg_exec(const char *uri, const char *sql)
{
	PGconn *c = PQconnectdb(uri);
	int rc = -1;
	if (PQstatus(c) == CONNECTION_OK) {
		PGresult *r = PQexec(c, sql);
		rc = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK ? 0 : -1;
		if (rc < 0)
			fprintf(stderr, "pg_exec %s: %s", sql, PQerrorMessage(c));
		PQclear(r);
	}
	PQfinish(c);
	return rc;
}

int64_t pg_int(const char *uri, const char *sql)
{
	PGconn *c = PQconnectdb(uri);
	int64_t v = -1;
	if (PQstatus(c) == CONNECTION_OK) {
		PGresult *r = PQexec(c, sql);
		if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
			v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		else if (PQresultStatus(r) != PGRES_TUPLES_OK)
			fprintf(stderr, "pg_int %s: %s", sql, PQerrorMessage(c));
		PQclear(r);
	}
	PQfinish(c);
	return v;
}

int pg_new_db(struct pgserver *pg, const char *name, char *uri, size_t urilen)
{
	char admin[256], sql[256];
	snprintf(admin, sizeof(admin), "postgresql://prof@127.0.0.1:%d/postgres", pg->port);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
	if (pg_exec(admin, sql) < 0)
		return -EIO;
	snprintf(uri, urilen, "postgresql://prof@127.0.0.1:%d/%s", pg->port, name);
	return 0;
}

#else

int pg_start(struct pgserver *pg, char *why, size_t whylen)
{
	memset(pg, 0, sizeof(*pg));
	snprintf(why, whylen, "built without CONFIG_STORE_POSTGRESQL");
	return -ENOTSUP;
}
void pg_stop(struct pgserver *pg) { (void)pg; }
int pg_new_db(struct pgserver *pg, const char *name, char *uri, size_t urilen)
{
	(void)pg, (void)name, (void)uri, (void)urilen;
	return -ENOTSUP;
}
int64_t pg_int(const char *uri, const char *sql) { (void)uri, (void)sql; return -1; }
int pg_exec(const char *uri, const char *sql) { (void)uri, (void)sql; return -1; }

#endif
