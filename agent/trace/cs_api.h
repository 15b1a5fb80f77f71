/* The Capstone functions the instruction decoder (decode.c) calls, through one
 * table. Dynamic builds load libcapstone.so.<CS_API_MAJOR> with dlopen on the
 * first use, so only the commands that decode instructions (`agent trace`) map
 * it: its pointer tables are relocated at load and cost ~3 MiB of resident
 * memory in every process that links it. Static builds (CONFIG_STATIC: musl's
 * static dlopen always fails) and programs that link -lcapstone themselves
 * (CS_API_LINKED, e.g. the QEMU plugin) take the functions' addresses. */
#ifndef AGENT_TRACE_CS_API_H
#define AGENT_TRACE_CS_API_H

#include <capstone/capstone.h>

struct cs_api {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	cs_insn *(*malloc_insn)(csh handle);
	void (*free_insn)(cs_insn *insn, size_t count);
	cs_err (*close)(csh *handle);
	const char *(*reg_name)(csh handle, unsigned int reg_id);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address, cs_insn *insn);
	cs_err (*regs_access)(csh handle, const cs_insn *insn, cs_regs regs_read, uint8_t *regs_read_count,
			      cs_regs regs_write, uint8_t *regs_write_count);
};

/* The table (loaded once, thread-safe; never unloaded). Returns 0, or -ELIBACC
 * when the library cannot be loaded: cs_api_error() then says what to install. */
int cs_api_load(const struct cs_api **out);
/* Why the last cs_api_load failed ("" if it did not). */
const char *cs_api_error(void);

#endif
