// A C++ workload for comparing preport with perf report: its time goes, in roughly fixed
// shares, to a shared library (mix::lib_crunch in libmixed.so), the main binary
// (main_loop_work), a recursion eight calls deep (recurse, self time at every level) and two
// instantiations of a function template and a class template method. Built twice: mixed with
// -fomit-frame-pointer (DWARF unwinding must do it all) and mixed-fp with frame pointers.
// Usage: mixed [SECONDS] [THREADS]  (default 1 s, 1 thread). With MIXED_CPU=1 in the environment
// each thread runs SECONDS of its own CPU time, not of the clock: as many samples however busy
// the machine is.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

namespace mix {
double lib_crunch(long n);
}

static volatile double sink;

extern "C" __attribute__((noinline)) double main_loop_work(long n)
{
	double acc = 0;

	for (long i = 1; i <= n; i++)
		acc += (double)(i % 7) / (double)(i % 13 + 1);
	return acc;
}

// Self time at every depth, so each level's children include the deeper ones.
__attribute__((noinline)) double recurse(int depth, long n)
{
	double acc = 0;

	for (long i = 1; i <= n; i++)
		acc += (double)(i ^ depth) * 0.5;
	if (depth > 0)
		acc += recurse(depth - 1, n);
	asm volatile("" ::: "memory"); // keeps the call from becoming a tail call
	return acc;
}

template <typename T> __attribute__((noinline)) T poly_sum(long n)
{
	T acc = 0;

	for (long i = 1; i <= n; i++) {
		T x = (T)(i % 1000) * (T)0.001;
		acc += ((x * (T)3 + (T)2) * x + (T)1) * x;
	}
	return acc;
}

template <int N> struct Mat {
	double a[N][N];

	__attribute__((noinline)) void mul_into(const Mat &b, Mat &out) const
	{
		for (int i = 0; i < N; i++)
			for (int j = 0; j < N; j++) {
				double s = 0;

				for (int k = 0; k < N; k++)
					s += a[i][k] * b.a[k][j];
				out.a[i][j] = s;
			}
	}
};

__attribute__((noinline)) static double run_templates(void)
{
	static Mat<24> x, y, z;
	double acc = poly_sum<double>(60000) + poly_sum<float>(60000);

	x.a[1][2] = acc;
	y.a[2][1] = 1.0;
	x.mul_into(y, z);
	return acc + z.a[1][1];
}

__attribute__((noinline)) double run_round(void)
{
	return mix::lib_crunch(150000) + main_loop_work(100000) + recurse(8, 12000) +
	       run_templates();
}

static double secs = 1.0;
static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void)
{
	struct timespec t;

	clock_gettime(clock_id, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	double end = now() + secs, acc = 0;

	do {
		for (int i = 0; i < 5; i++)
			acc += run_round();
	} while (now() < end);
	sink = acc;
	return arg;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t tid[64];

	const char *cpu = getenv("MIXED_CPU");

	secs = argc > 1 ? atof(argv[1]) : 1.0;
	if (cpu && *cpu == '1')
		clock_id = CLOCK_THREAD_CPUTIME_ID;
	if (threads < 1 || threads > 64)
		threads = 1;
	for (int i = 1; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, NULL);
	worker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("%d\n", sink > 0);
	return 0;
}
