/* `collector calibrate`: turn a session's Calibration records (or a machine
 * model JSON, offline) into a machine model JSON and a GPGPU-sim config. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/calib_io.h"
#include "cli.h"
#include "log.h"
#include "report/text_safe.h"
#include "calib/calib_history.h"
#include "store/store_calib.h"

static const char calibrate_usage[] =
	"usage: collector calibrate --store PATH --session N [--model OUT.json] [--emit OUT.config] [SIM OPTIONS]\n"
	"       collector calibrate --from-model MODEL.json [--model OUT.json] [--emit OUT.config] [SIM OPTIONS]\n"
	"  Build the machine model of session N from its calibration records (agent calibrate),\n"
	"  or read one (--from-model, offline), then:\n"
	"  --model FILE   write the machine model as JSON (shape: collector/calib/README.md)\n"
	"  --emit FILE    write a GPGPU-sim config (gpgpusim.config) and its interconnect file\n"
	"                 (config_calib_islip.icnt, beside it); each option is commented with the\n"
	"                 parameter it comes from or the fallback and why; checked against the\n"
	"                 version's limits before it is written (collector/calib/README.md)\n"
	"  SIM OPTIONS:\n"
	"  --gpgpusim-version 3|4  GPGPU-sim 3.2.2 as released (default; 4 cache-policy letters) or 4.0:\n"
	"                 limits, option names and cache-string syntax\n"
	"  --clamp        write out-of-range values clamped, commented \"measured X, GPGPU-sim allows\n"
	"                 at most Y\" (default: refuse, naming the limit, exit 1)\n"
	"  --use-flagged  use FLAGGED parameters (commented) instead of their stated fallbacks\n"
	"  --base FILE    a real gpgpusim.config: its options that are not written are kept (checked)\n"
	"  Without --model/--emit: print the parameters.\n" CLI_CHECK_HELP;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		log_error("cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
		if (n == cap) {
			if (cap >= (64u << 20)) {
				log_error("%s: larger than 64 MiB, not a machine model", path);
				free(buf);
				buf = NULL;
				break;
			}
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

struct from_store {
	struct calib_model *m;
	int bad;
};

static int take_param(const struct store_calib_param_row *r, void *arg)
{
	struct from_store *fs = arg;
	if (strcmp(r->device, "cpu") != 0 && !fs->m->device[0])
		snprintf(fs->m->device, sizeof(fs->m->device), "%s", r->device);
	struct calib_param p = {
		.value = r->value, .spread = r->spread, .confidence = r->confidence, .flagged = r->flagged};
	snprintf(p.name, sizeof(p.name), "%s", r->name);
	snprintf(p.unit, sizeof(p.unit), "%s", r->unit);
	snprintf(p.method, sizeof(p.method), "%s", r->method);
	if (calib_model_set(fs->m, &p) < 0)
		fs->bad++;
	return 0;
}

/* Stability across runs: the recent calibrations of the same device in this
 * store (collector/calib/calib_history.h); keys that moved are FLAGGED. */
static void flag_moved(struct store *st, int64_t session, struct calib_model *m)
{
	int64_t ids[CALIB_HISTORY_MAX * 4];
	int n = store_calib_sessions_before(st, session, ids, CALIB_HISTORY_MAX * 4);
	const struct calib_model *prev[CALIB_HISTORY_MAX];
	size_t np = 0;
	for (int i = 0; i < n && np < CALIB_HISTORY_MAX; i++) {
		struct calib_model *pm = calloc(1, sizeof(*pm));
		struct from_store fs = {.m = pm};
		if (pm && store_calib_params(st, ids[i], take_param, &fs) > 0 && strcmp(pm->device, m->device) == 0)
			prev[np++] = pm;
		else
			free(pm);
	}
	size_t moved = calib_history_flag_moved(m, prev, np);
	for (size_t i = 0; i < np; i++)
		free((void *)prev[i]);
	if (moved)
		log_warn("%zu calibration key(s) moved beyond their spread against the %zu previous calibration(s) of"
			 " %s in this store: FLAGGED (their methods say MOVED)",
			 moved, np, m->device[0] ? m->device : "this device");
}

