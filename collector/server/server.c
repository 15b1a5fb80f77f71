/* The collector's epoll loop: setup, one iteration, drain and stop (server_priv.h has the map). */
#include "server_priv.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "generated/config.h"
#include "log.h"
#include "net.h"
#include "store/store_kallsyms.h"
#include "store/store_keyids.h"
#include "tls.h"

static void read_stop_fd(struct server *s, int fd)
{
	union {
		struct signalfd_siginfo si;
		uint64_t counter;
		uint8_t raw[512];
	} u;
	ssize_t n = read(fd, &u, sizeof(u));
	if (fd == s->signal_fd && n == (ssize_t)sizeof(u.si))
		log_info("received %s: stopping (committing what is buffered)",
			 strsignal((int)u.si.ssi_signo));
	else
		log_info("stop requested: committing what is buffered");
	s->stopping = true;
}

static void stop_listening(struct server *s)
{
	if (s->listen_fd < 0)
		return;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->listen_fd, NULL);
	close(s->listen_fd);
	s->listen_fd = -1;
}

static void end_iteration(struct server *s)
{
	srv_batch_commit(s);
	struct conn *next;
	for (struct conn *c = s->conns; c; c = next) {
		next = c->next;
		if (c->closing)
			srv_conn_close(s, c);
	}
}

static void drain_and_stop(struct server *s)
{
	stop_listening(s);
	for (struct conn *c = s->conns; c; c = c->next)
		if (!c->closing)
			srv_conn_read(s, c, DRAIN_BUDGET);
	for (struct conn *c = s->conns; c; c = c->next)
		srv_conn_closing(s, c);
	end_iteration(s);
	s->stopped = true;
	log_info("stopped: %llu records stored, %llu duplicates, %llu connections, %llu closed for bad input; "
		 "store: %llu failures, %llu outages, %llu Hellos/records refused with a retry hint",
		 (unsigned long long)s->stats.records, (unsigned long long)s->stats.duplicates,
		 (unsigned long long)s->stats.accepted, (unsigned long long)s->stats.closed_bad,
		 (unsigned long long)s->stats.store_failures, (unsigned long long)s->stats.store_outages,
		 (unsigned long long)s->stats.store_retry_told);
	log_info("stats: %llu authentication failures, %llu Hello timeouts, %llu refused by "
		 "--max-sessions-per-agent, %llu throttled by --max-rate, %llu refused by --max-conns, "
		 "%llu TLS failures, %llu idle timeouts, %llu Hellos for a session already connected, %llu "
		 "Hellos for an agent id live on another host, %llu evicted before their first record (%llu young ones for fairness, %llu holding a session or agent "
		 "id), %llu closed for a seq beyond the window, %llu closed and %llu paused for frame memory (peak "
		 "%llu KiB)",
		 (unsigned long long)s->stats.auth_failed, (unsigned long long)s->stats.hello_timeouts,
		 (unsigned long long)s->stats.over_per_agent, (unsigned long long)s->stats.throttled,
		 (unsigned long long)s->stats.refused, (unsigned long long)s->stats.tls_failed,
		 (unsigned long long)s->stats.idle_timeouts, (unsigned long long)s->stats.session_busy,
		 (unsigned long long)s->stats.id_in_use,
		 (unsigned long long)s->stats.evicted, (unsigned long long)s->stats.evicted_fair,
		 (unsigned long long)s->stats.squatters_evicted, (unsigned long long)s->stats.seq_refused,
		 (unsigned long long)s->stats.frame_evicted, (unsigned long long)s->stats.frame_waits,
		 (unsigned long long)(s->stats.frame_mem_peak >> 10));
	if (s->store) {
		struct store_keyids_stats ks;
		store_keyids_stats(s->store, &ks);
		log_info("key ids: %llu session dictionaries loaded, %llu records written as whole keys for lack of room "
			 "in the writer's bound, %zu KiB held, %llu chunks met another writer's ids (keys encoded again)",
			 (unsigned long long)ks.loads, (unsigned long long)ks.fallbacks, ks.bytes >> 10,
			 (unsigned long long)ks.collisions);
	}
}

/* The epoll timeout: the caller's, shortened for the next throttle resume,
 * Hello / idle sweep and buffered TLS input. */
static int step_timeout(struct server *s, int timeout_ms, uint64_t now)
{
	if (srv_tls_input_pending(s))
		return 0;
	timeout_ms = srv_store_timeout(s, timeout_ms, now);
	timeout_ms = srv_snap_timeout(s, timeout_ms);
	uint64_t next = UINT64_MAX;
	for (struct conn *c = s->conns; c && s->nthrottled > 0; c = c->next)
		if (c->throttled && c->resume_ns < next)
			next = c->resume_ns;
	for (struct conn *c = s->conns; c; c = c->next)
		if ((!c->ing.hello_done || s->idle_timeout_ns) && !c->closing) {
			if (s->next_sweep_ns < next)
				next = s->next_sweep_ns;
			break;
		}
	if (next == UINT64_MAX)
		return timeout_ms;
	int ms = next <= now ? 0 : (int)((next - now + 999999u) / 1000000u);
	return timeout_ms < 0 || ms < timeout_ms ? ms : timeout_ms;
}

