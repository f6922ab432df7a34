/* Tests of the watermark controller: hysteresis on one ring, the any-over / all-drained rule over
 * several rings, no flapping around either mark, balanced transitions under concurrent reporters,
 * and the paused-time accounting. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "record/lossless/backpressure.h"

START_TEST(test_new_validates)
{
	struct backpressure *bp;

	errno = 0;
	ck_assert_ptr_null(backpressure__new(0, 800, 500));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(backpressure__new(4, 500, 500));
	ck_assert_ptr_null(backpressure__new(4, 500, 600));
	ck_assert_ptr_null(backpressure__new(4, 1000, 500));
	ck_assert_ptr_null(backpressure__new(4, 800, 0));
	bp = backpressure__new(1, 999, 998);
	ck_assert_ptr_nonnull(bp);
	ck_assert_int_eq(backpressure__report(bp, 1, 0, 0), -EINVAL);
	ck_assert_uint_eq(backpressure__ring_pauses(bp, 7), 0);
	backpressure__free(bp);
	backpressure__free(NULL);
}
END_TEST

START_TEST(test_hysteresis_one_ring)
{
	struct backpressure *bp = backpressure__new(1, 750, 250);

	ck_assert_int_eq(backpressure__report(bp, 0, 100, 1), BACKPRESSURE_NONE);
	ck_assert_int_eq(backpressure__report(bp, 0, 500, 2), BACKPRESSURE_NONE);
	ck_assert_int_eq(backpressure__report(bp, 0, 750, 3), BACKPRESSURE_NONE); /* at the mark is not above it */
	ck_assert(!backpressure__paused(bp));
	ck_assert_int_eq(backpressure__report(bp, 0, 751, 4), BACKPRESSURE_PAUSE);
	ck_assert(backpressure__paused(bp));
	ck_assert_int_eq(backpressure__report(bp, 0, 900, 5), BACKPRESSURE_NONE);
	ck_assert_int_eq(backpressure__report(bp, 0, 500, 6), BACKPRESSURE_NONE); /* between the marks: stay paused */
	ck_assert_int_eq(backpressure__report(bp, 0, 250, 7), BACKPRESSURE_NONE); /* at the low mark is not below it */
	ck_assert(backpressure__paused(bp));
	ck_assert_int_eq(backpressure__report(bp, 0, 249, 8), BACKPRESSURE_RESUME);
	ck_assert(!backpressure__paused(bp));
	ck_assert_int_eq(backpressure__report(bp, 0, 600, 9), BACKPRESSURE_NONE); /* between: stay running */
	ck_assert_int_eq(backpressure__report(bp, 0, 5000, 10), BACKPRESSURE_PAUSE); /* clamped, still above */
	ck_assert_uint_eq(backpressure__ring_fill(bp, 0), 1000);
	backpressure__free(bp);
}
END_TEST

START_TEST(test_several_rings)
{
	struct backpressure *bp = backpressure__new(3, 800, 200);

	ck_assert_int_eq(backpressure__report(bp, 0, 500, 1), BACKPRESSURE_NONE);
	ck_assert_int_eq(backpressure__report(bp, 1, 900, 2), BACKPRESSURE_PAUSE); /* any ring above high */
	ck_assert_int_eq(backpressure__report(bp, 2, 950, 3), BACKPRESSURE_NONE);  /* already paused */
	ck_assert_int_eq(backpressure__report(bp, 1, 100, 4), BACKPRESSURE_NONE);  /* ring 0 and 2 not drained */
	ck_assert_int_eq(backpressure__report(bp, 2, 100, 5), BACKPRESSURE_NONE);  /* ring 0 still at 500 */
	ck_assert(backpressure__paused(bp));
	ck_assert_int_eq(backpressure__report(bp, 0, 199, 6), BACKPRESSURE_RESUME); /* all below low */
	ck_assert_int_eq(backpressure__report(bp, 2, 850, 7), BACKPRESSURE_PAUSE);
	ck_assert_uint_eq(backpressure__ring_pauses(bp, 0), 0);
	ck_assert_uint_eq(backpressure__ring_pauses(bp, 1), 1);
	ck_assert_uint_eq(backpressure__ring_pauses(bp, 2), 1);
	backpressure__free(bp);
}
END_TEST

