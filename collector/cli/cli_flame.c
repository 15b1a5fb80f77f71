/* collector flame [filters] -o FILE.html|.svg   and
 * collector diff A B [filters] [-o FILE.html|.svg] [--json]
 * Renderers over the query model (query.h): the stacks a filter selects become
 * a flame tree (views/flame_tree.h), drawn as an interactive HTML page or a
 * static SVG (views/flame.h). diff: A and B are each a --session N or a
 * --since/--until range; the other filters apply to both; the differential
 * flame graph goes to -o, the top table of gains and losses to stdout. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log.h"
#include "query/query.h"
#include "report/text_safe.h"
#include "views/flame.h"
#include "views/func_stats.h"
#include "views/offcpu_flame.h"
#include "views/stacks_query.h"

static const char flame_usage[] =
	"usage: collector flame --store PATH [filters] -o FILE.html|FILE.svg [--title T] [--no-process] [--offcpu]\n"
	"  -o FILE       .html: interactive flame graph (click to zoom, search, hover, callers/callees),\n"
	"                self-contained; .svg: static icicle\n"
	"  --no-process  no first level of process names\n"
	"  --offcpu      wall-clock graph in ms: each thread's time off the CPU ([off-CPU]) and on it (its\n"
	"                sampled functions), from the bpf back end's sched_switch accounting\n" QUERY_OPTS_HELP CLI_CHECK_HELP;

static const char diff_usage[] =
	"usage: collector diff --store PATH A B [filters] [-o FILE.html|FILE.svg] [--json] [--limit N]\n"
	"  A, B: each a --session N or a --since T [--until T] range, A first; e.g.\n"
	"        --session 3 --session 4   or   --since 20m --until 10m --since 10m\n"
	"  the other filters apply to both; stdout: the functions whose share of samples grew and\n"
	"  shrank most; -o: the differential flame graph (widths B, colour the change)\n" QUERY_OPTS_HELP
		CLI_CHECK_HELP;

enum { OPT_TITLE = 0x5200, OPT_NOPROC, OPT_CHECK, OPT_STORE, OPT_JSON, OPT_LIMIT, OPT_OFFCPU };

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* The wall-clock stacks of --offcpu (views/offcpu_flame.h). */
static int load_offcpu(const char *path, unsigned check, const struct query_opts *qo, struct stack_set *set)
{
	struct store *st;
	if (cli_open_store(path, check, &st) < 0)
		return -EIO;
	int rc = offcpu_flame_set(st, qo, set);
	if (rc < 0)
		log_error("off-CPU times: %s", strerror(-rc));
	store_close(st);
	return rc;
}

static int load(const char *path, unsigned check, struct query_opts *qo, struct stack_set *set, uint64_t *nsess)
{
	struct store *st;
	if (cli_open_store(path, check, &st) < 0)
		return -EIO;
	struct query_result *r = NULL;
	int rc = query_run(st, qo, &r);
	if (rc < 0)
		log_error("query: %s", strerror(-rc));
	else
		rc = stack_set_from_query(r, set);
	if (nsess && r)
		*nsess = r->nsessions;
	query_result_free(r);
	store_close(st);
	return rc;
}

static int write_flame(const char *out, const struct flame_tree *t, const struct flame_render *fr)
{
	FILE *f = strcmp(out, "-") == 0 ? stdout : fopen(out, "w");
	if (!f) {
		log_error("cannot write %s: %s", out, strerror(errno));
		return -errno;
	}
	bool svg = ends_with(out, ".svg");
	cli_out_ext_check("-o", out, svg ? "SVG" : "an HTML page", (const char *const[]){".html", ".htm", ".svg", NULL});
	int rc = svg ? flame_svg(t, fr, f) : flame_html(t, fr, f);
	if (f != stdout && fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc < 0)
		log_error("cannot write %s: %s", out, strerror(-rc));
	return rc;
}

/* One line naming what a filter selected. */
static void describe(const struct query_opts *qo, const struct stack_set *s, char *buf, size_t len)
{
	char a[40], b[40];
	int n = snprintf(buf, len, "%llu samples, %s to %s", (unsigned long long)s->total,
			 cli_time(a, sizeof(a), s->t0_ns / 1000000000), cli_time(b, sizeof(b), s->t1_ns / 1000000000));
	const struct query_filter *f = &qo->f;
	for (size_t i = 0; i < f->nsessions && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, "%s%lld", i ? "," : ", session ", (long long)f->sessions[i]);
	for (size_t i = 0; i < f->nagents && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, "%s%s", i ? "," : ", agent ", f->agents[i]);
	for (size_t i = 0; i < f->ncomms && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, "%s%s", i ? "," : ", process ", f->comms[i]);
	for (size_t i = 0; i < f->npids && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, "%s%d", i ? "," : ", pid ", f->pids[i]);
}

