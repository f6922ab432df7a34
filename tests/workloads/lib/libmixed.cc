// The shared-library part of the mixed workload: a C++ function in a namespace (its name must
// be demangled) that spends about a third of the workload's time. Built with and without frame
// pointers (libmixed.so, libmixed-fp.so).
#include <cmath>

namespace mix {

__attribute__((noinline)) double lib_crunch(long n)
{
	double acc = 0;

	for (long i = 1; i <= n; i++)
		acc += std::sqrt((double)i) * 1.0000001;
	return acc;
}

} // namespace mix
