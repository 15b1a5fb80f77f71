/* The nanoseconds one CPU sample stands for, from its record's frequency and period
 * (Samples.freq_hz, Samples.period): a timer's period (ns: the agent's is 1/128 longer
 * than 1/freq_hz, off the kernel tick's lattice: agent/sampler.c choose_event);
 * sampled by frequency without a period (an older store, a counting event): 1 s /
 * freq_hz; sampled by period: the period; else 1. Header only. */
#ifndef COMMON_SAMPLE_PERIOD_H
#define COMMON_SAMPLE_PERIOD_H

#include <stdint.h>

static inline uint64_t sample_period_ns(uint64_t freq_hz, uint64_t period)
{
	if (freq_hz > 0 && period > 0)
		return period;
	if (freq_hz > 0)
		return freq_hz < 1000000000u ? 1000000000u / freq_hz : 1;
	return period > 0 ? period : 1;
}

#endif
