/* Carrying out --lossless's pause and resume decisions without a lock held across the system
 * call. A decision only records the wish (a counter and the wanted state, one atomic word); the
 * thread that made it then calls set() until its last call was made for the latest wish. Calls
 * from several threads may reach the kernel in any order, so a stale call can land after a newer
 * one, but the thread that made the stale call sees the newer wish once its call returns and
 * sets again at once. What this buys: a thread held off its CPU in the middle of a resume (the
 * host's steal, a kernel without preemption held real-time threads 20-250 ms on the machines
 * precord is tested on) holds up no other thread's pause. */
#ifndef PRECORD_ACTUATOR_H
#define PRECORD_ACTUATOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Set the target paused (true) or running; returns 0 or -errno. Called by several threads at
 * once, for the same or for opposite states. */
typedef int (*actuator_set_fn)(void *ctx, bool pause);

struct actuator {
	_Atomic uint64_t wish; /* the wanted state, its number, the overs not settled (actuator.c) */
	actuator_set_fn set;
	void *ctx;
};

void actuator__init(struct actuator *a, actuator_set_fn set, void *ctx);

/* Record a wish; any thread, any lock. Returns its number (for tests). */
uint64_t actuator__wish(struct actuator *a, bool pause);

/* Call set() for the latest wish, again while a newer one came meanwhile. Returns 0 or the
 * first -errno of set() (it carries on through errors). */
int actuator__run(struct actuator *a);

/* Wishing from a watermark controller (backpressure.h), so that no pause waits for its lock.
 * actuator__over() when a report moves a ring above the high mark, before the report takes
 * the controller's lock: wishes a pause (right whatever the other rings say); call
 * actuator__run at once, even when the pause was wished already (its maker may be held before
 * its call). actuator__settled() under the lock after each decision, with the state decided
 * and whether this report called actuator__over(): makes the wish agree with the decision,
 * except that no resume is wished while another report's over is yet to be settled (that
 * report settles after this one, under the same lock; the count and the wish are one word, so
 * the two cannot pass each other). Returns whether it wished: then call actuator__run once the
 * lock is released. */
void actuator__over(struct actuator *a);
bool actuator__settled(struct actuator *a, bool paused, bool went_over);

/* The latest wish. */
bool actuator__wants_paused(const struct actuator *a);

#endif
