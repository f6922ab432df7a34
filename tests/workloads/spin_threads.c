/* A long-running multi-threaded process for -p tests: thread 1 spins in spin_alpha, thread 2 in
 * spin_beta, the main thread sleeps. Runs SECONDS (default 5), prints its pid first. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double secs = 5;
static volatile double sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void *spin_alpha(void *arg)
{
	double end = now() + secs, x = 0;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x += i * 0.5;
	sink = x;
	return arg;
}

__attribute__((noinline)) static void *spin_beta(void *arg)
{
	double end = now() + secs, x = 1;

	while (now() < end)
		for (int i = 1; i < 100000; i++)
			x += 1.0 / i;
	sink = x;
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		secs = atof(argv[1]);
	printf("%d\n", getpid());
	fflush(stdout);
	pthread_create(&a, NULL, spin_alpha, NULL);
	pthread_create(&b, NULL, spin_beta, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
