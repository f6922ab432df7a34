// The shared library of the inlines workload: lib_work's loop is an inlined helper.
namespace inl {
static inline double mix_step(double x, long i)
{
	return x * 0.999 + (double)(i & 15) * 0.25;
}

double lib_work(long n)
{
	double acc = 0;

	for (long i = 0; i < n; i++)
		acc = mix_step(acc, i);
	return acc;
}
}
