/* collector: receives agent records over TCP into an SQLite store; also the
 * query subcommands (`sessions`, `dump`). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "auth.h"
#include "cli/cli.h"
#include "frame.h"
#include "generated/config.h"
#include "log.h"
#include "query/query.h"
#include "server/downsampler.h"
#include "server/http.h"
#include "server/server.h"
#include "store/store.h"
#include "symbols.h"

#define COLLECTOR_VERSION "0.1.0"
#define DEFAULT_LISTEN "127.0.0.1:7412"

#define SERVE_SYNOPSIS                                                                                       \
	"usage: collector [--listen HOST:PORT] --store PATH [--port-file FILE] [--sync full|normal]\n"       \
	"                 [--max-conns N] [--http HOST:PORT] [--token-file F] [--max-rate N]\n"              \
	"                 [--max-sessions-per-agent N] [--hello-timeout S] [--idle-timeout S]\n"             \
	"                 [--tls-cert F --tls-key F] [--max-frame-kb N] [--max-frame-memory MB]\n"           \
	"                 [--http-timeout S] [--http-render-timeout S] [--http-no-auth]\n"                   \
	"                 [--seq-window N] [--retain DURATION] [--init] [--check auto|full|quick|off] "      \
	"[--store-timeout MS] [--debug-dir DIR] [-v] [-q]\n"                                                 \
	"                 [--downsample-after DURATION [--downsample-per DURATION]]\n"                      \
	"                 [--compact-after DURATION [--compact-per DURATION]]\n"

static const char serve_help[] =
	"\n"
	"Receive agent records on HOST:PORT (default " DEFAULT_LISTEN "; port 0 picks a free port)\n"
	"and store them in PATH: an SQLite file (created if missing, mode 0600) or a postgresql:// URI.\n"
	"  --port-file FILE  write the port actually bound (decimal + newline) to FILE\n"
	"  --sync MODE       full (default): an ack means the record survives a power cut (SQLite\n"
	"                    synchronous=FULL; PostgreSQL: the collector's sessions run with\n"
	"                    synchronous_commit=on, whatever the server's default, and the start is\n"
	"                    refused if that does not hold); normal: faster, an ack survives a\n"
	"                    collector crash only (PostgreSQL: the server's synchronous_commit applies)\n"
	"  --store-timeout MS  PostgreSQL: statement and lock timeout of the collector's sessions, and\n"
	"                    the longest the loop waits for the server (MS + 1 s) before it gives the\n"
	"                    connection up, tells agents to retry later and reconnects (default 5000)\n"
	"  --max-conns N     simultaneous agent connections (default 1024)\n"
	"  --http HOST:PORT  also serve the session list and reports (HTML, JSON, SVG) over HTTP\n"
	"  --http-timeout S  HTTP requests must arrive whole within S seconds, else 408 (default 10)\n"
	"  --http-render-timeout S  a page not rendered within S seconds gets 503 (default 30; pages\n"
	"                    are rendered by worker threads, never on the agents' loop)\n"
	"  --http-no-auth    allow a non-loopback --http address without --token-file: the reports\n"
	"                    are then served to anyone who can reach it (logged as a warning).\n"
	"                    With --token-file, a non-loopback --http needs the HTTP key (Bearer, or\n"
	"                    any user name with the key as password): collector http-key prints it\n"
	"  --token-file F    agents must prove this shared token (HMAC of a per-connection\n"
	"                    challenge); required to listen on a non-loopback address\n"
	"  --max-rate N      records/s per connection; reading pauses above it (default 5000,\n"
	"                    0: unlimited)\n"
	"  --max-sessions-per-agent N  open connections per agent id (default 4)\n"
	"  --hello-timeout S close connections that sent no Hello (or did not finish the TLS\n"
	"                    handshake) after S seconds (default 10)\n"
	"  --idle-timeout S  close agents that sent nothing (not even a heartbeat, every 10 s)\n"
	"                    for S seconds (default 60; 0: never)\n"
	"  --tls-cert F --tls-key F  TLS on every connection: certificate chain and private key\n"
	"                    (PEM); agents then need --tls-ca (the CA that signed it)\n"
	"  --max-frame-kb N  largest frame accepted, KiB (default CONFIG_MAX_FRAME_KB)\n"
	"  --max-frame-memory MB  memory of all connections together for frames larger than 4 KiB\n"
	"                    being received (default 64; at least two frames): over it, connections\n"
	"                    that have held a partial frame longest (1 s at least) are closed\n"
	"  --seq-window N    a record seq more than N above its session's highest stored seq\n"
	"                    is refused and the connection closed (default 65536; 0: no check)\n"
	"  --retain D        once a minute (D/10 if shorter), delete samples older than D (30m, 12h,\n"
	"                    7d) and sessions\n"
	"                    last seen before then (as collector prune; sessions being written only\n"
	"                    lose old rows, calibration sessions stay)\n"
	"  --downsample-after D  in a background thread, once a minute (D/10 if shorter), the CPU\n"
	"                    samples of records older than D (7d, 12h) summed per window of\n"
	"                    --downsample-per (default 1m) as collector downsample does: totals kept,\n"
	"                    a window's time resolution; at most 64 windows a pass (off by default:\n"
	"                    it gives up time resolution for good)\n"
	"  --compact-after D the same merge over a short window, --compact-per (default 16s), for\n"
	"                    records older than D (1m, 1h): fewer, larger compressed blocks, so a\n"
	"                    report over a long range takes ~2.6x less CPU (16s); time resolution\n"
	"                    W (off by default)\n"
	"  --debug-dir DIR   the live pages look for separate debug files by build-id under\n"
	"                    DIR/.build-id/ too (before /usr/lib/debug): stripped binaries named\n"
	"  --init            an existing empty (0-byte) --store file may become a new store\n"
	"                    (without it such a file is refused: it is no store)\n"
	"  --check MODE      check the SQLite store before writing into it: quick (default;\n"
	"                    quick_check, at most 5 s), full (integrity_check, however long) or\n"
	"                    off; a damaged store is refused with how to recover it\n"
	"  -v, -q            more (debug) / less (warnings only) logging\n"
	"Connections that have not sent a record yet (before and after their Hello) may hold 1/4 of\n"
	"--max-conns, 1/8 from one address; more evict one of them, from the address that holds the\n"
	"most. A Hello alone writes nothing: a session row is created by its first record. One\n"
	"connection per session (agent id + boot id) at a time.\n"
	"SIGINT/SIGTERM: stop accepting, commit what is buffered, send the last acks, exit 0.\n"
	"\n";

/* The usage, generated from the command table (cli_commands.c). */
static void usage(FILE *f, bool full)
{
	fputs(SERVE_SYNOPSIS, f);
	cli_commands_usage(f);
	fputs("       collector --help | --version\n", f);
	if (!full) {
		fputs("Run 'collector --help' for details.\n", f);
		return;
	}
	fputs(serve_help, f);
	cli_commands_help(f);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("collector: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n", stderr);
	usage(stderr, false);
	return 2;
}

