/* GPGPU-sim's own init code as a test oracle: ../shared/tools/gpgpusim-init/
 * (gsim_v3 = 3.2.2 as released, gsim_v4 = 4.0; README there) run on a
 * written gpgpusim.config, from the config's folder so that its
 * -inter_config_file resolves. */
#ifndef TESTS_LIB_GSIM_H
#define TESTS_LIB_GSIM_H

#include <stddef.h>

/* The tool for version (3 or 4): $PROF_GSIM_DIR, else
 * $PROF_SRC_DIR/../shared/tools/gpgpusim-init. Returns 0 with its path in
 * path, or -1 with why it is not there in path (a skip reason). */
int gsim_tool(int version, char *path, size_t len);

/* Run the tool on dir/cfg_name. Returns the number of problems (lines with
 * FAILED, plus 1 when the option parser did not accept the file, e.g. an
 * unknown option, or the tool did not exit 0), or -1 if the tool is absent
 * or could not run (why says so). out gets the tool's output (may be NULL). */
int gsim_run(int version, const char *dir, const char *cfg_name, char *out, size_t outlen, char *why,
	     size_t whylen);

#endif
