/* Watermark controller for --lossless. Each ring sits in one of three bands (below the low mark,
 * between the marks, above the high mark), kept in an atomic per ring. A report that leaves its
 * ring in the same band returns at once without a lock; a band change takes the transition lock
 * and re-evaluates from every ring's current band, so the last band change always decides with
 * the final picture and each PAUSE / RESUME is handed out exactly once. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "record/lossless/backpressure.h"

enum band {
	BAND_LOW = 0, /* fill < low: drained */
	BAND_MID,     /* low <= fill <= high */
	BAND_HIGH,    /* fill > high */
};

/* One cache line per ring: each ring is normally reported by its own reader thread. */
struct backpressure_ring {
	_Atomic unsigned int band;
	_Atomic unsigned int fill;
	uint64_t pauses; /* under bp->lock */
} __attribute__((aligned(64)));

struct backpressure {
	unsigned int nr_rings;
	unsigned int high;
	unsigned int low;
	_Atomic bool paused;

	pthread_mutex_t lock; /* serializes transitions, the callback and the accounting below */
	backpressure_action_fn fn;
	backpressure_over_fn over;
	void *fn_ctx;
	uint64_t nr_pauses;
	uint64_t paused_ns;        /* completed pauses only */
	uint64_t longest_pause_ns; /* completed pauses only */
	uint64_t pause_start_ns;
	bool ended;                /* backpressure__end: the accounting above is final */

	struct backpressure_ring *rings;
};

struct backpressure *backpressure__new(unsigned int nr_rings, unsigned int high_permille, unsigned int low_permille)
{
	struct backpressure *bp;

