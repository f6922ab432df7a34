/* Finding our own cgroup (cgroup.h): the hierarchy's mount comes from lib/cgroupfs (v1: the mount
 * with the freezer controller), our path in it from /proc/self/cgroup. */
#include "record/lossless/cgroup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cgroupfs.h"
#include "lib/cleanup.h"

int cgroup__find_own(bool v2, char **ret_dir)
{
	_cleanup_free_ char *point = NULL, *root = NULL, *line = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	size_t cap = 0;
	int r;

	r = cgroupfs__mount(v2 ? NULL : "freezer", &point, &root);
	if (r < 0)
		return r;
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *path;
		size_t rl = strlen(root);

		if (!c2)
			continue;
		*c2 = '\0';
		path = c2 + 1;
		path[strcspn(path, "\n")] = '\0';
		if (v2 ? strcmp(c1 + 1, "") || strncmp(line, "0:", 2)
		       : !cgroupfs__list_has(c1 + 1, "freezer"))
			continue;
		/* The path is relative to the hierarchy's root; the mount may show a subtree. */
		if (strcmp(root, "/")) {
			if (strncmp(path, root, rl) || (path[rl] && path[rl] != '/'))
				return -ENOENT;
			path += rl;
		}
		if (asprintf(ret_dir, "%s%s", point, path) < 0)
			return -ENOMEM;
		return 0;
	}
	return -ENOENT;
}
