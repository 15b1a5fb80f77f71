/* collector report --store PATH --session N [--top] [--opencl] [--json] [--symfs DIR] [--limit N] */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log.h"
#include "report/report.h"

static const char report_usage[] =
	"usage: collector report --store PATH --session N [--top] [--opencl] [--json] [--symfs DIR] [--limit N]\n"
	"  --top      functions with the most CPU samples (symbols resolved on this host)\n"
	"  --opencl   OpenCL kernels: count, total, mean, p50/p95 device time, queue delay, GPU share\n"
	"  --symfs    look for the profiled binaries under DIR (like perf --symfs)\n"
	"  --limit    rows per table (default 20)\n"
	"Without a section flag, every section is printed.\n";

int cli_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"store", required_argument, NULL, 's'}, {"session", required_argument, NULL, 'n'},
		{"top", no_argument, NULL, 't'},         {"opencl", no_argument, NULL, 'o'},
		{"json", no_argument, NULL, 'j'},        {"symfs", required_argument, NULL, 'f'},
		{"limit", required_argument, NULL, 'l'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *path = NULL, *sess = NULL;
	bool top = false, opencl = false;
	struct report_opts ro = {.limit = 20};
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's': path = optarg; break;
		case 'n': sess = optarg; break;
		case 't': top = true; break;
		case 'o': opencl = true; break;
		case 'j': ro.json = true; break;
		case 'f': ro.symfs = optarg; break;
		case 'l': ro.limit = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'h': fputs(report_usage, stdout); return 0;
		default: fputs(report_usage, stderr); return 2;
		}
	}
	char *end = NULL;
	long long id = sess ? strtoll(sess, &end, 10) : 0;
	if (optind != argc || !path || !sess || *end || id <= 0 || ro.limit == 0) {
		fprintf(stderr, "collector report: --store PATH and a positive --session N are required\n%s",
			report_usage);
		return 2;
	}
	if (!top && !opencl)
		top = opencl = true;
	struct store *st;
	if (cli_open_store(path, &st) < 0)
		return 1;
	int rc = 0;
	if (top)
		rc = report_top(st, id, &ro, stdout);
	if (rc == 0 && opencl)
		rc = report_opencl(st, id, &ro, stdout);
	store_close(st);
	return rc < 0 ? 1 : 0;
}
