/* A store of CPU samples for the profile views' tests (flame, diff, exports):
 * a real C++ program compiled here (g++), its functions' file offsets read
 * from its symbol table, and Samples records with call chains through them
 * written into a SQLite store as two agents would send them:
 *   session A (agent board-a, pid 100 "demo"): 20 one-second intervals from
 *     now - 600 s; intervals 1..10: main;demo::cold 30, main;run;hot<long> 10
 *     each; 11..20: cold 5, hot<long> 40 each; plus pid 101 "python3.11":
 *     15 addresses of a module with no file here, 2 samples each, interval 1.
 *   session B (agent board-b, pid 200 "demo"): 10 intervals from now - 300 s,
 *     main;run;hot<int> 20 each; plus pid 201 "kworker": 70 samples at kernel
 *     address PF_KERNEL_IP, interval 1. */
#ifndef TESTS_LIB_PROFILE_FIXTURE_H
#define TESTS_LIB_PROFILE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#define PF_KERNEL_IP 0xffffffff81001010ull /* in do_syscall_64 of PF_KALLSYMS */
#define PF_KALLSYMS                                                                                        \
	"ffffffff81000000 T _stext\nffffffff81001000 t do_syscall_64\nffffffff81002000 T __x64_sys_read\n"

struct pf_fixture {
	char bin[600];  /* the C++ program */
	char db[600];   /* the store */
	int64_t sid_a, sid_b;
	int64_t t0_a_s;  /* wall time (unix s) of session A's Hello: interval i ends at t0 + i */
	int64_t t0_b_s;
};

/* Only compile the C++ program into bin (dir/demo). 0, -ENOENT (no g++), -EIO. */
int pf_compile(const char *dir, char *bin, size_t len);
/* Build everything under dir. 0, or -errno (-ENOENT: no g++: skip). */
int pf_build(struct pf_fixture *f, const char *dir);
/* File offset of the function whose symbol (mangled) is sym in bin. */
int pf_sym_file_off(const char *bin, const char *sym, uint64_t *off);

#endif