typedef int (*writer_fn)(FILE *f, const void *arg);

/* Write through a temporary file and rename it into place. */
static int write_file(const char *path, writer_fn fn, const void *arg)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	FILE *f = fopen(tmp, "w");
	if (!f) {
		int e = errno;
		log_error("cannot write %s: %s", tmp, strerror(e));
		return -e;
	}
	int rc = fn(f, arg);
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		log_error("writing %s failed: %s", path, strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

static int write_model(FILE *f, const void *arg)
{
	return calib_model_write_json(arg, f);
}

struct text {
	const char *s;
	size_t len;
};

static int write_text(FILE *f, const void *arg)
{
	const struct text *t = arg;
	return fwrite(t->s, 1, t->len, f) == t->len ? 0 : -EIO;
}

/* gpgpusim.config at path, its interconnect file beside it; both checked
 * before either is written. */
static int emit_sim(const struct calib_model *m, const char *path, struct calib_gpgpusim_opts *o)
{
	char icnt_path[4096];
	const char *slash = strrchr(path, '/');
	int dl = slash ? (int)(slash - path + 1) : 0;
	if (snprintf(icnt_path, sizeof(icnt_path), "%.*s%s", dl, path, "config_calib_islip.icnt") >=
	    (int)sizeof(icnt_path)) {
		log_error("%s: path too long", path);
		return -ENAMETOOLONG;
	}
	o->icnt_name = "config_calib_islip.icnt";
	char *cfg = NULL, *icnt = NULL, err[2048] = "";
	size_t clen = 0, ilen = 0;
	FILE *cf = open_memstream(&cfg, &clen), *inf = open_memstream(&icnt, &ilen);
	int rc = cf && inf ? calib_gpgpusim_write(m, o, cf, inf, err, sizeof(err)) : -ENOMEM;
	if (cf)
		fclose(cf);
	if (inf)
		fclose(inf);
	if (rc < 0) {
		char safe[2048];
		log_error("not writing %s: %s", path, err[0] ? text_safe_copy(safe, sizeof(safe), err) : strerror(-rc));
	} else {
		struct text c = {cfg, clen}, i = {icnt, ilen};
		rc = write_file(path, write_text, &c);
		if (rc == 0)
			rc = write_file(icnt_path, write_text, &i);
		if (rc == 0 && o->flagged_out)
			log_warn("%s: %u FLAGGED parameter(s) %s (see its comments)", path, o->flagged_out,
				 o->use_flagged ? "taken because of --use-flagged" : "replaced by stated fallbacks");
		if (rc == 0 && o->clamped_out)
			log_warn("%s: %u value(s) written CLAMPED to GPGPU-sim %s's limits", path, o->clamped_out,
				 o->version == 4 ? "4.0" : "3.2.2");
	}
	free(cfg);
	free(icnt);
	return rc;
}

/* Device, names, units and methods may come from the agent's Calibration records. */
static void print_model(const struct calib_model *m)
{
	FILE *f = text_safe_open(stdout);
	fprintf(f, "machine model of %s (%s), %zu parameters\n", m->device[0] ? m->device : "-",
		m->source[0] ? m->source : "-", m->nparams);
	fprintf(f, "%-32s %14s %-10s %8s %6s  %s\n", "PARAMETER", "VALUE", "UNIT", "SPREAD", "CONF", "METHOD");
	for (size_t i = 0; i < m->nparams; i++) {
		const struct calib_param *p = &m->params[i];
		fprintf(f, "%-32s %14.6g %-10s %7.1f%% %6.2f  %s%s\n", p->name, p->value, p->unit, p->spread * 100,
			p->confidence, p->method, p->flagged ? "  [FLAGGED]" : "");
	}
	text_safe_close(f, stdout);
}

int cli_calibrate(int argc, char **argv)
{
	static const struct option opts[] = {{"store", required_argument, NULL, 's'},
					     {"session", required_argument, NULL, 'n'},
					     {"from-model", required_argument, NULL, 'f'},
					     {"model", required_argument, NULL, 'm'},
					     {"emit", required_argument, NULL, 'e'},
					     {"base", required_argument, NULL, 'b'},
					     {"gpgpusim-version", required_argument, NULL, 'V'},
					     {"clamp", no_argument, NULL, 'C'},
					     {"use-flagged", no_argument, NULL, 'F'},
					     {"help", no_argument, NULL, 'h'},
					     {"check", required_argument, NULL, 'K'},
					     {NULL, 0, NULL, 0}};
	const char *store_path = NULL, *from = NULL, *model_out = NULL, *emit = NULL, *base_path = NULL;
	unsigned check = CLI_CHECK_DEFAULT;
	struct calib_gpgpusim_opts so = {.version = 3};
	long long session = -1;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's': store_path = optarg; break;
		case 'f': from = optarg; break;
		case 'm': model_out = optarg; break;
		case 'e': emit = optarg; break;
		case 'b': base_path = optarg; break;
		case 'C': so.clamp = true; break;
		case 'F': so.use_flagged = true; break;
		case 'V':
			if (strcmp(optarg, "3") != 0 && strcmp(optarg, "4") != 0) {
				fprintf(stderr, "collector calibrate: --gpgpusim-version wants 3 (3.2.2) or 4 (4.0)\n");
				return 2;
			}
			so.version = optarg[0] - '0';
			break;
		case 'K': if (cli_check_arg("calibrate", optarg, &check)) return 2; break;
		case 'n': {
			session = cli_session_id(optarg);
			if (session <= 0) {
				fprintf(stderr, "collector calibrate: --session wants a session id (see collector sessions)\n");
				return 2;
			}
			break;
		}
		case 'h':
			fputs(calibrate_usage, stdout);
			return 0;
		default:
			fputs(calibrate_usage, stderr);
			return 2;
		}
	}
	if (optind != argc || (!from && (!store_path || session <= 0)) || (from && store_path)) {
		fprintf(stderr, "collector calibrate: %s\n%s",
			from && store_path ? "give either --from-model or --store/--session, not both"
					   : "--store PATH --session N (or --from-model FILE) is required",
			calibrate_usage);
		return 2;
	}
	struct calib_model *m = calloc(1, sizeof(*m));
	char *base = NULL;
	int status = 1;
	if (!m)
		goto out;
	if (from) {
		size_t len;
		char *json = slurp(from, &len);
		if (!json)
			goto out;
		char err[512];
		int rc = calib_model_parse_json(json, len, m, err, sizeof(err));
		free(json);
		if (rc < 0) {
			log_error("%s: %s", from, err);
			goto out;
		}
	} else {
		struct store *st;
		if (cli_open_store(store_path, check, &st) < 0)
			goto out;
		struct from_store fs = {.m = m};
		int n = store_calib_params(st, session, take_param, &fs);
		if (n > 0)
			flag_moved(st, session, m);
		store_close(st);
		if (n <= 0) {
			log_error("session %lld of %s has no calibration records (run `agent calibrate --collector ...` "
				  "against this collector first)",
				  session, store_path);
			goto out;
		}
		if (fs.bad)
			log_warn("%d calibration parameter(s) could not be used (model full or not finite)", fs.bad);
		snprintf(m->source, sizeof(m->source), "session %lld of %s", session, store_path);
	}
	size_t blen;
	if (base_path && !(base = slurp(base_path, &blen)))
		goto out;
	if (model_out && write_file(model_out, write_model, m) < 0)
		goto out;
	so.base = base;
	if (emit && emit_sim(m, emit, &so) < 0)
		goto out;
	char dev[sizeof(m->device)];
	if (!model_out && !emit)
		print_model(m);
	else
		fprintf(stderr, "calibrate: %zu parameters of %s%s%s%s%s\n", m->nparams,
			text_safe_copy(dev, sizeof(dev), m->device), model_out ? " -> " : "", model_out ? model_out : "",
			emit ? " -> " : "", emit ? emit : "");
	status = 0;
out:
	free(base);
	free(m);
	return status;
}
