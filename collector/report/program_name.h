/* Names a user recognises for traced threads: the program a session ran,
 * from its target ("app args" from agent run, "cmd ./app args" from older
 * agents, "riscv64 trace by qemu-plugin:
 * qemu-riscv64 ./prog args"), and a thread label built on it ("app tid 12",
 * "prog (whole run)" for a full trace without thread ids). Pure. */
#ifndef COLLECTOR_REPORT_PROGRAM_NAME_H
#define COLLECTOR_REPORT_PROGRAM_NAME_H

#include <stddef.h>

/* "app", "prog"; "" when the target names no program (-p PID, -a). */
void program_of_target(const char *target, char *out, size_t len);
/* "app tid 13", "prog (whole run)" (pid and tid 0), or "pid 12 tid 13" without a program. */
void thread_label(const char *prog, int pid, int tid, char *out, size_t len);

#endif
