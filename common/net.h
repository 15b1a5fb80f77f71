/* Socket helpers shared by agent, collector, tests and benchmarks. */
#ifndef COMMON_NET_H
#define COMMON_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Parse "HOST:PORT" (IPv4 dotted quad, "localhost", or "[v6]:port").
 * Returns 0 or -EINVAL. */
int net_parse_hostport(const char *s, struct sockaddr_storage *ss, socklen_t *len);
/* Whether the address is IPv4 127/8 or IPv6 ::1. */
bool net_is_loopback(const struct sockaddr_storage *ss);
/* "127.0.0.1:7412" */
void net_format_addr(const struct sockaddr *sa, char *out, size_t outlen);
int net_set_nonblock(int fd);
/* Monotonic and realtime clocks in nanoseconds. */
uint64_t clock_mono_ns(void);
uint64_t clock_real_ns(void);

#endif
