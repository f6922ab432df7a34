/* File and pidfd helpers of the pausers (sysfile.h). */
#include "record/lossless/sysfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/cleanup.h"

int sysfile__pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

int sysfile__pidfd_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static int write_at(int dirfd, const char *path, const char *s)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(s);

	if (fd < 0)
		return -errno;
	if (write(fd, s, len) != (ssize_t)len)
		return errno ? -errno : -EIO;
	return 0;
}

int sysfile__write(const char *path, const char *s)
{
	return write_at(AT_FDCWD, path, s);
}

ssize_t sysfile__read(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, len = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	if (n < 0)
		return -errno;
	buf[len] = '\0';
	return len;
}

ssize_t sysfile__pread(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

char *sysfile__join(const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, "%s/%s", a, b) < 0)
		return NULL;
	return s;
}
