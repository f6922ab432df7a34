/* The kernel-side stop of --lossless (backstop.h): perf's fasync path, aimed at the target with
 * SIGSTOP. Measured with build/tools/backstop_reaction (make bench). */
#include "record/lossless/backstop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>

struct backstop {
	size_t n;
	int *fds;
	pid_t *owners;       /* per fd */
	pid_t *distinct;     /* owners without repeats, for SIGCONT */
	size_t nr_distinct;
	bool armed;
	unsigned long arms;
};

void backstop__free(struct backstop *b)
{
	if (!b)
		return;
	if (b->armed)
		backstop__disarm(b, true);
	free(b->fds);
	free(b->owners);
	free(b->distinct);
	free(b);
}

static int set_async(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	if (!!(fl & O_ASYNC) == on)
		return 0;
	return fcntl(fd, F_SETFL, on ? fl | O_ASYNC : fl & ~O_ASYNC) < 0 ? -errno : 0;
}

static int setup_fd(int fd, pid_t owner)
{
	/* a negative owner is a process group: the kernel signals every process in it */
	struct f_owner_ex o = { .type = owner < 0 ? F_OWNER_PGRP : F_OWNER_PID,
				.pid = owner < 0 ? -owner : owner };

	if (fcntl(fd, F_SETOWN_EX, &o) < 0 || fcntl(fd, F_SETSIG, SIGSTOP) < 0)
		return -errno;
	return set_async(fd, false);
}

struct backstop *backstop__new(const int *fds, const pid_t *owners, size_t n)
{
	struct backstop *b;
	int r;

	if (!n) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->fds = malloc(n * sizeof(int));
	b->owners = malloc(n * sizeof(pid_t));
	b->distinct = malloc(n * sizeof(pid_t));
	if (!b->fds || !b->owners || !b->distinct)
		goto fail;
	b->n = n;
	for (size_t i = 0; i < n; i++) {
		size_t j;

		if (owners[i] == 0 || owners[i] == -1) {
			errno = EINVAL;
			goto fail;
		}
		b->fds[i] = fds[i];
		b->owners[i] = owners[i];
		r = setup_fd(fds[i], owners[i]);
		if (r < 0) {
			errno = -r;
			goto fail;
		}
		for (j = 0; j < b->nr_distinct && b->distinct[j] != owners[i]; j++)
			;
		if (j == b->nr_distinct)
			b->distinct[b->nr_distinct++] = owners[i];
	}
	return b;
fail:
	r = errno;
	b->n = 0;
	backstop__free(b);
	errno = r;
	return NULL;
}

int backstop__arm(struct backstop *b)
{
	int err = 0;

	b->armed = true;
	b->arms++;
	for (size_t i = 0; i < b->n; i++) {
		int r = set_async(b->fds[i], true);

		if (r < 0 && !err)
			err = r;
	}
	return err;
}

void backstop__cont(const struct backstop *b)
{
	for (size_t i = 0; i < b->nr_distinct; i++)
		kill(b->distinct[i], SIGCONT);
}

int backstop__disarm(struct backstop *b, bool cont)
{
	int err = 0;

	for (size_t i = 0; i < b->n; i++) {
		int r = set_async(b->fds[i], false);

		if (r < 0 && r != -EBADF && !err)
			err = r;
	}
	b->armed = false;
	if (cont)
		backstop__cont(b);
	return err;
}

bool backstop__armed(const struct backstop *b)
{
	return b->armed;
}

unsigned long backstop__arms(const struct backstop *b)
{
	return b->arms;
}
