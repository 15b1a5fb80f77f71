/* Commands from enqueue to the agent. The layer keeps a reference on each
 * command's event and hands the record to the reaper thread (one atomic push
 * on the submitted stack). The reaper keeps the records in per-queue FIFOs
 * and, every REAP_EVERY_NS while commands are outstanding (REAP_AFTER_FINISH_NS
 * after an app thread waited for its commands), asks the runtime
 * whether they completed (an in-order queue's commands complete in order:
 * it stops at the first one still running; out-of-order queues are looked at
 * up to SCAN_MAX commands a visit). A completed command's profiling info is
 * read (no wait), the reference released, and the command encoded into the
 * datagram under construction (a kernel's declaration before its first
 * command), which goes to send.c when full (64 KiB, some 500 commands) or
 * SEND_EVERY_NS after its first command: the agent wakes per datagram.
 * When the agent gave a ring directory (ring.c, ../cl_ring.h) the datagram
 * goes into this process's shared ring at every visit instead: what the
 * reaper has timed survives the process (a signal, an abort), and the ring's
 * counters say how many enqueued commands were never seen complete. An app
 * thread's clFinish / clWaitForEvents makes that visit itself before it
 * returns (pcl_track_kick, under work_mu): what the program waited for is in
 * the ring before it can die right after (an abort after its finish).
 *
 * No completion callbacks: PoCL runs every event callback on its own
 * callback thread (lib/CL/pocl_util.c, pocl_event_cb_push: a malloc, a lock
 * and a condition signal per callback), a wake-up and two context switches
 * per command; polling costs one clGetEventInfo per completed command on the
 * reaper. The app's threads never wait for any of it; per command they take
 * a record from their own cache of the free stack (records come from slabs)
 * and push it: no lock, no malloc. At exit, a bounded drain. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "pcl.h"
#include "ring.h"
#include "send.h"

#define MAX_OUTSTANDING 65536u		   /* commands tracked at once; more are dropped */
#define SLAB 256u			   /* records allocated at once */
#define REAP_EVERY_NS 5000000ull	   /* the reaper's visits while commands are outstanding */
#define SEND_EVERY_NS 50000000ull	   /* a datagram goes when full, or when its oldest command is this old */
#define MAX_QUEUES 256u			   /* per-queue FIFOs; more queues share the last one */
#define SCAN_MAX 1024u			   /* commands of an out-of-order queue looked at per visit */
#define EXIT_COMPLETE_WAIT_NS 300000000ull /* at exit: for enqueued commands to complete */
#define EXIT_SEND_WAIT_NS 300000000ull	   /* at exit: for the socket to take the rest */
#define REAP_AFTER_FINISH_NS 1000000ull	   /* the next visit after an app thread waited for its commands */
#define IDLE_AFTER_NS 50000000ull	   /* visits go on this long after the last outstanding command */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* the reaper's sleep, and the exit */
/* The reaper's work (FIFOs, datagram, send.c, the ring's writer end): the reaper's visits, and an
 * app thread's drain after its wait (pcl_track_kick), one at a time. */
static pthread_mutex_t work_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static _Atomic(struct pcl_pending *) submitted; /* tracked, newest first */
static _Atomic(struct pcl_pending *) free_stack; /* processed, for reuse */
static _Atomic unsigned outstanding;		 /* tracked and not processed yet */
static bool reaper_running;
static _Atomic bool stopping, reaper_done, reaper_idle;
static _Atomic bool finish_seen; /* an app thread waited for its commands since the reaper last slept */
static _Atomic uint64_t last_wait_ns; /* when an app thread last waited for its commands */
static bool kick_pending; /* under mu: a wait asked for a visit now */
static uint64_t busy_ns;	 /* the reaper's: its last visit with commands outstanding */
static _Atomic bool abandoned; /* the exit stopped waiting for the reaper: no more calls into the runtime */
static _Atomic bool reaper_exited; /* its last store before returning (bionic's timed join below) */
static pthread_t reaper;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t next_id = 1, n_captured;
/* What the reaper cost (the exit's debug line): its visits, the wake-ups the app's threads made
 * (a finish, the first command after a quiet time) and its CPU time, read at its end. */
