/* Finding our own cgroup (cgroup.h): mountinfo's fields are unescaped (\ooo), the v1 mount
 * must list the freezer controller among its options. */
#include "record/lossless/cgroup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cgroupfs.h"
#include "lib/cleanup.h"

static bool has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !memcmp(p, tok, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* The mount point and mount root of the first cgroup2 mount (v1: the first cgroup mount with
 * the freezer controller). */
static int find_mount(bool v2, char **ret_point, char **ret_root)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *fields[8] = { 0 }, *save = NULL, *tok, *fstype = NULL, *opts = NULL;
		int i = 0;
		bool after_dash = false;
		int k = 0;

		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			if (!after_dash) {
				if (!strcmp(tok, "-"))
					after_dash = true;
				else if (i < 8)
					fields[i++] = tok;
			} else {
				if (k == 0)
					fstype = tok;
				else if (k == 2)
					opts = tok;
				k++;
			}
		}
		if (i < 5 || !fstype)
			continue;
		if (v2 ? strcmp(fstype, "cgroup2")
		       : (strcmp(fstype, "cgroup") || !has_token(opts, "freezer")))
			continue;
		cgroupfs__unescape(fields[3]);
		cgroupfs__unescape(fields[4]);
		*ret_root = strdup(fields[3]);
		*ret_point = strdup(fields[4]);
		if (!*ret_root || !*ret_point) {
			free(*ret_root);
			free(*ret_point);
			*ret_root = *ret_point = NULL;
			return -ENOMEM;
		}
		return 0;
	}
	return -ENOENT;
}

int cgroup__find_own(bool v2, char **ret_dir)
{
	_cleanup_free_ char *point = NULL, *root = NULL, *line = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	size_t cap = 0;
	int r;

	r = find_mount(v2, &point, &root);
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
		       : !has_token(c1 + 1, "freezer"))
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
