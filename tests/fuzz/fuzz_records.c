/* libFuzzer target: every record kind's validator (proto/validate*.c). The
 * first byte picks the body kind, the rest is unpacked as that message and
 * checked through envelope_validate(), which calls the kind's validator
 * (hello, counters, heartbeat, samples, cl_command, calibration,
 * trace_window, gpu_counters, cl_batch, target_end, kernel_symbols, and the control bodies
 * ack, error, challenge). Messages the
 * frame decoder would reject as a whole envelope still reach the validator
 * here, with any field combination protobuf accepts. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "validate.h"

#define KINDS 14

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned kind = data[0] % KINDS;
	data++;
	size--;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = size;
	ProtobufCMessage *m = NULL;
#define UNPACK(bc, field, fn)                                                                                \
	do {                                                                                                 \
		env.body_case = bc;                                                                          \
		env.field = fn(NULL, size, data);                                                            \
		m = (ProtobufCMessage *)env.field;                                                           \
	} while (0)
	switch (kind) {
	case 0:
		UNPACK(PROF__ENVELOPE__BODY_HELLO, hello, prof__hello__unpack);
		break;
	case 1:
		UNPACK(PROF__ENVELOPE__BODY_COUNTERS, counters, prof__counters__unpack);
		break;
	case 2:
		UNPACK(PROF__ENVELOPE__BODY_HEARTBEAT, heartbeat, prof__heartbeat__unpack);
		break;
	case 3:
		UNPACK(PROF__ENVELOPE__BODY_SAMPLES, samples, prof__samples__unpack);
		break;
	case 4:
		UNPACK(PROF__ENVELOPE__BODY_CL_COMMAND, cl_command, prof__cl_command__unpack);
		break;
	case 5:
		UNPACK(PROF__ENVELOPE__BODY_CALIBRATION, calibration, prof__calibration__unpack);
		break;
	case 6:
		UNPACK(PROF__ENVELOPE__BODY_TRACE_WINDOW, trace_window, prof__trace_window__unpack);
		break;
	case 7:
		UNPACK(PROF__ENVELOPE__BODY_ACK, ack, prof__ack__unpack);
		break;
	case 8:
		UNPACK(PROF__ENVELOPE__BODY_ERROR, error, prof__error__unpack);
		break;
	case 9:
		UNPACK(PROF__ENVELOPE__BODY_CHALLENGE, challenge, prof__challenge__unpack);
		break;
	case 10:
		UNPACK(PROF__ENVELOPE__BODY_GPU_COUNTERS, gpu_counters, prof__gpu_counters__unpack);
		break;
	case 11:
		UNPACK(PROF__ENVELOPE__BODY_CL_BATCH, cl_batch, prof__cl_command_batch__unpack);
		break;
	case 12:
		UNPACK(PROF__ENVELOPE__BODY_TARGET_END, target_end, prof__target_end__unpack);
		break;
	default:
		UNPACK(PROF__ENVELOPE__BODY_KERNEL_SYMBOLS, kernel_symbols, prof__kernel_symbols__unpack);
		break;
	}
	if (!m)
		return 0;
	char err[256];
	err[0] = 0;
	int rc = envelope_validate(&env, err, sizeof(err));
	if (rc != 0 && (rc != -EINVAL || !err[0])) /* -EINVAL always comes with a reason */
		__builtin_trap();
	(void)envelope_kind(&env);
	protobuf_c_message_free_unpacked(m, NULL);
	return 0;
}
