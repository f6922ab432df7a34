/* perf's build-id cache (see buildid_cache.h). */
#include "perf/buildid_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"

/* A copy of from at to (a new file: O_EXCL), removed again when it fails. */
static int copy_file(const char *from, const char *to)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	_cleanup_close_ int out = -1;
	struct stat st;
	off_t off = 0;

	if (in < 0)
		return -errno;
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		return -EINVAL;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	while (off < st.st_size) {
		ssize_t n = sendfile(out, in, &off, (size_t)(st.st_size - off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			unlink(to);
			return err;
		}
	}
	return 0;
}

int buildid_cache__add(const char *dir, const char *path, const uint8_t *id, size_t len)
{
	char hex[2 * 20 + 1], entry[PATH_MAX], elf[PATH_MAX + 8], link_dir[PATH_MAX],
	     link_path[PATH_MAX + 64], target[PATH_MAX + 64];
	struct stat st;
	int err;

	if (!dir || !path || path[0] != '/' || !len || len > 20)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (snprintf(entry, sizeof(entry), "%s%s/%s", dir, path, hex) >= (int)sizeof(entry))
		return -ENAMETOOLONG;
	snprintf(elf, sizeof(elf), "%s/elf", entry);
	if (lstat(elf, &st) < 0) {
		err = fileio__mkdirs(entry, 0755);
		if (err)
			return err;
		/* a hard link costs nothing; across file systems (or where links are refused),
		 * a copy */
		if (link(path, elf) < 0 && errno != EEXIST) {
			err = copy_file(path, elf);
			if (err && err != -EEXIST)
				return err;
		}
	}
	snprintf(link_dir, sizeof(link_dir), "%s/.build-id/%.2s", dir, hex);
	snprintf(link_path, sizeof(link_path), "%s/%s", link_dir, hex + 2);
	if (lstat(link_path, &st) == 0)
		return 0;
	err = fileio__mkdirs(link_dir, 0755);
	if (err)
		return err;
	snprintf(target, sizeof(target), "../..%s/%s", path, hex);
	return symlink(target, link_path) < 0 && errno != EEXIST ? -errno : 0;
}

const char *buildid_cache__default_dir(char *buf, size_t size)
{
	const char *home = getenv("HOME");
	struct passwd pw, *res = NULL;
	char pwbuf[4096];
	struct stat st;

	if (!(home && home[0] == '/' && stat(home, &st) == 0 && S_ISDIR(st.st_mode) &&
	      st.st_uid == geteuid())) {
		if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof(pwbuf), &res) || !res ||
		    !res->pw_dir || res->pw_dir[0] != '/')
			return NULL;
		home = res->pw_dir;
	}
	if (snprintf(buf, size, "%s/.debug", home) >= (int)size)
		return NULL;
	return buf;
}
