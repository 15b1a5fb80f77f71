#include "tlscert.h"

#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testproc.h"

int tc_make_cert(const char *dir, const char *name, const char *san, char *cert, size_t certlen, char *key,
		 size_t keylen)
{
	char log[512], ext[256];
	snprintf(cert, certlen, "%s/%s.pem", dir, name);
	snprintf(key, keylen, "%s/%s.key", dir, name);
	snprintf(log, sizeof(log), "%s/openssl.log", dir);
	snprintf(ext, sizeof(ext), "subjectAltName=%s", san);
	char *argv[] = {"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
			"-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=prof-test", "-addext", ext,
			NULL};
	pid_t pid = tp_spawn(argv, log);
	int status;
	if (pid < 0 || tp_wait(pid, 30000, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "openssl req failed for %s:\n", cert);
		tp_dump_file(log);
		return -1;
	}
	chmod(key, 0600);
	return 0;
}
