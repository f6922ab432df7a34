/* Reading a whole file descriptor: /proc and sysfs files report size 0, so they are read to
 * their end, with EINTR retried. The check that a path can take a file written with seeks, and
 * mkdir -p. */
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

/* Whether path is, or can be created as, a regular file on a file system that stores it (one
 * written with pwrite and seeks, such as perf.data). Looks with stat and statfs only: never
 * opens path, so a FIFO cannot block it. Returns 0 (a regular file, or none yet in an existing
 * directory of such a file system), or -EINVAL with what path is written to ret_what ("a
 * directory", "a named pipe (FIFO)", "a character device", "a file of the proc file system",
 * "in a directory that does not exist", "a symlink to T, whose directory does not exist"...),
 * or -errno of stat. A symlink to a file not there yet is looked at as its target. */
int fileio__check_seekable(const char *path, char *ret_what, size_t len);

/* mkdir -p path with mode for every directory it makes (an existing one is fine). Returns 0,
 * or -errno with path cut at the directory that could not be made, so that the caller can name
 * it. */
int fileio__mkdirs(char *path, mode_t mode);

#endif
