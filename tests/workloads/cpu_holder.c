/* Holds CPUs away from everything else, as a hypervisor does when it runs another guest on this
 * machine's virtual CPUs: one thread per CPU, pinned to it at SCHED_FIFO 99 (above precord's
 * watchers at 20), spins for BUSY_MS (0.5-1.5 times that, at random) then sleeps for
 * PERIOD_MS - BUSY_MS (likewise), until the file STOP exists or for at most SECS seconds.
 * It starts once the file GO exists (so that a recorder's start-up is left alone) and prints
 * to stderr how many holds it made and the longest:
 *   cpu_holder: holds N longest_ms M
 * Usage: cpu_holder BUSY_MS PERIOD_MS SECS GO STOP. Needs CAP_SYS_NICE; exits 77 without it. */
#define _GNU_SOURCE /* CPU_SET, pthread_setaffinity_np */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double busy_s, period_s, end_t;
static const char *stop_file;
static atomic_long holds;
static _Atomic double longest;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double jitter(unsigned int *seed)
{
	return 0.5 + rand_r(seed) / (double)RAND_MAX;
}

static void *holder(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg * 7919u + (unsigned int)getpid();

	while (now() < end_t && access(stop_file, F_OK) != 0) {
		double idle = (period_s - busy_s) * jitter(&seed), t0, until;
		struct timespec ts = { (time_t)idle, (long)((idle - (time_t)idle) * 1e9) };
		double o;

		nanosleep(&ts, NULL);
		t0 = now();
		until = t0 + busy_s * jitter(&seed);
		while (now() < until)
			;
		atomic_fetch_add(&holds, 1);
		o = atomic_load(&longest);
		while (until - t0 > o && !atomic_compare_exchange_weak(&longest, &o, until - t0))
			;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct sched_param sp = { .sched_priority = 99 };
	pthread_t *th;

	if (argc != 6) {
		fprintf(stderr, "usage: cpu_holder BUSY_MS PERIOD_MS SECS GO STOP\n");
		return 2;
	}
	busy_s = atof(argv[1]) / 1e3;
	period_s = atof(argv[2]) / 1e3;
	stop_file = argv[5];
	if (busy_s <= 0 || period_s <= busy_s || ncpu < 1) {
		fprintf(stderr, "cpu_holder: BUSY_MS must be above 0 and below PERIOD_MS\n");
		return 2;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
		fprintf(stderr, "cpu_holder: SCHED_FIFO: %s\n", strerror(errno));
		return 77;
	}
	/* Wait for GO (or STOP: the recorder never started its command) in 1 ms naps. */
	end_t = now() + atof(argv[3]);
	while (access(argv[4], F_OK) != 0 && access(stop_file, F_OK) != 0 && now() < end_t)
		usleep(1000);
	th = calloc((size_t)ncpu, sizeof(*th));
	if (!th)
		return 1;
	for (long i = 0; i < ncpu; i++) {
		pthread_attr_t a;
		cpu_set_t set;

		pthread_attr_init(&a);
		pthread_attr_setinheritsched(&a, PTHREAD_INHERIT_SCHED);
		CPU_ZERO(&set);
		CPU_SET((int)i, &set);
		pthread_attr_setaffinity_np(&a, sizeof(set), &set);
		if (pthread_create(&th[i], &a, holder, (void *)i)) {
			fprintf(stderr, "cpu_holder: cannot start a thread\n");
			return 1;
		}
		pthread_attr_destroy(&a);
	}
	for (long i = 0; i < ncpu; i++)
		pthread_join(th[i], NULL);
	fprintf(stderr, "cpu_holder: holds %ld longest_ms %.1f\n", atomic_load(&holds),
		atomic_load(&longest) * 1e3);
	free(th);
	return 0;
}
