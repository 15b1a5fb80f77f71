/* The capture library's link to the agent: a non-blocking SOCK_SEQPACKET
 * unix socket (PROF_CL_SOCKET, "@name" = abstract) and a bounded queue of
 * datagrams (each a batch of encoded messages) in front of it. Used by the
 * reaper thread, and with a ring by an app thread draining after its wait,
 * under track.c's work_mu, never otherwise by the app's threads, except the
 * one-shot note a process sends when the library starts (pcl_send_note). When the agent
 * is absent, gone or too slow, datagrams are dropped and their commands
 * counted; nothing here ever waits past a deadline. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ring.h"
#include "send.h"

#define OUT_MAX_BYTES (8u << 20)   /* datagrams waiting for the socket, in bytes */
#define SNDBUF_BYTES (1 << 20)
#define RECONNECT_NS 1000000000ull /* between connection attempts */
#define ALIVE_CHECK_NS 50000000ull /* with a ring: how often the socket is asked whether the agent is there */

struct msg {
	struct msg *next;
	uint32_t len, ncmd; /* bytes; commands in it */
	uint8_t buf[];
};

static int sock = -1;
static bool ever_connected;
static uint64_t next_try_ns;
static struct msg *head, *tail;
static size_t out_bytes;
static uint64_t drops; /* datagrams dropped: the kernels they declared must be declared again */
static uint64_t alive_checked_ns; /* with a ring: when the agent was last seen there */

static int connect_agent(void)
{
	const char *path = getenv(PCL_ENV_SOCKET);
	if (!path || !*path)
		return -ENOENT;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(path);
	if (n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = 0; /* abstract namespace */
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int sndbuf = SNDBUF_BYTES; /* room for bursts of short commands (capped by wmem_max) */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

static void drop_all(void)
{
	while (head) {
		struct msg *m = head;
		head = m->next;
		pcl_count_dropped(m->ncmd);
		drops++;
		free(m);
	}
	tail = NULL;
	out_bytes = 0;
}

static void disconnect(const char *why, int err)
{
	if (sock >= 0) {
		pcl_log("agent connection lost (%s: %s): dropping records from now on", why, strerror(err));
		ever_connected = true;
		close(sock);
		sock = -1;
	}
	drop_all();
}

static bool ensure_connected(uint64_t now)
{
	if (sock >= 0)
		return true;
	if (now < next_try_ns)
		return false;
	next_try_ns = now + RECONNECT_NS;
	int fd = connect_agent();
	if (fd < 0) {
		if (!ever_connected)
			pcl_log("no agent at %s=%s (%s): records are dropped and counted", PCL_ENV_SOCKET,
				getenv(PCL_ENV_SOCKET) ? getenv(PCL_ENV_SOCKET) : "(unset)", strerror(-fd));
		return false;
	}
	sock = fd;
	ever_connected = true;
	struct pcl_proc p = {.pid = pcl_pid(), .mode = (uint32_t)pcl_mode, .dropped = pcl_dropped()};
	uint8_t buf[PCL_MSG_MAX];
	int len = pcl_encode_proc(PCL_MSG_HELLO, &p, buf, sizeof(buf));
	if (len < 0 || send(sock, buf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) != len) {
		disconnect("hello", errno ? errno : EIO);
		return false;
	}
	pcl_log("connected to the agent at %s", getenv(PCL_ENV_SOCKET));
	return true;
}

static bool agent_alive(void);

/* With a ring: whether the agent still reads it, asked of the socket at most every ALIVE_CHECK_NS
 * (a poll per reaper visit was a system call per visit, issue #41) and always at the exit. When it
 * is gone the ring is abandoned and what waits for it dropped. */
static bool ring_reader_alive(uint64_t now, bool exiting)
{
	if (!exiting && alive_checked_ns && now - alive_checked_ns < ALIVE_CHECK_NS)
		return true;
	if (agent_alive()) {
		alive_checked_ns = now;
		return true;
	}
	pcl_ring_abandon(); /* nobody reads it any more */
	disconnect("agent gone", ECONNRESET);
	return false;
}

bool pcl_send_queue(const uint8_t *buf, size_t len, uint32_t ncmd)
{
	/* With a ring and nothing waiting for it: straight in (no copy of the datagram to the queue). */
	if (!head && pcl_ring_active() && ring_reader_alive(pcl_now_ns(), false) &&
	    pcl_ring_write(buf, len, ncmd)) {
		pcl_count_sent(ncmd);
		return true;
	}
	struct msg *m = NULL;
	if (out_bytes + len <= OUT_MAX_BYTES && (pcl_ring_active() || !(sock < 0 && ever_connected)))
		m = malloc(sizeof(*m) + len);
	if (!m) {
		pcl_count_dropped(ncmd);
		drops++;
		return false;
	}
	m->next = NULL;
	m->len = (uint32_t)len;
	m->ncmd = ncmd;
	memcpy(m->buf, buf, len);
	if (tail)
		tail->next = m;
	else
		head = m;
	tail = m;
	out_bytes += len;
	return true;
}

uint64_t pcl_send_drops(void)
{
	return drops;
}

/* With a ring: as many datagrams as it has room for (the rest wait for the agent to read). */
static bool flush_ring(void)
{
	while (head && pcl_ring_write(head->buf, head->len, head->ncmd)) {
		struct msg *m = head;
		head = m->next;
		if (!head)
			tail = NULL;
		out_bytes -= m->len;
		pcl_count_sent(m->ncmd);
		free(m);
	}
	return head == NULL;
}

/* With a ring the socket only says whether the agent is still there: it never sends to us, so
 * anything readable is its end of the connection. */
static bool agent_alive(void)
{
	struct pollfd pfd = {.fd = sock, .events = POLLIN};
	if (sock < 0)
		return false;
	if (poll(&pfd, 1, 0) <= 0)
		return true;
	if (pfd.revents & (POLLHUP | POLLERR))
		return false;
	char b;
	ssize_t n = recv(sock, &b, 1, MSG_DONTWAIT | MSG_PEEK);
	return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR));
}

