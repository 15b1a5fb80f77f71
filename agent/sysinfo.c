#include "sysinfo.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "generated/config.h"
#include "opencl_probe.h"

struct arm_core {
	uint32_t implementer, part;
	const char *name;
};

static const struct arm_core arm_cores[] = {
	{0x41, 0xb76, "ARM1176"},	   {0x41, 0xc05, "Cortex-A5"},	    {0x41, 0xc07, "Cortex-A7"},
	{0x41, 0xc08, "Cortex-A8"},	   {0x41, 0xc09, "Cortex-A9"},	    {0x41, 0xc0d, "Cortex-A12"},
	{0x41, 0xc0e, "Cortex-A17"},	   {0x41, 0xc0f, "Cortex-A15"},	    {0x41, 0xd01, "Cortex-A32"},
	{0x41, 0xd03, "Cortex-A53"},	   {0x41, 0xd04, "Cortex-A35"},	    {0x41, 0xd05, "Cortex-A55"},
	{0x41, 0xd07, "Cortex-A57"},	   {0x41, 0xd08, "Cortex-A72"},	    {0x41, 0xd09, "Cortex-A73"},
	{0x41, 0xd0a, "Cortex-A75"},	   {0x41, 0xd0b, "Cortex-A76"},	    {0x41, 0xd0c, "Neoverse-N1"},
	{0x41, 0xd0d, "Cortex-A77"},	   {0x41, 0xd41, "Cortex-A78"},	    {0x41, 0xd44, "Cortex-X1"},
	{0x41, 0xd46, "Cortex-A510"},	   {0x41, 0xd47, "Cortex-A710"},    {0x41, 0xd48, "Cortex-X2"},
	{0x41, 0xd4d, "Cortex-A715"},	   {0x41, 0xd4e, "Cortex-X3"},	    {0x41, 0xd80, "Cortex-A520"},
	{0x41, 0xd81, "Cortex-A720"},	   {0x41, 0xd82, "Cortex-X4"},	    {0x51, 0x800, "Kryo 2xx Gold"},
	{0x51, 0x801, "Kryo 2xx Silver"}, {0x51, 0x804, "Kryo 4xx Gold"}, {0x51, 0x805, "Kryo 4xx Silver"},
};

const char *sysinfo_arm_core_name(uint32_t implementer, uint32_t part)
{
	for (size_t i = 0; i < sizeof(arm_cores) / sizeof(arm_cores[0]); i++)
		if (arm_cores[i].implementer == implementer && arm_cores[i].part == part)
			return arm_cores[i].name;
	return NULL;
}

/* Field values of one block (a CPU's or the global one). */
struct cpu_fields {
	char model_name[128]; /* "model name" */
	char processor[128];  /* ARM 3.x "Processor" */
	uint32_t implementer, part;
	bool has_impl, has_part;
};

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	size_t k = 0;
	while (s[k] && isspace((unsigned char)s[k]))
		k++;
	if (k)
		memmove(s, s + k, strlen(s + k) + 1);
}

static void set_field(struct cpu_fields *f, const char *key, const char *val)
{
	if (strcmp(key, "model name") == 0)
		snprintf(f->model_name, sizeof(f->model_name), "%s", val);
	else if (strcmp(key, "Processor") == 0)
		snprintf(f->processor, sizeof(f->processor), "%s", val);
	else if (strcmp(key, "CPU implementer") == 0) {
		f->implementer = (uint32_t)strtoul(val, NULL, 0);
		f->has_impl = true;
	} else if (strcmp(key, "CPU part") == 0) {
		f->part = (uint32_t)strtoul(val, NULL, 0);
		f->has_part = true;
	}
}