int cli_flame(int argc, char **argv)
{
	static const struct option opts[] = {
		QUERY_LONG_OPTIONS,
		{"store", required_argument, NULL, OPT_STORE},
		{"out", required_argument, NULL, 'o'},
		{"title", required_argument, NULL, OPT_TITLE},
		{"no-process", no_argument, NULL, OPT_NOPROC},
		{"offcpu", no_argument, NULL, OPT_OFFCPU},
		{"check", required_argument, NULL, OPT_CHECK},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct query_opts qo;
	query_opts_init(&qo, 0);
	const char *path = NULL, *out = NULL, *title = NULL;
	bool proc = true, offcpu = false;
	unsigned check = CLI_CHECK_DEFAULT;
	char err[256];
	int ch, rc;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if ((rc = query_opt(&qo, ch, optarg, err, sizeof(err))) != 0) {
			if (rc < 0) {
				fprintf(stderr, "collector flame: %s\n", err);
				query_opts_free(&qo);
				return 2;
			}
			continue;
		}
		switch (ch) {
		case OPT_STORE: path = optarg; break;
		case 'o': out = optarg; break;
		case OPT_TITLE: title = optarg; break;
		case OPT_NOPROC: proc = false; break;
		case OPT_OFFCPU: offcpu = true; break;
		case OPT_CHECK:
			if (cli_check_arg("flame", optarg, &check)) {
				query_opts_free(&qo);
				return 2;
			}
			break;
		case 'h': fputs(flame_usage, stdout); query_opts_free(&qo); return 0;
		default: fputs(flame_usage, stderr); query_opts_free(&qo); return 2;
		}
	}
	if (optind != argc || !path || !out) {
		fprintf(stderr, "collector flame: --store PATH and -o FILE.html|FILE.svg are required\n%s", flame_usage);
		query_opts_free(&qo);
		return 2;
	}
	if (query_opts_check(&qo, err, sizeof(err)) < 0) {
		fprintf(stderr, "collector flame: %s\n", err);
		query_opts_free(&qo);
		return 2;
	}
	struct stack_set set;
	stack_set_init(&set);
	rc = offcpu ? load_offcpu(path, check, &qo, &set) : load(path, check, &qo, &set, NULL);
	struct flame_tree t;
	if (rc == 0 && set.total == 0)
		fprintf(stderr, "collector flame: no %s match the filters (see `collector sessions --store %s`); "
				"the graph is empty\n",
			offcpu ? "on/off-CPU times (the bpf back end records them)" : "CPU samples", path);
	if (rc == 0 && (rc = flame_tree_init(&t)) == 0) {
		struct flame_opts fo = {.process_level = proc};
		rc = flame_tree_add(&t, &set, 0, &fo);
		char sub[600];
		if (offcpu)
			snprintf(sub, sizeof(sub), "%llu ms of wall time on and off the CPU (one \"sample\" = 1 ms)",
				 (unsigned long long)set.total);
		else
			describe(&qo, &set, sub, sizeof(sub));
		struct flame_render fr = {
			.title = title ? title : offcpu ? "Wall-clock flame graph: on and off the CPU" : "CPU flame graph",
			.subtitle = sub};
		if (rc == 0)
			rc = write_flame(out, &t, &fr);
		if (rc == 0 && strcmp(out, "-") != 0)
			fprintf(stderr, "wrote %s: %s, %zu frames\n", out, sub, t.n - 1);
		flame_tree_free(&t);
	}
	stack_set_free(&set);
	query_opts_free(&qo);
	return rc < 0 ? 1 : 0;
}

