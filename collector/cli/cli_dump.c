/* `collector dump`: one session's header, per-event summary and rows. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "log.h"
#include "report/text_safe.h"
#include "store/store_sample_keys.h"

static const char dump_usage[] =
    "usage: collector dump --store PATH --session N [--json] [--rows] [--keys] [--check full|quick|off]\n"
    "  Show session N (see `collector sessions`): board, kernel, CPUs, GPUs, target,\n"
    "  per-event totals and rates; --rows adds every counter row. --keys prints instead\n"
    "  the session's CPU sample keys as stored, one per line (decimal, for scripts):\n"
    "  seq t_ns pid tid ip kip stack_id count.\n" CLI_CHECK_HELP;

struct dump {
	bool json, rows, keys;
	unsigned n;    /* items printed in the current list */
	double span_s; /* base_ns .. last sample of the session */
};

/* ---------------------------------------------------------------- text */

static int text_session(const struct store_session_row *r, void *arg)
{
	struct dump *d = arg;
	char a[256], b[256], c[256], t1[32], t2[32];
	d->span_s = (double)r->last_t_ns / 1e9;
	printf("session %lld: agent %s, boot id %016llx, %llu connects, last peer %s\n", (long long)r->id,
	       text_safe_copy(a, sizeof(a), r->agent_id), (unsigned long long)r->boot_id,
	       (unsigned long long)r->connects, text_safe_copy(b, sizeof(b), r->peer));
	printf("  board:    %s\n", text_safe_copy(a, sizeof(a), r->board));
	printf("  kernel:   %s (%s) on host %s\n", text_safe_copy(a, sizeof(a), r->kernel_release),
	       text_safe_copy(b, sizeof(b), r->machine), text_safe_copy(c, sizeof(c), r->hostname));
	printf("  agent:    version %s, features %s, schema %u\n", text_safe_copy(a, sizeof(a), r->agent_version),
	       text_safe_copy(b, sizeof(b), r->features), r->schema_version);
	printf("  target:   %s\n", text_safe_copy(a, sizeof(a), r->target));
	printf("  clock:    id %u, base_ns %llu", r->clock_id, (unsigned long long)r->base_ns);
	if (r->realtime_ns)
		printf(", wall time at base %s + %.9f s",
		       cli_time(t1, sizeof(t1), (int64_t)(r->realtime_ns / 1000000000u)),
		       (double)(r->realtime_ns % 1000000000u) / 1e9);
	printf("\n");
	printf("  seen:     %s .. %s\n", cli_time(t1, sizeof(t1), r->first_seen),
	       cli_time(t2, sizeof(t2), r->last_seen));
	printf("  records:  %llu (%llu bytes on the wire), %llu counter samples, %llu CPU samples, %llu dropped by "
	       "the agent's spool\n",
	       (unsigned long long)r->records, (unsigned long long)r->wire_bytes,
	       (unsigned long long)r->counter_samples, (unsigned long long)r->cpu_samples,
	       (unsigned long long)r->spool_dropped);
	return 0;
}

static int text_cpu(const struct store_cpu_row *r, void *arg)
{
	struct dump *d = arg;
	char m[256];
	if (d->n++ == 0)
		printf("  cpus:\n");
	printf("    cpu%-3u %s (implementer 0x%02x part 0x%03x), max %llu kHz\n", r->cpu,
	       text_safe_copy(m, sizeof(m), r->model), r->implementer, r->part,
	       (unsigned long long)r->max_freq_khz);
	return 0;
}

static int text_gpu(const struct store_gpu_row *r, void *arg)
{
	struct dump *d = arg;
	char n[256], v[256], p[256], ver[256], drv[256];
	if (d->n++ == 0)
		printf("  gpus:\n");
	printf("    gpu%-3u %s (%s, platform %s), %s, driver %s, %u compute units, %llu MiB, %u MHz, type "
	       "0x%x\n",
	       r->idx, text_safe_copy(n, sizeof(n), r->name), text_safe_copy(v, sizeof(v), r->vendor),
	       text_safe_copy(p, sizeof(p), r->platform), text_safe_copy(ver, sizeof(ver), r->version),
	       text_safe_copy(drv, sizeof(drv), r->driver), r->compute_units,
	       (unsigned long long)(r->global_mem_bytes >> 20), r->max_clock_mhz, r->type);
	return 0;
}

static int text_event(const struct store_event_summary *e, void *arg)
{
	struct dump *d = arg;
	char n[160], u[64];
	if (d->n++ == 0)
		printf("%-6s %-28s %-6s %10s %20s %14s\n", "ID", "EVENT", "UNIT", "SAMPLES", "TOTAL",
		       "RATE/S");
	char rate[32] = "-";
	if (d->span_s > 0)
		snprintf(rate, sizeof(rate), "%.6g", (double)e->total / d->span_s);
	printf("%-6u %-28s %-6s %10llu %20llu %14s\n", e->event_id, text_safe_copy(n, sizeof(n), e->name),
	       e->unit[0] ? text_safe_copy(u, sizeof(u), e->unit) : "", (unsigned long long)e->samples,
	       (unsigned long long)e->total, rate);
	return 0;
}

