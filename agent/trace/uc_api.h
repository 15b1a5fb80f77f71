/* The Unicorn 2 functions the replay windows (replay.c) call, through one
 * table, as Capstone's (cs_api.h): the dynamic agent loads
 * libunicorn.so.2 (Debian: libunicorn2) with dlopen when the first replay
 * window is taken, so only `agent trace` / `agent profile` with windows map
 * its ~19 MiB; without it they fall back to single-stepped windows. Built only
 * with CONFIG_AGENT_TRACE_REPLAY (off for the static board agents: see
 * Kconfig). */
#ifndef AGENT_TRACE_UC_API_H
#define AGENT_TRACE_UC_API_H

#include <unicorn/unicorn.h>

struct uc_api {
	uc_err (*open)(uc_arch arch, uc_mode mode, uc_engine **uc);
	uc_err (*close)(uc_engine *uc);
	uc_err (*reg_write)(uc_engine *uc, int regid, const void *value);
	uc_err (*reg_read)(uc_engine *uc, int regid, void *value);
	uc_err (*mem_map_ptr)(uc_engine *uc, uint64_t address, size_t size, uint32_t perms, void *ptr);
	uc_err (*mem_read)(uc_engine *uc, uint64_t address, void *bytes, size_t size);
	uc_err (*hook_add)(uc_engine *uc, uc_hook *hh, int type, void *callback, void *user_data, uint64_t begin,
			   uint64_t end, ...);
	uc_err (*emu_start)(uc_engine *uc, uint64_t begin, uint64_t until, uint64_t timeout, size_t count);
	uc_err (*emu_stop)(uc_engine *uc);
	const char *(*strerror)(uc_err code);
};

/* The table (loaded once, thread-safe; never unloaded). Returns 0, or
 * -ELIBACC when the library cannot be loaded or is not Unicorn 2:
 * uc_api_error() then says what to install. */
int uc_api_load(const struct uc_api **out);
const char *uc_api_error(void);

#endif
