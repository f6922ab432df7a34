/* --lossless glue: fill reports from the readers go to the watermark controller (bp), whose
 * transitions pause and resume the target through the pauser. The controller calls on_action
 * under its own lock, so PAUSE and RESUME reach the pauser in the order they were decided; our
 * lock makes the final release win over any transition racing with it. */
#include "record/lossless/lossless.h"

#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/lossless/backpressure.h"
#include "record/lossless/backstop.h"
#include "record/lossless/lookahead.h"
#include "record/lossless/pauser.h"
#include "record/lossless/procset.h"
#include "ringbuf/ringbuf.h"
#include "lib/clock.h"

struct lossless {
	struct backpressure *bp;
	/* the watcher: samples every ring's fill level on a short timer, so a reader that is
	 * busy compressing or blocked in write() cannot hide a filling ring */
	pthread_t watcher;
	bool watching;
	sem_t watcher_up; /* posted once the watcher has made its first pass */
	struct ringbuf *const *rings;
	size_t nr_watched;
	struct lookahead *la;   /* when to look next */
	_Atomic uint64_t looks;
	uint64_t *heads, *used; /* per ring, at the latest look */
	/* What a pause let through, as the watcher sees it (its looks while paused are 0.1 ms
	 * apart): on_action notes each PAUSE's time and the rings' heads and bumps pause_gen;
	 * the watcher then follows the heads until the resume. */
	_Atomic uint64_t pause_gen;
	uint64_t pause_t, *pause_heads;   /* under lock */
	uint64_t track_gen, track_t, track_last, track_bytes, *track_heads; /* the watcher's */
	bool tracking;
	_Atomic uint64_t after_worst_ns, after_worst_bytes;
	unsigned int high_permille;
	double max_rate;
	struct pauser *p;
	struct backstop *bs;   /* NULL: none */
	pid_t pgid;            /* the command leads this process group: the backstop stops it */
	uint64_t calib_worst, calib_median; /* the pause's calibration, ns (0: not measured) */
	unsigned int calib_cycles;
	pthread_mutex_t lock;
	atomic_bool released;
	size_t nr_rings;
	uint64_t *by_ring;
	int action_err;
	char err[256];          /* lossless__error() */
};

static void on_action(void *ctx, enum backpressure_action a, unsigned int ring, uint64_t now)
{
	struct lossless *ll = ctx;
	int r = 0;

	pthread_mutex_lock(&ll->lock);
	if (!atomic_load(&ll->released)) {
		if (a == BACKPRESSURE_PAUSE) {
			if (ll->pause_heads) {
				for (size_t i = 0; i < ll->nr_watched; i++)
					ll->pause_heads[i] = ringbuf__head(ll->rings[i]);
				ll->pause_t = now;
				atomic_fetch_add_explicit(&ll->pause_gen, 1, memory_order_release);
			}
			/* The backstop (when on) first: it stops the target at its next sample, however
			 * long the freezer's write takes. */
			if (ll->bs)
				backstop__arm(ll->bs);
			r = pauser__pause(ll->p);
		} else if (a == BACKPRESSURE_RESUME) {
			if (ll->bs)
				backstop__disarm(ll->bs, false);
			r = pauser__resume(ll->p);
			if (ll->bs)
				backstop__cont(ll->bs);
		}
		if (r < 0 && !ll->action_err)
			ll->action_err = r;
	}
	pthread_mutex_unlock(&ll->lock);
}

/* While paused, look this often: the readers' reports resume the target as they drain, the
 * watcher's looks only back them up. */
#define WATCH_PAUSED_NS 100000

/* Above the readers' priority 10. */
#define WATCH_PRIORITY 20

static void track_end(struct lossless *ll)
{
	uint64_t d = ll->track_last > ll->track_t ? ll->track_last - ll->track_t : 0;

	if (!ll->tracking)
		return;
	ll->tracking = false;
	if (d > atomic_load_explicit(&ll->after_worst_ns, memory_order_relaxed))
		atomic_store_explicit(&ll->after_worst_ns, d, memory_order_relaxed);
	if (ll->track_bytes > atomic_load_explicit(&ll->after_worst_bytes, memory_order_relaxed))
		atomic_store_explicit(&ll->after_worst_bytes, ll->track_bytes, memory_order_relaxed);
}

