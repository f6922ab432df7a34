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

#include "record/lossless/actuator.h"
#include "record/lossless/backpressure.h"
#include "record/lossless/backstop.h"
#include "record/lossless/lookahead.h"
#include "record/lossless/pauser.h"
#include "record/lossless/procset.h"
#include "ringbuf/ringbuf.h"
#include "lib/clock.h"

/* A watcher: samples its rings' fill levels on a short timer, so a reader that is busy
 * compressing or blocked in write() cannot hide a filling ring. One per CPU, pinned to it at
 * real-time priority: whichever CPU the target runs on also runs a watcher, which preempts it
 * to look, even when the hypervisor holds the other CPUs (one watcher on one CPU saw rings on
 * the others fill while its own CPU was stolen). */
struct watcher {
	struct lossless *ll;
	pthread_t th;
	int cpu;                /* -1: not pinned */
	size_t *idx, n;         /* its rings (indexes into ll->rings) */
	struct lookahead *la;   /* when to look next */
	uint64_t *heads, *used; /* per ring of its own, at the latest look */
	uint64_t next_t;        /* when the latest look planned the next (0: none yet) */
	/* what a pause let into its rings: from on_action's note of the decision to the resume */
	uint64_t track_gen, track_t, track_last, track_bytes, *track_heads;
	bool tracking;
};

struct lossless {
	struct backpressure *bp;
	struct watcher *w;      /* nr_wslots of them, nr_w started */
	size_t nr_wslots, nr_w;
	bool watching;
	sem_t watcher_up; /* posted by each watcher once it has made its first pass */
	struct ringbuf *const *rings;
	size_t nr_watched;
	_Atomic uint64_t looks;
	/* What a pause let through, as the watchers see it (their looks while paused are 0.1 ms
	 * apart): on_action notes each PAUSE's time and the rings' heads and bumps pause_gen;
	 * the watchers then follow the heads until the resume. */
	_Atomic uint64_t pause_gen;
	uint64_t pause_t, *pause_heads;   /* under lock */
	_Atomic uint64_t after_worst_ns, after_worst_bytes;
	/* How late the watchers looked: the most a look came after its planned time, ns; and the
	 * fullest a ring was when its pause was decided, per mille. */
	_Atomic uint64_t late_worst_ns, decided_worst_permille;
	/* The longest a pause's or a resume's call took, and the longest from a fill report to
	 * the call it decided (the controller's lock), ns. */
	_Atomic uint64_t pause_call_worst_ns, resume_call_worst_ns, act_wait_worst_ns;
	struct actuator act;    /* carries out the controller's decisions (on_over, on_action) */
	_Atomic uint64_t reasserts; /* pauses carried out again by a watcher (track) */
	unsigned int high_permille;
	double max_rate;
	struct pauser *p;
	struct backstop *bs;   /* NULL: none */
	pid_t pgid;            /* the command leads this process group: the backstop stops it */
	uint64_t calib_worst, calib_median; /* the pause's calibration, ns (0: not measured) */
	unsigned int calib_cycles;
	pthread_mutex_t lock;   /* pause_t, pause_heads, bs (its setting) */
	pthread_mutex_t bs_lock; /* the backstop's arming */
	atomic_bool released;
	size_t nr_rings;
	uint64_t *by_ring;
	_Atomic int action_err;
	char err[256];          /* lossless__error() */
};

static void atomic_max(_Atomic uint64_t *a, uint64_t v)
{
	uint64_t o = atomic_load_explicit(a, memory_order_relaxed);

	while (v > o && !atomic_compare_exchange_weak_explicit(a, &o, v, memory_order_relaxed,
							       memory_order_relaxed))
		;
}

/* The actuator's set(): pause or resume the target (and arm or disarm the backstop, when on),
 * timing the call. Once released, always resume. */
static int set_target(void *ctx, bool pause)
{
	struct lossless *ll = ctx;
	uint64_t t0;
	int r, e = 0;

	pause = pause && !atomic_load(&ll->released);
	if (ll->bs) {
		/* The backstop (off by default) first: it stops the target at its next sample,
		 * however long the freezer's write takes. */
		pthread_mutex_lock(&ll->bs_lock);
		e = pause ? backstop__arm(ll->bs) : backstop__disarm(ll->bs, false);
		pthread_mutex_unlock(&ll->bs_lock);
	}
	t0 = clock__ns();
	r = pause ? pauser__pause(ll->p) : pauser__resume(ll->p);
	atomic_max(pause ? &ll->pause_call_worst_ns : &ll->resume_call_worst_ns, clock__ns() - t0);
	if (!pause && ll->bs)
		backstop__cont(ll->bs);
	return r < 0 ? r : e;
}

