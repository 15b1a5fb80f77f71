/* The preload shim's dlopen interposition (dlopen.c) and its use by
 * entry_preload.c. Only in libprofcl_preload.so. */
#ifndef PCL_DLOPEN_H
#define PCL_DLOPEN_H

#include "pcl.h"

/* The C library's dlopen (the shim's own dlopen calls must not come back to dlopen.c). */
void *pcl_real_dlopen(const char *file, int mode) PCL_HIDDEN;
/* The libOpenCL the program dlopen'ed itself, or NULL. */
void *pcl_dlopened_library(void) PCL_HIDDEN;
/* Resolve the next functions now (entry_preload.c). */
void pcl_preload_ready(void) PCL_HIDDEN;

#endif
