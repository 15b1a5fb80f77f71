/* The range form of /profile (http_pages.h) and the script of its charts:
 * drag across any agent's chart (a brush) to fill the range shown (since,
 * until) or one of the two ranges compared (A, B; chosen in #brush-target);
 * the form then asks the page again with those values. The values are
 * echoed escaped (svg_escape). */
#ifndef COLLECTOR_HTTP_PROFILE_FORM_H
#define COLLECTOR_HTTP_PROFILE_FORM_H

#include <stdio.h>

#include "http_profile_args.h"

void profile_form_html(FILE *f, const struct profile_args *a);
/* After the charts: the brush on every svg.cpu-chart. */
void profile_brush_script(FILE *f);

#endif
