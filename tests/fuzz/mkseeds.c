/* Writes a few valid frames (Hello, Hello with auth, Challenge, Counters,
 * Heartbeat, GpuCounters) as fuzzing seeds. */
#include <stdio.h>
#include <stdlib.h>

#include "frame.h"

static void put(const char *dir, const char *name, const Prof__Envelope *env)
{
	uint8_t *buf;
	size_t len;
	if (frame_encode(env, 1 << 20, &buf, &len) < 0)
		exit(1);
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		exit(1);
	fputc(7, f); /* read-split byte of the fuzz target */
	fwrite(buf, 1, len, f);
	fclose(f);
	free(buf);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	Prof__Hello h = PROF__HELLO__INIT;
	Prof__CpuInfo cpu = PROF__CPU_INFO__INIT;
	Prof__CpuInfo *cpus[1] = {&cpu};
	cpu.model = "Cortex-A15";
	cpu.implementer = 0x41;
	cpu.part = 0xc0f;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "seed";
	h.boot_id = 12345;
	h.board = "arndale-octa";
	h.kernel_release = "3.4.39";
	h.n_cpus = 1;
	h.cpus = cpus;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	put(dir, "hello", &env);
	uint8_t mac[32];
	for (int i = 0; i < 32; i++)
		mac[i] = (uint8_t)(i * 37 + 1);
	h.auth.data = mac;
	h.auth.len = sizeof(mac);
	put(dir, "hello-auth", &env);

	Prof__Challenge ch = PROF__CHALLENGE__INIT;
	ch.nonce.data = mac;
	ch.nonce.len = sizeof(mac);
	env.body_case = PROF__ENVELOPE__BODY_CHALLENGE;
	env.challenge = &ch;
	put(dir, "challenge", &env);

	Prof__Counters c = PROF__COUNTERS__INIT;
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT;
	Prof__EventDesc *evs[1] = {&ev};
	ev.id = 1;
	ev.name = "task-clock";
	ev.unit = "ns";
	uint32_t ids[1] = {1};
	uint64_t t[2] = {1000000, 1000000};
	uint64_t v[2] = {999000, 1000500};
	uint32_t pct[2] = {100, 50};
	c.n_new_events = 1;
	c.new_events = evs;
	c.n_event_ids = 1;
	c.event_ids = ids;
	c.n_t_ns = 2;
	c.t_ns = t;
	c.n_values = 2;
	c.values = v;
	c.n_running_pct = 2;
	c.running_pct = pct;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	put(dir, "counters", &env);

	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	hb.t_ns = 5;
	env.seq = 2;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	put(dir, "heartbeat", &env);

	Prof__GpuCounterDesc gd = PROF__GPU_COUNTER_DESC__INIT, *gds[1] = {&gd};
	gd.id = 1;
	gd.name = "L2_EXT_READ_BEATS";
	gd.block = 2;
	gd.index = 31;
	gd.role = 7;
	Prof__GpuInfo gi = PROF__GPU_INFO__INIT;
	gi.family = "T62x";
	gi.arch = "Midgard";
	gi.gpu_id = 0x06201000;
	gi.shader_present = 0x3f;
	gi.bus_bytes = 16;
	gi.interface = "uk-dump";
	gi.interval_ns = 1000000;
	uint32_t gids[1] = {1};
	uint64_t glen[2] = {1000000, 4000000}, gv[2] = {300, 0};
	Prof__GpuCounters gc = PROF__GPU_COUNTERS__INIT;
	gc.info = &gi;
	gc.n_new_counters = 1;
	gc.new_counters = gds;
	gc.n_counter_ids = 1;
	gc.counter_ids = gids;
	gc.t0_ns = 5000;
	gc.n_t_ns = 2;
	gc.t_ns = glen;
	gc.n_values = 2;
	gc.values = gv;
	gc.dumps = 5;
	env.seq = 3;
	env.body_case = PROF__ENVELOPE__BODY_GPU_COUNTERS;
	env.gpu_counters = &gc;
	put(dir, "gpu_counters", &env);
	return 0;
}
