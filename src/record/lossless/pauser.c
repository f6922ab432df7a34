/* Pausing the whole target for --lossless. With a freezer the target lives in a cgroup of our
 * own, created before the command is forked, and a pause is one write to cgroup.freeze or
 * freezer.state. With signals every process is held through a pidfd (so a recycled pid is never
 * signalled) and is stopped with SIGSTOP, which stops all of its threads; forks the recorder has
 * not reported yet are found by rescanning /proc/PID/task/TID/children at each pause. The
 * guardian, a forked process outside the target, learns every tracked process over a socket and
 * thaws everything when that socket reaches EOF without a goodbye: the recorder has died. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/cleanup.h"
#include "record/lossless/pauser.h"

/* How long cleanup keeps moving survivors out before giving up on removing our cgroup. */
#define RMDIR_TRY_MS 200
#define GUARDIAN_RMDIR_TRY_MS 1000

struct proc {
	pid_t pid;
	int pidfd;
};

struct pauser {
	enum pause_mech mech;
	pthread_mutex_t lock; /* everything below; held while signalling */
	bool paused;

	/* freezers */
	char *cg_dir;  /* ours */
	char *cg_home; /* where survivors go back: the directory ours was created in */
	int ctl_fd;    /* cgroup.freeze (v2) or freezer.state (v1), written to pause/resume */
	int state_fd;  /* cgroup.events (v2) or freezer.state (v1), read to see it done */

	/* signals */
	struct proc *procs;
	size_t nr_procs, cap_procs;

	/* guardian */
	pid_t guardian;
	int guardian_fd;
};

enum gop {
	G_ADD = 1, /* carries the process's pidfd */
	G_DEL,
	G_QUIT, /* normal end: the recorder has cleaned up */
};

struct gmsg {
	int32_t op;
	int32_t pid;
};

static int sys_pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static int write_at(int dirfd, const char *path, const char *s)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(s);

	if (fd < 0)
		return -errno;
	if (write(fd, s, len) != (ssize_t)len)
		return errno ? -errno : -EIO;
	return 0;
}

static int write_path(const char *path, const char *s)
{
	return write_at(AT_FDCWD, path, s);
}

/* Whole small file into buf (NUL-terminated). Returns length or -errno. */
static ssize_t read_path(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, len = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	if (n < 0)
		return -errno;
	buf[len] = '\0';
	return len;
}

static ssize_t pread_str(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

static char *path_join(const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, "%s/%s", a, b) < 0)
		return NULL;
	return s;
}

/* ---- finding our cgroup ---------------------------------------------------------------- */

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

static bool has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !memcmp(p, tok, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* The mount point and mount root of the first cgroup2 mount (v1: the first cgroup mount with
 * the freezer controller). */
static int find_mount(bool v2, char **ret_point, char **ret_root)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *fields[8] = { 0 }, *save = NULL, *tok, *fstype = NULL, *opts = NULL;
		int i = 0;
		bool after_dash = false;
		int k = 0;

		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			if (!after_dash) {
				if (!strcmp(tok, "-"))
					after_dash = true;
				else if (i < 8)
					fields[i++] = tok;
			} else {
				if (k == 0)
					fstype = tok;
				else if (k == 2)
					opts = tok;
				k++;
			}
		}
		if (i < 5 || !fstype)
			continue;
		if (v2 ? strcmp(fstype, "cgroup2")
		       : (strcmp(fstype, "cgroup") || !has_token(opts, "freezer")))
			continue;
		unescape(fields[3]);
		unescape(fields[4]);
		*ret_root = strdup(fields[3]);
		*ret_point = strdup(fields[4]);
		if (!*ret_root || !*ret_point) {
			free(*ret_root);
			free(*ret_point);
			*ret_root = *ret_point = NULL;
			return -ENOMEM;
		}
		return 0;
	}
	return -ENOENT;
}

