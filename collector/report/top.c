/* Placeholder until CPU sampling lands: there is no sample table yet. */
#include <errno.h>

#include "report.h"

int report_top(struct store *st, int64_t sid, const struct report_opts *o, FILE *out)
{
	fprintf(out, "top functions: this collector does not store CPU samples yet\n");
	return 0;
}
