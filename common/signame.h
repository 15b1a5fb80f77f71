/* Names of the signals that end programs, the same on the board and the
 * host (Linux numbers, shared by x86, ARM and arm64): the agent's and the
 * report's "the program crashed: SIGSEGV" lines. */
#ifndef COMMON_SIGNAME_H
#define COMMON_SIGNAME_H

#include <stdbool.h>

/* "SIGSEGV"; "a signal" for one without a name here. */
const char *sig_name(int sig);
/* Its default action dumps core (SIGSEGV, SIGABRT, SIGBUS, ...): a crash, not a stop on request. */
bool sig_is_crash(int sig);

#endif
