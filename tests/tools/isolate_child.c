/* isolate_child: the program tests/check_isolate.c runs in precordd's place, through the same
 * isolate__child_main, with children that misbehave on purpose:
 *
 *   isolate_child --isolated-child ok            exits 0
 *   isolate_child --isolated-child why           writes "the reason" to fd 3, exits EPROTO
 *   isolate_child --isolated-child stop          stops itself (SIGSTOP): no CPU time from then on
 *   isolate_child --isolated-child bus           dies of SIGBUS
 *   isolate_child --isolated-child spin MS       uses MS ms of CPU time, then exits 0
 *   isolate_child --isolated-child env CPU FSIZE checks what it was given: no signal blocked, no
 *                                                fd above 3, umask 077, RLIMIT_CPU CPU s and
 *                                                RLIMIT_FSIZE FSIZE bytes; exits 0, else 1 with
 *                                                what differs on fd 3 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/isolate.h"

static int say(const char *fmt, const char *what, long long v)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), fmt, what, v);

	if (n > 0 && write(ISOLATE_WHY_FD, buf, (size_t)n) < 0)
		return 2;
	return 1;
}

static int k_ok(int argc, char **argv)
{
	(void)argc, (void)argv;
	return 0;
}

static int k_why(int argc, char **argv)
{
	(void)argc, (void)argv;
	if (write(ISOLATE_WHY_FD, "the reason", 10) != 10)
		return 2;
	return EPROTO;
}

static int k_stop(int argc, char **argv)
{
	(void)argc, (void)argv;
	raise(SIGSTOP);
	return 0;
}

static int k_bus(int argc, char **argv)
{
	(void)argc, (void)argv;
	/* the default action, even in a sanitized build, whose runtime catches SIGBUS */
	signal(SIGBUS, SIG_DFL);
	raise(SIGBUS);
	return 0;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int k_spin(int argc, char **argv)
{
	double until;

	if (argc != 1)
		return EINVAL;
	until = cpu_s() + atof(argv[0]) / 1000;
	while (cpu_s() < until)
		;
	return 0;
}

static int k_env(int argc, char **argv)
{
	struct rlimit cpu, fsize;
	sigset_t mask;
	DIR *d;
	struct dirent *de;
	mode_t um;

	if (argc != 2)
		return EINVAL;
	sigprocmask(SIG_SETMASK, NULL, &mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&mask, sig) == 1)
			return say("%s %lld is blocked", "signal", sig);
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] != '.' && fd > ISOLATE_WHY_FD && fd != dirfd(d))
			return say("%s %lld is open", "fd", fd);
	}
	if (!d)
		return say("%s (%lld)", "no /proc/self/fd", errno);
	closedir(d);
	um = umask(0);
	if (um != 077)
		return say("%s is %llo, not 077", "umask", um);
	getrlimit(RLIMIT_CPU, &cpu);
	getrlimit(RLIMIT_FSIZE, &fsize);
	if (cpu.rlim_cur != (rlim_t)atoll(argv[0]))
		return say("%s is %lld", "RLIMIT_CPU", (long long)cpu.rlim_cur);
	if (fsize.rlim_cur != (rlim_t)atoll(argv[1]))
		return say("%s is %lld", "RLIMIT_FSIZE", (long long)fsize.rlim_cur);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct isolate_kind kinds[] = {
		{ "ok", k_ok }, { "why", k_why }, { "stop", k_stop }, { "bus", k_bus },
		{ "spin", k_spin }, { "env", k_env }, { NULL, NULL },
	};

	return isolate__child_main(argc, argv, kinds);
}
