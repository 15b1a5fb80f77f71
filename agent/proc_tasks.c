#include "proc_tasks.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int proc_list_tids(pid_t pid, pid_t **out, size_t *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	size_t cap = 16, k = 0;
	pid_t *t = malloc(cap * sizeof(*t));
	struct dirent *de;
	while (t && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (k == cap) {
			pid_t *nt = realloc(t, cap * 2 * sizeof(*t));
			if (!nt) {
				free(t);
				t = NULL;
				break;
			}
			t = nt;
			cap *= 2;
		}
		t[k++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	if (!t)
		return -ENOMEM;
	*out = t;
	*n = k;
	return 0;
}
