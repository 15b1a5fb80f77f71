/* Commands from enqueue to the agent. The layer keeps a reference on each
 * command's event and asks for a completion callback; the callback (a
 * runtime thread) only timestamps the record and pushes it on the done stack
 * (one atomic exchange, no lock). The reaper thread takes the whole stack in
 * batches (when BATCH commands are done, or every REAP_EVERY_NS while
 * commands are outstanding), reads each command's profiling info (the event
 * is complete: no wait), releases the reference, encodes the batch into as
 * few datagrams as it fits in (a kernel's declaration before its first
 * command), hands them to send.c and gives the records back to the free
 * list in one go. The app's threads never wait for any of it; per command
 * they take a record from their own cache of the free list and register one
 * callback. The mutex is only for sleeping and waking the reaper and for the
 * free list's refills (once per batch). At exit, a bounded drain. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcl.h"
#include "send.h"

#define MAX_OUTSTANDING 65536u		   /* commands tracked at once; more are dropped */
#define BATCH 64u			   /* completed commands that wake the reaper at once */
#define REAP_EVERY_NS 5000000ull	   /* otherwise it comes by this often while commands are outstanding */
#define REAP_IDLE_NS 100000000ull	   /* ... backing off to this while none completes */
#define SLAB 256u			   /* records allocated at once */
#define EXIT_COMPLETE_WAIT_NS 300000000ull /* at exit: for enqueued commands to complete */
#define EXIT_SEND_WAIT_NS 300000000ull	   /* at exit: for the socket to take the rest */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER; /* reaper: work or stop */
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER; /* exit: an outstanding command completed */
static _Atomic(struct pcl_pending *) done_stack;      /* completed, newest first */
static _Atomic(struct pcl_pending *) free_stack;      /* processed, for reuse */
static _Atomic unsigned ndone;			       /* on the done stack */
static _Atomic unsigned outstanding;		       /* tracked, callback not yet run */
static bool reaper_running, reaper_done;
static _Atomic bool stopping, exit_waiting;
static _Atomic bool reaper_sleeping; /* without a timer: a completion must wake it */
static pthread_t reaper;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t next_id = 1, n_captured;
/* Each app thread's records, taken from the free list a batch at a time. */
static __thread struct pcl_pending *cache;

/* The reaper's datagram under construction and the kernels this connection has been told about. */
static uint8_t dgram[PCL_DGRAM_MAX];
static size_t dgram_len;
static uint32_t dgram_cmds;
static uint8_t *declared; /* [kernel id] */
static size_t declared_cap;
static uint64_t declared_gen; /* send.c's drop count when the flags were last valid */

static void after_fork_child(void)
{
	/* Only this thread exists in the child: start from scratch. */
	pthread_mutex_init(&mu, NULL);
	pthread_cond_init(&wake, NULL);
	pthread_cond_init(&idle, NULL);
	atomic_store(&done_stack, NULL); /* the parent's records: not ours (leaked, bounded) */
	atomic_store(&ndone, 0);
	atomic_store(&outstanding, 0);
	atomic_store(&free_stack, NULL); /* shared with the parent's threads before: dropped (leaked, bounded) */
	cache = NULL;
	reaper_running = reaper_done = false;
	atomic_store(&stopping, false);
	atomic_store(&exit_waiting, false);
	atomic_store(&reaper_sleeping, false);
	start_once = (pthread_once_t)PTHREAD_ONCE_INIT; /* the reaper did not survive the fork */
	atomic_store(&n_captured, 0);
	atomic_store(&next_id, 1);
	dgram_len = 0;
	dgram_cmds = 0;
	if (declared)
		memset(declared, 0, declared_cap);
	pcl_base_after_fork(); /* drop/sent counters, pid, start time */
	pcl_state_after_fork();
	pcl_tables_after_fork();
	pcl_kernels_after_fork();
	pcl_send_after_fork();
	declared_gen = pcl_send_drops();
}

static void init_once_fn(void)
{
	pcl_base_init(); /* debug level, pid, start time */
	pcl_state_init();
	pthread_atfork(NULL, NULL, after_fork_child);
}

void pcl_init(void)
{
	pthread_once(&init_once, init_once_fn);
}

/* ---------------------------------------------------------------- records */
/* Records come from slabs (never freed: at most MAX_OUTSTANDING are in use, the rest wait on the
 * free stack or in the app threads' caches). The reaper pushes a processed batch on the free
 * stack; an app thread whose cache is empty takes the whole stack. Both are one atomic operation:
 * no lock, no malloc per command. */