static int write_port_file(const char *path, uint16_t port)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
		log_error("port file path too long: %s", path);
		return -ENAMETOOLONG;
	}
	FILE *f = fopen(tmp, "w");
	if (!f) {
		int err = errno;
		log_error(
		    "cannot write the port file %s: %s: check that its directory exists and is writable", tmp,
		    strerror(err));
		return -err;
	}
	fprintf(f, "%u\n", port);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad || rename(tmp, path) < 0) {
		int err = errno ? errno : EIO;
		log_error("cannot write the port file %s: %s", path, strerror(err));
		unlink(tmp);
		return -err;
	}
	return 0;
}

/* Enough descriptors for max_conns connections plus the store and the loop. */
static void raise_fd_limit(unsigned max_conns)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	rlim_t want = (rlim_t)max_conns + 64;
	if (rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < want)
		log_warn("open-files limit %llu is below --max-conns %u + 64: connections beyond it will be "
			 "refused "
			 "(raise it with ulimit -n)",
			 (unsigned long long)rl.rlim_cur, max_conns);
}

struct serve_args {
	const char *listen, *store, *port_file, *http, *token_file, *tls_cert, *tls_key;
	bool sync_full, init, http_no_auth;
	unsigned check; /* STORE_CHECK_* flags */
	unsigned max_conns, max_rate, max_per_agent, hello_timeout_s, max_frame_kb, idle_timeout_ms, http_timeout_s;
	unsigned http_render_timeout_s, max_frame_memory_mb;
	uint64_t seq_window;
	unsigned store_timeout_ms;
	uint64_t retain_ns;
	int64_t downsample_after_ns, downsample_per_ns;
	int64_t compact_after_ns, compact_per_ns;
};

