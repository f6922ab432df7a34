/* The cgroup v2 and v1 freezers (freezer.h). */
#include "record/lossless/freezer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/clock.h"
#include "record/lossless/cgroup.h"
#include "record/lossless/sysfile.h"

static const char *ctl_file(bool v2)
{
	return v2 ? "cgroup.freeze" : "freezer.state";
}

static const char *ctl_value(bool v2, bool freeze)
{
	if (v2)
		return freeze ? "1" : "0";
	return freeze ? "FROZEN" : "THAWED";
}

static int ctl_write(bool v2, int fd, bool freeze)
{
	const char *v = ctl_value(v2, freeze);
	ssize_t len = strlen(v);

	if (pwrite(fd, v, len, 0) != len)
		return errno ? -errno : -EIO;
	return 0;
}

/* 1 when the kernel reports the cgroup frozen, 0 when not yet, -errno. */
static int state_frozen(bool v2, int fd)
{
	char buf[256];
	ssize_t n = sysfile__pread(fd, buf, sizeof(buf));

	if (n < 0)
		return n;
	if (v2) {
		const char *f = strstr(buf, "frozen ");

		return f && f[7] == '1';
	}
	return !strncmp(buf, "FROZEN", 6);
}

/* v1 only: an empty child of our cgroup kept frozen for as long as we exist. The v1 freezer
 * flips a kernel static key (code patching, milliseconds) whenever the number of freezing
 * cgroups goes between 0 and 1; with this one always frozen, a pause costs ~0.2 ms, not ~4. */
#define V1_ANCHOR "precord-keep-freezer-active"

static void anchor_remove(const char *dir)
{
	_cleanup_free_ char *a = sysfile__join(dir, V1_ANCHOR);

	if (a)
		rmdir(a); /* fine while frozen: the kernel drops its count when it goes */
}

/* Move every process of dir back to home, then remove dir; retried while new ones appear (a
 * process may fork between our reading cgroup.procs and our moving it). With cont, each is sent
 * SIGCONT first: the guardian's rescue, for a process the --lossless backstop (backstop.h) had
 * the kernel stop when the recorder died. */
int freezer__evacuate(const char *dir, const char *home, int try_ms, bool cont)
{
	_cleanup_free_ char *procs = sysfile__join(dir, "cgroup.procs");
	_cleanup_free_ char *dest = sysfile__join(home, "cgroup.procs");
	uint64_t deadline = clock__ns() + (uint64_t)try_ms * 1000000;

	if (!procs || !dest)
		return -ENOMEM;
	anchor_remove(dir);
	for (;;) {
		_cleanup_fclose_ FILE *f = fopen(procs, "re");
		int pid;

		if (!f)
			return errno == ENOENT ? 0 : -errno;
		while (fscanf(f, "%d", &pid) == 1) {
			char s[16];

			if (cont)
				kill(pid, SIGCONT);
			snprintf(s, sizeof(s), "%d", pid);
			sysfile__write(dest, s); /* ESRCH when it just exited: fine */
		}
		if (!rmdir(dir) || errno == ENOENT)
			return 0;
		if (errno != EBUSY || clock__ns() > deadline)
			return -errno;
		usleep(1000);
	}
}

int freezer__thaw_path(bool v2, const char *dir)
{
	_cleanup_free_ char *ctl = sysfile__join(dir, ctl_file(v2));

	return ctl ? sysfile__write(ctl, ctl_value(v2, false)) : -ENOMEM;
}

void freezer__init(struct freezer *f)
{
	*f = (struct freezer){ .ctl_fd = -1, .state_fd = -1 };
}

