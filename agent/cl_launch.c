/* OpenCL capture set-up for a command (cl_launch.h). */
#include "generated/config.h"

#ifdef CONFIG_AGENT_OPENCL
#include "cl_launch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/wait.h>

/* The multiarch triplet of this build's libraries (Debian's /usr/lib/<triplet>). */
#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#elif defined(__arm__)
#define MULTIARCH "arm-linux-gnueabihf"
#elif defined(__riscv)
#define MULTIARCH "riscv64-linux-gnu"
#else
#define MULTIARCH "."
#endif

#include "cl_layer/cl_msg.h"
#include "cl_layer/cl_ring.h"
#include "cl_state_file.h"
#include "log.h"
#include "signame.h"
#include "target_end.h"

int cl_launch_parse_mode(const char *s, enum cl_launch_mode *out)
{
	if (strcmp(s, "layer") == 0)
		*out = CL_MODE_LAYER;
	else if (strcmp(s, "preload") == 0)
		*out = CL_MODE_PRELOAD;
	else if (strcmp(s, "auto") == 0)
		*out = CL_MODE_AUTO;
	else
		return -EINVAL;
	return 0;
}

/* The capture library: DIR/name, checked readable. */
static int find_library(const char *libdir, const char *name, char *out, size_t len)
{
	char dirs[3][PATH_MAX + 32];
	size_t nd = 0;
	if (libdir)
		snprintf(dirs[nd++], sizeof(dirs[0]), "%s", libdir);
	else if (getenv("PROF_CL_LIB_DIR"))
		snprintf(dirs[nd++], sizeof(dirs[0]), "%s", getenv("PROF_CL_LIB_DIR"));
	else {
		char exe[PATH_MAX - 64];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = 0;
			char *slash = strrchr(exe, '/');
			if (slash)
				*slash = 0;
			snprintf(dirs[nd++], sizeof(dirs[0]), "%s/lib", exe);
			snprintf(dirs[nd++], sizeof(dirs[0]), "%s/../lib/profcl", exe);
		}
	}
	for (size_t i = 0; i < nd; i++) {
		char path[PATH_MAX + 64];
		if (snprintf(path, sizeof(path), "%s/%s", dirs[i], name) >= (int)sizeof(path))
			continue;
		if (access(path, R_OK) == 0 && realpath(path, out) && strlen(out) < len)
			return 0;
	}
	log_error("cannot find %s (looked in %s%s%s): build it with `make`, or pass --cl-lib DIR", name,
		  nd ? dirs[0] : "nothing", nd > 1 ? " and " : "", nd > 1 ? dirs[1] : "");
	return -ENOENT;
}

/* NAME=ours[:what the environment already has] */
static char *env_list(const char *name, const char *ours)
{
	const char *old = getenv(name);
	size_t len = strlen(name) + strlen(ours) + (old ? strlen(old) + 1 : 0) + 2;
	char *s = malloc(len);
	if (s)
		snprintf(s, len, "%s=%s%s%s", name, ours, old && *old ? ":" : "", old && *old ? old : "");
	return s;
}

static char *env_pair(const char *name, const char *value)
{
	size_t len = strlen(name) + strlen(value) + 2;
	char *s = malloc(len);
	if (s)
		snprintf(s, len, "%s=%s", name, value);
	return s;
}

/* Does the file contain needle? (read in 1 MiB blocks, overlapping by the needle's length) */
static bool file_contains(const char *path, const char *needle)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	static char buf[(1 << 20) + 64];
	size_t n = strlen(needle), have = 0;
	bool found = false;
	for (;;) {
		size_t got = fread(buf + have, 1, sizeof(buf) - have - 1, f);
		if (got == 0)
			break;
		have += got;
		if (memmem(buf, have, needle, n)) {
			found = true;
			break;
		}
		if (have >= n) { /* keep the tail: a needle may straddle two blocks */
			memmove(buf, buf + have - (n - 1), n - 1);
			have = n - 1;
		}
	}
	fclose(f);
	return found;
}

/* The libOpenCL a program would load: LD_LIBRARY_PATH, then the usual library directories
 * (the multiarch ones, Android's vendor and system ones). */
static bool find_libopencl(char *out, size_t len)
{
	static const char *const names[] = {"libOpenCL.so.1", "libOpenCL.so"};
	static const char *const dirs[] = {"/usr/local/lib", "/usr/lib/" MULTIARCH, "/lib/" MULTIARCH, "/usr/lib64",
					   "/usr/lib", "/lib64", "/lib", "/vendor/lib64", "/vendor/lib",
					   "/system/vendor/lib64", "/system/lib64", "/system/vendor/lib", "/system/lib"};
	char llp[4096];
	snprintf(llp, sizeof(llp), "%s", getenv("LD_LIBRARY_PATH") ? getenv("LD_LIBRARY_PATH") : "");
	for (int pass = 0; pass < 2; pass++) {
		char *save = NULL;
		for (char *d = pass == 0 ? strtok_r(llp, ":", &save) : NULL; pass == 0 && d; d = strtok_r(NULL, ":", &save))
			for (size_t i = 0; i < 2; i++)
				if (snprintf(out, len, "%s/%s", d, names[i]) < (int)len && access(out, R_OK) == 0)
					return true;
		for (size_t k = 0; pass == 1 && k < sizeof(dirs) / sizeof(dirs[0]); k++)
			for (size_t i = 0; i < 2; i++)
				if (snprintf(out, len, "%s/%s", dirs[k], names[i]) < (int)len && access(out, R_OK) == 0)
					return true;
	}
	return false;
}