static int serve(const struct serve_args *a)
{
	raise_fd_limit(a->max_conns);
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
		log_error("cannot block SIGINT/SIGTERM: %s", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN); /* TLS writes go through write(2) */
	int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		log_error("cannot create a signalfd: %s", strerror(errno));
		return 1;
	}
	struct store *st = NULL;
	struct server *srv = NULL;
	struct http_server *http = NULL;
	struct downsampler *down = NULL;
	int status = 1;
	static struct auth_token token;
	if (a->token_file) {
		char err[512];
		if (auth_token_load(a->token_file, &token, err, sizeof(err)) < 0) {
			log_error("%s", err);
			close(sfd);
			return 1;
		}
	}
	struct server_options opt = {.listen = a->listen,
				     .max_conns = a->max_conns,
				     .signal_fd = sfd,
				     .token = a->token_file ? &token : NULL,
				     .max_rate = a->max_rate,
				     .max_sessions_per_agent = a->max_per_agent,
				     .hello_timeout_ms = a->hello_timeout_s * 1000u,
				     .idle_timeout_ms = a->idle_timeout_ms,
				     .tls_cert = a->tls_cert,
				     .tls_key = a->tls_key,
				     .max_frame = (size_t)a->max_frame_kb * 1024u,
				     .max_frame_memory = (size_t)a->max_frame_memory_mb << 20,
				     .seq_window = a->seq_window,
				     .retain_ns = a->retain_ns};
	if (store_open_timeout(a->store, (a->sync_full ? STORE_SYNC_FULL : 0) | (a->init ? STORE_INIT : 0) | a->check,
			       a->store_timeout_ms, sfd, &st) < 0)
		goto out;
	char durability[320];
	if (store_durability(st, durability, sizeof(durability)) < 0) {
		log_error("store %s: %s: refused (an ack must mean a durable commit); use --sync normal to accept "
			  "the server's setting",
			  store_name(st), durability);
		goto out;
	}
	if (a->http) {
		struct http_limits hl = {.head_timeout_ms = a->http_timeout_s * 1000u,
					 .render_timeout_ms = a->http_render_timeout_s * 1000u,
					 .token = a->token_file ? &token : NULL,
					 .no_auth = a->http_no_auth};
		if (http_open(a->http, a->store, &hl, &http) < 0)
			goto out;
		opt.extra_fd = http_fd(http);
		opt.extra_ready = http_ready;
		opt.extra_arg = http;
	}
	if (server_open(st, &opt, &srv) < 0)
		goto out;
	if (a->port_file && write_port_file(a->port_file, server_port(srv)) < 0)
		goto out;
	struct downsampler_tier tiers[DOWNSAMPLER_MAX_TIERS];
	size_t ntiers = 0;
	if (a->compact_after_ns)
		tiers[ntiers++] =
		    (struct downsampler_tier){"--compact-after", a->compact_after_ns, a->compact_per_ns};
	if (a->downsample_after_ns)
		tiers[ntiers++] =
		    (struct downsampler_tier){"--downsample-after", a->downsample_after_ns, a->downsample_per_ns};
	if (ntiers && downsampler_start(a->store, tiers, ntiers, &down) < 0)
		goto out;
	log_info("storing into %s (sync %s: %s), schema %u", store_name(st), a->sync_full ? "full" : "normal",
		 durability, PROF_SCHEMA_VERSION);
	status = server_run(srv) < 0 ? 1 : 0;
out:
	downsampler_stop(down);
	server_close(srv);
	http_close(http);
	store_close(st);
	close(sfd);
	auth_token_wipe(&token);
	return status;
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || !*s || *end || s[0] == '-' || v < lo || v > hi)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