/* Our own cgroup directory in that hierarchy. */
static int find_own_cgroup(bool v2, char **ret_dir)
{
	_cleanup_free_ char *point = NULL, *root = NULL, *line = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	size_t cap = 0;
	int r;

	r = find_mount(v2, &point, &root);
	if (r < 0)
		return r;
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *path;
		size_t rl = strlen(root);

		if (!c2)
			continue;
		*c2 = '\0';
		path = c2 + 1;
		path[strcspn(path, "\n")] = '\0';
		if (v2 ? strcmp(c1 + 1, "") || strncmp(line, "0:", 2)
		       : !has_token(c1 + 1, "freezer"))
			continue;
		/* The path is relative to the hierarchy's root; the mount may show a subtree. */
		if (strcmp(root, "/")) {
			if (strncmp(path, root, rl) || (path[rl] && path[rl] != '/'))
				return -ENOENT;
			path += rl;
		}
		if (asprintf(ret_dir, "%s%s", point, path) < 0)
			return -ENOMEM;
		return 0;
	}
	return -ENOENT;
}

/* ---- freezer primitives (shared by the recorder and the guardian) ---------------------- */

static const char *ctl_file(enum pause_mech m)
{
	return m == PAUSE_MECH_CGROUP2 ? "cgroup.freeze" : "freezer.state";
}

static const char *ctl_value(enum pause_mech m, bool freeze)
{
	if (m == PAUSE_MECH_CGROUP2)
		return freeze ? "1" : "0";
	return freeze ? "FROZEN" : "THAWED";
}

static int ctl_write(enum pause_mech m, int fd, bool freeze)
{
	const char *v = ctl_value(m, freeze);
	ssize_t len = strlen(v);

	if (pwrite(fd, v, len, 0) != len)
		return errno ? -errno : -EIO;
	return 0;
}

/* 1 when the kernel reports the cgroup frozen, 0 when not yet, -errno. */
static int state_frozen(enum pause_mech m, int fd)
{
	char buf[256];
	ssize_t n = pread_str(fd, buf, sizeof(buf));

	if (n < 0)
		return n;
	if (m == PAUSE_MECH_CGROUP2) {
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
	_cleanup_free_ char *a = path_join(dir, V1_ANCHOR);

	if (a)
		rmdir(a); /* fine while frozen: the kernel drops its count when it goes */
}

/* Move every process of dir back to home, then remove dir; retried while new ones appear (a
 * process may fork between our reading cgroup.procs and our moving it). With cont, each is sent
 * SIGCONT first: the guardian's rescue, for a process the --lossless backstop (backstop.h) had
 * the kernel stop when the recorder died. */
static int cgroup_evacuate(const char *dir, const char *home, int try_ms, bool cont)
{
	_cleanup_free_ char *procs = path_join(dir, "cgroup.procs");
	_cleanup_free_ char *dest = path_join(home, "cgroup.procs");
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
			write_path(dest, s); /* ESRCH when it just exited: fine */
		}
		if (!rmdir(dir) || errno == ENOENT)
			return 0;
		if (errno != EBUSY || clock__ns() > deadline)
			return -errno;
		usleep(1000);
	}
}

/* ---- the guardian ---------------------------------------------------------------------- */

/* What the guardian must know, fixed at fork time. */
struct gspec {
	enum pause_mech mech;
	const char *cg_dir, *cg_home;
};

static int recv_msg(int sock, struct gmsg *m, int *ret_fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	ssize_t n;

	*ret_fd = -1;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n < 0 ? -errno : 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
	return n == sizeof(*m) ? 1 : -EBADMSG;
}

/* The recorder is gone: let the target run, then leave no cgroup behind. */
static void guardian_rescue(const struct gspec *g, struct proc *procs, size_t n)
{
	if (g->mech == PAUSE_MECH_SIGNALS) {
		for (size_t i = 0; i < n; i++)
			sys_pidfd_signal(procs[i].pidfd, SIGCONT);
		return;
	}
	_cleanup_free_ char *ctl = path_join(g->cg_dir, ctl_file(g->mech));

	if (ctl)
		write_path(ctl, ctl_value(g->mech, false));
	cgroup_evacuate(g->cg_dir, g->cg_home, GUARDIAN_RMDIR_TRY_MS, true);
}

static __attribute__((noreturn)) void guardian_main(const struct gspec *g, int sock)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP,
				       SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM };
	struct proc *procs = NULL;
	size_t n = 0, cap = 0;
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
		if (m.op == G_ADD && fd >= 0) {
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 64;
				struct proc *np = realloc(procs, nc * sizeof(*np));

				if (!np) {
					/* Cannot track it: better to let everything run now. */
					close(fd);
					break;
				}
				procs = np;
				cap = nc;
			}
			procs[n++] = (struct proc){ .pid = m.pid, .pidfd = fd };
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
	guardian_rescue(g, procs, n);
	_exit(0);
}