bool pcl_send_link(void)
{
	int fd = connect_agent();
	if (fd < 0)
		return false;
	sock = fd;
	ever_connected = true;
	return true;
}

bool pcl_send_flush(uint64_t now)
{
	if (!head)
		return true;
	if (pcl_ring_active())
		return ring_reader_alive(now, false) ? flush_ring() : true;
	if (!ensure_connected(now)) {
		if (ever_connected || !getenv(PCL_ENV_SOCKET) || now >= pcl_start_ns() + RECONNECT_NS)
			drop_all();
		return head == NULL;
	}
	while (head) {
		ssize_t n = send(sock, head->buf, head->len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return false;
			if (errno == EINTR)
				continue;
			disconnect("send", errno);
			return true;
		}
		struct msg *m = head;
		head = m->next;
		if (!head)
			tail = NULL;
		out_bytes -= m->len;
		pcl_count_sent(m->ncmd);
		free(m);
	}
	return true;
}

int pcl_send_wait(int timeout_ms)
{
	if (pcl_ring_active() && head) { /* the ring is full: give the agent time to read */
		usleep((useconds_t)timeout_ms * 1000u);
		return 0;
	}
	if (sock < 0 || !head)
		return 0;
	struct pollfd pfd = {.fd = sock, .events = POLLOUT};
	return poll(&pfd, 1, timeout_ms);
}

bool pcl_send_empty(void)
{
	return head == NULL;
}

bool pcl_send_connected(void)
{
	if (pcl_ring_active()) /* asked at the exit and when the ring is full: the socket says */
		return ring_reader_alive(pcl_now_ns(), true);
	return sock >= 0;
}

void pcl_send_drop_rest(void)
{
	drop_all();
}

void pcl_send_after_fork(void)
{
	if (sock >= 0)
		close(sock);
	sock = -1;
	ever_connected = false;
	next_try_ns = 0;
	alive_checked_ns = 0;
	head = tail = NULL; /* the parent's messages: not ours to send (leaked, bounded) */
	out_bytes = 0;
}

void pcl_send_note(uint32_t flags, const char *detail)
{
	int fd = connect_agent();
	if (fd < 0)
		return;
	struct pcl_proc p = {.pid = pcl_pid(), .mode = (uint32_t)pcl_mode, .flags = flags};
	snprintf(p.detail, sizeof(p.detail), "%s", detail ? detail : "");
	uint8_t buf[PCL_MSG_MAX];
	int len = pcl_encode_proc(PCL_MSG_NOTE, &p, buf, sizeof(buf));
	if (len > 0 && send(fd, buf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) != len)
		pcl_log("cannot tell the agent what the library found: %s", strerror(errno));
	close(fd);
}
