/* Tests of the lock-free actuation of pause and resume wishes: a thread held in the middle of
 * a resume holds up no pause, a stale call that lands last is undone by its own thread, and
 * under threads wishing and carrying out at random the target ends as the last wish says. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "record/lossless/actuator.h"

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
static int stale_set(void *ctx, bool pause);

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

/* Off the CPU now and then between reading the wish and its effect, as a thread can be. */
static int yielding_set(void *ctx, bool pause)
{
	static _Atomic unsigned int n;

	if (atomic_fetch_add_explicit(&n, 1, memory_order_relaxed) % 3 == 0)
		sched_yield();
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

Suite *actuator_suite(void)
{
	Suite *s = suite_create("actuator");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_one_thread);
	tcase_add_test(tc, test_held_resume_holds_up_no_pause);
	tcase_add_test(tc, test_stale_call_is_undone);
	tcase_add_test(tc, test_error_is_returned);
	tcase_add_test(tc, test_racers_end_as_the_last_wish);
	suite_add_tcase(s, tc);
	return s;
}
