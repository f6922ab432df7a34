/* A program built with -fomit-frame-pointer that spends its time in a shared library
 * (hot_lib_work in libhot.so) and in the main binary (hot_main_work), in a fixed 3:2 ratio of
 * work. Usage: hotlib [SECONDS]  (default 1). Used by the integration tests, the demo and
 * the benches. With HOTLIB_CPU=1 in the environment SECONDS are of its own CPU time, not of the
 * clock: as many samples however busy the machine is. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double hot_lib_work(long n);

__attribute__((noinline)) double hot_main_work(long n)
{
	double acc = 0;

	for (long i = 1; i <= n; i++)
		acc += (double)(i % 7) / (double)(i % 13 + 1);
	return acc;
}

__attribute__((noinline)) double run_round(void)
{
	return hot_lib_work(300000) + hot_main_work(200000);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, sink = 0;
	struct timespec t0, t;
	const char *cpu = getenv("HOTLIB_CPU");
	clockid_t clk = cpu && *cpu == '1' ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;

	clock_gettime(clk, &t0);
	do {
		for (int i = 0; i < 10; i++)
			sink += run_round();
		clock_gettime(clk, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%g\n", sink > 0 ? 1.0 : 0.0);
	return 0;
}
