/* Folded stacks, the text format of FlameGraph's flamegraph.pl and of
 * speedscope: one line per distinct stack, frames root first separated by
 * ';', a space, the sample count. Written from the flame_tree (so identical
 * stacks are merged and lines sorted); ';' and line breaks inside a name
 * become ':' and ' '. */
#ifndef COLLECTOR_VIEWS_FOLDED_H
#define COLLECTOR_VIEWS_FOLDED_H

#include <stdio.h>

#include "flame_tree.h"

/* side: which counts (0, or 1 for a diff tree's B). 0 or -errno. */
int folded_write(const struct flame_tree *t, int side, FILE *out);

#endif