static void recycle_list(struct pcl_pending *head, struct pcl_pending *tail)
{
	if (!head)
		return;
	tail->next = atomic_load(&free_stack);
	while (!atomic_compare_exchange_weak(&free_stack, &tail->next, head))
		;
}

/* A record for this thread: from its cache, refilled with the whole free stack, or a new slab. */
static struct pcl_pending *take_record(void)
{
	if (!cache)
		cache = atomic_exchange(&free_stack, NULL);
	if (!cache) {
		struct pcl_pending *slab = malloc(SLAB * sizeof(*slab));
		if (!slab)
			return NULL;
		for (unsigned i = 0; i < SLAB; i++)
			slab[i].next = i + 1 < SLAB ? &slab[i + 1] : NULL;
		cache = slab;
	}
	struct pcl_pending *p = cache;
	cache = p->next;
	return p;
}

/* A record the app thread did not use (the enqueue failed): back to its cache. */
static void return_record(struct pcl_pending *p)
{
	p->next = cache;
	cache = p;
}

/* One command fewer outstanding: tell an exit that waits for them. */
static void settled(void)
{
	atomic_fetch_sub(&outstanding, 1);
	if (atomic_load(&exit_waiting)) {
		pthread_mutex_lock(&mu);
		pthread_cond_broadcast(&idle);
		pthread_mutex_unlock(&mu);
	}
}

/* ---------------------------------------------------------------- reaper */
static void dgram_push(void)
{
	if (dgram_len)
		pcl_send_queue(dgram, dgram_len, dgram_cmds);
	dgram_len = 0;
	dgram_cmds = 0;
}

/* Room for one more message (a declaration and a command at most). */
static void dgram_room(void)
{
	if (dgram_len + 2 * PCL_MSG_MAX > sizeof(dgram))
		dgram_push();
}

/* The declaration of kernel id, once per connection (again after send.c dropped anything). */
static void declare(uint32_t id)
{
	if (pcl_send_drops() != declared_gen) {
		declared_gen = pcl_send_drops();
		if (declared)
			memset(declared, 0, declared_cap);
	}
	if (id < declared_cap && declared[id])
		return;
	if (id >= declared_cap) {
		size_t cap = declared_cap ? declared_cap : 256;
		while (cap <= id)
			cap *= 2;
		uint8_t *nd = realloc(declared, cap);
		if (!nd)
			return; /* declared again next time */
		memset(nd + declared_cap, 0, cap - declared_cap);
		declared = nd;
		declared_cap = cap;
	}
	struct pcl_kdesc kd;
	if (!pcl_kdesc_get(id, &kd))
		return;
	int len = pcl_encode_kernel(&kd, dgram + dgram_len, sizeof(dgram) - dgram_len);
	if (len > 0) {
		dgram_len += (size_t)len;
		declared[id] = 1;
	}
}

static void process(struct pcl_pending *p)
{
	uint64_t t[4];
	pcl_rt_profiling(p->ev, t);
	pcl_rt_release_event(p->ev);
	if (p->status < 0) {
		pcl_log("command %llu ended with error %d: not recorded", (unsigned long long)p->cmd.id, p->status);
		return;
	}
	struct pcl_cmd *c = &p->cmd;
	c->queued = t[0], c->submit = t[1], c->start = t[2], c->end = t[3];
	c->dropped_before = pcl_dropped();
	if (pcl_debug > 1)
		pcl_log("cmd %llu type 0x%x q%u kernel %u %llu..%llu (%llu ns)", (unsigned long long)c->id, c->type,
			c->queue_id, c->kernel, (unsigned long long)c->start, (unsigned long long)c->end,
			(unsigned long long)(c->end - c->start));
	atomic_fetch_add(&n_captured, 1);
	dgram_room();
	if (c->kernel)
		declare(c->kernel);
	int len = pcl_encode_cmd(c, dgram + dgram_len, sizeof(dgram) - dgram_len);
	if (len > 0) {
		dgram_len += (size_t)len;
		dgram_cmds++;
	} else {
		pcl_count_dropped(1);
	}
}

