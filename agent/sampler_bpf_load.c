/* Loading the sampler's BPF programs: light skeletons first (in-kernel
 * CO-RE), libbpf skeletons on kernels without a BPF loader program when
 * CONFIG_AGENT_BPF_LIBBPF is on (sampler_bpf_load.h). Skeletons: mk/bpf.mk. */
#include "generated/config.h"

#ifdef CONFIG_AGENT_BPF
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sample.lskel.h"
#include "sampler_bpf_load.h"
#include "sched.lskel.h"

#ifdef CONFIG_AGENT_BPF_LIBBPF
#include <malloc.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample.skel.h"
#include "sched.skel.h"
#endif

static void set_load_err(char *err, size_t errlen, int rc)
{
	snprintf(err, errlen, "loading the sampling BPF program: %s%s", strerror(-rc),
		 rc == -EPERM	 ? " (run as root: needs CAP_BPF and CAP_PERFMON)"
		 : rc == -ENOSYS ? " (this kernel has no bpf() system call: Linux 3.18+)"
				 : "");
}

/* ---- light skeletons: the kernel runs the loader and relocates */

static int load_light(struct sampler_bpf_progs *p, uint32_t tgid, bool callgraph)
{
	struct sample_lbpf *sk = sample_lbpf__open();
	if (!sk)
		return -ENOMEM;
	p->sample = sk;
	sk->rodata->target_tgid = tgid;
	sk->rodata->want_stack = callgraph;
	if (!callgraph)
		sk->maps.stacks.max_entries = 1; /* the loader takes max_entries from here */
	errno = 0;
	if (sample_lbpf__load(sk) < 0 || !sk->bss)
		return errno ? -errno : -EIO;
	p->sample_prog = sk->progs.on_sample.prog_fd;
	p->counts_map = sk->maps.counts.map_fd;
	p->stacks_map = sk->maps.stacks.map_fd;
	p->dropped = &sk->bss->dropped;

	struct sched_lbpf *sc = sched_lbpf__open();
	if (sc) {
		sc->rodata->target_tgid = tgid;
		if (sched_lbpf__load(sc) == 0 && sched_lbpf__attach(sc) == 0) {
			p->sched = sc;
			p->task_times_map = sc->maps.task_times.map_fd;
		} else {
			sched_lbpf__destroy(sc);
		}
	}
	return 0;
}

static void unload_light(struct sampler_bpf_progs *p)
{
	sched_lbpf__destroy(p->sched);
	sample_lbpf__destroy(p->sample);
}

/* ---- libbpf skeletons: libbpf relocates with the kernel BTF it parses */

#ifdef CONFIG_AGENT_BPF_LIBBPF
#define HAVE_LIBBPF 1

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && log_get_level() >= LOG_LEVEL_DEBUG)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int load_libbpf(struct sampler_bpf_progs *p, uint32_t tgid, bool callgraph)
{
	libbpf_set_print(libbpf_quiet);
	struct sample_bpf *sk = sample_bpf__open();
	if (!sk)
		return -errno;
	p->sample = sk;
	sk->rodata->target_tgid = tgid;
	sk->rodata->want_stack = callgraph;
	if (!callgraph)
		bpf_map__set_max_entries(sk->maps.stacks, 1);
	int rc = sample_bpf__load(sk);
	if (rc < 0)
		return rc;
	p->sample_prog = bpf_program__fd(sk->progs.on_sample);
	p->counts_map = bpf_map__fd(sk->maps.counts);
	p->stacks_map = bpf_map__fd(sk->maps.stacks);
	p->dropped = &sk->bss->dropped;

	struct sched_bpf *sc = sched_bpf__open();
	if (sc) {
		sc->rodata->target_tgid = tgid;
		if (sched_bpf__load(sc) == 0 && sched_bpf__attach(sc) == 0) {
			p->sched = sc;
			p->task_times_map = bpf_map__fd(sc->maps.task_times);
		} else {
			sched_bpf__destroy(sc);
		}
	}
#ifdef __GLIBC__
	/* libbpf freed the kernel BTF it parsed: give the heap back (musl unmaps freed memory itself) */
	malloc_trim(0);
#endif
	return 0;
}

static void unload_libbpf(struct sampler_bpf_progs *p)
{
	sched_bpf__destroy(p->sched);
	sample_bpf__destroy(p->sample);
}
#else
#define HAVE_LIBBPF 0

static int load_libbpf(struct sampler_bpf_progs *p, uint32_t tgid, bool callgraph)
{
	return -ENOTSUP;
}

static void unload_libbpf(struct sampler_bpf_progs *p)
{
}
#endif

static void reset(struct sampler_bpf_progs *p)
{
	*p = (struct sampler_bpf_progs){
	    .sample_prog = -1, .counts_map = -1, .stacks_map = -1, .task_times_map = -1};
}

int sampler_bpf_load(struct sampler_bpf_progs *p, uint32_t tgid, bool callgraph, char *err, size_t errlen)
{
	const char *only = getenv("PROF_BPF_LOADER");
	bool light_only = only && strcmp(only, "light") == 0,
	     libbpf_only = only && strcmp(only, "libbpf") == 0;
	int rc = -ENOTSUP;
	reset(p);
	if (libbpf_only && !HAVE_LIBBPF) {
		snprintf(
		    err, errlen,
		    "PROF_BPF_LOADER=libbpf: the libbpf loader is not compiled in (CONFIG_AGENT_BPF_LIBBPF)");
		return -ENOTSUP;
	}
	if (!libbpf_only) {
		p->light = true;
		rc = load_light(p, tgid, callgraph);
		if (rc == 0)
			goto loaded;
		sampler_bpf_unload(p);
		if (rc == -EPERM || rc == -EACCES || light_only) {
			set_load_err(err, errlen, rc);
			return rc;
		}
		if (!HAVE_LIBBPF) {
			snprintf(err, errlen,
				 "the BPF programs' light skeleton did not load (%s): it needs Linux >= 5.17 "
				 "(a BPF loader program, CO-RE in the kernel), and this agent has no libbpf "
				 "fallback (CONFIG_AGENT_BPF_LIBBPF is off)",
				 strerror(-rc));
			return rc;
		}
		log_debug(
		    "bpf: the light skeleton did not load (%s; a BPF loader program needs Linux >= 5.17): "
		    "using libbpf",
		    strerror(-rc));
	}
	rc = load_libbpf(p, tgid, callgraph);
	if (rc < 0) {
		set_load_err(err, errlen, rc);
		sampler_bpf_unload(p);
		return rc;
	}
loaded:
	if (p->task_times_map < 0)
		log_warn("sched_switch BPF program did not load: no on/off-CPU times");
	log_debug("bpf: programs loaded by %s", p->light ? "the kernel (light skeleton)" : "libbpf");
	return 0;
}

void sampler_bpf_unload(struct sampler_bpf_progs *p)
{
	if (p->light)
		unload_light(p);
	else
		unload_libbpf(p);
	reset(p);
}
#endif
