/* Tests of the ring-buffer consumer against a simulated kernel producer: memory laid out like a
 * perf ring (control page, then a power-of-two data area) that the test writes records into and
 * publishes with a release store of data_head, as the kernel does. One test drives a real
 * software perf event through ringbuf__mmap. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "ringbuf/ringbuf.h"

#define SIM_PAGE 4096

/* The simulated kernel: writes at its private head, publishes when told. */
struct sim {
	uint8_t *mem;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	size_t size;
	uint64_t head;
};

static void sim_init(struct sim *s, size_t size, uint64_t start)
{
	s->mem = aligned_alloc(SIM_PAGE, SIM_PAGE + size);
	ck_assert_ptr_nonnull(s->mem);
	/* Stale bytes everywhere, so that reading unpublished space would show. */
	memset(s->mem + SIM_PAGE, 0xa5, size);
	memset(s->mem, 0, SIM_PAGE);
	s->meta = (void *)s->mem;
	s->data = s->mem + SIM_PAGE;
	s->size = size;
	s->head = start;
	s->meta->data_head = start;
	s->meta->data_tail = start;
}

static void sim_reset(struct sim *s, uint64_t start)
{
	memset(s->data, 0xa5, s->size);
	s->head = start;
	s->meta->data_head = start;
	s->meta->data_tail = start;
}

static void sim_fini(struct sim *s)
{
	free(s->mem);
}

static void sim_put(struct sim *s, const void *src, size_t len)
{
	size_t off = s->head & (s->size - 1);
	size_t first = len < s->size - off ? len : s->size - off;

	memcpy(s->data + off, src, first);
	memcpy(s->data, (const uint8_t *)src + first, len - first);
	s->head += len;
}

static void sim_publish(struct sim *s)
{
	__atomic_store_n(&s->meta->data_head, s->head, __ATOMIC_RELEASE);
}

static uint8_t pattern(uint64_t seq, size_t i)
{
	return (uint8_t)(seq * 131 + i * 7 + (seq >> 8));
}

/* A record: header, u64 seq, then pattern bytes up to size. */
static void make_record(uint8_t *buf, uint32_t type, uint16_t size, uint64_t seq)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };

	memcpy(buf, &h, sizeof(h));
	if (size >= 16)
		memcpy(buf + 8, &seq, 8);
	for (size_t i = 16; i < size; i++)
		buf[i] = pattern(seq, i);
}

static void sim_record(struct sim *s, uint16_t size, uint64_t seq)
{
	static uint8_t buf[65536];

	make_record(buf, PERF_RECORD_SAMPLE, size, seq);
	sim_put(s, buf, size);
}

static void sim_header(struct sim *s, uint16_t size)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = size };

	sim_put(s, &h, sizeof(h));
}

#define MAX_GOT 1024

struct got {
	unsigned int n;
	uint64_t seq[MAX_GOT];
	uint16_t size[MAX_GOT];
	unsigned int bad_content, misaligned;
	int stop_at; /* refuse the record with this index (-1: never) */
	unsigned int calls;
};

static void got_init(struct got *g)
{
	memset(g, 0, sizeof(*g));
	g->stop_at = -1;
}

static int check_content(const struct perf_event_header *rec, uint64_t *ret_seq)
{
	const uint8_t *p = (const void *)rec;
	uint64_t seq = 0;

	if (rec->size >= 16)
		memcpy(&seq, p + 8, 8);
	for (size_t i = 16; i < rec->size; i++)
		if (p[i] != pattern(seq, i))
			return -1;
	*ret_seq = seq;
	return 0;
}

static int collect(void *ctx, const struct perf_event_header *rec)
{
	struct got *g = ctx;
	uint64_t seq = 0;

	g->calls++;
	if ((int)g->n == g->stop_at)
		return -EAGAIN;
	if ((uintptr_t)rec & 7)
		g->misaligned++;
	if (check_content(rec, &seq) < 0)
		g->bad_content++;
	if (g->n < MAX_GOT) {
		g->seq[g->n] = seq;
		g->size[g->n] = rec->size;
	}
	g->n++;
	return 0;
}

static uint64_t tail_of(const struct sim *s)
{
	return __atomic_load_n(&s->meta->data_tail, __ATOMIC_ACQUIRE);
}

/* ---- core ---- */

