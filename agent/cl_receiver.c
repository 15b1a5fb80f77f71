#include "cl_receiver.h"
#include "generated/config.h"

#ifdef CONFIG_AGENT_OPENCL

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cl_batch_size.h"
#include "cl_layer/cl_msg.h"
#include "cl_ring_reader.h"
#include "kernel_model.h"
#include "log.h"
#include "net.h"
#include "opencl.pb-c.h"
#include "profiler.pb-c.h"

#define MAX_CLIENTS 64
#define MAX_KERNELS 65536
#define MAX_CLIENT_KERNEL_ID (1u << 20)
#define DGRAMS_PER_DISPATCH 64
#define BATCH_MAX 256 /* commands per ClCommandBatch record */
/* A batch goes when full or when its first command is this old (and at the drain): a program that
 * waits for each command has its ring read every 10 ms in a few dozen commands, and each record
 * costs the agent a spool file and a send and the collector a commit (issue #41). */
#define BATCH_AGE_NS 50000000ull
#define MAX_NOTES 64
#define MAX_RINGS 256 /* processes read at once; more wait in the directory */
#define RING_READ_NS 10000000ull /* rings are read every 10 ms, */
#define RING_SCAN_TICKS 10 /* the directory looked at every 10 reads */
#define RING_RECORDS_PER_READ 4096

struct client {
	int fd;
	int32_t pid;
	uint32_t mode;
	uint64_t commands, dropped;
	bool said_hello, said_bye;
	uint32_t *kmap; /* the process's kernel declaration id -> receiver kernel id */
	size_t nkmap;
	struct cl_ring *ring; /* a process's shared ring (fd -1), NULL for a socket */
	bool ring_bad;
};

/* What a process's library found when it started (PCL_MSG_NOTE). */
struct note {
	int32_t pid;
	uint32_t mode, flags;
	char detail[PCL_MAX_DETAIL + 1];
};

struct kernel {
	char *name, *options;
	uint64_t program_hash;
	uint32_t id;
	bool declared;
};

struct cl_receiver {
	struct session *s;
	int lfd;
	char address[108];
	struct client clients[MAX_CLIENTS];
	size_t nclients;
	char ringdir[4096]; /* "" without rings */
	struct client rings[MAX_RINGS];
	size_t nrings;
	struct loop_timer tick;
	unsigned ticks;
	uint64_t untimed; /* commands enqueued that no ring ever held (the process ended first) */
	struct kernel *kernels;
	size_t nkernels;
	uint64_t drop_gen;
	uint64_t commands, layer_dropped, bad, not_sent, processes;
	uint8_t buf[PCL_DGRAM_MAX + 1];
	struct pcl_msg msg;
	struct kernel_model_entry *model; /* agent profile --kernel-model */
	size_t nmodel;
	struct note notes[MAX_NOTES];
	size_t nnotes;
	/* The batch being built: the commands, their receiver kernel ids, their records. */
	struct pcl_cmd *bcmd;
	uint32_t bkernel[BATCH_MAX];
	Prof__ClCommand bm[BATCH_MAX];
	Prof__ClCommand *bmp[BATCH_MAX];
	Prof__ClKernelDesc bkd[BATCH_MAX];
	Prof__ClKernelDesc *bkdp[BATCH_MAX];
	uint64_t bwaits[BATCH_MAX][PCL_MAX_DEPS];
	size_t nb, bbytes;
	uint64_t bfirst_ns; /* when the batch's first command was added */
};

