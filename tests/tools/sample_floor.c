/* sample_floor: what sampling costs a command when nothing is recorded. The command is sampled by
 * cpu-clock at FREQ Hz (per CPU, inherited by its threads and children, as perf record and
 * precord open it), with sample_type IP|TID|TIME and no ring buffer: the kernel takes every
 * timer interrupt, switches the events with the command's threads and prepares every sample,
 * then drops it for want of a ring. With "switch" the events also ask for switch records. The
 * command's wall time under this is the floor of any recorder at FREQ on this host (bench/lossless.sh).
 *
 * usage: sample_floor FREQ [switch] -- COMMAND [ARG...]
 * prints "sample_floor: wall S.SS s" on stderr; exits with the command's status, 2 on error. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "lib/clock.h"

#define MAX_CPUS 256

static int usage(void)
{
	fprintf(stderr, "usage: sample_floor FREQ [switch] -- COMMAND [ARG...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct perf_event_attr a = { 0 };
	int go[2], fds[MAX_CPUS], nfd = 0, i = 2, st;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	char *end, x = 0;
	unsigned long freq;
	uint64_t t0, t1;
	pid_t pid;

	if (argc < 4)
		return usage();
	errno = 0;
	freq = strtoul(argv[1], &end, 10);
	if (errno || *end || !freq)
		return usage();
	if (!strcmp(argv[i], "switch")) {
		a.context_switch = 1;
		i++;
	}
	if (strcmp(argv[i], "--") || i + 1 >= argc)
		return usage();
	if (ncpu < 1 || ncpu > MAX_CPUS) {
		fprintf(stderr, "sample_floor: %ld CPUs: at most %d\n", ncpu, MAX_CPUS);
		return 2;
	}
	if (pipe(go))
		return perror("sample_floor: pipe"), 2;
	pid = fork();
	if (pid < 0)
		return perror("sample_floor: fork"), 2;
	if (!pid) {
		close(go[1]);
		if (read(go[0], &x, 1) != 1)
			_exit(127);
		execvp(argv[i + 1], argv + i + 1);
		fprintf(stderr, "sample_floor: %s: %s\n", argv[i + 1], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = freq;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.inherit = 1;
	for (long c = 0; c < ncpu; c++) {
		int fd = (int)syscall(SYS_perf_event_open, &a, pid, (int)c, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0 && errno == ENODEV)
			continue; /* an offline CPU */
		if (fd < 0) {
			fprintf(stderr, "sample_floor: perf_event_open on CPU %ld: %s\n", c, strerror(errno));
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return 2;
		}
		fds[nfd++] = fd;
	}
	t0 = clock__ns();
	if (write(go[1], &x, 1) != 1)
		return perror("sample_floor: write"), 2;
	close(go[1]);
	if (waitpid(pid, &st, 0) < 0)
		return perror("sample_floor: waitpid"), 2;
	t1 = clock__ns();
	while (nfd)
		close(fds[--nfd]);
	fprintf(stderr, "sample_floor: wall %.2f s\n", (double)(t1 - t0) / 1e9);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
