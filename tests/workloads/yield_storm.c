/* The sched_yield storm: THREADS threads (default 2 per online CPU), each calling sched_yield
 * COUNT times (default 1,000,000). Millions of context switches a second: the workload on which
 * perf record loses events. Usage: yield_storm [COUNT [THREADS]]. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long count = 1000000;

static void *yielder(void *arg)
{
	for (long i = 0; i < count; i++)
		sched_yield();
	return arg;
}

int main(int argc, char **argv)
{
	long threads = 2 * sysconf(_SC_NPROCESSORS_ONLN);
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
	return 0;
}
