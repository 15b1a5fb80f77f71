/* collector roofline and collector sensitivity: the overview's roofline and
 * latency-sensitivity sections on their own, with their charts. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "report/overview.h"
#include "report/sens_plot.h"
#include "report/svg_png.h"

static const char roofline_usage[] =
	"usage: collector roofline --store PATH --session N [--machine FILE] [--kernel-model FILE]\n"
	"                          [--device gpu|cpu] [-o OUT.svg|OUT.png] [--json]\n"
	"  Ceilings from --machine FILE (a machine model JSON of collector calibrate --model), which\n"
	"  overrides the session's calibration records, else its board's latest calibration; one dot\n"
	"  per process (CPU counters) and per OpenCL kernel.\n"
	"  --kernel-model FILE  lines 'KERNEL ops=N bytes=N' (per work-item) give the kernels' W and Q\n"
	"  --device   which roof -o draws (default: gpu when a kernel has a dot, else cpu)\n"
	"  -o         write the chart; .png goes through rsvg-convert (librsvg2-bin)\n" CLI_CHECK_HELP;

static const char sensitivity_usage[] =
	"usage: collector sensitivity --store PATH --session N [--machine FILE] [-o PREFIX] [--json]\n"
	"  Per traced thread (the session's trace windows through the eDAG engine): W, D, W/D, lambda,\n"
	"  Lambda and the added latency that costs 10 %; -o writes PREFIX.K.svg, the predicted slowdown vs\n"
	"  added latency for m = 1, 2, 4, one per thread (K = 1, 2, ...).\n"
	"  --machine FILE  a machine model (alpha0, m, caches) that overrides the session's calibration\n" CLI_CHECK_HELP;

struct aopts {
	const char *store, *out, *device;
	long long session;
	unsigned check;
	bool json;
	struct overview_opts o;
};

static int parse(int argc, char **argv, const char *usage, struct aopts *a)
{
	static const struct option opts[] = {
		{"store", required_argument, NULL, 's'},	{"session", required_argument, NULL, 'n'},
		{"machine", required_argument, NULL, 'M'},	{"kernel-model", required_argument, NULL, 'k'},
		{"device", required_argument, NULL, 'd'},	{"json", no_argument, NULL, 'j'},
		{"output", required_argument, NULL, 'o'},	{"help", no_argument, NULL, 'h'},
		{"check", required_argument, NULL, 'K'},	{NULL, 0, NULL, 0},
	};
	int ch;
	optind = 1;
	a->check = CLI_CHECK_DEFAULT;
	while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (ch) {
		case 's': a->store = optarg; break;
		case 'n':
			a->session = cli_session_id(optarg);
			break;
		case 'M': a->o.machine = optarg; break;
		case 'k': a->o.kernel_model = optarg; break;
		case 'd': a->device = optarg; break;
		case 'j': a->json = true; break;
		case 'o': a->out = optarg; break;
		case 'K': if (cli_check_arg(argv[0], optarg, &a->check)) return 2; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc || !a->store || a->session <= 0) {
		fprintf(stderr, "collector %s: --store PATH and a positive --session N are required\n%s", argv[0], usage);
		return 2;
	}
	if (a->device && strcmp(a->device, "gpu") != 0 && strcmp(a->device, "cpu") != 0) {
		fprintf(stderr, "collector %s: --device wants gpu or cpu\n%s", argv[0], usage);
		return 2;
	}
	return -1;
}

static int load(const struct aopts *a, struct overview *ov)
{
	struct store *st;
	if (cli_open_store(a->store, a->check, &st) < 0)
		return -EIO;
	int rc = overview_load(st, a->session, &a->o, ov);
	store_close(st);
	if (rc == -ENOENT)
		log_error("no session %lld in %s (list them with collector sessions)", a->session, a->store);
	else if (rc < 0 && rc != -EINVAL)
		log_error("cannot load session %lld: %s", a->session, strerror(-rc));
	return rc;
}

/* What both commands start with: parse, load the session's overview, print
 * it (JSON, or text by the command's printer). -1 when the command goes on
 * with *ov loaded (the caller frees it), else the exit status. */