static _Atomic uint64_t n_visits, n_kicks, n_first_wakes, n_drains, n_drain_questions, reaper_cpu_ns;
static uint64_t n_questions; /* under work_mu: status questions of every visit */
/* Tests only (pcl.h): NULL in the libraries (its setter is hidden, no environment reaches it). */
static _Atomic(pcl_visit_hook) visit_hook;
/* Each app thread's records, taken from the free stack all at once. */
static __thread struct pcl_pending *cache;
static __thread struct pcl_pending *carve, *carve_end; /* the rest of this thread's slab */

/* The reaper's own state: per-queue FIFOs of commands not seen complete yet. */
struct fifo {
	uint32_t queue_id;
	bool in_order;
	struct pcl_pending *head, *tail;
};
static struct fifo fifos[MAX_QUEUES];
static unsigned nfifos;

/* The reaper's datagram under construction and the kernels this connection has been told about. */
static uint8_t dgram[PCL_DGRAM_MAX];
static size_t dgram_len;
static uint32_t dgram_cmds;
static uint64_t dgram_since; /* when its first message was encoded */
static uint8_t *declared; /* [kernel id] */
static size_t declared_cap;
static uint64_t declared_gen; /* send.c's drop count when the flags were last valid */

static void after_fork_child(void)
{
	/* Only this thread exists in the child: start from scratch. The parent's records (on the
	 * stacks, in the FIFOs, in this thread's cache) are not ours: dropped (leaked, bounded). */
	pthread_mutex_init(&mu, NULL);
	pthread_mutex_init(&work_mu, NULL);
	pthread_cond_init(&wake, NULL);
	atomic_store(&submitted, NULL);
	atomic_store(&free_stack, NULL);
	atomic_store(&outstanding, 0);
	cache = NULL;
	carve = carve_end = NULL; /* the parent's slab stays the parent's (copied, unused: bounded) */
	nfifos = 0;
	reaper_running = false;
	atomic_store(&stopping, false);
	atomic_store(&reaper_done, false);
	atomic_store(&reaper_exited, false);
	atomic_store(&reaper_idle, false);
	atomic_store(&finish_seen, false);
	atomic_store(&last_wait_ns, 0);
	kick_pending = false;
	busy_ns = 0;
	start_once = (pthread_once_t)PTHREAD_ONCE_INIT; /* the reaper did not survive the fork */
	atomic_store(&n_captured, 0);
	atomic_store(&n_visits, 0);
	atomic_store(&n_kicks, 0);
	atomic_store(&n_drains, 0);
	atomic_store(&n_drain_questions, 0);
	n_questions = 0;
	atomic_store(&n_first_wakes, 0);
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
	pcl_ring_after_fork(); /* the child's ring is made at its first command */
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
/* Push the list head..tail on a stack (one compare-and-swap; the takers take the whole stack). */
static void push_list(_Atomic(struct pcl_pending *) *stack, struct pcl_pending *head, struct pcl_pending *tail)
{
	tail->next = atomic_load(stack);
	while (!atomic_compare_exchange_weak(stack, &tail->next, head))
		;
}

/* A record for this thread: from its cache, refilled with the whole free stack, or carved from
 * this thread's slab. A record is ~1.7 KiB (its dependency arrays) and a program that enqueues far
 * ahead of the device has thousands outstanding: slabs come pre-faulted (MAP_POPULATE), one
 * page-table fill per slab instead of a page fault for every two records on the app's thread, and
 * records are carved as they are needed rather than linked all at once (a pass over 450 KB of
 * fresh memory). Issue #41: together a fifth of the layer's per-command CPU with cl_matmul 16
 * 20000 (perf record). Slabs are never unmapped. */
static struct pcl_pending *take_record(void)
{
	if (!cache)
		cache = atomic_exchange(&free_stack, NULL);
	if (cache) {
		struct pcl_pending *p = cache;
		cache = p->next;
		return p;
	}
	if (carve == carve_end) {
		struct pcl_pending *slab = mmap(NULL, SLAB * sizeof(*slab), PROT_READ | PROT_WRITE,
						MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (slab == MAP_FAILED)
			return NULL;
		carve = slab;
		carve_end = slab + SLAB;
	}
	return carve++;
}

/* ---------------------------------------------------------------- reaper */
static void dgram_push(void)
{
	if (dgram_len)
		pcl_send_queue(dgram, dgram_len, dgram_cmds);
	dgram_len = 0;
	dgram_cmds = 0;
}

/* The datagram goes when it is old enough (or at exit): fewer, larger sends, fewer wake-ups of the agent. */
static void dgram_maybe_push(uint64_t now, bool stop)
{
	if (dgram_len && (stop || now - dgram_since >= SEND_EVERY_NS))
		dgram_push();
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

/* A completed command: its times, our reference released (not at exit: the process is going, and
 * with it the runtime's memory), its message. */
static void process(struct pcl_pending *p, cl_int status, uint64_t seen_ns, bool exiting)
{
	uint64_t t[4];
	pcl_rt_profiling(p->ev, t);
	if (!exiting) {
		bool app_event = !p->cmd.layer_event;
		if (app_event) /* while the app may ask for its reference count (intercept_info.c) */
			pcl_event_layer_set(p->ev, PCL_EV_RELEASING);
		pcl_rt_release_event(p->ev);
		if (app_event)
			pcl_event_layer_set(p->ev, PCL_EV_RELEASED);
	}
	atomic_fetch_sub(&outstanding, 1);
	if (status < 0 || !t[3]) {
		pcl_ring_failed();
		pcl_log("command %llu ended with error %d (or has no end time): not recorded",
			(unsigned long long)p->cmd.id, status);
		return;
	}
	struct pcl_cmd *c = &p->cmd;
	c->queued = t[0], c->submit = t[1], c->start = t[2], c->end = t[3];
	c->host_complete = seen_ns;
	c->dropped_before = pcl_dropped();
	if (pcl_debug > 1)
		pcl_log("cmd %llu type 0x%x q%u kernel %u %llu..%llu (%llu ns)", (unsigned long long)c->id, c->type,
			c->queue_id, c->kernel, (unsigned long long)c->start, (unsigned long long)c->end,
			(unsigned long long)(c->end - c->start));
	atomic_fetch_add(&n_captured, 1);
	dgram_room();
	if (!dgram_len)
		dgram_since = seen_ns;
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

/* Newly tracked commands (p: the submitted stack, taken) into their queue's FIFO, in enqueue
 * order; how many. */
static unsigned take_submitted(struct pcl_pending *p)
{
	unsigned n = 0;
	struct pcl_pending *rev = NULL;
	while (p) { /* newest first: reverse */
		struct pcl_pending *next = p->next;
		p->next = rev;
		rev = p;
		p = next;
	}
	for (p = rev; p;) {
		struct pcl_pending *next = p->next;
		p->next = NULL;
		unsigned i = 0;
		while (i < nfifos && fifos[i].queue_id != p->cmd.queue_id)
			i++;
		if (i == nfifos) {
			if (nfifos < MAX_QUEUES)
				fifos[nfifos++] = (struct fifo){.queue_id = p->cmd.queue_id, .in_order = p->in_order};
			else
				i = MAX_QUEUES - 1; /* shared: looked at as out of order */
		}
		struct fifo *f = &fifos[i];
		if (i == MAX_QUEUES - 1 && f->queue_id != p->cmd.queue_id)
			f->in_order = false;
		if (f->tail)
			f->tail->next = p;
		else
			f->head = p;
		f->tail = p;
		p = next;
		n++;
	}
	return n;
}

static void done_append(struct pcl_pending **done, struct pcl_pending **done_tail, struct pcl_pending *p)
{
	p->next = NULL;
	if (*done_tail)
		(*done_tail)->next = p;
	else
		*done = p;
	*done_tail = p;
}

/* The runtime's status of p's command, counted (the exit's debug line). */
static cl_int status_of(struct pcl_pending *p)
{
	n_questions++;
	return pcl_rt_event_status(p->ev);
}

/* Whether a visit limited to the queues only[0..nonly) looks at FIFO i (nonly == 0: every FIFO;
 * the last FIFO, which queues past MAX_QUEUES share, always). */
static bool fifo_wanted(unsigned i, const uint32_t *only, unsigned nonly)
{
	if (!nonly || i == MAX_QUEUES - 1)
		return true;
	for (unsigned j = 0; j < nonly; j++)
		if (fifos[i].queue_id == only[j])
			return true;
	return false;
}

/* Visit the FIFOs (those of the queues only[0..nonly), or all when nonly is 0): process what
 * completed; the processed records go on *done..*done_tail. An in-order queue whose newest
 * command completed has completed them all: one question for the whole FIFO (a command that
 * failed has no times and is not recorded). */
static unsigned visit(struct pcl_pending **done, struct pcl_pending **done_tail, bool exiting,
		      const uint32_t *only, unsigned nonly, unsigned scan_max)
{
	unsigned n = 0;
	uint64_t now = pcl_now_ns();
	for (unsigned i = 0; i < nfifos && !atomic_load(&abandoned); i++) {
		struct fifo *f = &fifos[i];
		if (!fifo_wanted(i, only, nonly))
			continue;
		if (f->in_order && f->tail && f->tail != f->head && status_of(f->tail) == CL_COMPLETE) {
			for (struct pcl_pending *p = f->head, *next; p && !atomic_load(&abandoned); p = next) {
				next = p->next;
				process(p, CL_COMPLETE, now, exiting);
				done_append(done, done_tail, p);
				n++;
			}
			f->head = f->tail = NULL;
			continue;
		}
		/* the shared FIFO holds other queues' commands too: never more than SCAN_MAX of it */
		unsigned limit = i == MAX_QUEUES - 1 ? SCAN_MAX : scan_max;
		struct pcl_pending **pp = &f->head, *prev = NULL;
		for (unsigned scanned = 0; *pp && scanned < limit && !atomic_load(&abandoned); scanned++) {
			struct pcl_pending *p = *pp;
			cl_int st = status_of(p);
			if (st > CL_COMPLETE) { /* queued, submitted or running */
				if (f->in_order)
					break; /* the later ones of an in-order queue are not done either */
				prev = p;
				pp = &p->next;
				continue;
			}
			*pp = p->next;
			if (f->tail == p)
				f->tail = prev;
			process(p, st, now, exiting);
			done_append(done, done_tail, p);
			n++;
		}
	}
	return n;
}

static bool fifos_empty(void)
{
	for (unsigned i = 0; i < nfifos; i++)
		if (fifos[i].head)
			return false;
	return true;
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

/* Sleep a period while commands are outstanding or a datagram waits, and IDLE_AFTER_NS more after
 * that (a program that waits for each command, as clpeak --kernel-latency does, would otherwise
 * wake the reaper at every enqueue: a system call on its thread); the period is REAP_AFTER_FINISH_NS
 * when an app thread waited for its commands since the last sleep (so a program that dies right
 * after its finish has its commands in the ring), else REAP_EVERY_NS. Else sleep until pcl_track or
 * the exit wakes us. Issue #41: in such a loop the app's threads make no system call for us. */
static void reaper_sleep(uint64_t now)
{
	bool busy = !fifos_empty() || atomic_load(&outstanding) > 0 || dgram_len;
	if (busy)
		busy_ns = now;
	pthread_mutex_lock(&mu);
	if (busy || now - busy_ns < IDLE_AFTER_NS) {
		bool soon = atomic_exchange(&finish_seen, false);
		struct timespec ts = in_ns(soon ? REAP_AFTER_FINISH_NS : REAP_EVERY_NS);
		if (!kick_pending) /* else a wait came during the visit: at once */
			pthread_cond_timedwait(&wake, &mu, &ts);
		kick_pending = false;
	} else {
		kick_pending = false; /* nothing outstanding: nothing a wait could want */
		/* Announce the sleep, then look again: a command tracked by a thread that did not
		 * see the flag is on the stack by now (both sides are sequentially consistent). */
		atomic_store(&reaper_idle, true);
		if (!atomic_load(&submitted) && !atomic_load(&stopping))
			pthread_cond_wait(&wake, &mu);
		atomic_store(&reaper_idle, false);
	}
	pthread_mutex_unlock(&mu);
}

/* One visit, under work_mu: new commands into their FIFOs, the completed ones (of the queues
 * only[0..nonly), or of all when nonly is 0) timed and encoded, the datagram out (at once with a
 * ring), the send queue flushed. True when nothing waits to be sent. scan_max: commands of an
 * out-of-order queue looked at. reaper: the reaper's visit, marked in its state slot as inside the
 * library (state.c) when it has something to do: commands to take or look at, a datagram, a send
 * queue or the exit. Its idle visits (the IDLE_AFTER_NS after the last command: no runtime call,
 * nothing sent) are not: a program that crashed on its own during one was reported as "inside a
 * call of its own ... the crash may be the profiler's" (cl_edge crash, 1 of 150 runs of the
 * sanitizer build under load). tests/unit/test_cl_layer_reaper.c checks both from inside the visits.
 * An app thread's drain (pcl_track_kick) is marked by the call it is in. */
static bool work(bool stop, uint64_t *now, const uint32_t *only, unsigned nonly, unsigned scan_max, bool reaper)
{
	pcl_visit_hook hook = reaper ? atomic_load_explicit(&visit_hook, memory_order_acquire) : NULL;
	/* marked before the new commands are walked: the records the app's threads pushed are the
	 * library's own work too */
	struct pcl_pending *fresh = atomic_exchange(&submitted, NULL);
	/* a datagram marks the visit only when it goes out in it (review r15 F1: without a ring it waits
	 * up to SEND_EVERY_NS, and the visits meanwhile only look at its age) */
	bool ring = pcl_ring_active();
	bool push_due = dgram_len && (stop || ring || pcl_now_ns() - dgram_since >= SEND_EVERY_NS);
	bool marked = reaper && (stop || fresh || !fifos_empty() || push_due || !pcl_send_empty());
	if (marked)
		pcl_enter(PCL_FN_REAPER);
	unsigned taken = take_submitted(fresh);
	if (hook) /* one load per visit, above */
		hook(false, marked, taken);
	struct pcl_pending *done = NULL, *done_tail = NULL;
	visit(&done, &done_tail, stop, only, nonly, scan_max);
	*now = pcl_now_ns();
	if (marked || !reaper) /* an unmarked visit added nothing to it, and it was not due */
		dgram_maybe_push(*now, stop || ring); /* with a ring: at once */
	if (done)
		push_list(&free_stack, done, done_tail);
	bool sent = pcl_send_flush(*now);
	pcl_ring_sync_dropped(pcl_dropped());
	if (hook)
		hook(true, marked, taken);
	if (marked)
		pcl_leave();
	return sent;
}

void pcl_track_set_visit_hook(pcl_visit_hook fn)
{
	atomic_store_explicit(&visit_hook, fn, memory_order_release);
}

static void *reaper_main(void *arg)
{
	(void)arg;
	/* the thread's state slot claimed now, not at its first marked visit under work_mu, where an
	 * app thread's drain may wait for it (review r15 F2) */
	pcl_state_claim();
	uint64_t complete_deadline = 0, send_deadline = 0;
	for (;;) {
		bool stop = atomic_load(&stopping);
		pthread_mutex_lock(&work_mu);
		uint64_t now;
		bool sent = work(stop, &now, NULL, 0, SCAN_MAX, true);
		pthread_mutex_unlock(&work_mu);
		atomic_fetch_add_explicit(&n_visits, 1, memory_order_relaxed);
		if (stop) {
			/* At exit: wait a bounded time for the commands still running, then for the socket. */
			if (!complete_deadline)
				complete_deadline = now + EXIT_COMPLETE_WAIT_NS;
			bool pending = !fifos_empty() || atomic_load(&submitted);
			if (pending && now < complete_deadline) {
				usleep(1000);
				continue;
			}
			if (!send_deadline)
				send_deadline = now + EXIT_SEND_WAIT_NS;
			if (sent || now >= send_deadline)
				break;
		}
		if (!sent) {
			/* The ring is full: give the agent time to read (its liveness is asked at the
			 * next flush). Without a ring the app's threads never touch send.c. */
			pthread_mutex_lock(&work_mu);
			bool ring = pcl_ring_active();
			pthread_mutex_unlock(&work_mu);
			if (ring) {
				usleep(5000);
				continue;
			}
			/* The socket is full (or not connected yet): come back soon. */
			if (pcl_send_wait(5) == 0 && !pcl_send_connected())
				usleep(5000);
			continue;
		}
		reaper_sleep(now);
	}
	/* Last words: totals, so the agent can report the drops (marked inside the library: the
	 * library's own encoding and sending, review r15 F3). */
	pthread_mutex_lock(&work_mu);
	pcl_enter(PCL_FN_REAPER);
	unsigned left = atomic_load(&outstanding);
	if (left)
		pcl_count_dropped(left); /* still running on the device at exit */
	pcl_send_flush(pcl_now_ns());
	struct pcl_proc bye = {.pid = pcl_pid(), .mode = (uint32_t)pcl_mode,
			       .commands = atomic_load(&n_captured), .dropped = pcl_dropped()};
	uint8_t buf[PCL_MSG_MAX];
	int len = pcl_encode_proc(PCL_MSG_BYE, &bye, buf, sizeof(buf));
	bool told = len > 0 && pcl_send_queue(buf, (size_t)len, 0) && pcl_send_flush(pcl_now_ns()) &&
		    pcl_send_connected();
	if (pcl_ring_active()) {
		pcl_send_drop_rest(); /* what the ring had no room for by now */
		pcl_ring_done(pcl_dropped());
	}
	pcl_leave();
	pthread_mutex_unlock(&work_mu);
	struct timespec cpu;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
		atomic_store(&reaper_cpu_ns, (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec);
	atomic_store(&reaper_done, told);
	atomic_store(&reaper_exited, true);
	return NULL;
}

#ifdef __BIONIC__
/* bionic has no pthread_timedjoin_np: wait, bounded, for the reaper's last store, then join */
static int timed_join(pthread_t t, const struct timespec *until)
{
	for (;;) {
		if (atomic_load(&reaper_exited))
			return pthread_join(t, NULL);
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		if (now.tv_sec > until->tv_sec || (now.tv_sec == until->tv_sec && now.tv_nsec >= until->tv_nsec))
			return ETIMEDOUT;
		usleep(2000);
	}
}
#else
#define timed_join(t, until) pthread_timedjoin_np(t, NULL, until)
#endif

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
	atomic_store(&stopping, true);
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&mu);
	bool told = false;
	if (reaper_running) {
		/* The reaper gives up after EXIT_COMPLETE_WAIT_NS + EXIT_SEND_WAIT_NS. */
		struct timespec ts = in_ns(EXIT_COMPLETE_WAIT_NS + EXIT_SEND_WAIT_NS + 400000000ull);
		if (timed_join(reaper, &ts) == 0)
			told = atomic_load(&reaper_done);
		else
			atomic_store(&abandoned, true); /* it may still be in a call: let it make no more */
	}
	uint64_t dropped = pcl_dropped(), captured = atomic_load(&n_captured);
	pcl_log("exit: %llu commands captured, %llu sent, %llu dropped%s", (unsigned long long)captured,
		(unsigned long long)pcl_sent(), (unsigned long long)dropped, told ? "" : " (agent not told)");
	pcl_log("reaper: %llu visits, woken %llu times by a finish and %llu by a first command, %.1f ms CPU; "
		"%llu drains by waiting threads, %llu status questions in them",
		(unsigned long long)atomic_load(&n_visits), (unsigned long long)atomic_load(&n_kicks),
		(unsigned long long)atomic_load(&n_first_wakes), (double)atomic_load(&reaper_cpu_ns) / 1e6,
		(unsigned long long)atomic_load(&n_drains),
		(unsigned long long)atomic_load(&n_drain_questions));
	if (dropped > 0 && !told)
		write_dropfile(dropped, captured + atomic_load(&outstanding));
}

static void start_fn(void)
{
	pcl_init();
	if (pcl_ring_open() && !pcl_send_link())
		pcl_ring_abandon(); /* no agent to read it */
	declared_gen = pcl_send_drops();
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the app's signals are not for the reaper */
	reaper_running = pthread_create(&reaper, NULL, reaper_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (reaper_running)
		pthread_setname_np(reaper, "profcl-reaper"); /* in top -H, perf, gdb */
	else
		pcl_log("cannot start the reaper thread: commands are not recorded");
	atexit(at_exit);
}

/* ---------------------------------------------------------------- tracking */
struct pcl_pending *pcl_pending_new(void)
{
	pthread_once(&start_once, start_fn);
	pcl_ring_seen(1);
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
	p->in_order = true;
	p->next = NULL;
	p->cmd.pid = pcl_pid();
	p->cmd.id = atomic_fetch_add(&next_id, 1);
	return p;
}

void pcl_pending_abandon(struct pcl_pending *p)
{
	pcl_ring_seen(-1);
	atomic_fetch_sub(&outstanding, 1);
	p->next = cache; /* back to this thread's cache */
	cache = p;
}

void pcl_track_kick(const uint32_t *queue_ids, unsigned n, bool finished)
{
	/* With a ring, the waiting thread writes what completed into it itself before the wait
	 * returns to the app: a program that dies right after its clFinish (abort, a signal) has
	 * every command it waited for in the ring, whatever the scheduler did with the reaper
	 * (a wake-up of the reaper raced the abort: best effort, issue #41). The reaper's state is
	 * the drain's under work_mu; the waiter blocks at most for the visit the reaper is in.
	 * Only the FIFOs of the queues waited for: the other queues' commands are the reaper's,
	 * and an out-of-order queue's FIFO costs up to SCAN_MAX status questions a visit. After a
	 * clFinish of known queues every command of theirs enqueued before it has completed: their
	 * FIFOs are looked at whole (each question answers CL_COMPLETE, each command is timed), so
	 * none of what the program waited for is left to the reaper beyond SCAN_MAX. */
	if (atomic_load(&outstanding) == 0 && !atomic_load(&submitted))
		return; /* nothing to time (and the reaper may not have started) */
	if (!reaper_running || atomic_load(&stopping) || atomic_load(&abandoned))
		return;
	pthread_mutex_lock(&work_mu);
	bool ring = pcl_ring_active(); /* the reaper abandons it when the agent went away */
	if (ring) {
		uint64_t now, q0 = n_questions;
		(void)work(false, &now, queue_ids, n, finished && n ? MAX_OUTSTANDING : SCAN_MAX, false);
		atomic_fetch_add_explicit(&n_drain_questions, n_questions - q0, memory_order_relaxed);
	}
	pthread_mutex_unlock(&work_mu);
	if (ring) {
		atomic_fetch_add_explicit(&n_drains, 1, memory_order_relaxed);
		return;
	}
	/* Without a ring: the socket, which the reaper alone writes. */
	if (!atomic_load_explicit(&finish_seen, memory_order_relaxed))
		atomic_store_explicit(&finish_seen, true, memory_order_relaxed);
	/* Waits closer together than REAP_AFTER_FINISH_NS (a loop of them: clpeak --kernel-latency)
	 * need no wake-up: the reaper's short sleeps come as often. A wait after a longer quiet
	 * time (the program's last, before it may die) has the reaper visit now, or right after
	 * the visit it is in. Waking a sleeping thread costs the waker 7-8 µs here (bench/RESULTS.md,
	 * issue #41): it was once a ms in such loops. */
	uint64_t now = pcl_now_ns();
	uint64_t prev = atomic_exchange_explicit(&last_wait_ns, now, memory_order_relaxed);
	if (now - prev < REAP_AFTER_FINISH_NS)
		return;
	atomic_fetch_add_explicit(&n_kicks, 1, memory_order_relaxed);
	pthread_mutex_lock(&mu);
	kick_pending = true;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&mu);
}

void pcl_track(struct pcl_pending *p, cl_event ev, bool own_event)
{
	/* The app's event gets a reference of our own: the app may release it
	 * before it completes. Our own event already carries the one we drop. */
	if (!own_event)
		pcl_rt_retain_event(ev);
	p->ev = ev;
	p->cmd.layer_event = own_event;
	push_list(&submitted, p, p);
	if (atomic_load(&reaper_idle)) { /* the first command after a quiet time */
		atomic_fetch_add_explicit(&n_first_wakes, 1, memory_order_relaxed);
		pthread_mutex_lock(&mu);
		pthread_cond_signal(&wake);
		pthread_mutex_unlock(&mu);
	}
}
