/* folded_write(): depth-first over the tree, a line for each node with self samples. */
#include "folded.h"

#include <errno.h>
#include <stdlib.h>

static void put_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s, f);
}

static int walk(const struct flame_tree *t, int side, int32_t i, int32_t *path, int depth, FILE *f)
{
	const struct flame_node *n = &t->nodes[i];
	if (n->total[side] == 0)
		return 0;
	if (i != 0)
		path[depth++] = i;
	if (n->self[side] && depth > 0) {
		for (int k = 0; k < depth; k++) {
			if (k)
				fputc(';', f);
			put_name(f, t->nodes[path[k]].name);
		}
		fprintf(f, " %llu\n", (unsigned long long)n->self[side]);
	}
	int32_t *kids = NULL;
	int nk = flame_tree_children(t, i, &kids);
	if (nk < 0)
		return nk;
	int rc = 0;
	for (int k = 0; k < nk && rc == 0; k++)
		rc = walk(t, side, kids[k], path, depth, f);
	free(kids);
	return rc;
}

int folded_write(const struct flame_tree *t, int side, FILE *out)
{
	side = side ? 1 : 0;
	/* depth: at most STACKS_MAX_FRAMES + the process level */
	int32_t path[STACKS_MAX_FRAMES + 2];
	int rc = walk(t, side, 0, path, 0, out);
	if (rc == 0 && ferror(out))
		rc = -EIO;
	return rc;
}
