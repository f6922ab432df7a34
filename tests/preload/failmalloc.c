/* An LD_PRELOAD allocator that fails one chosen allocation, as SQLite's tests do: in a program
 * named FAILMALLOC_PROG (the file name of /proc/self/exe, e.g. "precord"), the Nth call of
 * malloc, calloc or realloc (FAILMALLOC_NTH=N; its forks go on from the count they inherit)
 * returns NULL with errno ENOMEM; every other call goes to glibc. N=0 fails none. With
 * FAILMALLOC_COUNT=PATH the number of calls is written to PATH at exit, to choose N. Other
 * programs (timeout, the profiled command) allocate normally. Calls made by libdw itself are
 * neither counted nor failed: elfutils 0.188 asserts on a failed allocation in its concurrent
 * hash tables (dynamicsizehash_concurrent.c, resize_coordinator), an abort no caller of libdw
 * can handle; with several threads the Nth call lands there now and then. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

static atomic_ulong calls;
static unsigned long nth;
static char count_path[4096];
/* libdw's code, from /proc/self/maps at start (it is a DT_NEEDED library, mapped by then) */
static uintptr_t dw_lo, dw_hi;

static void find_libdw(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4608];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && perms[2] == 'x' &&
		    strstr(line, "/libdw")) {
			dw_lo = lo;
			dw_hi = hi;
			break;
		}
	}
	fclose(f);
}

__attribute__((constructor)) static void failmalloc_init(void)
{
	const char *n = getenv("FAILMALLOC_NTH"), *c = getenv("FAILMALLOC_COUNT");
	const char *prog = getenv("FAILMALLOC_PROG"), *base;
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (!prog || len <= 0)
		return;
	exe[len] = 0;
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	if (strcmp(base, prog))
		return;
	find_libdw();	/* before nth is set: its own allocations never fail */
	nth = n ? strtoul(n, NULL, 10) : 0;
	if (c)
		snprintf(count_path, sizeof(count_path), "%s", c);
}

__attribute__((destructor)) static void failmalloc_fini(void)
{
	char buf[32];
	int fd, n;

	if (!count_path[0])
		return;
	fd = open(count_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "%lu\n", (unsigned long)atomic_load(&calls));
	if (write(fd, buf, (size_t)n) != n)
		n = 0;
	close(fd);
}

static int fail_now(uintptr_t caller)
{
	unsigned long k;

	if (caller >= dw_lo && caller < dw_hi)
		return 0;
	k = atomic_fetch_add(&calls, 1) + 1;

	if (nth && k == nth) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *malloc(size_t size)
{
	return fail_now((uintptr_t)__builtin_return_address(0)) ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return fail_now((uintptr_t)__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return fail_now((uintptr_t)__builtin_return_address(0)) ? NULL : __libc_realloc(p, size);
}
