/* A Debian program that moves images (issue #41): ffmpeg's
 * `hwupload,avgblur_opencl,hwdownload` chain on PoCL (FFmpeg 5.1
 * libavutil/hwcontext_opencl.c: opencl_transfer_data_to / _from enqueue one
 * clEnqueueWriteImage / clEnqueueReadImage per plane and frame), plainly and
 * under `agent run` in layer, preload and auto mode. ffmpeg's own output (a
 * CRC per frame, `-f framecrc`) is the assertion that nothing changed, and
 * its frame count the oracle: the session must hold one image write and one
 * image read of 320x240 RGBA (307200 bytes) per frame at least, with device
 * times, and the report must name them. Skipped with the reason when ffmpeg
 * is not installed or has no working OpenCL device here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testproc.h"
#include "tp_cl.h"

static const char *skip_why;

struct env {
	struct tp_env t;
};

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct env), "clffmpeg", !skip_why);
}

static const char *const ffmpeg_args[] = {
	"/usr/bin/ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-init_hw_device", "opencl=ocl",
	"-filter_hw_device", "ocl", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "2", "-vf",
	"format=rgba,hwupload,avgblur_opencl=sizeX=3,hwdownload,format=rgba", "-f", "framecrc", "-", NULL};

/* ffmpeg plainly (mode NULL) or under agent run --mode MODE; its stdout in out; the wait status. */
static int run_ffmpeg(struct env *e, const char *mode, const char *out, const char *log)
{
	static char agent[512], script[700];
	tp_bin("agent", agent, sizeof(agent));
	snprintf(script, sizeof(script), "exec \"$@\" >'%s'", out);
	char *argv[48];
	size_t n = 0;
	if (mode) {
		const char *pre[] = {agent, "run", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id", mode,
				     "--mode", mode, "--"};
		for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			argv[n++] = (char *)pre[i];
	}
	const char *sh[] = {"/bin/sh", "-c", script, "sh"};
	for (size_t i = 0; i < 4; i++)
		argv[n++] = (char *)sh[i];
	for (size_t i = 0; ffmpeg_args[i]; i++)
		argv[n++] = (char *)ffmpeg_args[i];
	argv[n] = NULL;
	pid_t p = tp_spawn(argv, log);
	if (p < 0)
		return -1;
	int status = -1;
	if (tp_wait(p, 180000, &status) < 0) {
		tp_stop(p, 3000);
		return -1;
	}
	return status;
}

static int group_setup(void **state)
{
	(void)state;
	if (access(ffmpeg_args[0], X_OK) != 0) {
		skip_why = "ffmpeg is not installed (scripts/deps.sh installs it)";
		return 0;
	}
	struct env e0 = {0};
	char out[] = "/tmp/prof-clffmpeg-probe.XXXXXX";
	int fd = mkstemp(out);
	if (fd >= 0)
		close(fd);
	int st = fd >= 0 ? run_ffmpeg(&e0, NULL, out, "/dev/null") : -1;
	unlink(out);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		skip_why = "ffmpeg's OpenCL filters do not run here without the profiler (no OpenCL device?)";
	return 0;
}

static void test_opencl_ffmpeg_image_transfers_in_report(void **state)
{
	if (skip_why) {
		fprintf(stderr, "skipped: %s\n", skip_why);
		skip();
	}
	struct env *e = *state;
	char plain[400], coll[512], cmd[2048], rep[400];
	snprintf(plain, sizeof(plain), "%s/plain.crc", e->t.dir);
	int st = run_ffmpeg(e, NULL, plain, e->t.alog);
	assert_true(st >= 0 && WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	char *want = tp_slurp(plain);
	assert_non_null(want);
	long frames = 0;
	for (const char *l = want; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		frames += *l != '#' && *l != '\n';
	fprintf(stderr, "ffmpeg: %ld frames\n", frames);
	assert_true(frames >= 25);
	tp_bin("collector", coll, sizeof(coll));
	static const char *const modes[] = {"layer", "preload", "auto"};
	for (size_t m = 0; m < 3; m++) {
		char out[400];
		snprintf(out, sizeof(out), "%s/%s.crc", e->t.dir, modes[m]);
		st = run_ffmpeg(e, modes[m], out, e->t.alog);
		assert_true(st >= 0 && WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
		char *got = tp_slurp(out);
		assert_non_null(got);
		if (strcmp(want, got) != 0)
			tp_dump_file(e->t.alog);
		assert_string_equal(want, got); /* every frame's CRC as without the profiler */
		free(got);
		int64_t sid = tp_db_int(e->t.db, "SELECT MAX(id) FROM sessions WHERE agent_id='%s'", modes[m]);
		assert_true(sid > 0);
		int64_t writes = tp_cl_int(e->t.db,
					   "SELECT COUNT(*) FROM cl_commands WHERE session_id=%lld AND type=%d AND"
					   " bytes=307200 AND start_ns > 0 AND end_ns >= start_ns",
					   (long long)sid, 0x11F7),
			reads = tp_cl_int(e->t.db,
					  "SELECT COUNT(*) FROM cl_commands WHERE session_id=%lld AND type=%d AND"
					  " bytes=307200 AND start_ns > 0 AND end_ns >= start_ns",
					  (long long)sid, 0x11F6);
		fprintf(stderr, "%s: %lld image writes, %lld image reads of 307200 bytes for %ld frames\n", modes[m],
			(long long)writes, (long long)reads, frames);
		assert_true(writes >= frames);
		assert_true(reads >= frames);
		snprintf(rep, sizeof(rep), "%s/%s.report", e->t.dir, modes[m]);
		snprintf(cmd, sizeof(cmd), "%s report --store %s --session %lld --opencl > %s 2>&1", coll, e->t.db,
			 (long long)sid, rep);
		assert_int_equal(system(cmd), 0);
		assert_true(tp_file_count(rep, "write image") >= 1);
		assert_true(tp_file_count(rep, "read image") >= 1);
	}
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_opencl_ffmpeg_image_transfers_in_report, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
