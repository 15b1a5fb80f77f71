/* Where this thread is in the library: a thread-local depth (calls the
 * runtime makes back into the API from inside one of ours pass straight
 * through) mirrored, when the agent gave us PROF_CL_STATE, into a slot of the
 * shared state file (../cl_state.h) so that the agent can say, after the
 * program died by a signal, which threads were inside the library and doing
 * what. A slot is claimed at a thread's first entry and freed when the thread
 * exits; the cost per call is a few stores to memory this thread owns. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pcl.h"

struct tls {
	uint32_t depth, own;
	bool tried;
	struct pcl_state_slot *slot;
};

static __thread struct tls tls;
static struct pcl_state_file *file;
static pthread_key_t slot_key;
static bool have_key;

static void slot_free(void *p)
{
	struct pcl_state_slot *s = p;
	atomic_store(&s->depth, 0);
	atomic_store(&s->own, 0);
	atomic_store(&s->tid, 0);
	atomic_store(&s->pid, 0); /* last: the slot is free */
}

void pcl_state_init(void)
{
	const char *path = getenv(PCL_ENV_STATE);
	if (!path || !*path)
		return;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	/* the size by lseek, not fstat: fstat is a libc symbol only since glibc 2.33 (before, __fxstat64),
	 * and the board builds bind glibc 2.17 (scripts/glibc-symver.sh) */
	off_t size = lseek(fd, 0, SEEK_END);
	void *m = MAP_FAILED;
	if (size >= 0 && (size_t)size >= sizeof(struct pcl_state_file))
		m = mmap(NULL, sizeof(struct pcl_state_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	struct pcl_state_file *f = m;
	if (f->magic != PCL_STATE_MAGIC || f->nslots != PCL_STATE_SLOTS) {
		munmap(m, sizeof(*f));
		return;
	}
	have_key = pthread_key_create(&slot_key, slot_free) == 0;
	file = f;
}

void pcl_state_after_fork(void)
{
	/* The slot belonged to the parent's thread; the child's thread claims its own. */
	tls.slot = NULL;
	tls.tried = false;
}

static struct pcl_state_slot *claim(void)
{
	tls.tried = true;
	if (!file || !have_key)
		return NULL;
	int32_t pid = pcl_pid(), tid = (int32_t)syscall(SYS_gettid);
	for (uint32_t i = 0; i < PCL_STATE_SLOTS; i++) {
		struct pcl_state_slot *s = &file->slot[i];
		int32_t free_pid = 0;
		if (atomic_load_explicit(&s->pid, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&s->pid, &free_pid, pid)) {
			atomic_store(&s->tid, tid);
			pthread_setspecific(slot_key, s);
			return s;
		}
	}
	atomic_fetch_add(&file->untracked, 1);
	return NULL;
}

bool pcl_nested(void)
{
	return tls.depth > 0;
}

void pcl_state_claim(void)
{
	if (!tls.tried)
		tls.slot = claim();
}

void pcl_enter(uint32_t fn)
{
	pcl_state_claim();
	struct pcl_state_slot *s = tls.slot;
	if (tls.depth++ == 0 && s)
		atomic_store_explicit(&s->fn, fn, memory_order_relaxed);
	if (s)
		atomic_store_explicit(&s->depth, tls.depth, memory_order_release);
}

void pcl_leave(void)
{
	if (tls.depth > 0)
		tls.depth--;
	if (tls.slot)
		atomic_store_explicit(&tls.slot->depth, tls.depth, memory_order_release);
}

void pcl_own_begin(uint32_t fn)
{
	tls.own++;
	if (tls.slot) {
		atomic_store_explicit(&tls.slot->own_fn, fn, memory_order_relaxed);
		atomic_store_explicit(&tls.slot->own, tls.own, memory_order_release);
	}
}

void pcl_own_end(void)
{
	if (tls.own > 0)
		tls.own--;
	if (tls.slot)
		atomic_store_explicit(&tls.slot->own, tls.own, memory_order_release);
}