static int load_and_print(int argc, char **argv, const char *usage, struct aopts *a, struct overview *ov,
			  void (*text)(const struct overview *, FILE *))
{
	int st = parse(argc, argv, usage, a);
	if (st >= 0)
		return st;
	if (load(a, ov) < 0)
		return 1;
	if (a->json)
		overview_json(ov, stdout);
	else
		text(ov, stdout);
	return -1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Write the chart that fn renders to path (.svg, or .png through a temporary SVG). */
static int write_chart(const char *path, int (*fn)(const void *, FILE *), const void *arg)
{
	bool png = ends_with(path, ".png");
	cli_out_ext_check("-o", path, png ? "PNG" : "SVG", (const char *const[]){".svg", ".png", NULL});
	char svg[4096];
	if (snprintf(svg, sizeof(svg), png ? "%s.tmp.svg" : "%s", path) >= (int)sizeof(svg))
		return -ENAMETOOLONG;
	FILE *f = fopen(svg, "w");
	if (!f) {
		log_error("cannot write %s: %s", svg, strerror(errno));
		return -errno;
	}
	int rc = fn(arg, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc == 0 && png) {
		rc = svg_to_png(svg, path);
		uint32_t w, h;
		if (rc == 0 && png_size(path, &w, &h) == 0)
			log_info("wrote %s (%ux%u)", path, w, h);
	} else if (rc == 0) {
		log_info("wrote %s", path);
	}
	if (png)
		unlink(svg);
	return rc;
}

struct roof_arg {
	const struct overview *ov;
	bool gpu;
};

static int roof_chart(const void *arg, FILE *f)
{
	const struct roof_arg *r = arg;
	return overview_roofline_svg(r->ov, r->gpu, f);
}

int cli_roofline(int argc, char **argv)
{
	struct aopts a = {0};
	struct overview ov;
	int st = load_and_print(argc, argv, roofline_usage, &a, &ov, overview_roofline_text);
	if (st >= 0)
		return st;
	int status = 0;
	if (a.out) {
		bool kernel_dot = false;
		for (size_t i = 0; i < ov.ndots; i++)
			kernel_dot |= !ov.dots[i].cpu;
		struct roof_arg r = {&ov, a.device ? strcmp(a.device, "gpu") == 0 : kernel_dot};
		if (!roofline_complete(r.gpu ? &ov.roof_gpu : &ov.roof_cpu)) {
			log_error("no %s roof to draw: %s", r.gpu ? "GPU" : "CPU",
				  ov.calib ? "the calibration lacks its peak compute or bandwidth"
					   : "no calibration of this board: run agent calibrate on it (same --agent-id) or pass --machine FILE");
			status = 1;
		} else if (write_chart(a.out, roof_chart, &r) < 0) {
			status = 1;
		}
	}
	overview_free(&ov);
	return status;
}

struct sens_arg {
	const struct overview *ov;
	size_t i;
};

static int sens_chart(const void *arg, FILE *f)
{
	const struct sens_arg *s = arg;
	bool ns = s->ov->sens_ns_per_unit > 0;
	return sens_plot_svg(f, &s->ov->sens[s->i], ns ? "ns" : s->ov->sens_unit, ns ? s->ov->sens_ns_per_unit : 1);
}

int cli_sensitivity(int argc, char **argv)
{
	struct aopts a = {0};
	struct overview ov;
	int st = load_and_print(argc, argv, sensitivity_usage, &a, &ov, overview_sensitivity_text);
	if (st >= 0)
		return st;
	int status = 0;
	if (ov.nsens == 0)
		status = 1;
	for (size_t i = 0; a.out && i < ov.nsens; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s.%zu.svg", a.out, i + 1);
		struct sens_arg s = {&ov, i};
		if (write_chart(path, sens_chart, &s) < 0)
			status = 1;
	}
	overview_free(&ov);
	return status;
}