/* After a look: follow what reaches the rings while paused, from the pause's decision on. */
static void track(struct lossless *ll, uint64_t t)
{
	uint64_t gen = atomic_load_explicit(&ll->pause_gen, memory_order_acquire);

	if (gen != ll->track_gen) {
		track_end(ll);
		pthread_mutex_lock(&ll->lock);
		ll->track_gen = atomic_load_explicit(&ll->pause_gen, memory_order_relaxed);
		ll->track_t = ll->track_last = ll->pause_t;
		memcpy(ll->track_heads, ll->pause_heads, ll->nr_watched * sizeof(uint64_t));
		pthread_mutex_unlock(&ll->lock);
		ll->track_bytes = 0;
		ll->tracking = true;
	}
	if (!ll->tracking)
		return;
	if (!backpressure__paused(ll->bp)) {
		track_end(ll);
		return;
	}
	for (size_t i = 0; i < ll->nr_watched; i++) {
		if (ll->heads[i] > ll->track_heads[i]) {
			ll->track_bytes += ll->heads[i] - ll->track_heads[i];
			ll->track_heads[i] = ll->heads[i];
			ll->track_last = t;
		}
	}
}

/* Look at every ring; returns how long to sleep before the next look (lookahead.h). */
static uint64_t look(struct lossless *ll)
{
	uint64_t t = clock__ns(), sleep;

	for (size_t i = 0; i < ll->nr_watched; i++) {
		size_t size = ringbuf__size(ll->rings[i]);

		ll->heads[i] = ringbuf__head(ll->rings[i]);
		ll->used[i] = ringbuf__used(ll->rings[i]);
		backpressure__report(ll->bp, (unsigned int)i,
			   ll->used[i] >= size ? 1000 : (unsigned int)(ll->used[i] * 1000 / size), t);
	}
	atomic_fetch_add_explicit(&ll->looks, 1, memory_order_relaxed);
	track(ll, t);
	sleep = lookahead__next(ll->la, ll->heads, ll->used, t);
	if (backpressure__paused(ll->bp) && sleep > WATCH_PAUSED_NS)
		sleep = WATCH_PAUSED_NS;
	return sleep;
}

static void *watcher_main(void *arg)
{
	struct lossless *ll = arg;
	bool first = true;

	while (!atomic_load_explicit(&ll->released, memory_order_relaxed)) {
		uint64_t sleep = look(ll);
		struct timespec ts = { (time_t)(sleep / 1000000000u), (long)(sleep % 1000000000u) };

		if (first) {
			sem_post(&ll->watcher_up);
			first = false;
		}
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	}
	if (first)
		sem_post(&ll->watcher_up);
	track_end(ll);
	return NULL;
}

int lossless__watch(struct lossless *ll, struct ringbuf *const *rings, size_t n)
{
	int r;

	if (!ll)
		return 0;
	if (ll->watching || n > ll->nr_rings)
		return -EINVAL;
	if (!n)
		return -EINVAL;
	ll->rings = rings;
	ll->nr_watched = n;
	ll->heads = calloc(n, sizeof(*ll->heads));
	ll->used = calloc(n, sizeof(*ll->used));
	ll->track_heads = calloc(n, sizeof(*ll->track_heads));
	ll->la = lookahead__new(n, ringbuf__size(rings[0]), ll->high_permille, ll->max_rate);
	if (!ll->heads || !ll->used || !ll->track_heads || !ll->la)
		return -errno;
	pthread_mutex_lock(&ll->lock);
	ll->pause_heads = calloc(n, sizeof(*ll->pause_heads));
	pthread_mutex_unlock(&ll->lock);
	if (!ll->pause_heads)
		return -ENOMEM;
	/* Real-time from its first instruction: set by the thread itself, the priority would
	 * wait for the thread's first turn on a CPU, which on a busy machine came 5 ms after
	 * the events were enabled, long enough to fill a ring. Without CAP_SYS_NICE it runs at
	 * normal priority. */
	{
		struct sched_param sp = { .sched_priority = WATCH_PRIORITY };
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
		r = pthread_create(&ll->watcher, &attr, watcher_main, ll);
		pthread_attr_destroy(&attr);
		if (r == EPERM)
			r = pthread_create(&ll->watcher, NULL, watcher_main, ll);
	}
	if (r)
		return -r;
	pthread_setname_np(ll->watcher, "precord-watch");
	ll->watching = true;
	/* The caller enables the events next: the watcher must be looking by then. */
	while (sem_wait(&ll->watcher_up) < 0 && errno == EINTR)
		;
	return 0;
}

