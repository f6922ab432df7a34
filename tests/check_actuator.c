/* Tests of the lock-free actuation of pause and resume wishes: a thread held in the middle of
 * a resume holds up no pause, a stale call that lands last is undone by its own thread, and
 * under threads wishing and carrying out at random the target ends as the last wish says. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "record/lossless/actuator.h"
#include "record/lossless/backpressure.h"

/* The "kernel": calls take effect at their start, in the order of a lock, like writes to
 * cgroup.freeze; a resume can be held after taking effect until the test lets it go. */
struct fake {
	pthread_mutex_t lock;
	bool paused;
	unsigned int calls, pauses;
	bool hold_resume;   /* the next resume waits on held after taking effect */
	sem_t entered, held;
};

static int fake_set(void *ctx, bool pause)
{
	struct fake *f = ctx;
	bool hold;

	pthread_mutex_lock(&f->lock);
	f->paused = pause;
	f->calls++;
	f->pauses += pause;
	hold = !pause && f->hold_resume;
	if (hold)
		f->hold_resume = false;
	pthread_mutex_unlock(&f->lock);
	if (hold) {
		sem_post(&f->entered);
		sem_wait(&f->held);
	}
	return 0;
}

static void fake_init(struct fake *f)
{
	pthread_mutex_init(&f->lock, NULL);
	f->paused = false;
	f->calls = f->pauses = 0;
	f->hold_resume = false;
	sem_init(&f->entered, 0, 0);
	sem_init(&f->held, 0, 0);
}

static bool fake_paused(struct fake *f)
{
	bool p;

	pthread_mutex_lock(&f->lock);
	p = f->paused;
	pthread_mutex_unlock(&f->lock);
	return p;
}

START_TEST(test_one_thread)
{
	struct actuator a;
	struct fake f;

	fake_init(&f);
	actuator__init(&a, fake_set, &f);
	ck_assert(!actuator__wants_paused(&a));
	ck_assert_uint_eq(actuator__wish(&a, true), 1);
	ck_assert(actuator__wants_paused(&a));
	ck_assert_int_eq(actuator__run(&a), 0);
	ck_assert(fake_paused(&f));
	ck_assert_uint_eq(actuator__wish(&a, false), 2);
	ck_assert_int_eq(actuator__run(&a), 0);
	ck_assert(!fake_paused(&f));
	ck_assert_uint_eq(f.calls, 2);
}
END_TEST

struct resumer {
	struct actuator *a;
	int r;
};

static void *resume_main(void *arg)
{
	struct resumer *rs = arg;

	actuator__wish(rs->a, false);
	rs->r = actuator__run(rs->a);
	return NULL;
}

/* A resume taken effect and then held (its thread off the CPU): a pause decided meanwhile by
 * another thread is carried out at once by that thread, and when the held thread goes on, it
 * sees the newer wish and leaves the target paused. */
START_TEST(test_held_resume_holds_up_no_pause)
{
	struct resumer rs;
	struct actuator a;
	struct fake f;
	pthread_t th;

	fake_init(&f);
	actuator__init(&a, fake_set, &f);
	actuator__wish(&a, true);
	actuator__run(&a);
	f.hold_resume = true;
	rs.a = &a;
	ck_assert_int_eq(pthread_create(&th, NULL, resume_main, &rs), 0);
	sem_wait(&f.entered);
	ck_assert(!fake_paused(&f)); /* the resume took effect; its thread is held */
	actuator__wish(&a, true);
	ck_assert_int_eq(actuator__run(&a), 0); /* returns with the other thread still held */
	ck_assert(fake_paused(&f));
	sem_post(&f.held);
	pthread_join(th, NULL);
	ck_assert_int_eq(rs.r, 0);
	ck_assert(fake_paused(&f));
	ck_assert(actuator__wants_paused(&a));
	ck_assert_uint_eq(f.pauses, 3); /* the first, ours, and the held thread's redo */
}
END_TEST

/* A stale call landing last: a thread read the wish "resume", and its call lands after a newer
 * "pause" was carried out; the thread sees the newer wish when its call returns and pauses. */
struct stale {
	struct fake f;
	struct actuator *a;
	bool once;
};

static int stale_set(void *ctx, bool pause)
{
	struct stale *s = ctx;

	if (!pause && !s->once) {
		s->once = true;
		/* Between reading the wish and its effect, another thread pauses. */
		actuator__wish(s->a, true);
		fake_set(&s->f, true);
	}
	return fake_set(&s->f, pause);
}

START_TEST(test_stale_call_is_undone)
{
	struct actuator a;
	struct stale s = { .a = &a };

	fake_init(&s.f);
	actuator__init(&a, stale_set, &s);
	actuator__wish(&a, false);
	ck_assert_int_eq(actuator__run(&a), 0);
	ck_assert(fake_paused(&s.f));
	ck_assert_uint_eq(s.f.calls, 3); /* the other's pause, our stale resume, our redo */
}
END_TEST

static int failing_set(void *ctx, bool pause)
{
	unsigned int *n = ctx;

	return ++*n == 1 ? -EIO : 0;
}

