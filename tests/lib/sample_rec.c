/* A Samples record as the store tests write it (sample_rec.h). */
#include "sample_rec.h"

#include "store/store.h"

int sample_rec_session(struct store *s, const char *agent, int64_t *sid)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = 1;
	h.agent_id = (char *)agent;
	h.boot_id = 1;
	h.board = "host";
	h.realtime_ns = 1700000000000000000ull;
	uint64_t max_seq;
	return store_session_open(s, &h, "127.0.0.1:1", sid, &max_seq, NULL);
}

void sample_rec_init(Prof__Samples *sm, Prof__Envelope *env, uint64_t seq, const struct sample_rec_keys *k)
{
	prof__samples__init(sm);
	sm->t_ns = 1000000 * seq;
	sm->interval_ns = 1000000;
	sm->freq_hz = 99;
	sm->n_pid = sm->n_tid = sm->n_ip = sm->n_stack_id = sm->n_count = k->n;
	sm->pid = k->pid;
	sm->tid = k->tid;
	sm->ip = k->ip;
	sm->stack_id = k->stack_id;
	sm->count = k->count;
	prof__envelope__init(env);
	env->seq = seq;
	env->body_case = PROF__ENVELOPE__BODY_SAMPLES;
	env->samples = sm;
}

uint64_t sample_rec_pattern(struct sample_rec_pattern *p, uint64_t seq, size_t n, uint64_t base)
{
	uint64_t sum = 0;
	if (n > SAMPLE_REC_PATTERN_MAX)
		n = SAMPLE_REC_PATTERN_MAX;
	for (size_t i = 0; i < n; i++) {
		p->pid[i] = p->tid[i] = 300 + (int32_t)(i % 3);
		p->ip[i] = base + 16 * (uint64_t)i;
		p->count[i] = 1 + (i + seq) % 5;
		p->stack[i] = (uint32_t)(i % 7);
		sum += p->count[i];
	}
	p->k = (struct sample_rec_keys){n, p->pid, p->tid, p->ip, p->stack, p->count};
	return sum;
}

uint64_t sample_rec_pattern_sum(uint64_t seq, size_t n)
{
	uint64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += 1 + (i + seq) % 5;
	return t;
}
