/* GPGPU-sim's config-time limits (gpgpusim_limits.h). Each row names the
 * file, function and condition of GPGPU-sim 3.2.2 and 4.0
 * (github.com/gpgpu-sim/gpgpu-sim_distribution) that enforces it; read from
 * those sources, none of their code is here. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/gpgpusim_limits.h"

static const struct gs_limit limits[GS_NLIMITS] = {
    [GS_THREADS_MAX] =
	{GS_THREADS_MAX, "-gpgpu_shader_core_pipeline", "threads per core T <= MAX_THREAD_PER_SM", 2048, 2048,
	 "src/gpgpu-sim/shader.h shader_core_config::init(): n_thread_per_shader > MAX_THREAD_PER_SM"
	 " -> \"increase MAX_THREAD_PER_SM\", abort(); #define MAX_THREAD_PER_SM 2048 in"
	 " src/abstract_hardware_model.h (1024 before 3.2)",
	 "src/gpgpu-sim/shader.h shader_core_config::init(): same check and abort();"
	 " #define MAX_THREAD_PER_SM 2048 in src/abstract_hardware_model.h"},
    [GS_THREADS_MULTIPLE] =
	{GS_THREADS_MULTIPLE, "-gpgpu_shader_core_pipeline", "T a multiple of the warp size W", 0, 0,
	 "src/gpgpu-sim/shader.h shader_core_config::init(): assert(!(n_thread_per_shader % warp_size))",
	 "src/gpgpu-sim/shader.h shader_core_config::init(): assert(!(n_thread_per_shader % warp_size))"},
    [GS_WARP_MAX] =
	{GS_WARP_MAX, "-gpgpu_shader_core_pipeline", "warp size W <= MAX_WARP_SIZE", 32, 32,
	 "src/abstract_hardware_model.h: const unsigned MAX_WARP_SIZE = 32; the active mask is"
	 " std::bitset<MAX_WARP_SIZE> (active_mask_t), set per lane by simt_stack / warp_inst_t",
	 "src/abstract_hardware_model.h: MAX_WARP_SIZE 32, active_mask_t = std::bitset<MAX_WARP_SIZE>"},
    [GS_WARPS_MAX] =
	{GS_WARPS_MAX, "-gpgpu_shader_core_pipeline", "warps per core T / W <= WARP_PER_CTA_MAX", 48, 64,
	 "src/gpgpu-sim/shader.cc barrier_set_t::barrier_set_t(): max_warps_per_core > WARP_PER_CTA_MAX"
	 " -> \"increase WARP_PER_CTA_MAX in shader.h\", exit(1); src/gpgpu-sim/shader.h:"
	 " const unsigned WARP_PER_CTA_MAX = 48 (sizes warp_set_t)",
	 "src/gpgpu-sim/shader.cc barrier_set_t::barrier_set_t(): same check, exit(1);"
	 " src/gpgpu-sim/shader.h: const unsigned WARP_PER_CTA_MAX = 64"},
    [GS_SUBWARP_MIN] = {GS_SUBWARP_MIN, "-gpgpu_shmem_warp_parts", "W / -gpgpu_shmem_warp_parts >= 1", 1, 1,
			"src/abstract_hardware_model.cc warp_inst_t::generate_mem_accesses(): subwarp_size ="
			" warp_size / mem_warp_parts; the per-subwarp loops generate no access when it is 0",
			"src/abstract_hardware_model.cc warp_inst_t::generate_mem_accesses(): same"},
    [GS_CTA_MAX] =
	{GS_CTA_MAX, "-gpgpu_shader_cta", "CTAs per core <= MAX_CTA_PER_SHADER", 32, 32,
	 "src/abstract_hardware_model.h MAX_CTA_PER_SHADER 32 sizes the per-core CTA arrays of"
	 " src/gpgpu-sim/shader.cc shader_core_ctx (m_cta_status[MAX_CTA_PER_SHADER])",
	 "src/abstract_hardware_model.h MAX_CTA_PER_SHADER 32; shader.cc shader_core_ctx m_cta_status"},
    [GS_SIMD_MODEL] = {GS_SIMD_MODEL, "-gpgpu_simd_model", "1 (post-dominator reconvergence)", 1, 1,
		       "src/gpgpu-sim/shader.cc shader_core_ctx: only POST_DOMINATOR (1) is implemented;"
		       " other models abort()",
		       "src/gpgpu-sim/shader.cc: only POST_DOMINATOR (1) is implemented"},
    [GS_CACHE_SYNTAX] =
	{GS_CACHE_SYNTAX, "-gpgpu_cache:*", "the version's cache string", 11, 12,
	 "src/gpgpu-sim/gpu-cache.h cache_config::init() (3.2.2 release, 24f29469):"
	 " sscanf(\"%u:%u:%u,%c:%c:%c:%c,%c:%u:%u,%u:%u,%u\") = "
	 "S:L:A,rp:wp:ap:wap,mshr:N:merge,mq[:rf][,port]"
	 " (four policy letters; the set-index letter came later, 94a6b6c5);"
	 " ntok < 11 -> \"cache configuration parsing error\", abort() unless \"none\"",
	 "src/gpgpu-sim/gpu-cache.h cache_config::init(): sscanf(\"%c:%u:%u:%u,%c:%c:%c:%c:%c,%c:%u:%u,"
	 "%u:%u,%u\") = ct:S:L:A,rp:wp:ap:wap:sif,mshr:N:merge,mq...; ntok < 12 -> exit_parse_error()"},
    [GS_CACHE_SETS_POW2] =
	{GS_CACHE_SETS_POW2, "-gpgpu_cache:*", "number of sets a power of two", 0, 0,
	 "src/gpgpu-sim/gpu-cache.h cache_config::set_index() (linear):"
	 " (addr >> m_line_sz_log2) & (m_nset - 1); nothing checks m_nset, the index just wraps",
	 "src/gpgpu-sim/gpu-cache.cc cache_config::set_index() / hash_function(): same mask with"
	 " m_nset_log2 = LOGB2(m_nset)"},
    [GS_CACHE_LINE_POW2] =
	{GS_CACHE_LINE_POW2, "-gpgpu_cache:*", "line size a power of two", 0, 0,
	 "src/gpgpu-sim/gpu-cache.h cache_config::init(): m_line_sz_log2 = LOGB2(m_line_sz);"
	 " block_addr() = addr & ~(m_line_sz - 1)",
	 "src/gpgpu-sim/gpu-cache.h cache_config::init(): same; block_addr() masks with m_line_sz - 1"},
    [GS_DL1_LINE_MIN] =
	{GS_DL1_LINE_MIN, "-gpgpu_cache:dl1", "L1D line >= 128 B", 128, 128,
	 "src/abstract_hardware_model.cc memory_coalescing_arch_13(): coalesced segments up to 128 B;"
	 " src/gpgpu-sim/gpu-cache.cc data_cache: assert(mf->get_data_size() <= m_config.get_line_sz())",
	 "src/gpgpu-sim/gpu-cache.h cache_config::init(): sector caches need"
	 " m_line_sz == SECTOR_CHUNCK_SIZE (4) x SECTOR_SIZE (32); accesses are coalesced to 128 B"},
    [GS_N_MEM_POW2] =
	{GS_N_MEM_POW2, "-gpgpu_n_mem", "a power of two", 0, 0,
	 "src/gpgpu-sim/addrdec.cc linear_to_raw_address_translation::init(): the chip id is taken from"
	 " LOGB2(n_channel) address bits (dramid@8 mapping)",
	 "src/gpgpu-sim/addrdec.cc linear_to_raw_address_translation::init(): same, unless"
	 " -memory_partition_indexing hashes it"},
    [GS_ICNT_FILE] =
	{GS_ICNT_FILE, "-inter_config_file", "-network_mode 1 and the named file exists", 0, 0,
	 "src/gpgpu-sim/icnt_wrapper.cc icnt_wrapper_init(): network_mode 1 = intersim2, which reads"
	 " -inter_config_file (default \"mesh\", not shipped) and exits when it cannot",
	 "src/gpgpu-sim/icnt_wrapper.cc icnt_wrapper_init(): INTERSIM (1) reads -inter_config_file;"
	 " LOCAL_XBAR (2) does not"},
    [GS_ICNT_NODES] =
	{GS_ICNT_NODES, "-inter_config_file", "k^n >= clusters + n_mem x sub-partitions", 0, 0,
	 "src/intersim2/interconnect_interface.cpp _CreateNodeMap(): the network's nodes hold"
	 " n_shader + n_mem devices; shipped configs/GTX480 uses fly k = 15 + 6 x 2 = 27, n = 1",
	 "src/intersim2/interconnect_interface.cpp _CreateNodeMap(): same;"
	 " configs/4.x-cfgs/SM2_GTX480 \"21*1 fly\", k = 27"},
    [GS_CLOCKS] =
	{GS_CLOCKS, "-gpgpu_clock_domains", "core:icnt:l2:dram, four clocks > 0", 0, 0,
	 "src/gpgpu-sim/gpu-sim.cc gpgpu_sim_config::init_clock_domains(): sscanf of four doubles (MHz)",
	 "src/gpgpu-sim/gpu-sim.cc gpgpu_sim_config::init_clock_domains(): same"},
    [GS_OPTION_NAME] =
	{GS_OPTION_NAME, "(option name)", "an option the version registers", 0, 0,
	 "src/option_parser.cc OptionParser::ParseCommandLine(): an unregistered option prints"
	 " \"Unknown Option\" and exit(1); 3.2.2 registers -rop_latency (src/gpgpu-sim/gpu-sim.cc"
	 " memory_config::reg_options), not -gpgpu_l2_rop_latency",
	 "src/option_parser.cc OptionParser::ParseCommandLine(): unknown option -> exit(1);"
	 " 4.0 renamed -rop_latency to -gpgpu_l2_rop_latency (src/gpgpu-sim/gpu-sim.cc"
	 " memory_config::reg_options)"},
    [GS_REQUIRED] = {GS_REQUIRED, "(every option that matters)", "written explicitly", 0, 0,
		     "src/option_parser.cc: an option not in the file keeps its compiled-in default"
		     " (option_parser_register(..., default)), not a base config's value",
		     "src/option_parser.cc: same"},
};

const struct gs_limit *gs_limit(enum gs_limit_id id)
{
	return id < GS_NLIMITS ? &limits[id] : &limits[GS_REQUIRED];
}

double gs_limit_bound(enum gs_limit_id id, int version)
{
	const struct gs_limit *l = gs_limit(id);
	return version == 4 ? l->bound4 : l->bound3;
}

const char *gs_version_name(int version)
{
	return version == 4 ? "4.0" : "3.2.2";
}

const char *gs_version_target(int version)
{
	return version == 4
		   ? "GPGPU-sim 4.0 (4.0.x, gpgpu-sim_distribution 90ec3399; 5 cache-policy letters, N:/S: "
		     "prefix)"
		   : "GPGPU-sim 3.2.2 as released (gpgpu-sim_distribution 24f29469, \"version 3.2.2\";"
		     " 4 cache-policy letters)";
}

const char *gs_rop_option(int version)
{
	return version == 4 ? "-gpgpu_l2_rop_latency" : "-rop_latency";
}

/* Options one version registers and the other does not (the other's name,
 * or NULL): written for the wrong version, the parser exits. */
