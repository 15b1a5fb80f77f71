/* User-space aggregation of CPU samples: a hash table of keys
 * (pid, tid, user ip, kernel ip, stack id) -> count, and the interning of
 * user call chains into session-local stack ids. Both sampling back ends fill
 * it (the BPF one from its kernel map), so both send the same records.
 * Pure: no system calls. Functions return 0 or a negative errno. */
#ifndef AGENT_SAMPLE_AGG_H
#define AGENT_SAMPLE_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SAMPLE_AGG_MAX_KEYS 16384u  /* keys in one record: the sampler sends early when full */
#define SAMPLE_STACK_MAX_DEPTH 127u
#define SAMPLE_STACKS_MAX 65536u    /* distinct call chains per session */

/* In an interned chain, kernel frames come first, then this mark, then the
 * user frames (PERF_CONTEXT_USER: never an instruction address). A chain
 * without the mark is user frames only. */
#define SAMPLE_CHAIN_USER_MARK 0xfffffffffffffe00ull
#define SAMPLE_KSTACK_MAX_DEPTH 32u

struct sample_key {
	int32_t pid, tid;
	uint64_t ip;       /* user-mode ip, 0 if the sample hit the kernel */
	uint64_t kip;      /* kernel ip, 0 if the sample hit user mode */
	uint32_t stack_id; /* interned user call chain, 0 = none */
	uint32_t inc;      /* the pid's process in the session (task_names.h: pid reuse), summed apart */
};

struct sample_entry {
	struct sample_key k;
	uint64_t count; /* 0 = free slot */
};

struct sample_agg {
	struct sample_entry *slots;
	size_t cap;   /* power of two */
	size_t n;     /* used slots */
	uint64_t total;
};

int sample_agg_init(struct sample_agg *a);
void sample_agg_free(struct sample_agg *a);
/* Add count to key: 1 if the key is new, 0 if it was there. -ENOSPC when SAMPLE_AGG_MAX_KEYS keys are used and key is new. */
int sample_agg_add(struct sample_agg *a, const struct sample_key *k, uint64_t count);
bool sample_agg_full(const struct sample_agg *a);
/* Forget every key (keeps the memory). */
void sample_agg_reset(struct sample_agg *a);
/* Iterate the used slots: for (size_t i = 0; i < a->cap; i++) if (a->slots[i].count) ... */

struct stack_table {
	/* stack i (id i + 1): ips[off[i] .. off[i] + len[i]) */
	uint64_t *ips;
	size_t nips, capips;
	uint32_t *off;
	uint8_t *len;
	bool *declared;
	size_t n, cap;
	uint32_t *hash; /* open addressing on ids, 0 = free */
	size_t hcap;
};

int stack_table_init(struct stack_table *t);
void stack_table_free(struct stack_table *t);
/* Session-local id (>= 1) of the chain ips[0..n) (innermost first; n is
 * clamped to SAMPLE_STACK_MAX_DEPTH); 0 for an empty chain or when the table
 * is full (the sample keeps its ip, loses its chain). */
uint32_t stack_table_intern(struct stack_table *t, const uint64_t *ips, size_t n);
/* The chain of id (NULL if unknown), its length in *n. */
const uint64_t *stack_table_get(const struct stack_table *t, uint32_t id, size_t *n);
/* Declaration state of id, for the record builder. */
bool stack_table_declared(const struct stack_table *t, uint32_t id);
void stack_table_set_declared(struct stack_table *t, uint32_t id);
/* Every chain must be declared again (the spool dropped records). */
void stack_table_redeclare(struct stack_table *t);

#endif