static int guardian_start(struct pauser *p)
{
	struct gspec g = { .mech = p->mech, .cg_dir = p->cg_dir, .cg_home = p->cg_home };
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
		guardian_main(&g, sv[1]);
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
	p->guardian = pid;
	p->guardian_fd = sv[0];
	return 0;
}

/* Best effort: a guardian that died cannot be replaced, and pausing still works without it. */
static void guardian_send(struct pauser *p, enum gop op, pid_t pid, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct gmsg m = { .op = op, .pid = pid };
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (p->guardian_fd < 0)
		return;
	if (fd >= 0) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (sendmsg(p->guardian_fd, &mh, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

static void guardian_stop(struct pauser *p, bool clean)
{
	if (p->guardian_fd >= 0) {
		if (clean)
			guardian_send(p, G_QUIT, 0, -1);
		close(p->guardian_fd);
		p->guardian_fd = -1;
	}
	if (p->guardian > 0) {
		while (waitpid(p->guardian, NULL, 0) < 0 && errno == EINTR)
			;
		p->guardian = 0;
	}
}

/* ---- signals: the process set ----------------------------------------------------------- */

static ssize_t proc_find(struct pauser *p, pid_t pid)
{
	for (size_t i = 0; i < p->nr_procs; i++)
		if (p->procs[i].pid == pid)
			return i;
	return -1;
}

static void proc_remove(struct pauser *p, size_t i)
{
	guardian_send(p, G_DEL, p->procs[i].pid, -1);
	close(p->procs[i].pidfd);
	p->procs[i] = p->procs[--p->nr_procs];
}

/* Track pid (a process id) and, when paused, stop it. The guardian hears of it before we ever
 * stop it. Returns 1 if added, 0 if known or already gone, -errno. */
static int proc_add(struct pauser *p, pid_t pid)
{
	int fd;

	if (proc_find(p, pid) >= 0)
		return 0;
	if (p->nr_procs == p->cap_procs) {
		size_t nc = p->cap_procs ? 2 * p->cap_procs : 16;
		struct proc *np = realloc(p->procs, nc * sizeof(*np));

		if (!np)
			return -ENOMEM;
		p->procs = np;
		p->cap_procs = nc;
	}
	fd = sys_pidfd_open(pid);
	if (fd < 0)
		return errno == ESRCH ? 0 : -errno;
	/* pidfd_open sets O_CLOEXEC itself. */
	p->procs[p->nr_procs++] = (struct proc){ .pid = pid, .pidfd = fd };
	guardian_send(p, G_ADD, pid, fd);
	if (p->paused)
		sys_pidfd_signal(fd, SIGSTOP);
	return 1;
}

/* The children of every thread of process pid are added (and stopped when paused). */
static void proc_scan_children(struct pauser *p, pid_t pid)
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
		n = read_path(cpath, buf, sizeof(buf));
		if (n <= 0)
			continue;
		for (s = buf;; s = e) {
			long c = strtol(s, &e, 10);

			if (e == s)
				break;
			if (c > 0)
				proc_add(p, (pid_t)c);
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
static void proc_stop_threads(pid_t pid)
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

/* The process a thread id belongs to; pid itself for a process. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], buf[2048], *t;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (read_path(path, buf, sizeof(buf)) < 0)
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
		if (read_path(spath, buf, sizeof(buf)) <= 0)
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

/* ---- construction ------------------------------------------------------------------------ */

static struct pauser *pauser_alloc(enum pause_mech mech)
{
	struct pauser *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->mech = mech;
	p->ctl_fd = -1;
	p->state_fd = -1;
	p->guardian_fd = -1;
	{
		/* Priority inheritance: the real-time watcher may wait for this lock while
		 * a reader at normal priority holds it; without it the reader could sit
		 * preempted by the very target that should have been paused. */
		pthread_mutexattr_t ma;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
		pthread_mutex_init(&p->lock, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	return p;
}

/* Create our cgroup for mechanism m under parent (NULL: our own cgroup) and check that the
 * freezer really works there by freezing and thawing it while empty. */
static int cgroup_setup(struct pauser *p, enum pause_mech m, const char *parent)
{
	static atomic_uint seq;
	bool v2 = m == PAUSE_MECH_CGROUP2;
	_cleanup_free_ char *home = NULL;
	struct statfs sf;
	int r;

	if (parent) {
		home = strdup(parent);
		if (!home)
			return -ENOMEM;
	} else {
		r = find_own_cgroup(v2, &home);
		if (r < 0)
			return r == -ENOENT ? -ENOTSUP : r;
	}
	if (statfs(home, &sf) < 0)
		return -errno;
	if ((unsigned long)sf.f_type != (v2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC))
		return -ENOTSUP;

	for (int tries = 0;; tries++) {
		free(p->cg_dir);
		if (asprintf(&p->cg_dir, "%s/precord-%d-%u", home, getpid(),
			     atomic_fetch_add(&seq, 1)) < 0) {
			p->cg_dir = NULL;
			return -ENOMEM;
		}
		if (!mkdir(p->cg_dir, 0755))
			break;
		r = -errno;
		free(p->cg_dir);
		p->cg_dir = NULL;
		if (r != -EEXIST || tries > 100)
			return r;
	}
	p->mech = m;
	p->cg_home = TAKE_PTR(home);

	{
		_cleanup_free_ char *ctl = path_join(p->cg_dir, ctl_file(m));
		_cleanup_free_ char *st = path_join(p->cg_dir, v2 ? "cgroup.events" : "freezer.state");

		if (!ctl || !st)
			return -ENOMEM;
		p->ctl_fd = open(ctl, O_WRONLY | O_CLOEXEC);
		if (p->ctl_fd < 0)
			return errno == ENOENT ? -ENOTSUP : -errno;
		p->state_fd = open(st, O_RDONLY | O_CLOEXEC);
		if (p->state_fd < 0)
			return errno == ENOENT ? -ENOTSUP : -errno;
	}
	r = ctl_write(m, p->ctl_fd, true);
	if (r < 0)
		return r;
	r = state_frozen(m, p->state_fd);
	ctl_write(m, p->ctl_fd, false);
	if (r < 0)
		return r;
	if (r != 1)
		return -ENOTSUP;
	if (!v2) {
		_cleanup_free_ char *a = path_join(p->cg_dir, V1_ANCHOR);
		_cleanup_free_ char *st = a ? path_join(a, "freezer.state") : NULL;

		/* Only an optimisation: without it pauses are slower, not wrong. */
		if (st && !mkdir(a, 0755) && write_path(st, "FROZEN") < 0)
			rmdir(a);
	}
	return 0;
}

/* Undo cgroup_setup on a pauser that never held a process. */
static void cgroup_teardown(struct pauser *p)
{
	if (p->ctl_fd >= 0)
		close(p->ctl_fd);
	if (p->state_fd >= 0)
		close(p->state_fd);
	p->ctl_fd = p->state_fd = -1;
	if (p->cg_dir) {
		anchor_remove(p->cg_dir);
		rmdir(p->cg_dir);
	}
	free(p->cg_dir);
	free(p->cg_home);
	p->cg_dir = p->cg_home = NULL;
}

struct pauser *pauser__new_for_command(const struct pauser_opts *opts)
{
	static const struct pauser_opts defaults;
	struct pauser *p;
	int r = -ENOTSUP;

	if (!opts)
		opts = &defaults;
	p = pauser_alloc(PAUSE_MECH_SIGNALS);
	if (!p)
		return NULL;
	switch (opts->mech) {
	case PAUSE_MECH_AUTO:
		r = cgroup_setup(p, PAUSE_MECH_CGROUP2, opts->cgroup_parent);
		if (r < 0) {
			int r2 = r;

			cgroup_teardown(p);
			r = cgroup_setup(p, PAUSE_MECH_CGROUP1, opts->cgroup_parent);
			if (r == -ENOTSUP)
				r = r2; /* "not a v1 freezer" says less than why v2 failed */
		}
		if (r < 0 && opts->cgroup_parent)
			goto err; /* the caller asked for that cgroup: do not fall back silently */
		if (r < 0) {
			cgroup_teardown(p);
			p->mech = PAUSE_MECH_SIGNALS;
			r = 0;
		}
		break;
	case PAUSE_MECH_CGROUP2:
	case PAUSE_MECH_CGROUP1:
		r = cgroup_setup(p, opts->mech, opts->cgroup_parent);
		if (r < 0)
			goto err;
		break;
	case PAUSE_MECH_SIGNALS:
		p->mech = PAUSE_MECH_SIGNALS;
		r = 0;
		break;
	default:
		r = -EINVAL;
		goto err;
	}
	if (!opts->no_guardian) {
		r = guardian_start(p);
		if (r < 0)
			goto err;
	}
	return p;
err:
	cgroup_teardown(p);
	pauser__free(p);
	errno = -r;
	return NULL;
}

struct pauser *pauser__new_for_pids(const pid_t *pids, size_t n, const struct pauser_opts *opts)
{
	struct pauser *p;
	int r;

	if (opts && opts->mech != PAUSE_MECH_AUTO && opts->mech != PAUSE_MECH_SIGNALS) {
		errno = ENOTSUP;
		return NULL;
	}
	if (!n) {
		errno = EINVAL;
		return NULL;
	}
	p = pauser_alloc(PAUSE_MECH_SIGNALS);
	if (!p)
		return NULL;
	if (!(opts && opts->no_guardian)) {
		r = guardian_start(p);
		if (r < 0)
			goto err;
	}
	for (size_t i = 0; i < n; i++) {
		pid_t pid = pids[i] > 0 ? tgid_of(pids[i]) : -EINVAL;

		if (pid == getpid() || pid == p->guardian) {
			r = -EINVAL;
			goto err;
		}
		if (pid < 0) {
			r = pid;
			goto err;
		}
		r = proc_add(p, pid);
		if (r < 0)
			goto err;
		if (r == 0 && proc_find(p, pid) < 0) {
			r = -ESRCH;
			goto err;
		}
	}
	return p;
err:
	pauser__free(p);
	errno = -r;
	return NULL;
}

/* ---- use ---------------------------------------------------------------------------------- */

int pauser__adopt(struct pauser *p, pid_t pid)
{
	int r;

	if (pid <= 0 || pid == getpid())
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	if (p->mech == PAUSE_MECH_SIGNALS) {
		r = proc_add(p, pid);
		if (r == 0 && proc_find(p, pid) < 0)
			r = -ESRCH;
	} else {
		char s[16];
		_cleanup_free_ char *procs = path_join(p->cg_dir, "cgroup.procs");

		snprintf(s, sizeof(s), "%d", pid);
		r = procs ? write_path(procs, s) : -ENOMEM;
	}
	pthread_mutex_unlock(&p->lock);
	return r < 0 ? r : 0;
}

int pauser__task_new(struct pauser *p, pid_t pid, pid_t tid)
{
	int r = 0;

	if (p->mech != PAUSE_MECH_SIGNALS)
		return 0;
	if (pid <= 0)
		return -EINVAL;
	/* A new thread of a known process needs nothing: SIGSTOP stops the whole group. */
	pthread_mutex_lock(&p->lock);
	if (pid != getpid() && pid != p->guardian)
		r = proc_add(p, pid);
	pthread_mutex_unlock(&p->lock);
	return r < 0 ? r : 0;
}

int pauser__task_exit(struct pauser *p, pid_t pid, pid_t tid)
{
	ssize_t i;

	if (p->mech != PAUSE_MECH_SIGNALS || pid != tid)
		return 0;
	pthread_mutex_lock(&p->lock);
	i = proc_find(p, pid);
	if (i >= 0) {
		/* A pidfd polls readable once the whole thread group has exited; a leader that
		 * called pthread_exit while its threads run is not gone yet. */
		struct pollfd pfd = { .fd = p->procs[i].pidfd, .events = POLLIN };

		if (poll(&pfd, 1, 0) > 0)
			proc_remove(p, i);
	}
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static int signal_all(struct pauser *p, int sig)
{
	for (size_t i = 0; i < p->nr_procs;) {
		if (sys_pidfd_signal(p->procs[i].pidfd, sig) < 0 && errno == ESRCH) {
			proc_remove(p, i);
			continue;
		}
		i++;
	}
	return 0;
}

int pauser__pause(struct pauser *p)
{
	int r;

	pthread_mutex_lock(&p->lock);
	p->paused = true;
	if (p->mech == PAUSE_MECH_SIGNALS) {
		r = signal_all(p, SIGSTOP);
		for (size_t i = 0; i < p->nr_procs; i++)
			proc_stop_threads(p->procs[i].pid);
		/* Once SIGSTOP is pending, a fork still in flight is restarted by the kernel, so
		 * the children lists read now are complete; scanning the processes we add on the
		 * way covers grandchildren. */
		for (size_t i = 0; i < p->nr_procs; i++)
			proc_scan_children(p, p->procs[i].pid);
	} else {
		r = ctl_write(p->mech, p->ctl_fd, true);
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

int pauser__resume(struct pauser *p)
{
	int r;

	pthread_mutex_lock(&p->lock);
	p->paused = false;
	if (p->mech == PAUSE_MECH_SIGNALS)
		r = signal_all(p, SIGCONT);
	else
		r = ctl_write(p->mech, p->ctl_fd, false);
	pthread_mutex_unlock(&p->lock);
	return r;
}

static int stopped_once(struct pauser *p)
{
	if (p->mech != PAUSE_MECH_SIGNALS)
		return state_frozen(p->mech, p->state_fd);
	for (size_t i = 0; i < p->nr_procs; i++)
		if (!proc_stopped(p->procs[i].pid))
			return 0;
	return 1;
}

int pauser__wait_stopped(struct pauser *p, int timeout_ms)
{
	uint64_t deadline = clock__ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
	useconds_t nap = 20;
	int r;

	pthread_mutex_lock(&p->lock);
	if (!p->paused) {
		r = -EINVAL;
		goto out;
	}
	for (;;) {
		uint64_t now;

		r = stopped_once(p);
		if (r != 0)
			break;
		now = clock__ns();
		if (now >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		if (p->mech == PAUSE_MECH_CGROUP2) {
			/* cgroup.events signals a change with POLLPRI (our read above re-armed it),
			 * but the kernel sends at most one notification per 10 ms per file, and the
			 * previous resume has usually spent it: wake up on our own as well. */
			struct pollfd pfd = { .fd = p->state_fd, .events = POLLPRI };
			struct timespec ts = { 0, (long)nap * 1000 };

			ppoll(&pfd, 1, &ts, NULL);
		} else {
			usleep(nap);
		}
		if (nap < 1000)
			nap *= 2;
	}
	if (r == 1)
		r = 0;
out:
	pthread_mutex_unlock(&p->lock);
	return r;
}

int pauser__measure_pause(struct pauser *p, int timeout_ms, uint64_t *ret_ns)
{
	uint64_t t0 = clock__ns();
	int r = pauser__pause(p);

	if (r < 0)
		return r;
	r = pauser__wait_stopped(p, timeout_ms);
	if (r < 0)
		return r;
	*ret_ns = clock__ns() - t0;
	return 0;
}

bool pauser__paused(const struct pauser *p)
{
	return __atomic_load_n(&p->paused, __ATOMIC_RELAXED); /* a snapshot, without the lock */
}

enum pause_mech pauser__mechanism(const struct pauser *p)
{
	return p->mech;
}

const char *pauser__mechanism_name(const struct pauser *p)
{
	switch (p->mech) {
	case PAUSE_MECH_CGROUP2:
		return "cgroup2-freezer";
	case PAUSE_MECH_CGROUP1:
		return "cgroup1-freezer";
	default:
		return "signals";
	}
}

const char *pauser__cgroup_path(const struct pauser *p)
{
	return p->mech == PAUSE_MECH_SIGNALS ? NULL : p->cg_dir;
}

pid_t pauser__guardian_pid(const struct pauser *p)
{
	return p->guardian > 0 ? p->guardian : 0;
}

void pauser__free(struct pauser *p)
{
	bool clean = true;

	if (!p)
		return;
	if (p->mech == PAUSE_MECH_SIGNALS) {
		if (p->paused)
			signal_all(p, SIGCONT);
		for (size_t i = 0; i < p->nr_procs; i++)
			close(p->procs[i].pidfd);
		p->nr_procs = 0;
	} else if (p->cg_dir) {
		if (p->ctl_fd >= 0)
			ctl_write(p->mech, p->ctl_fd, false);
		/* Survivors go back where the recorder is, which is where they would have been
		 * without us; if they cannot all be moved, the guardian tries again. */
		clean = cgroup_evacuate(p->cg_dir, p->cg_home, RMDIR_TRY_MS, false) == 0;
	}
	p->paused = false;
	guardian_stop(p, clean);
	if (p->ctl_fd >= 0)
		close(p->ctl_fd);
	if (p->state_fd >= 0)
		close(p->state_fd);
	free(p->cg_dir);
	free(p->cg_home);
	free(p->procs);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
