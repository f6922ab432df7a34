/* The shared-library half of unw_chain: unw_b and unw_c live here so that the unwinder has to
 * cross from the executable into this library and back (unw_c calls the executable's leaf). */
#include <stdint.h>

/* static and noinline: a frame only .symtab (not .dynsym) names. */
static __attribute__((noinline)) uint64_t unw_c(uint64_t (*leaf)(uint64_t), uint64_t n)
{
	uint64_t r = leaf(n);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

__attribute__((noinline)) uint64_t unw_b(uint64_t (*leaf)(uint64_t), uint64_t n)
{
	uint64_t r = unw_c(leaf, n + 1);
	__asm__ volatile("" : "+r"(r));
	return r * 3;
}
