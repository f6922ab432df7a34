/* Known on-CPU and off-CPU time shares for the off-CPU and wall-clock reports. Three threads
 * (named with prctl so reports can find them):
 *   spinner: spins 1 s in spin_1s;
 *   blocker: sleeps 300 ms in sleep_300ms (nanosleep), then blocks in read_pipe_200ms reading a
 *            pipe that the writer fills 500 ms after the start, then spins 100 ms in spin_100ms;
 *   writer:  sleeps 500 ms in writer_wait, then writes one byte.
 * Times are taken from CLOCK_MONOTONIC so a busy machine stretches nothing: a spin runs until
 * its CPU time (CLOCK_THREAD_CPUTIME_ID) reaches its length, and the pipe is written at a fixed
 * time after the start. Each thread prints its tid, then what it measured of itself: the
 * blocking calls' wall time and its own lifetime, which the tests compare reports against. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2];
static struct timespec start;

static double since(const struct timespec *t0, clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Spin until this thread has run for `secs` of CPU time. */
static __attribute__((noinline)) void spin_cpu(double secs)
{
	struct timespec t0;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	while (since(&t0, CLOCK_THREAD_CPUTIME_ID) < secs)
		for (int i = 0; i < 1000; i++)
			x += (uint64_t)i * 2654435761u;
}

static __attribute__((noinline)) void spin_1s(void)
{
	spin_cpu(1.0);
}

static __attribute__((noinline)) void spin_100ms(void)
{
	spin_cpu(0.1);
}

static __attribute__((noinline)) void sleep_300ms(void)
{
	struct timespec ts = { 0, 300 * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static __attribute__((noinline)) void read_pipe_200ms(void)
{
	char c;

	while (read(pipefd[0], &c, 1) != 1)
		;
}

/* Sleep until `at` seconds after the start. */
static __attribute__((noinline)) void writer_wait(double at)
{
	double left = at - since(&start, CLOCK_MONOTONIC);

	if (left > 0) {
		struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };

		while (nanosleep(&ts, &ts) != 0)
			;
	}
}

static void *spinner(void *arg)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	prctl(PR_SET_NAME, "spinner");
	spin_1s();
	printf("spinner tid %ld lifetime %.6f\n", (long)syscall(SYS_gettid), since(&t0, CLOCK_MONOTONIC));
	return NULL;
}

static void *blocker(void *arg)
{
	struct timespec t0, t;
	double slept, blocked;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	prctl(PR_SET_NAME, "blocker");
	clock_gettime(CLOCK_MONOTONIC, &t);
	sleep_300ms();
	slept = since(&t, CLOCK_MONOTONIC);
	clock_gettime(CLOCK_MONOTONIC, &t);
	read_pipe_200ms();
	blocked = since(&t, CLOCK_MONOTONIC);
	spin_100ms();
	printf("blocker tid %ld lifetime %.6f sleep_300ms %.6f read_pipe_200ms %.6f\n",
	       (long)syscall(SYS_gettid), since(&t0, CLOCK_MONOTONIC), slept, blocked);
	return NULL;
}

static void *writer(void *arg)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	prctl(PR_SET_NAME, "writer");
	writer_wait(0.5);
	if (write(pipefd[1], "x", 1) != 1)
		abort();
	printf("writer tid %ld lifetime %.6f\n", (long)syscall(SYS_gettid), since(&t0, CLOCK_MONOTONIC));
	return NULL;
}

int main(void)
{
	pthread_t th[3];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(pipefd) < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_create(&th[0], NULL, spinner, NULL);
	pthread_create(&th[1], NULL, blocker, NULL);
	pthread_create(&th[2], NULL, writer, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return 0;
}
