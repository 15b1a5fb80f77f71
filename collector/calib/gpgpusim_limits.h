/* GPGPU-sim's load-time limits, per version (3 = 3.2.2, 4 = 4.0), each
 * written from the source line that enforces it (cited in the table in
 * gpgpusim_limits.c and in collector/calib/README.md), and a checker that
 * reads a gpgpusim.config (and its interconnect file) the way GPGPU-sim's
 * config-time init does and says which limit a value breaks. */
#ifndef COLLECTOR_CALIB_GPGPUSIM_LIMITS_H
#define COLLECTOR_CALIB_GPGPUSIM_LIMITS_H

#include <stdbool.h>
#include <stddef.h>

enum gs_limit_id {
	GS_THREADS_MAX,	     /* T of -gpgpu_shader_core_pipeline T:W <= MAX_THREAD_PER_SM */
	GS_THREADS_MULTIPLE, /* T a multiple of W */
	GS_WARP_MAX,	     /* W <= MAX_WARP_SIZE */
	GS_WARPS_MAX,	     /* T / W <= WARP_PER_CTA_MAX */
	GS_SUBWARP_MIN,	     /* W / -gpgpu_shmem_warp_parts >= 1 */
	GS_CTA_MAX,	     /* -gpgpu_shader_cta <= MAX_CTA_PER_SHADER */
	GS_SIMD_MODEL,	     /* -gpgpu_simd_model == 1 */
	GS_CACHE_SYNTAX,     /* the version's cache string, enough fields, known policy letters */
	GS_CACHE_SETS_POW2,  /* sets a power of two (the set index is a mask) */
	GS_CACHE_LINE_POW2,  /* line size a power of two */
	GS_DL1_LINE_MIN,     /* dl1 line >= 128 B (a coalesced access) */
	GS_N_MEM_POW2,	     /* -gpgpu_n_mem a power of two (address decoder) */
	GS_ICNT_FILE,	     /* -network_mode 1 with an -inter_config_file that exists */
	GS_ICNT_NODES,	     /* the file's k^n covers clusters + memory sub-partitions */
	GS_CLOCKS,	     /* -gpgpu_clock_domains: four positive clocks */
	GS_OPTION_NAME,	     /* an option the version registers (4.0 renamed some; unknown ones exit) */
	GS_REQUIRED,	     /* every option that matters is written (else the compiled-in default) */
	GS_NLIMITS
};

struct gs_limit {
	enum gs_limit_id id;
	const char *option;
	const char *rule;      /* what must hold */
	double bound3, bound4; /* the number in the rule for 3.2.2 / 4.0 (0: none) */
	const char *source3;   /* file, function and condition in 3.2.2 */
	const char *source4;   /* the same in 4.0 */
};

/* The table row of id (never NULL for id < GS_NLIMITS). */
const struct gs_limit *gs_limit(enum gs_limit_id id);
/* The bound of id for version 3 or 4. */
double gs_limit_bound(enum gs_limit_id id, int version);
/* "3.2.2" or "4.0". */
const char *gs_version_name(int version);
/* The exact tree a config of version targets (release, commit, cache syntax). */
const char *gs_version_target(int version);
/* The ROP latency option's name in version ("-rop_latency" in 3.2.2). */
const char *gs_rop_option(int version);

/* Check the text of a gpgpusim.config for version (3 or 4) against every
 * limit; icnt: the text of the file -inter_config_file names (NULL: not
 * there). Returns 0, or -ERANGE with the first broken limit in err ("LIMIT:
 * option value: rule (source)") and its id in *which (may be NULL). */
int gs_check_config(const char *cfg, const char *icnt, int version, enum gs_limit_id *which, char *err,
		    size_t errlen);

/* Parsed cache string of either version; ok false if it does not parse. */
struct gs_cache {
	bool none;
	char type; /* 4.x: 'N' normal or 'S' sector; 3.x: 0 */
	/* sif: 4.0's set-index letter; 0 in 3.2.2 (the release has four policy letters) */
	unsigned sets, line, assoc;
	char rp, wp, ap, wap, sif, mshr;
	int fields;
};
int gs_parse_cache(const char *s, int version, struct gs_cache *c, char *err, size_t errlen);

static inline bool gs_pow2(unsigned long v)
{
	return v && !(v & (v - 1));
}

#endif
