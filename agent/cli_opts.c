#include "cli_opts.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generated/config.h"
#ifdef CONFIG_AGENT_OPENCL
#include "cl_launch.h"
#endif
#include "commands.h"
#include "log.h"
#include "net.h"
#include "sampler.h"
#include "spool_scope.h"

const char agent_cli_target_help[] =
	"  -p PID                 all threads of PID (and children they start)\n"
	"  -a                     the whole system\n"
	"  -- CMD [ARGS...]       run CMD and profile it (the exit code is CMD's)\n"
	"  --duration S           stop after S seconds\n";

const char agent_cli_cmd_help[] =
	"  -- CMD [ARGS...]       run CMD and profile it (the exit code is CMD's)\n"
	"  --duration S           stop after S seconds\n";

const char agent_cli_common_help[] =
	"  --collector HOST:PORT  where the collector listens (e.g. 127.0.0.1:7412)\n"
	"  --spool DIR            on-disk spool for unacknowledged records (default\n"
	"                         " DEFAULT_SPOOL_DIR "/<agent id>@<collector>; see agent spool ls)\n"
	"  --spool-max MB         spool size cap\n"
	"  --agent-id ID          name of this agent (default: hostname)\n"
	"  --token-file F         shared token of a collector started with --token-file\n"
	"  --tls-ca F             TLS to the collector; its certificate must chain to a CA in F\n"
	"                         (PEM) and name the --collector address\n"
	"  --flush-timeout S      at the end, wait up to S s for acks (default 5)\n"
	"  -v / -q                more / less logging\n";

int agent_cli_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int agent_cli_seconds(const char *s, double min, double *out)
{
	double v;
	if (agent_cli_double(s, &v) < 0 || v < min || v > AGENT_CLI_MAX_SECONDS)
		return -EINVAL;
	*out = v;
	return 0;
}

int agent_cli_freq(const char *s, unsigned *hz)
{
	unsigned long v;
	if (agent_cli_ulong(s, 100000, &v) < 0 || v == 0) {
		log_error("-F: sampling frequency must be 1..100000 Hz (got '%s')", s);
		return EXIT_USAGE;
	}
	*hz = (unsigned)v;
	return 0;
}

int agent_cli_interval_ms(const char *s, unsigned *ms)
{
	unsigned long v;
	if (agent_cli_ulong(s, 86400000ul, &v) < 0 || v < 10) {
		log_error("-I: interval must be a whole number of milliseconds >= 10 (got '%s')", s);
		return EXIT_USAGE;
	}
	*ms = (unsigned)v;
	return 0;
}

int agent_cli_backend(const char *s, int *backend)
{
	enum sampler_backend b;
	if (sampler_parse_backend(s, &b) < 0) {
		log_error("--backend: expected auto, bpf or ring (got '%s')", s);
		return EXIT_USAGE;
	}
	*backend = (int)b;
	return 0;
}

int agent_cli_cl_mode(const char *s, int *mode)
{
#ifdef CONFIG_AGENT_OPENCL
	enum cl_launch_mode m;
	if (cl_launch_parse_mode(s, &m) < 0) {
		log_error("--mode: '%s' is not one of layer, preload, auto", s);
		return EXIT_USAGE;
	}
	*mode = (int)m;
#else
	(void)s;
	(void)mode;
#endif
	return 0;
}

int agent_cli_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return -EINVAL;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

enum { OPT_COLLECTOR = 256, OPT_DURATION, OPT_SPOOL, OPT_SPOOL_MAX, OPT_AGENT_ID, OPT_FLUSH, OPT_TOKEN, OPT_TLS_CA };

#define MAX_LONGOPTS 64