START_TEST(test_error_is_returned)
{
	struct actuator a;
	unsigned int n = 0;

	actuator__init(&a, failing_set, &n);
	actuator__wish(&a, true);
	ck_assert_int_eq(actuator__run(&a), -EIO);
	actuator__wish(&a, false);
	ck_assert_int_eq(actuator__run(&a), 0);
}
END_TEST

/* Delayed now and then between reading the wish and its effect, as a thread held off its CPU
 * is: a spin of random length (0 to SPIN_MASK rounds, some microseconds) in one call of three.
 * Not sched_yield(): beside a CPU hog each yield gave the CPU away for a time slice and the test
 * took 39 s, once past its 120 s limit (a series run beside stress-ng); spinning it takes 0.5 s
 * there, and still catches an actuator__run that does not call again for a newer wish (by round
 * 14 of 100 in 3 tries of 3). */
#define SPIN_MASK 16383

static int yielding_set(void *ctx, bool pause)
{
	static _Atomic unsigned int n;
	static _Thread_local uint32_t x = 2463534242u;

	if (atomic_fetch_add_explicit(&n, 1, memory_order_relaxed) % 3 == 0) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		for (volatile uint32_t i = 0; i < (x & SPIN_MASK); i++)
			;
	}
	return fake_set(ctx, pause);
}

#define RACERS 4
#define ROUNDS 2000

struct racer {
	struct actuator *a;
	unsigned int seed;
	atomic_bool *stop;
	pthread_barrier_t *start;
};

/* Wish at random and carry out, until one racer has done its ROUNDS: then all stop at once,
 * their last calls in flight together. */
static void *race_main(void *arg)
{
	struct racer *r = arg;

	pthread_barrier_wait(r->start);
	for (int i = 0; !atomic_load(r->stop); i++) {
		actuator__wish(r->a, rand_r(&r->seed) & 1);
		actuator__run(r->a);
		if (i == ROUNDS)
			atomic_store(r->stop, true);
	}
	return NULL;
}

START_TEST(test_racers_end_as_the_last_wish)
{
	struct racer rs[RACERS];
	pthread_t th[RACERS];
	pthread_barrier_t start;
	struct actuator a;
	atomic_bool stop;
	struct fake f;

	for (int round = 0; round < 100; round++) {
		fake_init(&f);
		actuator__init(&a, yielding_set, &f);
		atomic_init(&stop, false);
		pthread_barrier_init(&start, NULL, RACERS);
		for (int i = 0; i < RACERS; i++) {
			rs[i] = (struct racer){ &a, (unsigned int)(round * RACERS + i + 1), &stop, &start };
			ck_assert_int_eq(pthread_create(&th[i], NULL, race_main, &rs[i]), 0);
		}
		for (int i = 0; i < RACERS; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&start);
		ck_assert_msg(fake_paused(&f) == actuator__wants_paused(&a),
			      "round %d: the target is %s, the last wish was %s", round,
			      fake_paused(&f) ? "paused" : "running",
			      actuator__wants_paused(&a) ? "paused" : "running");
	}
}
END_TEST

/* ---- with the watermark controller's hooks, as lossless.c wires them ---------------------- */

struct wired {
	struct backpressure *bp;
	struct actuator a;
	struct fake f;
	/* the settled hook holds the report of the thread marked hold_me, under the controller's
	 * lock, until held is posted */
	sem_t holding, held;
};

static _Thread_local bool made, overed, hold_me;

static void w_over(void *ctx, unsigned int ring, uint64_t now)
{
	struct wired *w = ctx;

	overed = true;
	actuator__over(&w->a);
	actuator__run(&w->a); /* at once: no lock is held here */
}

static void w_settled(void *ctx, enum backpressure_action a, bool paused, unsigned int ring,
		      uint64_t now)
{
	struct wired *w = ctx;

	made |= actuator__settled(&w->a, paused, overed);
	if (hold_me) {
		hold_me = false;
		sem_post(&w->holding);
		sem_wait(&w->held);
	}
}

static void w_report(struct wired *w, unsigned int ring, unsigned int fill)
{
	made = overed = false;
	backpressure__report(w->bp, ring, fill, 0);
	if (made)
		actuator__run(&w->a);
}

static void wired_init(struct wired *w, unsigned int rings, actuator_set_fn set)
{
	w->bp = backpressure__new(rings, 800, 100);
	ck_assert_ptr_nonnull(w->bp);
	fake_init(&w->f);
	actuator__init(&w->a, set, &w->f);
	backpressure__set_action_fn(w->bp, w_settled, w);
	backpressure__set_over_fn(w->bp, w_over);
	sem_init(&w->holding, 0, 0);
	sem_init(&w->held, 0, 0);
}

static void *held_reporter(void *arg)
{
	struct wired *w = arg;

	hold_me = true;
	w_report(w, 0, 500); /* a band change: decides under the lock, and is held there */
	return NULL;
}

static void *over_reporter(void *arg)
{
	w_report(arg, 1, 900);
	return NULL;
}

