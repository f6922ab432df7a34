/* The time-order queue (perf/order_queue.h): whatever order records go in, and however pushes
 * and pops interleave, each pop gives the least (time, seq) queued, as a plain scan of what is
 * queued finds it; the patterns are those of real files (two CPUs' chunks overlapping in time,
 * rings that step back a little) and those of no file (no order at all, more interleaved runs
 * than the queue looks through, one time for everything). */
#include <check.h>
#include <stdlib.h>

#include "perf/order_queue.h"

#define N 6000

struct ref {
	uint64_t time, seq;
	bool queued;
};

static struct ref refs[N];
static size_t nr_refs, nr_queued_ref;
static unsigned released[N];

/* the least queued record of the reference, by a scan */
static size_t ref_least(void)
{
	size_t best = N;

	for (size_t i = 0; i < nr_refs; i++)
		if (refs[i].queued && (best == N || refs[i].time < refs[best].time ||
				       (refs[i].time == refs[best].time && refs[i].seq < refs[best].seq)))
			best = i;
	return best;
}

static void push(struct order_queue *q, uint64_t time)
{
	struct perf_reader_record rec = { .offset = nr_refs, .time = time };

	ck_assert_uint_lt(nr_refs, N);

	ck_assert_int_eq(order_queue__push(q, time, &rec, 8), 0);
	refs[nr_refs] = (struct ref){ time, nr_refs, true };
	nr_refs++;
	nr_queued_ref++;
}

static void pop_check(struct order_queue *q)
{
	const struct oq_entry *after[2], *top = order_queue__top(q);
	size_t want = ref_least(), n = order_queue__after_top(q, after, 2);
	struct oq_entry e;

	ck_assert_ptr_nonnull(top);
	ck_assert_uint_eq(top->rec.offset, want);
	for (size_t k = 0; k < n; k++)
		ck_assert(refs[after[k]->rec.offset].queued && after[k]->rec.offset != want);
	order_queue__pop(q, &e);
	ck_assert_uint_eq(e.rec.offset, want);
	ck_assert_uint_eq(e.time, refs[want].time);
	ck_assert_uint_eq(e.seq, want);
	ck_assert_uint_eq(e.size, 8);
	refs[want].queued = false;
	nr_queued_ref--;
	ck_assert_uint_eq(order_queue__len(q), nr_queued_ref);
}

/* pop while the least queued is at or before limit */
static void flush(struct order_queue *q, uint64_t limit)
{
	const struct oq_entry *top;

	while ((top = order_queue__top(q)) && top->time <= limit)
		pop_check(q);
}

static void release(struct oq_entry *e)
{
	released[e->rec.offset]++;
}

static void finish(struct order_queue *q)
{
	for (size_t i = 0; i < nr_refs; i++)
		released[i] = 0;
	order_queue__fini(q, release);
	for (size_t i = 0; i < nr_refs; i++)
		ck_assert_uint_eq(released[i], refs[i].queued ? 1 : 0);
	ck_assert_ptr_null(order_queue__top(q));
	nr_refs = nr_queued_ref = 0;
}

/* Rounds of nr_streams chunks, each chunk in time order within and every chunk of a round
 * covering the same span; a step back of up to back ns now and then. Between rounds, what
 * is at or before the end of the round before two rounds goes (perf's FINISHED_ROUND). */
static void rounds(unsigned nr_streams, unsigned per_chunk, uint64_t back, unsigned seed)
{
	struct order_queue q = ORDER_QUEUE_INIT;
	uint64_t span = 100000, prev_end = 0;

	srand(seed);
	for (uint64_t round = 0; nr_refs + nr_streams * per_chunk <= N; round++) {
		for (unsigned s = 0; s < nr_streams; s++) {
			uint64_t t = round * span + (uint64_t)rand() % 50;

			for (unsigned k = 0; k < per_chunk; k++) {
				t += (uint64_t)rand() % (2 * span / per_chunk);
				if (back && rand() % 8 == 0)
					push(&q, t > back ? t - (uint64_t)rand() % back : t);
				else
					push(&q, t);
			}
		}
		flush(&q, prev_end);
		prev_end = round * span;
	}
	/* half out, then fini takes the rest */
	flush(&q, prev_end / 2);
	finish(&q);
}

START_TEST(test_rounds_of_two_rings)
{
	rounds(2, 150, 0, 1);
	rounds(2, 150, 3000, 2);
	rounds(4, 40, 500, 3);
}
END_TEST

START_TEST(test_more_runs_than_scanned)
{
	/* 64 interleaved streams: past the runs a record looks through */
	rounds(64, 5, 0, 4);
	rounds(64, 5, 2000, 5);
}
END_TEST

START_TEST(test_no_order)
{
	struct order_queue q = ORDER_QUEUE_INIT;

	srand(6);
	for (size_t i = 0; i < N - 2; i++) {
		push(&q, (uint64_t)rand() % 100000);
		if (i % 97 == 96)
			flush(&q, (uint64_t)rand() % 100000);
	}
	flush(&q, UINT64_MAX);
	ck_assert_uint_eq(order_queue__len(&q), 0);
	/* emptied, it takes records again */
	push(&q, 5);
	push(&q, 3);
	flush(&q, UINT64_MAX);
	finish(&q);
}
END_TEST

START_TEST(test_equal_times)
{
	struct order_queue q = ORDER_QUEUE_INIT;

	/* one time for all: out in the order they went in, across runs made by a step back */
	for (size_t i = 0; i < 3000; i++)
		push(&q, i % 500 == 499 ? 7 : 10);
	for (size_t i = 0; i < 1000; i++)
		push(&q, 10);
	flush(&q, 9);
	ck_assert_uint_eq(order_queue__len(&q), 4000 - 6);
	flush(&q, 10);
	finish(&q);
}
END_TEST

START_TEST(test_fini_releases_every_queued)
{
	struct order_queue q = ORDER_QUEUE_INIT;

	srand(7);
	for (size_t i = 0; i < 2000; i++)
		push(&q, (uint64_t)rand() % 1000 + (i / 100) * 1000);
	flush(&q, 9000);
	finish(&q);
	/* an empty queue, never pushed to */
	finish(&q);
}
END_TEST

Suite *order_queue_suite(void)
{
	Suite *s = suite_create("order_queue");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_rounds_of_two_rings);
	tcase_add_test(tc, test_more_runs_than_scanned);
	tcase_add_test(tc, test_no_order);
	tcase_add_test(tc, test_equal_times);
	tcase_add_test(tc, test_fini_releases_every_queued);
	suite_add_tcase(s, tc);
	return s;
}