START_TEST(test_core_order_sizes_tail)
{
	struct sim s;
	struct got g;
	struct ringbuf *rb;
	size_t total = 0;

	sim_init(&s, 4096, 0);
	rb = ringbuf__wrap(s.mem, SIM_PAGE, 4096);
	ck_assert_ptr_nonnull(rb);
	ck_assert_uint_eq(ringbuf__size(rb), 4096);

	got_init(&g);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 0);
	ck_assert_uint_eq(g.calls, 0);

	for (unsigned int i = 0; i < 10; i++) {
		sim_record(&s, 16 + 8 * i, 100 + i);
		total += 16 + 8 * i;
	}
	/* Written but not published: invisible. */
	ck_assert_uint_eq(ringbuf__used(rb), 0);
	sim_publish(&s);
	ck_assert_uint_eq(ringbuf__used(rb), total);

	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), (ssize_t)total);
	ck_assert_uint_eq(g.n, 10);
	for (unsigned int i = 0; i < 10; i++) {
		ck_assert_uint_eq(g.seq[i], 100 + i);
		ck_assert_uint_eq(g.size[i], 16 + 8 * i);
	}
	ck_assert_uint_eq(g.bad_content, 0);
	ck_assert_uint_eq(g.misaligned, 0);
	ck_assert_uint_eq(tail_of(&s), s.head);
	ck_assert_uint_eq(ringbuf__used(rb), 0);
	ck_assert_uint_eq(ringbuf__discarded(rb), 0);

	/* Nothing new: nothing handed out, tail unchanged. */
	got_init(&g);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 0);
	ck_assert_uint_eq(g.calls, 0);
	ck_assert_uint_eq(tail_of(&s), s.head);

	ringbuf__free(rb);
	sim_fini(&s);
}
END_TEST

START_TEST(test_core_fill_level)
{
	struct sim s;
	struct got g;
	struct ringbuf *rb;

	sim_init(&s, 4096, 0);
	rb = ringbuf__wrap(s.mem, SIM_PAGE, 4096);
	ck_assert_ptr_nonnull(rb);
	ck_assert_uint_eq(ringbuf__fill_permille(rb), 0);
	for (int i = 0; i < 8; i++)
		sim_record(&s, 256, i);
	sim_publish(&s);
	ck_assert_uint_eq(ringbuf__used(rb), 2048);
	ck_assert_uint_eq(ringbuf__fill_permille(rb), 500);
	for (int i = 0; i < 8; i++)
		sim_record(&s, 256, i);
	sim_publish(&s);
	ck_assert_uint_eq(ringbuf__fill_permille(rb), 1000);
	got_init(&g);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 1024), 1024);
	ck_assert_uint_eq(ringbuf__fill_permille(rb), 750);
	ringbuf__free(rb);
	sim_fini(&s);
}
END_TEST

START_TEST(test_core_bad_args)
{
	static uint64_t mem[(SIM_PAGE + 4096) / 8];

	errno = 0;
	ck_assert_ptr_null(ringbuf__wrap(mem, SIM_PAGE, 3000));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ringbuf__wrap(NULL, SIM_PAGE, 4096));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ringbuf__wrap(mem, SIM_PAGE, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ringbuf__mmap(-1, 3));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ringbuf__mmap(-1, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ringbuf__mmap(-1, 4));
	ck_assert_int_eq(errno, EBADF);
	ringbuf__free(NULL);
}
END_TEST

/* ---- wrap ---- */

/* A record of every tested size placed at every 8-byte offset of the ring, followed by a small
 * one; the counters start far from 0 so that only their low bits locate data. */
START_TEST(test_wrap_every_offset)
{
	static const uint16_t sizes[] = { 8, 16, 24, 72, 264, 2048, 4088, 4096 };
	struct sim s;
	struct ringbuf *rb;
	struct got g;

	sim_init(&s, 4096, 0);
	rb = ringbuf__wrap(s.mem, SIM_PAGE, 4096);
	ck_assert_ptr_nonnull(rb);
	for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
		for (uint64_t off = 0; off < 4096; off += 8) {
			uint64_t start = 0xfffffffffff00000ULL + off; /* wraps past 2^64 too */
			uint16_t second = sizes[k] + 16 > 4096 ? 0 : 16;

			sim_reset(&s, start);
			sim_record(&s, sizes[k], off);
			if (second)
				sim_record(&s, second, off + 1);
			sim_publish(&s);
			got_init(&g);
			ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), sizes[k] + second);
			ck_assert_uint_eq(g.n, second ? 2 : 1);
			ck_assert_uint_eq(g.size[0], sizes[k]);
			if (sizes[k] >= 16)
				ck_assert_uint_eq(g.seq[0], off);
			if (second)
				ck_assert_uint_eq(g.seq[1], off + 1);
			ck_assert_uint_eq(g.bad_content, 0);
			ck_assert_uint_eq(g.misaligned, 0);
			ck_assert_uint_eq(tail_of(&s), s.head);
		}
	}
	ringbuf__free(rb);
	sim_fini(&s);
}
END_TEST

