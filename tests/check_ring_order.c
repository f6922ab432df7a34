/* The ring-order claim (perf/ring_order.h): its encoding, and the time order that the reader
 * builds with it. Files are written with the perf.data writer: two CPU streams laid out as
 * precord's readers lay them out (each reader's frame of its own ring, the two alternating and
 * overlapping in time), each stream stepping back in time now and then as the kernel's rings
 * do, and no FINISHED_ROUND before the end, so that without the claim the time order holds
 * everything. With it, records must come out in exactly the same order while far fewer are held;
 * a claim that lies, or that does not cover a record, must not lose or crash. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/abi.h"
#include "perf/reader.h"
#include "perf/ring_order.h"
#include "perf/writer.h"

#define SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
		     PERF_SAMPLE_PERIOD)
#define FRAMES 40          /* per stream */
#define PER_FRAME 200      /* records per frame */
#define SPAN 1000000ull    /* ns a frame covers */
#define BACK 12000ull      /* the largest step back in a stream: over two records of each */

struct out {
	uint64_t *times;
	uint32_t *cpus;
	size_t n, cap;
};

struct recsum {
	uint64_t time, seq;
	uint32_t cpu;
};

static struct recsum *expected;
static size_t nr_expected;

static void expect(uint64_t time, uint32_t cpu)
{
	expected = realloc(expected, (nr_expected + 1) * sizeof(*expected));
	ck_assert_ptr_nonnull(expected);
	expected[nr_expected] = (struct recsum){ time, nr_expected, cpu };
	nr_expected++;
}

static void put_sample(struct perf_writer *w, uint64_t time, uint32_t cpu)
{
	struct {
		struct perf_event_header h;
		uint64_t ip;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t period;
	} s = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(s) }, 0x401000 + cpu * 16,
		42, 42 + cpu, time, cpu, 0, 1 };

	ck_assert_int_eq(perf_writer__append(w, &(struct iovec){ &s, sizeof(s) }, 1), 0);
	expect(time, cpu);
}

/* A COMM with its sample_id trailer {tid, time, cpu}: the claim covers every record type. */
static void put_comm(struct perf_writer *w, uint64_t time, uint32_t cpu)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[16];
		uint32_t id_pid, id_tid;
		uint64_t time;
		uint32_t cpu, res;
	} c = { { PERF_RECORD_COMM, 0, sizeof(c) }, 42, 42 + cpu, "worker", 42, 42 + cpu, time,
		cpu, 0 };

	ck_assert_int_eq(perf_writer__append(w, &(struct iovec){ &c, sizeof(c) }, 1), 0);
	expect(time, cpu);
}

/* Stream cpu's frame k: PER_FRAME records over [start, start + SPAN), every 10th one BACK (or
 * `back`) older than the newest before it. */
static void put_frame(struct perf_writer *w, uint32_t cpu, uint64_t start, uint64_t back,
		      uint64_t *newest)
{
	for (int i = 0; i < PER_FRAME; i++) {
		uint64_t t = start + (uint64_t)i * (SPAN / PER_FRAME);

		if (i % 10 == 9 && *newest > back)
			t = *newest - back;
		if (t > *newest)
			*newest = t;
		if (i % 50 == 25)
			put_comm(w, t, cpu);
		else
			put_sample(w, t, cpu);
	}
}

enum claim { NO_CLAIM, TRUE_CLAIM, LYING_CLAIM, BAD_VERSION, SHORT_PAYLOAD, DUP_CPUS,
	     ONE_CPU_LEFT_OUT, ANY_BACK };

