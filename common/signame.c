#include "signame.h"

/* Linux's numbers (asm-generic/signal.h; x86, ARM and arm64 agree on these). */
static const char *const names[] = {
	[1] = "SIGHUP",	  [2] = "SIGINT",   [3] = "SIGQUIT",  [4] = "SIGILL",   [5] = "SIGTRAP",
	[6] = "SIGABRT",  [7] = "SIGBUS",   [8] = "SIGFPE",   [9] = "SIGKILL",  [10] = "SIGUSR1",
	[11] = "SIGSEGV", [12] = "SIGUSR2", [13] = "SIGPIPE", [14] = "SIGALRM", [15] = "SIGTERM",
	[24] = "SIGXCPU", [25] = "SIGXFSZ", [31] = "SIGSYS",
};

const char *sig_name(int sig)
{
	return sig > 0 && sig < (int)(sizeof(names) / sizeof(names[0])) && names[sig] ? names[sig] : "a signal";
}

bool sig_is_crash(int sig)
{
	return sig == 3 || sig == 4 || sig == 5 || sig == 6 || sig == 7 || sig == 8 || sig == 11 || sig == 24 ||
	       sig == 25 || sig == 31;
}
