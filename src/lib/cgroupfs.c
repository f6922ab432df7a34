/* cgroup v2 facts for recording and reporting. mountinfo's fifth field is the mount point,
 * with spaces and other bytes escaped as \ooo; the file system type follows the " - ". */
#include "lib/cgroupfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"

void cgroupfs__unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = 0;
}

bool cgroupfs__list_has(const char *list, const char *tok)
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

int cgroupfs__mount(const char *v1_controller, char **ret_point, char **ret_root)
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
		if (!v1_controller ? strcmp(fstype, "cgroup2")
				   : (strcmp(fstype, "cgroup") || !cgroupfs__list_has(opts, v1_controller)))
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

int cgroupfs__v2_mount(char *buf, size_t len)
{
	_cleanup_free_ char *point = NULL, *root = NULL;
	int r = cgroupfs__mount(NULL, &point, &root);

	if (r < 0)
		return r;
	if (strlen(point) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, point);
	return 0;
}

int cgroupfs__id(const char *path, uint64_t *ret_id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0)
		return -errno;
	if (h.fh.handle_bytes != sizeof(uint64_t))
		return -EOVERFLOW;
	memcpy(ret_id, h.fh.f_handle, sizeof(*ret_id));
	return 0;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && !memcmp(s + n - k, suffix, k);
}

const char *cgroupfs__unit(const char *path, char *buf, size_t len)
{
	const char *best = NULL, *slice = NULL, *p = path;
	size_t best_len = 0, slice_len = 0;

	if (!path || !len)
		return NULL;
	while (*p) {
		const char *e;
		size_t n;

		while (*p == '/')
			p++;
		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (ends_with(p, n, ".service") || ends_with(p, n, ".scope"))
			best = p, best_len = n;
		else if (ends_with(p, n, ".slice"))
			slice = p, slice_len = n;
		p += n;
	}
	if (!best)
		best = slice, best_len = slice_len;
	if (!best)
		return NULL;
	if (best_len >= len)
		best_len = len - 1;
	memcpy(buf, best, best_len);
	buf[best_len] = 0;
	return buf;
}
