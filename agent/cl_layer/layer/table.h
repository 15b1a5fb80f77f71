/* The capture library's hash table of handles (tables.c): intrusive nodes
 * keyed by an OpenCL handle, with the app's reference count. The caller
 * holds its own lock and owns the nodes (embedded first in its structs). */
#ifndef PCL_TABLE_H
#define PCL_TABLE_H

#include <stdint.h>

#include "pcl.h"

#define PCL_TABLE_BUCKETS 1024u

struct pcl_node {
	const void *key;
	struct pcl_node *next;
	uint32_t refs; /* the app's references: 1 at creation */
};

struct pcl_table {
	struct pcl_node *b[PCL_TABLE_BUCKETS];
};

struct pcl_node *pcl_table_find(struct pcl_table *t, const void *key) PCL_HIDDEN;
/* Unlink and return the node of key (NULL if none); the caller frees it. */
struct pcl_node *pcl_table_take(struct pcl_table *t, const void *key) PCL_HIDDEN;
/* Insert n under key with one reference (take any old node of key first). */
void pcl_table_put(struct pcl_table *t, struct pcl_node *n, const void *key) PCL_HIDDEN;

#endif