static void actuate(struct lossless *ll, uint64_t decided)
{
	uint64_t t0 = clock__ns();
	int r, z = 0;

	atomic_max(&ll->act_wait_worst_ns, t0 > decided ? t0 - decided : 0);
	r = actuator__run(&ll->act);
	if (r < 0)
		atomic_compare_exchange_strong(&ll->action_err, &z, r);
}

/* Whether this thread's report made a wish that it must carry out, and whether it called
 * on_over(). */
static _Thread_local bool made_wish, went_over;

/* A ring just went above the high mark: pause now, before waiting for the controller's lock,
 * whose holder may be held off its CPU (actuator__over). */
static void on_over(void *ctx, unsigned int ring, uint64_t now)
{
	struct lossless *ll = ctx;

	went_over = true;
	if (ring < ll->nr_watched) {
		uint64_t size = ringbuf__size(ll->rings[ring]);
		uint64_t used = ringbuf__used(ll->rings[ring]);

		atomic_max(&ll->decided_worst_permille, used >= size ? 1000 : used * 1000 / size);
	}
	actuator__over(&ll->act);
	actuate(ll, now);
}

/* Under the controller's lock, after each of its decisions: notes a pause for the summary, and
 * makes the wish agree with the decision (actuator__settled); report() carries it out. */
static void on_action(void *ctx, enum backpressure_action a, bool paused, unsigned int ring,
		      uint64_t now)
{
	struct lossless *ll = ctx;

	if (a == BACKPRESSURE_PAUSE) {
		pthread_mutex_lock(&ll->lock);
		if (ll->pause_heads) {
			for (size_t i = 0; i < ll->nr_watched; i++)
				ll->pause_heads[i] = ringbuf__head(ll->rings[i]);
			ll->pause_t = now;
			atomic_fetch_add_explicit(&ll->pause_gen, 1, memory_order_release);
		}
		pthread_mutex_unlock(&ll->lock);
	}
	made_wish |= actuator__settled(&ll->act, paused, went_over);
}

/* Report a ring's fill to the controller, and carry out what it decided. */
static void report(struct lossless *ll, size_t ring, unsigned int permille, uint64_t t)
{
	made_wish = went_over = false;
	backpressure__report(ll->bp, (unsigned int)ring, permille, t);
	if (made_wish)
		actuate(ll, t);
}

/* While paused, look this often: the readers' reports resume the target as they drain, the
 * watcher's looks only back them up. */
#define WATCH_PAUSED_NS 100000

/* Above the readers' priority 10. */
#define WATCH_PRIORITY 20

static void track_end(struct watcher *w)
{
	if (!w->tracking)
		return;
	w->tracking = false;
	atomic_max(&w->ll->after_worst_ns, w->track_last > w->track_t ? w->track_last - w->track_t : 0);
	atomic_max(&w->ll->after_worst_bytes, w->track_bytes);
}

/* A pause that lets data in for longer than this is carried out again by the watchers. Pauses
 * take effect within 0.1-0.9 ms when nothing holds up the thread carrying them out. */
#define REASSERT_NS 1000000