int cl_receiver_open(struct cl_receiver **out, char *err, size_t errlen)
{
	*out = NULL;
	struct cl_receiver *r = calloc(1, sizeof(*r));
	if (r && !(r->bcmd = malloc(BATCH_MAX * sizeof(*r->bcmd)))) {
		free(r);
		r = NULL;
	}
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	uint32_t rnd = 0;
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (uint32_t)clock_mono_ns();
	snprintf(r->address, sizeof(r->address), "@prof-cl-%d-%08x", (int)getpid(), rnd);
	r->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (r->lfd < 0) {
		int e = errno;
		snprintf(err, errlen, "opencl: cannot create the layer socket: %s", strerror(e));
		free(r->bcmd);
		free(r);
		return -e;
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(r->address);
	memcpy(sa.sun_path, r->address, n);
	sa.sun_path[0] = 0;
	if (bind(r->lfd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0 ||
	    listen(r->lfd, 16) < 0) {
		int e = errno;
		snprintf(err, errlen, "opencl: cannot listen on %s: %s", r->address, strerror(e));
		close(r->lfd);
		free(r->bcmd);
		free(r);
		return -e;
	}
	/* memory, not a disk: the rings are written at every reaper visit (tmpfs; /tmp may be on disk) */
	const char *dirs[] = {"/dev/shm", getenv("TMPDIR"), "/tmp"};
	int rc = -ENOENT;
	for (size_t i = 0; i < 3 && rc < 0; i++)
		if (dirs[i] && *dirs[i])
			rc = cl_rings_dir_create(dirs[i], r->ringdir, sizeof(r->ringdir));
	if (rc < 0) {
		log_warn("opencl: cannot create a directory for the capture rings (%s): commands of a process that "
			 "is killed may be lost",
			 strerror(-rc));
		r->ringdir[0] = 0;
	}
	*out = r;
	return 0;
}

const char *cl_receiver_address(const struct cl_receiver *r)
{
	return r->address;
}

const char *cl_receiver_rings(const struct cl_receiver *r)
{
	return r->ringdir;
}

/* The session-wide id of a kernel declaration (name, program, build options); 0 when out of room. */
static uint32_t intern(struct cl_receiver *r, const char *name, uint64_t program_hash, const char *options)
{
	for (size_t i = 0; i < r->nkernels; i++) {
		struct kernel *k = &r->kernels[i];
		if (k->program_hash == program_hash && strcmp(k->name, name) == 0 && strcmp(k->options, options) == 0)
			return k->id;
	}
	if (r->nkernels == MAX_KERNELS)
		return 0;
	struct kernel *nk = realloc(r->kernels, (r->nkernels + 1) * sizeof(*nk));
	if (!nk)
		return 0;
	r->kernels = nk;
	struct kernel *k = &r->kernels[r->nkernels];
	k->name = strdup(name[0] ? name : "?");
	k->options = strdup(options);
	if (!k->name || !k->options) {
		free(k->name);
		free(k->options);
		return 0;
	}
	k->program_hash = program_hash;
	k->id = (uint32_t)++r->nkernels;
	k->declared = false;
	return k->id;
}

/* A process declared its kernel kd: remember which session kernel it is. */
static void client_kernel(struct cl_receiver *r, struct client *cl, const struct pcl_kdesc *kd)
{
	if (kd->id >= MAX_CLIENT_KERNEL_ID)
		return;
	if (kd->id >= cl->nkmap) {
		size_t n = cl->nkmap ? cl->nkmap : 64;
		while (n <= kd->id)
			n *= 2;
		uint32_t *nm = realloc(cl->kmap, n * sizeof(*nm));
		if (!nm)
			return;
		memset(nm + cl->nkmap, 0, (n - cl->nkmap) * sizeof(*nm));
		cl->kmap = nm;
		cl->nkmap = n;
	}
	cl->kmap[kd->id] = intern(r, kd->name, kd->program_hash, kd->options);
}

/* The session kernel of a process's command (a declaration the agent never got: "?"). */
static uint32_t command_kernel(struct cl_receiver *r, const struct client *cl, const struct pcl_cmd *c)
{
	uint32_t id = c->kernel < cl->nkmap ? cl->kmap[c->kernel] : 0;
	return id ? id : intern(r, "?", 0, "");
}

static uint64_t rel(const struct cl_receiver *r, uint64_t abs_ns)
{
	uint64_t base = session_base_ns(r->s);
	return abs_ns > base ? abs_ns - base : 0;
}

/* The declaration of kernel k sent with a command record: id, name, program,
 * build options and, when known, the kernel model's ops and bytes. */
static void describe_kernel(const struct cl_receiver *r, const struct kernel *k, Prof__ClKernelDesc *kd)
{
	kd->id = k->id;
	kd->name = k->name;
	kd->program_hash = k->program_hash;
	kd->build_options = k->options;
	const struct kernel_model_entry *e = kernel_model_find(r->model, r->nmodel, k->name);
	if (e) {
		kd->model_ops = e->ops;
		kd->model_bytes = e->bytes;
	}
}

int cl_receiver_set_kernel_model(struct cl_receiver *r, const struct kernel_model_entry *e, size_t n)
{
	struct kernel_model_entry *c = n ? malloc(n * sizeof(*c)) : NULL;
	if (n && !c)
		return -ENOMEM;
	if (n)
		memcpy(c, e, n * sizeof(*c));
	free(r->model);
	r->model = c;
	r->nmodel = n;
	return 0;
}

/* Declare each kernel of the batch in its first command, unless the session already has. */
static void attach_declarations(struct cl_receiver *r)
{
	for (size_t i = 0; i < r->nb; i++) {
		struct kernel *k = r->bkernel[i] ? &r->kernels[r->bkernel[i] - 1] : NULL;
		r->bm[i].n_new_kernels = 0;
		r->bm[i].new_kernels = NULL;
		if (k && !k->declared) {
			prof__cl_kernel_desc__init(&r->bkd[i]);
			describe_kernel(r, k, &r->bkd[i]);
			r->bkdp[i] = &r->bkd[i];
			r->bm[i].n_new_kernels = 1;
			r->bm[i].new_kernels = &r->bkdp[i];
			k->declared = true;
		}
	}
}

static void undeclare_all(struct cl_receiver *r)
{
	for (size_t i = 0; i < r->nkernels; i++)
		r->kernels[i].declared = false;
}

/* Send the batch as one ClCommandBatch record. */
static void batch_flush(struct cl_receiver *r)
{
	if (!r->nb)
		return;
	if (session_drop_generation(r->s) != r->drop_gen) {
		r->drop_gen = session_drop_generation(r->s);
		undeclare_all(r); /* the spool dropped records, declarations with them */
	}
	attach_declarations(r);
	Prof__ClCommandBatch b = PROF__CL_COMMAND_BATCH__INIT;
	b.n_commands = r->nb;
	b.commands = r->bmp;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_CL_BATCH;
	env.cl_batch = &b;
	if (session_would_drop(r->s, r->bbytes + 16)) { /* bbytes: at least the record's size (batch_add) */
		/* This record pushes old ones (and their declarations) out of the spool. */
		undeclare_all(r);
		attach_declarations(r);
	}
	int rc = session_send(r->s, &env);
	if (rc < 0) {
		if (r->not_sent++ == 0)
			log_warn("opencl: cannot send command records: %s", strerror(-rc));
		for (size_t i = 0; i < r->nb; i++)
			if (r->bm[i].n_new_kernels)
				r->kernels[r->bkernel[i] - 1].declared = false;
	}
	r->commands += r->nb;
	r->nb = 0;
	r->bbytes = 0;
}

/* A completed command into the batch (sent when full, or at the end of a dispatch). */
static void batch_add(struct cl_receiver *r, const struct client *cl, const struct pcl_cmd *c)
{
	size_t i = r->nb;
	if (i == 0)
		r->bfirst_ns = clock_mono_ns();
	struct pcl_cmd *bc = &r->bcmd[i];
	/* the fields and the used part of each dependency list (not the whole 1.5 KiB of arrays) */
	memcpy(bc, c, offsetof(struct pcl_cmd, wait));
	memcpy(bc->wait, c->wait, c->n_wait * sizeof(c->wait[0]));
	memcpy(bc->read, c->read, c->n_read * sizeof(c->read[0]));
	memcpy(bc->written, c->written, c->n_written * sizeof(c->written[0]));
	Prof__ClCommand *m = &r->bm[i];
	prof__cl_command__init(m);
	r->bmp[i] = m;
	r->bkernel[i] = 0;
	m->id = bc->id;
	m->pid = bc->pid;
	m->queue_id = bc->queue_id ? bc->queue_id : 1;
	m->type = bc->type;
	if (bc->work_dim > 0) {
		m->kernel_id = r->bkernel[i] = command_kernel(r, cl, bc);
		if (m->kernel_id) {
			m->work_dim = bc->work_dim;
			m->n_global_size = bc->work_dim;
			m->global_size = (uint64_t *)bc->global;
			if (bc->has_local) {
				m->n_local_size = bc->work_dim;
				m->local_size = (uint64_t *)bc->local;
			}
			if (bc->has_offset) {
				m->n_global_offset = bc->work_dim;
				m->global_offset = (uint64_t *)bc->offset;
			}
		}
	}
	m->queued_ns = bc->queued;
	m->submit_ns = bc->submit;
	m->start_ns = bc->start;
	m->end_ns = bc->end;
	m->host_enqueue_ns = rel(r, bc->host_enqueue);
	m->host_complete_ns = rel(r, bc->host_complete);
	m->bytes = bc->bytes;
	m->prev_in_queue = bc->prev_in_queue < bc->id ? bc->prev_in_queue : 0;
	size_t nw = 0;
	for (uint32_t w = 0; w < bc->n_wait; w++)
		if (bc->wait[w] && bc->wait[w] < bc->id)
			r->bwaits[i][nw++] = bc->wait[w];
	m->n_wait_ids = nw;
	m->wait_ids = r->bwaits[i];
	m->n_mem_read = bc->n_read;
	m->mem_read = bc->read;
	m->n_mem_written = bc->n_written;
	m->mem_written = bc->written;
	m->dropped_before = bc->dropped_before;
	m->forced_profiling = bc->forced_profiling;
	m->layer_event = bc->layer_event;
	r->nb++;
	/* a kernel declaration may join it: name and options at most. A bound, not get_packed_size:
	 * that ran three times per command (here, the spool check, the frame's encoding), a third of
	 * the agent's CPU per command in `clpeak --kernel-latency` (issue #41). */
	r->bbytes += cl_command_size_bound(m) + 16 + PCL_MAX_NAME + PCL_MAX_OPTIONS;
	if (r->nb == BATCH_MAX || r->bbytes > session_max_frame(r->s) / 2)
		batch_flush(r);
}

static void handle_datagram(struct cl_receiver *r, struct client *cl, const uint8_t *buf, size_t len);

/* What the ring of a process holds now (at most RING_RECORDS_PER_READ records). */
static void read_ring(struct cl_receiver *r, struct client *cl)
{
	int n = 0;
	for (int k = 0; k < RING_RECORDS_PER_READ && (n = cl_ring_next(cl->ring, r->buf, PCL_DGRAM_MAX)) > 0; k++)
		handle_datagram(r, cl, r->buf, (size_t)n);
	if (n < 0 && !cl->ring_bad) {
		cl->ring_bad = true;
		log_warn("opencl: pid %d: malformed record in its capture ring: the rest of the ring is not read",
			 cl->pid);
	}
}

/* A process whose ring is done (its exit ran) or that has ended: the rest of its ring, and what it
 * never wrote. */
static void close_ring(struct cl_receiver *r, size_t i)
{
	struct client *cl = &r->rings[i];
	read_ring(r, cl);
	struct cl_ring_counts c;
	cl_ring_counts(cl->ring, &c);
	if (c.dropped > cl->dropped) {
		r->layer_dropped += c.dropped - cl->dropped;
		cl->dropped = c.dropped;
	}
	uint64_t accounted = c.written + c.failed + c.dropped;
	uint64_t untimed = c.seen > accounted ? c.seen - accounted : 0;
	uint64_t unread = c.written > cl->commands ? c.written - cl->commands : 0;
	r->untimed += untimed + unread;
	if (untimed)
		log_warn("opencl: pid %d: %llu of its %llu commands were enqueued but never seen complete, so not "
			 "timed: the process ended (killed or aborted) before the capture library saw them complete",
			 cl->pid, (unsigned long long)untimed, (unsigned long long)c.seen);
	if (unread)
		log_warn("opencl: pid %d: %llu commands in its capture ring could not be read", cl->pid,
			 (unsigned long long)unread);
	if (!untimed && !unread && !cl->said_bye)
		log_info("opencl: pid %d ended without its library's exit (%llu commands, all in its ring)", cl->pid,
			 (unsigned long long)cl->commands);
	cl_ring_close(cl->ring, true);
	free(cl->kmap);
	r->rings[i] = r->rings[--r->nrings];
}

static void ring_found(void *ctx, const char *file, int pid)
{
	struct cl_receiver *r = ctx;
	for (size_t i = 0; i < r->nrings; i++)
		if (r->rings[i].pid == pid)
			return;
	if (r->nrings == MAX_RINGS)
		return; /* read once another process's ring is closed */
	struct cl_ring *ring;
	if (cl_ring_map(file, &ring) < 0)
		return;
	r->rings[r->nrings++] = (struct client){.fd = -1, .pid = pid, .said_hello = true, .ring = ring};
	r->processes++;
	log_info("opencl: pid %d writes its commands to %s", pid, file);
}

/* Read every ring; every RING_SCAN_TICKS (or when final) look for new ones and close the ended. */
static void rings_visit(struct cl_receiver *r, bool final)
{
	if (!r->ringdir[0])
		return;
	if (final || r->ticks++ % RING_SCAN_TICKS == 0) {
		cl_rings_dir_scan(r->ringdir, ring_found, r);
		for (size_t i = r->nrings; i-- > 0;) {
			struct cl_ring_counts c;
			cl_ring_counts(r->rings[i].ring, &c);
			/* ended first, read after: everything it wrote is there */
			if (final || c.done || cl_pid_ended(r->rings[i].pid))
				close_ring(r, i);
		}
	}
	for (size_t i = 0; i < r->nrings; i++)
		read_ring(r, &r->rings[i]);
}

static void close_client(struct cl_receiver *r, size_t i)
{
	struct client *c = &r->clients[i];
	if (c->said_hello && !c->said_bye)
		log_warn("opencl: pid %d closed its connection without totals (%llu commands received)", c->pid,
			 (unsigned long long)c->commands);
	close(c->fd);
	free(c->kmap);
	r->clients[i] = r->clients[--r->nclients];
}

static void note(struct cl_receiver *r, const struct pcl_proc *p)
{
	if (r->nnotes < MAX_NOTES) {
		struct note *n = &r->notes[r->nnotes++];
		n->pid = p->pid;
		n->mode = p->mode;
		n->flags = p->flags;
		snprintf(n->detail, sizeof(n->detail), "%s", p->detail);
	}
	if (p->flags & PCL_NOTE_DLOPEN_UNBRIDGED)
		log_warn("opencl: pid %d loaded %s itself (dlopen) and the preload shim cannot stand in for it: its "
			 "OpenCL calls are not seen; use --mode layer",
			 p->pid, p->detail);
	else if (p->flags & PCL_NOTE_DLOPEN_BRIDGED)
		log_info("opencl: pid %d loaded %s itself (dlopen): the preload shim stands in for it", p->pid,
			 p->detail);
}

static void handle(struct cl_receiver *r, struct client *cl, const struct pcl_msg *m)
{
	const struct pcl_proc *p = &m->u.proc;
	switch (m->type) {
	case PCL_MSG_HELLO:
		cl->pid = p->pid;
		cl->mode = p->mode;
		cl->said_hello = true;
		r->processes++;
		log_info("opencl: pid %d connected (%s)%s", p->pid, p->mode == PCL_MODE_PRELOAD ? "preload shim" : "layer",
			 p->dropped ? ", some commands already dropped" : "");
		break;
	case PCL_MSG_NOTE:
		note(r, p);
		break;
	case PCL_MSG_KERNEL:
		client_kernel(r, cl, &m->u.kernel);
		break;
	case PCL_MSG_BYE:
		cl->said_bye = true;
		if (p->dropped > cl->dropped) {
			r->layer_dropped += p->dropped - cl->dropped;
			cl->dropped = p->dropped;
		}
		if (p->dropped)
			log_warn("opencl: pid %d: %llu commands captured, %llu dropped by the layer (queue full or "
				 "agent too slow)",
				 p->pid, (unsigned long long)p->commands, (unsigned long long)p->dropped);
		else
			log_info("opencl: pid %d: %llu commands captured, none dropped", p->pid,
				 (unsigned long long)p->commands);
		break;
	case PCL_MSG_CMD:
		if (m->u.cmd.dropped_before > cl->dropped) {
			r->layer_dropped += m->u.cmd.dropped_before - cl->dropped;
			cl->dropped = m->u.cmd.dropped_before;
		}
		if (!cl->pid)
			cl->pid = m->u.cmd.pid;
		cl->commands++;
		batch_add(r, cl, &m->u.cmd);
		break;
	}
}

/* The messages of one datagram, in order; a malformed one ends it. */
static void handle_datagram(struct cl_receiver *r, struct client *cl, const uint8_t *buf, size_t len)
{
	size_t off = 0;
	while (off < len) {
		int n = pcl_decode(buf + off, len - off, &r->msg);
		if (n < 0) {
			if (r->bad++ == 0)
				log_warn("opencl: malformed message from pid %d (%zu bytes at offset %zu): the rest of its "
					 "datagram is ignored",
					 cl->pid, len, off);
			return;
		}
		handle(r, cl, &r->msg);
		off += (size_t)n;
	}
}

/* Read up to budget datagrams from client i; false when it is gone. */
static bool read_client(struct cl_receiver *r, size_t i, int budget)
{
	while (budget-- > 0) {
		ssize_t n = recv(r->clients[i].fd, r->buf, sizeof(r->buf), MSG_DONTWAIT);
		if (n > 0) {
			handle_datagram(r, &r->clients[i], r->buf, (size_t)n);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n < 0 && errno == EINTR)
			continue;
		return false; /* 0: closed; other errors: give up on it */
	}
	return true;
}

static void accept_all(struct cl_receiver *r)
{
	for (;;) {
		int fd = accept4(r->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (r->nclients == MAX_CLIENTS) {
			log_warn("opencl: more than %d profiled processes at once: refusing one", MAX_CLIENTS);
			close(fd);
			continue;
		}
		r->clients[r->nclients++] = (struct client){.fd = fd};
	}
}

static int rx_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *timeout_ms)
{
	struct cl_receiver *r = ctx;
	int n = 0;
	if (max < 1)
		return 0;
	pfd[n++] = (struct pollfd){.fd = r->lfd, .events = POLLIN};
	for (size_t i = 0; i < r->nclients && n < max; i++)
		pfd[n++] = (struct pollfd){.fd = r->clients[i].fd, .events = POLLIN};
	if (r->ringdir[0])
		loop_timer_timeout(&r->tick, now, timeout_ms);
	if (r->nb) { /* the batch's age */
		uint64_t due = r->bfirst_ns + BATCH_AGE_NS;
		int ms = due <= now ? 0 : (int)((due - now + 999999) / 1000000);
		if (*timeout_ms < 0 || ms < *timeout_ms)
			*timeout_ms = ms;
	}
	return n;
}

static int rx_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct cl_receiver *r = ctx;
	/* Clients first (pfd[1..] match clients[0..] as prepared), then new connections. */
	for (int k = n - 1; k >= 1; k--) {
		size_t i = (size_t)(k - 1);
		if (i >= r->nclients || !(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (!read_client(r, i, DGRAMS_PER_DISPATCH))
			close_client(r, i);
	}
	if (r->ringdir[0] && loop_timer_expired(&r->tick, now))
		rings_visit(r, false);
	if (r->nb && now >= r->bfirst_ns + BATCH_AGE_NS) /* (now was read before this dispatch's adds) */
		batch_flush(r);
	if (n >= 1 && (pfd[0].revents & POLLIN))
		accept_all(r);
	return 0;
}

int cl_receiver_attach(struct cl_receiver *r, struct session *s, struct loop *l)
{
	r->s = s;
	r->drop_gen = session_drop_generation(s);
	loop_timer_start(&r->tick, RING_READ_NS, clock_mono_ns());
	struct loop_source src = {.name = "opencl", .prepare = rx_prepare, .dispatch = rx_dispatch, .ctx = r};
	return loop_add(l, &src);
}

void cl_receiver_drain(struct cl_receiver *r)
{
	accept_all(r);
	for (size_t i = r->nclients; i-- > 0;)
		if (!read_client(r, i, 1 << 30))
			close_client(r, i);
	rings_visit(r, true);
	batch_flush(r);
}

uint64_t cl_receiver_commands(const struct cl_receiver *r)
{
	return r->commands;
}

uint64_t cl_receiver_layer_dropped(const struct cl_receiver *r)
{
	return r->layer_dropped;
}

uint64_t cl_receiver_untimed(const struct cl_receiver *r)
{
	return r->untimed;
}

void cl_receiver_why_none(const struct cl_receiver *r, bool layer_mode, char *buf, size_t len)
{
	buf[0] = 0;
	if (r->commands)
		return;
	for (size_t i = 0; i < r->nnotes; i++)
		if (r->notes[i].flags & PCL_NOTE_DLOPEN_UNBRIDGED) {
			snprintf(buf, len,
				 "pid %d loaded %s itself (dlopen) and the preload shim cannot stand in for it: use --mode "
				 "layer",
				 r->notes[i].pid, r->notes[i].detail);
			return;
		}
	if (r->untimed) {
		snprintf(buf, len,
			 "%llu command(s) were enqueued but never seen complete: the process ended (killed or aborted) "
			 "before the capture library saw them complete",
			 (unsigned long long)r->untimed);
		return;
	}
	if (r->nnotes || r->processes) {
		char who[32] = "the program";
		if (r->nnotes == 1)
			snprintf(who, sizeof(who), "pid %d", (int)r->notes[0].pid);
		snprintf(buf, len, "%s loaded the capture library (%s) but completed no kernel launch or buffer "
				   "transfer it captures",
			 who, layer_mode ? "layer" : "preload shim");
		return;
	}
	if (layer_mode)
		snprintf(buf, len,
			 "no process initialised the layer: the program made no OpenCL call through an ICD loader "
			 "(not an OpenCL program, or linked to a vendor library: try --mode preload)");
	else
		snprintf(buf, len,
			 "the preload shim saw no OpenCL call: the program does not use OpenCL, or reaches it in a way "
			 "the shim cannot see (try --mode layer)");
}

void cl_receiver_print_summary(const struct cl_receiver *r, bool layer_mode, FILE *out)
{
	fprintf(out, " opencl: %llu commands from %llu process(es), %zu kernel(s), %llu dropped by the layer",
		(unsigned long long)r->commands, (unsigned long long)r->processes, r->nkernels,
		(unsigned long long)r->layer_dropped);
	if (r->untimed)
		fprintf(out, ", %llu enqueued but never timed (their process ended before they were seen complete)",
			(unsigned long long)r->untimed);
	fputc('\n', out);
	char why[512];
	cl_receiver_why_none(r, layer_mode, why, sizeof(why));
	if (why[0])
		fprintf(out, " opencl: no commands: %s\n", why);
}

void cl_receiver_close(struct cl_receiver *r)
{
	if (!r)
		return;
	while (r->nclients)
		close_client(r, r->nclients - 1);
	for (size_t i = 0; i < r->nrings; i++) {
		cl_ring_close(r->rings[i].ring, true);
		free(r->rings[i].kmap);
	}
	if (r->ringdir[0])
		cl_rings_dir_remove(r->ringdir);
	if (r->lfd >= 0)
		close(r->lfd);
	for (size_t i = 0; i < r->nkernels; i++) {
		free(r->kernels[i].name);
		free(r->kernels[i].options);
	}
	free(r->kernels);
	free(r->model);
	free(r->bcmd);
	free(r);
}

uint64_t cl_receiver_report_dropfile(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[256];
	uint64_t total = 0;
	while (fgets(line, sizeof(line), f)) {
		int pid;
		unsigned long long dropped, of;
		if (sscanf(line, "pid %d dropped %llu of %llu", &pid, &dropped, &of) == 3) {
			log_warn("opencl: a previous run lost records: pid %d dropped %llu of %llu OpenCL commands "
				 "(its agent was gone)",
				 pid, dropped, of);
			total += dropped;
		}
	}
	fclose(f);
	unlink(path);
	return total;
}

#endif /* CONFIG_AGENT_OPENCL */
