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

#include "cl_layer/cl_msg.h"
#include "kernel_model.h"
#include "log.h"
#include "net.h"
#include "opencl.pb-c.h"
#include "profiler.pb-c.h"

#define MAX_CLIENTS 64
#define MAX_KERNELS 4096
#define MSGS_PER_DISPATCH 512

struct client {
	int fd;
	int32_t pid;
	uint32_t mode;
	uint64_t commands, dropped;
	bool said_bye;
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
	struct kernel *kernels;
	size_t nkernels;
	uint64_t drop_gen;
	uint64_t commands, layer_dropped, bad, not_sent, processes;
	uint8_t buf[PCL_MSG_MAX + 1];
	struct pcl_cmd cmd;
	struct kernel_model_entry *model; /* agent profile --kernel-model */
	size_t nmodel;
};

int cl_receiver_open(struct cl_receiver **out, char *err, size_t errlen)
{
	*out = NULL;
	struct cl_receiver *r = calloc(1, sizeof(*r));
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
		free(r);
		return -e;
	}
	*out = r;
	return 0;
}

const char *cl_receiver_address(const struct cl_receiver *r)
{
	return r->address;
}

static uint32_t intern(struct cl_receiver *r, const struct pcl_cmd *c, struct kernel **out)
{
	for (size_t i = 0; i < r->nkernels; i++) {
		struct kernel *k = &r->kernels[i];
		if (k->program_hash == c->program_hash && strcmp(k->name, c->kernel) == 0 &&
		    strcmp(k->options, c->options) == 0) {
			*out = k;
			return k->id;
		}
	}
	if (r->nkernels == MAX_KERNELS)
		return 0;
	struct kernel *nk = realloc(r->kernels, (r->nkernels + 1) * sizeof(*nk));
	if (!nk)
		return 0;
	r->kernels = nk;
	struct kernel *k = &r->kernels[r->nkernels];
	k->name = strdup(c->kernel);
	k->options = strdup(c->options);
	if (!k->name || !k->options) {
		free(k->name);
		free(k->options);
		return 0;
	}
	k->program_hash = c->program_hash;
	k->id = (uint32_t)++r->nkernels;
	k->declared = false;
	*out = k;
	return k->id;
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

static void forward(struct cl_receiver *r, const struct pcl_cmd *c)
{
	if (session_drop_generation(r->s) != r->drop_gen) {
		r->drop_gen = session_drop_generation(r->s);
		for (size_t i = 0; i < r->nkernels; i++)
			r->kernels[i].declared = false;
	}
	Prof__ClCommand m = PROF__CL_COMMAND__INIT;
	Prof__ClKernelDesc kd = PROF__CL_KERNEL_DESC__INIT;
	Prof__ClKernelDesc *kds[1] = {&kd};
	struct kernel *k = NULL;
	m.id = c->id;
	m.pid = c->pid;
	m.queue_id = c->queue_id ? c->queue_id : 1;
	m.type = c->type;
	if (c->work_dim > 0 && c->kernel[0]) {
		m.kernel_id = intern(r, c, &k);
		if (m.kernel_id) {
			m.work_dim = c->work_dim;
			m.n_global_size = c->work_dim;
			m.global_size = (uint64_t *)c->global;
			if (c->has_local) {
				m.n_local_size = c->work_dim;
				m.local_size = (uint64_t *)c->local;
			}
			if (c->has_offset) {
				m.n_global_offset = c->work_dim;
				m.global_offset = (uint64_t *)c->offset;
			}
			if (!k->declared) {
				describe_kernel(r, k, &kd);
				m.n_new_kernels = 1;
				m.new_kernels = kds;
			}
		}
	}
	m.queued_ns = c->queued;
	m.submit_ns = c->submit;
	m.start_ns = c->start;
	m.end_ns = c->end;
	m.host_enqueue_ns = rel(r, c->host_enqueue);
	m.host_complete_ns = rel(r, c->host_complete);
	m.bytes = c->bytes;
	m.prev_in_queue = c->prev_in_queue < c->id ? c->prev_in_queue : 0;
	uint64_t waits[PCL_MAX_DEPS];
	size_t nw = 0;
	for (uint32_t i = 0; i < c->n_wait; i++)
		if (c->wait[i] && c->wait[i] < c->id)
			waits[nw++] = c->wait[i];
	m.n_wait_ids = nw;
	m.wait_ids = waits;
	m.n_mem_read = c->n_read;
	m.mem_read = (uint64_t *)c->read;
	m.n_mem_written = c->n_written;
	m.mem_written = (uint64_t *)c->written;
	m.dropped_before = c->dropped_before;
	m.forced_profiling = c->forced_profiling;
	m.layer_event = c->layer_event;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_CL_COMMAND;
	env.cl_command = &m;
	if (k && !k->declared) {
		k->declared = true;
	} else if (k && session_would_drop(r->s, prof__envelope__get_packed_size(&env) + 16)) {
		/* This record pushes old ones (and their declarations) out of the spool. */
		for (size_t i = 0; i < r->nkernels; i++)
			r->kernels[i].declared = false;
		describe_kernel(r, k, &kd);
		m.n_new_kernels = 1;
		m.new_kernels = kds;
		k->declared = true;
	}
	int rc = session_send(r->s, &env);
	if (rc < 0 && r->not_sent++ == 0)
		log_warn("opencl: cannot send a command record: %s", strerror(-rc));
	if (rc < 0 && k && m.n_new_kernels)
		k->declared = false;
	r->commands++;
}

static void close_client(struct cl_receiver *r, size_t i)
{
	struct client *c = &r->clients[i];
	if (c->pid && !c->said_bye)
		log_warn("opencl: pid %d closed its connection without totals (%llu commands received)", c->pid,
			 (unsigned long long)c->commands);
	close(c->fd);
	r->clients[i] = r->clients[--r->nclients];
}

static void handle(struct cl_receiver *r, struct client *cl, const uint8_t *buf, size_t len)
{
	struct pcl_proc p;
	int type = pcl_decode(buf, len, &p, &r->cmd);
	if (type < 0) {
		if (r->bad++ == 0)
			log_warn("opencl: malformed message from pid %d (%zu bytes): ignored", cl->pid, len);
		return;
	}
	if (type == PCL_MSG_HELLO) {
		cl->pid = p.pid;
		cl->mode = p.mode;
		r->processes++;
		log_info("opencl: pid %d connected (%s)%s", p.pid, p.mode == PCL_MODE_PRELOAD ? "preload shim" : "layer",
			 p.dropped ? ", some commands already dropped" : "");
	} else if (type == PCL_MSG_BYE) {
		cl->said_bye = true;
		if (p.dropped > cl->dropped) {
			r->layer_dropped += p.dropped - cl->dropped;
			cl->dropped = p.dropped;
		}
		if (p.dropped)
			log_warn("opencl: pid %d: %llu commands captured, %llu dropped by the layer (queue full or "
				 "agent too slow)",
				 p.pid, (unsigned long long)p.commands, (unsigned long long)p.dropped);
		else
			log_info("opencl: pid %d: %llu commands captured, none dropped", p.pid,
				 (unsigned long long)p.commands);
	} else {
		if (r->cmd.dropped_before > cl->dropped) {
			r->layer_dropped += r->cmd.dropped_before - cl->dropped;
			cl->dropped = r->cmd.dropped_before;
		}
		if (!cl->pid)
			cl->pid = r->cmd.pid;
		cl->commands++;
		forward(r, &r->cmd);
	}
}

/* Read up to budget messages from client i; false when it is gone. */
static bool read_client(struct cl_receiver *r, size_t i, int budget)
{
	while (budget-- > 0) {
		ssize_t n = recv(r->clients[i].fd, r->buf, sizeof(r->buf), MSG_DONTWAIT);
		if (n > 0) {
			handle(r, &r->clients[i], r->buf, (size_t)n);
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
		if (!read_client(r, i, MSGS_PER_DISPATCH))
			close_client(r, i);
	}
	if (n >= 1 && (pfd[0].revents & POLLIN))
		accept_all(r);
	return 0;
}

int cl_receiver_attach(struct cl_receiver *r, struct session *s, struct loop *l)
{
	r->s = s;
	r->drop_gen = session_drop_generation(s);
	struct loop_source src = {.name = "opencl", .prepare = rx_prepare, .dispatch = rx_dispatch, .ctx = r};
	return loop_add(l, &src);
}

void cl_receiver_drain(struct cl_receiver *r)
{
	accept_all(r);
	for (size_t i = r->nclients; i-- > 0;)
		if (!read_client(r, i, 1 << 30))
			close_client(r, i);
}

uint64_t cl_receiver_commands(const struct cl_receiver *r)
{
	return r->commands;
}

uint64_t cl_receiver_layer_dropped(const struct cl_receiver *r)
{
	return r->layer_dropped;
}

void cl_receiver_print_summary(const struct cl_receiver *r, FILE *out)
{
	fprintf(out, " opencl: %llu commands from %llu process(es), %zu kernel(s), %llu dropped by the layer\n",
		(unsigned long long)r->commands, (unsigned long long)r->processes, r->nkernels,
		(unsigned long long)r->layer_dropped);
}

void cl_receiver_close(struct cl_receiver *r)
{
	if (!r)
		return;
	while (r->nclients)
		close_client(r, r->nclients - 1);
	if (r->lfd >= 0)
		close(r->lfd);
	for (size_t i = 0; i < r->nkernels; i++) {
		free(r->kernels[i].name);
		free(r->kernels[i].options);
	}
	free(r->kernels);
	free(r->model);
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