/* After a look: follow what reaches the rings while paused, from the pause's decision on. */
static void track(struct watcher *w, uint64_t t)
{
	struct lossless *ll = w->ll;
	uint64_t gen = atomic_load_explicit(&ll->pause_gen, memory_order_acquire);
	bool grew = false;

	if (gen != w->track_gen) {
		track_end(w);
		pthread_mutex_lock(&ll->lock);
		w->track_gen = atomic_load_explicit(&ll->pause_gen, memory_order_relaxed);
		w->track_t = w->track_last = ll->pause_t;
		for (size_t k = 0; k < w->n; k++)
			w->track_heads[k] = ll->pause_heads[w->idx[k]];
		pthread_mutex_unlock(&ll->lock);
		w->track_bytes = 0;
		w->tracking = true;
	}
	if (!w->tracking)
		return;
	if (!backpressure__paused(ll->bp)) {
		track_end(w);
		return;
	}
	for (size_t k = 0; k < w->n; k++) {
		if (w->heads[k] > w->track_heads[k]) {
			w->track_bytes += w->heads[k] - w->track_heads[k];
			w->track_heads[k] = w->heads[k];
			w->track_last = t;
			grew = true;
		}
	}
	/* Still growing well after the decision: the thread carrying the pause out may be held
	 * off its CPU before its call reached the kernel, while the target runs on this one.
	 * Carry it out from here too (a pause while paused costs the kernel nothing). */
	if (grew && t - w->track_t > REASSERT_NS) {
		atomic_fetch_add_explicit(&ll->reasserts, 1, memory_order_relaxed);
		actuate(ll, t);
	}
}

/* Look at the watcher's rings; returns how long to sleep before the next look (lookahead.h). */
static uint64_t look(struct watcher *w)
{
	struct lossless *ll = w->ll;
	uint64_t t = clock__ns(), sleep;

	if (w->next_t && t > w->next_t)
		atomic_max(&ll->late_worst_ns, t - w->next_t);
	for (size_t k = 0; k < w->n; k++) {
		struct ringbuf *rb = ll->rings[w->idx[k]];
		size_t size = ringbuf__size(rb);

		w->heads[k] = ringbuf__head(rb);
		w->used[k] = ringbuf__used(rb);
		report(ll, w->idx[k], w->used[k] >= size ? 1000 : (unsigned int)(w->used[k] * 1000 / size), t);
	}
	atomic_fetch_add_explicit(&ll->looks, 1, memory_order_relaxed);
	track(w, t);
	sleep = lookahead__next(w->la, w->heads, w->used, t);
	if (backpressure__paused(ll->bp) && sleep > WATCH_PAUSED_NS)
		sleep = WATCH_PAUSED_NS;
	w->next_t = clock__ns() + sleep;
	return sleep;
}

static void *watcher_main(void *arg)
{
	struct watcher *w = arg;
	struct lossless *ll = w->ll;
	bool first = true;

	while (!atomic_load_explicit(&ll->released, memory_order_relaxed)) {
		uint64_t sleep = look(w);
		struct timespec ts = { (time_t)(sleep / 1000000000u), (long)(sleep % 1000000000u) };

		if (first) {
			sem_post(&ll->watcher_up);
			first = false;
		}
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	}
	if (first)
		sem_post(&ll->watcher_up);
	track_end(w);
	return NULL;
}

static void watcher_free(struct watcher *w)
{
	lookahead__free(w->la);
	free(w->idx);
	free(w->heads);
	free(w->used);
	free(w->track_heads);
}

static int watcher_init(struct lossless *ll, struct watcher *w, int cpu, size_t first, size_t n)
{
	w->ll = ll;
	w->cpu = cpu;
	w->n = n;
	w->idx = calloc(n, sizeof(*w->idx));
	w->heads = calloc(n, sizeof(*w->heads));
	w->used = calloc(n, sizeof(*w->used));
	w->track_heads = calloc(n, sizeof(*w->track_heads));
	w->la = lookahead__new(n, ringbuf__size(ll->rings[first]), ll->high_permille, ll->max_rate);
	if (!w->idx || !w->heads || !w->used || !w->track_heads || !w->la)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++)
		w->idx[k] = first + k;
	return 0;
}

/* Real-time from its first instruction, on its CPU: set by the thread itself, the priority
 * would wait for the thread's first turn on a CPU, which on a busy machine came 5 ms after the
 * events were enabled, long enough to fill a ring. Without CAP_SYS_NICE it runs at normal
 * priority; where its CPU is not ours to use (a cpuset), it runs anywhere. */
static int watcher_create(struct watcher *w, bool rt)
{
	struct sched_param sp = { .sched_priority = WATCH_PRIORITY };
	pthread_attr_t attr;
	cpu_set_t set;
	int r;

	pthread_attr_init(&attr);
	if (rt) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
	}
	if (w->cpu >= 0 && w->cpu < CPU_SETSIZE) {
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	r = pthread_create(&w->th, &attr, watcher_main, w);
	pthread_attr_destroy(&attr);
	return r;
}

