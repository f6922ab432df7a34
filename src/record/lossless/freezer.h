/* The cgroup freezers as the pauser uses them: a cgroup of our own, created beside the recorder,
 * probed by freezing and thawing it while empty, frozen and thawed with one write to
 * cgroup.freeze (v2) or freezer.state (v1), its state read back from cgroup.events or
 * freezer.state; at the end its processes are moved back where the recorder is and it is
 * removed. The path-only functions serve the guardian, which holds no fd of ours. */
#ifndef PRECORD_FREEZER_H
#define PRECORD_FREEZER_H

#include <stdbool.h>
#include <sys/types.h>

struct freezer {
	bool v2;
	char *dir;     /* ours */
	char *home;    /* where survivors go back: the directory ours was created in */
	int ctl_fd;    /* cgroup.freeze (v2) or freezer.state (v1), written to freeze/thaw */
	int state_fd;  /* cgroup.events (v2) or freezer.state (v1), read to see it done */
};

/* An empty freezer (no cgroup, fds -1), ready for freezer__setup. */
void freezer__init(struct freezer *f);

/* Create our cgroup under parent (NULL: the recorder's own cgroup, cgroup.h) and check that
 * freezing works there. Returns 0; -ENOTSUP when there is no such hierarchy, parent is not a
 * cgroup of that version or the freezer does not work; -ENOENT/-EACCES/... from mkdir or open;
 * -ENOMEM. On failure call freezer__teardown. */
int freezer__setup(struct freezer *f, bool v2, const char *parent);

/* Undo freezer__setup on a cgroup that never held a process. */
void freezer__teardown(struct freezer *f);

/* Move pid into our cgroup (frozen at once if it is frozen). 0 or -errno (-ESRCH: gone). */
int freezer__adopt(const struct freezer *f, pid_t pid);

/* Freeze or thaw. 0 or -errno. */
int freezer__set(const struct freezer *f, bool freeze);

/* 1 when the kernel reports the cgroup frozen, 0 when not yet, -errno. */
int freezer__frozen(const struct freezer *f);

/* Thaw, move every process back to home and remove our cgroup, retried for try_ms while new
 * processes appear; close the fds and forget the cgroup. Returns 0 when the cgroup is gone,
 * else -errno (the guardian, told so, tries again). */
int freezer__release(struct freezer *f, int try_ms);

/* For the guardian: thaw the cgroup at dir by its path. 0 or -errno. */
int freezer__thaw_path(bool v2, const char *dir);

/* Move every process of dir back to home (each sent SIGCONT first when cont: what the
 * --lossless backstop stopped), then remove dir; retried for try_ms while new ones appear.
 * 0 or -errno. */
int freezer__evacuate(const char *dir, const char *home, int try_ms, bool cont);

#endif
