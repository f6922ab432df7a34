/* Conversions in processes of their own (see isolate.h). Between fork and exec the child only
 * makes system calls (no malloc, no lock): the service it was copied from has other threads. */
#include "daemon/isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"

#define MAX_ARGS 16
/* How often the parent looks at the child's CPU time and the stop flag. */
#define POLL_MS 200

static const char *program = "/proc/self/exe";

void isolate__set_program(const char *path)
{
	program = path ? path : "/proc/self/exe";
}

/* The child between fork and exec: system calls only. */
static __attribute__((noreturn)) void exec_child(const struct isolate_job *j, const char *path,
						  char *const *argv, int why_fd, pid_t parent)
{
	static const char msg[] = "cannot execute the conversion program ";
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL); /* the service's threads block every signal */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(ECHILD);
	if (j->cpu_s) {
		/* SIGXCPU at the limit (then SIGKILL 5 s later): the parent can say why */
		struct rlimit cpu = { j->cpu_s, j->cpu_s + 5 };
		setrlimit(RLIMIT_CPU, &cpu);
	}
	if (j->fsize) {
		struct rlimit fsize = { j->fsize, j->fsize };
		setrlimit(RLIMIT_FSIZE, &fsize);
	}
	umask(j->umask);
	if (why_fd == ISOLATE_WHY_FD)
		fcntl(why_fd, F_SETFD, 0);
	else if (dup2(why_fd, ISOLATE_WHY_FD) < 0)
		_exit(EBADF);
	/* nothing else of the service's: its sockets, events and files */
	syscall(SYS_close_range, ISOLATE_WHY_FD + 1, ~0U, 0);
	execv(path, argv);
	if (write(ISOLATE_WHY_FD, msg, sizeof(msg) - 1) > 0 &&
	    write(ISOLATE_WHY_FD, path, strlen(path)) > 0)
		_exit(ENOEXEC);
	_exit(ENOEXEC);
}

/* The child's CPU time in ns, or UINT64_MAX when it cannot be read (it has exited). */
static uint64_t cpu_ns(clockid_t cid, bool have)
{
	struct timespec ts;

	if (!have || clock_gettime(cid, &ts) < 0)
		return UINT64_MAX;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int isolate__run(const struct isolate_job *j, char *why, size_t why_size)
{
	char *argv[MAX_ARGS + 3];
	size_t n = 0;
	int p[2], st = 0, pidfd, err = 0;
	bool stalled = false, stopped = false, have_clock;
	uint64_t last_cpu, last_progress;
	clockid_t cid;
	pid_t pid, parent = getpid();
	ssize_t got;

	why[0] = 0;
	argv[n++] = (char *)"precordd"; /* for ps; the program is executed by its path */
	argv[n++] = (char *)ISOLATE_ARG;
	for (size_t i = 0; j->args[i]; i++) {
		if (n == MAX_ARGS + 2) {
			snprintf(why, why_size, "the %s process has too many arguments", j->what);
			return -E2BIG;
		}
		argv[n++] = (char *)j->args[i];
	}
	argv[n] = NULL;

	/* the reason comes back through p, read once the child is gone; non-blocking, as another
	 * child forked meanwhile may hold the write end until it executes */
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		err = -errno;
		snprintf(why, why_size, "cannot start the %s process: %s", j->what, strerror(errno));
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		snprintf(why, why_size, "cannot start the %s process: %s", j->what, strerror(errno));
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0)
		exec_child(j, program, argv, p[1], parent);
	close(p[1]);

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	have_clock = clock_getcpuclockid(pid, &cid) == 0;
	last_cpu = cpu_ns(cid, have_clock);
	last_progress = clock__ms();
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			err = -errno;
			kill(pid, SIGKILL);
			break;
		}
		if (r < 0)
			continue;
		if (pidfd >= 0) {
			struct pollfd pf = { .fd = pidfd, .events = POLLIN };
			poll(&pf, 1, POLL_MS);
		} else {
			poll(NULL, 0, POLL_MS);
		}
		if (!stopped && j->stop && __atomic_load_n(j->stop, __ATOMIC_ACQUIRE)) {
			stopped = true;
			kill(pid, SIGKILL);
		}
		uint64_t c = cpu_ns(cid, have_clock), now = clock__ms();
		if (c != last_cpu) {
			last_cpu = c;
			last_progress = now;
		} else if (!stalled && !stopped && j->stall_ms && now - last_progress >= j->stall_ms) {
			stalled = true;
			kill(pid, SIGKILL);
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	got = read(p[0], why, why_size - 1);
	why[got > 0 ? got : 0] = 0;
	close(p[0]);

	if (err) {
		snprintf(why, why_size, "cannot wait for the %s process: %s", j->what, strerror(-err));
		return err;
	}
	if (stopped) {
		snprintf(why, why_size, "the service is stopping");
		return -ECANCELED;
	}
	if (stalled) {
		snprintf(why, why_size, "the %s process had no CPU time for %u s (stopped or blocked): "
			 "killed", j->what, j->stall_ms / 1000);
		return -ETIMEDOUT;
	}
	if (WIFSIGNALED(st)) {
		snprintf(why, why_size, "the %s process died of signal %d%s", j->what, WTERMSIG(st),
			 WTERMSIG(st) == SIGBUS ? " (a mapped file shrank?)" :
			 WTERMSIG(st) == SIGXCPU ? " (over its CPU time limit)" : "");
		return -ECHILD;
	}
	if (WEXITSTATUS(st) && !why[0])
		snprintf(why, why_size, "%s", strerror(WEXITSTATUS(st)));
	return -WEXITSTATUS(st);
}

int isolate__child_main(int argc, char **argv, const struct isolate_kind *kinds)
{
	if (argc < 3 || strcmp(argv[1], ISOLATE_ARG)) {
		fprintf(stderr, "precordd: %s is for precordd's own conversions\n", ISOLATE_ARG);
		return 2;
	}
	for (const struct isolate_kind *k = kinds; k->name; k++) {
		if (!strcmp(k->name, argv[2])) {
			char comm[16];

			/* "precordd-unwind" in ps and top, not the "exe" of /proc/self/exe */
			snprintf(comm, sizeof(comm), "precordd-%s", k->name);
			prctl(PR_SET_NAME, comm);
			return k->main(argc - 3, argv + 3);
		}
	}
	fprintf(stderr, "precordd: %s: unknown kind '%s'\n", ISOLATE_ARG, argv[2]);
	return 2;
}