static int text_row(const struct store_sample_row *r, void *arg)
{
	struct dump *d = arg;
	char n[160];
	if (d->n++ == 0)
		printf("%-16s %-28s %20s %8s %8s\n", "T_S", "EVENT", "VALUE", "RUNNING%", "SEQ");
	printf("%-16.9f %-28s %20llu %8u %8llu\n", (double)r->t_ns / 1e9, text_safe_copy(n, sizeof(n), r->name),
	       (unsigned long long)r->value, r->running_pct, (unsigned long long)r->seq);
	return 0;
}

static int dump_text(struct store *st, int64_t id, struct dump *d)
{
	int rc = store_get_session(st, id, text_session, d);
	if (rc < 0)
		return rc;
	d->n = 0;
	if ((rc = store_list_cpus(st, id, text_cpu, d)) < 0)
		return rc;
	d->n = 0;
	if ((rc = store_list_gpus(st, id, text_gpu, d)) < 0)
		return rc;
	printf("\nevents (rate = total / %.3f s, from base_ns to the last sample):\n", d->span_s);
	d->n = 0;
	if ((rc = store_event_summaries(st, id, text_event, d)) < 0)
		return rc;
	if (d->n == 0)
		printf("  (no counter samples)\n");
	if (d->rows) {
		printf("\nrows (t in seconds after base_ns):\n");
		d->n = 0;
		rc = store_list_samples(st, id, text_row, d);
	}
	return rc;
}

/* ---------------------------------------------------------------- JSON */

static void jstr(const char *key, const char *v)
{
	json_key(stdout, 0, key);
	json_string(stdout, v);
}

static void ju64(const char *key, uint64_t v)
{
	json_key(stdout, 0, key);
	json_u64(stdout, v);
}

static int json_session(const struct store_session_row *r, void *arg)
{
	struct dump *d = arg;
	d->span_s = (double)r->last_t_ns / 1e9;
	fputc('{', stdout); /* only once the session is known to exist */
	json_key(stdout, 1, "session");
	fputc('{', stdout);
	json_key(stdout, 1, "id");
	json_i64(stdout, r->id);
	jstr("agent_id", r->agent_id);
	ju64("boot_id", r->boot_id);
	jstr("board", r->board);
	jstr("kernel_release", r->kernel_release);
	jstr("hostname", r->hostname);
	jstr("machine", r->machine);
	jstr("agent_version", r->agent_version);
	jstr("features", r->features);
	jstr("target", r->target);
	jstr("peer", r->peer);
	ju64("schema_version", r->schema_version);
	ju64("clock_id", r->clock_id);
	ju64("base_ns", r->base_ns);
	ju64("realtime_ns", r->realtime_ns);
	json_key(stdout, 0, "first_seen");
	json_i64(stdout, r->first_seen);
	json_key(stdout, 0, "last_seen");
	json_i64(stdout, r->last_seen);
	ju64("connects", r->connects);
	ju64("records", r->records);
	ju64("wire_bytes", r->wire_bytes);
	ju64("spool_dropped", r->spool_dropped);
	ju64("samples", r->samples);
	fputc('}', stdout);
	return 0;
}

static int json_cpu(const struct store_cpu_row *r, void *arg)
{
	struct dump *d = arg;
	fputs(d->n++ ? ",{" : "{", stdout);
	json_key(stdout, 1, "cpu");
	json_u64(stdout, r->cpu);
	jstr("model", r->model);
	ju64("implementer", r->implementer);
	ju64("part", r->part);
	ju64("max_freq_khz", r->max_freq_khz);
	fputc('}', stdout);
	return 0;
}

static int json_gpu(const struct store_gpu_row *r, void *arg)
{
	struct dump *d = arg;
	fputs(d->n++ ? ",{" : "{", stdout);
	json_key(stdout, 1, "idx");
	json_u64(stdout, r->idx);
	jstr("platform", r->platform);
	jstr("name", r->name);
	jstr("vendor", r->vendor);
	jstr("version", r->version);
	jstr("driver", r->driver);
	ju64("compute_units", r->compute_units);
	ju64("global_mem_bytes", r->global_mem_bytes);
	ju64("max_clock_mhz", r->max_clock_mhz);
	ju64("type", r->type);
	fputc('}', stdout);
	return 0;
}

