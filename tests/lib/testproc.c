#include "testproc.h"
#include "block_keys.h"
#include "map_rows.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *tp_bin(const char *rel, char *buf, size_t len)
{
	const char *dir = getenv("PROF_BIN_DIR");
	snprintf(buf, len, "%s/%s", dir ? dir : "build/host", rel);
	return buf;
}

int tp_tmpdir(char *buf, size_t len, const char *tag)
{
	snprintf(buf, len, "/tmp/prof-%s-XXXXXX", tag);
	return mkdtemp(buf) ? 0 : -errno;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

void tp_rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void tp_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

bool tp_wait_log(const char *path, const char *needle, int ms)
{
	for (int waited = 0;; waited += 20) {
		if (tp_file_count(path, needle) > 0)
			return true;
		if (waited >= ms)
			return false;
		tp_sleep_ms(20);
	}
}

bool tp_wait_sampling(const char *path, int ms)
{
	return tp_wait_log(path, " Hz with the ", ms);
}

pid_t tp_spawn(char *const argv[], const char *log_path)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (log_path) {
			int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
				close(fd);
			}
		}
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0) {
			dup2(nul, 0);
			close(nul);
		}
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

int tp_run(char *const argv[], const char *log, int ms)
{
	pid_t p = tp_spawn(argv, log);
	int status;
	if (p < 0 || tp_wait(p, ms, &status) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int tp_wait(pid_t pid, int ms, int *status)
{
	for (int waited = 0;; waited += 10) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0)
			return -errno;
		if (waited >= ms)
			return -ETIMEDOUT;
		tp_sleep_ms(10);
	}
}

int tp_stop(pid_t pid, int grace_ms)
{
	int status = -1;
	kill(pid, SIGTERM);
	if (tp_wait(pid, grace_ms, &status) == -ETIMEDOUT) {
		kill(pid, SIGKILL);
		tp_wait(pid, 5000, &status);
	}
	return status;
}

int tp_alive(pid_t pid)
{
	int status;
	return waitpid(pid, &status, WNOHANG) == 0;
}

pid_t tp_start_collector(const char *dir, const char *db, int port, int *bound_port, const char *log)
{
	return tp_start_collector_args(dir, db, port, bound_port, log, NULL);
}

int tp_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof(sa);
	int port = -1;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

long tp_peak_rss_kib(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long kib = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

pid_t tp_start_collector_args(const char *dir, const char *db, int port, int *bound_port, const char *log,
			      const char *const *extra)
{
	char bin[512], listen[64], portfile[512];
	tp_bin("collector", bin, sizeof(bin));
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	snprintf(portfile, sizeof(portfile), "%s/collector.port", dir);
	unlink(portfile);
	char *argv[32] = {bin, "--listen", listen, "--store", (char *)db, "--port-file", portfile};
	int argc = 7;
	for (int i = 0; extra && extra[i] && argc < 31; i++)
		argv[argc++] = (char *)extra[i];
	argv[argc] = NULL;
	pid_t pid = tp_spawn(argv, log);
	if (pid < 0)
		return pid;
	for (int i = 0; i < 1000; i++) { /* up to 10 s (sanitizer builds start slowly) */
		FILE *f = fopen(portfile, "r");
		if (f) {
			int p = 0;
			int ok = fscanf(f, "%d", &p) == 1 && p > 0;
			fclose(f);
			if (ok) {
				*bound_port = p;
				return pid;
			}
		}
		if (!tp_alive(pid))
			return -ECHILD;
		tp_sleep_ms(10);
	}
	tp_stop(pid, 1000);
	return -ETIMEDOUT;
}

int64_t tp_db_int(const char *db, const char *sql_fmt, ...)
{
	char sql[1024];
	va_list ap;
	va_start(ap, sql_fmt);
	vsnprintf(sql, sizeof(sql), sql_fmt, ap);
	va_end(ap);
	sqlite3 *h;
	int64_t v = -1;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(h);
		return -1;
	}
	sqlite3_busy_timeout(h, 5000);
	sqlite3_stmt *st;
	if (strstr(sql, "block_keys") && tp_block_keys(h) != SQLITE_OK) {
		fprintf(stderr, "tp_db_int: the sample blocks of %s: %s\n", db, sqlite3_errmsg(h));
	} else if (strstr(sql, "map_rows") && tp_map_rows(h) != SQLITE_OK) {
		fprintf(stderr, "tp_db_int: the mappings of %s: %s\n", db, sqlite3_errmsg(h));
	} else if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	} else {
		fprintf(stderr, "tp_db_int: %s: %s\n", sql, sqlite3_errmsg(h));
	}
	sqlite3_close(h);
	return v;
}

char *tp_top_first_row(char *out)
{
	char *hdr = out ? strstr(out, "function\n") : NULL;
	if (!hdr)
		return NULL;
	char *first = hdr + strlen("function\n");
	char *nl = strchr(first, '\n');
	if (nl)
		*nl = 0;
	return first;
}

