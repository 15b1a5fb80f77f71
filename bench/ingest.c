/* Collector ingest benchmark: N synthetic agents on loopback, each sends a
 * Hello and K Counters records (ROWS rows x EVENTS events each, like an agent
 * that batches intervals), then waits until the collector acked its last seq.
 * Prints one line: agents, records, samples, seconds, samples/s, records/s.
 * Usage: ingest PORT AGENTS RECORDS_PER_AGENT ROWS EVENTS */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "frame.h"
#include "net.h"

struct peer {
	int fd;
	uint8_t *out;
	size_t outlen, outoff;
	uint64_t next_seq, acked, total;
	struct frame_decoder dec;
};

static uint8_t *make_counters(uint64_t seq, int rows, int events, int declare, size_t *len)
{
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	Prof__Counters c = PROF__COUNTERS__INIT;
	Prof__EventDesc d[16], *dp[16];
	static const char *names[] = {"task-clock", "page-faults", "context-switches", "cpu-migrations",
				      "cycles",     "instructions", "cache-misses",   "branch-misses"};
	uint32_t ids[16];
	uint64_t t[256], v[256 * 16];
	for (int e = 0; e < events; e++) {
		ids[e] = (uint32_t)e + 1;
		prof__event_desc__init(&d[e]);
		d[e].id = ids[e];
		d[e].name = (char *)names[e % 8];
		dp[e] = &d[e];
	}
	for (int r = 0; r < rows; r++) {
		t[r] = r == 0 ? seq * 100000000ull : 100000000ull / (unsigned)rows;
		for (int e = 0; e < events; e++)
			v[r * events + e] = e == 0 ? 99000000u + (unsigned)(r * 1000) : (uint64_t)(r * 3 + e);
	}
	c.n_new_events = declare ? (size_t)events : 0;
	c.new_events = dp;
	c.n_event_ids = (size_t)events;
	c.event_ids = ids;
	c.n_t_ns = (size_t)rows;
	c.t_ns = t;
	c.n_values = (size_t)(rows * events);
	c.values = v;
	c.pid = 1234;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	uint8_t *buf = NULL;
	if (frame_encode(&env, 1 << 20, &buf, len) < 0)
		exit(1);
	return buf;
}

static void queue(struct peer *p, const uint8_t *buf, size_t len)
{
	if (p->outoff == p->outlen)
		p->outoff = p->outlen = 0;
	p->out = realloc(p->out, p->outlen + len);
	memcpy(p->out + p->outlen, buf, len);
	p->outlen += len;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: ingest PORT AGENTS RECORDS_PER_AGENT ROWS EVENTS\n");
		return 2;
	}
	int port = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]), rows = atoi(argv[4]),
	    events = atoi(argv[5]);
	if (n < 1 || n > 1000 || k < 1 || rows < 1 || rows > 256 || events < 1 || events > 16)
		return 2;
	struct peer *peers = calloc((size_t)n, sizeof(*peers));
	struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
	uint64_t run = clock_real_ns();
	for (int i = 0; i < n; i++) {
		struct peer *p = &peers[i];
		p->fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(p->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror("connect");
			return 1;
		}
		net_set_nonblock(p->fd);
		frame_decoder_init(&p->dec, 1 << 20);
		p->total = (uint64_t)k;
		p->next_seq = 1;
		Prof__Envelope env = PROF__ENVELOPE__INIT;
		Prof__Hello h = PROF__HELLO__INIT;
		char id[64];
		snprintf(id, sizeof(id), "bench-%d", i);
		h.schema_version = PROF_SCHEMA_VERSION;
		h.agent_id = id;
		h.boot_id = run + (uint64_t)i;
		h.board = "bench";
		env.body_case = PROF__ENVELOPE__BODY_HELLO;
		env.hello = &h;
		uint8_t *buf;
		size_t len;
		frame_encode(&env, 1 << 20, &buf, &len);
		queue(p, buf, len);
		free(buf);
	}
	uint64_t t0 = clock_mono_ns();
	int done = 0;
	size_t frame_bytes = 0;
	while (done < n) {
		for (int i = 0; i < n; i++) {
			struct peer *p = &peers[i];
			/* keep up to 64 records in flight per agent (an agent's spool replay) */
			while (p->next_seq <= p->total && p->next_seq <= p->acked + 64 && p->outlen - p->outoff < 65536) {
				size_t len;
				uint8_t *buf = make_counters(p->next_seq, rows, events, p->next_seq == 1, &len);
				frame_bytes += len;
				queue(p, buf, len);
				free(buf);
				p->next_seq++;
			}
			pfd[i].fd = p->acked >= p->total ? -1 : p->fd;
			pfd[i].events = POLLIN | (p->outoff < p->outlen ? POLLOUT : 0);
		}
		if (poll(pfd, (nfds_t)n, 10000) <= 0) {
			fprintf(stderr, "ingest: no progress for 10 s\n");
			return 1;
		}
		for (int i = 0; i < n; i++) {
			struct peer *p = &peers[i];
			if (pfd[i].fd < 0)
				continue;
			if (pfd[i].revents & POLLOUT) {
				ssize_t w = send(p->fd, p->out + p->outoff, p->outlen - p->outoff, MSG_NOSIGNAL);
				if (w > 0)
					p->outoff += (size_t)w;
			}
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				size_t avail;
				uint8_t *dst = frame_decoder_space(&p->dec, &avail);
				ssize_t r = read(p->fd, dst, avail);
				if (r <= 0) {
					fprintf(stderr, "ingest: agent %d: collector closed the connection\n", i);
					return 1;
				}
				frame_decoder_commit(&p->dec, (size_t)r);
				const uint8_t *pl;
				size_t plen;
				while (frame_decoder_next(&p->dec, &pl, &plen) == 1) {
					char err[128];
					Prof__Envelope *env = envelope_decode(pl, plen, err, sizeof(err));
					if (env && env->body_case == PROF__ENVELOPE__BODY_ACK && env->ack->seq > p->acked) {
						p->acked = env->ack->seq;
						if (p->acked >= p->total)
							done++;
					}
					if (env)
						prof__envelope__free_unpacked(env, NULL);
				}
			}
		}
	}
	double secs = (double)(clock_mono_ns() - t0) * 1e-9;
	double records = (double)n * k, samples = records * rows * events;
	printf("agents=%d records=%.0f samples=%.0f seconds=%.3f samples_per_s=%.0f records_per_s=%.0f "
	       "bytes_per_sample=%.2f\n",
	       n, records, samples, secs, samples / secs, records / secs, (double)frame_bytes / samples);
	for (int i = 0; i < n; i++) {
		close(peers[i].fd);
		free(peers[i].out);
		frame_decoder_free(&peers[i].dec);
	}
	free(peers);
	free(pfd);
	return 0;
}