int sysinfo_parse_cpuinfo(const char *path, struct cpu_desc **cpus, size_t *n)
{
	*cpus = NULL;
	*n = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	size_t cap = 16, k = 0;
	struct cpu_fields *fields = calloc(cap, sizeof(*fields));
	uint32_t *ids = calloc(cap, sizeof(*ids));
	struct cpu_fields global;
	memset(&global, 0, sizeof(global));
	if (!fields || !ids) {
		free(fields);
		free(ids);
		fclose(f);
		return -ENOMEM;
	}
	long cur = -1; /* index of the CPU block being read, -1 outside any */
	char line[1024];
	int rc = 0;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (!colon) {
			trim(line);
			if (line[0] == 0)
				cur = -1; /* blank line: the block ends */
			continue;
		}
		*colon = 0;
		char *key = line, *val = colon + 1;
		trim(key);
		trim(val);
		if (strcmp(key, "processor") == 0) {
			if (k == cap || k >= SYSINFO_MAX_CPUS) {
				if (k >= SYSINFO_MAX_CPUS)
					break;
				size_t nc = cap * 2;
				struct cpu_fields *nf = realloc(fields, nc * sizeof(*nf));
				if (!nf) {
					rc = -ENOMEM;
					break;
				}
				fields = nf;
				uint32_t *ni = realloc(ids, nc * sizeof(*ni));
				if (!ni) {
					rc = -ENOMEM;
					break;
				}
				ids = ni;
				cap = nc;
			}
			memset(&fields[k], 0, sizeof(fields[k]));
			ids[k] = (uint32_t)strtoul(val, NULL, 10);
			cur = (long)k++;
			continue;
		}
		set_field(cur >= 0 ? &fields[cur] : &global, key, val);
	}
	fclose(f);
	if (rc == 0 && k == 0 && (global.model_name[0] || global.processor[0] || global.has_part)) {
		/* Uniprocessor kernels may print no "processor" line at all. */
		memset(&fields[0], 0, sizeof(fields[0]));
		ids[0] = 0;
		k = 1;
	}
	struct cpu_desc *out = NULL;
	if (rc == 0 && k > 0) {
		out = calloc(k, sizeof(*out));
		if (!out)
			rc = -ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < k; i++) {
		struct cpu_fields *c = &fields[i];
		struct cpu_desc *d = &out[i];
		d->cpu = ids[i];
		d->implementer = c->has_impl ? c->implementer : global.implementer;
		d->part = c->has_part ? c->part : global.part;
		const char *core = sysinfo_arm_core_name(d->implementer, d->part);
		const char *mn = c->model_name[0] ? c->model_name : global.model_name;
		const char *proc = c->processor[0] ? c->processor : global.processor;
		if (core)
			snprintf(d->model, sizeof(d->model), "%s %s", d->implementer == 0x41 ? "ARM" : "Qualcomm",
				 core);
		else if (mn[0])
			snprintf(d->model, sizeof(d->model), "%s", mn);
		else if (proc[0])
			snprintf(d->model, sizeof(d->model), "%s", proc);
		else if (d->implementer || d->part)
			snprintf(d->model, sizeof(d->model), "implementer 0x%02x part 0x%03x", d->implementer,
				 d->part);
		else
			snprintf(d->model, sizeof(d->model), "unknown");
	}
	free(fields);
	free(ids);
	if (rc < 0) {
		free(out);
		return rc;
	}
	*cpus = out;
	*n = k;
	return (int)k;
}

uint64_t sysinfo_cpu_max_freq_khz(uint32_t cpu)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/cpufreq/cpuinfo_max_freq", cpu);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	unsigned long long v = 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

const char *sysinfo_features(void)
{
	static const char features[] = ""
#ifdef CONFIG_AGENT_BPF
				       "bpf,"
#endif
#ifdef CONFIG_AGENT_OPENCL
				       "opencl,"
#endif
#ifdef CONFIG_AGENT_TRACER
				       "tracer,"
#endif
#ifdef CONFIG_STATIC
				       "static,"
#endif
				       "counting";
	return features;
}

uint64_t sysinfo_boot_id(void)
{
	uint64_t v = 0;
	while (v == 0) {
		if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v)) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			v = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16);
		}
	}
	return v;
}

static char *dupstr(const char *s)
{
	char *d = strdup(s ? s : "");
	return d;
}

static char *dupstr_max(const char *s, size_t max)
{
	size_t n = strnlen(s ? s : "", max);
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s ? s : "", n);
		d[n] = 0;
	}
	return d;
}

static void free_str(char *s)
{
	if (s != protobuf_c_empty_string)
		free(s);
}