static void stop_watcher(struct lossless *ll)
{
	if (ll->watching) {
		pthread_join(ll->watcher, NULL);
		ll->watching = false;
	}
}

void lossless__free(struct lossless *ll)
{
	if (!ll)
		return;
	lossless__release(ll);
	stop_watcher(ll);
	backstop__free(ll->bs);
	pauser__free(ll->p);
	backpressure__free(ll->bp);
	pthread_mutex_destroy(&ll->lock);
	sem_destroy(&ll->watcher_up);
	free(ll->by_ring);
	lookahead__free(ll->la);
	free(ll->heads);
	free(ll->used);
	free(ll->track_heads);
	free(ll->pause_heads);
	free(ll);
}

/* Cycles of the calibration at start, and the longest one allowed (a slower pause ends it). */
#define CALIB_CYCLES 8
#define CALIB_TIMEOUT_MS 50 /* RINGSIZE_MAX_REACTION_NS: slower is not sized for anyway */

/* Time the pause mechanism now, before the target is in place (pauser__calibrate). A failed
 * calibration leaves 0: the sizing then allows for RINGSIZE_REACTION_NS. */
static void calibrate(struct lossless *ll)
{
	const char *off = getenv("PRECORD_NO_CALIBRATE");

	if (off && *off && strcmp(off, "0"))
		return;
	if (pauser__calibrate(ll->p, CALIB_CYCLES, CALIB_TIMEOUT_MS, &ll->calib_worst,
			      &ll->calib_median) == 0)
		ll->calib_cycles = CALIB_CYCLES;
}

struct lossless *lossless__new(void)
{
	struct lossless *ll = calloc(1, sizeof(*ll));
	pthread_mutexattr_t ma;

	if (!ll)
		return NULL;
	/* Priority inheritance: the real-time watcher may wait for this lock while a reader at
	 * normal priority holds it; without it the reader could sit preempted by the very
	 * target that should have been paused. */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&ll->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	sem_init(&ll->watcher_up, 0, 0);
	return ll;
}

const char *lossless__error(const struct lossless *ll)
{
	return ll->err;
}

static int seterr(struct lossless *ll, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int seterr(struct lossless *ll, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ll->err, sizeof(ll->err), fmt, ap);
	va_end(ap);
	return err;
}

int lossless__setup(struct lossless *ll, const struct lossless_opts *o)
{
	int e;

	if (ll->bp)
		return seterr(ll, -EBUSY, "already set up");
	ll->nr_rings = o->nr_rings;
	ll->high_permille = o->high_permille;
	ll->max_rate = o->max_rate;
	ll->by_ring = calloc(o->nr_rings ? o->nr_rings : 1, sizeof(uint64_t));
	if (!ll->by_ring)
		return seterr(ll, -ENOMEM, "cannot allocate memory for the pause counters");
	ll->bp = backpressure__new((unsigned int)o->nr_rings, o->high_permille, o->low_permille);
	if (!ll->bp)
		return seterr(ll, -errno, "invalid watermarks (high %u%%, low %u%%): low must be at least 0.1%% and below high, high below 100%%",
			      o->high_permille / 10, o->low_permille / 10);
	if (o->nr_pids)
		ll->p = pauser__new_for_pids(o->pids, o->nr_pids, NULL);
	else
		ll->p = pauser__new_for_command(NULL);
	if (!ll->p) {
		e = errno;
		return seterr(ll, -e, "cannot prepare to pause the target: %s%s", strerror(e),
			      e == ESRCH ? " (no such process)" :
			      e == EACCES || e == EPERM ? " (pausing another user's processes needs root or CAP_KILL)" : "");
	}
	backpressure__set_action_fn(ll->bp, on_action, ll);
	calibrate(ll);
	return 0;
}

