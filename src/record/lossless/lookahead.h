/* When the --lossless watcher must look at the rings again. Looking is not free: each look of a
 * real-time watcher preempts the target, and looking every 0.1 ms took 17% of a CPU on the
 * sched_yield storm and 20% of its wall time. So the watcher sleeps as long as the emptiest
 * margin allows: the time the fullest ring would take to reach the high mark if it were written
 * at the fastest rate known for it, the larger of a bound from the events' settings (samples per
 * second times the largest sample) and the fastest rate recently seen on that ring. Reaching the
 * high mark is safe by design: what lies above it absorbs the pause's own latency. */
#ifndef PRECORD_LOOKAHEAD_H
#define PRECORD_LOOKAHEAD_H

#include <stddef.h>
#include <stdint.h>

/* Bounds of a sleep, ns. */
#define LOOKAHEAD_MIN_NS 100000ull
#define LOOKAHEAD_MAX_NS 2000000ull
/* Rate assumed when the events give no bound (a sampling period, not a frequency): 256 MB/s. */
#define LOOKAHEAD_DEFAULT_BOUND 0.256 /* bytes per ns */
/* A ring's fastest seen rate halves every this many ns without being matched. */
#define LOOKAHEAD_PEAK_HALF_LIFE_NS 20000000ull

struct lookahead;

/* For nr_rings rings of ring_bytes each, pausing above high_permille; bound: bytes per ns a
 * ring can be written at most, as far as the settings tell (0: unknown). NULL on ENOMEM or
 * EINVAL (no ring, a zero size, high_permille not below 1000). */
struct lookahead *lookahead__new(size_t nr_rings, uint64_t ring_bytes, unsigned int high_permille,
				 double bound);

/* The rings' heads (bytes written since the start, the kernel's data_head) and bytes not yet
 * consumed, at now_ns (monotonic); returns how long to sleep before the next look. The first
 * call, with no rate seen yet, plans with the bound alone. */
uint64_t lookahead__next(struct lookahead *la, const uint64_t *heads, const uint64_t *used,
			 uint64_t now_ns);

/* The fastest rate the planner currently assumes for ring i, bytes per ns (for tests). */
double lookahead__rate(const struct lookahead *la, size_t ring);

void lookahead__free(struct lookahead *la);

#endif