void sysinfo_hello_free(Prof__Hello *h)
{
	if (!h)
		return;
	free_str(h->agent_id);
	free_str(h->board);
	free_str(h->kernel_release);
	free_str(h->hostname);
	free_str(h->machine);
	free_str(h->agent_version);
	free_str(h->features);
	free_str(h->target);
	for (size_t i = 0; i < h->n_cpus; i++) {
		if (h->cpus[i])
			free_str(h->cpus[i]->model);
		free(h->cpus[i]);
	}
	free(h->cpus);
	for (size_t i = 0; i < h->n_gpus; i++) {
		Prof__GpuDevice *g = h->gpus[i];
		if (g) {
			free_str(g->platform);
			free_str(g->name);
			free_str(g->vendor);
			free_str(g->version);
			free_str(g->driver);
		}
		free(g);
	}
	free(h->gpus);
	free(h);
}

int sysinfo_hello_build(const struct sysinfo_opts *o, Prof__Hello **out)
{
	*out = NULL;
	Prof__Hello *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	prof__hello__init(h);
	struct utsname u;
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		snprintf(host, sizeof(host), "%s", u.nodename[0] ? u.nodename : "unknown");
	h->schema_version = PROF_SCHEMA_VERSION;
	h->agent_id = dupstr_max(o->agent_id && o->agent_id[0] ? o->agent_id : host, 1024);
	h->boot_id = o->boot_id;
	h->board = dupstr(CONFIG_BOARD_NAME);
	h->kernel_release = dupstr(u.release);
	h->hostname = dupstr(host);
	h->machine = dupstr(u.machine);
	h->agent_version = dupstr(AGENT_VERSION);
	h->clock_id = 1; /* CLOCK_MONOTONIC */
	h->base_ns = o->base_ns;
	h->realtime_ns = o->realtime_ns;
	h->features = dupstr(sysinfo_features());
	h->target = dupstr_max(o->target, 1024);
	if (!h->agent_id || !h->board || !h->kernel_release || !h->hostname || !h->machine || !h->agent_version ||
	    !h->features || !h->target)
		goto nomem;

	struct cpu_desc *cpus = NULL;
	size_t ncpu = 0;
	if (sysinfo_parse_cpuinfo(o->cpuinfo_path ? o->cpuinfo_path : "/proc/cpuinfo", &cpus, &ncpu) > 0) {
		h->cpus = calloc(ncpu, sizeof(*h->cpus));
		if (!h->cpus) {
			free(cpus);
			goto nomem;
		}
		for (size_t i = 0; i < ncpu; i++) {
			Prof__CpuInfo *c = malloc(sizeof(*c));
			if (!c) {
				free(cpus);
				goto nomem;
			}
			prof__cpu_info__init(c);
			h->cpus[h->n_cpus++] = c;
			c->cpu = cpus[i].cpu;
			c->model = dupstr(cpus[i].model);
			c->implementer = cpus[i].implementer;
			c->part = cpus[i].part;
			c->max_freq_khz = sysinfo_cpu_max_freq_khz(cpus[i].cpu);
			if (!c->model) {
				free(cpus);
				goto nomem;
			}
		}
		free(cpus);
	}
	if (o->opencl) {
		struct opencl_probe *p = malloc(sizeof(*p));
		if (!p)
			goto nomem;
		if (opencl_probe_run(p, 5000) == 0 && p->ndevices > 0) {
			h->gpus = calloc(p->ndevices, sizeof(*h->gpus));
			if (!h->gpus) {
				free(p);
				goto nomem;
			}
			for (size_t i = 0; i < p->ndevices; i++) {
				const struct opencl_device *d = &p->devices[i];
				Prof__GpuDevice *g = malloc(sizeof(*g));
				if (!g) {
					free(p);
					goto nomem;
				}
				prof__gpu_device__init(g);
				h->gpus[h->n_gpus++] = g;
				g->platform = dupstr(d->platform);
				g->name = dupstr(d->name);
				g->vendor = dupstr(d->vendor);
				g->version = dupstr(d->version);
				g->driver = dupstr(d->driver);
				g->compute_units = d->compute_units;
				g->global_mem_bytes = d->global_mem_bytes;
				g->max_clock_mhz = d->max_clock_mhz;
				g->type = d->type;
				if (!g->platform || !g->name || !g->vendor || !g->version || !g->driver) {
					free(p);
					goto nomem;
				}
			}
		}
		free(p);
	}
	*out = h;
	return 0;
nomem:
	sysinfo_hello_free(h);
	return -ENOMEM;
}