int server_step(struct server *s, int timeout_ms)
{
	if (s->stopped)
		return 1;
	if (s->store_damaged)
		return -EUCLEAN;
	struct epoll_event evs[MAX_EVENTS];
	int n = epoll_wait(s->epfd, evs, MAX_EVENTS,
			   s->stopping ? 0 : step_timeout(s, timeout_ms, clock_mono_ns()));
	if (n < 0) {
		if (errno != EINTR) {
			int err = errno;
			log_error("epoll_wait: %s", strerror(err));
			return -err;
		}
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		void *p = evs[i].data.ptr;
		if (p == &s->listen_fd) {
			if (!s->stopping)
				srv_accept_some(s);
		} else if (p == &s->stop_fd) {
			read_stop_fd(s, s->stop_fd);
		} else if (p == &s->signal_fd) {
			read_stop_fd(s, s->signal_fd);
		} else if (p == &s->extra_fd) {
			s->extra_ready(s->extra_arg);
		} else {
			struct conn *c = p;
			if (c->closing)
				continue;
			if (c->st.handshaking) {
				srv_conn_handshake(s, c);
				continue;
			}
			/* Over TLS a read may wait for EPOLLOUT and a write for EPOLLIN. */
			bool tls = c->st.tls != NULL;
			if ((evs[i].events & EPOLLOUT) || (tls && c->want_out))
				srv_conn_flush(s, c);
			if (((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || tls) && !c->throttled &&
			    !c->closing)
				srv_conn_read(s, c, READ_BUDGET);
		}
	}
	if (s->store_damaged) { /* no drain: nothing more goes into the store */
		end_iteration(s);
		return -EUCLEAN;
	}
	if (s->stopping) {
		drain_and_stop(s);
		return 1;
	}
	uint64_t now = clock_mono_ns();
	if (s->nthrottled > 0)
		srv_resume_throttled(s, now);
	srv_read_tls_pending(s);
	srv_sweep_deadlines(s, now);
	srv_store_tick(s, now);
	srv_snap_run(s, now);
	end_iteration(s);
	if (s->retain_ns && now >= s->next_retain_ns && !s->store_damaged)
		srv_retain(s, now);
	return s->store_damaged ? -EUCLEAN : 0;
}

int server_run(struct server *s)
{
	int rc;
	while ((rc = server_step(s, 1000)) == 0)
		;
	return rc < 0 ? rc : 0;
}

void server_request_stop(struct server *s)
{
	uint64_t one = 1;
	(void)!write(s->stop_fd, &one, sizeof(one));
}

void server_get_stats(const struct server *s, struct server_stats *st)
{
	*st = s->stats;
	st->conns = s->nconns;
}

uint16_t server_port(const struct server *s)
{
	return s->port;
}

static int listen_on(struct server *s, const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	if (net_parse_hostport(spec, &ss, &sl) < 0) {
		log_error(
		    "invalid listen address '%s': use HOST:PORT with an IP address, e.g. 127.0.0.1:7412",
		    spec ? spec : "(none)");
		return -EINVAL;
	}
	if (!net_is_loopback(&ss) && !s->token) {
		/* checked before binding: no socket ever listens there without a token */
		log_error("%s is not a loopback address: listening there requires --token-file FILE (agents "
			  "then prove the shared token); or listen on 127.0.0.1",
			  spec);
		return -EACCES;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int err = errno;
		log_error("cannot create a socket for %s: %s", spec, strerror(err));
		return -err;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, SOMAXCONN) < 0) {
		int err = errno;
		log_error("cannot listen on %s: %s: %s", spec, strerror(err),
			  err == EADDRINUSE ? "another collector running? pick another port in --listen"
					    : "check the address is one of this host's");
		close(fd);
		return -err;
	}
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
	net_format_addr((struct sockaddr *)&ss, s->addr, sizeof(s->addr));
	s->listen_fd = fd;
	return 0;
}

