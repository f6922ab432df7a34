/* Read loops shared by the recorder (/proc, tracefs) and the writer (sysfs notes). */
#include "lib/fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

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
