#include "feature_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "frame.h"
#include "generated/config.h"
#include "gpu/gpu_sampler.h"
#include "gpu/kbase_dev.h"
#include "opencl_probe.h"
#include "perf.h"
#include "sysinfo.h"

#ifdef CONFIG_AGENT_BPF
#include "bpf_sys.h"
#endif
#ifdef CONFIG_AGENT_BPF_LIBBPF
#include <bpf/libbpf.h>
#endif

static const char *yes_no(int on)
{
	return on ? "yes" : "no";
}

static void print_bpf(FILE *out)
{
#ifdef CONFIG_AGENT_BPF
	static const struct {
		enum bpf_prog_type type;
		const char *name;
	} progs[] = {{BPF_PROG_TYPE_PERF_EVENT, "perf_event"}, {BPF_PROG_TYPE_TRACEPOINT, "tracepoint"}};
	fprintf(out, "  BPF:            ");
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		int rc = bpf_sys_prog_type_supported(progs[i].type);
		if (rc == 1)
			fprintf(out, "%s%s programs: supported", i ? "; " : "", progs[i].name);
		else if (rc == 0)
			fprintf(out, "%s%s programs: not supported", i ? "; " : "", progs[i].name);
		else
			fprintf(out, "%s%s programs: cannot probe (%s)", i ? "; " : "", progs[i].name,
				strerror(-rc));
	}
	fprintf(out, "\n");
#else
	fprintf(out, "  BPF:            not compiled in\n");
#endif
}

/* The discovery's bound: 5 s, or PROF_OPENCL_PROBE_MS (issue 43: PoCL's start under qemu-user on
 * a loaded host took longer; scripts/board-opencl.sh checks what is found, not how fast). */
static void print_opencl(FILE *out)
{
	struct opencl_probe p;
	const char *ms = getenv("PROF_OPENCL_PROBE_MS");
	int rc = opencl_probe_run(&p, ms && atoi(ms) > 0 ? atoi(ms) : 5000);
	if (rc == -ENOTSUP) {
		fprintf(out, "  OpenCL:         not compiled in\n");
		return;
	}
	if (rc < 0) {
		fprintf(out, "  OpenCL:         unavailable (%s)\n", p.status);
		return;
	}
	fprintf(out, "  OpenCL:         %zu platform(s), %zu device(s)\n", p.nplatforms, p.ndevices);
	for (size_t i = 0; i < p.ndevices; i++) {
		const struct opencl_device *d = &p.devices[i];
		fprintf(out, "    [%zu] %s: %s (%s, %s), %u compute units, %u MHz, %llu MiB, %s\n", i, d->platform,
			d->name, opencl_device_type_name(d->type), d->vendor, d->compute_units, d->max_clock_mhz,
			(unsigned long long)(d->global_mem_bytes >> 20), d->version);
	}
}

static void print_mali(FILE *out)
{
#ifdef CONFIG_AGENT_MALI
	struct kbase_dev d;
	char err[320];
	const char *path = gpu_device_path(NULL);
	if (kbase_dev_open(&d, path, NULL, 1000000, err, sizeof(err)) < 0) {
		fprintf(out, "  Mali counters:  %s\n", err);
		return;
	}
	fprintf(out, "  Mali counters:  %s: %s, %u-byte bus, dump layout v%u\n", path, d.desc, d.bus_bytes,
		d.hw_version);
	kbase_dev_close(&d);
#else
	(void)out;
#endif
}

int feature_report_print(FILE *out)
{
	fprintf(out, "agent %s (schema version %u)\n", AGENT_VERSION, PROF_SCHEMA_VERSION);
	fprintf(out, "compiled in:\n");
#if defined(CONFIG_AGENT_BPF_LIBBPF)
	fprintf(out, "  bpf:            yes (light skeletons, Linux >= 5.17; libbpf %s for older kernels)\n",
		libbpf_version_string());
#elif defined(CONFIG_AGENT_BPF)
	fprintf(out, "  bpf:            yes (light skeletons only: Linux >= 5.17; no libbpf fallback)\n");
#else
	fprintf(out, "  bpf:            not compiled in\n");
#endif
#ifdef CONFIG_AGENT_OPENCL
	fprintf(out, "  opencl:         yes (libOpenCL.so.1 loaded at run time)\n");
#else
	fprintf(out, "  opencl:         not compiled in\n");
#endif
#ifdef CONFIG_AGENT_MALI
	fprintf(out, "  mali counters:  yes (kbase ioctl r16+, UK 6-10 Midgard, UK 3 t6xx r3p0; "
		     "T60x T62x T72x T76x T82x T83x T86x T88x G71 G51)\n");
#else
	fprintf(out, "  mali counters:  not compiled in\n");
#endif
#ifdef CONFIG_AGENT_TRACER
#ifdef CONFIG_STATIC
	fprintf(out, "  tracer:         yes (Capstone linked in)\n");
#else
	fprintf(out, "  tracer:         yes (libcapstone loaded by `agent trace` when it starts)\n");
#endif
#else
	fprintf(out, "  tracer:         not compiled in\n");
#endif
#ifdef CONFIG_AUTH
	fprintf(out, "  token auth:     yes (--token-file; HMAC-SHA256, libnettle)\n");
#else
	fprintf(out, "  token auth:     not compiled in\n");
#endif
#if defined(CONFIG_TLS) && defined(CONFIG_STATIC)
	fprintf(out, "  tls:            yes (--tls-ca; OpenSSL linked in)\n");
#elif defined(CONFIG_TLS)
	fprintf(out, "  tls:            yes (--tls-ca; libssl loaded when TLS is asked for)\n");
#else
	fprintf(out, "  tls:            not compiled in\n");
#endif
#ifdef CONFIG_STATIC
	fprintf(out, "  static:         %s\n", yes_no(1));
#else
	fprintf(out, "  static:         %s\n", yes_no(0));
#endif
	fprintf(out, "  max frame:      %u KiB\n", (unsigned)CONFIG_MAX_FRAME_KB);
	fprintf(out, "  board:          %s\n", CONFIG_BOARD_NAME);

	struct utsname u;
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	fprintf(out, "running kernel: %s %s %s\n", u.sysname, u.release, u.machine);
	int par = perf_paranoid();
	if (par == INT32_MIN) {
		fprintf(out, "  perf_event:     unavailable (no /proc/sys/kernel/perf_event_paranoid)\n");
	} else {
		struct event_desc tc;
		events_lookup("task-clock", &tc);
		int rc = perf_probe_event(&tc, 0, -1);
		if (rc == 0)
			fprintf(out, "  perf_event:     available (perf_event_paranoid=%d)\n", par);
		else
			fprintf(out, "  perf_event:     not usable: %s (perf_event_paranoid=%d)\n", strerror(-rc), par);
	}
	int hw = perf_probe_hw(0, -1);
	if (hw == 0)
		fprintf(out, "  hardware PMU:   available (cycles)\n");
	else
		fprintf(out, "  hardware PMU:   unsupported (perf_event_open cycles: %s)\n", strerror(-hw));
	print_bpf(out);
	fprintf(out, "  BTF:            %s\n",
		access("/sys/kernel/btf/vmlinux", R_OK) == 0 ? "yes (/sys/kernel/btf/vmlinux)"
							      : "no (/sys/kernel/btf/vmlinux missing)");
	print_opencl(out);
	print_mali(out);
	return 0;
}