int freezer__setup(struct freezer *p, bool v2, const char *parent)
{
	static atomic_uint seq;
	_cleanup_free_ char *home = NULL;
	struct statfs sf;
	int r;

	if (parent) {
		home = strdup(parent);
		if (!home)
			return -ENOMEM;
	} else {
		r = cgroup__find_own(v2, &home);
		if (r < 0)
			return r == -ENOENT ? -ENOTSUP : r;
	}
	if (statfs(home, &sf) < 0)
		return -errno;
	if ((unsigned long)sf.f_type != (v2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC))
		return -ENOTSUP;

	for (int tries = 0;; tries++) {
		free(p->dir);
		if (asprintf(&p->dir, "%s/precord-%d-%u", home, getpid(),
			     atomic_fetch_add(&seq, 1)) < 0) {
			p->dir = NULL;
			return -ENOMEM;
		}
		if (!mkdir(p->dir, 0755))
			break;
		r = -errno;
		free(p->dir);
		p->dir = NULL;
		if (r != -EEXIST || tries > 100)
			return r;
	}
	p->v2 = v2;
	p->home = TAKE_PTR(home);

	{
		_cleanup_free_ char *ctl = sysfile__join(p->dir, ctl_file(v2));
		_cleanup_free_ char *st = sysfile__join(p->dir, v2 ? "cgroup.events" : "freezer.state");

		if (!ctl || !st)
			return -ENOMEM;
		p->ctl_fd = open(ctl, O_WRONLY | O_CLOEXEC);
		if (p->ctl_fd < 0)
			return errno == ENOENT ? -ENOTSUP : -errno;
		p->state_fd = open(st, O_RDONLY | O_CLOEXEC);
		if (p->state_fd < 0)
			return errno == ENOENT ? -ENOTSUP : -errno;
	}
	r = ctl_write(v2, p->ctl_fd, true);
	if (r < 0)
		return r;
	r = state_frozen(v2, p->state_fd);
	ctl_write(v2, p->ctl_fd, false);
	if (r < 0)
		return r;
	if (r != 1)
		return -ENOTSUP;
	if (!v2) {
		_cleanup_free_ char *a = sysfile__join(p->dir, V1_ANCHOR);
		_cleanup_free_ char *st = a ? sysfile__join(a, "freezer.state") : NULL;

		/* Only an optimisation: without it pauses are slower, not wrong. */
		if (st && !mkdir(a, 0755) && sysfile__write(st, "FROZEN") < 0)
			rmdir(a);
	}
	return 0;
}

void freezer__teardown(struct freezer *p)
{
	if (p->ctl_fd >= 0)
		close(p->ctl_fd);
	if (p->state_fd >= 0)
		close(p->state_fd);
	p->ctl_fd = p->state_fd = -1;
	if (p->dir) {
		anchor_remove(p->dir);
		rmdir(p->dir);
	}
	free(p->dir);
	free(p->home);
	p->dir = p->home = NULL;
}

int freezer__adopt(const struct freezer *f, pid_t pid)
{
	_cleanup_free_ char *procs = sysfile__join(f->dir, "cgroup.procs");
	char s[16];

	if (!procs)
		return -ENOMEM;
	snprintf(s, sizeof(s), "%d", pid);
	return sysfile__write(procs, s);
}

int freezer__set(const struct freezer *f, bool freeze)
{
	return ctl_write(f->v2, f->ctl_fd, freeze);
}

int freezer__frozen(const struct freezer *f)
{
	return state_frozen(f->v2, f->state_fd);
}

int freezer__release(struct freezer *f, int try_ms)
{
	int r = 0;

	if (f->ctl_fd >= 0)
		ctl_write(f->v2, f->ctl_fd, false);
	/* Survivors go back where the recorder is, which is where they would have been without
	 * us; if they cannot all be moved, the guardian tries again. */
	if (f->dir)
		r = freezer__evacuate(f->dir, f->home, try_ms, false);
	if (f->ctl_fd >= 0)
		close(f->ctl_fd);
	if (f->state_fd >= 0)
		close(f->state_fd);
	f->ctl_fd = f->state_fd = -1;
	free(f->dir);
	free(f->home);
	f->dir = f->home = NULL;
	return r;
}
