/* catch_pause: stops a --lossless precord at a moment when it has its target paused, so that a
 * test can look at the paused target for as long as it likes. A pause lasts ~0.1 ms, too short
 * for a shell loop to see and act on: this polls the pause cgroup's cgroup.freeze through one
 * open fd, SIGSTOPs precord the moment it reads 1, waits for precord to be stopped, and keeps it
 * so only if cgroup.freeze still says 1 (the pause may have ended in between); else SIGCONT and
 * try again. Leaves precord stopped on success.
 *
 * usage: catch_pause CGROUP_DIR PRECORD_PID [TIMEOUT_MS]   (default 5000)
 * exit 0 caught (prints "caught after N tries"), 1 timed out (precord left running), 2 error. */
#include <errno.h>
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

/* The process state from /proc/PID/stat: 'T' once the group stop is complete. */
static char state_of(pid_t pid)
{
	char path[64], buf[512], *rp;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
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
		for (int i = 0; i < 1000 && state_of(pid) != 'T'; i++)
			usleep(100);
		if (freeze_requested(fd) == 1 && state_of(pid) == 'T') {
			printf("caught after %d tries\n", tries);
			return 0;
		}
		kill(pid, SIGCONT);
	}
	printf("no pause caught in %d tries\n", tries);
	return 1;
}