static int watcher_start(struct watcher *w)
{
	char name[16];
	int r = watcher_create(w, true);

	if (r == EINVAL && w->cpu >= 0) { /* its CPU is not in our affinity */
		w->cpu = -1;
		r = watcher_create(w, true);
	}
	if (r == EPERM)
		r = watcher_create(w, false);
	if (r)
		return -r;
	if (w->cpu >= 0)
		snprintf(name, sizeof(name), "precord-w/%u", (unsigned int)w->cpu % 10000u);
	else
		snprintf(name, sizeof(name), "precord-watch");
	pthread_setname_np(w->th, name);
	return 0;
}

int lossless__watch(struct lossless *ll, struct ringbuf *const *rings, const int *cpus, size_t n)
{
	size_t nw = cpus ? n : 1;
	int r = 0;

	if (!ll)
		return 0;
	if (ll->watching || n > ll->nr_rings)
		return -EINVAL;
	if (!n)
		return -EINVAL;
	ll->rings = rings;
	ll->nr_watched = n;
	ll->w = calloc(nw, sizeof(*ll->w));
	if (!ll->w)
		return -ENOMEM;
	ll->nr_wslots = nw;
	for (size_t i = 0; i < nw && !r; i++)
		r = cpus ? watcher_init(ll, &ll->w[i], cpus[i], i, 1) : watcher_init(ll, &ll->w[i], -1, 0, n);
	pthread_mutex_lock(&ll->lock);
	ll->pause_heads = calloc(n, sizeof(*ll->pause_heads));
	pthread_mutex_unlock(&ll->lock);
	if (r || !ll->pause_heads)
		return -ENOMEM;
	for (size_t i = 0; i < nw; i++) {
		r = watcher_start(&ll->w[i]);
		if (r)
			break;
		ll->nr_w++;
	}
	if (ll->nr_w)
		ll->watching = true;
	/* The caller enables the events next: the watchers must be looking by then. */
	for (size_t i = 0; i < ll->nr_w; i++)
		while (sem_wait(&ll->watcher_up) < 0 && errno == EINTR)
			;
	return r;
}

static void stop_watcher(struct lossless *ll)
{
	for (size_t i = 0; i < ll->nr_w; i++)
		pthread_join(ll->w[i].th, NULL);
	ll->nr_w = 0;
	ll->watching = false;
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
	pthread_mutex_destroy(&ll->bs_lock);
	sem_destroy(&ll->watcher_up);
	free(ll->by_ring);
	for (size_t i = 0; i < ll->nr_wslots; i++)
		watcher_free(&ll->w[i]);
	free(ll->w);
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
	pthread_mutex_init(&ll->bs_lock, &ma);
	pthread_mutexattr_destroy(&ma);
	sem_init(&ll->watcher_up, 0, 0);
	actuator__init(&ll->act, set_target, ll);
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
	backpressure__set_over_fn(ll->bp, on_over);
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
	report(ll, ring, permille, clock__ns());
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

void lossless__end(struct lossless *ll, uint64_t end_ns)
{
	if (ll && ll->bp)
		backpressure__end(ll->bp, end_ns);
}

void lossless__release(struct lossless *ll)
{
	if (!ll)
		return;
	/* From now on every set_target resumes, this one's included; a pause in flight elsewhere
	 * then sees the newer wish and resumes after it (actuator.h). */
	if (!atomic_exchange(&ll->released, true) && ll->p) { /* no p: setup failed early */
		actuator__wish(&ll->act, false);
		actuate(ll, clock__ns());
	}
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
	backpressure__set_over_fn(bp, on_over);
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
	s->late_worst_ns = atomic_load(&((struct lossless *)ll)->late_worst_ns);
	s->decided_worst_permille = (unsigned int)atomic_load(&((struct lossless *)ll)->decided_worst_permille);
	s->pause_call_worst_ns = atomic_load(&((struct lossless *)ll)->pause_call_worst_ns);
	s->resume_call_worst_ns = atomic_load(&((struct lossless *)ll)->resume_call_worst_ns);
	s->act_wait_worst_ns = atomic_load(&((struct lossless *)ll)->act_wait_worst_ns);
	s->reasserts = atomic_load(&((struct lossless *)ll)->reasserts);
}