int lossless__backstop(struct lossless *ll, const int *fds, const pid_t *tids, size_t n)
{
	const char *on = getenv("PRECORD_BACKSTOP");
	struct backstop *bs;
	pid_t *owners;

	if (!ll)
		return 0;
	if (ll->bs || !on || !*on || !strcmp(on, "0"))
		return 0; /* off unless asked for: see lossless.h */
	/* The owner of a fd is the command's process group when it leads one (the kernel stops
	 * its children too), else a process (F_OWNER_PID wants a thread group leader): -p opens
	 * events on every thread. */
	owners = malloc(n * sizeof(pid_t));
	if (!owners)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		pid_t tgid = ll->pgid > 0 ? -ll->pgid : procset__tgid_of(tids[i]);

		owners[i] = tgid > 0 || ll->pgid > 0 ? tgid : tids[i];
	}
	bs = backstop__new(fds, owners, n);
	free(owners);
	if (!bs)
		return -errno;
	pthread_mutex_lock(&ll->lock);
	ll->bs = bs;
	pthread_mutex_unlock(&ll->lock);
	return 0;
}

int lossless__adopt(struct lossless *ll, pid_t pid)
{
	int r;

	if (!ll)
		return 0;
	r = pauser__adopt(ll->p, pid);
	if (!r && getpgid(pid) == pid) {
		ll->pgid = pid;
		pauser__group(ll->p, pid);
	}
	return r;
}

void lossless__fill(struct lossless *ll, size_t ring, unsigned int permille)
{
	if (!ll || atomic_load_explicit(&ll->released, memory_order_relaxed))
		return;
	backpressure__report(ll->bp, (unsigned int)ring, permille, clock__ns());
}

void lossless__task(struct lossless *ll, bool fork, uint32_t pid, uint32_t tid)
{
	if (!ll)
		return;
	if (fork)
		pauser__task_new(ll->p, (pid_t)pid, (pid_t)tid);
	else
		pauser__task_exit(ll->p, (pid_t)pid, (pid_t)tid);
}

void lossless__release(struct lossless *ll)
{
	if (!ll)
		return;
	pthread_mutex_lock(&ll->lock);
	if (!atomic_exchange(&ll->released, true)) {
		if (ll->bs)
			backstop__disarm(ll->bs, false);
		if (ll->p) /* NULL: lossless__setup failed before the pauser existed */
			pauser__resume(ll->p);
		if (ll->bs)
			backstop__cont(ll->bs);
	}
	pthread_mutex_unlock(&ll->lock);
	stop_watcher(ll);
}

int lossless__set_high(struct lossless *ll, unsigned int high_permille, unsigned int low_permille)
{
	struct backpressure *bp;

	if (!ll)
		return 0;
	if (ll->watching)
		return -EBUSY;
	bp = backpressure__new((unsigned int)ll->nr_rings, high_permille, low_permille);
	if (!bp)
		return -errno;
	backpressure__set_action_fn(bp, on_action, ll);
	backpressure__free(ll->bp);
	ll->bp = bp;
	ll->high_permille = high_permille;
	return 0;
}

void lossless__stats(const struct lossless *ll, struct lossless_stats *s)
{
	struct backpressure_stats bs;

	memset(s, 0, sizeof(*s));
	if (!ll)
		return;
	backpressure__stats(ll->bp, clock__ns(), &bs);
	s->mechanism = pauser__mechanism_name(ll->p);
	s->pauses = bs.nr_pauses;
	s->paused_total = bs.paused_ns / 1e9;
	s->paused_longest = bs.longest_pause_ns / 1e9;
	for (size_t i = 0; i < ll->nr_rings; i++)
		ll->by_ring[i] = backpressure__ring_pauses(ll->bp, (unsigned int)i);
	s->pauses_by_ring = ll->by_ring;
	s->nr_rings = ll->nr_rings;
	s->action_error = ll->action_err;
	s->looks = atomic_load(&((struct lossless *)ll)->looks);
	s->backstop = ll->bs != NULL;
	s->calib_worst_ns = ll->calib_worst;
	s->calib_median_ns = ll->calib_median;
	s->calib_cycles = ll->calib_cycles;
	s->after_worst_ns = atomic_load(&((struct lossless *)ll)->after_worst_ns);
	s->after_worst_bytes = atomic_load(&((struct lossless *)ll)->after_worst_bytes);
}
