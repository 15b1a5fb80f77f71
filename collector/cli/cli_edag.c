/* `collector edag`: eDAG metrics of stored trace windows or of a trace file
 * (EDAN's QEMU execlog or the native format, collector/edag/README.md). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_edag.h"
#include "edag/edag.h"
#include "log.h"
#include "report/cache_model.h"
#include "report/overview.h"
#include "report/program_name.h"
#include "report/text_safe.h"
#include "store/store_trace.h"

static const char edag_usage[] =
    "usage: collector edag --store PATH --session N [--window K] [options]\n"
    "       collector edag --trace FILE --format edan|native [--arch A] [--cpu N] [options]\n"
    "  --machine FILE    machine model JSON (caches, alpha0, m, class costs; see collector/edag/README.md)\n"
    "  --cache S:A:L:T   add a cache level: size (K/M suffix), ways, line bytes, hit latency (repeatable)\n"
    "  --alpha0 A0       memory latency of a memory vertex (default 100)\n"
    "  -m M              memory issue slots for the bounds (default 1)\n"
    "  --alpha A         latency for the bounds M (default alpha0)\n"
    "  --cost CLASS=N    cost of a non-memory vertex of CLASS (int, float, branch, other, load, store)\n"
    "  --cache-model M   project (default: loads and stores probe the caches) or edan (EDAN's: loads\n"
    "                    probe by their first byte, stores are always memory vertices, sets 2^floor(log2))\n"
    "  --all-deps        also WAR, WAW and RAR edges (false dependencies)\n"
    "  --json            metrics as JSON\n"
    "  --dot FILE        write the first window's graph (Graphviz); --graph-json FILE likewise as JSON\n"
    "  --max-vertices N  largest graph to materialise (default 100000)\n"
    "  --layers-csv FILE memory vertices per memory-depth layer and per time slice (--slice T cost units)\n"
    "  --sweep-csv FILE  bounds, lambda and Lambda for m in 1..64 and alpha in alpha0 x {0.5,1,2,4,8}\n"
    "  --arch A          register names of a native text trace without an 'arch' line (riscv64 for edan)\n"
    "  --cpu N           edan: the vCPU to analyse (default: the first one in the file)\n"
    "  --max-bad N       accept up to N bad trace lines (default: 100 and at most 1% of the lines)\n"
    "  --threads N       trace files: 1 one thread, 2 parser + engine, 3 (default) two EDAN parsers + engine\n"
    CLI_CHECK_HELP "Trace files may be gzip (.gz) or zstd (.zst) compressed.\n";

/* The report's eDAG settings of a stored session (overview_edag_settings): 0, or the exit status. */
static int edag_settings_of_session(struct opts *o, const char *path, long long sid)
{
	struct store *st;
	if (cli_open_store(path, 0, &st) < 0) /* checked when the windows are read (--check) */
		return 1;
	struct overview_edag_settings *es = calloc(1, sizeof(*es));
	int rc = es ? overview_edag_settings(st, sid, o->machine, es) : -ENOMEM;
	store_close(st);
	if (rc == 0) {
		o->cfg = es->cfg;
		snprintf(o->params_from, sizeof(o->params_from), "%s", es->params_from);
		snprintf(o->cache_from_buf, sizeof(o->cache_from_buf), "%s", es->cache_from);
		snprintf(o->unit, sizeof(o->unit), "%s", es->unit);
		o->cache_from = o->cache_from_buf;
	}
	free(es);
	if (rc == -ENOENT)
		return 0; /* no such session: the defaults, and reading its windows says so */
	if (rc < 0) {
		if (rc != -EINVAL)
			log_error("%s: session %lld: %s", path, sid, strerror(-rc));
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- running windows */

static int step_flush(struct run *r)
{
	if (r->nbatch == 0)
		return 0;
	int rc = edag_step_batch(r->st, r->batch, r->nbatch);
	r->nbatch = 0;
	if (rc < 0) {
		log_error("%s: the eDAG engine refused an instruction: %s", r->o->trace ? r->o->trace : r->o->store,
			  strerror(-rc));
		return -EIO;
	}
	return 0;
}

int cli_edag_window_begin(struct run *r, const struct edag_window_info *info)
{
	r->info = *info;
	r->capture = 0;
	r->end_reason = 0;
	r->warm_insns = r->stop_ns = 0;
	r->n = 0;
	r->unknown = 0;
	r->in_window = true;
	int rc = 0;
	if ((r->o->dot || r->o->gjson) && !r->graph_done && !r->g)
		rc = edag_graph_new(&r->o->cfg, r->o->max_vertices, &r->g);
	if (rc == 0 && !r->st)
		rc = edag_new(&r->o->cfg, &r->st);
	else if (rc == 0)
		edag_reset(r->st);
	if (rc < 0) {
		log_error("edag: %s", strerror(-rc));
		return -EIO;
	}
	return 0;
}

int cli_edag_window_step(struct run *r, const struct edag_insn *in)
{
	if (r->g && !r->graph_done) {
		int rc = edag_graph_add(r->g, in);
		if (rc == -E2BIG) {
			r->graph_too_big = true;
			r->graph_done = true;
		} else if (rc < 0) {
			log_error("edag: graph: %s", strerror(-rc));
			return -EIO;
		}
	}
	r->n++;
	r->batch[r->nbatch++] = *in;
	return r->nbatch == EDAG_BATCH ? step_flush(r) : 0;
}

int cli_edag_window_steps(struct run *r, const struct edag_insn *ins, size_t n)
{
	if (r->g && !r->graph_done) {
		for (size_t i = 0; i < n; i++) {
			int rc = cli_edag_window_step(r, &ins[i]);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	if (step_flush(r) < 0)
		return -EIO;
	r->n += n;
	int rc = edag_step_batch(r->st, ins, n);
	if (rc < 0) {
		log_error("%s: the eDAG engine refused an instruction: %s", r->o->trace ? r->o->trace : r->o->store,
			  strerror(-rc));
		return -EIO;
	}
	return 0;
}

static void layers_csv(struct run *r, const struct edag_metrics *mt)
{
	if (!r->layers)
		return;
	const struct edag_histogram *h[2] = {&mt->by_depth, &mt->by_time};
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < h[k]->nbins; i++) {
			uint64_t lo = i * h[k]->width, hi = lo + h[k]->width;
			/* depth layers are 1-based memory depths; time slices are start-time ranges */
			fprintf(r->layers, "%u,%s,%llu,%llu,%llu,%llu\n", r->info.index, k ? "time" : "depth",
				(unsigned long long)(k ? lo : lo + 1), (unsigned long long)(k ? hi : hi),
				(unsigned long long)h[k]->count[i], (unsigned long long)h[k]->bytes[i]);
		}
}

int cli_edag_window_end(struct run *r)
{
	if (!r->in_window)
		return 0;
	r->in_window = false;
	if (r->g && !r->graph_done)
		r->graph_done = true;
	if (step_flush(r) < 0)
		return -EIO;
	if (r->n == 0)
		return 0;
	if (r->nres == r->capres) {
		size_t nc = r->capres ? r->capres * 2 : 16;
		struct edag_window_result *nr = realloc(r->res, nc * sizeof(*nr));
		if (nr)
			r->res = nr;
		uint64_t *nu = nr ? realloc(r->res_unknown, nc * sizeof(*nu)) : NULL;
		if (!nu) {
			log_error("edag: out of memory");
			return -EIO;
		}
		r->res_unknown = nu;
		r->capres = nc;
	}
	r->res_unknown[r->nres] = r->unknown;
	struct edag_window_result *w = &r->res[r->nres++];
	memset(w, 0, sizeof(*w));
	w->info = r->info;
	w->n_insns = r->n;
	w->capture = r->capture;
	w->end_reason = r->end_reason;
	w->warm_insns = r->warm_insns;
	w->stop_ns = r->stop_ns;
	edag_metrics_get(r->st, &w->mt);
	layers_csv(r, &w->mt);
	return 0;
}

/* ---------------------------------------------------------------- bad input */

#define BAD_SHOWN 10 /* bad items logged one by one; the rest only counted */

static uint64_t bad_limit(const struct run *r, bool at_end)
{
	if (r->o->max_bad >= 0)
		return (uint64_t)r->o->max_bad;
	/* default: 100 items, and at the end also no more than 1% of them */
	uint64_t pct = r->items / 100;
	return at_end && pct < 100 ? pct : 100;
}

int cli_edag_bad(struct run *r, const char *where, const char *why)
{
	r->bad++;
	if (r->bad <= BAD_SHOWN)
		log_warn("%s: %s (skipped)", where, why);
	else if (r->bad == BAD_SHOWN + 1)
		log_warn("%s: further bad lines are counted, not shown", r->o->trace ? r->o->trace : r->o->store);
	if (r->bad > bad_limit(r, false)) {
		log_error("%s: more than %llu bad lines: stopped, no metrics (--max-bad N accepts more)",
			  r->o->trace ? r->o->trace : r->o->store, (unsigned long long)bad_limit(r, false));
		return -EBADMSG;
	}
	return 0;
}

int cli_edag_bad_check(struct run *r, const char *what)
{
	const char *name = r->o->trace ? r->o->trace : r->o->store;
	if (r->bad == 0)
		return 0;
	uint64_t lim = bad_limit(r, true);
	if (r->bad > lim) {
		log_error("%s: %llu of %llu %s are bad (the limit is %llu%s): no metrics (--max-bad N accepts more)",
			  name, (unsigned long long)r->bad, (unsigned long long)r->items, what,
			  (unsigned long long)lim, r->o->max_bad >= 0 ? "" : ", 1% or 100");
		return -EBADMSG;
	}
	log_warn("%s: %llu of %llu %s bad and skipped", name, (unsigned long long)r->bad,
		 (unsigned long long)r->items, what);
	return 0;
}

/* ---------------------------------------------------------------- sources */

/* Does this record continue the window being built? Pieces of one continuous
 * run (a full trace cut into records by agent trace-import) carry trace_pos:
 * the next piece of the same thread starts where the previous one ended. */
static bool store_continues(const struct run *r, const Prof__TraceWindow *tw)
{
	return r->in_window && tw->trace_pos > 1 && r->pos_next == tw->trace_pos && r->info.tid == tw->tid &&
	       r->info.pid == tw->pid;
}

static int store_window(const struct store_trace_row *row, void *arg)
{
	struct run *r = arg;
	const Prof__TraceWindow *tw = row->tw;
	int rc;
	if (tw->n_pc_delta == 0 && (tw->capture == 1 || tw->capture == 2) && tw->end_reason == EDAG_END_TIME) {
		r->lost_cut++; /* the agent lost it in its warm-up: counted among the discarded */
		return 0;
	}
	if (store_continues(r, tw)) {
		r->info.represented_insns += tw->represented_insns; /* registers, memory and cache carry over */
	} else {
		if (tw->trace_pos > 1 && r->o->window < 0)
			log_warn("trace window %u (seq %llu) continues a run at instruction %llu, but the run's "
				 "previous part %s: analysed as a separate window",
				 tw->window_index, (unsigned long long)row->seq, (unsigned long long)tw->trace_pos,
				 r->in_window && r->info.tid == tw->tid ? "ended elsewhere (a gap)" : "is missing");
		if ((rc = cli_edag_window_end(r)) < 0)
			return rc;
		struct edag_window_info info = {.index = tw->window_index,
						.pid = tw->pid,
						.tid = tw->tid,
						.t_ns = tw->t_ns,
						.share = tw->sampled_share,
						.represented_insns = tw->represented_insns};
		if ((rc = cli_edag_window_begin(r, &info)) < 0)
			return rc;
		edag_window_start(r->st, tw); /* its warm-up lines, if any */
		r->capture = tw->capture;
		r->warm_insns = tw->warm_insns;
	}
	r->stop_ns += tw->stop_ns;
	r->end_reason = tw->end_reason; /* every piece carries the window's */
	struct edag_window_iter it;
	struct edag_insn in;
	uint64_t n = 0;
	edag_window_iter_init(&it, tw);
	for (;;) {
		rc = edag_window_next(&it, &in);
		if (rc == 0)
			break;
		r->items++;
		n++;
		if (rc == -EBADMSG) {
			char where[160];
			snprintf(where, sizeof(where), "%s: session %lld, trace window %u (seq %llu), instruction %zu",
				 r->o->store, (long long)r->o->session, tw->window_index, (unsigned long long)row->seq,
				 it.i);
			if ((rc = cli_edag_bad(r, where, it.why)) < 0)
				return rc;
			continue;
		}
		if (rc < 0) {
			log_error("%s: session %lld, trace window %u (seq %llu): a malformed record: %s",
				  r->o->store, (long long)r->o->session, tw->window_index,
				  (unsigned long long)row->seq, it.why ? it.why : strerror(-rc));
			return -EIO;
		}
		if ((rc = cli_edag_window_step(r, &in)) < 0)
			return rc;
	}
	r->pos_next = tw->trace_pos ? tw->trace_pos + n : 0;
	return 0;
}

static int target_cb(const struct store_session_row *row, void *arg)
{
	program_of_target(row->target, arg, sizeof(((struct opts *)0)->prog));
	return 0;
}

static int run_store(struct run *r)
{
	struct store *st;
	if (cli_open_store(r->o->store, 0, &st) < 0) /* checked by the first open (cli_edag) */
		return -EIO;
	int rc = store_list_trace_windows(st, r->o->session, r->o->window, store_window, r);
	store_close(st);
	if (rc == 0)
		rc = cli_edag_window_end(r); /* the last window (or joined run) */
	if (rc == 0)
		rc = cli_edag_bad_check(r, "stored instructions");
	return rc;
}

/* ---------------------------------------------------------------- main */

static int read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap || cap >= (1u << 20))
			break;
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (!buf)
		return -ENOMEM;
	*out = buf;
	*len = n;
	return 0;
}

#define USAGE_HINT " (collector edag --help)"

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
	    {"store", required_argument, NULL, 's'},
	    {"session", required_argument, NULL, 'n'},
	    {"window", required_argument, NULL, 'w'},
	    {"trace", required_argument, NULL, 't'},
	    {"format", required_argument, NULL, 'f'},
	    {"machine", required_argument, NULL, 'M'},
	    {"cache", required_argument, NULL, 'c'},
	    {"alpha0", required_argument, NULL, '0'},
	    {"alpha", required_argument, NULL, 'a'},
	    {"cost", required_argument, NULL, 'C'},
	    {"all-deps", no_argument, NULL, 'A'},
	    {"cache-model", required_argument, NULL, 'K'},
	    {"json", no_argument, NULL, 'j'},
	    {"dot", required_argument, NULL, 'd'},
	    {"graph-json", required_argument, NULL, 'g'},
	    {"max-vertices", required_argument, NULL, 'x'},
	    {"layers-csv", required_argument, NULL, 'l'},
	    {"slice", required_argument, NULL, 'S'},
	    {"sweep-csv", required_argument, NULL, 'W'},
	    {"arch", required_argument, NULL, 'r'},
	    {"cpu", required_argument, NULL, 'u'},
	    {"max-bad", required_argument, NULL, 'B'},
	    {"threads", required_argument, NULL, 'T'},
	    {"check", required_argument, NULL, 'k'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	/* the machine model first, so that flags override it */
	const char *pre_store = NULL, *pre_session = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--machine") == 0 && i + 1 < argc)
			o->machine = argv[i + 1];
		else if (strncmp(argv[i], "--machine=", 10) == 0)
			o->machine = argv[i] + 10;
		else if (strcmp(argv[i], "--store") == 0 && i + 1 < argc)
			pre_store = argv[i + 1];
		else if (strncmp(argv[i], "--store=", 8) == 0)
			pre_store = argv[i] + 8;
		else if (strcmp(argv[i], "--session") == 0 && i + 1 < argc)
			pre_session = argv[i + 1];
		else if (strncmp(argv[i], "--session=", 10) == 0)
			pre_session = argv[i] + 10;
	}
	long long pre_sid = cli_session_id(pre_session);
	if (pre_store && pre_sid > 0) {
		/* a stored session: the settings the report and `collector sensitivity` use for it */
		int rc = edag_settings_of_session(o, pre_store, pre_sid);
		if (rc)
			return rc;
	} else if (o->machine) {
		char *json = NULL;
		size_t len = 0;
		char err[256];
		int rc = read_file(o->machine, &json, &len);
		if (rc < 0) {
			log_error("--machine '%s': cannot read the machine model: %s", o->machine, strerror(-rc));
			return 1;
		}
		rc = edag_machine_parse(json, len, &o->cfg, err, sizeof(err));
		o->alpha_set = memmem(json, len, "\"alpha\"", 7) != NULL;
		free(json);
		if (rc < 0) {
			log_error("--machine '%s': %s", o->machine, err);
			return 1;
		}
	}
	bool caches_from_flags = false;
	int ch, li = -1;
	char *end;
	const char *want = NULL;
	optind = 1;
	opterr = 0; /* getopt's own messages are replaced by one line below */
	while ((ch = getopt_long(argc, argv, ":m:h", opts, &li)) != -1) {
		errno = 0;
		switch (ch) {
		case 's':
			o->store = optarg;
			break;
		case 'k':
			if (cli_check_arg("edag", optarg, &o->check))
				return 2;
			break;
		case 'n':
			o->session = cli_session_id(optarg);
			if (o->session <= 0) {
				want = "a positive session id";
				goto bad;
			}
			break;
		case 'w':
			o->window = strtoll(optarg, &end, 10);
			if (end == optarg || *end || o->window < 0) {
				want = "a window index >= 0";
				goto bad;
			}
			break;
		case 't':
			o->trace = optarg;
			break;
		case 'f':
			o->format = optarg;
			break;
		case 'M':
			break;
		case 'c':
			if (!caches_from_flags) {
				o->cfg.nlevels = 0;
				caches_from_flags = true;
				o->cache_from = "--cache";
			}
			if (o->cfg.nlevels >= EDAG_MAX_LEVELS ||
			    edag_cache_level_parse(optarg, &o->cfg.level[o->cfg.nlevels]) < 0) {
				fprintf(stderr,
					"collector edag: --cache '%s': expected SIZE:WAYS:LINE:LATENCY (e.g. 32K:8:64:4), "
					"at most %d levels%s\n",
					optarg, EDAG_MAX_LEVELS, USAGE_HINT);
				return 2;
			}
			snprintf(o->cfg.level[o->cfg.nlevels].name, sizeof(o->cfg.level[0].name), "L%u",
				 o->cfg.nlevels + 1);
			o->cfg.nlevels++;
			break;
		case '0': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (end == optarg || *end || v == 0 || v > (1u << 24)) {
				want = "an integer in 1..16777216";
				goto bad;
			}
			o->cfg.alpha0 = (uint32_t)v;
			o->params_flags = true;
			break;
		}
		case 'm':
			o->cfg.m = strtod(optarg, &end);
			if (end == optarg || *end || !(o->cfg.m >= 1) || !isfinite(o->cfg.m)) {
				want = "a number >= 1";
				goto bad;
			}
			o->params_flags = true;
			break;
		case 'a':
			o->cfg.alpha = strtod(optarg, &end);
			if (end == optarg || *end || !(o->cfg.alpha >= 0) || !isfinite(o->cfg.alpha)) {
				want = "a number >= 0";
				goto bad;
			}
			o->alpha_set = true;
			break;
		case 'C': {
			const char *eqs = strchr(optarg, '=');
			int c = eqs ? edag_class_parse(optarg, (size_t)(eqs - optarg)) : -EINVAL;
			unsigned long v = eqs ? strtoul(eqs + 1, &end, 10) : 0;
			if (c < 0 || !eqs[1] || *end || v > (1u << 20)) {
				want = "CLASS=N, CLASS one of int, float, branch, other, load, store and N in 0..1048576";
				goto bad;
			}
			o->cfg.class_cost[c] = (uint32_t)v;
			break;
		}
		case 'A':
			o->cfg.all_deps = true;
			break;
		case 'K': {
			int cm = edag_cache_model_parse(optarg);
			if (cm < 0) {
				want = "project or edan";
				goto bad;
			}
			o->cfg.cache_model = (unsigned)cm;
			break;
		}
		case 'j':
			o->json = true;
			break;
		case 'd':
			o->dot = optarg;
			break;
		case 'g':
			o->gjson = optarg;
			break;
		case 'x':
			o->max_vertices = strtoul(optarg, &end, 10);
			if (end == optarg || *end || o->max_vertices == 0 || o->max_vertices > 10000000) {
				want = "an integer in 1..10000000";
				goto bad;
			}
			break;
		case 'l':
			o->layers = optarg;
			break;
		case 'S':
			o->cfg.time_slice = strtoull(optarg, &end, 10);
			if (end == optarg || *end || o->cfg.time_slice == 0) {
				want = "a positive integer (cost units)";
				goto bad;
			}
			break;
		case 'W':
			o->sweep = optarg;
			break;
		case 'r': {
			int a = edag_arch_parse(optarg);
			if (a < 0) {
				want = "x86_64, aarch64, arm or riscv64";
				goto bad;
			}
			o->arch = (unsigned)a;
			break;
		}
		case 'u':
			o->cpu = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end || o->cpu < 0) {
				want = "a vCPU number >= 0";
				goto bad;
			}
			break;
		case 'B':
			o->max_bad = strtoll(optarg, &end, 10);
			if (end == optarg || *end || !*optarg || o->max_bad < 0) {
				want = "a number of lines >= 0";
				goto bad;
			}
			break;
		case 'T':
			o->threads = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end || o->threads < 1 || o->threads > 3) {
				want = "1 (one thread), 2 (parser + engine) or 3 (two parsers + engine)";
				goto bad;
			}
			break;
		case 'h':
			fputs(edag_usage, stdout);
			return 0;
		case ':':
			fprintf(stderr, "collector edag: %s needs a value%s\n", argv[optind - 1], USAGE_HINT);
			return 2;
		default:
			fprintf(stderr, "collector edag: unknown option '%s'%s\n", argv[optind - 1], USAGE_HINT);
			return 2;
		}
		li = -1;
		continue;
	bad:
		fprintf(stderr, "collector edag: %s%s '%s': expected %s%s\n", li >= 0 ? "--" : "-",
			li >= 0 ? opts[li].name : (char[]){(char)ch, 0}, optarg, want, USAGE_HINT);
		return 2;
	}
	if (optind != argc) {
		fprintf(stderr, "collector edag: unexpected argument '%s'%s\n", argv[optind], USAGE_HINT);
		return 2;
	}
	if (!!o->store == !!o->trace) {
		fprintf(stderr, "collector edag: give either --store PATH --session N or --trace FILE --format F%s\n",
			USAGE_HINT);
		return 2;
	}
	if (o->store && o->session <= 0) {
		fprintf(stderr, "collector edag: --store needs a positive --session N%s\n", USAGE_HINT);
		return 2;
	}
	if (o->trace && !o->format) {
		fprintf(stderr, "collector edag: --trace needs --format edan or --format native%s\n", USAGE_HINT);
		return 2;
	}
	if (o->format && strcmp(o->format, "edan") != 0 && strcmp(o->format, "native") != 0) {
		fprintf(stderr, "collector edag: --format '%s': expected edan or native%s\n", o->format, USAGE_HINT);
		return 2;
	}
	if (!o->alpha_set)
		o->cfg.alpha = o->cfg.alpha0;
	char err[200];
	if (edag_config_check(&o->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "collector edag: %s%s\n", err, USAGE_HINT);
		return 2;
	}
	return -1; /* go on */
}