/* The largest record a u16 size allows, split by the end of a 128 KiB ring at several points. */
START_TEST(test_wrap_largest_record)
{
	static const uint64_t offs[] = { 131072 - 8, 131072 - 4096, 131072 - 65520, 70000 & ~7ULL };
	struct sim s;
	struct ringbuf *rb;
	struct got g;

	sim_init(&s, 131072, 0);
	rb = ringbuf__wrap(s.mem, SIM_PAGE, 131072);
	ck_assert_ptr_nonnull(rb);
	for (size_t k = 0; k < ARRAY_SIZE(offs); k++) {
		sim_reset(&s, offs[k]);
		sim_record(&s, 65528, 7 + k);
		sim_record(&s, 65528, 8 + k);
		sim_publish(&s);
		got_init(&g);
		ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 2 * 65528);
		ck_assert_uint_eq(g.n, 2);
		ck_assert_uint_eq(g.seq[0], 7 + k);
		ck_assert_uint_eq(g.seq[1], 8 + k);
		ck_assert_uint_eq(g.bad_content, 0);
		ck_assert_uint_eq(g.misaligned, 0);
	}
	ringbuf__free(rb);
	sim_fini(&s);
}
END_TEST

/* ---- torn ---- */

START_TEST(test_torn_unpublished_header)
{
	struct sim s;
	struct ringbuf *rb;
	struct got g;

	sim_init(&s, 4096, 4000);
	rb = ringbuf__wrap(s.mem, SIM_PAGE, 4096);
	ck_assert_ptr_nonnull(rb);
	/* A header (and the whole record) written, head not moved: not handed out. */
	sim_record(&s, 64, 1);
	got_init(&g);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 0);
	ck_assert_uint_eq(g.calls, 0);
	ck_assert_uint_eq(tail_of(&s), 4000);

	/* Head published into the middle of the record, at every 8-byte step, including just
	 * past the header and across the ring's end. */
	for (uint64_t part = 8; part < 64; part += 8) {
		__atomic_store_n(&s.meta->data_head, 4000 + part, __ATOMIC_RELEASE);
		ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 0);
		ck_assert_uint_eq(g.calls, 0);
		ck_assert_uint_eq(tail_of(&s), 4000);
	}
	sim_publish(&s);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 64);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_uint_eq(g.seq[0], 1);
	ck_assert_uint_eq(g.bad_content, 0);
	ringbuf__free(rb);
	sim_fini(&s);
}
END_TEST

START_TEST(test_torn_complete_then_partial)
{
	struct sim s;
	struct ringbuf *rb;
	struct got g;

	sim_init(&s, 4096, 0);
	rb = ringbuf__wrap(s.mem, SIM_PAGE, 4096);
	ck_assert_ptr_nonnull(rb);
	sim_record(&s, 48, 1);
	sim_record(&s, 48, 2);
	sim_record(&s, 200, 3);
	__atomic_store_n(&s.meta->data_head, 48 + 48 + 16, __ATOMIC_RELEASE);
	got_init(&g);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 96);
	ck_assert_uint_eq(g.n, 2);
	ck_assert_uint_eq(tail_of(&s), 96);
	ck_assert_uint_eq(ringbuf__used(rb), 16);
	sim_publish(&s);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 200);
	ck_assert_uint_eq(g.n, 3);
	ck_assert_uint_eq(g.seq[2], 3);
	ck_assert_uint_eq(g.bad_content, 0);
	ck_assert_uint_eq(ringbuf__discarded(rb), 0);
	ringbuf__free(rb);
	sim_fini(&s);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_limits_max_bytes)
{
	struct sim s;
	struct ringbuf *rb;
	struct got g;

	sim_init(&s, 4096, 0);
	rb = ringbuf__wrap(s.mem, SIM_PAGE, 4096);
	ck_assert_ptr_nonnull(rb);
	for (int i = 0; i < 10; i++)
		sim_record(&s, 64, i);
	sim_publish(&s);

	got_init(&g);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 200), 192);
	ck_assert_uint_eq(g.n, 3);
	ck_assert_uint_eq(tail_of(&s), 192);
	/* Exactly on a record boundary. */
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 128), 128);
	ck_assert_uint_eq(g.n, 5);
	/* Below one record: one record still goes, so the ring cannot stall. */
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 8), 64);
	ck_assert_uint_eq(g.n, 6);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 4 * 64);
	ck_assert_uint_eq(g.n, 10);
	for (unsigned int i = 0; i < 10; i++)
		ck_assert_uint_eq(g.seq[i], i);
	ck_assert_uint_eq(tail_of(&s), 640);
	ringbuf__free(rb);
	sim_fini(&s);
}
END_TEST

