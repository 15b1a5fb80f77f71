/* Spool scopes and their listing (spool_scope.h). */
#include "spool_scope.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "spool.h"

static void safe_append(char *buf, size_t len, size_t *n, const char *s)
{
	for (; *s && *n + 1 < len; s++) {
		char c = *s;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			  c == '-' || c == '_';
		buf[(*n)++] = ok ? c : '_';
	}
	buf[*n] = '\0';
}

int spool_scope_dir(char *buf, size_t len, const char *base, const char *agent_id, const char *collector)
{
	char host[256] = "agent";
	if (!agent_id || !*agent_id) {
		if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
			snprintf(host, sizeof(host), "agent");
		host[sizeof(host) - 1] = '\0';
		agent_id = host;
	}
	int k = snprintf(buf, len, "%s/", base);
	if (k < 0 || (size_t)k >= len)
		return -ENAMETOOLONG;
	size_t n = (size_t)k;
	safe_append(buf, len, &n, agent_id);
	if (n + 1 < len) {
		buf[n++] = '@';
		buf[n] = '\0';
	}
	safe_append(buf, len, &n, collector);
	return n + 1 < len ? 0 : -ENAMETOOLONG;
}

/* Bytes and segment files of one session directory; newest modification time. */
static void dir_usage(const char *path, uint64_t *bytes, unsigned *segs, time_t *newest)
{
	*bytes = 0;
	*segs = 0;
	*newest = 0;
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p[PATH_MAX];
		struct stat st;
		if (snprintf(p, sizeof(p), "%s/%s", path, de->d_name) >= (int)sizeof(p) || stat(p, &st) < 0)
			continue;
		*bytes += (uint64_t)st.st_size;
		*segs += strstr(de->d_name, ".spl") != NULL;
		if (st.st_mtime > *newest)
			*newest = st.st_mtime;
	}
	closedir(d);
}

static int remove_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char p[PATH_MAX];
		if (snprintf(p, sizeof(p), "%s/%s", path, de->d_name) >= (int)sizeof(p) || unlink(p) < 0)
			rc = -errno;
	}
	closedir(d);
	if (rmdir(path) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int spool_scope_list(const char *dir, FILE *out)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	struct dirent *de;
	int n = 0;
	time_t now = time(NULL);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p[PATH_MAX];
		struct stat st;
		if (snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p) || stat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			uint64_t bytes;
			unsigned segs;
			time_t newest;
			dir_usage(p, &bytes, &segs, &newest);
			static const char *const states[] = {[SPOOL_LIVE] = "running", [SPOOL_ORPHAN] = "left",
							     [SPOOL_NO_HELLO] = "old"};
			if (n++ == 0)
				fprintf(out, "%-40s %-8s %8s %12s %10s\n", "session (agent-bootid)", "state", "segments",
					"bytes", "age s");
			fprintf(out, "%-40s %-8s %8u %12llu %10lld\n", de->d_name, states[spool_probe(p)], segs,
				(unsigned long long)bytes, (long long)(newest ? now - newest : 0));
		} else if (strcmp(de->d_name, "opencl-dropped.log") == 0) {
			fprintf(out, "opencl-dropped.log: OpenCL drop counts a layer could not tell its agent (%lld bytes)\n",
				(long long)st.st_size);
		}
	}
	closedir(d);
	if (n == 0)
		fprintf(out, "no spooled sessions in %s\n", dir);
	else
		fprintf(out, "(running: its agent still runs; left: a run ended with these records unacknowledged, "
			     "the next run of the same agent id and collector sends them, or `agent spool send`; "
			     "old: from an agent that saved no Hello, cannot be sent; `agent spool drop` removes "
			     "sessions)\n");
	return n;
}

int spool_scope_drop(const char *dir, const char *name, FILE *out)
{
	if (name && (strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0))
		return -EINVAL;
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	struct dirent *de;
	int n = 0, rc = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (name && strcmp(de->d_name, name) != 0))
			continue;
		char p[PATH_MAX];
		struct stat st;
		if (snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p) || lstat(p, &st) < 0)
			continue;
		int r = 0;
		if (S_ISDIR(st.st_mode))
			r = remove_dir(p);
		else if (!name && strcmp(de->d_name, "opencl-dropped.log") == 0)
			r = unlink(p) < 0 ? -errno : 0;
		else
			continue;
		if (r < 0) {
			fprintf(out, "cannot remove %s: %s\n", p, strerror(-r));
			rc = r;
			continue;
		}
		fprintf(out, "removed %s\n", p);
		n++;
	}
	closedir(d);
	if (name && n == 0 && rc == 0)
		return -ENOENT;
	return rc < 0 ? rc : n;
}