int server_open(struct store *store, const struct server_options *opt, struct server **out)
{
	*out = NULL;
	struct server *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->store = store;
	if (store && store_identity(store, s->store_id, sizeof(s->store_id)) < 0)
		s->store_id[0] = 0; /* acks without it: agents fall back to their markers as before */
	s->listen_fd = s->stop_fd = s->epfd = -1;
	s->signal_fd = opt->signal_fd;
	s->max_conns = opt->max_conns ? opt->max_conns : SERVER_DEFAULT_MAX_CONNS;
	s->max_frame = opt->max_frame ? opt->max_frame : (size_t)CONFIG_MAX_FRAME_KB * 1024u;
	s->max_prehello = opt->max_prehello ? opt->max_prehello : s->max_conns / SERVER_DEFAULT_PREHELLO_SHARE;
	s->max_prehello_per_addr =
	    opt->max_prehello_per_addr ? opt->max_prehello_per_addr : s->max_conns / SERVER_DEFAULT_PER_ADDR_SHARE;
	if (s->max_prehello == 0)
		s->max_prehello = 1;
	if (s->max_prehello_per_addr == 0)
		s->max_prehello_per_addr = 1;
	s->frame_budget = opt->max_frame_memory ? opt->max_frame_memory : SERVER_DEFAULT_FRAME_MEMORY;
	if (s->frame_budget < 2 * (s->max_frame + FRAME_VARINT_MAX))
		s->frame_budget = 2 * (s->max_frame + FRAME_VARINT_MAX); /* one frame and one kept Hello */
	s->seq_window = opt->seq_window == SERVER_NO_SEQ_WINDOW ? 0
			: opt->seq_window			 ? opt->seq_window
								 : SERVER_DEFAULT_SEQ_WINDOW;
	s->token = opt->token;
	s->max_rate = opt->max_rate ? opt->max_rate : SERVER_DEFAULT_MAX_RATE;
	s->max_per_agent = opt->max_sessions_per_agent ? opt->max_sessions_per_agent : SERVER_DEFAULT_MAX_PER_AGENT;
	s->hello_timeout_ns =
	    (uint64_t)(opt->hello_timeout_ms ? opt->hello_timeout_ms : SERVER_DEFAULT_HELLO_TIMEOUT_MS) * 1000000u;
	unsigned idle = opt->idle_timeout_ms ? opt->idle_timeout_ms : SERVER_DEFAULT_IDLE_TIMEOUT_MS;
	s->idle_timeout_ns = idle == SERVER_NO_IDLE_TIMEOUT ? 0 : (uint64_t)idle * 1000000u;
	s->retain_ns = opt->retain_ns;
	s->next_retain_ns = 0; /* a first pass at the first step */
	int rc = 0;
	if (opt->tls_cert || opt->tls_key) {
		char err[512];
		if (!opt->tls_cert || !opt->tls_key) {
			log_error("TLS needs both --tls-cert FILE and --tls-key FILE");
			rc = -EINVAL;
		} else if ((rc = tls_ctx_server(&s->tls, opt->tls_cert, opt->tls_key, err, sizeof(err))) < 0) {
			log_error("%s", err);
		}
		if (rc < 0) {
			server_close(s);
			return rc;
		}
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->epfd < 0 || s->stop_fd < 0) {
		rc = -errno;
		log_error("cannot create the event loop: %s", strerror(-rc));
	} else if ((rc = srv_addrs_init(s)) < 0) {
		log_error("cannot create the event loop: %s", strerror(-rc));
	}
	if (rc == 0)
		rc = listen_on(s, opt->listen);
	if (rc == 0)
		rc = srv_epoll_set(s, EPOLL_CTL_ADD, s->listen_fd, EPOLLIN, &s->listen_fd);
	if (rc == 0)
		rc = srv_epoll_set(s, EPOLL_CTL_ADD, s->stop_fd, EPOLLIN, &s->stop_fd);
	if (rc == 0 && s->signal_fd >= 0)
		rc = srv_epoll_set(s, EPOLL_CTL_ADD, s->signal_fd, EPOLLIN, &s->signal_fd);
	s->extra_fd = opt->extra_ready ? opt->extra_fd : -1;
	s->extra_ready = opt->extra_ready;
	s->extra_arg = opt->extra_arg;
	if (rc == 0 && s->extra_fd >= 0)
		rc = srv_epoll_set(s, EPOLL_CTL_ADD, s->extra_fd, EPOLLIN, &s->extra_fd);
	if (rc < 0) {
		server_close(s);
		return rc;
	}
	store_set_loop_mode(s->store, s->stop_fd, s->signal_fd);
	char rate[32] = "unlimited";
	if (s->max_rate != SERVER_UNLIMITED_RATE)
		snprintf(rate, sizeof(rate), "%u", s->max_rate);
	char idle_s[32] = "never";
	if (s->idle_timeout_ns)
		snprintf(idle_s, sizeof(idle_s), "after %llu s", (unsigned long long)(s->idle_timeout_ns / 1000000000u));
	log_info("listening on %s (%s, %s; limits: frame %zu KiB, frame memory %zu MiB, %s records/s and %u "
		 "connections per agent id, Hello within %llu ms, idle close %s, %u connections of which %u (%u per "
		 "address) before their first record, seq window %llu)",
		 s->addr, s->tls ? "TLS" : "plain TCP", s->token ? "token required" : "no token", s->max_frame / 1024,
		 s->frame_budget >> 20, rate, s->max_per_agent, (unsigned long long)(s->hello_timeout_ns / 1000000u),
		 idle_s, s->max_conns, s->max_prehello, s->max_prehello_per_addr, (unsigned long long)s->seq_window);
	*out = s;
	return 0;
}

void server_close(struct server *s)
{
	if (!s)
		return;
	while (s->conns) {
		struct conn *c = s->conns;
		c->ing.send_error = false;
		srv_conn_close(s, c);
	}
	store_rollback(s->store);
	stop_listening(s);
	if (s->signal_fd >= 0 && s->epfd >= 0)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->signal_fd, NULL);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	if (s->epfd >= 0)
		close(s->epfd);
	tls_ctx_free(s->tls);
	srv_addrs_free(s);
	free(s);
}