static const struct {
	const char *name;
	int version; /* the version that has it */
} version_only[] = {
    {"-rop_latency", 3},
    {"-gpgpu_l2_rop_latency", 4},
    {"-ptx_opcode_latency_sfu", 4},
    {"-ptx_opcode_initiation_sfu", 4},
};

/* Options the emitter writes and the checker requires. */
static const char *const required[] = {"-gpgpu_n_clusters",
				       "-gpgpu_n_cores_per_cluster",
				       "-gpgpu_n_mem",
				       "-gpgpu_n_sub_partition_per_mchannel",
				       "-gpgpu_clock_domains",
				       "-gpgpu_shader_registers",
				       "-gpgpu_shader_core_pipeline",
				       "-gpgpu_shader_cta",
				       "-gpgpu_simd_model",
				       "-gpgpu_shmem_warp_parts",
				       "-gpgpu_cache:dl1",
				       "-gpgpu_cache:dl2",
				       "-gpgpu_cache:il1",
				       "-gpgpu_tex_cache:l1",
				       "-gpgpu_const_cache:l1",
				       "-network_mode",
				       "-inter_config_file",
				       "-gpgpu_dram_timing_opt",
				       "-gpgpu_n_mem_per_ctrlr",
				       "-gpgpu_dram_buswidth",
				       "-gpgpu_dram_burst_length",
				       "-dram_latency"};