/* Write the file; `back`: the step back the streams really take. */
static void write_file(const char *path, enum claim claim, uint64_t back)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
				     .sample_type = SAMPLE_TYPE, .sample_id_all = 1 };
	uint64_t id = 1, newest[2] = { 0, 0 };
	struct perf_writer_event ev = { "cpu-clock", &a, &id, 1 };
	struct perf_writer_opts wo = { .events = &ev, .nr_events = 1 };
	struct perf_writer *w = perf_writer__open(path, &wo);
	uint32_t cpus[2] = { 0, 1 }, dup[2] = { 1, 1 };
	struct perf_event_header round = { PERF_RECORD_FINISHED_ROUND, 0, 8 };

	ck_assert_ptr_nonnull(w);
	free(expected);
	expected = NULL;
	nr_expected = 0;
	for (int k = 0; k < FRAMES; k++) {
		put_frame(w, 0, 1000000 + k * SPAN, back, &newest[0]);
		put_frame(w, 1, 1000000 + k * SPAN + SPAN / 2 + 1234, back, &newest[1]);
	}
	ck_assert_int_eq(perf_writer__append(w, &(struct iovec){ &round, 8 }, 1), 0);
	switch (claim) {
	case NO_CLAIM:
		break;
	case TRUE_CLAIM:
		ck_assert_int_eq(ring_order__write(w, &(struct ring_order){ .max_back_ns = BACK, .nr_cpus = 2,
								      .cpus = cpus }), 0);
		break;
	case LYING_CLAIM: /* says the streams never step back */
		ck_assert_int_eq(ring_order__write(w, &(struct ring_order){ .max_back_ns = 0, .nr_cpus = 2,
								      .cpus = cpus }), 0);
		break;
	case BAD_VERSION: {
		uint8_t p[24] = { 2, 0, 0, 0, 2, 0, 0, 0, 0xe0, 0x2e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

		ck_assert_int_eq(perf_writer__set_private(w, RING_ORDER_TAG,
							  &(struct iovec){ p, sizeof(p) }, 1), 0);
		break;
	}
	case SHORT_PAYLOAD: { /* claims 3 CPUs, lists 2 */
		uint8_t p[24] = { 1, 0, 0, 0, 3, 0, 0, 0, 0xe0, 0x2e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

		ck_assert_int_eq(perf_writer__set_private(w, RING_ORDER_TAG,
							  &(struct iovec){ p, sizeof(p) }, 1), 0);
		break;
	}
	case DUP_CPUS:
		ck_assert_int_eq(ring_order__write(w, &(struct ring_order){ .max_back_ns = BACK, .nr_cpus = 2,
								      .cpus = dup }), 0);
		break;
	case ANY_BACK: /* true of any order: tells nothing */
		ck_assert_int_eq(ring_order__write(w, &(struct ring_order){ .max_back_ns = UINT64_MAX,
									      .nr_cpus = 2,
									      .cpus = cpus }), 0);
		break;
	case ONE_CPU_LEFT_OUT: /* CPU 1's records are not covered */
		ck_assert_int_eq(ring_order__write(w, &(struct ring_order){ .max_back_ns = BACK, .nr_cpus = 1,
								      .cpus = cpus }), 0);
		break;
	}
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	perf_writer__free(w);
}

static int collect(const struct perf_reader_record *rec, void *ctx)
{
	struct out *o = ctx;

	if (rec->hdr->type == PERF_RECORD_FINISHED_ROUND)
		return 0;
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 1024;
		o->times = realloc(o->times, o->cap * sizeof(*o->times));
		o->cpus = realloc(o->cpus, o->cap * sizeof(*o->cpus));
		ck_assert(o->times && o->cpus);
	}
	o->times[o->n] = rec->time;
	o->cpus[o->n] = rec->hdr->type == PERF_RECORD_SAMPLE ?
				((const uint32_t *)rec->hdr)[8] :
				((const uint32_t *)((const uint8_t *)rec->hdr + rec->hdr->size - 8))[0];
	o->n++;
	return 0;
}