int main(int argc, char **argv)
{
	log_init("collector", LOG_LEVEL_INFO);
	if (argc > 1 && argv[1][0] != '-') {
		const struct cli_command *c = cli_command_find(argv[1]);
		if (!c)
			return usage_error("unknown command '%s'", argv[1]);
		return c->run(argc - 1, argv + 1);
	}
	static const struct option opts[] = {
	    {"listen", required_argument, NULL, 'l'},	 {"store", required_argument, NULL, 's'},
	    {"port-file", required_argument, NULL, 'p'}, {"sync", required_argument, NULL, 'y'},
	    {"max-conns", required_argument, NULL, 'm'}, {"verbose", no_argument, NULL, 'v'},
	    {"quiet", no_argument, NULL, 'q'},		 {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},	 {"http", required_argument, NULL, 'H'},
	    {"token-file", required_argument, NULL, 'T'}, {"max-rate", required_argument, NULL, 'R'},
	    {"max-sessions-per-agent", required_argument, NULL, 'A'},
	    {"hello-timeout", required_argument, NULL, 'O'}, {"max-frame-kb", required_argument, NULL, 'F'},
	    {"idle-timeout", required_argument, NULL, 'I'}, {"tls-cert", required_argument, NULL, 'C'},
	    {"tls-key", required_argument, NULL, 'K'}, {"init", no_argument, NULL, 'Z'},
	    {"http-timeout", required_argument, NULL, 'W'}, {"seq-window", required_argument, NULL, 'Q'},
	    {"check", required_argument, NULL, 'k'},
	    {"http-render-timeout", required_argument, NULL, 'X'}, {"http-no-auth", no_argument, NULL, 'N'},
	    {"max-frame-memory", required_argument, NULL, 'M'},
	    {"store-timeout", required_argument, NULL, 'S'},
	    {"retain", required_argument, NULL, 'r'},
	    {"downsample-after", required_argument, NULL, 1001},
	    {"downsample-per", required_argument, NULL, 1002},
	    {"compact-after", required_argument, NULL, 1003},
	    {"compact-per", required_argument, NULL, 1004},
	    {"debug-dir", required_argument, NULL, 'D'},
	    {NULL, 0, NULL, 0}};
	struct serve_args a = {.listen = DEFAULT_LISTEN,
			       .sync_full = true,
			       .max_conns = SERVER_DEFAULT_MAX_CONNS,
			       .check = STORE_CHECK_QUICK,
			       .downsample_per_ns = 60000000000ll /* a minute */,
			       .compact_per_ns = 16000000000ll /* 16 s */};
	bool downsample_per_given = false, compact_per_given = false;
	int ch;
	while ((ch = getopt_long(argc, argv, "vqh", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			a.listen = optarg;
			break;
		case 's':
			a.store = optarg;
			break;
		case 'p':
			a.port_file = optarg;
			break;
		case 'y':
			if (strcmp(optarg, "full") == 0)
				a.sync_full = true;
			else if (strcmp(optarg, "normal") == 0)
				a.sync_full = false;
			else
				return usage_error("--sync wants full or normal, not '%s'", optarg);
			break;
		case 'm':
			if (parse_uint(optarg, 1, 1000000, &a.max_conns) < 0)
				return usage_error("--max-conns wants a number from 1 to 1000000, not '%s'",
						   optarg);
			break;
		case 'H':
			a.http = optarg;
			break;
		case 'T':
			a.token_file = optarg;
			break;
		case 'R':
			if (parse_uint(optarg, 0, 100000000, &a.max_rate) < 0)
				return usage_error("--max-rate wants records per second (0: unlimited), not '%s'",
						   optarg);
			if (a.max_rate == 0)
				a.max_rate = SERVER_UNLIMITED_RATE;
			break;
		case 'A':
			if (parse_uint(optarg, 1, 100000, &a.max_per_agent) < 0)
				return usage_error("--max-sessions-per-agent wants a number from 1 to 100000, not '%s'",
						   optarg);
			break;
		case 'O':
			if (parse_uint(optarg, 1, 3600, &a.hello_timeout_s) < 0)
				return usage_error("--hello-timeout wants seconds from 1 to 3600, not '%s'", optarg);
			break;
		case 'I': {
			unsigned v;
			if (parse_uint(optarg, 0, 86400, &v) < 0)
				return usage_error("--idle-timeout wants seconds from 0 (never) to 86400, not '%s'", optarg);
			a.idle_timeout_ms = v ? v * 1000u : SERVER_NO_IDLE_TIMEOUT;
			break;
		}
		case 'Z':
			a.init = true;
			break;
		case 'S':
			if (parse_uint(optarg, 100, 600000, &a.store_timeout_ms) < 0)
				return usage_error("--store-timeout wants milliseconds from 100 to 600000, not '%s'",
						   optarg);
			break;
		case 'k':
			if (store_check_flags(optarg, &a.check) < 0)
				return usage_error("--check wants auto, full, quick or off, not '%s'",
						   optarg);
			break;
		case 'W':
			if (parse_uint(optarg, 1, 3600, &a.http_timeout_s) < 0)
				return usage_error("--http-timeout wants seconds from 1 to 3600, not '%s'", optarg);
			break;
		case 'X':
			if (parse_uint(optarg, 1, 3600, &a.http_render_timeout_s) < 0)
				return usage_error("--http-render-timeout wants seconds from 1 to 3600, not '%s'", optarg);
			break;
		case 'N':
			a.http_no_auth = true;
			break;
		case 'M':
			if (parse_uint(optarg, 1, 1048576, &a.max_frame_memory_mb) < 0)
				return usage_error("--max-frame-memory wants MiB from 1 to 1048576, not '%s'", optarg);
			break;
		case 1001:
			if (query_parse_duration(optarg, &a.downsample_after_ns) < 0)
				return usage_error("--downsample-after wants a duration (12h, 7d, 2w), not '%s'", optarg);
			break;
		case 1002:
			if (query_parse_duration(optarg, &a.downsample_per_ns) < 0)
				return usage_error("--downsample-per wants a duration (1m, 1h), not '%s'", optarg);
			downsample_per_given = true;
			break;
		case 1003:
			if (query_parse_duration(optarg, &a.compact_after_ns) < 0)
				return usage_error("--compact-after wants a duration (1m, 1h), not '%s'", optarg);
			break;
		case 1004:
			if (query_parse_duration(optarg, &a.compact_per_ns) < 0)
				return usage_error("--compact-per wants a duration (16s, 1m), not '%s'", optarg);
			compact_per_given = true;
			break;
		case 'r': {
			int64_t ns;
			if (query_parse_duration(optarg, &ns) < 0)
				return usage_error("--retain wants a duration (30m, 12h, 7d, 2w), not '%s'", optarg);
			a.retain_ns = (uint64_t)ns;
			break;
		}
		case 'Q': {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || !*optarg || *end || optarg[0] == '-')
				return usage_error("--seq-window wants a number of records (0: no check), not '%s'",
						   optarg);
			a.seq_window = v ? (uint64_t)v : SERVER_NO_SEQ_WINDOW;
			break;
		}
		case 'D':
			sym_set_process_debug_dir(optarg); /* before any thread starts */
			break;
		case 'C':
			a.tls_cert = optarg;
			break;
		case 'K':
			a.tls_key = optarg;
			break;
		case 'F':
			if (parse_uint(optarg, 4, CONFIG_MAX_FRAME_KB, &a.max_frame_kb) < 0) {
				fprintf(stderr, "collector: --max-frame-kb wants 4..%d KiB\n", CONFIG_MAX_FRAME_KB);
				return 2;
			}
			break;
		case 'v':
			log_set_level(LOG_LEVEL_DEBUG);
			break;
		case 'q':
			log_set_level(LOG_LEVEL_WARN);
			break;
		case 'h':
			usage(stdout, true);
			return 0;
		case 'V':
			printf("collector %s (wire schema %u, store schema %d)\n", COLLECTOR_VERSION,
			       PROF_SCHEMA_VERSION, STORE_SCHEMA_VERSION);
			return 0;
		default:
			usage(stderr, false);
			return 2;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!a.store)
		return usage_error("%s",
				   "--store PATH is required (the SQLite file to write, created if missing)");
	if (!a.tls_cert != !a.tls_key)
		return usage_error("%s", "TLS needs both --tls-cert FILE and --tls-key FILE");
	if (downsample_per_given && !a.downsample_after_ns)
		return usage_error("%s",
				   "--downsample-per W goes with --downsample-after D (the age past which "
				   "samples are summed per W)");
	if (compact_per_given && !a.compact_after_ns)
		return usage_error("%s",
				   "--compact-per W goes with --compact-after D (the age past which "
				   "records' sample blocks are merged per W)");
	return serve(&a);
}
