/* The shared-library half of the hotlib workload: a CPU-bound loop that perf and precord must
 * attribute to hot_lib_work in libhot.so. Built with -fomit-frame-pointer on purpose. */
#include <math.h>

__attribute__((noinline)) double hot_lib_work(long n)
{
	double acc = 0;

	for (long i = 1; i <= n; i++)
		acc += sqrt((double)i) * 1.0000001;
	return acc;
}
