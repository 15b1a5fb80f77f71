#include "fleet.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testproc.h"

pid_t fl_start_agent(int port, const char *spool, const char *id, const char *interval_ms, const char *secs,
		     const char *token_file, const char *log, const char *const *extra)
{
	char agent[512], coll[64];
	tp_bin("agent", agent, sizeof(agent));
	snprintf(coll, sizeof(coll), "127.0.0.1:%d", port);
	char *argv[40] = {agent, "--collector", coll, "--spool", (char *)spool, "--agent-id", (char *)id,
			  "-I", (char *)interval_ms, "--flush-timeout", "20"};
	int n = 11;
	if (token_file) {
		argv[n++] = "--token-file";
		argv[n++] = (char *)token_file;
	}
	for (int i = 0; extra && extra[i] && n < 34; i++)
		argv[n++] = (char *)extra[i];
	argv[n++] = "--";
	argv[n++] = "/bin/sleep";
	argv[n++] = (char *)secs;
	argv[n] = NULL;
	return tp_spawn(argv, log);
}

int fl_wait_exit(pid_t pid, int ms)
{
	int status;
	if (tp_wait(pid, ms, &status) < 0) {
		kill(pid, SIGKILL);
		tp_wait(pid, 5000, &status);
		return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int64_t fl_created(const char *log)
{
	char *s = tp_slurp(log);
	if (!s)
		return -1;
	long long n = -1;
	char *p = strstr(s, " records: ");
	if (p)
		sscanf(p, " records: %lld created", &n);
	free(s);
	return n;
}

int64_t fl_records(const char *db, const char *id, int *complete)
{
	const char *q = "FROM records r JOIN sessions s ON s.id = r.session_id WHERE s.agent_id = '%s'";
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) %s", q);
	int64_t n = tp_db_int(db, sql, id);
	snprintf(sql, sizeof(sql), "SELECT COUNT(DISTINCT r.seq) %s", q);
	int64_t d = tp_db_int(db, sql, id);
	snprintf(sql, sizeof(sql), "SELECT MIN(r.seq) %s", q);
	int64_t lo = tp_db_int(db, sql, id);
	snprintf(sql, sizeof(sql), "SELECT MAX(r.seq) %s", q);
	int64_t hi = tp_db_int(db, sql, id);
	*complete = n > 0 && d == n && lo == 1 && hi == n;
	return n;
}

int fl_write_token(const char *path, int variant)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	const char *tok = variant ? "another-secret-token-0123456789\n" : "fleet-test-token-abcdefghijklmnop\n";
	ssize_t w = write(fd, tok, strlen(tok));
	close(fd);
	return w == (ssize_t)strlen(tok) ? 0 : -EIO;
}
