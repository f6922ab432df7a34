/* The guardian process and its protocol (guardian.h). */
#include "record/lossless/guardian.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fdpass.h"
#include "record/lossless/freezer.h"
#include "record/lossless/sysfile.h"

#define GUARDIAN_RMDIR_TRY_MS 1000

enum gop {
	G_ADD = 1, /* carries the process's pidfd */
	G_DEL,
	G_QUIT, /* normal end: the recorder has cleaned up */
	G_GROUP, /* a process group to SIGCONT */
};

struct gmsg {
	int32_t op;
	int32_t pid;
};

struct gproc {
	pid_t pid;
	int pidfd;
};

static int recv_msg(int sock, struct gmsg *m, int *ret_fd)
{
	ssize_t n;

	do
		n = fdpass__recv(sock, m, sizeof(*m), ret_fd, 0);
	while (n == -EINTR);
	if (n <= 0)
		return (int)n;
	return n == sizeof(*m) ? 1 : -EBADMSG;
}

/* The recorder is gone: let the target run, then leave no cgroup behind. */
static void guardian_rescue(const struct guardian_spec *g, struct gproc *procs, size_t n,
			    pid_t pgid)
{
	if (pgid > 0)
		kill(-pgid, SIGCONT);
	for (size_t i = 0; i < n; i++)
		sysfile__pidfd_signal(procs[i].pidfd, SIGCONT);
	if (!g->cg_dir)
		return;
	freezer__thaw_path(g->v2, g->cg_dir);
	if (pgid > 0) /* and again once thawed, to be sure */
		kill(-pgid, SIGCONT);
	freezer__evacuate(g->cg_dir, g->cg_home, GUARDIAN_RMDIR_TRY_MS, true);
}

static __attribute__((noreturn)) void guardian_main(const struct guardian_spec *g, int sock)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP,
				       SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM };
	struct gproc *procs = NULL;
	size_t n = 0, cap = 0;
	pid_t pgid = 0;
	sigset_t none;
	int null;

	/* Survive what hits the recorder's process group or terminal: only EOF matters. */
	setsid();
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL); /* the recorder's handlers are not ours */
	for (size_t i = 0; i < ARRAY_SIZE(ignored); i++)
		signal(ignored[i], SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "precord-guard");

	/* Hold nothing of the recorder's: not its files, and above all not the recorder end of
	 * another pauser's guardian socket, which would hide that recorder's death. */
	if (sock != 3) {
		if (dup2(sock, 3) < 0)
			_exit(1);
		sock = 3;
	}
	close_range(4, ~0U, 0);
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 3)
			close(null);
	}

	for (;;) {
		struct gmsg m;
		int fd, r = recv_msg(sock, &m, &fd);

		if (r == 0 || (r < 0 && r != -EBADMSG))
			break; /* EOF: the recorder died or exited without pauser__free */
		if (r < 0)
			continue;
		if (m.op == G_QUIT)
			_exit(0);
		if (m.op == G_GROUP && m.pid > 0)
			pgid = m.pid;
		if (m.op == G_ADD && fd >= 0) {
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 64;
				struct gproc *np = realloc(procs, nc * sizeof(*np));

				if (!np) {
					/* Cannot track it: better to let everything run now. */
					close(fd);
					break;
				}
				procs = np;
				cap = nc;
			}
			procs[n++] = (struct gproc){ .pid = m.pid, .pidfd = fd };
		} else if (m.op == G_DEL) {
			if (fd >= 0)
				close(fd);
			for (size_t i = 0; i < n; i++) {
				if (procs[i].pid == m.pid) {
					close(procs[i].pidfd);
					procs[i] = procs[--n];
					break;
				}
			}
		} else if (fd >= 0) {
			close(fd);
		}
	}
	guardian_rescue(g, procs, n, pgid);
	_exit(0);
}

void guardian__init(struct guardian *g)
{
	*g = (struct guardian){ .fd = -1 };
}

int guardian__start(struct guardian *g, const struct guardian_spec *spec)
{
	int sv[2];
	pid_t pid;
	sigset_t all, old;
	int r = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* Until the child has ignored them, a signal would run the recorder's handler in it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		guardian_main(spec, sv[1]);
	}
	if (pid < 0)
		r = -errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	close(sv[1]);
	g->pid = pid;
	g->fd = sv[0];
	return 0;
}

/* Best effort: a guardian that died cannot be replaced, and pausing still works without it. */
static void guardian_send(struct guardian *g, enum gop op, pid_t pid, int fd)
{
	struct gmsg m = { .op = op, .pid = pid };

	if (g->fd < 0)
		return;
	while (fdpass__send(g->fd, &m, sizeof(m), fd, 0) == -EINTR)
		;
}

void guardian__add(struct guardian *g, pid_t pid, int pidfd)
{
	guardian_send(g, G_ADD, pid, pidfd);
}

void guardian__del(struct guardian *g, pid_t pid)
{
	guardian_send(g, G_DEL, pid, -1);
}

void guardian__group(struct guardian *g, pid_t pgid)
{
	guardian_send(g, G_GROUP, pgid, -1);
}

void guardian__stop(struct guardian *g, bool clean)
{
	if (g->fd >= 0) {
		if (clean)
			guardian_send(g, G_QUIT, 0, -1);
		close(g->fd);
		g->fd = -1;
	}
	if (g->pid > 0) {
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
		g->pid = 0;
	}
}
