/* Placeholder until the OpenCL capture lands: there is no command table yet. */
#include <errno.h>

#include "report.h"

int report_opencl(struct store *st, int64_t sid, const struct report_opts *o, FILE *out)
{
	fprintf(out, "opencl: this collector does not store OpenCL commands yet\n");
	return 0;
}
