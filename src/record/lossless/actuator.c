/* Lock-free actuation of pause and resume wishes (actuator.h). */
#include "record/lossless/actuator.h"

#define WISH_PAUSED 1u

void actuator__init(struct actuator *a, actuator_set_fn set, void *ctx)
{
	atomic_init(&a->wish, 0);
	atomic_init(&a->over_pending, 0);
	a->set = set;
	a->ctx = ctx;
}

uint64_t actuator__wish(struct actuator *a, bool pause)
{
	uint64_t o = atomic_load_explicit(&a->wish, memory_order_relaxed), n;

	do
		n = ((o >> 1) + 1) << 1 | (pause ? WISH_PAUSED : 0);
	while (!atomic_compare_exchange_weak_explicit(&a->wish, &o, n, memory_order_acq_rel,
						      memory_order_relaxed));
	return n >> 1;
}

int actuator__run(struct actuator *a)
{
	uint64_t w = atomic_load_explicit(&a->wish, memory_order_acquire), n;
	int err = 0;

	for (;;) {
		int r = a->set(a->ctx, w & WISH_PAUSED);

		if (r < 0 && !err)
			err = r;
		/* Acquire: a wish made after our call began is seen here, by us or by its maker,
		 * whose own call then began after ours. */
		n = atomic_load_explicit(&a->wish, memory_order_acquire);
		if (n == w)
			return err;
		w = n;
	}
}

bool actuator__over(struct actuator *a)
{
	atomic_fetch_add_explicit(&a->over_pending, 1, memory_order_acq_rel);
	if (!actuator__wants_paused(a))
		actuator__wish(a, true);
	return true; /* run even when the wish was made: its maker may be held before its call */
}

bool actuator__settled(struct actuator *a, bool paused, bool went_over)
{
	if (went_over)
		atomic_fetch_sub_explicit(&a->over_pending, 1, memory_order_acq_rel);
	if (actuator__wants_paused(a) == paused)
		return false;
	if (!paused && atomic_load_explicit(&a->over_pending, memory_order_acquire))
		return false;
	actuator__wish(a, paused);
	return true;
}

bool actuator__wants_paused(const struct actuator *a)
{
	return atomic_load_explicit(&a->wish, memory_order_acquire) & WISH_PAUSED;
}