/* --mode auto: layer mode when the program's libOpenCL is an ICD loader that reads
 * OPENCL_LAYERS (ocl-icd >= 2.3, the Khronos loader), else the preload shim (a vendor
 * library the program links directly, Android; PROF_CL_LIBRARY names one). */
static enum cl_launch_mode auto_mode(void)
{
	char lib[PATH_MAX];
	if (getenv("PROF_CL_LIBRARY") && *getenv("PROF_CL_LIBRARY")) {
		log_info("opencl: --mode auto: PROF_CL_LIBRARY names the vendor library: preload mode");
		return CL_MODE_PRELOAD;
	}
	if (!find_libopencl(lib, sizeof(lib))) {
		log_info("opencl: --mode auto: no libOpenCL in the library path: preload mode (for a program that "
			 "brings its own)");
		return CL_MODE_PRELOAD;
	}
	if (file_contains(lib, "OPENCL_LAYERS")) {
		log_info("opencl: --mode auto: %s is an ICD loader with layers: layer mode", lib);
		return CL_MODE_LAYER;
	}
	log_info("opencl: --mode auto: %s is not an ICD loader with layers (a vendor library?): preload mode", lib);
	return CL_MODE_PRELOAD;
}

int cl_launch_open(struct cl_launch *cl, enum cl_launch_mode mode, const char *libdir, const char *spool_dir)
{
	char err[1536];
	char droppath[PATH_MAX + 32];
	memset(cl, 0, sizeof(*cl));
	snprintf(droppath, sizeof(droppath), "%s/opencl-dropped.log", spool_dir);
	cl_receiver_report_dropfile(droppath);
	if (mode == CL_MODE_AUTO)
		mode = auto_mode();
	cl->mode = mode;
	if (find_library(libdir, mode == CL_MODE_LAYER ? "libprofcl_layer.so" : "libprofcl_preload.so", cl->lib,
			 sizeof(cl->lib)) < 0)
		return -ENOENT;
	if (cl_receiver_open(&cl->rx, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -EIO;
	}
	cl->env[0] = mode == CL_MODE_LAYER ? env_list("OPENCL_LAYERS", cl->lib) : env_list("LD_PRELOAD", cl->lib);
	cl->env[1] = env_pair(PCL_ENV_SOCKET, cl_receiver_address(cl->rx));
	cl->env[2] = env_pair(PCL_ENV_DROPFILE, droppath);
	/* The state file: in $TMPDIR, /tmp, or the spool (which may not exist yet). */
	const char *dirs[] = {getenv("TMPDIR"), "/tmp", spool_dir};
	int rc = -ENOENT;
	for (size_t i = 0; i < 3 && rc < 0; i++)
		if (dirs[i] && *dirs[i])
			rc = cl_state_file_create(dirs[i], cl->state, sizeof(cl->state));
	if (rc < 0) {
		log_warn("opencl: cannot create the library's state file (%s): a crash will not say whether the "
			 "library was inside a call",
			 strerror(-rc));
		cl->state[0] = 0;
	}
	cl->env[3] = cl->state[0] ? env_pair(PCL_ENV_STATE, cl->state) : NULL;
	const char *rings = cl_receiver_rings(cl->rx);
	cl->env[cl->env[3] ? 4 : 3] = rings[0] ? env_pair(PCL_ENV_RINGS, rings) : NULL;
	if (!cl->env[0] || !cl->env[1] || !cl->env[2] || (cl->state[0] && !cl->env[3]) ||
	    (rings[0] && !cl->env[cl->env[3] ? 4 : 3])) {
		log_error("out of memory");
		cl_launch_close(cl);
		return -ENOMEM;
	}
	log_info("opencl: %s mode, %s", mode == CL_MODE_LAYER ? "layer" : "preload", cl->lib);
	return 0;
}

void cl_launch_close(struct cl_launch *cl)
{
	cl_receiver_close(cl->rx);
	cl->rx = NULL;
	for (size_t i = 0; i < 5; i++) {
		free(cl->env[i]);
		cl->env[i] = NULL;
	}
	if (cl->state[0])
		unlink(cl->state);
	cl->state[0] = 0;
}

void cl_launch_outcome(const struct cl_launch *cl, struct target_end *e)
{
	if (WIFSIGNALED(e->status)) {
		e->capture_inside = cl->state[0] ? (int)cl_state_file_inside(cl->state, e->pid, e->capture_detail,
									     sizeof(e->capture_detail))
						 : CL_INSIDE_UNKNOWN;
		if (e->capture_inside == CL_INSIDE_UNKNOWN && !e->capture_detail[0])
			snprintf(e->capture_detail, sizeof(e->capture_detail),
				 "cannot tell whether it was inside a call (no state file, or threads without a slot)");
	}
	char why[384];
	cl_receiver_why_none(cl->rx, cl->mode == CL_MODE_LAYER, why, sizeof(why));
	if (why[0] && WIFSIGNALED(e->status))
		snprintf(e->opencl_note, sizeof(e->opencl_note),
			 "the program died by %s before any command reached the agent (the library sends what "
			 "completed every few ms); before that: %s",
			 sig_name(WTERMSIG(e->status)), why);
	else if (why[0])
		snprintf(e->opencl_note, sizeof(e->opencl_note), "%s", why);
	else if (cl_receiver_untimed(cl->rx))
		snprintf(e->opencl_note, sizeof(e->opencl_note),
			 "%llu command(s) were enqueued but never timed: their process ended (killed or aborted) before "
			 "the capture library saw them complete",
			 (unsigned long long)cl_receiver_untimed(cl->rx));
	else
		e->opencl_note[0] = 0;
}
#endif