START_TEST(test_limits_callback_stop)
{
	struct sim s;
	struct ringbuf *rb;
	struct got g;

	sim_init(&s, 4096, 4096 - 128);
	rb = ringbuf__wrap(s.mem, SIM_PAGE, 4096);
	ck_assert_ptr_nonnull(rb);
	for (int i = 0; i < 5; i++)
		sim_record(&s, 96, i); /* the 2nd one straddles the end */
	sim_publish(&s);

	/* Refused on the very first record: nothing consumed, tail untouched. */
	got_init(&g);
	g.stop_at = 0;
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), -EAGAIN);
	ck_assert_uint_eq(g.calls, 1);
	ck_assert_uint_eq(tail_of(&s), 4096 - 128);

	got_init(&g);
	g.stop_at = 1;
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), -EAGAIN);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_uint_eq(tail_of(&s), 4096 - 128 + 96);

	/* The refused record (the wrapped one) comes again, first. */
	got_init(&g);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 4 * 96);
	ck_assert_uint_eq(g.n, 4);
	for (unsigned int i = 0; i < 4; i++)
		ck_assert_uint_eq(g.seq[i], i + 1);
	ck_assert_uint_eq(g.bad_content, 0);
	ck_assert_uint_eq(tail_of(&s), s.head);
	ringbuf__free(rb);
	sim_fini(&s);
}
END_TEST

/* ---- corrupt ---- */

static void check_corrupt(uint16_t bad_size)
{
	struct sim s;
	struct ringbuf *rb;
	struct got g;
	uint64_t bad_at;

	sim_init(&s, 4096, 64);
	rb = ringbuf__wrap(s.mem, SIM_PAGE, 4096);
	ck_assert_ptr_nonnull(rb);
	sim_record(&s, 64, 1);
	sim_record(&s, 32, 2);
	bad_at = s.head;
	sim_header(&s, bad_size);
	sim_put(&s, (uint64_t[]){ 0 }, 8);
	sim_record(&s, 64, 3);
	sim_publish(&s);

	got_init(&g);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), -EBADMSG);
	/* What came before the bad header was handed out; the rest is gone and counted. */
	ck_assert_uint_eq(g.n, 2);
	ck_assert_uint_eq(g.seq[1], 2);
	ck_assert_uint_eq(tail_of(&s), s.head);
	ck_assert_uint_eq(ringbuf__discarded(rb), s.head - bad_at);
	ck_assert_uint_eq(ringbuf__used(rb), 0);

	/* Resynchronised: new records flow again. */
	sim_record(&s, 40, 4);
	sim_publish(&s);
	got_init(&g);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), 40);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_uint_eq(g.seq[0], 4);
	ck_assert_uint_eq(g.bad_content, 0);
	ck_assert_uint_eq(ringbuf__discarded(rb), 16 + 64);
	ringbuf__free(rb);
	sim_fini(&s);
}

START_TEST(test_corrupt_size_zero)
{
	check_corrupt(0);
}
END_TEST

START_TEST(test_corrupt_size_unaligned)
{
	check_corrupt(12);
	check_corrupt(4);
	check_corrupt(65535);
}
END_TEST

START_TEST(test_corrupt_size_too_big)
{
	check_corrupt(4096 + 8);
}
END_TEST

START_TEST(test_corrupt_head_too_far)
{
	struct sim s;
	struct ringbuf *rb;
	struct got g;

	sim_init(&s, 4096, 0);
	rb = ringbuf__wrap(s.mem, SIM_PAGE, 4096);
	ck_assert_ptr_nonnull(rb);
	sim_record(&s, 64, 1);
	__atomic_store_n(&s.meta->data_head, 4096 + 8, __ATOMIC_RELEASE);
	got_init(&g);
	ck_assert_int_eq(ringbuf__drain(rb, collect, &g, 0), -EBADMSG);
	ck_assert_uint_eq(g.calls, 0);
	ck_assert_uint_eq(ringbuf__discarded(rb), 4096 + 8);
	ck_assert_uint_eq(tail_of(&s), 4096 + 8);
	ringbuf__free(rb);
	sim_fini(&s);
}
END_TEST

