/* Lock-free actuation of pause and resume wishes (actuator.h). */
#include "record/lossless/actuator.h"

#define WISH_PAUSED 1u

void actuator__init(struct actuator *a, actuator_set_fn set, void *ctx)
{
	atomic_init(&a->wish, 0);
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

bool actuator__wants_paused(const struct actuator *a)
{
	return atomic_load_explicit(&a->wish, memory_order_acquire) & WISH_PAUSED;
}