static struct timespec in_ns(uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(ns % 1000000000ull);
	ts.tv_sec += (time_t)(ns / 1000000000ull) + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

/* The done stack, oldest first, and its length. */
static struct pcl_pending *take_done(unsigned *n)
{
	struct pcl_pending *p = atomic_exchange(&done_stack, NULL), *rev = NULL;
	*n = 0;
	while (p) {
		struct pcl_pending *next = p->next;
		p->next = rev;
		rev = p;
		p = next;
		(*n)++;
	}
	atomic_fetch_sub(&ndone, *n);
	return rev;
}

static void *reaper_main(void *arg)
{
	(void)arg;
	uint64_t deadline = 0, period = REAP_EVERY_NS;
	for (;;) {
		bool stop = atomic_load(&stopping);
		unsigned n;
		struct pcl_pending *list = take_done(&n), *last = NULL;
		if (list) {
			pcl_enter(PCL_FN_REAPER);
			for (struct pcl_pending *p = list; p; p = p->next) {
				process(p);
				last = p;
			}
			dgram_push();
			pcl_leave();
			recycle_list(list, last);
		}
		uint64_t now = pcl_now_ns();
		bool empty = pcl_send_flush(now);
		if (stop) {
			if (!deadline)
				deadline = now + EXIT_SEND_WAIT_NS;
			if ((empty && !atomic_load(&done_stack)) || now >= deadline)
				break;
		}
		if (atomic_load(&ndone) >= BATCH || (stop && atomic_load(&done_stack)))
			continue;
		if (!empty) {
			/* The socket is full (or not connected yet): come back soon. */
			if (pcl_send_wait(5) == 0 && !pcl_send_connected())
				usleep(5000);
			continue;
		}
		if (atomic_load(&stopping) != stop)
			continue;
		/* Come back every period while there is or was work (a batch per visit, not a wake-up per
		 * command); the period doubles while nothing completes. With nothing outstanding and nothing
		 * done since the last visit, sleep until a completion or the exit wakes us. */
		period = list ? REAP_EVERY_NS : period * 2 > REAP_IDLE_NS ? REAP_IDLE_NS : period * 2;
		pthread_mutex_lock(&mu);
		if (atomic_load(&outstanding) > 0 || list) {
			struct timespec ts = in_ns(period);
			pthread_cond_timedwait(&wake, &mu, &ts);
		} else {
			/* Announce the sleep, then look again (a completion that did not see the flag is
			 * on the stack by now: both sides are sequentially consistent). */
			atomic_store(&reaper_sleeping, true);
			if (!atomic_load(&done_stack) && !atomic_load(&stopping))
				pthread_cond_wait(&wake, &mu);
			atomic_store(&reaper_sleeping, false);
		}
		pthread_mutex_unlock(&mu);
	}
	/* Last words: totals, so the agent can report the drops. */
	pcl_send_flush(pcl_now_ns());
	struct pcl_proc bye = {.pid = pcl_pid(), .mode = (uint32_t)pcl_mode,
			       .commands = atomic_load(&n_captured), .dropped = pcl_dropped()};
	uint8_t buf[PCL_MSG_MAX];
	int len = pcl_encode_proc(PCL_MSG_BYE, &bye, buf, sizeof(buf));
	bool told = len > 0 && pcl_send_queue(buf, (size_t)len, 0) && pcl_send_flush(pcl_now_ns()) &&
		    pcl_send_connected();
	pthread_mutex_lock(&mu);
	reaper_done = told;
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* What the agent could not be told goes to PROF_CL_DROPFILE for the next agent. */
static void write_dropfile(uint64_t dropped, uint64_t captured)
{
	const char *path = getenv(PCL_ENV_DROPFILE);
	if (!path || !*path)
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	char line[160];
	int n = snprintf(line, sizeof(line), "pid %d dropped %llu of %llu OpenCL commands\n", (int)pcl_pid(),
			 (unsigned long long)dropped, (unsigned long long)captured);
	if (n > 0 && write(fd, line, (size_t)n) < 0)
		pcl_log("cannot write %s", path);
	close(fd);
}

static void at_exit(void)
{
	static bool done; /* registered again in a forked child: once is enough */
	if (done)
		return;
	done = true;
	pthread_mutex_lock(&mu);
	uint64_t deadline = pcl_now_ns() + EXIT_COMPLETE_WAIT_NS;
	atomic_store(&exit_waiting, true);
	while (atomic_load(&outstanding) > 0) {
		uint64_t now = pcl_now_ns();
		if (now >= deadline)
			break;
		struct timespec ts = in_ns(deadline - now < 20000000ull ? deadline - now : 20000000ull);
		pthread_cond_timedwait(&idle, &mu, &ts);
	}
	unsigned left = atomic_load(&outstanding);
	atomic_store(&stopping, true);
	pthread_cond_signal(&wake);
	bool running = reaper_running;
	pthread_mutex_unlock(&mu);
	if (left)
		pcl_count_dropped(left); /* still running on the device at exit */
	bool told = false;
	if (running) {
		struct timespec ts = in_ns(1000000000ull); /* the reaper itself gives up after EXIT_SEND_WAIT_NS */
		if (pthread_timedjoin_np(reaper, NULL, &ts) == 0) {
			pthread_mutex_lock(&mu);
			told = reaper_done;
			pthread_mutex_unlock(&mu);
		}
	}
	uint64_t dropped = pcl_dropped(), captured = atomic_load(&n_captured);
	pcl_log("exit: %llu commands captured, %llu sent, %llu dropped%s", (unsigned long long)captured,
		(unsigned long long)pcl_sent(), (unsigned long long)dropped, told ? "" : " (agent not told)");
	if (dropped > 0 && !told)
		write_dropfile(dropped, captured + left);
}

static void start_fn(void)
{
	pcl_init();
	declared_gen = pcl_send_drops();
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the app's signals are not for the reaper */
	reaper_running = pthread_create(&reaper, NULL, reaper_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (reaper_running)
		pthread_setname_np(reaper, "profcl-reaper"); /* in top -H, perf, gdb */
	if (!reaper_running)
		pcl_log("cannot start the reaper thread: commands are not recorded");
	atexit(at_exit);
}

/* ---------------------------------------------------------------- tracking */
struct pcl_pending *pcl_pending_new(void)
{
	pthread_once(&start_once, start_fn);
	struct pcl_pending *p = NULL;
	bool counted = reaper_running && !atomic_load(&stopping);
	if (counted && atomic_fetch_add(&outstanding, 1) < MAX_OUTSTANDING)
		p = take_record();
	if (!p) {
		if (counted)
			atomic_fetch_sub(&outstanding, 1); /* too many outstanding, or out of memory */
		pcl_count_dropped(1);
		return NULL;
	}
	/* Everything but the dependency arrays (only their first n_* entries are used). */
	memset(&p->cmd, 0, offsetof(struct pcl_cmd, wait));
	p->ev = NULL;
	p->status = 0;
	p->next = NULL;
	p->cmd.pid = pcl_pid();
	p->cmd.id = atomic_fetch_add(&next_id, 1);
	return p;
}

void pcl_pending_abandon(struct pcl_pending *p)
{
	settled();
	return_record(p);
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user)
{
	(void)ev;
	pcl_enter(PCL_FN_CALLBACK);
	struct pcl_pending *p = user;
	p->cmd.host_complete = pcl_now_ns();
	p->status = status;
	p->next = atomic_load(&done_stack);
	while (!atomic_compare_exchange_weak(&done_stack, &p->next, p))
		;
	unsigned n = atomic_fetch_add(&ndone, 1) + 1;
	settled();
	/* Wake the reaper for a full batch, when it sleeps without a timer, or at exit. */
	if (n == BATCH || atomic_load(&reaper_sleeping) || atomic_load(&stopping)) {
		pthread_mutex_lock(&mu);
		pthread_cond_signal(&wake);
		pthread_mutex_unlock(&mu);
	}
	pcl_leave();
}

void pcl_track(struct pcl_pending *p, cl_event ev, bool own_event)
{
	/* The app's event gets a reference of our own: the app may release it
	 * before it completes. Our own event already carries the one we drop. */
	if (!own_event)
		pcl_rt_retain_event(ev);
	p->ev = ev;
	p->cmd.layer_event = own_event;
	uint64_t id = p->cmd.id;
	if (pcl_rt_set_callback(ev, on_complete, p) != CL_SUCCESS) {
		pcl_rt_release_event(ev);
		pcl_log("clSetEventCallback failed: command %llu not recorded", (unsigned long long)id);
		pcl_pending_abandon(p);
		pcl_count_dropped(1);
	}
}

void pcl_kick(void)
{
	/* The app waits for nothing of ours: only a full batch is worth a wake-up now. */
	if (atomic_load(&ndone) >= BATCH) {
		pthread_mutex_lock(&mu);
		pthread_cond_signal(&wake);
		pthread_mutex_unlock(&mu);
	}
}
