/* SVG -> PNG via rsvg-convert; PNG IHDR reader (see svg_png.h). */
#include "svg_png.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "log.h"

extern char **environ;

int svg_to_png(const char *svg, const char *png)
{
	char *argv[] = {"rsvg-convert", "-o", (char *)png, (char *)svg, NULL};
	pid_t pid;
	int rc = posix_spawnp(&pid, "rsvg-convert", NULL, NULL, argv, environ);
	if (rc != 0) {
		log_error("cannot run rsvg-convert: %s: install it (apt-get install librsvg2-bin) or write an .svg",
			  strerror(rc));
		return -ENOENT;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		log_error("rsvg-convert %s failed (status %d)", svg, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -EIO;
	}
	return 0;
}

int png_size(const char *path, uint32_t *width, uint32_t *height)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	unsigned char h[24];
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	size_t n = fread(h, 1, sizeof(h), f);
	fclose(f);
	if (n != sizeof(h) || memcmp(h, sig, 8) != 0 || memcmp(h + 12, "IHDR", 4) != 0)
		return -EINVAL;
	*width = (uint32_t)h[16] << 24 | (uint32_t)h[17] << 16 | (uint32_t)h[18] << 8 | h[19];
	*height = (uint32_t)h[20] << 24 | (uint32_t)h[21] << 16 | (uint32_t)h[22] << 8 | h[23];
	return 0;
}