/* Fill jitters around each mark: only the crossing of the opposite mark may act. */
START_TEST(test_no_flapping)
{
	struct backpressure *bp = backpressure__new(2, 700, 300);
	int pauses = 0, resumes = 0;

	for (int i = 0; i < 1000; i++) {
		int a = backpressure__report(bp, 0, (i & 1) ? 699 : 701, i);

		pauses += a == BACKPRESSURE_PAUSE;
		resumes += a == BACKPRESSURE_RESUME;
	}
	ck_assert_int_eq(pauses, 1);
	ck_assert_int_eq(resumes, 0);
	for (int i = 0; i < 1000; i++) {
		int a = backpressure__report(bp, 0, (i & 1) ? 299 : 301, 1000 + i);

		pauses += a == BACKPRESSURE_PAUSE;
		resumes += a == BACKPRESSURE_RESUME;
	}
	ck_assert_int_eq(pauses, 1);
	ck_assert_int_eq(resumes, 1);
	/* Ring 1 wobbles above high while ring 0 wobbles around low: one pause, stays paused. */
	for (int i = 0; i < 1000; i++) {
		int a = backpressure__report(bp, i & 1, (i & 1) ? 990 : ((i & 2) ? 299 : 301), 2000 + i);

		pauses += a == BACKPRESSURE_PAUSE;
		resumes += a == BACKPRESSURE_RESUME;
	}
	ck_assert_int_eq(pauses, 2);
	ck_assert_int_eq(resumes, 1);
	backpressure__free(bp);
}
END_TEST

START_TEST(test_accounting)
{
	struct backpressure *bp = backpressure__new(2, 800, 200);
	struct backpressure_stats s;

	backpressure__stats(bp, 50, &s);
	ck_assert_uint_eq(s.nr_pauses, 0);
	ck_assert_uint_eq(s.last_pause_start_ns, 0);
	ck_assert(!s.paused);

	ck_assert_int_eq(backpressure__report(bp, 0, 900, 100), BACKPRESSURE_PAUSE);
	ck_assert_int_eq(backpressure__report(bp, 0, 100, 300), BACKPRESSURE_RESUME);
	ck_assert_int_eq(backpressure__report(bp, 1, 900, 1000), BACKPRESSURE_PAUSE);
	backpressure__stats(bp, 1400, &s); /* counts the pause in progress */
	ck_assert(s.paused);
	ck_assert_uint_eq(s.nr_pauses, 2);
	ck_assert_uint_eq(s.paused_ns, 200 + 400);
	ck_assert_uint_eq(s.longest_pause_ns, 400);
	ck_assert_uint_eq(s.last_pause_start_ns, 1000);
	ck_assert_int_eq(backpressure__report(bp, 1, 0, 1500), BACKPRESSURE_RESUME);
	ck_assert_int_eq(backpressure__report(bp, 1, 801, 2000), BACKPRESSURE_PAUSE);
	ck_assert_int_eq(backpressure__report(bp, 1, 10, 2050), BACKPRESSURE_RESUME);
	/* A reader with a slightly earlier clock must not make time negative. */
	ck_assert_int_eq(backpressure__report(bp, 0, 900, 3000), BACKPRESSURE_PAUSE);
	ck_assert_int_eq(backpressure__report(bp, 0, 10, 2990), BACKPRESSURE_RESUME);

	backpressure__stats(bp, 9999, &s);
	ck_assert(!s.paused);
	ck_assert_uint_eq(s.nr_pauses, 4);
	ck_assert_uint_eq(s.paused_ns, 200 + 500 + 50 + 0);
	ck_assert_uint_eq(s.longest_pause_ns, 500);
	ck_assert_uint_eq(s.last_pause_start_ns, 3000);
	ck_assert_uint_eq(backpressure__ring_pauses(bp, 0) + backpressure__ring_pauses(bp, 1), s.nr_pauses);
	ck_assert_uint_eq(backpressure__ring_pauses(bp, 0), 2);
	backpressure__free(bp);
}
END_TEST