/* A report held under the controller's lock (its thread off the CPU while it holds it): a
 * ring going over the high mark meanwhile pauses the target before its report gets the lock;
 * once the held report goes on, both settle paused. */
START_TEST(test_over_pauses_while_the_lock_is_held)
{
	struct wired w;
	pthread_t th, tp;

	wired_init(&w, 2, fake_set);
	ck_assert_int_eq(pthread_create(&th, NULL, held_reporter, &w), 0);
	sem_wait(&w.holding);
	ck_assert(!fake_paused(&w.f));
	ck_assert_int_eq(pthread_create(&tp, NULL, over_reporter, &w), 0);
	/* Its pause lands while the lock is still held: wait for it (the fake counts pauses). */
	for (;;) {
		pthread_mutex_lock(&w.f.lock);
		unsigned int n = w.f.pauses;
		pthread_mutex_unlock(&w.f.lock);
		if (n)
			break;
		sched_yield();
	}
	ck_assert(fake_paused(&w.f));
	sem_post(&w.held);
	pthread_join(th, NULL);
	pthread_join(tp, NULL);
	ck_assert(backpressure__paused(w.bp));
	ck_assert(actuator__wants_paused(&w.a));
	ck_assert(fake_paused(&w.f));
	/* Drained: resumed. */
	w_report(&w, 1, 0);
	w_report(&w, 0, 0);
	ck_assert(!backpressure__paused(w.bp));
	ck_assert(!fake_paused(&w.f));
	backpressure__free(w.bp);
}
END_TEST

/* A resume decided while another report's over-the-mark pause is yet to be settled is not
 * wished: the over report settles after it, and the target stays paused until every ring is
 * drained again. Without the rule the resume would run the target with a ring over the mark. */
START_TEST(test_resume_waits_for_a_pending_over)
{
	struct actuator a;
	struct fake f;

	fake_init(&f);
	actuator__init(&a, fake_set, &f);
	/* Report X: ring over the mark, pauses before the lock. */
	actuator__over(&a);
	actuator__run(&a);
	/* Report Y, already under the lock, decided "running" from bands it read before X's. */
	ck_assert(!actuator__settled(&a, false, false));
	ck_assert(actuator__wants_paused(&a));
	/* X settles: the controller saw its ring over and paused. */
	ck_assert(!actuator__settled(&a, true, true));
	ck_assert(fake_paused(&f));
	/* Later, drained: Y-like reports now resume. */
	ck_assert(actuator__settled(&a, false, false));
	actuator__run(&a);
	ck_assert(!fake_paused(&f));
}
END_TEST

#define W_THREADS 4
#define W_RINGS 8
#define W_REPORTS 5000

static void *w_racer(void *arg)
{
	struct wired *w = arg;
	unsigned int seed = (unsigned int)(uintptr_t)&seed;

	for (int i = 0; i < W_REPORTS; i++) {
		unsigned int r = rand_r(&seed) % 100;

		w_report(w, rand_r(&seed) % W_RINGS, r < 60 ? r : r < 85 ? 500 : 950);
	}
	return NULL;
}

/* Reports from several threads at once, on shared rings, with calls off the CPU now and then:
 * at the end the target is as the controller decided (paused if and only if it says so), and
 * once every ring is drained it runs. */
START_TEST(test_wired_racers_agree_with_the_controller)
{
	for (int round = 0; round < 5; round++) {
		pthread_t th[W_THREADS];
		struct wired w;

		wired_init(&w, W_RINGS, yielding_set);
		for (int i = 0; i < W_THREADS; i++)
			ck_assert_int_eq(pthread_create(&th[i], NULL, w_racer, &w), 0);
		for (int i = 0; i < W_THREADS; i++)
			pthread_join(th[i], NULL);
		ck_assert_msg(fake_paused(&w.f) == backpressure__paused(w.bp) &&
			      actuator__wants_paused(&w.a) == backpressure__paused(w.bp),
			      "round %d: target %s, wish %s, controller %s", round,
			      fake_paused(&w.f) ? "paused" : "running",
			      actuator__wants_paused(&w.a) ? "paused" : "running",
			      backpressure__paused(w.bp) ? "paused" : "running");
		/* Drained: resumed, which also shows no over was left unsettled (it would hold the
		 * resume back). */
		for (unsigned int r = 0; r < W_RINGS; r++)
			w_report(&w, r, 0);
		ck_assert(!fake_paused(&w.f));
		backpressure__free(w.bp);
	}
}
END_TEST

Suite *actuator_suite(void)
{
	Suite *s = suite_create("actuator");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_one_thread);
	tcase_add_test(tc, test_held_resume_holds_up_no_pause);
	tcase_add_test(tc, test_stale_call_is_undone);
	tcase_add_test(tc, test_error_is_returned);
	tcase_add_test(tc, test_racers_end_as_the_last_wish);
	tcase_add_test(tc, test_over_pauses_while_the_lock_is_held);
	tcase_add_test(tc, test_resume_waits_for_a_pending_over);
	tcase_add_test(tc, test_wired_racers_agree_with_the_controller);
	suite_add_tcase(s, tc);
	return s;
}
