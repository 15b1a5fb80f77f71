/* `collector sessions`: one line (or JSON object) per session. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "report/text_safe.h"
#include "store/store_calib.h"

static const char sessions_usage[] = "usage: collector sessions --store PATH [--json] [--check full|quick|off]\n"
				     "  List the sessions (one agent process each) stored in PATH. CALIB: the session\n"
				     "  whose calibration the reports use (the latest of the same agent id, board and\n"
				     "  machine; the session itself when it was a calibration).\n" CLI_CHECK_HELP;

struct sessions_out {
	bool json;
	unsigned n;
	int64_t *calib; /* by session id: the calibration session of its profile (0: none) */
	size_t ncalib;
};

static int calib_cb(int64_t sid, int64_t cal, void *arg)
{
	struct sessions_out *o = arg;
	if (sid <= 0 || sid > 10000000)
		return 0;
	if ((size_t)sid >= o->ncalib) {
		size_t n = (size_t)sid * 2 + 16;
		int64_t *nc = realloc(o->calib, n * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		memset(nc + o->ncalib, 0, (n - o->ncalib) * sizeof(*nc));
		o->calib = nc;
		o->ncalib = n;
	}
	o->calib[sid] = cal;
	return 0;
}

static int64_t calib_of(const struct sessions_out *o, int64_t sid)
{
	return sid > 0 && (size_t)sid < o->ncalib ? o->calib[sid] : 0;
}

static int print_session(const struct store_session_row *r, void *arg)
{
	struct sessions_out *o = arg;
	if (o->json) {
		fputs(o->n ? ",\n " : "\n ", stdout);
		fputc('{', stdout);
		json_key(stdout, 1, "id");
		json_i64(stdout, r->id);
		const char *names[] = {"agent_id",	"board",    "kernel_release", "hostname", "machine",
				       "agent_version", "features", "target",	      "peer"};
		const char *vals[] = {r->agent_id, r->board,   r->kernel_release,
				      r->hostname, r->machine, r->agent_version,
				      r->features, r->target,  r->peer};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			json_key(stdout, 0, names[i]);
			json_string(stdout, vals[i]);
		}
		json_key(stdout, 0, "boot_id");
		json_u64(stdout, r->boot_id);
		json_key(stdout, 0, "first_seen");
		json_i64(stdout, r->first_seen);
		json_key(stdout, 0, "last_seen");
		json_i64(stdout, r->last_seen);
		json_key(stdout, 0, "connects");
		json_u64(stdout, r->connects);
		json_key(stdout, 0, "records");
		json_u64(stdout, r->records);
		json_key(stdout, 0, "wire_bytes");
		json_u64(stdout, r->wire_bytes);
		json_key(stdout, 0, "spool_dropped");
		json_u64(stdout, r->spool_dropped);
		json_key(stdout, 0, "samples");
		json_u64(stdout, r->samples);
		json_key(stdout, 0, "calibration_session");
		if (calib_of(o, r->id))
			json_i64(stdout, calib_of(o, r->id));
		else
			fputs("null", stdout);
		fputc('}', stdout);
	} else {
		char agent[64], board[64], kernel[64], target[256], first[32], last[32], cal[24] = "-";
		if (o->n == 0)
			printf("%-4s %-20s %-14s %-20s %-20s %-20s %9s %11s %9s %-5s %s\n", "ID", "AGENT", "BOARD",
			       "KERNEL", "FIRST_SEEN", "LAST_SEEN", "RECORDS", "WIRE_BYTES", "SAMPLES", "CALIB",
			       "TARGET");
		if (calib_of(o, r->id))
			snprintf(cal, sizeof(cal), "%lld", (long long)calib_of(o, r->id));
		printf(
		    "%-4lld %-20s %-14s %-20s %-20s %-20s %9llu %11llu %9llu %-5s %s\n", (long long)r->id,
		    text_safe_copy(agent, sizeof(agent), r->agent_id), text_safe_copy(board, sizeof(board), r->board),
		    text_safe_copy(kernel, sizeof(kernel), r->kernel_release),
		    cli_time(first, sizeof(first), r->first_seen), cli_time(last, sizeof(last), r->last_seen),
		    (unsigned long long)r->records, (unsigned long long)r->wire_bytes,
		    (unsigned long long)r->samples, cal, text_safe_copy(target, sizeof(target), r->target));
	}
	o->n++;
	return 0;
}

int cli_sessions(int argc, char **argv)
{
	static const struct option opts[] = {{"store", required_argument, NULL, 's'},
					     {"json", no_argument, NULL, 'j'},
					     {"help", no_argument, NULL, 'h'},
					     {"check", required_argument, NULL, 'K'},
					     {NULL, 0, NULL, 0}};
	const char *path = NULL;
	unsigned check = CLI_CHECK_DEFAULT;
	struct sessions_out o = {0};
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			path = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'K':
			if (cli_check_arg("sessions", optarg, &check))
				return 2;
			break;
		case 'h':
			fputs(sessions_usage, stdout);
			return 0;
		default:
			fputs(sessions_usage, stderr);
			return 2;
		}
	}
	if (optind != argc || !path) {
		fprintf(stderr, "collector sessions: %s\n%s",
			path ? "unexpected argument" : "--store PATH is required", sessions_usage);
		return 2;
	}
	struct store *st;
	if (cli_open_store(path, check, &st) < 0)
		return 1;
	int rc = store_calib_map(st, calib_cb, &o);
	if (rc < 0) {
		free(o.calib);
		store_close(st);
		return 1;
	}
	if (o.json)
		fputc('[', stdout);
	rc = store_list_sessions(st, print_session, &o);
	if (o.json)
		fputs(o.n ? "\n]\n" : "]\n", stdout);
	else if (rc == 0 && o.n == 0)
		fprintf(stderr, "no sessions in %s yet (agents appear after their first Hello)\n", path);
	store_close(st);
	free(o.calib);
	return rc < 0 ? 1 : 0;
}
