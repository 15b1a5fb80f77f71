/* Static agent on musl (BOARD_LIBC = musl, mk/board.mk): what glibc's headers give
 * every translation unit and musl's lack; force-included (-include) in musl builds
 * only. (glibc-only calls such as malloc_trim are guarded with #ifdef __GLIBC__.) */
#ifndef BOARD_MUSL_GLIBC_H
#define BOARD_MUSL_GLIBC_H

/* glibc defines __WORDSIZE in every translation unit (features.h); cmocka.h falls back
 * to 32 without it. musl's own definition, as its <sys/user.h> gives it. */
#include <bits/reg.h>

#endif