static int by_time(const void *pa, const void *pb)
{
	const struct recsum *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

struct result {
	size_t peak;
	uint64_t unordered;
	size_t n;
	bool sorted_as_expected;
};

/* Read path in time order (on the calling thread, then with a decoding thread: the same). */
static struct result read_ordered(const char *path)
{
	struct result res[2];

	qsort(expected, nr_expected, sizeof(*expected), by_time);
	for (int threaded = 0; threaded < 2; threaded++) {
		struct perf_reader *r = perf_reader__new(NULL);
		struct out o = { 0 };

		ck_assert_ptr_nonnull(r);
		ck_assert_int_eq(perf_reader__open(r, path), 0);
		perf_reader__set_decode_thread(r, threaded);
		ck_assert_int_eq(perf_reader__for_each_ordered(r, collect, &o), 0);
		res[threaded] = (struct result){ perf_reader__peak_queued(r),
						 perf_reader__nr_unordered(r), o.n, o.n == nr_expected };
		for (size_t i = 0; res[threaded].sorted_as_expected && i < o.n; i++)
			if (o.times[i] != expected[i].time || o.cpus[i] != expected[i].cpu)
				res[threaded].sorted_as_expected = false;
		free(o.times);
		free(o.cpus);
		perf_reader__free(r);
	}
	ck_assert_uint_eq(res[0].peak, res[1].peak);
	ck_assert_uint_eq(res[0].unordered, res[1].unordered);
	ck_assert_uint_eq(res[0].n, res[1].n);
	ck_assert_int_eq(res[0].sorted_as_expected, res[1].sorted_as_expected);
	return res[0];
}

/* each test's file, named by the test process (Check forks one per test) */
static char path[64];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/check_ring_order.%d", (int)getpid());
}

static void teardown(void)
{
	unlink(path);
	free(expected);
	expected = NULL;
	nr_expected = 0;
}

/* The true claim: the same order as without it (every record, sorted by time, ties in file
 * order, none out of order), holding a few frames' records instead of the whole file. */
START_TEST(test_claim_holds_less)
{
	struct result without, with;

	write_file(path, NO_CLAIM, BACK);
	without = read_ordered(path);
	ck_assert_uint_eq(without.n, 2 * FRAMES * PER_FRAME);
	ck_assert(without.sorted_as_expected);
	ck_assert_uint_eq(without.unordered, 0);

	write_file(path, TRUE_CLAIM, BACK);
	with = read_ordered(path);
	ck_assert_uint_eq(with.n, 2 * FRAMES * PER_FRAME);
	ck_assert_msg(with.sorted_as_expected, "the claim changed the order");
	ck_assert_uint_eq(with.unordered, 0);
	/* without: everything (80 frames); with: about one frame of each stream */
	ck_assert_msg(with.peak * 10 < without.peak, "held %zu bytes with the claim, %zu without",
		      with.peak, without.peak);
}
END_TEST

/* Claims the records break: they step back where it says they never do, or a CPU it leaves
 * out has records (the walk then stops using the claim, too late for the records before).
 * Every record is still delivered, those that came too late counted out of order, as perf
 * counts them. */
START_TEST(test_lying_claim)
{
	static const enum claim lies[] = { LYING_CLAIM, ONE_CPU_LEFT_OUT };

	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		struct result res;

		write_file(path, lies[i], BACK);
		res = read_ordered(path);
		ck_assert_uint_eq(res.n, 2 * FRAMES * PER_FRAME);
		ck_assert_uint_gt(res.unordered, 0);
		ck_assert(!res.sorted_as_expected);
	}
}
END_TEST

/* Payloads that do not parse, claims the walk cannot use and a claim that any step back may
 * come (UINT64_MAX, once taken as none) are ignored: rounds alone decide, and the order is the
 * exact one. */
START_TEST(test_unusable_claims)
{
	static const enum claim bad[] = { BAD_VERSION, SHORT_PAYLOAD, DUP_CPUS, ANY_BACK };
	struct result without, res;

	write_file(path, NO_CLAIM, BACK);
	without = read_ordered(path);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(path, bad[i], BACK);
		res = read_ordered(path);
		ck_assert_msg(res.sorted_as_expected, "claim %d changed the order", bad[i]);
		ck_assert_uint_eq(res.unordered, 0);
		ck_assert_uint_eq(res.peak, without.peak);
	}
}
END_TEST

