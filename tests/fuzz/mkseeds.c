/* Writes fuzzing seeds: a few valid frames (Hello, Hello with auth,
 * Challenge, Counters, Heartbeat, GpuCounters) for fuzz_frame into DIR; with
 * RECORDS_DIR and HTTP_DIR also one message of each record kind for
 * fuzz_records (kind byte + packed message) and a few request heads for fuzz_http.
 * Usage: mkseeds DIR [RECORDS_DIR HTTP_DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

static void put_raw(const char *dir, const char *name, uint8_t first, const void *data, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		exit(1);
	fputc(first, f);
	fwrite(data, 1, len, f);
	fclose(f);
}

/* fuzz_records input: kind index (fuzz_records.c) + the packed message. */
static void put_msg(const char *dir, const char *name, uint8_t kind, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		exit(1);
	protobuf_c_message_pack(m, buf);
	put_raw(dir, name, kind, buf, len);
	free(buf);
}

static void record_seeds(const char *dir)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "seed";
	h.boot_id = 1;
	put_msg(dir, "hello", 0, &h.base);
	Prof__Counters c = PROF__COUNTERS__INIT;
	uint32_t ids[2] = {1, 2};
	uint64_t t[1] = {1000}, v[2] = {5, 6};
	c.n_event_ids = 2;
	c.event_ids = ids;
	c.n_t_ns = 1;
	c.t_ns = t;
	c.n_values = 2;
	c.values = v;
	put_msg(dir, "counters", 1, &c.base);
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	hb.t_ns = 7;
	put_msg(dir, "heartbeat", 2, &hb.base);
	Prof__Samples sm = PROF__SAMPLES__INIT;
	int32_t pid[1] = {10}, tid[1] = {11};
	uint64_t ip[1] = {0x400000}, kip[1] = {0}, cnt[1] = {3};
	uint32_t stk[1] = {0};
	sm.n_pid = 1;
	sm.pid = pid;
	sm.n_tid = 1;
	sm.tid = tid;
	sm.n_ip = 1;
	sm.ip = ip;
	sm.n_kip = 1;
	sm.kip = kip;
	sm.n_stack_id = 1;
	sm.stack_id = stk;
	sm.n_count = 1;
	sm.count = cnt;
	put_msg(dir, "samples", 3, &sm.base);
	Prof__ClCommand cl = PROF__CL_COMMAND__INIT;
	put_msg(dir, "cl_command", 4, &cl.base);
	Prof__Calibration cal = PROF__CALIBRATION__INIT;
	put_msg(dir, "calibration", 5, &cal.base);
	Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
	put_msg(dir, "trace_window", 6, &tw.base);
	Prof__Ack ack = PROF__ACK__INIT;
	ack.seq = 3;
	put_msg(dir, "ack", 7, &ack.base);
	Prof__Error er = PROF__ERROR__INIT;
	er.code = 16;
	er.message = "busy";
	put_msg(dir, "error", 8, &er.base);
	Prof__Challenge ch = PROF__CHALLENGE__INIT;
	uint8_t nonce[32] = {1, 2, 3};
	ch.nonce.data = nonce;
	ch.nonce.len = sizeof(nonce);
	put_msg(dir, "challenge", 9, &ch.base);
	/* "abc", "abcd", "abce": front-coded names, delta addresses */
	Prof__KernelSymbols ks = PROF__KERNEL_SYMBOLS__INIT;
	int64_t kd[3] = {(int64_t)0xffffffff81000000ull, 16, -8};
	uint32_t ksh[3] = {0, 3, 3};
	static uint8_t kn[] = "abc\0d\0e";
	ks.kernel_boot_id = "3d378104-5cc6-40bd-a643-6c890adeaa7d";
	ks.chunks = 1;
	ks.total = 3;
	ks.n_addr_delta = ks.n_shared = 3;
	ks.addr_delta = kd;
	ks.shared = ksh;
	ks.suffixes.data = kn;
	ks.suffixes.len = sizeof(kn);
	put_msg(dir, "kernel_symbols", 13, &ks.base);
}

static void http_seeds(const char *dir)
{
	static const char *const reqs[] = {
	    "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
	    "GET /sessions.json?x=1 HTTP/1.0\r\n\r\n",
	    "GET /session/12/roofline-gpu.svg HTTP/1.1\r\nUser-Agent: a\r\nAccept: */*\r\n\r\n",
	    "POST / HTTP/1.1\r\n\r\n",
	    "GET / HT",
	    "GET /a\n\n",
	};
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		char name[32];
		snprintf(name, sizeof(name), "req%zu", i);
		put_raw(dir, name, (uint8_t)(i * 5 + 7), reqs[i], strlen(reqs[i]));
	}
}

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
	if (argc > 3)
		put_msg(argv[2], "gpu_counters", 10, &gc.base);
	if (argc > 3) {
		record_seeds(argv[2]);
		http_seeds(argv[3]);
	}
	return 0;
}