static int limit_fail(char *err, size_t errlen, enum gs_limit_id id, enum gs_limit_id *which, int version,
		      const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	const struct gs_limit *l = gs_limit(id);
	snprintf(err, errlen, "%s: %s (GPGPU-sim %s: %s)", what, l->rule, gs_version_name(version),
		 version == 4 ? l->source4 : l->source3);
	if (which)
		*which = id;
	return -ERANGE;
}

static bool one_of(char c, const char *set)
{
	return c && strchr(set, c) != NULL;
}

int gs_parse_cache(const char *s, int version, struct gs_cache *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	unsigned mshr_n = 0, merge = 0, mq = 0, rf = 0, port = 0;
	if (strcmp(s, "none") == 0) {
		c->none = true;
		return 0;
	}
	int n;
	if (version == 4)
		n = sscanf(s, "%c:%u:%u:%u,%c:%c:%c:%c:%c,%c:%u:%u,%u:%u,%u", &c->type, &c->sets, &c->line,
			   &c->assoc, &c->rp, &c->wp, &c->ap, &c->wap, &c->sif, &c->mshr, &mshr_n, &merge,
			   &mq, &rf, &port);
	else
		n = sscanf(s, "%u:%u:%u,%c:%c:%c:%c,%c:%u:%u,%u:%u,%u", &c->sets, &c->line, &c->assoc, &c->rp,
			   &c->wp, &c->ap, &c->wap, &c->mshr, &mshr_n, &merge, &mq, &rf, &port);
	c->fields = n;
	int need = version == 4 ? 12 : 11;
	if (n < need) {
		snprintf(err, errlen, "\"%s\" parses to %d of the %d fields %s", s, n < 0 ? 0 : n, need,
			 version == 4
			     ? "ct:S:L:A,rp:wp:ap:wap:sif,mshr:N:merge,mq"
			     : "S:L:A,rp:wp:ap:wap,mshr:N:merge,mq (3.2.2 release: four policy letters)");
		return -EINVAL;
	}
	const char *bad = NULL;
	if (version == 4 && !one_of(c->type, "NS"))
		bad = "cache type (N or S)";
	else if (!one_of(c->rp, "LF"))
		bad = "replacement policy (L or F)";
	else if (!one_of(c->wp, "RBTEL"))
		bad = "write policy (R, B, T, E or L)";
	else if (!one_of(c->ap, "mf"))
		bad = "allocation policy (m or f)";
	else if (!one_of(c->wap, "WN"))
		bad = "write-allocate policy (W or N)";
	else if (version == 4 && !one_of(c->sif, "HCL"))
		bad = "set index function (H, C or L)";
	else if (!one_of(c->mshr, version == 4 ? "AFTS" : "AF"))
		bad = "MSHR type";
	else if (c->wp == 'B' && c->ap == 'f')
		bad =
		    "write-back with allocate-on-fill (asserts: a write-back cache cannot allocate on fill)";
	if (bad) {
		snprintf(err, errlen, "\"%s\": bad %s", s, bad);
		return -EINVAL;
	}
	return 0;
}

