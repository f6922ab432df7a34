/* catch_pause: stops a --lossless precord at a moment when it has its target paused, so that a
 * test can look at the paused target for as long as it likes. A pause lasts ~0.1 ms, too short
 * for a shell loop to see and act on: this polls the pause cgroup's cgroup.freeze through one
 * open fd, SIGSTOPs precord the moment it reads 1, waits for every thread of precord to be
 * stopped (however long a busy machine takes to schedule them), and keeps it so only if
 * cgroup.freeze still says 1 (the pause may have ended in between); else SIGCONT, waits for it
 * to run again and tries again. Leaves precord stopped on success. The timeout only ends a run
 * whose pause never comes.
 *
 * usage: catch_pause CGROUP_DIR PRECORD_PID [TIMEOUT_MS]   (default 5000)
 * exit 0 caught (prints "caught after N tries"), 1 timed out (precord left running), 2 error. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static int freeze_requested(int fd)
{
	char c = 0;

	if (pread(fd, &c, 1, 0) != 1)
		return -1;
	return c == '1';
}

/* The state letter of /proc/PID/task/TID/stat ('T' once stopped), 0 if unreadable. */
static char state_of(pid_t pid, const char *tid)
{
	char path[320], buf[512], *rp;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] && rp[2] ? rp[2] : 0;
}

/* 1 when every thread of PID is stopped ('T' or 't'), 0 when one is not, -1 when PID is gone. */
static int all_stopped(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int any = 0, all = 1;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		char st;

		if (d->d_name[0] == '.')
			continue;
		st = state_of(pid, d->d_name);
		any = 1;
		if (st != 'T' && st != 't')
			all = 0;
	}
	closedir(dir);
	return any ? all : -1;
}

/* Until every thread of PID is stopped (want 1) or not every one is (want 0); -1 past the deadline or
 * when PID is gone. */
static int wait_stopped(pid_t pid, int want, long long deadline)
{
	for (;;) {
		int r = all_stopped(pid);

		if (r < 0)
			return -1;
		if (want ? r == 1 : r == 0)
			return 0;
		if (now_ms() >= deadline)
			return -1;
		usleep(100);
	}
}

int main(int argc, char **argv)
{
	char path[4096];
	long long deadline;
	pid_t pid;
	int fd, tries = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: catch_pause CGROUP_DIR PRECORD_PID [TIMEOUT_MS]\n");
		return 2;
	}
	pid = atoi(argv[2]);
	deadline = now_ms() + (argc > 3 ? atoll(argv[3]) : 5000);
	snprintf(path, sizeof(path), "%s/cgroup.freeze", argv[1]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pid <= 0) {
		fprintf(stderr, "catch_pause: %s: %s\n", path, strerror(errno));
		return 2;
	}
	while (now_ms() < deadline) {
		int r = freeze_requested(fd);

		if (r < 0) {
			fprintf(stderr, "catch_pause: cannot read %s: %s\n", path, strerror(errno));
			return 2;
		}
		if (!r)
			continue;
		if (kill(pid, SIGSTOP) < 0) {
			fprintf(stderr, "catch_pause: cannot stop %d: %s\n", pid, strerror(errno));
			return 2;
		}
		tries++;
		if (wait_stopped(pid, 1, deadline) < 0)
			break;
		if (freeze_requested(fd) == 1) {
			printf("caught after %d tries\n", tries);
			return 0;
		}
		kill(pid, SIGCONT);
		if (wait_stopped(pid, 0, deadline) < 0)
			break;
	}
	kill(pid, SIGCONT);
	printf("no pause caught in %d tries\n", tries);
	return 1;
}
