/* Host-side symbolization: the ring sampler samples the busy workload (built
 * with symbols), and the hottest sampled ip resolves to busy's spin() through
 * the mapping + build-id the agent declared; a file with another build-id is
 * refused; the agent's build-id reader agrees with libelf's view. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf_buildid.h"
#include "loop.h"
#include "proc_maps.h"
#include "sampler.h"
#include "symbols.h"
#include "testproc.h"

struct hot {
	pid_t pid;
	uint64_t best_ip, best_count;
	struct sym_mapping map;
	char path[4096];
	uint8_t bid[64];
	bool have_map;
};

static int keep_hottest(void *ctx, Prof__Envelope *env)
{
	struct hot *h = ctx;
	const Prof__Samples *s = env->samples;
	for (size_t i = 0; i < s->n_count; i++)
		if (s->pid[i] == h->pid && s->ip[i] && s->count[i] > h->best_count) {
			h->best_count = s->count[i];
			h->best_ip = s->ip[i];
		}
	for (size_t i = 0; i < s->n_new_mappings; i++) {
		const Prof__Mapping *m = s->new_mappings[i];
		size_t n = strlen(m->path);
		if (m->pid == h->pid && n >= 5 && strcmp(m->path + n - 5, "/busy") == 0 && !h->have_map) {
			/* the executable may have several r-x mappings: keep the first, fix below */
			snprintf(h->path, sizeof(h->path), "%s", m->path);
			memcpy(h->bid, m->build_id.data, m->build_id.len);
			h->map = (struct sym_mapping){.path = h->path, .build_id = h->bid, .build_id_len = m->build_id.len,
						      .start = m->start, .end = m->end, .pgoff = m->pgoff};
			h->have_map = true;
		}
	}
	return 0;
}

static void test_symbols_busy_spin_found_by_name(void **state)
{
	if (geteuid() != 0) {
		printf("# sampling needs root here: skipping\n");
		skip();
	}
	char busy[512];
	tp_bin("workloads/busy", busy, sizeof(busy));
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		execl(busy, busy, "1", "1", "0", (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	struct hot h = {.pid = pid};
	struct sampler_opts o = {.backend = SAMPLER_RING, .freq_hz = 997, .kind = PERF_TARGET_EXEC, .pid = pid,
				 .interval_ns = 200000000ull, .emit = keep_hottest, .ctx = &h};
	struct sampler *s;
	char err[512];
	if (sampler_open(&s, &o, err, sizeof(err)) < 0) {
		close(p[1]);
		waitpid(pid, NULL, 0);
		printf("# cannot sample here: %s: skipping\n", err);
		skip();
	}
	struct loop *l;
	assert_int_equal(loop_create(&l), 0);
	struct loop_source src;
	sampler_loop_source(s, &src);
	loop_add(l, &src);
	assert_int_equal(write(p[1], "x", 1), 1);
	close(p[1]);
	int status;
	for (int i = 0; i < 400; i++) {
		loop_step(l, 50);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	sampler_flush(s, 0);
	sampler_close(s);
	loop_destroy(l);
	assert_true(h.best_count > 0);
	assert_true(h.have_map);
	assert_true(h.map.build_id_len > 0);
	struct sym_resolver *r;
	assert_int_equal(sym_resolver_create(NULL, &r), 0);
	uint64_t off;
	const char *fn = NULL;
	if (h.best_ip >= h.map.start && h.best_ip < h.map.end)
		fn = sym_resolve(r, &h.map, h.best_ip, &off);
	printf("# hottest ip 0x%llx (%llu samples) -> %s\n", (unsigned long long)h.best_ip,
	       (unsigned long long)h.best_count, fn ? fn : "(none)");
	assert_non_null(fn);
	assert_string_equal(fn, "spin");
	/* Same file, but the agent said another build-id: not used. */
	uint8_t other[64];
	memcpy(other, h.bid, h.map.build_id_len);
	other[0] ^= 0xff;
	struct sym_mapping wrong = h.map;
	wrong.build_id = other;
	struct sym_resolver *r2;
	assert_int_equal(sym_resolver_create(NULL, &r2), 0);
	assert_null(sym_resolve(r2, &wrong, h.best_ip, &off));
	sym_resolver_free(r2);
	/* --symfs: the file is looked up under DIR only. */
	struct sym_resolver *r3;
	assert_int_equal(sym_resolver_create("/nonexistent-symfs", &r3), 0);
	assert_null(sym_resolve(r3, &h.map, h.best_ip, &off));
	sym_resolver_free(r3);
	sym_resolver_free(r);
}

static void test_symbols_build_id_reader(void **state)
{
	char busy[512];
	tp_bin("workloads/busy", busy, sizeof(busy));
	uint8_t id[BUILD_ID_MAX];
	int n = elf_build_id(busy, id, sizeof(id));
	assert_true(n == 20); /* GNU ld default: sha1 */
	assert_int_equal(elf_build_id("/etc/hostname", id, sizeof(id)), -ENOEXEC);
	char line[] = "55d4c0a00000-55d4c0a01000 r-xp 00001000 fd:01 1234   /usr/bin/busy (deleted)\n";
	uint64_t s, e, off;
	char *path;
	assert_true(proc_maps_parse_line(line, &s, &e, &off, &path));
	assert_int_equal(s, 0x55d4c0a00000ull);
	assert_int_equal(off, 0x1000);
	assert_string_equal(path, "/usr/bin/busy");
	char vdso[] = "7ffd1000-7ffd2000 r-xp 00000000 00:00 0   [vdso]\n"; /* kept: named from the agent's copy */
	assert_true(proc_maps_parse_line(vdso, &s, &e, &off, &path));
	assert_string_equal(path, "[vdso]");
	char anon[] = "7ffd1000-7ffd2000 r-xp 00000000 00:00 0   [vvar]\n";
	assert_false(proc_maps_parse_line(anon, &s, &e, &off, &path));
	char data[] = "55d4c0a00000-55d4c0a01000 rw-p 00001000 fd:01 1234   /usr/bin/busy\n";
	assert_false(proc_maps_parse_line(data, &s, &e, &off, &path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbols_build_id_reader),
		cmocka_unit_test(test_symbols_busy_spin_found_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
