/* libFuzzer target: the collector's input path up to the store — incremental
 * frame decoding with arbitrary read splits, envelope unpacking, validation. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "frame.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* First byte picks the read size, so splits are explored too. */
	size_t chunk = (size_t)(data[0] % 64) + 1;
	data++;
	size--;
	struct frame_decoder d;
	if (frame_decoder_init(&d, 64 * 1024) < 0)
		return 0;
	size_t off = 0;
	int dead = 0;
	while (off < size && !dead) {
		size_t n = size - off < chunk ? size - off : chunk;
		if (frame_decoder_feed(&d, data + off, n) < 0)
			break;
		off += n;
		const uint8_t *p;
		size_t plen;
		int rc;
		while ((rc = frame_decoder_next(&d, &p, &plen)) == 1) {
			char err[256];
			Prof__Envelope *env = envelope_decode(p, plen, err, sizeof(err));
			if (env) {
				(void)envelope_kind(env);
				prof__envelope__free_unpacked(env, NULL);
			}
		}
		if (rc < 0)
			dead = 1;
	}
	if (!dead)
		(void)frame_decoder_finish(&d);
	frame_decoder_free(&d);
	return 0;
}
