#include "cl_state_file.h"
#include "generated/config.h"

#ifdef CONFIG_AGENT_OPENCL

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cl_layer/cl_state.h"

int cl_state_file_create(const char *dir, char *path, size_t len)
{
	if (snprintf(path, len, "%s/prof-cl-state.%d", dir, (int)getpid()) >= (int)len)
		return -ENAMETOOLONG;
	unlink(path); /* a stale one of an earlier agent with this pid */
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	struct pcl_state_file *f = MAP_FAILED;
	if (ftruncate(fd, sizeof(*f)) == 0)
		f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int err = f == MAP_FAILED ? errno : 0;
	close(fd);
	if (err) {
		unlink(path);
		return -err;
	}
	f->nslots = PCL_STATE_SLOTS;
	f->magic = PCL_STATE_MAGIC; /* the library maps only a file with the magic */
	munmap(f, sizeof(*f));
	return 0;
}

enum cl_inside cl_state_file_inside(const char *path, int pid, char *detail, size_t len)
{
	detail[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return CL_INSIDE_UNKNOWN;
	const struct pcl_state_file *f = mmap(NULL, sizeof(*f), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return CL_INSIDE_UNKNOWN;
	enum cl_inside r = f->magic == PCL_STATE_MAGIC ? CL_INSIDE_NO : CL_INSIDE_UNKNOWN;
	size_t off = 0;
	for (uint32_t i = 0; r != CL_INSIDE_UNKNOWN && i < PCL_STATE_SLOTS; i++) {
		const struct pcl_state_slot *s = &f->slot[i];
		if (atomic_load(&s->pid) != pid || atomic_load(&s->depth) == 0)
			continue;
		uint32_t own = atomic_load(&s->own), fn = atomic_load(&s->fn);
		if (own || fn >= PCL_FN_REAPER)
			r = CL_INSIDE_OWN;
		else if (r != CL_INSIDE_OWN)
			r = CL_INSIDE_FORWARDING;
		const char *how = own ? ", in the library's own call to "
			      : fn < PCL_FN_REAPER ? " (forwarding the program's call)" : "";
		int n = snprintf(detail + off, len - off, "%sthread %d in %s%s%s", off ? "; " : "",
				 (int)atomic_load(&s->tid), pcl_fn_name(fn), how,
				 own ? pcl_fn_name(atomic_load(&s->own_fn)) : "");
		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
	if (r == CL_INSIDE_NO && atomic_load(&f->untracked) > 0)
		r = CL_INSIDE_UNKNOWN; /* some threads had no slot */
	munmap((void *)f, sizeof(*f));
	return r;
}

#endif /* CONFIG_AGENT_OPENCL */
