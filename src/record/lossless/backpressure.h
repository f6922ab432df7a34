/* The --lossless watermark controller: reader threads report each ring's fill level after every
 * drain; the controller answers "pause the target" when any ring rises above the high mark and
 * "resume" only once every ring has fallen below the low mark. Each transition is answered
 * exactly once, to exactly one caller, even when many readers report at the same time; a report
 * that does not move its ring to another band (below low / between / above high) takes no lock. */
#ifndef PRECORD_BACKPRESSURE_H
#define PRECORD_BACKPRESSURE_H

#include <stdbool.h>
#include <stdint.h>

struct backpressure;

enum backpressure_action {
	BACKPRESSURE_NONE = 0,
	BACKPRESSURE_PAUSE,
	BACKPRESSURE_RESUME,
};

/* Called at the end of every re-decision (each report that moves a ring to another band), with
 * the controller's transition lock held, so calls come in the order of the decisions and never
 * overlap: action is PAUSE, RESUME (alternating, starting with PAUSE) or NONE, paused the state
 * decided, ring the ring blamed for a pause or else the reported one. The callback must not
 * call back into the controller. */
typedef void (*backpressure_action_fn)(void *ctx, enum backpressure_action action, bool paused,
				       unsigned int ring, uint64_t now_ns);

struct backpressure_stats {
	uint64_t nr_pauses;            /* PAUSE transitions so far */
	uint64_t paused_ns;            /* total paused time, including the pause in progress */
	uint64_t longest_pause_ns;     /* longest single pause, including the one in progress */
	uint64_t last_pause_start_ns;  /* now_ns of the latest PAUSE; 0 if never paused */
	bool paused;                   /* a pause is in progress */
};

/* A controller for nr_rings rings (>= 1) with watermarks in permille of a ring's size:
 * 0 < low < high < 1000 (a ring counts as over when fill > high, as drained when fill < low).
 * Returns NULL with errno EINVAL (bad arguments) or ENOMEM. */
struct backpressure *backpressure__new(unsigned int nr_rings, unsigned int high_permille, unsigned int low_permille);

/* Optional: have fn(ctx, ...) run for each re-decision, under the transition lock, before
 * backpressure__report returns it. Call before the first report. */
void backpressure__set_action_fn(struct backpressure *bp, backpressure_action_fn fn, void *ctx);

/* Optional, for a pause that waits for no lock (lossless.c): over(ctx, ring, now_ns), with the
 * ctx of the action fn, runs without the transition lock whenever a report moves a ring above
 * the high mark, before that report takes the lock; the same report's fn() follows, in the
 * same thread. Call before the first report. */
typedef void (*backpressure_over_fn)(void *ctx, unsigned int ring, uint64_t now_ns);
void backpressure__set_over_fn(struct backpressure *bp, backpressure_over_fn over);

/* Ring `ring` is fill_permille full (values above 1000 count as 1000) at time now_ns (any
 * monotonic clock, the same for every caller). Returns BACKPRESSURE_PAUSE or BACKPRESSURE_RESUME when this report
 * made the controller change state, BACKPRESSURE_NONE otherwise, or -EINVAL for a ring out of range.
 * Safe to call from any number of threads at once. */
int backpressure__report(struct backpressure *bp, unsigned int ring, unsigned int fill_permille, uint64_t now_ns);

/* Whether the controller is in the paused state (a relaxed snapshot). */
bool backpressure__paused(const struct backpressure *bp);

/* Accounting as of now_ns (used only to count the pause in progress, if any). */
void backpressure__stats(struct backpressure *bp, uint64_t now_ns, struct backpressure_stats *ret_stats);

/* The run ended at end_ns: a pause in progress counts until then, and nothing after it counts
 * (reports go on deciding, so that a paused target is still resumed, but stats stay as they
 * are). So paused time never exceeds the run, however long the stop takes. Idempotent: the
 * first call decides. */
void backpressure__end(struct backpressure *bp, uint64_t end_ns);

/* How many pauses ring `ring` caused (its report crossed the high mark while running); 0 for a
 * ring out of range. The per-ring counts sum to nr_pauses. */
uint64_t backpressure__ring_pauses(struct backpressure *bp, unsigned int ring);

/* The last fill level reported for ring (0 before any report or for a ring out of range). */
unsigned int backpressure__ring_fill(const struct backpressure *bp, unsigned int ring);

/* NULL is a no-op. */
void backpressure__free(struct backpressure *bp);

#endif
