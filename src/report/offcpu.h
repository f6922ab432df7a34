/* Off-CPU and wall-clock profiles from a recording made with precord --off-cpu: a filter of the
 * report session that pairs each thread's switch-out (a sched:sched_switch sample: the stack
 * that blocked, and prev_state) with the same thread's next switch-in (a switch record), and
 * hands the sinks that stack weighted by the time between them, in ns, under a leaf frame that
 * names the thread's state. In wall-clock mode the on-CPU samples (cpu-clock or task-clock)
 * pass too, each weighted by the thread's on-CPU time since its previous one (as the switches
 * measure it), so on-CPU and off-CPU time share one profile. It also keeps
 * each thread's on-CPU time (between its switch-ins and switch-outs) and off-CPU time by state:
 * the two add up to the thread's lifetime as the recording saw it. */
#ifndef PRECORD_REPORT_OFFCPU_H
#define PRECORD_REPORT_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

#include "report/session.h"

enum offcpu_mode {
	OFFCPU_ONLY, /* off-CPU time only */
	OFFCPU_WALL, /* on-CPU samples plus off-CPU time */
};

enum offcpu_state {
	OFFCPU_SLEEPING,  /* S: interruptible sleep (nanosleep, poll, a pipe, a futex) */
	OFFCPU_IO,        /* D: uninterruptible, mostly I/O */
	OFFCPU_PREEMPTED, /* R, R+: runnable, switched out by the scheduler or a yield */
	OFFCPU_OTHER,     /* T, t, P, I, ... */
	OFFCPU_NR_STATES,
};

struct offcpu_thread {
	int32_t pid, tid;
	char comm[16];
	uint64_t start, end;               /* first and last time the recording saw it (ns) */
	uint64_t on_ns;                    /* between its switch-ins and switch-outs */
	uint64_t off_ns[OFFCPU_NR_STATES]; /* between its switch-outs and switch-ins, by state */
	uint64_t nr_switches;              /* switch-outs paired with a switch-in */
};

struct offcpu;

/* Errors: offcpu__setup returns -errno and leaves the reason, what the file lacks (the caller
 * names the file), in offcpu__error() (see README, "How it works"). */

/* An idle view. Returns NULL with errno ENOMEM (the only failure: nothing to explain). */
struct offcpu *offcpu__new(void);

/* Set the view's filter on s (before report_session__run). Returns 0, -ENOENT no
 * sched:sched_switch samples or no switch records (record with precord --off-cpu); -EINVAL
 * (wall) no cpu-clock or task-clock event; -EBADMSG the file's tracing data does not describe
 * sched_switch's prev_state; -EBUSY a filter is already set on s, or o is already set up. */
int offcpu__setup(struct offcpu *o, struct report_session *s, enum offcpu_mode mode);

/* Why offcpu__setup failed; "" if it did not. */
const char *offcpu__error(const struct offcpu *o);

/* The event index the filter's samples carry: the report to print. */
size_t offcpu__attr(const struct offcpu *o);

/* Name of a state's leaf frame ("[sleeping]", ...). */
const char *offcpu__state_name(enum offcpu_state st);

/* The threads seen, in order of first appearance (valid after the run, until free). */
size_t offcpu__nr_threads(const struct offcpu *o);
const struct offcpu_thread *offcpu__thread(const struct offcpu *o, size_t i);

void offcpu__free(struct offcpu *o);

#endif
