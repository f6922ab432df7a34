/* The --lossless backstop: the kernel itself stops the target, with no user-space step between a
 * sample and the stop. Each sampling event's fd gets F_SETSIG = SIGSTOP and an owner (the
 * process it samples: F_SETOWN_EX, F_OWNER_PID); while armed (O_ASYNC set), every sample the
 * event, or any event it passed on to a thread or child (they share its fasync), writes makes the
 * kernel send SIGSTOP to the owner's whole thread group from the sample's own irq_work. So once
 * the pause is decided, a ring receives at most about one more sample per running thread,
 * however late the freezer's write or the watcher's next look comes. With a process group as
 * the owner (a command precord started in a group of its own) the kernel stops every process
 * of the group at once, children included; children that left the group, and other thread
 * groups with a process as the owner, are stopped by the pauser (cgroup freezer or signals). Disarming
 * clears O_ASYNC first (no signal can follow once fcntl has returned: fasync entries are
 * removed under their lock) and then sends SIGCONT to every owner. */
#ifndef PRECORD_BACKSTOP_H
#define PRECORD_BACKSTOP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct backstop;

/* Set up n fds: fds[i] stops owners[i] (a process or thread id: its thread group is stopped;
 * or minus a process group id: every process in that group is stopped, F_OWNER_PGRP). SIGCONT
 * goes to the same owners (kill(2) with the negative id reaches the group). Disarmed. Returns NULL with errno: EINVAL (n == 0, bad owner), ENOMEM, or what fcntl failed
 * with (a kernel whose perf fds have no fasync: EINVAL/ENOTTY). */
struct backstop *backstop__new(const int *fds, const pid_t *owners, size_t n);

/* Set O_ASYNC on every fd: from now on each sample stops its owner. Returns 0 or the first
 * -errno (the other fds are still armed). Arming while armed is harmless. */
int backstop__arm(struct backstop *b);

/* Clear O_ASYNC on every fd, then SIGCONT every distinct owner (when cont). Returns 0 or the
 * first -errno. */
int backstop__disarm(struct backstop *b, bool cont);

/* SIGCONT every distinct owner (after a disarm without cont, once the pauser has resumed). */
void backstop__cont(const struct backstop *b);

bool backstop__armed(const struct backstop *b);

/* How many times it was armed. */
unsigned long backstop__arms(const struct backstop *b);

/* Disarm (with SIGCONT) and forget the fds (they stay open: the caller owns them). NULL is a
 * no-op. */
void backstop__free(struct backstop *b);

#endif