static int json_event(const struct store_event_summary *e, void *arg)
{
	struct dump *d = arg;
	fputs(d->n++ ? ",\n  {" : "\n  {", stdout);
	json_key(stdout, 1, "event_id");
	json_u64(stdout, e->event_id);
	jstr("name", e->name);
	json_key(stdout, 0, "declared");
	fputs(e->declared ? "true" : "false", stdout);
	jstr("unit", e->unit);
	ju64("type", e->type);
	ju64("config", e->config);
	ju64("samples", e->samples);
	ju64("total", e->total);
	ju64("first_t_ns", e->first_t_ns);
	ju64("last_t_ns", e->last_t_ns);
	json_key(stdout, 0, "rate_per_s");
	json_double(stdout, d->span_s > 0 ? (double)e->total / d->span_s : NAN);
	fputc('}', stdout);
	return 0;
}

static int json_row(const struct store_sample_row *r, void *arg)
{
	struct dump *d = arg;
	fputs(d->n++ ? ",\n  {" : "\n  {", stdout);
	json_key(stdout, 1, "t_ns");
	json_u64(stdout, r->t_ns);
	json_key(stdout, 0, "t_s");
	json_double(stdout, (double)r->t_ns / 1e9);
	ju64("event_id", r->event_id);
	jstr("event", r->name);
	ju64("value", r->value);
	ju64("running_pct", r->running_pct);
	ju64("seq", r->seq);
	fputc('}', stdout);
	return 0;
}

static int dump_json(struct store *st, int64_t id, struct dump *d)
{
	int rc = store_get_session(st, id, json_session, d);
	if (rc < 0)
		return rc;
	fputs(",\n\"cpus\":[", stdout);
	d->n = 0;
	if ((rc = store_list_cpus(st, id, json_cpu, d)) < 0)
		return rc;
	fputs("],\n\"gpus\":[", stdout);
	d->n = 0;
	if ((rc = store_list_gpus(st, id, json_gpu, d)) < 0)
		return rc;
	fputs("],\n\"span_s\":", stdout);
	json_double(stdout, d->span_s);
	fputs(",\n\"events\":[", stdout);
	d->n = 0;
	if ((rc = store_event_summaries(st, id, json_event, d)) < 0)
		return rc;
	fputs("]", stdout);
	if (d->rows) {
		fputs(",\n\"rows\":[", stdout);
		d->n = 0;
		if ((rc = store_list_samples(st, id, json_row, d)) < 0)
			return rc;
		fputs("]", stdout);
	}
	fputs("}\n", stdout);
	return 0;
}

static int key_line(const struct store_key_row *r, void *arg)
{
	(void)arg;
	printf("%llu %lld %d %d %llu %llu %u %llu\n", (unsigned long long)r->seq, (long long)r->t_ns, r->pid, r->tid,
	       (unsigned long long)r->ip, (unsigned long long)r->kip, r->stack_id, (unsigned long long)r->count);
	return 0;
}

/* --keys: the session's sample keys as stored (the blocks decoded; an older collector's rows). */
static int dump_keys(struct store *st, int64_t id)
{
	uint64_t records;
	int rc = store_session_records(st, id, &records);
	if (rc == 0)
		printf("# seq t_ns pid tid ip kip stack_id count\n");
	if (rc == 0)
		rc = store_list_sample_keys(st, id, key_line, NULL);
	if (rc == -EBADMSG)
		log_error("session %lld: a damaged sample block: run `collector check --store PATH`", (long long)id);
	return rc;
}

int cli_dump(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"store", required_argument, NULL, 's'}, {"session", required_argument, NULL, 'n'},
	    {"json", no_argument, NULL, 'j'},	     {"rows", no_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},	     {"check", required_argument, NULL, 'K'},
	    {"keys", no_argument, NULL, 'k'},	     {NULL, 0, NULL, 0}};
	const char *path = NULL, *sess = NULL;
	unsigned check = CLI_CHECK_DEFAULT;
	struct dump d = {0};
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			path = optarg;
			break;
		case 'n':
			sess = optarg;
			break;
		case 'j':
			d.json = true;
			break;
		case 'r':
			d.rows = true;
			break;
		case 'k':
			d.keys = true;
			break;
		case 'K':
			if (cli_check_arg("dump", optarg, &check))
				return 2;
			break;
		case 'h':
			fputs(dump_usage, stdout);
			return 0;
		default:
			fputs(dump_usage, stderr);
			return 2;
		}
	}
	long long id = cli_session_id(sess);
	if (optind != argc || !path || !sess || id <= 0) {
		fprintf(stderr, "collector dump: %s\n%s",
			!path		 ? "--store PATH is required"
			: !sess		 ? "--session N is required (ids from `collector sessions`)"
			: optind != argc ? "unexpected argument"
					 : "--session wants a positive session id",
			dump_usage);
		return 2;
	}
	struct store *st;
	if (cli_open_store(path, check, &st) < 0)
		return 1;
	int rc = d.keys ? dump_keys(st, id) : d.json ? dump_json(st, id, &d) : dump_text(st, id, &d);
	if (rc == -ENOENT)
		log_error("no session %lld in %s: list them with `collector sessions --store %s`", id, path,
			  path);
	store_close(st);
	fflush(stdout);
	return rc < 0 ? 1 : 0;
}
