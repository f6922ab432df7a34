/* The guardian: a small process forked from the recorder, outside the target (a session of its
 * own, every signal of a terminal ignored, none of the recorder's fds), that makes sure the
 * target is never left paused. It learns every process the signal pauser tracks over a
 * SOCK_SEQPACKET socket (a pidfd with each), and when the socket reaches EOF without a
 * goodbye (the recorder died, even by SIGKILL) it thaws the cgroup (SIGCONT to each of its
 * processes, for the --lossless backstop's stops) or SIGCONTs every tracked process, then
 * removes the cgroup; a process group it was told of gets SIGCONT too. Protocol: G_ADD pid +
 * pidfd, G_DEL pid, G_GROUP pgid, G_QUIT (normal end). */
#ifndef PRECORD_GUARDIAN_H
#define PRECORD_GUARDIAN_H

#include <stdbool.h>
#include <sys/types.h>

struct guardian {
	pid_t pid;      /* 0: none */
	int fd;         /* our end of the socket; -1: none */
};

/* What the guardian must know, fixed at fork time: with a freezer, the cgroup (dir) and where
 * its processes go back (home); without one (NULL dir), the processes it is told of. */
struct guardian_spec {
	bool v2;
	const char *cg_dir, *cg_home;
};

/* An empty guardian (no process). */
void guardian__init(struct guardian *g);

/* Fork the guardian. Returns 0 or -errno of socketpair/fork. The caller must not reap unknown
 * children with waitpid(-1): the guardian is one, and guardian__stop reaps it. */
int guardian__start(struct guardian *g, const struct guardian_spec *spec);

/* Tell it of a process to SIGCONT if we die (it keeps its own dup of pidfd), or that one is
 * gone. Best effort: a guardian that died cannot be replaced, and pausing works without it. */
void guardian__add(struct guardian *g, pid_t pid, int pidfd);
void guardian__del(struct guardian *g, pid_t pid);

/* Tell it of a process group to SIGCONT as well if we die (the backstop's stops). */
void guardian__group(struct guardian *g, pid_t pgid);

/* Dismiss it (clean: say goodbye; else let it rescue the target, e.g. a cgroup that could not
 * be removed), close the socket and reap it. Harmless on an empty guardian. */
void guardian__stop(struct guardian *g, bool clean);

#endif
