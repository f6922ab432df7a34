/* Reading a whole file descriptor: /proc and sysfs files report size 0, so they are read to
 * their end, with EINTR retried. */
#ifndef PRECORD_LIB_FILEIO_H
#define PRECORD_LIB_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* Read fd to its end into *buf, grown with realloc as needed (*cap is its size; both may start
 * at NULL and 0, and the buffer may be reused across calls), NUL-terminated. Returns the length,
 * -EFBIG when the contents pass max bytes, -ENOMEM, or -errno of read. */
ssize_t fileio__read_all(int fd, char **buf, size_t *cap, size_t max);

/* Read up to len bytes of fd into buf, stopping early only at its end. Returns the bytes read
 * or -errno of read. */
ssize_t fileio__read_full(int fd, void *buf, size_t len);

#endif
