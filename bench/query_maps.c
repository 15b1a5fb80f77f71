/* A store of one process with MAPS file mappings and KEYS distinct sampled addresses spread over
 * them (#40, review r6 of w45d: an ART or JVM process maps thousands of files; the report finds the
 * mapping of every frame), for timing `collector report` over it (bench/RESULTS.md, w45e).
 * Usage: query_maps STORE MAPS KEYS   (STORE: a new SQLite path) */
#include <stdio.h>
#include <stdlib.h>

#include "sample_rec.h"
#include "store/store.h"

enum { PER = 1000 }; /* keys a record */

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s STORE MAPS KEYS\n", argv[0]);
		return 2;
	}
	unsigned nmaps = (unsigned)atoi(argv[2]), nkeys = (unsigned)atoi(argv[3]);
	if (nmaps < 1 || nkeys < 1) {
		fprintf(stderr, "%s: MAPS and KEYS must be at least 1\n", argv[0]);
		return 2;
	}
	struct store *s;
	if (store_open(argv[1], 0, &s) < 0)
		return 1;
	int64_t sid;
	int rc = sample_rec_session(s, "board-m", &sid);
	Prof__Mapping *m = calloc(nmaps, sizeof(*m));
	Prof__Mapping **mp = calloc(nmaps, sizeof(*mp));
	char(*paths)[32] = calloc(nmaps, sizeof(*paths));
	if (!m || !mp || !paths)
		return 1;
	uint64_t per = (nkeys + nmaps - 1) / nmaps, size = (per * 0x10 + 0xfff) & ~0xfffull;
	for (unsigned i = 0; i < nmaps; i++) { /* room for each's addresses, apart, one file each */
		prof__mapping__init(&m[i]);
		snprintf(paths[i], sizeof(paths[i]), "/nonexistent/lib%u.so", i);
		m[i].id = i + 1;
		m[i].pid = 100;
		m[i].start = 0x40000000ull + (uint64_t)i * 2 * size;
		m[i].end = m[i].start + size;
		m[i].path = paths[i];
		mp[i] = &m[i];
	}
	Prof__TaskName tn = PROF__TASK_NAME__INIT, *tp = &tn;
	tn.pid = tn.tid = 100;
	tn.comm = tn.thread = "art";
	int32_t pid[PER], tid[PER];
	uint64_t ip[PER], count[PER];
	uint32_t stack[PER];
	for (unsigned r = 0; rc >= 0 && r * PER < nkeys; r++) {
		unsigned n = nkeys - r * PER < PER ? nkeys - r * PER : PER;
		for (unsigned j = 0; j < n; j++) {
			unsigned k = r * PER + j;
			pid[j] = tid[j] = 100;
			ip[j] = m[k % nmaps].start + 0x10 * (k / nmaps);
			count[j] = 1 + k % 3;
			stack[j] = 0;
		}
		struct sample_rec_keys keys = {n, pid, tid, ip, stack, count};
		Prof__Samples sm;
		Prof__Envelope env;
		sample_rec_init(&sm, &env, r + 1, &keys);
		sm.n_new_mappings = r == 0 ? nmaps : 0;
		sm.new_mappings = mp;
		sm.n_new_tasks = r == 0;
		sm.new_tasks = &tp;
		rc = store_put_record(s, sid, &env, 100);
	}
	if (rc >= 0)
		rc = store_commit(s);
	store_close(s);
	free(m);
	free(mp);
	free(paths);
	if (rc < 0) {
		fprintf(stderr, "%s: writing %s failed (%d)\n", argv[0], argv[1], rc);
		return 1;
	}
	printf("%s: 1 process, %u mappings, %u keys\n", argv[1], nmaps, nkeys);
	return 0;
}