/* ---- concurrency ---- */

#define RACE_RECORDS 200000
#define RACE_RING (64 * 1024)

struct race {
	struct sim s;
	uint64_t sum_produced;
	/* consumer state */
	uint64_t next_seq, sum_consumed;
	unsigned int errors;
};

static uint16_t race_size(uint64_t seq)
{
	/* 16..1024 bytes, mostly small, now and then large. */
	uint64_t x = seq * 0x9e3779b97f4a7c15ULL;

	return (x >> 60) == 0 ? 16 + 8 * ((x >> 20) % 126) : 16 + 8 * ((x >> 20) % 16);
}

static uint64_t mix(uint64_t sum, uint64_t v)
{
	return (sum ^ v) * 0x100000001b3ULL;
}

static void *race_producer(void *arg)
{
	struct race *r = arg;
	static uint8_t buf[1024];

	for (uint64_t seq = 0; seq < RACE_RECORDS; seq++) {
		uint16_t size = race_size(seq);

		/* Acquire pairs with the consumer's release of data_tail: its reads of the space we
		 * are about to overwrite are done. */
		while (r->s.size - (r->s.head - __atomic_load_n(&r->s.meta->data_tail,
								  __ATOMIC_ACQUIRE)) < size)
			sched_yield();
		make_record(buf, PERF_RECORD_SAMPLE, size, seq);
		sim_put(&r->s, buf, size);
		r->sum_produced = mix(mix(r->sum_produced, seq), buf[size - 1]);
		/* Publish every record or every few, like a kernel with batched wakeups. */
		if ((seq & 3) != 1)
			sim_publish(&r->s);
	}
	sim_publish(&r->s);
	return NULL;
}

static int race_consume(void *ctx, const struct perf_event_header *rec)
{
	struct race *r = ctx;
	uint64_t seq = UINT64_MAX;

	if (check_content(rec, &seq) < 0 || seq != r->next_seq || rec->size != race_size(seq) ||
	    ((uintptr_t)rec & 7))
		r->errors++;
	r->sum_consumed = mix(mix(r->sum_consumed, seq), ((const uint8_t *)rec)[rec->size - 1]);
	r->next_seq = seq + 1;
	return 0;
}

START_TEST(test_concurrency_producer_consumer)
{
	struct race *r = calloc(1, sizeof(*r));
	struct ringbuf *rb;
	pthread_t t;
	unsigned int round = 0;
	uint64_t bytes = 0;

	ck_assert_ptr_nonnull(r);
	sim_init(&r->s, RACE_RING, 0xffffffffffff0000ULL);
	rb = ringbuf__wrap(r->s.mem, SIM_PAGE, RACE_RING);
	ck_assert_ptr_nonnull(rb);
	ck_assert_int_eq(pthread_create(&t, NULL, race_producer, r), 0);
	while (r->next_seq < RACE_RECORDS && r->errors == 0) {
		/* Mix unlimited drains with small limits. */
		ssize_t n = ringbuf__drain(rb, race_consume, r, (round++ % 3) ? 0 : 512);

		ck_assert_int_ge(n, 0);
		bytes += n;
		if (n == 0)
			sched_yield();
	}
	pthread_join(t, NULL);
	ck_assert_uint_eq(r->errors, 0);
	ck_assert_uint_eq(r->next_seq, RACE_RECORDS);
	ck_assert_uint_eq(r->sum_consumed, r->sum_produced);
	ck_assert_uint_eq(bytes, r->s.head - 0xffffffffffff0000ULL);
	ck_assert_uint_eq(ringbuf__used(rb), 0);
	ck_assert_uint_eq(ringbuf__discarded(rb), 0);
	ringbuf__free(rb);
	sim_fini(&r->s);
	free(r);
}
END_TEST

/* ---- real: a software event on this process ---- */

struct real {
	unsigned int samples, comms, mmaps, others, bad;
	uint64_t last_time;
	pid_t pid;
	int saw_name;
};

