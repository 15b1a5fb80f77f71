/* Commands from enqueue to the agent. The layer keeps a reference on each
 * command's event and asks for a completion callback; the callback (a
 * driver thread) only timestamps the record and hands it to the reaper
 * thread, which reads the profiling info (the event is complete: no wait),
 * releases the reference and queues the message for the agent. The app's
 * threads never wait for any of it. At exit, a bounded drain. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcl.h"
#include "send.h"

#define MAX_OUTSTANDING 65536u        /* commands tracked at once; more are dropped */
#define EXIT_COMPLETE_WAIT_NS 300000000ull /* at exit: for enqueued commands to complete */
#define EXIT_SEND_WAIT_NS 300000000ull     /* at exit: for the socket to take the rest */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER; /* reaper: work or stop */
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER; /* exit: an outstanding command completed */
static struct pcl_pending *done_head, *done_tail;
static unsigned outstanding; /* tracked, callback not yet run */
static bool reaper_running, stopping, reaper_done;
static pthread_t reaper;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t next_id = 1, n_captured;

uint64_t pcl_next_cmd_id(void) { return atomic_fetch_add(&next_id, 1); }

static void after_fork_child(void)
{
	/* Only this thread exists in the child: start from scratch. */
	pthread_mutex_init(&mu, NULL);
	pthread_cond_init(&wake, NULL);
	pthread_cond_init(&idle, NULL);
	done_head = done_tail = NULL;
	outstanding = 0;
	reaper_running = stopping = reaper_done = false;
	start_once = (pthread_once_t)PTHREAD_ONCE_INIT; /* the reaper did not survive the fork */
	atomic_store(&n_captured, 0);
	atomic_store(&next_id, 1);
	pcl_base_after_fork(); /* drop/sent counters, start time */
	pcl_send_after_fork();
}

static void init_once_fn(void)
{
	pcl_base_init(); /* debug level, start time */
	pthread_atfork(NULL, NULL, after_fork_child);
}

void pcl_init(void)
{
	pthread_once(&init_once, init_once_fn);
}

/* ---------------------------------------------------------------- reaper */
static void read_profiling(struct pcl_pending *p)
{
	cl_ulong t[4] = {0};
	static const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
						  CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
	for (int i = 0; i < 4; i++)
		if (pcl_next.clGetEventProfilingInfo(p->ev, what[i], sizeof(t[i]), &t[i], NULL) != CL_SUCCESS)
			t[i] = 0;
	p->cmd.queued = t[0];
	p->cmd.submit = t[1];
	p->cmd.start = t[2];
	p->cmd.end = t[3];
}

static void process(struct pcl_pending *p)
{
	read_profiling(p);
	pcl_next.clReleaseEvent(p->ev);
	if (p->status < 0) {
		pcl_log("command %llu ended with error %d: not recorded", (unsigned long long)p->cmd.id, p->status);
		free(p);
		return;
	}
	p->cmd.dropped_before = pcl_dropped();
	if (pcl_debug > 1)
		pcl_log("cmd %llu type 0x%x q%u %s %llu..%llu (%llu ns)", (unsigned long long)p->cmd.id,
			p->cmd.type, p->cmd.queue_id, p->cmd.kernel, (unsigned long long)p->cmd.start,
			(unsigned long long)p->cmd.end, (unsigned long long)(p->cmd.end - p->cmd.start));
	uint8_t buf[PCL_MSG_MAX];
	int len = pcl_encode_cmd(&p->cmd, buf, sizeof(buf));
	atomic_fetch_add(&n_captured, 1);
	if (len < 0 || !pcl_send_queue(buf, (size_t)len, true))
		pcl_count_dropped(1);
	free(p);
}

