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
#include "report/sessions_json.h"

static const char sessions_usage[] = "usage: collector sessions --store PATH [--json] [--check full|quick|off]\n"
				     "  List the sessions (one agent process each) stored in PATH. CALIB: the session\n"
				     "  whose calibration the reports use (the latest of the same agent id, board and\n"
				     "  machine; the session itself when it was a calibration). SAMPLES: counter samples plus CPU\n"
				     "  samples. --json: {\"sessions\":[...]}, the shape of the live pages' /sessions.json.\n" CLI_CHECK_HELP;

struct sessions_out {
	bool json;
	unsigned n;
	struct sessions_json j; /* the calibration map; the JSON writer when json */
};

static int print_session(const struct store_session_row *r, void *arg)
{
	struct sessions_out *o = arg;
	if (o->json) {
		sessions_json_row(&o->j, r);
	} else {
		char agent[64], board[64], kernel[64], target[256], first[32], last[32], cal[24] = "-";
		if (o->n == 0)
			printf("%-4s %-20s %-14s %-20s %-20s %-20s %9s %11s %9s %-5s %s\n", "ID", "AGENT", "BOARD",
			       "KERNEL", "FIRST_SEEN", "LAST_SEEN", "RECORDS", "WIRE_BYTES", "SAMPLES", "CALIB",
			       "TARGET");
		if (sessions_json_calib(&o->j, r->id))
			snprintf(cal, sizeof(cal), "%lld", (long long)sessions_json_calib(&o->j, r->id));
		char samples[24] = "?"; /* unreadable in a damaged store (--check off) */
		if (!r->counts_unreadable)
			snprintf(samples, sizeof(samples), "%llu", (unsigned long long)r->samples);
		printf(
		    "%-4lld %-20s %-14s %-20s %-20s %-20s %9llu %11llu %9s %-5s %s\n", (long long)r->id,
		    text_safe_copy(agent, sizeof(agent), r->agent_id), text_safe_copy(board, sizeof(board), r->board),
		    text_safe_copy(kernel, sizeof(kernel), r->kernel_release),
		    cli_time(first, sizeof(first), r->first_seen), cli_time(last, sizeof(last), r->last_seen),
		    (unsigned long long)r->records, (unsigned long long)r->wire_bytes,
		    samples, cal, text_safe_copy(target, sizeof(target), r->target));
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
	int rc = sessions_json_begin(st, o.json ? stdout : NULL, &o.j);
	if (rc < 0) {
		store_close(st);
		return 1;
	}
	rc = store_list_sessions(st, print_session, &o);
	sessions_json_end(&o.j);
	if (!o.json && rc == 0 && o.n == 0)
		fprintf(stderr, "no sessions in %s yet (agents appear after their first Hello)\n", path);
	store_close(st);
	return rc < 0 ? 1 : 0;
}