bool tp_top_next(const char **cursor, struct tp_top_row *row)
{
	for (const char *p = *cursor; p && *p;) {
		const char *nl = strchr(p, '\n');
		double share;
		bool ok = sscanf(p, "%lf%% %ld %127s %255s", &share, &row->n, row->mod, row->fn) == 4;
		p = nl ? nl + 1 : NULL;
		*cursor = p;
		if (ok)
			return true;
	}
	return false;
}

long tp_top_samples(const char *out, const char *module, const char *fn)
{
	long sum = 0;
	struct tp_top_row r;
	for (const char *c = out; tp_top_next(&c, &r);)
		if ((!module || strcmp(r.mod, module) == 0) && (!fn || strcmp(r.fn, fn) == 0))
			sum += r.n;
	return sum;
}

char *tp_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);
	size_t n;
	while (s && (n = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			char *ns = realloc(s, cap * 2);
			if (!ns) {
				free(s);
				s = NULL;
				break;
			}
			s = ns;
			cap *= 2;
		}
	}
	fclose(f);
	if (s)
		s[len] = 0;
	return s;
}

int tp_file_count(const char *path, const char *needle)
{
	char *s = tp_slurp(path);
	if (!s)
		return -1;
	int count = 0;
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
		if (strstr(line, needle))
			count++;
	free(s);
	return count;
}

const char *tp_env_path(const struct tp_env *e, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", e->dir, name);
	return buf;
}

int tp_env_setup(struct tp_env *e, const char *tag, bool start_collector)
{
	memset(e, 0, sizeof(*e));
	e->collector = -1;
	if (tp_tmpdir(e->dir, sizeof(e->dir), tag) < 0) {
		fprintf(stderr, "cannot make a temp dir: %s\n", strerror(errno));
		return -1;
	}
	tp_env_path(e, "profile.db", e->db, sizeof(e->db));
	tp_env_path(e, "collector.log", e->clog, sizeof(e->clog));
	tp_env_path(e, "agent.log", e->alog, sizeof(e->alog));
	tp_env_path(e, "spool", e->spool, sizeof(e->spool));
	if (!start_collector)
		return 0;
	e->collector = tp_start_collector(e->dir, e->db, 0, &e->port, e->clog);
	if (e->collector < 0) {
		fprintf(stderr, "collector did not start: %s\n", strerror((int)-e->collector));
		tp_dump_file(e->clog);
		return -1;
	}
	snprintf(e->coll, sizeof(e->coll), "127.0.0.1:%d", e->port);
	return 0;
}

int tp_env_start_collector(struct tp_env *e, int port, const char *const *extra)
{
	int bound = 0;
	if (e->collector > 0 && tp_alive(e->collector)) { /* replaced: no test's collector outlives it */
		kill(e->collector, SIGCONT);
		tp_stop(e->collector, 5000);
	}
	e->collector = tp_start_collector_args(e->dir, e->db, port, &bound, e->clog, extra);
	if (e->collector <= 0 || (port && bound != port))
		return -1;
	e->port = bound;
	snprintf(e->coll, sizeof(e->coll), "127.0.0.1:%d", e->port);
	return 0;
}

int tp_env_new(void **state, size_t size, const char *tag, bool start_collector)
{
	struct tp_env *e = calloc(1, size > sizeof(*e) ? size : sizeof(*e));
	if (!e || tp_env_setup(e, tag, start_collector) < 0) {
		free(e);
		return -1;
	}
	*state = e;
	return 0;
}

int tp_env_free(void **state)
{
	tp_env_teardown(*state);
	free(*state);
	return 0;
}

int tp_env_start_collector_http(struct tp_env *e, int *http_port)
{
	*http_port = tp_free_port();
	char http[64];
	snprintf(http, sizeof(http), "127.0.0.1:%d", *http_port);
	const char *extra[] = {"--http", http, NULL};
	if (tp_env_start_collector(e, 0, extra) < 0) {
		tp_dump_file(e->clog);
		return -1;
	}
	return 0;
}

void tp_env_teardown(struct tp_env *e)
{
	for (int i = 0; i < 2; i++) {
		pid_t p = i ? e->collector : e->agent;
		if (p > 0) {
			kill(p, SIGCONT);
			if (tp_alive(p))
				tp_stop(p, 5000);
		}
	}
	if (getenv("PROF_KEEP_TMP"))
		fprintf(stderr, "kept %s\n", e->dir);
	else if (e->dir[0])
		tp_rm_rf(e->dir);
}

void tp_dump_file(const char *path)
{
	char *s = tp_slurp(path);
	if (s) {
		fprintf(stderr, "---- %s ----\n%s---- end ----\n", path, s);
		free(s);
	}
}

int tp_http_get(int port, const char *path, char **body)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct timeval tv = {.tv_sec = 30};
	*body = NULL;
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	char req[256];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap + 1);
	ssize_t got;
	while (buf && len < cap && (got = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)got;
	close(fd);
	if (!buf)
		return -1;
	buf[len] = '\0';
	int code = -1;
	if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
		code = -1;
	char *b = strstr(buf, "\r\n\r\n");
	*body = strdup(b ? b + 4 : "");
	free(buf);
	return code;
}