	if (nr_rings == 0 || low_permille == 0 || low_permille >= high_permille ||
	    high_permille >= 1000) {
		errno = EINVAL;
		return NULL;
	}
	bp = calloc(1, sizeof(*bp));
	if (!bp)
		return NULL;
	bp->nr_rings = nr_rings;
	bp->high = high_permille;
	bp->low = low_permille;
	{
		/* Priority inheritance: the real-time watcher may wait for this lock while
		 * a reader at normal priority holds it; without it the reader could sit
		 * preempted by the very target that should have been paused. */
		pthread_mutexattr_t ma;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
		pthread_mutex_init(&bp->lock, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	if (posix_memalign((void **)&bp->rings, 64, sizeof(*bp->rings) * nr_rings)) {
		bp->rings = NULL;
		backpressure__free(bp);
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned int i = 0; i < nr_rings; i++) {
		atomic_init(&bp->rings[i].band, BAND_LOW);
		atomic_init(&bp->rings[i].fill, 0);
		bp->rings[i].pauses = 0;
	}
	return bp;
}

void backpressure__set_action_fn(struct backpressure *bp, backpressure_action_fn fn, void *ctx)
{
	pthread_mutex_lock(&bp->lock);
	bp->fn = fn;
	bp->fn_ctx = ctx;
	pthread_mutex_unlock(&bp->lock);
}

void backpressure__set_over_fn(struct backpressure *bp, backpressure_over_fn over)
{
	pthread_mutex_lock(&bp->lock);
	bp->over = over;
	pthread_mutex_unlock(&bp->lock);
}

static enum band band_of(const struct backpressure *bp, unsigned int fill)
{
	if (fill > bp->high)
		return BAND_HIGH;
	if (fill < bp->low)
		return BAND_LOW;
	return BAND_MID;
}

/* Under bp->lock: add the pause in progress, from its start to end_ns, to the totals. Clocks of
 * different readers may disagree by a little: never count negative time. */
static void count_pause(struct backpressure *bp, uint64_t end_ns)
{
	uint64_t d = end_ns > bp->pause_start_ns ? end_ns - bp->pause_start_ns : 0;

	bp->paused_ns += d;
	if (d > bp->longest_pause_ns)
		bp->longest_pause_ns = d;
}

/* Under bp->lock: decide from every ring's current band. The cost is a scan of nr_rings atomics,
 * paid only on band changes. *ring becomes the ring blamed for a pause. */
static enum backpressure_action decide(struct backpressure *bp, unsigned int *ring, uint64_t now_ns)
{
	bool paused = atomic_load_explicit(&bp->paused, memory_order_relaxed);
	unsigned int blame = bp->nr_rings;
	bool all_low = true;

	for (unsigned int i = 0; i < bp->nr_rings; i++) {
		/* Acquire pairs with the acq_rel exchange in backpressure__report. */
		enum band b = atomic_load_explicit(&bp->rings[i].band, memory_order_acquire);

		if (b != BAND_LOW)
			all_low = false;
		if (b == BAND_HIGH && (blame == bp->nr_rings || i == *ring))
			blame = i;
	}

	/* After backpressure__end the decisions go on (a target must still be resumed) but are
	 * no longer counted: they fall outside the run. */
	if (!paused && blame < bp->nr_rings) {
		atomic_store_explicit(&bp->paused, true, memory_order_relaxed);
		if (!bp->ended) {
			bp->nr_pauses++;
			bp->rings[blame].pauses++;
			bp->pause_start_ns = now_ns;
		}
		*ring = blame;
		return BACKPRESSURE_PAUSE;
	}
	if (paused && all_low) {
		atomic_store_explicit(&bp->paused, false, memory_order_relaxed);
		if (!bp->ended)
			count_pause(bp, now_ns);
		return BACKPRESSURE_RESUME;
	}
	return BACKPRESSURE_NONE;
}

int backpressure__report(struct backpressure *bp, unsigned int ring, unsigned int fill_permille, uint64_t now_ns)
{
	struct backpressure_ring *r;
	enum band nb, ob;
	enum backpressure_action a;

	if (ring >= bp->nr_rings)
		return -EINVAL;
	if (fill_permille > 1000)
		fill_permille = 1000;
	r = &bp->rings[ring];
	atomic_store_explicit(&r->fill, fill_permille, memory_order_relaxed);

	/* Fast path: same band as last time, nothing can change. */
	nb = band_of(bp, fill_permille);
	if (atomic_load_explicit(&r->band, memory_order_relaxed) == nb)
		return BACKPRESSURE_NONE;
	/* The exchange gives every band change to exactly one reporter, which then re-decides. */
	ob = atomic_exchange_explicit(&r->band, nb, memory_order_acq_rel);
	if (ob == nb)
		return BACKPRESSURE_NONE;
	/* Set once before the first report: no lock needed to read it. */
	if (nb == BAND_HIGH && bp->over)
		bp->over(bp->fn_ctx, ring, now_ns);

	pthread_mutex_lock(&bp->lock);
	a = decide(bp, &ring, now_ns);
	if (bp->fn)
		bp->fn(bp->fn_ctx, a, atomic_load_explicit(&bp->paused, memory_order_relaxed), ring,
		       now_ns);
	pthread_mutex_unlock(&bp->lock);
	return a;
}

bool backpressure__paused(const struct backpressure *bp)
{
	return atomic_load_explicit(&bp->paused, memory_order_relaxed);
}

void backpressure__stats(struct backpressure *bp, uint64_t now_ns, struct backpressure_stats *ret_stats)
{
	struct backpressure_stats s = { 0 };

	pthread_mutex_lock(&bp->lock);
	s.nr_pauses = bp->nr_pauses;
	s.paused_ns = bp->paused_ns;
	s.longest_pause_ns = bp->longest_pause_ns;
	s.last_pause_start_ns = bp->nr_pauses ? bp->pause_start_ns : 0;
	s.paused = atomic_load_explicit(&bp->paused, memory_order_relaxed);
	if (s.paused && !bp->ended && now_ns > bp->pause_start_ns) {
		uint64_t d = now_ns - bp->pause_start_ns;

		s.paused_ns += d;
		if (d > s.longest_pause_ns)
			s.longest_pause_ns = d;
	}
	pthread_mutex_unlock(&bp->lock);
	*ret_stats = s;
}

void backpressure__end(struct backpressure *bp, uint64_t end_ns)
{
	pthread_mutex_lock(&bp->lock);
	if (!bp->ended) {
		if (atomic_load_explicit(&bp->paused, memory_order_relaxed))
			count_pause(bp, end_ns);
		bp->ended = true;
	}
	pthread_mutex_unlock(&bp->lock);
}

uint64_t backpressure__ring_pauses(struct backpressure *bp, unsigned int ring)
{
	uint64_t n;

	if (ring >= bp->nr_rings)
		return 0;
	pthread_mutex_lock(&bp->lock);
	n = bp->rings[ring].pauses;
	pthread_mutex_unlock(&bp->lock);
	return n;
}

unsigned int backpressure__ring_fill(const struct backpressure *bp, unsigned int ring)
{
	if (ring >= bp->nr_rings)
		return 0;
	return atomic_load_explicit(&bp->rings[ring].fill, memory_order_relaxed);
}

void backpressure__free(struct backpressure *bp)
{
	if (!bp)
		return;
	pthread_mutex_destroy(&bp->lock);
	free(bp->rings);
	free(bp);
}
