/* The warning for an output file named with another format's extension (cli.h). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "log.h"

bool cli_out_ext_check(const char *cmd, const char *path, const char *written_as, const char *const *exts)
{
	if (strcmp(path, "-") == 0)
		return true;
	size_t n = strlen(path);
	char want[160] = "";
	size_t w = 0;
	for (size_t i = 0; exts[i]; i++) {
		size_t k = strlen(exts[i]);
		if (n > k && strcmp(path + n - k, exts[i]) == 0)
			return true;
		w += (size_t)snprintf(want + w, w < sizeof(want) ? sizeof(want) - w : 0, "%s%s",
				      i == 0 ? "" : exts[i + 1] ? ", " : " or ", exts[i]);
		if (w >= sizeof(want))
			w = sizeof(want) - 1;
	}
	log_warn("%s: %s is written as %s, but its name does not end in %s (the format follows the name)", cmd,
		 path, written_as, want);
	return false;
}