struct kv {
	char name[64];
	char value[256];
};

static size_t parse_options(const char *text, struct kv *o, size_t max)
{
	size_t n = 0;
	const char *s = text;
	while (*s && n < max) {
		size_t len = strcspn(s, "\n");
		char line[512];
		snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), s);
		s += len + (s[len] ? 1 : 0);
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char name[64], value[256];
		if (sscanf(line, " %63s %255s", name, value) != 2 || name[0] != '-')
			continue;
		size_t i;
		for (i = 0; i < n && strcmp(o[i].name, name) != 0; i++)
			;
		if (i == n)
			n++;
		snprintf(o[i].name, sizeof(o[i].name), "%s", name);
		snprintf(o[i].value, sizeof(o[i].value), "%s", value);
	}
	return n;
}

static const char *get(const struct kv *o, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(o[i].name, name) == 0)
			return o[i].value;
	return NULL;
}

static bool uint_of(const char *s, unsigned long *v)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	unsigned long x = strtoul(s, &end, 10);
	if (*end || errno || s[0] == '-')
		return false;
	*v = x;
	return true;
}

/* k and n of an intersim2 file ("k = 4;", comments skipped); 0 when absent. */
static unsigned long icnt_int(const char *icnt, const char *key)
{
	size_t kl = strlen(key);
	for (const char *s = icnt; *s;) {
		size_t ll = strcspn(s, "\n");
		const char *p = s;
		while (*p == ' ' || *p == '\t')
			p++;
		s += ll + (s[ll] ? 1 : 0);
		if (strncmp(p, key, kl) != 0)
			continue;
		p += kl;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '=')
			return strtoul(p + 1, NULL, 10);
	}
	return 0;
}