static void *reaper_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	uint64_t deadline = 0;
	for (;;) {
		struct pcl_pending *list = done_head;
		done_head = done_tail = NULL;
		bool stop = stopping;
		pthread_mutex_unlock(&mu);
		for (struct pcl_pending *p = list, *next; p; p = next) {
			next = p->next;
			process(p);
		}
		uint64_t now = pcl_now_ns();
		bool empty = pcl_send_flush(now);
		pthread_mutex_lock(&mu);
		if (stop) {
			if (!deadline)
				deadline = now + EXIT_SEND_WAIT_NS;
			if ((empty && !done_head) || now >= deadline)
				break;
		}
		if (done_head || stopping != stop)
			continue;
		if (!empty) {
			/* The socket is full (or not connected yet): come back soon. */
			pthread_mutex_unlock(&mu);
			if (pcl_send_wait(5) == 0 && !pcl_send_connected())
				usleep(5000);
			pthread_mutex_lock(&mu);
			continue;
		}
		pthread_cond_wait(&wake, &mu);
	}
	pthread_mutex_unlock(&mu);
	/* Last words: totals, so the agent can report the drops. */
	pcl_send_flush(pcl_now_ns());
	struct pcl_proc bye = {.pid = (int32_t)getpid(), .mode = (uint32_t)pcl_mode,
			       .commands = atomic_load(&n_captured), .dropped = pcl_dropped()};
	uint8_t buf[64];
	int len = pcl_encode_proc(PCL_MSG_BYE, &bye, buf, sizeof(buf));
	bool told = len > 0 && pcl_send_queue(buf, (size_t)len, false) && pcl_send_flush(pcl_now_ns()) &&
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
	int n = snprintf(line, sizeof(line), "pid %d dropped %llu of %llu OpenCL commands\n", (int)getpid(),
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
	while (outstanding > 0) {
		uint64_t now = pcl_now_ns();
		if (now >= deadline)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t wait = deadline - now < 20000000ull ? deadline - now : 20000000ull;
		ts.tv_nsec += (long)wait;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&idle, &mu, &ts);
	}
	unsigned left = outstanding;
	stopping = true;
	pthread_cond_signal(&wake);
	bool running = reaper_running;
	pthread_mutex_unlock(&mu);
	if (left)
		pcl_count_dropped(left); /* still running on the device at exit */
	bool told = false;
	if (running) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1; /* the reaper itself gives up after EXIT_SEND_WAIT_NS */
		if (pthread_timedjoin_np(reaper, NULL, &ts) == 0) {
			pthread_mutex_lock(&mu);
			told = reaper_done;
			pthread_mutex_unlock(&mu);
		}
	}
	uint64_t dropped = pcl_dropped(), captured = atomic_load(&n_captured);
	pcl_log("exit: %llu commands captured, %llu sent, %llu dropped%s", (unsigned long long)captured,
		(unsigned long long)pcl_sent(), (unsigned long long)dropped,
		told ? "" : " (agent not told)");
	if (dropped > 0 && !told)
		write_dropfile(dropped, captured + left);
}

static void start_fn(void)
{
	pcl_init();
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the app's signals are not for the reaper */
	reaper_running = pthread_create(&reaper, NULL, reaper_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!reaper_running)
		pcl_log("cannot start the reaper thread: commands are not recorded");
	atexit(at_exit);
}

/* ---------------------------------------------------------------- tracking */
struct pcl_pending *pcl_pending_new(void)
{
	pthread_once(&start_once, start_fn);
	pthread_mutex_lock(&mu);
	bool full = outstanding >= MAX_OUTSTANDING || stopping || !reaper_running;
	if (!full)
		outstanding++;
	pthread_mutex_unlock(&mu);
	struct pcl_pending *p = full ? NULL : calloc(1, sizeof(*p));
	if (!p) {
		if (!full) {
			pthread_mutex_lock(&mu);
			outstanding--;
			pthread_mutex_unlock(&mu);
		}
		pcl_count_dropped(1);
		return NULL;
	}
	p->cmd.pid = (int32_t)getpid();
	p->cmd.id = pcl_next_cmd_id();
	return p;
}

void pcl_pending_abandon(struct pcl_pending *p)
{
	pthread_mutex_lock(&mu);
	outstanding--;
	pthread_cond_broadcast(&idle);
	pthread_mutex_unlock(&mu);
	free(p);
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user)
{
	(void)ev;
	struct pcl_pending *p = user;
	p->cmd.host_complete = pcl_now_ns();
	p->status = status;
	pthread_mutex_lock(&mu);
	if (done_tail)
		done_tail->next = p;
	else
		done_head = p;
	done_tail = p;
	outstanding--;
	pthread_cond_signal(&wake);
	pthread_cond_broadcast(&idle);
	pthread_mutex_unlock(&mu);
}

void pcl_track(struct pcl_pending *p, cl_event ev, bool own_event)
{
	/* The app's event gets a reference of our own: the app may release it
	 * before it completes. Our own event already carries the one we drop. */
	if (!own_event)
		pcl_next.clRetainEvent(ev);
	p->ev = ev;
	p->cmd.layer_event = own_event;
	if (pcl_next.clSetEventCallback(ev, CL_COMPLETE, on_complete, p) != CL_SUCCESS) {
		pcl_next.clReleaseEvent(ev);
		pcl_log("clSetEventCallback failed: command %llu not recorded", (unsigned long long)p->cmd.id);
		pcl_pending_abandon(p);
		pcl_count_dropped(1);
	}
}

void pcl_kick(void)
{
	pthread_mutex_lock(&mu);
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&mu);
}
