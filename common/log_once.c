#include "log_once.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t once_keys[LOG_ONCE_KEYS]; /* FNV-1a hashes, 0 = free */
static unsigned once_n;

bool log_once(const char *key)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	if (h == 0)
		h = 1;
	bool fresh = true;
	pthread_mutex_lock(&once_lock);
	size_t i = h & (LOG_ONCE_KEYS - 1);
	for (unsigned probes = 0; probes < LOG_ONCE_KEYS && once_keys[i];
	     probes++, i = (i + 1) & (LOG_ONCE_KEYS - 1))
		if (once_keys[i] == h) {
			fresh = false;
			break;
		}
	if (fresh && once_n < LOG_ONCE_KEYS * 3 / 4 && !once_keys[i]) {
		once_keys[i] = h;
		once_n++;
	}
	pthread_mutex_unlock(&once_lock);
	return fresh;
}

void log_once_reset(void)
{
	pthread_mutex_lock(&once_lock);
	memset(once_keys, 0, sizeof(once_keys));
	once_n = 0;
	pthread_mutex_unlock(&once_lock);
}
