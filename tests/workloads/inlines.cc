// A C++ -O2 workload whose profile is mostly inlined code, for comparing preport's inlined
// frames with perf report's: std::sort with a lambda comparator (std::sort and its helpers are
// inlined into main and std::__introsort_loop), a lambda called directly (inlined into main), a
// function in a shared library with an inlined helper (libinlines.so), a static function GCC
// clones ("[clone .constprop.0]"), and calls to libm's cos through the PLT.
// Usage: inlines [SECONDS]  (default 1 s; with INLINES_CPU=1 in the environment, of its own CPU
// time, so a recording holds as many samples however busy the machine is).
#include <algorithm>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <vector>

namespace inl {
double lib_work(long n);
}

struct params {
	double scale;
	long n;
	int unused[8];
};

static volatile double sink;

static __attribute__((noinline)) double scaled(const params &p, long k)
{
	double acc = 0;

	for (long i = 0; i < k; i++)
		acc += p.scale * (double)(i % 5);
	return acc;
}

static __attribute__((noinline)) double cos_calls(long n)
{
	double s = 0;

	for (long i = 0; i < n; i++)
		s += cos((double)i * 1e-3);
	return s;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	const char *cpu = getenv("INLINES_CPU");
	clockid_t clk = cpu && *cpu == '1' ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
	struct timespec t0, t;
	std::vector<unsigned> v(20000);
	unsigned seed = 1;
	params p = { 1.5, 1000, {} };
	auto body = [&](long n) {
		double a = 0;

		for (long i = 0; i < n; i++)
			a += (double)(i % 11) * p.scale;
		return a;
	};

	clock_gettime(clk, &t0);
	do {
		for (auto &x : v)
			x = seed = seed * 1103515245u + 12345u;
		std::sort(v.begin(), v.end(), [](unsigned a, unsigned b) { return (a >> 3) < (b >> 3); });
		sink = sink + body(100000);
		sink = sink + inl::lib_work(100000);
		sink = sink + scaled(p, 50000);
		sink = sink + cos_calls(30000);
		clock_gettime(clk, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < secs);
	return 0;
}