#define NR_THREADS 4
/* Reports per thread. Every band change takes the controller's priority-inheritance mutex, so
 * 4 threads on 2 CPUs queue on it in the kernel and the time grows faster than the count: 100,000
 * took 5-12 s per case plain and passed the 30 s timeout under ASan in CI; 25,000 take about
 * 1.2 s (less beside a CPU hog) and still make tens of thousands of band changes under the lock
 * and hundreds of pauses (365 and 504 in one run). */
#define NR_REPORTS 25000
#define LOG_MAX (2 * NR_THREADS * NR_REPORTS + 2)

struct conc {
	struct backpressure *bp;
	int rings_per_thread;
	bool shared_rings; /* all threads report on all rings, not only their own */
	/* the callback's log, in transition order (written under the controller's lock) */
	unsigned char *log;
	size_t nr_log;
};

struct worker {
	struct conc *c;
	int id;
	long pauses, resumes;
};

static void log_action(void *ctx, enum backpressure_action a, bool paused, unsigned int ring,
		       uint64_t now)
{
	struct conc *c = ctx;

	ck_assert(paused == (a == BACKPRESSURE_PAUSE) || a == BACKPRESSURE_NONE);
	if (a != BACKPRESSURE_NONE)
		c->log[c->nr_log++] = a;
}

static void *reporter(void *arg)
{
	struct worker *w = arg;
	unsigned int seed = 12345 + w->id;

	for (int i = 0; i < NR_REPORTS; i++) {
		unsigned int ring = w->c->shared_rings
			? rand_r(&seed) % (NR_THREADS * w->c->rings_per_thread)
			: w->id * w->c->rings_per_thread + rand_r(&seed) % w->c->rings_per_thread;
		/* Mostly drained, sometimes over: plenty of transitions both ways. */
		unsigned int r = rand_r(&seed) % 100, fill;

		fill = r < 60 ? r : r < 85 ? 500 : 950;
		int a = backpressure__report(w->c->bp, ring, fill, (uint64_t)i);

		ck_assert_int_ge(a, 0);
		w->pauses += a == BACKPRESSURE_PAUSE;
		w->resumes += a == BACKPRESSURE_RESUME;
	}
	return NULL;
}

static void run_concurrent(bool shared_rings)
{
	struct conc c = { .rings_per_thread = 2, .shared_rings = shared_rings };
	struct worker w[NR_THREADS] = { 0 };
	pthread_t t[NR_THREADS];
	long pauses = 0, resumes = 0;
	unsigned int nr = NR_THREADS * c.rings_per_thread;
	struct backpressure_stats s;

	c.bp = backpressure__new(nr, 800, 100);
	c.log = malloc(LOG_MAX);
	ck_assert_ptr_nonnull(c.log);
	backpressure__set_action_fn(c.bp, log_action, &c);
	for (int i = 0; i < NR_THREADS; i++) {
		w[i].c = &c;
		w[i].id = i;
		ck_assert_int_eq(pthread_create(&t[i], NULL, reporter, &w[i]), 0);
	}
	for (int i = 0; i < NR_THREADS; i++) {
		pthread_join(t[i], NULL);
		pauses += w[i].pauses;
		resumes += w[i].resumes;
	}

	/* The final state agrees with the final fills. */
	bool any_over = false, all_low = true;

	for (unsigned int r = 0; r < nr; r++) {
		any_over |= backpressure__ring_fill(c.bp, r) > 800;
		all_low &= backpressure__ring_fill(c.bp, r) < 100;
	}
	if (any_over)
		ck_assert(backpressure__paused(c.bp));
	if (all_low)
		ck_assert(!backpressure__paused(c.bp));

	/* Drain everything: the last pause, if any, is closed. */
	for (unsigned int r = 0; r < nr; r++) {
		int a = backpressure__report(c.bp, r, 0, NR_REPORTS);

		resumes += a == BACKPRESSURE_RESUME;
		pauses += a == BACKPRESSURE_PAUSE;
	}
	ck_assert(!backpressure__paused(c.bp));
	/* How many transitions there are is up to the interleaving, not to the controller (a
	 * resume needs all 8 rings below the low mark at once: typically a few hundred; 81 in a
	 * clean-clone run on a busy machine): at least one each way, and as many of each. */
	ck_assert_int_ge(pauses, 1);
	ck_assert_int_eq(pauses, resumes);

	/* The callback saw the same transitions, strictly alternating, starting with a pause. */
	ck_assert_uint_eq(c.nr_log, (size_t)(pauses + resumes));
	for (size_t i = 0; i < c.nr_log; i++)
		ck_assert_int_eq(c.log[i], (i & 1) ? BACKPRESSURE_RESUME : BACKPRESSURE_PAUSE);

	backpressure__stats(c.bp, NR_REPORTS, &s);
	ck_assert_uint_eq(s.nr_pauses, (uint64_t)pauses);
	uint64_t sum = 0;

	for (unsigned int r = 0; r < nr; r++)
		sum += backpressure__ring_pauses(c.bp, r);
	ck_assert_uint_eq(sum, s.nr_pauses);
	free(c.log);
	backpressure__free(c.bp);
}

