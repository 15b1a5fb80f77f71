/* The profile views' store fixture (profile_fixture.h). */
#include "profile_fixture.h"

#include "elf_buildid.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profiler.pb-c.h"
#include "store/store.h"

static const char cxx_src[] =
	"namespace demo {\n"
	"template <class T> __attribute__((noinline)) T hot(T x)\n"
	"{ for (int i = 0; i < 1000; i++) x = x * 3 + 1; return x; }\n"
	"struct Worker { __attribute__((noinline)) long run(long n); };\n"
	"long Worker::run(long n) { return hot<long>(n) + hot<int>((int)n); }\n"
	"__attribute__((noinline)) void cold(int *p) { *p += 1; }\n"
	"}\n"
	"int main(int argc, char **argv) { demo::Worker w; int c = 0; demo::cold(&c); return (int)w.run(argc) + c; }\n";

int pf_sym_file_off(const char *bin, const char *sym, uint64_t *off)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	int fd = open(bin, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int rc = -ENOENT;
	uint64_t vaddr = 0;
	Elf_Scn *scn = NULL;
	while (e && rc == -ENOENT && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(e, sh.sh_link, s.st_name)) && strcmp(n, sym) == 0) {
				vaddr = s.st_value;
				rc = 0;
				break;
			}
		}
	}
	size_t nph = 0;
	if (rc == 0 && elf_getphdrnum(e, &nph) == 0) {
		rc = -ERANGE;
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
			    vaddr < ph.p_vaddr + ph.p_filesz) {
				*off = vaddr - ph.p_vaddr + ph.p_offset;
				rc = 0;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

#define MAP_START 0x555555000000ull
#define PY_START 0x7f0000000000ull

struct rec {
	Prof__Samples sm;
	int32_t pid[32], tid[32];
	uint64_t ip[32], count[32], kip[32];
	uint32_t stack[32];
	size_t n;
};

static void key(struct rec *r, int32_t pid, uint64_t ip, uint32_t stack, uint64_t count)
{
	r->kip[r->n] = 0;
	r->pid[r->n] = pid;
	r->tid[r->n] = pid;
	r->ip[r->n] = ip;
	r->stack[r->n] = stack;
	r->count[r->n] = count;
	r->n++;
}

static int put(struct store *s, int64_t sid, uint64_t seq, struct rec *r, uint64_t t_ns)
{
	r->sm.t_ns = t_ns;
	r->sm.interval_ns = 1000000000;
	r->sm.event_id = 1;
	r->sm.freq_hz = 99;
	r->sm.backend = 2;
	r->sm.n_pid = r->sm.n_tid = r->sm.n_ip = r->sm.n_stack_id = r->sm.n_count = r->n;
	r->sm.pid = r->pid;
	r->sm.tid = r->tid;
	r->sm.ip = r->ip;
	r->sm.stack_id = r->stack;
	r->sm.count = r->count;
	r->sm.n_kip = r->n;
	r->sm.kip = r->kip;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_SAMPLES;
	env.samples = &r->sm;
	int rc = store_put_record(s, sid, &env, 200);
	return rc < 0 ? rc : 0;
}

static int64_t open_session(struct store *s, const char *agent, int64_t realtime_s)
{
	Prof__Hello h;
	prof__hello__init(&h);
	h.schema_version = 1;
	h.agent_id = (char *)agent;
	h.boot_id = 7;
	h.board = "rk3399";
	h.realtime_ns = (uint64_t)realtime_s * 1000000000ull;
	int64_t id = 0;
	uint64_t max_seq = 0;
	bool created = false;
	int rc = store_session_open(s, &h, "127.0.0.1:1", &id, &max_seq, &created);
	return rc < 0 ? rc : id;
}

/* One session of the demo program: its mapping, stacks, task name. */
static int demo_session(struct store *s, int64_t sid, const char *bin, int32_t pid, const uint64_t off[4], int phases,
			bool python)
{
	/* off: main, Worker::run, hot<long>, cold (hot<int> when phases == 0) */
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT, *evp[1] = {&ev};
	ev.id = 1;
	ev.name = "cpu-clock";
	Prof__Mapping m[2] = {PROF__MAPPING__INIT, PROF__MAPPING__INIT}, *mp[2] = {&m[0], &m[1]};
	m[0].id = 1;
	m[0].pid = pid;
	m[0].start = MAP_START;
	m[0].end = MAP_START + 0x100000;
	m[0].path = (char *)bin;
	uint8_t bid[BUILD_ID_MAX]; /* as the agent sends it (agent/proc_maps.c) */
	int bl = elf_build_id(bin, bid, sizeof(bid));
	if (bl > 0) {
		m[0].build_id.data = bid;
		m[0].build_id.len = (size_t)bl;
	}
	m[1].id = 2;
	m[1].pid = pid + 1;
	m[1].start = PY_START;
	m[1].end = PY_START + 0x400000;
	m[1].path = "/nonexistent/usr/bin/python3.11";
	uint64_t ips_hot[3] = {MAP_START + off[2] + 1, MAP_START + off[1] + 1, MAP_START + off[0] + 1};
	uint64_t ips_cold[2] = {MAP_START + off[3] + 1, MAP_START + off[0] + 1};
	Prof__Stack k[2] = {PROF__STACK__INIT, PROF__STACK__INIT}, *kp[2] = {&k[0], &k[1]};
	k[0].id = 1;
	k[0].n_ips = 3;
	k[0].ips = ips_hot;
	k[1].id = 2;
	k[1].n_ips = 2;
	k[1].ips = ips_cold;
	Prof__TaskName tn[2] = {PROF__TASK_NAME__INIT, PROF__TASK_NAME__INIT}, *tnp[2] = {&tn[0], &tn[1]};
	tn[0].pid = tn[0].tid = pid;
	tn[0].comm = tn[0].thread = "demo";
	tn[1].pid = tn[1].tid = pid + 1;
	tn[1].comm = tn[1].thread = python ? "python3.11" : "kworker";
	int nint = phases ? 20 : 10;
	for (int i = 1; i <= nint; i++) {
		struct rec r;
		memset(&r, 0, sizeof(r));
		prof__samples__init(&r.sm);
		if (i == 1) {
			r.sm.n_new_events = 1;
			r.sm.new_events = evp;
			r.sm.n_new_mappings = python ? 2 : 1;
			r.sm.new_mappings = mp;
			r.sm.n_new_stacks = phases ? 2 : 1;
			r.sm.new_stacks = kp;
			r.sm.n_new_tasks = 2;
			r.sm.new_tasks = tnp;
		}
		if (phases) {
			key(&r, pid, ips_hot[0], 1, i <= 10 ? 10 : 40);
			key(&r, pid, ips_cold[0], 2, i <= 10 ? 30 : 5);
		} else {
			key(&r, pid, ips_hot[0], 1, 20);
		}
		if (python && i == 1)
			for (int a = 0; a < 15; a++)
				key(&r, pid + 1, PY_START + 0x1000 + 0x40 * (uint64_t)a, 0, 2);
		if (!python && i == 1) { /* a kernel thread: 70 samples at one kernel address */
			key(&r, pid + 1, 0, 0, 70);
			r.kip[r.n - 1] = PF_KERNEL_IP;
		}
		int rc = put(s, sid, (uint64_t)i, &r, (uint64_t)i * 1000000000ull);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int pf_compile(const char *dir, char *bin, size_t len)
{
	char src[600], cmd[2000];
	snprintf(src, sizeof(src), "%s/demo.cpp", dir);
	snprintf(bin, len, "%s/demo", dir);
	if (system("command -v g++ >/dev/null 2>&1") != 0)
		return -ENOENT;
	FILE *o = fopen(src, "w");
	if (!o)
		return -errno;
	fputs(cxx_src, o);
	fclose(o);
	snprintf(cmd, sizeof(cmd), "g++ -O1 -g -Wl,--build-id -o %s %s", bin, src);
	return system(cmd) == 0 ? 0 : -EIO;
}

int pf_build(struct pf_fixture *f, const char *dir)
{
	snprintf(f->db, sizeof(f->db), "%s/profile.db", dir);
	int crc = pf_compile(dir, f->bin, sizeof(f->bin));
	if (crc < 0)
		return crc;
	static const char *const syms[5] = {"main", "_ZN4demo6Worker3runEl", "_ZN4demo3hotIlEET_S1_",
					    "_ZN4demo4coldEPi", "_ZN4demo3hotIiEET_S1_"};
	uint64_t off[5];
	for (int i = 0; i < 5; i++) {
		int rc = pf_sym_file_off(f->bin, syms[i], &off[i]);
		if (rc < 0) {
			fprintf(stderr, "profile fixture: %s not in %s: %s\n", syms[i], f->bin, strerror(-rc));
			return rc;
		}
	}
	struct store *s;
	int rc = store_open(f->db, 0, &s);
	if (rc < 0)
		return rc;
	int64_t now = (int64_t)time(NULL);
	f->t0_a_s = now - 600;
	f->t0_b_s = now - 300;
	f->sid_a = open_session(s, "board-a", f->t0_a_s);
	rc = f->sid_a < 0 ? (int)f->sid_a : demo_session(s, f->sid_a, f->bin, 100, off, 1, true);
	if (rc == 0) {
		f->sid_b = open_session(s, "board-b", f->t0_b_s);
		uint64_t offb[4] = {off[0], off[1], off[4], off[3]};
		rc = f->sid_b < 0 ? (int)f->sid_b : demo_session(s, f->sid_b, f->bin, 200, offb, 0, false);
	}
	if (rc == 0)
		rc = store_commit(s);
	store_close(s);
	return rc;
}
