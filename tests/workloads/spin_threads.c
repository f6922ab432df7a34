/* A long-running multi-threaded process for -p tests: thread 1 spins in spin_alpha, thread 2 in
 * spin_beta, the main thread sleeps. Runs SECONDS (default 5), prints its pid first.
 * Two ways to make its length independent of how busy the machine is:
 *   SPIN_CPU=1    each thread spins for SECONDS of its own CPU time, not of the clock, so that
 *                 it yields as many cpu-clock samples however loaded the machine is;
 *   SPIN_STOP=F   each thread stops as soon as the file F exists (a test says when), SECONDS
 *                 then being only a safety net. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double secs = 5;
static const char *stop_file;
static clockid_t clock_id = CLOCK_MONOTONIC;
static volatile double sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(clock_id, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int go_on(double end)
{
	return now() < end && !(stop_file && access(stop_file, F_OK) == 0);
}

__attribute__((noinline)) static void *spin_alpha(void *arg)
{
	double end = now() + secs, x = 0;

	while (go_on(end))
		for (int i = 0; i < 100000; i++)
			x += i * 0.5;
	sink = x;
	return arg;
}

__attribute__((noinline)) static void *spin_beta(void *arg)
{
	double end = now() + secs, x = 1;

	while (go_on(end))
		for (int i = 1; i < 100000; i++)
			x += 1.0 / i;
	sink = x;
	return arg;
}

int main(int argc, char **argv)
{
	const char *cpu = getenv("SPIN_CPU");
	pthread_t a, b;

	if (argc > 1)
		secs = atof(argv[1]);
	if (cpu && *cpu == '1')
		clock_id = CLOCK_THREAD_CPUTIME_ID;
	stop_file = getenv("SPIN_STOP");
	if (stop_file && !*stop_file)
		stop_file = NULL;
	printf("%d\n", getpid());
	fflush(stdout);
	pthread_create(&a, NULL, spin_alpha, NULL);
	pthread_create(&b, NULL, spin_beta, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