const char *cli_edag_params_from(const struct opts *o)
{
	if (o->params_flags)
		return "the command line (--alpha0, -m)";
	if (o->params_from[0])
		return o->params_from;
	return o->machine ? o->machine : "the eDAG engine's defaults (no --store session, --machine or flags)";
}

int cli_edag(int argc, char **argv)
{
	struct opts o = {.window = -1, .cpu = -1, .max_bad = -1, .threads = 3, .check = CLI_CHECK_DEFAULT};
	edag_config_default(&o.cfg);
	int st = parse_args(argc, argv, &o);
	if (st >= 0)
		return st;
	if (o.store) { /* the traced program names the windows */
		struct store *sst;
		if (cli_open_store(o.store, o.check, &sst) < 0)
			return 1;
		store_get_session(sst, o.session, target_cb, o.prog);
		store_close(sst);
	}
	struct run r = {.o = &o};
	if (o.layers) {
		r.layers = fopen(o.layers, "w");
		if (!r.layers) {
			log_error("cannot write %s: %s", o.layers, strerror(errno));
			return 1;
		}
		fprintf(r.layers, "window,kind,from,to,memory_vertices,bytes\n");
	}
	int rc = o.store ? run_store(&r) : cli_edag_run_file(&r);
	int status = 0;
	if (rc < 0) {
		status = rc == -EBADMSG ? 2 : 1; /* bad input: 2, like a usage error */
		if (rc != -EIO && rc != -EBADMSG)
			log_error("edag: %s", strerror(-rc));
	} else if (r.nres == 0) {
		if (o.store && r.lost_cut)
			log_error("%s: session %lld: all %zu trace windows were cut by the agent's stop-time limit in "
				  "their warm-up (nothing recorded): raise the agent's --max-duty or lower its --warmup",
				  o.store, (long long)o.session, r.lost_cut);
		else if (o.store)
			log_error("%s: session %lld: no instructions found: the session has no trace windows (check "
				  "--session and --window; the agent records them with the tracer)",
				  o.store, (long long)o.session);
		else
			log_error("%s: no instructions found (%llu lines read)", o.trace, (unsigned long long)r.lines);
		status = 1;
	} else {
		struct edag_approx ap;
		bool have_ap = edag_approx_combine(r.res, r.nres, o.cfg.m, o.cfg.alpha0, &ap) == 0;
		ap.taken += r.lost_cut;
		ap.discarded_cut += r.lost_cut;
		if (o.json) {
			cli_edag_print_json(&o, &r, &ap, have_ap);
		} else {
			char cm[512];
			cache_model_describe(&o.cfg,
					     o.cache_from ? o.cache_from : o.machine ? o.machine : "no --cache or --machine",
					     cm, sizeof(cm));
			FILE *t = text_safe_open(stdout); /* the windows are named after the agent's program */
			char pl[OV_NOTE_MAX + 96];
			overview_edag_params_line(&o.cfg, o.unit[0] ? o.unit : "cost units", cli_edag_params_from(&o), pl,
						  sizeof(pl));
			fprintf(t, "eDAG settings: %s\n", pl);
			fprintf(t, "cache model: %s\n", cm);
			for (size_t i = 0; i < r.nres; i++)
				cli_edag_print_window_text(&o, &r.res[i], r.res_unknown[i], t);
			if (have_ap && (r.nres > 1 || ap.coverage_known))
				cli_edag_print_approx_text(&ap, t);
			else if (!have_ap && ap.discarded_short + ap.discarded_cut > 0)
				cli_edag_print_discarded_text(&ap, t);
			if (text_safe_close(t, stdout) < 0)
				status = 1;
		}
		if (r.g) {
			if (r.graph_too_big) {
				log_error(
				    "the first window has more than %zu vertices: no graph written (raise "
				    "--max-vertices)",
				    r.g->max_vertices);
				status = 1;
			} else if (cli_edag_write_graph(&o, r.g) < 0) {
				status = 1;
			}
		}
		if (o.sweep) {
			FILE *f = fopen(o.sweep, "w");
			if (!f) {
				log_error("cannot write %s: %s", o.sweep, strerror(errno));
				status = 1;
			} else {
				fprintf(f, "window,m,alpha,lower,upper,lambda,Lambda\n");
				for (size_t i = 0; i < r.nres; i++) {
					char label[16];
					snprintf(label, sizeof(label), "%u", r.res[i].info.index);
					cli_edag_write_sweep(&o, &r.res[i].mt, label, f);
				}
				if (fclose(f) != 0)
					status = 1;
			}
		}
	}
	if (r.layers && fclose(r.layers) != 0)
		status = 1;
	edag_free(r.st);
	edag_graph_free(r.g);
	free(r.res);
	free(r.res_unknown);
	return status;
}
