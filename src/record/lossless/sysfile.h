/* Small file and pidfd helpers for the pausers: whole-file reads and writes of cgroup and /proc
 * files, path joining, and the pidfd system calls glibc does not wrap. Each returns -errno (or
 * NULL with errno) and never prints. */
#ifndef PRECORD_SYSFILE_H
#define PRECORD_SYSFILE_H

#include <sys/types.h>

/* Write s to path (opened for writing, not truncated: cgroup and /proc files). 0 or -errno. */
int sysfile__write(const char *path, const char *s);

/* A whole small file into buf (NUL-terminated). Returns its length or -errno. */
ssize_t sysfile__read(const char *path, char *buf, size_t size);

/* fd's contents from offset 0 into buf (NUL-terminated). Returns the length or -errno. */
ssize_t sysfile__pread(int fd, char *buf, size_t size);

/* "a/b", malloc'd; NULL with errno ENOMEM. */
char *sysfile__join(const char *a, const char *b);

/* pidfd_open(2) and pidfd_send_signal(2): the fd, or 0; -1 with errno. */
int sysfile__pidfd_open(pid_t pid);
int sysfile__pidfd_signal(int pidfd, int sig);

#endif