int cli_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		QUERY_LONG_OPTIONS,
		{"store", required_argument, NULL, OPT_STORE},
		{"out", required_argument, NULL, 'o'},
		{"title", required_argument, NULL, OPT_TITLE},
		{"json", no_argument, NULL, OPT_JSON},
		{"limit", required_argument, NULL, OPT_LIMIT},
		{"check", required_argument, NULL, OPT_CHECK},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	/* side options (--session, --since, --until) go to the side being read:
	 * a --session or --since opens the next side when the current one has one */
	struct query_opts common, side[2];
	query_opts_init(&common, 0);
	query_opts_init(&side[0], common.now_ns);
	query_opts_init(&side[1], common.now_ns);
	bool opened[2] = {false, false};
	int cur = -1;
	const char *path = NULL, *out = NULL, *title = NULL;
	bool json = false;
	unsigned limit = 15, check = CLI_CHECK_DEFAULT;
	char err[256];
	int ch, rc = 0, status = 2;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (ch == QUERY_OPT_SESSION || ch == QUERY_OPT_SINCE || ch == QUERY_OPT_UNTIL) {
			bool opens = ch != QUERY_OPT_UNTIL;
			if (cur < 0 || (opens && opened[cur]))
				cur++;
			if (cur > 1) {
				fprintf(stderr, "collector diff: more than two sides (A and B) given\n%s", diff_usage);
				goto out;
			}
			if (opens)
				opened[cur] = true;
			if ((rc = query_opt(&side[cur], ch, optarg, err, sizeof(err))) < 0) {
				fprintf(stderr, "collector diff: %s\n", err);
				goto out;
			}
			continue;
		}
		if ((rc = query_opt(&common, ch, optarg, err, sizeof(err))) != 0) {
			if (rc < 0) {
				fprintf(stderr, "collector diff: %s\n", err);
				goto out;
			}
			continue;
		}
		switch (ch) {
		case OPT_STORE: path = optarg; break;
		case 'o': out = optarg; break;
		case OPT_TITLE: title = optarg; break;
		case OPT_JSON: json = true; break;
		case OPT_LIMIT: limit = (unsigned)strtoul(optarg, NULL, 10); break;
		case OPT_CHECK:
			if (cli_check_arg("diff", optarg, &check))
				goto out;
			break;
		case 'h': fputs(diff_usage, stdout); status = 0; goto out;
		default: fputs(diff_usage, stderr); goto out;
		}
	}
	if (optind != argc || !path || cur != 1 || !opened[0] || !opened[1]) {
		fprintf(stderr, "collector diff: --store PATH and two sides A and B (each a --session N or --since T "
				"[--until T]) are required\n%s",
			diff_usage);
		goto out;
	}
	struct stack_set set[2];
	stack_set_init(&set[0]);
	stack_set_init(&set[1]);
	char sub[2][600];
	status = 1;
	for (int i = 0; i < 2; i++) {
		/* the side's range or sessions with the common filters */
		struct query_opts q = common;
		q.f.since_ns = side[i].f.since_ns;
		q.f.until_ns = side[i].f.until_ns;
		q.f.nsessions = side[i].f.nsessions;
		memcpy(q.f.sessions, side[i].f.sessions, sizeof(q.f.sessions));
		q.priv = NULL; /* not owned: common/side free theirs */
		if (query_opts_check(&q, err, sizeof(err)) < 0) {
			fprintf(stderr, "collector diff: side %c: %s\n", 'A' + i, err);
			status = 2;
			goto free_sets;
		}
		if ((rc = load(path, check, &q, &set[i], NULL)) < 0)
			goto free_sets;
		describe(&q, &set[i], sub[i], sizeof(sub[i]));
		if (set[i].total == 0)
			fprintf(stderr, "collector diff: side %c selects no CPU samples\n", 'A' + i);
	}
	struct func_stats fs;
	func_stats_init(&fs);
	rc = func_stats_add(&fs, &set[0], 0);
	if (rc == 0)
		rc = func_stats_add(&fs, &set[1], 1);
	if (rc == 0) {
		if (json) {
			rc = func_stats_diff_table(&fs, limit, 1, stdout);
		} else {
			FILE *ts = text_safe_open(stdout);
			fprintf(ts, "A: %s\nB: %s\n", sub[0], sub[1]);
			rc = func_stats_diff_table(&fs, limit, 0, ts);
			int rc2 = text_safe_close(ts, stdout);
			if (rc == 0)
				rc = rc2;
		}
	}
	func_stats_free(&fs);
	if (rc == 0 && out) {
		struct flame_tree t;
		if ((rc = flame_tree_init(&t)) == 0) {
			struct flame_opts fo = {.process_level = true};
			rc = flame_tree_add(&t, &set[0], 0, &fo);
			if (rc == 0)
				rc = flame_tree_add(&t, &set[1], 1, &fo);
			char subtitle[1300];
			snprintf(subtitle, sizeof(subtitle), "A: %s. B: %s.", sub[0], sub[1]);
			struct flame_render fr = {.title = title ? title : "CPU differential flame graph (A to B)",
						  .subtitle = subtitle, .diff = true};
			if (rc == 0)
				rc = write_flame(out, &t, &fr);
			flame_tree_free(&t);
		}
	}
	if (rc == 0)
		status = 0;
	else
		log_error("diff: %s", strerror(-rc));
free_sets:
	stack_set_free(&set[0]);
	stack_set_free(&set[1]);
out:
	query_opts_free(&common);
	query_opts_free(&side[0]);
	query_opts_free(&side[1]);
	return status;
}
