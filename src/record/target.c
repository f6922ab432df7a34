/* Starting the profiled command: fork, then the child waits on a pipe until the recorder has
 * opened its events and placed it; a CLOEXEC status pipe tells the parent whether exec worked
 * (EOF: it did; an int errno: it did not). Ends are watched through pidfds. */
#include "record/target.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

struct target {
	pid_t child;        /* > 0: a command we forked */
	int go_fd;          /* write end: release the child */
	int status_fd;      /* read end: exec's errno or EOF */
	bool ended;
	int status;
	size_t nr_pids;
	pid_t *pids;
	int *pidfds;        /* one per watched pid */
	int efd;            /* readable when everything has ended (pidfd of child / first alive) */
	pid_t pgid;         /* the command leads its own process group: its pid; else 0 */
	pid_t tty_home;     /* the terminal (stdin) was handed to pgid from this group; 0: not */
};

/* Hand the terminal on stdin to group pgid; from a background group, so SIGTTOU is blocked
 * meanwhile (tcsetpgrp from a background group would stop us otherwise). */
static void tty_give(pid_t pgid)
{
	sigset_t ttou, old;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(STDIN_FILENO, pgid);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The command ended (or is dropped): the terminal goes back to the recorder's group, if it was
 * handed over and the command's group still has it. */
static void tty_restore(struct target *t)
{
	if (t->tty_home > 0 && tcgetpgrp(STDIN_FILENO) == t->pgid)
		tty_give(t->tty_home);
	t->tty_home = 0;
}

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

void target__free(struct target *t)
{
	if (!t)
		return;
	tty_restore(t);
	if (t->child > 0 && t->go_fd >= 0) {
		/* Never released: the held child must not run the command. */
		kill(t->child, SIGKILL);
		waitpid(t->child, NULL, 0);
	}
	if (t->go_fd >= 0)
		close(t->go_fd);
	if (t->status_fd >= 0)
		close(t->status_fd);
	if (t->pidfds)
		for (size_t i = 0; i < t->nr_pids; i++)
			if (t->pidfds[i] >= 0)
				close(t->pidfds[i]);
	free(t->pidfds);
	free(t->pids);
	free(t);
}

static struct target *target_alloc(size_t nr)
{
	struct target *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->go_fd = t->status_fd = -1;
	t->nr_pids = nr;
	t->pids = calloc(nr, sizeof(pid_t));
	t->pidfds = malloc(nr * sizeof(int));
	if (!t->pids || !t->pidfds) {
		target__free(t);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < nr; i++)
		t->pidfds[i] = -1;
	return t;
}

/* What exec would make of file: 0 (a regular file we may execute), -ENOENT, -EISDIR, -ENODEV
 * (not a regular file) or -EACCES. */
static int exec_check(const char *file)
{
	struct stat st;

	if (stat(file, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -EACCES;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -ENODEV;
	return access(file, X_OK) == 0 ? 0 : -EACCES;
}

int target__check_command(const char *cmd, char *ret_path, size_t len)
{
	const char *path = getenv("PATH");
	int first = 0; /* the first refusal of a file found, as execvp reports it */

	if (!cmd || !*cmd)
		return -ENOENT;
	if (strchr(cmd, '/')) {
		snprintf(ret_path, len, "%s", cmd);
		return exec_check(cmd);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		char buf[4096];
		int n, r;

		if (end == path) /* an empty entry is the current directory */
			n = snprintf(buf, sizeof(buf), "./%s", cmd);
		else
			n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - path), path, cmd);
		if (n > 0 && (size_t)n < sizeof(buf)) {
			/* execvp goes on past what it cannot execute, and reports EACCES if
			 * nothing further is found */
			r = exec_check(buf);
			if (r == 0 || (r != -ENOENT && !first)) {
				snprintf(ret_path, len, "%s", buf);
				if (r == 0)
					return 0;
				first = r;
			}
		}
		path = *end ? end + 1 : end;
	}
	return first ? first : -ENOENT;
}

static struct target *fork_held(char *const argv[], bool group)
{
	int go[2], st[2];
	struct target *t;
	pid_t pid;

	if (!argv || !argv[0]) {
		errno = EINVAL;
		return NULL;
	}
	t = target_alloc(1);
	if (!t)
		return NULL;
	if (pipe2(go, O_CLOEXEC) < 0) {
		target__free(t);
		return NULL;
	}
	if (pipe2(st, O_CLOEXEC) < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		target__free(t);
		errno = e;
		return NULL;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		close(st[0]);
		close(st[1]);
		target__free(t);
		errno = e;
		return NULL;
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(st[0]);
		/* Default dispositions for the command, whatever the recorder set. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		if (group)
			setpgid(0, 0);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* the recorder gave up before releasing us */
		execvp(argv[0], argv);
		e = errno;
		if (write(st[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(st[1]);
	t->child = pid;
	t->go_fd = go[1];
	t->status_fd = st[0];
	t->pids[0] = pid;
	t->pidfds[0] = pidfd_open(pid);
	if (t->pidfds[0] < 0) {
		int e = errno;
		target__free(t);
		errno = e;
		return NULL;
	}
	if (group) {
		/* as the child does, whoever comes first: the group exists once we return */
		setpgid(pid, pid);
		t->pgid = pid;
		if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp()) {
			t->tty_home = getpgrp();
			tty_give(pid);
		}
	}
	return t;
}

struct target *target__fork_held(char *const argv[])
{
	return fork_held(argv, false);
}

struct target *target__fork_held_group(char *const argv[])
{
	return fork_held(argv, true);
}

pid_t target__pgid(const struct target *t)
{
	return t->pgid;
}

struct target *target__attach(const pid_t *pids, size_t nr)
{
	struct target *t;

	if (!nr) {
		errno = EINVAL;
		return NULL;
	}
	t = target_alloc(nr);
	if (!t)
		return NULL;
	for (size_t i = 0; i < nr; i++) {
		t->pids[i] = pids[i];
		t->pidfds[i] = pidfd_open(pids[i]);
		if (t->pidfds[i] < 0) {
			int e = errno;
			target__free(t);
			errno = e;
			return NULL;
		}
	}
	return t;
}

pid_t target__pid(const struct target *t)
{
	return t->pids[0];
}

int target__release(struct target *t)
{
	int e = 0;
	ssize_t n;

	if (t->child <= 0 || t->go_fd < 0)
		return -EINVAL;
	if (write(t->go_fd, "x", 1) != 1)
		return -errno;
	close(t->go_fd);
	t->go_fd = -1;
	do
		n = read(t->status_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(t->status_fd);
	t->status_fd = -1;
	if (n == (ssize_t)sizeof(e))
		return -e;
	return 0;
}

int target__fd(const struct target *t)
{
	/* For several pids the caller polls each; the first is the one that matters for
	 * commands. Attached pids are checked in target__ended. */
	return t->pidfds[0];
}

static bool pidfd_exited(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

bool target__ended(struct target *t, int *ret_status)
{
	if (t->ended)
		goto done;
	if (t->child > 0) {
		int st;
		pid_t r = waitpid(t->child, &st, WNOHANG);

		if (r == t->child) {
			t->ended = true;
			t->status = st;
			tty_restore(t);
		}
	} else {
		bool all = true;

		for (size_t i = 0; i < t->nr_pids; i++)
			if (!pidfd_exited(t->pidfds[i]))
				all = false;
		t->ended = all;
	}
done:
	if (t->ended && ret_status)
		*ret_status = t->status;
	return t->ended;
}

void target__terminate(struct target *t)
{
	if (t->child > 0 && !t->ended)
		kill(t->child, SIGTERM);
}

bool target__wait(struct target *t, int timeout_ms, int *ret_status)
{
	for (int waited = 0;; waited += 10) {
		if (target__ended(t, ret_status))
			return true;
		if (waited >= timeout_ms)
			return false;
		struct pollfd p = { .fd = t->pidfds[0], .events = POLLIN };
		poll(&p, 1, 10);
	}
}
