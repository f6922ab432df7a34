/* The monotonic clock in the units the modules count in. Every timeout, rate and duration of
 * precord is measured on CLOCK_MONOTONIC (never the wall clock, which can jump); sample
 * timestamps are the kernel's perf clock and are not read here. */
#ifndef PRECORD_CLOCK_H
#define PRECORD_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on CLOCK_MONOTONIC. Cannot fail (the clock exists on every Linux). */
static inline uint64_t clock__ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Microseconds on CLOCK_MONOTONIC (systemd's MONOTONIC_USEC). */
static inline uint64_t clock__us(void)
{
	return clock__ns() / 1000;
}

/* Milliseconds on CLOCK_MONOTONIC. */
static inline uint64_t clock__ms(void)
{
	return clock__ns() / 1000000;
}

/* Seconds on CLOCK_MONOTONIC, for rates and elapsed times shown to people. */
static inline double clock__s(void)
{
	return (double)clock__ns() / 1e9;
}

#endif
