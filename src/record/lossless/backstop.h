/* The --lossless backstop: the kernel itself stops the target, with no user-space step between a
 * sample and the stop. Each sampling event's fd gets F_SETSIG = SIGSTOP and an owner (the
 * process it samples: F_SETOWN_EX, F_OWNER_PID); while armed (O_ASYNC set), every sample the
 * event, or any event it passed on to a thread or child (they share its fasync), writes makes the
 * kernel send SIGSTOP to the owner's whole thread group from the sample's own irq_work. With a
 * process group as the owner (a command precord started in a group of its own) the kernel
 * signals every process of the group. Disarming clears O_ASYNC first (no signal can follow once
 * fcntl has returned: fasync entries are removed under their lock) and then sends SIGCONT to
 * every owner.
 *
 * Off in precord unless PRECORD_BACKSTOP=1 (lossless.h). The signal is process-directed: the
 * kernel queues it once for the group and wakes one thread of its choosing, often one that waits
 * for a CPU rather than the one running, and the stop begins only once that thread is scheduled;
 * the running threads go on writing meanwhile. build/tools/backstop_reaction (make bench), 300
 * pauses of 2 and of 4 spinning threads at 20000 samples a second with 8 KiB stacks, 6.18
 * kernel, 2026-12-02: the bytes reaching the rings after the request were at the 99th
 * percentile 25-42 KB with the cgroup2 freezer alone, 1.2-2.4 MB with the backstop alone and
 * 160-235 KB with both (why both are slower than the freezer alone is not found); precord with
 * both lost samples in 6 of 40 runs of a yield storm at -m 256 --high-watermark 2 where the
 * freezer alone lost none (and in 2 of 30 against none with -p, paused by signals). */
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
