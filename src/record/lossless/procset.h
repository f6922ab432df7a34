/* The signal pauser's process set: every process of the target held through a pidfd (so a
 * recycled pid is never signalled), each one also told to the guardian; stopping sends SIGSTOP
 * to the process and to each of its threads; children not reported yet are found in
 * /proc/PID/task/TID/children. Not thread-safe: the pauser holds its lock around every call. */
#ifndef PRECORD_PROCSET_H
#define PRECORD_PROCSET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct guardian;

struct proc {
	pid_t pid;
	int pidfd;
};

struct procset {
	struct proc *procs;
	size_t nr, cap;
	struct guardian *g;   /* told of every add and removal; may be NULL */
};

/* An empty set reporting to g (may be NULL). */
void procset__init(struct procset *ps, struct guardian *g);

/* Index of process pid, or -1. */
ssize_t procset__find(const struct procset *ps, pid_t pid);

/* Track pid (a process id) and, when stop, stop it; the guardian hears of it before we ever
 * stop it. Returns 1 if added, 0 if known or already gone, -errno. */
int procset__add(struct procset *ps, pid_t pid, bool stop);

/* Forget entry i (closing its pidfd). */
void procset__remove(struct procset *ps, size_t i);

/* Send sig to every process through its pidfd; the ones gone are forgotten. */
void procset__signal(struct procset *ps, int sig);

/* Stop everything: SIGSTOP to every process and every thread, then add (and stop) the children
 * of every thread, grandchildren included. */
void procset__stop(struct procset *ps);

/* 1 when every thread of every process is stopped (or dead) and they have no child that is not
 * known, 0 if not yet (a child found then is added and stopped). */
int procset__stopped(struct procset *ps);

/* The process a thread id belongs to (pid itself for a process), or -ESRCH. */
pid_t procset__tgid_of(pid_t tid);

/* Close every pidfd and free the set. */
void procset__clear(struct procset *ps);

#endif
