/* Lock-free actuation of pause and resume wishes (actuator.h). The wish is one word, so that a
 * pause from over the mark and a resume from under the lock cannot pass each other:
 * bit 0 paused, bits 1-15 the actuator__over() calls not settled yet, bits 16-63 the wishes. */
#include "record/lossless/actuator.h"

#define PAUSED 1u
#define PENDING_ONE (UINT64_C(1) << 1)
#define PENDING_MASK (UINT64_C(0x7fff) << 1)
#define WISH_ONE (UINT64_C(1) << 16)
#define STATE(w) ((w) & ~PENDING_MASK) /* what a call carries out: the wish and its number */

void actuator__init(struct actuator *a, actuator_set_fn set, void *ctx)
{
	atomic_init(&a->wish, 0);
	a->set = set;
	a->ctx = ctx;
}

/* Change the word by f (it returns the new word, or the old one for no change); returns
 * whether it changed the wanted state. */
static bool update(struct actuator *a, uint64_t (*f)(uint64_t o, bool arg), bool arg)
{
	uint64_t o = atomic_load_explicit(&a->wish, memory_order_relaxed), n;

	do {
		n = f(o, arg);
		if (n == o)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&a->wish, &o, n, memory_order_acq_rel,
							memory_order_relaxed));
	return STATE(n) != STATE(o);
}

static uint64_t set_state(uint64_t o, bool pause)
{
	return ((o & ~PAUSED) + WISH_ONE) | (pause ? PAUSED : 0);
}

uint64_t actuator__wish(struct actuator *a, bool pause)
{
	update(a, set_state, pause);
	return atomic_load_explicit(&a->wish, memory_order_relaxed) >> 16;
}

static uint64_t over(uint64_t o, bool unused)
{
	o += PENDING_ONE;
	return o & PAUSED ? o : set_state(o, true);
}

void actuator__over(struct actuator *a)
{
	update(a, over, false);
}

/* settled(): arg is the state decided; the caller's own over, if any, is settled first by
 * actuator__settled (a separate update: between the two only a pause can come, which holds). */
static uint64_t settle(uint64_t o, bool paused)
{
	if (!(o & PAUSED) == !paused)
		return o;
	if (!paused && (o & PENDING_MASK))
		return o; /* another report's pause from over the mark is yet to be settled */
	return set_state(o, paused);
}

static uint64_t unpend(uint64_t o, bool unused)
{
	return o - PENDING_ONE;
}

bool actuator__settled(struct actuator *a, bool paused, bool went_over)
{
	if (went_over)
		update(a, unpend, false);
	return update(a, settle, paused);
}

int actuator__run(struct actuator *a)
{
	uint64_t w = STATE(atomic_load_explicit(&a->wish, memory_order_acquire)), n;
	int err = 0;

	for (;;) {
		int r = a->set(a->ctx, w & PAUSED);

		if (r < 0 && !err)
			err = r;
		/* Acquire: a wish made after our call began is seen here, by us or by its maker,
		 * whose own call then began after ours. */
		n = STATE(atomic_load_explicit(&a->wish, memory_order_acquire));
		if (n == w)
			return err;
		w = n;
	}
}

bool actuator__wants_paused(const struct actuator *a)
{
	return atomic_load_explicit(&a->wish, memory_order_acquire) & PAUSED;
}
