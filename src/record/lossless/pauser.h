/* Pausing and resuming the profiled target for --lossless, as a whole: every thread of every
 * process, including those forked or exec'd during the run. Three mechanisms, preferred in this
 * order: the cgroup v2 freezer (cgroup.freeze), the cgroup v1 freezer (freezer.state), and
 * SIGSTOP/SIGCONT sent through pidfds to every known process. Each pauser has a guardian: a
 * small process forked at creation, outside the target, that thaws the target within
 * milliseconds if the recorder dies without saying goodbye (even by SIGKILL), so the target is
 * never left paused. Create the pauser early (before rings are mapped and threads started: the
 * guardian is a fork of the recorder), and do not reap unknown children with waitpid(-1): the
 * guardian is one, and pauser__free reaps it. */
#ifndef PRECORD_PAUSE_H
#define PRECORD_PAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pauser;

enum pause_mech {
	PAUSE_MECH_AUTO = 0, /* cgroup v2, else cgroup v1, else signals (-p: signals) */
	PAUSE_MECH_CGROUP2,
	PAUSE_MECH_CGROUP1,
	PAUSE_MECH_SIGNALS,
};

struct pauser_opts {
	enum pause_mech mech;
	/* Directory in which to create our cgroup (a cgroup2 or cgroup v1 freezer directory).
	 * NULL: the recorder's own cgroup in the hierarchy found in /proc/self/mountinfo. */
	const char *cgroup_parent;
	/* Do not fork a guardian (tests of the guardian-less paths only). */
	bool no_guardian;
};

/* For a command not forked yet: with a cgroup mechanism, create and probe our cgroup (the
 * recorder stays outside it). Start the guardian. Returns NULL with errno: ENOENT / ENOTDIR /
 * EACCES for a bad cgroup_parent, ENOTSUP when it is not a usable cgroup (or the forced
 * mechanism is not available), ENOMEM, or what fork/socketpair failed with. */
struct pauser *pauser__new_for_command(const struct pauser_opts *opts);

/* For running processes (-p): signals only; we never move a user's running processes between
 * cgroups. pids may name threads (their process is used). Returns NULL with errno: ESRCH for a
 * pid that does not exist, EINVAL for our own pid or n == 0, ENOTSUP when a cgroup mechanism is
 * forced, ENOMEM. opts may be NULL. */
struct pauser *pauser__new_for_pids(const pid_t *pids, size_t n, const struct pauser_opts *opts);

/* Make pid (the forked command, held before exec) part of the target: with a cgroup, move it
 * into ours (frozen at once if we are paused); with signals, track it. Returns 0 or -errno
 * (-ESRCH when it is gone). */
int pauser__adopt(struct pauser *p, pid_t pid);

/* The target's processes make up process group pgid too (a command leading its own group):
 * the guardian also SIGCONTs that group if the recorder dies (the --lossless backstop stops the
 * group with SIGSTOP). */
void pauser__group(struct pauser *p, pid_t pgid);

/* The recorder saw a FORK record for pid/tid (or an EXIT record). With signals a new process is
 * tracked (and stopped at once if we are paused); an exited one is forgotten. No-ops with a
 * cgroup, where the kernel keeps children in place. Return 0 or -errno (-ENOMEM). */
int pauser__task_new(struct pauser *p, pid_t pid, pid_t tid);
int pauser__task_exit(struct pauser *p, pid_t pid, pid_t tid);

/* Ask every task of the target to stop, or to run again. (With signals, resuming also
 * continues a process that someone else had stopped meanwhile: SIGCONT cannot tell.) They return without waiting for the
 * kernel to carry it out (pauser__wait_stopped does), so they are cheap enough to call from a
 * reader thread: a write to one cgroup file, or one signal per process plus, on pause, a rescan
 * of the known processes' children in /proc (a safety net for forks not yet reported).
 * Return 0 or -errno (the write's error with a freezer; with signals, processes that are gone
 * are forgotten silently). Pausing while paused or resuming while running is harmless.
 * Thread-safe; with a freezer they take no lock of ours, so calls from several threads may
 * reach the kernel in any order: the caller makes the last one right (lossless.c, actuate). */
int pauser__pause(struct pauser *p);
int pauser__resume(struct pauser *p);

/* Wait until the kernel reports the whole target stopped (cgroup.events "frozen 1",
 * freezer.state FROZEN, every thread of every process in state T/t or dead), at most
 * timeout_ms (0: check once). It holds the pauser's lock meanwhile: for tests and the bench,
 * not for reader threads. Returns 0, -ETIMEDOUT, -EINVAL when not paused, or -errno. */
int pauser__wait_stopped(struct pauser *p, int timeout_ms);

/* Pause and wait until stopped; *ret_ns is the latency from the request to the kernel's
 * confirmation (for the bench's distribution). Returns as pauser__wait_stopped. */
int pauser__measure_pause(struct pauser *p, int timeout_ms, uint64_t *ret_ns);

/* How fast this pauser's mechanism reacts here, now: a helper process that spins (forked from
 * the caller: call before threads hold locks a fork could copy) is paused and resumed `cycles`
 * times, 0.3 ms apart, each time timed from the request to the kernel's report that it stopped.
 * With a freezer the helper goes through our cgroup, which must hold no target yet (before
 * pauser__adopt); with signals a pauser of its own stops it (the -p targets are left alone).
 * A cycle that takes longer than timeout_ms ends the calibration (counted as timeout_ms).
 * *ret_worst_ns gets the slowest cycle, *ret_median_ns the median. Returns 0 or -errno. */
int pauser__calibrate(struct pauser *p, unsigned int cycles, int timeout_ms,
		      uint64_t *ret_worst_ns, uint64_t *ret_median_ns);

bool pauser__paused(const struct pauser *p);
enum pause_mech pauser__mechanism(const struct pauser *p);
/* "cgroup2-freezer", "cgroup1-freezer" or "signals". */
const char *pauser__mechanism_name(const struct pauser *p);
/* Our cgroup directory, NULL with signals. */
const char *pauser__cgroup_path(const struct pauser *p);
/* The guardian's pid, or 0 without one. */
pid_t pauser__guardian_pid(const struct pauser *p);

/* Resume the target, move any survivors back to the cgroup the recorder was created in and
 * remove ours, then dismiss the guardian and reap it. NULL is a no-op. */
void pauser__free(struct pauser *p);

#endif
