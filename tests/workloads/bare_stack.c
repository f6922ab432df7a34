/* Workload for samples whose user stack the kernel cannot copy: half of its CPU time spins in
 * spin_on_bare_stack() with the stack pointer moved into pages never touched (not present, so
 * the sampler's copy of the stack fails and the sample holds no stack at all, as in a thread's
 * first instructions), the other half in spin_on_own_stack() on its real stack, under main.
 * Runs argv[1] ms (default 400) of its own CPU time, however busy the machine is. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define BARE_SIZE (1 << 20)

volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* A few ms of register-only work with %rsp at top: nothing in the loop touches memory. */
__attribute__((noinline)) uint64_t spin_on_bare_stack(uint64_t x, char *top)
{
	uint64_t n = 4000000;

	__asm__ volatile("mov %%rsp, %%r12\n\t"
			 "mov %[top], %%rsp\n"
			 "1:\n\t"
			 "imul %[m], %[x]\n\t"
			 "add $1, %[x]\n\t"
			 "sub $1, %[n]\n\t"
			 "jnz 1b\n\t"
			 "mov %%r12, %%rsp"
			 : [x] "+r"(x), [n] "+r"(n)
			 : [top] "r"(top), [m] "r"(6364136223846793005ull)
			 : "r12", "cc");
	return x;
}

__attribute__((noinline)) uint64_t spin_on_own_stack(uint64_t x)
{
	for (int i = 0; i < 4000000; i++) {
		x = x * 6364136223846793005ull + 1;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int main(int argc, char **argv)
{
	uint64_t ms = argc > 1 ? strtoull(argv[1], NULL, 10) : 400, x = 1;
	/* never written: its pages stay absent for as long as the process runs */
	char *bare = mmap(NULL, BARE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (bare == MAP_FAILED)
		return 2;
	for (uint64_t end = now_ns() + ms * 1000000; now_ns() < end;) {
		x = spin_on_bare_stack(x, bare + BARE_SIZE / 2);
		x = spin_on_own_stack(x);
	}
	sink = x;
	return 0;
}