static int real_record(void *ctx, const struct perf_event_header *rec)
{
	struct real *r = ctx;
	const uint8_t *p = (const void *)rec;

	if (rec->size < sizeof(*rec) || rec->size % 8 || rec->type == 0 ||
	    rec->type >= PERF_RECORD_MAX) {
		r->bad++;
		return 0;
	}
	switch (rec->type) {
	case PERF_RECORD_SAMPLE: {
		/* sample_type IP | TID | TIME: ip, pid, tid, time. */
		uint32_t pid, tid;
		uint64_t time;

		if (rec->size != 8 + 8 + 8 + 8) {
			r->bad++;
			break;
		}
		memcpy(&pid, p + 16, 4);
		memcpy(&tid, p + 20, 4);
		memcpy(&time, p + 24, 8);
		if ((pid_t)pid != r->pid || (pid_t)tid != r->pid || time < r->last_time)
			r->bad++;
		r->last_time = time;
		r->samples++;
		break;
	}
	case PERF_RECORD_COMM:
		r->comms++;
		if (rec->size >= 8 + 8 + 16 && !strcmp((const char *)p + 16, "rb-real-test"))
			r->saw_name = 1;
		break;
	case PERF_RECORD_MMAP:
		r->mmaps++;
		break;
	default:
		r->others++;
		break;
	}
	return 0;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

START_TEST(test_real_software_event)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = 200000, /* one sample per 200 us of our CPU time */
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.disabled = 1,
		.mmap = 1,
		.comm = 1,
		.task = 1,
	};
	struct real r = { .pid = getpid() };
	_cleanup_close_ int fd = -1, exe = -1;
	struct ringbuf *rb;
	char oldname[17] = "";
	volatile uint64_t sink = 0;
	uint64_t t0;
	void *map;

	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	ck_assert_msg(fd >= 0, "perf_event_open(task-clock): %s", strerror(errno));
	rb = ringbuf__mmap(fd, 16);
	ck_assert_msg(rb != NULL, "ringbuf__mmap: %s", strerror(errno));
	ck_assert_uint_eq(ringbuf__size(rb), 16 * (size_t)sysconf(_SC_PAGESIZE));
	ck_assert_int_eq(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);

	/* A COMM record and an MMAP record of our own making, then ~40 ms of work. */
	prctl(PR_GET_NAME, oldname);
	prctl(PR_SET_NAME, "rb-real-test");
	exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(exe, 0);
	map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, exe, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);
	t0 = cpu_ns();
	while (cpu_ns() - t0 < 40000000ULL) {
		for (int i = 0; i < 10000; i++)
			sink += i * sink + 1;
		ck_assert_int_ge(ringbuf__drain(rb, real_record, &r, 0), 0);
	}
	ck_assert_int_eq(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	prctl(PR_SET_NAME, oldname);
	munmap(map, 4096);
	ck_assert_int_ge(ringbuf__drain(rb, real_record, &r, 0), 0);

	ck_assert_uint_eq(r.bad, 0);
	ck_assert_uint_ge(r.samples, 50); /* ~200 expected */
	ck_assert_int_eq(r.saw_name, 1);
	ck_assert_uint_ge(r.mmaps, 1);
	ck_assert_uint_eq(ringbuf__used(rb), 0);
	ck_assert_uint_eq(ringbuf__discarded(rb), 0);
	ringbuf__free(rb);
}
END_TEST

Suite *ringbuf_suite(void)
{
	Suite *s = suite_create("ringbuf");
	TCase *tc;

	tc = tcase_create("core");
	tcase_add_test(tc, test_core_order_sizes_tail);
	tcase_add_test(tc, test_core_fill_level);
	tcase_add_test(tc, test_core_bad_args);
	suite_add_tcase(s, tc);

	tc = tcase_create("wrap");
	tcase_add_test(tc, test_wrap_every_offset);
	tcase_add_test(tc, test_wrap_largest_record);
	suite_add_tcase(s, tc);

	tc = tcase_create("torn");
	tcase_add_test(tc, test_torn_unpublished_header);
	tcase_add_test(tc, test_torn_complete_then_partial);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_test(tc, test_limits_max_bytes);
	tcase_add_test(tc, test_limits_callback_stop);
	suite_add_tcase(s, tc);

	tc = tcase_create("corrupt");
	tcase_add_test(tc, test_corrupt_size_zero);
	tcase_add_test(tc, test_corrupt_size_unaligned);
	tcase_add_test(tc, test_corrupt_size_too_big);
	tcase_add_test(tc, test_corrupt_head_too_far);
	suite_add_tcase(s, tc);

	tc = tcase_create("concurrency");
	tcase_add_test(tc, test_concurrency_producer_consumer);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);

	tc = tcase_create("real");
	tcase_add_test(tc, test_real_software_event);
	suite_add_tcase(s, tc);

	return s;
}