int agent_cli_parse(int argc, char **argv, struct agent_cli *cli, const char *usage,
		    const struct option *extra, const char *extra_short, agent_cli_extra_fn fn, void *ctx)
{
	static const struct option common[] = {
		{"collector", required_argument, NULL, OPT_COLLECTOR},
		{"pid", required_argument, NULL, 'p'},
		{"all-cpus", no_argument, NULL, 'a'},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"spool", required_argument, NULL, OPT_SPOOL},
		{"spool-max", required_argument, NULL, OPT_SPOOL_MAX},
		{"agent-id", required_argument, NULL, OPT_AGENT_ID},
		{"flush-timeout", required_argument, NULL, OPT_FLUSH},
		{"token-file", required_argument, NULL, OPT_TOKEN},
		{"tls-ca", required_argument, NULL, OPT_TLS_CA},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
	};
	struct option all[MAX_LONGOPTS];
	size_t n = 0;
	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		all[n++] = common[i];
	for (const struct option *e = extra; e && e->name && n + 1 < MAX_LONGOPTS; e++)
		all[n++] = *e;
	all[n] = (struct option){NULL, 0, NULL, 0};
	char shorts[64];
	snprintf(shorts, sizeof(shorts), "+p:avqh%s", extra_short ? extra_short : "");

	bool need_target = cli->need_target, target_optional = cli->target_optional;
	memset(cli, 0, sizeof(*cli));
	cli->need_target = need_target;
	cli->target_optional = target_optional;
	cli->so.spool_dir = NULL;
	cli->so.spool_mb = CONFIG_SPOOL_MAX_MB;
	cli->so.flush_timeout_s = 5;
	bool have_pid = false;
	unsigned long v;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, all, NULL)) != -1) {
		switch (c) {
		case OPT_COLLECTOR:
			cli->so.collector = optarg;
			break;
		case 'p':
			if (agent_cli_ulong(optarg, INT_MAX, &v) < 0 || v == 0) {
				log_error("-p: '%s' is not a process id", optarg);
				return EXIT_USAGE;
			}
			cli->to.pid = (pid_t)v;
			have_pid = true;
			break;
		case 'a':
			cli->to.all = true;
			break;
		case OPT_DURATION:
			if (agent_cli_seconds(optarg, 0.001, &cli->to.duration_s) < 0) {
				log_error("--duration: expected seconds from 0.001 to %.0f (10 years) (got '%s')",
					  AGENT_CLI_MAX_SECONDS, optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_SPOOL:
			cli->so.spool_dir = optarg;
			break;
		case OPT_SPOOL_MAX:
			if (agent_cli_ulong(optarg, 1u << 20, &v) < 0 || v == 0) {
				log_error("--spool-max: expected a size in MiB >= 1 (got '%s')", optarg);
				return EXIT_USAGE;
			}
			cli->so.spool_mb = (unsigned)v;
			break;
		case OPT_AGENT_ID:
			if (!optarg[0] || strlen(optarg) > 128) {
				log_error("--agent-id: expected 1..128 characters");
				return EXIT_USAGE;
			}
			cli->so.agent_id = optarg;
			break;
		case OPT_FLUSH:
			if (agent_cli_seconds(optarg, 0, &cli->so.flush_timeout_s) < 0) {
				log_error("--flush-timeout: expected seconds from 0 to %.0f (got '%s')", AGENT_CLI_MAX_SECONDS,
					  optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_TOKEN:
			cli->so.token_file = optarg;
			break;
		case OPT_TLS_CA:
			cli->so.tls_ca = optarg;
			break;
		case 'v':
			cli->verbose = 1;
			break;
		case 'q':
			cli->verbose = -1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case '?':
		case ':':
			if (optopt && optopt < 256)
				log_error("%s: unknown option or missing argument: -%c (see agent %s --help)", argv[0],
					  optopt, argv[0]);
			else
				log_error("%s: unknown option or missing argument: %s (see agent %s --help)", argv[0],
					  argv[optind - 1], argv[0]);
			return EXIT_USAGE;
		default:
			if (fn) {
				int rc = fn(ctx, c, optarg);
				if (rc != 0)
					return rc;
				break;
			}
			log_error("%s: unexpected option (see agent %s --help)", argv[0], argv[0]);
			return EXIT_USAGE;
		}
	}
	if (cli->verbose > 0)
		log_set_level(LOG_LEVEL_DEBUG);
	else if (cli->verbose < 0)
		log_set_level(LOG_LEVEL_ERROR);
	if (optind < argc)
		cli->to.cmd = &argv[optind];
	if (!cli->so.collector) {
		log_error("--collector HOST:PORT is required (where the collector listens, e.g. 127.0.0.1:7412)");
		return EXIT_USAGE;
	}
	struct sockaddr_storage ss;
	socklen_t sl;
	if (net_parse_hostport(cli->so.collector, &ss, &sl) < 0) {
		log_error("bad --collector '%s': expected HOST:PORT with an IPv4 address, localhost or [IPv6] (e.g. "
			  "127.0.0.1:7412)",
			  cli->so.collector);
		return EXIT_USAGE;
	}
	if (!cli->so.spool_dir) {
		if (spool_scope_dir(cli->spool_buf, sizeof(cli->spool_buf), DEFAULT_SPOOL_DIR, cli->so.agent_id,
				    cli->so.collector) < 0) {
			log_error("the default spool path is too long: pass --spool DIR");
			return EXIT_USAGE;
		}
		cli->so.spool_dir = cli->spool_buf;
	}
	int ntargets = have_pid + cli->to.all + (cli->to.cmd != NULL);
	if (cli->need_target && ntargets != 1 && !(cli->target_optional && ntargets == 0)) {
		log_error("give exactly one target: -p PID, -a (system-wide) or -- CMD [ARGS...]");
		return EXIT_USAGE;
	}
	if (!cli->need_target && ntargets != 0) {
		log_error("%s takes no target (-p, -a or a command)", argv[0]);
		return EXIT_USAGE;
	}
	return -1;
}

int agent_cli_exit_status(const struct session *s, int status)
{
	return status ? status : session_left(s) ? EXIT_AGENT_ERROR : 0;
}

FILE *agent_cli_summary_open(const struct agent_cli *cli)
{
	if (cli->verbose >= 0)
		return stderr;
	char path[PATH_MAX];
	FILE *f = NULL;
	if (cli->so.spool_dir && snprintf(path, sizeof(path), "%s/run-summary.txt", cli->so.spool_dir) < (int)sizeof(path))
		f = fopen(path, "ae");
	if (!f)
		f = fopen("/dev/null", "we");
	return f ? f : stderr; /* never NULL */
}

void agent_cli_summary_close(FILE *f)
{
	if (f && f != stderr)
		fclose(f);
}