START_TEST(test_encoding)
{
	uint32_t cpus[3] = { 0, 7, 3 };
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
				     .sample_type = SAMPLE_TYPE, .sample_id_all = 1 };
	uint64_t id = 1;
	struct perf_writer_event ev = { "cpu-clock", &a, &id, 1 };
	struct perf_writer_opts wo = { .events = &ev, .nr_events = 1 };
	struct perf_writer *w = perf_writer__open(path, &wo);
	struct perf_reader *r;
	struct ring_order o;
	uint8_t other[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	size_t len;
	const uint8_t *p;

	ck_assert_ptr_nonnull(w);
	put_sample(w, 5, 0);
	/* beside another private section (below it, written first whatever the call order) */
	ck_assert_int_eq(ring_order__write(w, &(struct ring_order){ .max_back_ns = 12345, .nr_cpus = 3,
							      .cpus = cpus }), 0);
	ck_assert_int_eq(perf_writer__set_private(w, RING_ORDER_TAG - 1,
						  &(struct iovec){ other, 8 }, 1), 0);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	perf_writer__free(w);

	r = perf_reader__new(NULL);
	ck_assert_int_eq(perf_reader__open(r, path), 0);
	ck_assert_int_eq(ring_order__read(r, &o), 1);
	ck_assert_uint_eq(o.max_back_ns, 12345);
	ck_assert_uint_eq(o.nr_cpus, 3);
	ck_assert_uint_eq(ring_order__cpu(&o, 0), 0);
	ck_assert_uint_eq(ring_order__cpu(&o, 1), 7);
	ck_assert_uint_eq(ring_order__cpu(&o, 2), 3);
	p = perf_reader__private(r, RING_ORDER_TAG - 1, &len);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(len, 8);
	ck_assert(!memcmp(p, other, 8));
	perf_reader__free(r);
	/* perf reads the file, its two private sections after its own, without a word */
	{
		char cmd[512];

		snprintf(cmd, sizeof(cmd),
			 "perf report -i %s --stats 2>&1 | grep -q 'SAMPLE events: *1\\b' && "
			 "! perf report -i %s --stats 2>&1 | grep -qi 'error\\|warning\\|invalid'",
			 path, path);
		ck_assert_msg(system(cmd) == 0, "perf does not read the file cleanly: %s", cmd);
	}
}
END_TEST

static int claim_read(const char *p)
{
	struct perf_reader *r = perf_reader__new(NULL);
	struct ring_order o;
	int e;

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(perf_reader__open(r, p), 0);
	e = ring_order__read(r, &o);
	perf_reader__free(r);
	return e;
}

static void patch(const char *p, long off_from_end, const void *bytes, size_t n)
{
	FILE *f = fopen(p, "r+b");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, -off_from_end, SEEK_END), 0);
	ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
	fclose(f);
}

/* A trailer that does not fit where it says is not read: a size past the features, an entry
 * longer than the trailer, no magic. The file still opens, the claim is simply absent. */
START_TEST(test_trailer_damage)
{
	uint64_t huge = 1ull << 40, over;
	uint32_t len = 1000;

	write_file(path, TRUE_CLAIM, BACK);
	ck_assert_int_eq(claim_read(path), 1);
	/* the entries' size reaching into the feature sections */
	{
		FILE *f = fopen(path, "rb");
		long end;

		ck_assert_ptr_nonnull(f);
		fseek(f, 0, SEEK_END);
		end = ftell(f);
		fclose(f);
		over = (uint64_t)end - 16 - 100;
	}
	patch(path, 16, &over, 8);
	ck_assert_int_eq(claim_read(path), 0);
	patch(path, 16, &huge, 8);
	ck_assert_int_eq(claim_read(path), 0);

	write_file(path, TRUE_CLAIM, BACK);
	/* its one entry (16 + 8 bytes of payload) claiming 1000 bytes: entry header at -48 */
	patch(path, 16 + 24 + 8 - 4, &len, 4);
	ck_assert_int_eq(claim_read(path), 0);

	write_file(path, TRUE_CLAIM, BACK);
	patch(path, 1, "2", 1);
	ck_assert_int_eq(claim_read(path), 0);
}
END_TEST

Suite *ring_order_suite(void)
{
	Suite *s = suite_create("ring_order");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_claim_holds_less);
	tcase_add_test(tc, test_lying_claim);
	tcase_add_test(tc, test_unusable_claims);
	tcase_add_test(tc, test_encoding);
	tcase_add_test(tc, test_trailer_damage);
	suite_add_tcase(s, tc);
	return s;
}
