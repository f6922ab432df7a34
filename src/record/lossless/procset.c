/* The signal pauser's processes (procset.h). */
#include "record/lossless/procset.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/lossless/guardian.h"
#include "record/lossless/sysfile.h"

void procset__init(struct procset *ps, struct guardian *g)
{
	*ps = (struct procset){ .g = g };
}

ssize_t procset__find(const struct procset *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->nr; i++)
		if (ps->procs[i].pid == pid)
			return i;
	return -1;
}

void procset__remove(struct procset *ps, size_t i)
{
	if (ps->g)
		guardian__del(ps->g, ps->procs[i].pid);
	close(ps->procs[i].pidfd);
	ps->procs[i] = ps->procs[--ps->nr];
}

int procset__add(struct procset *ps, pid_t pid, bool stop)
{
	int fd;

	if (procset__find(ps, pid) >= 0)
		return 0;
	if (ps->nr == ps->cap) {
		size_t nc = ps->cap ? 2 * ps->cap : 16;
		struct proc *np = realloc(ps->procs, nc * sizeof(*np));

		if (!np)
			return -ENOMEM;
		ps->procs = np;
		ps->cap = nc;
	}
	fd = sysfile__pidfd_open(pid);
	if (fd < 0)
		return errno == ESRCH ? 0 : -errno;
	/* pidfd_open sets O_CLOEXEC itself. */
	ps->procs[ps->nr++] = (struct proc){ .pid = pid, .pidfd = fd };
	if (ps->g)
		guardian__add(ps->g, pid, fd);
	if (stop)
		sysfile__pidfd_signal(fd, SIGSTOP);
	return 1;
}

/* The children of every thread of process pid are added (and stopped when stop). */
static void scan_children(struct procset *ps, pid_t pid, bool stop)
{
	char path[64];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char cpath[96 + sizeof(de->d_name)], buf[4096], *s, *e;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "%s/%s/children", path, de->d_name);
		n = sysfile__read(cpath, buf, sizeof(buf));
		if (n <= 0)
			continue;
		for (s = buf;; s = e) {
			long c = strtol(s, &e, 10);

			if (e == s)
				break;
			if (c > 0)
				procset__add(ps, (pid_t)c, stop);
		}
	}
	closedir(d);
}

/* SIGSTOP every thread of process pid, not only the process. A process-directed SIGSTOP is
 * handed to one thread, by preference the main thread, which starts the group stop only when
 * it next runs: a main thread asleep in pthread_join, woken on a CPU that a spinning thread of
 * its own keeps busy, waited for its turn for milliseconds while the spinners filled the rings.
 * Sent to each thread, the stop reaches the running ones at once (the kernel interrupts them);
 * threads that wait for a CPU produce no events meanwhile. The pid cannot have been reused
 * since the pidfd signal to it succeeded an instant ago. */
static void stop_threads(pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			syscall(SYS_tgkill, pid, atoi(de->d_name), SIGSTOP);
	closedir(d);
}

pid_t procset__tgid_of(pid_t tid)
{
	char path[64], buf[2048], *t;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (sysfile__read(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	t = strstr(buf, "\nTgid:");
	return t ? (pid_t)atoi(t + 6) : -ESRCH;
}

/* 1 when every thread of process pid is stopped or dead, 0 if not yet. */
static int proc_stopped(pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int all = 1;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 1; /* gone */
	while (all && (de = readdir(d))) {
		char spath[96 + sizeof(de->d_name)], buf[1024], *rp;

		if (de->d_name[0] == '.')
			continue;
		snprintf(spath, sizeof(spath), "%s/%s/stat", path, de->d_name);
		if (sysfile__read(spath, buf, sizeof(buf)) <= 0)
			continue;
		/* The state follows the last ')': comm may itself hold parentheses. */
		rp = strrchr(buf, ')');
		if (!rp || !rp[1] || !rp[2])
			continue;
		if (!strchr("TtZXx", rp[2]))
			all = 0;
	}
	closedir(d);
	return all;
}

void procset__signal(struct procset *ps, int sig)
{
	for (size_t i = 0; i < ps->nr;) {
		if (sysfile__pidfd_signal(ps->procs[i].pidfd, sig) < 0 && errno == ESRCH) {
			procset__remove(ps, i);
			continue;
		}
		i++;
	}
}

void procset__stop(struct procset *ps)
{
	procset__signal(ps, SIGSTOP);
	for (size_t i = 0; i < ps->nr; i++)
		stop_threads(ps->procs[i].pid);
	/* The children known now, grandchildren included (the loop reaches the processes it adds).
	 * Not all of them: since Linux 4.20 a fork that is past its first signal check when the
	 * SIGSTOP comes finishes (only a signal to a whole process group is passed on to the new
	 * child), and its child joins the parent's children list at the end. procset__stopped
	 * looks again once the parents are stopped. */
	for (size_t i = 0; i < ps->nr; i++)
		scan_children(ps, ps->procs[i].pid, true);
}

int procset__stopped(struct procset *ps)
{
	size_t known = ps->nr;

	for (size_t i = 0; i < ps->nr; i++)
		if (!proc_stopped(ps->procs[i].pid))
			return 0;
	/* Everything known is stopped, so no fork of theirs is in flight (a parent stops only
	 * once its fork has returned, its child on its children list): the children lists read
	 * now are complete. A child found now was forked past the stop; it is stopped and we
	 * wait for it too. */
	for (size_t i = 0; i < ps->nr; i++)
		scan_children(ps, ps->procs[i].pid, true);
	return ps->nr == known;
}

void procset__clear(struct procset *ps)
{
	for (size_t i = 0; i < ps->nr; i++)
		close(ps->procs[i].pidfd);
	free(ps->procs);
	ps->procs = NULL;
	ps->nr = ps->cap = 0;
}
