/* --lossless for a record session: the watermark controller fed by the readers' fill reports,
 * wired to the pauser that stops and resumes the target. Every function accepts NULL (lossless
 * off) and then does nothing, so the session calls them unconditionally. */
#ifndef PRECORD_LOSSLESS_H
#define PRECORD_LOSSLESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct lossless;

struct lossless_opts {
	size_t nr_rings;
	unsigned int high_permille, low_permille;
	const pid_t *pids;      /* -p targets (paused with signals); none: a command, created
				 * before it is forked and then given to lossless__adopt */
	size_t nr_pids;
	double max_rate;        /* bytes per ns a ring can be written at most, as far as the
				 * events' settings tell; 0: unknown */
};

struct lossless_stats {
	const char *mechanism;  /* "cgroup2-freezer", "cgroup1-freezer", "signals" */
	uint64_t pauses;
	double paused_total, paused_longest; /* seconds */
	const uint64_t *pauses_by_ring;     /* nr_rings counters: which ring caused each pause */
	size_t nr_rings;
	int action_error;       /* first pause/resume failure (-errno), 0 if none */
	uint64_t looks;         /* the watcher's looks at the rings */
	bool backstop;          /* the kernel-side backstop is in use */
	uint64_t calib_worst_ns, calib_median_ns; /* the pause timed at start (0: not measured) */
	unsigned int calib_cycles;
	/* Of all pauses, as the watcher saw them (0.1 ms apart): the longest time from the
	 * decision to the rings' last growth before the resume, and the most bytes written into
	 * the rings meanwhile (all rings together). */
	uint64_t after_worst_ns, after_worst_bytes;
	/* The most a watcher's look came after the time it was planned for (its sleep, the
	 * scheduler, the host), ns; the fullest a ring was when its pause was decided, per mille. */
	uint64_t late_worst_ns;
	unsigned int decided_worst_permille;
	/* The longest one call to pause or to resume the target took (the freezer's write, or the
	 * signals), and the longest from a fill report to the call it decided, ns. */
	uint64_t pause_call_worst_ns, resume_call_worst_ns, act_wait_worst_ns;
	/* Looks at which a watcher carried a pause out again: its rings were still growing 1 ms
	 * after the decision (the thread that made it held off its CPU, say). */
	uint64_t reasserts;
};

/* Errors: every function that fails returns -errno; lossless__setup also leaves the reason in
 * lossless__error() (see README, "How it works"). */

/* An idle session. Returns NULL with errno ENOMEM (the only failure: nothing to explain). */
struct lossless *lossless__new(void);

/* Set up the pauser (and its guardian) for the target: before the command is forked, or
 * before any thread is started (the guardian is a fork of this process). The pause mechanism
 * is then timed on a helper process (pauser__calibrate, 8 cycles, a few milliseconds;
 * PRECORD_NO_CALIBRATE=1 skips it): lossless__stats has the figures, for sizing the rings.
 * Returns 0, -EINVAL for bad watermarks, -EBUSY when already set up, or -errno of preparing
 * the pauser (-ESRCH, -EPERM...), with the reason in lossless__error(). */
int lossless__setup(struct lossless *ll, const struct lossless_opts *opts);

/* The last failure of lossless__setup; "" if none. */
const char *lossless__error(const struct lossless *ll);

/* Other watermarks (per mille), before lossless__watch: e.g. a high mark lowered so that the
 * room above it covers the measured reaction. Returns 0, -EBUSY once watching, or -EINVAL. */
int lossless__set_high(struct lossless *ll, unsigned int high_permille, unsigned int low_permille);

/* Make the command (forked, held before exec) part of what is paused. When it leads a process
 * group of its own (target__fork_held_group), the backstop (when on) stops that whole group, and
 * the guardian continues it. Returns 0 or -errno. */
int lossless__adopt(struct lossless *ll, pid_t pid);

struct ringbuf;

/* With PRECORD_BACKSTOP=1 in the environment, arm the kernel-side backstop (backstop.h) on the
 * sampling events: fds[i] samples task tids[i]; each pause from now on also has the kernel
 * SIGSTOP that task's process at its next sample. Call after the events are opened, before they
 * are enabled. Off by default, where it does nothing and returns 0: on the 6.18 kernel of the
 * machines precord is tested on it made pauses slower, not faster (backstop.h). Returns 0 or
 * -errno (then pauses go by the pauser alone). */
int lossless__backstop(struct lossless *ll, const int *fds, const pid_t *tids, size_t n);

/* Start the watcher threads (real-time priority when permitted) that look at the rings' fill
 * levels independently of the readers, as often as their margins below the high mark and the
 * rate they can be written at require (lookahead.h): from every 0.1 ms to every 2 ms. With cpus
 * (ring i is written on CPU cpus[i]) one watcher per ring, pinned to its CPU, so that a CPU
 * the target runs on always runs its watcher too; without, one watcher for all. rings (all of
 * one size) must outlive the watchers, which stop at lossless__release. Returns 0 or -errno. */
int lossless__watch(struct lossless *ll, struct ringbuf *const *rings, const int *cpus, size_t n);

/* A reader saw ring's fill level (per mille); pauses or resumes the target as needed.
 * Thread-safe, lock-free when nothing changes. */
void lossless__fill(struct lossless *ll, size_t ring, unsigned int permille);

/* A task appeared (fork) or ended; keeps the signal pauser's task list current. */
void lossless__task(struct lossless *ll, bool fork, uint32_t pid, uint32_t tid);

/* The run ended at end_ns (CLOCK_MONOTONIC, clock__ns): the paused time in lossless__stats
 * stops there, so it never exceeds the run however long the stop takes (backpressure__end).
 * NULL is a no-op. */
void lossless__end(struct lossless *ll, uint64_t end_ns);

/* Resume the target for good (end of recording); later fill reports do nothing. */
void lossless__release(struct lossless *ll);

void lossless__stats(const struct lossless *ll, struct lossless_stats *ret);

/* Release, remove the cgroup, stop the guardian. NULL is a no-op. */
void lossless__free(struct lossless *ll);

#endif
