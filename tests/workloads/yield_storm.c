/* The sched_yield storm: THREADS threads (default 2 per online CPU), each calling sched_yield
 * COUNT times (default 1,000,000). Millions of context switches a second: the workload on which
 * perf record loses events. Usage: yield_storm [COUNT [THREADS]].
 * With YIELD_STORM_REPORT=1 in the environment it ends by printing to stderr its own count of
 * context switches, from getrusage(RUSAGE_THREAD) (voluntary + involuntary) of every thread,
 * the main thread's counted from the start of main so that switches before exec are left out:
 *   yield_storm: threads N switches S cpu_us U
 * where U is the process's user + system CPU time. A recorder with --switch-events should hold
 * about 2 x S SWITCH records (an out and an in for each switch). */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static long count = 1000000;
static long long switches; /* summed over the threads */

static long long thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return 0;
	return (long long)ru.ru_nvcsw + ru.ru_nivcsw;
}

static void *yielder(void *arg)
{
	for (long i = 0; i < count; i++)
		sched_yield();
	/* A new thread's counters start at zero. */
	__atomic_fetch_add(&switches, thread_switches(), __ATOMIC_RELAXED);
	return arg;
}

int main(int argc, char **argv)
{
	long threads = 2 * sysconf(_SC_NPROCESSORS_ONLN);
	long long main_start = thread_switches();
	const char *report = getenv("YIELD_STORM_REPORT");
	pthread_t *t;

	if (argc > 1)
		count = atol(argv[1]);
	if (argc > 2)
		threads = atol(argv[2]);
	if (count < 0 || threads < 1) {
		fprintf(stderr, "usage: yield_storm [COUNT [THREADS]]\n");
		return 2;
	}
	t = calloc(threads, sizeof(*t));
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, yielder, NULL);
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	free(t);
	if (report && *report && *report != '0') {
		struct rusage ru;
		long long cpu_us = 0;

		if (getrusage(RUSAGE_SELF, &ru) == 0)
			cpu_us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
				 ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
		fprintf(stderr, "yield_storm: threads %ld switches %lld cpu_us %lld\n", threads,
			switches + thread_switches() - main_start, cpu_us);
	}
	return 0;
}