int gs_check_config(const char *cfg, const char *icnt, int version, enum gs_limit_id *which, char *err,
		    size_t errlen)
{
	struct kv *o = calloc(256, sizeof(*o));
	if (!o)
		return -ENOMEM;
	size_t n = parse_options(cfg, o, 256);
	int rc = 0;
	char why[300];
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]) && rc == 0; i++)
		if (!get(o, n, required[i]))
			rc = limit_fail(err, errlen, GS_REQUIRED, which, version, "%s is not written",
					required[i]);
	if (rc)
		goto out;
	unsigned long t = 0, w = 0, parts = 0, cta = 0, simd = 0, nmem = 0, clusters = 0, cores = 0, sub = 0;
	const char *pipe = get(o, n, "-gpgpu_shader_core_pipeline");
	char tail;
	if (sscanf(pipe, "%lu:%lu%c", &t, &w, &tail) < 2 || w == 0) {
		rc = limit_fail(err, errlen, GS_THREADS_MULTIPLE, which, version,
				"-gpgpu_shader_core_pipeline %s", pipe);
		goto out;
	}
	if (w > gs_limit_bound(GS_WARP_MAX, version))
		rc = limit_fail(err, errlen, GS_WARP_MAX, which, version, "warp size %lu", w);
	else if (t > gs_limit_bound(GS_THREADS_MAX, version))
		rc = limit_fail(err, errlen, GS_THREADS_MAX, which, version, "%lu threads per core", t);
	else if (t == 0 || t % w)
		rc = limit_fail(err, errlen, GS_THREADS_MULTIPLE, which, version,
				"%lu threads with warp size %lu", t, w);
	else if (t / w > gs_limit_bound(GS_WARPS_MAX, version))
		rc = limit_fail(err, errlen, GS_WARPS_MAX, which, version, "%lu warps per core (%lu:%lu)",
				t / w, t, w);
	if (rc)
		goto out;
	if (!uint_of(get(o, n, "-gpgpu_shmem_warp_parts"), &parts) || parts == 0 || w / parts < 1) {
		rc = limit_fail(err, errlen, GS_SUBWARP_MIN, which, version, "warp size %lu in %s parts", w,
				get(o, n, "-gpgpu_shmem_warp_parts"));
		goto out;
	}
	if (!uint_of(get(o, n, "-gpgpu_shader_cta"), &cta) || cta == 0 ||
	    cta > gs_limit_bound(GS_CTA_MAX, version)) {
		rc = limit_fail(err, errlen, GS_CTA_MAX, which, version, "-gpgpu_shader_cta %s",
				get(o, n, "-gpgpu_shader_cta"));
		goto out;
	}
	if (!uint_of(get(o, n, "-gpgpu_simd_model"), &simd) || simd != 1) {
		rc = limit_fail(err, errlen, GS_SIMD_MODEL, which, version, "-gpgpu_simd_model %s",
				get(o, n, "-gpgpu_simd_model"));
		goto out;
	}
	const char *caches[] = {"-gpgpu_cache:dl1",	     "-gpgpu_cache:dl2",
				"-gpgpu_cache:il1",	     "-gpgpu_tex_cache:l1",
				"-gpgpu_const_cache:l1",     "-gpgpu_cache:dl1PrefL1",
				"-gpgpu_cache:dl1PrefShared"};
	for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
		const char *s = get(o, n, caches[i]);
		if (!s)
			continue;
		struct gs_cache c;
		if (gs_parse_cache(s, version, &c, why, sizeof(why)) < 0) {
			rc =
			    limit_fail(err, errlen, GS_CACHE_SYNTAX, which, version, "%s %s", caches[i], why);
			goto out;
		}
		if (c.none)
			continue;
		if (!gs_pow2(c.sets)) {
			rc = limit_fail(err, errlen, GS_CACHE_SETS_POW2, which, version, "%s: %u sets",
					caches[i], c.sets);
			goto out;
		}
		if (!gs_pow2(c.line)) {
			rc = limit_fail(err, errlen, GS_CACHE_LINE_POW2, which, version, "%s: %u B lines",
					caches[i], c.line);
			goto out;
		}
		if (c.assoc == 0) {
			rc = limit_fail(err, errlen, GS_CACHE_SYNTAX, which, version, "%s: associativity 0",
					caches[i]);
			goto out;
		}
		bool dl1 = strncmp(caches[i], "-gpgpu_cache:dl1", 16) == 0;
		if (dl1 &&
		    (c.line < gs_limit_bound(GS_DL1_LINE_MIN, version) || (c.type == 'S' && c.line != 128))) {
			rc = limit_fail(err, errlen, GS_DL1_LINE_MIN, which, version, "%s: %u B lines",
					caches[i], c.line);
			goto out;
		}
	}
	if (!uint_of(get(o, n, "-gpgpu_n_mem"), &nmem) || !gs_pow2(nmem)) {
		rc = limit_fail(err, errlen, GS_N_MEM_POW2, which, version, "-gpgpu_n_mem %s",
				get(o, n, "-gpgpu_n_mem"));
		goto out;
	}
	double clk[4];
	if (sscanf(get(o, n, "-gpgpu_clock_domains"), "%lf:%lf:%lf:%lf", &clk[0], &clk[1], &clk[2],
		   &clk[3]) != 4 ||
	    !(clk[0] > 0 && clk[1] > 0 && clk[2] > 0 && clk[3] > 0)) {
		rc = limit_fail(err, errlen, GS_CLOCKS, which, version, "-gpgpu_clock_domains %s",
				get(o, n, "-gpgpu_clock_domains"));
		goto out;
	}
	unsigned long mode = 0;
	if (!uint_of(get(o, n, "-network_mode"), &mode) || mode != 1 || !icnt) {
		rc = limit_fail(err, errlen, GS_ICNT_FILE, which, version,
				"-network_mode %s, -inter_config_file %s%s", get(o, n, "-network_mode"),
				get(o, n, "-inter_config_file"), icnt ? "" : " (no such file)");
		goto out;
	}
	if (!uint_of(get(o, n, "-gpgpu_n_clusters"), &clusters) || clusters == 0 ||
	    !uint_of(get(o, n, "-gpgpu_n_cores_per_cluster"), &cores) || cores == 0 ||
	    !uint_of(get(o, n, "-gpgpu_n_sub_partition_per_mchannel"), &sub) || sub == 0) {
		rc = limit_fail(err, errlen, GS_ICNT_NODES, which, version,
				"clusters, cores per cluster or sub-partitions missing or 0");
		goto out;
	}
	unsigned long k = icnt_int(icnt, "k"), nn = icnt_int(icnt, "n"), nodes = 1;
	for (unsigned long i = 0; i < nn && nodes < (1ul << 20); i++)
		nodes *= k;
	if (!strstr(icnt, "topology") || k == 0 || nn == 0 || nodes < clusters + nmem * sub) {
		rc = limit_fail(err, errlen, GS_ICNT_NODES, which, version,
				"k = %lu, n = %lu for %lu clusters + %lu x %lu sub-partitions", k, nn,
				clusters, nmem, sub);
		goto out;
	}
	/* options of the other version (after the cache strings: those say the version first) */
	for (size_t i = 0; i < sizeof(version_only) / sizeof(version_only[0]) && rc == 0; i++)
		if (version_only[i].version != version && get(o, n, version_only[i].name))
			rc = limit_fail(err, errlen, GS_OPTION_NAME, which, version,
					"%s is not an option of GPGPU-sim %s", version_only[i].name,
					gs_version_name(version));
	if (rc == 0 && !get(o, n, gs_rop_option(version)))
		rc = limit_fail(err, errlen, GS_REQUIRED, which, version, "%s is not written",
				gs_rop_option(version));
out:
	free(o);
	return rc;
}
