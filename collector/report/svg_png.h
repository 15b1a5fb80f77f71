/* SVG -> PNG through Debian's rsvg-convert (package librsvg2-bin), and the
 * PNG header check. */
#ifndef COLLECTOR_REPORT_SVG_PNG_H
#define COLLECTOR_REPORT_SVG_PNG_H

#include <stdint.h>

/* Run `rsvg-convert -o png svg`; -ENOENT (logged with the package to
 * install) when rsvg-convert is missing, -EIO when it fails. */
int svg_to_png(const char *svg, const char *png);
/* Width and height from the IHDR chunk; -EINVAL if path is no PNG. */
int png_size(const char *path, uint32_t *width, uint32_t *height);

#endif