START_TEST(test_end)
{
	struct backpressure *bp = backpressure__new(2, 800, 200);
	struct backpressure_stats s;

	/* a pause in progress at the end counts until the end, not until the stats are read */
	ck_assert_int_eq(backpressure__report(bp, 0, 900, 100), BACKPRESSURE_PAUSE);
	ck_assert_int_eq(backpressure__report(bp, 0, 100, 300), BACKPRESSURE_RESUME);
	ck_assert_int_eq(backpressure__report(bp, 1, 900, 1000), BACKPRESSURE_PAUSE);
	backpressure__end(bp, 1400);
	backpressure__stats(bp, 5000, &s);
	ck_assert_uint_eq(s.nr_pauses, 2);
	ck_assert_uint_eq(s.paused_ns, 200 + 400);
	ck_assert_uint_eq(s.longest_pause_ns, 400);
	/* decisions go on after the end (the target is still resumed), uncounted */
	ck_assert_int_eq(backpressure__report(bp, 1, 0, 6000), BACKPRESSURE_RESUME);
	ck_assert_int_eq(backpressure__report(bp, 0, 900, 7000), BACKPRESSURE_PAUSE);
	backpressure__end(bp, 9000); /* only the first end counts */
	backpressure__stats(bp, 20000, &s);
	ck_assert_uint_eq(s.nr_pauses, 2);
	ck_assert_uint_eq(s.paused_ns, 600);
	ck_assert_uint_eq(s.longest_pause_ns, 400);
	ck_assert_uint_le(s.paused_ns, 1400 - 100);
	ck_assert_uint_eq(backpressure__ring_pauses(bp, 0) + backpressure__ring_pauses(bp, 1), s.nr_pauses);
	backpressure__free(bp);
}
END_TEST

START_TEST(test_concurrent_own_rings)
{
	run_concurrent(false);
}
END_TEST

START_TEST(test_concurrent_shared_rings)
{
	run_concurrent(true);
}
END_TEST

Suite *backpressure_suite(void)
{
	Suite *s = suite_create("backpressure");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_new_validates);
	tcase_add_test(tc, test_hysteresis_one_ring);
	tcase_add_test(tc, test_several_rings);
	tcase_add_test(tc, test_no_flapping);
	tcase_add_test(tc, test_accounting);
	tcase_add_test(tc, test_end);
	suite_add_tcase(s, tc);

	tc = tcase_create("concurrent");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_concurrent_own_rings);
	tcase_add_test(tc, test_concurrent_shared_rings);
	suite_add_tcase(s, tc);
	return s;
}
