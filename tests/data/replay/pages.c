/* A freestanding static program for test_trace_replay_arm (issue 36): one load from every other
 * page of the first 64 of a 4 MiB .bss table (separate pages), then from every page of it in
 * order (the first ones join two runs each), then exit(0) by svc. Unicorn aborts the process
 * past TARGET_PAGE_SIZE memory sections (1024 on 32-bit ARM): mapped a region a page, a window
 * over 4 MiB killed the collector. Built with -DSPAN_KIB=8192u -DSEPARATE: one load from every
 * other page of an 8 MiB table only (1,024 separate pages, more runs than the emulator takes). */
#ifndef SPAN_KIB
#define SPAN_KIB 4096u
#endif
#define PAGES (SPAN_KIB / 4u)
unsigned char table[PAGES * 4096u]; /* external: every load stays */

#include "sys_exit.h"

void _start(void)
{
	unsigned sum = 0;
#ifdef SEPARATE
	for (unsigned k = 0; k < PAGES; k += 2)
		sum += ((volatile unsigned char *)table)[k * 4096u];
#else
	for (unsigned k = 0; k < 64; k += 2)
		sum += ((volatile unsigned char *)table)[k * 4096u];
	for (unsigned k = 0; k < PAGES; k++)
		sum += ((volatile unsigned char *)table)[k * 4096u];
#endif
	sys_exit((int)(sum & 1));
}
