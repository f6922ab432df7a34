/* Read loops shared by the recorder (/proc, tracefs) and the writer (sysfs notes), and the
 * check of an output path before anything is written to it. */
#include "lib/fileio.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "lib/cleanup.h"

ssize_t fileio__read_all(int fd, char **buf, size_t *cap, size_t max)
{
	size_t len = 0;

	for (;;) {
		ssize_t n;

		if (*cap - len < 4096) {
			size_t nc = *cap ? *cap * 2 : 16384;
			char *nb;

			if (len > max)
				return -EFBIG;
			nb = realloc(*buf, nc);
			if (!nb)
				return -ENOMEM;
			*buf = nb;
			*cap = nc;
		}
		n = read(fd, *buf + len, *cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max)
		return -EFBIG;
	(*buf)[len] = 0;
	return (ssize_t)len;
}

ssize_t fileio__read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* The file systems whose regular files are not stored data: interfaces to the kernel. */
static const char *pseudo_fs(long type)
{
	switch ((unsigned long)type) {
	case PROC_SUPER_MAGIC: return "proc";
	case SYSFS_MAGIC: return "sysfs";
	case DEBUGFS_MAGIC: return "debugfs";
	case TRACEFS_MAGIC: return "tracefs";
	case CGROUP_SUPER_MAGIC: return "cgroup";
	case CGROUP2_SUPER_MAGIC: return "cgroup2";
	case SECURITYFS_MAGIC: return "securityfs";
	case BPF_FS_MAGIC: return "bpf";
	case PSTOREFS_MAGIC: return "pstore";
	case EFIVARFS_MAGIC: return "efivarfs";
	case SELINUX_MAGIC: return "selinuxfs";
	case DEVPTS_SUPER_MAGIC: return "devpts";
	case 0x62656570: return "configfs";  /* CONFIGFS_MAGIC, not in every linux/magic.h */
	case 0x65735543: return "fusectl";   /* FUSE_CTL_SUPER_MAGIC */
	default: return NULL;
	}
}

int fileio__check_seekable(const char *path, char *ret_what, size_t len)
{
	struct statfs fs;
	struct stat st;
	const char *what = NULL, *fsname;
	char *copy, *dir, target[PATH_MAX];
	ssize_t n;
	int r;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			what = "a directory";
		else if (S_ISFIFO(st.st_mode))
			what = "a named pipe (FIFO)";
		else if (S_ISCHR(st.st_mode))
			what = "a character device";
		else if (S_ISBLK(st.st_mode))
			what = "a block device";
		else if (S_ISSOCK(st.st_mode))
			what = "a socket";
		else if (!S_ISREG(st.st_mode))
			what = "not a regular file";
		if (what) {
			snprintf(ret_what, len, "%s", what);
			return -EINVAL;
		}
		if (statfs(path, &fs) == 0 && (fsname = pseudo_fs(fs.f_type))) {
			snprintf(ret_what, len, "a file of the %s file system, not one stored on a disk",
				 fsname);
			return -EINVAL;
		}
		return 0;
	}
	if (errno != ENOENT && errno != ENOTDIR)
		return -errno;
	/* none yet: its directory must exist, on a file system that stores files; for a symlink
	 * whose target is not there yet, the target's directory (open makes the target there) */
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0)
		target[n] = 0;
	if (n > 0 && target[0] != '/') { /* relative: to the link's directory */
		_cleanup_free_ char *link = strdup(path);

		if (!link || asprintf(&copy, "%s/%s", dirname(link), target) < 0)
			copy = NULL;
	} else {
		copy = strdup(n > 0 ? target : path);
	}
	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	r = 0;
	if (stat(dir, &st) < 0) {
		r = errno == ENOENT || errno == ENOTDIR ? -EINVAL : -errno;
		if (n > 0)
			snprintf(ret_what, len, "a symlink to %s, whose directory does not exist",
				 target);
		else
			snprintf(ret_what, len, "in %s, which does not exist", dir);
	} else if (!S_ISDIR(st.st_mode)) {
		snprintf(ret_what, len, "in %s, which is not a directory", dir);
		r = -EINVAL;
	} else if (statfs(dir, &fs) == 0 && (fsname = pseudo_fs(fs.f_type))) {
		snprintf(ret_what, len, "in %s, a directory of the %s file system, which stores no "
			 "files", dir, fsname);
		r = -EINVAL;
	}
	free(copy);
	return r;
}

int fileio__mkdirs(char *path, mode_t mode)
{
	for (char *p = path + 1; ; p++) {
		char c = *p;

		if (c != '/' && c)
			continue;
		*p = 0;
		if (mkdir(path, mode) < 0 && errno != EEXIST)
			return -errno; /* path names the directory */
		*p = c;
		if (!c)
			return 0;
	}
}
