/* Workload for the unwind tests: a known call chain main -> unw_a -> unw_b (shared library)
 * -> unw_c (static in the library) -> unw_leaf (back in the executable), built with
 * -fomit-frame-pointer so that only DWARF CFI can unwind it. Spins for argv[1] ms (default 300)
 * of its own CPU time, so that a profiler samples it as often however busy the machine is. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

uint64_t unw_b(uint64_t (*leaf)(uint64_t), uint64_t n);

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) uint64_t unw_leaf(uint64_t n)
{
	uint64_t x = n;
	for (int i = 0; i < 200000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) uint64_t unw_a(uint64_t n)
{
	uint64_t r = unw_b(unw_leaf, n + 1);
	__asm__ volatile("" : "+r"(r));
	return r ^ n;
}

int main(int argc, char **argv)
{
	uint64_t ms = argc > 1 ? strtoull(argv[1], NULL, 0) : 300;
	uint64_t end = now_ns() + ms * 1000000ull, acc = 0;
	while (now_ns() < end)
		acc += unw_a(acc);
	return (int)(acc & 1);
}
