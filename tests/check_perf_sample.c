/* Tests of perf_sample: hand-built SAMPLE records with every sample_type field, checked for field
 * order, and cut at every length to check that each field's bound is enforced. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "lib/cleanup.h"
#include "perf/abi.h"
#include "perf/sample.h"

struct rb {
	uint64_t w[512];
	size_t n;
};

static void rb_init(struct rb *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	memset(b, 0, sizeof(*b));
	memcpy(&b->w[0], &h, sizeof(h));
	b->n = 1;
}

static void put(struct rb *b, uint64_t v)
{
	b->w[b->n++] = v;
}

static uint64_t pair(uint32_t lo, uint32_t hi)
{
	return (uint64_t)hi << 32 | lo;
}

static struct perf_event_header *rb_done(struct rb *b)
{
	struct perf_event_header *h = (void *)b->w;

	h->size = b->n * 8;
	return h;
}

#define ALL_TYPES                                                                               \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |         \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |           \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |       \
	 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |             \
	 PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |            \
	 PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |                   \
	 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX)

/* A sample with every field; returns its attr in *attr. Marker values say which field is which. */
static struct perf_event_header *build_full(struct rb *b, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->sample_type = ALL_TYPES;
	attr->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
			    PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr->branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
	attr->sample_regs_user = (1ULL << PERF_X86_BP) | (1ULL << PERF_X86_SP) |
				 (1ULL << PERF_X86_IP);
	attr->sample_regs_intr = 0x3;

	rb_init(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put(b, 0x1d);                      /* identifier */
	put(b, 0x401000);                  /* ip */
	put(b, pair(100, 101));            /* pid, tid */
	put(b, 123456789);                 /* time */
	put(b, 0xadd7);                    /* addr */
	put(b, 0x1d);                      /* id */
	put(b, 0x5e);                      /* stream id */
	put(b, pair(3, 0));                /* cpu, res */
	put(b, 1000);                      /* period */
	put(b, 2);                         /* read: nr */
	put(b, 11); put(b, 12);            /* time enabled, running */
	put(b, 1); put(b, 0x1d); put(b, 0);/* value, id, lost */
	put(b, 2); put(b, 0x1e); put(b, 0);
	put(b, 3);                         /* callchain nr */
	put(b, PERF_CONTEXT_USER); put(b, 0x401000); put(b, 0x402000);
	put(b, pair(12, 0xaaaaaaaa));      /* raw: u32 size 12, then 12 bytes */
	put(b, 0xbbbbbbbbbbbbbbbb);
	put(b, 1);                         /* branch nr */
	put(b, 7);                         /* hw_idx */
	put(b, 0xf0); put(b, 0x70); put(b, 0);
	put(b, PERF_SAMPLE_REGS_ABI_64);   /* regs_user abi */
	put(b, 0xb0); put(b, 0x5b); put(b, 0x1b); /* BP, SP, IP */
	put(b, 16);                        /* stack size */
	put(b, 0x5555); put(b, 0x6666);
	put(b, 8);                         /* dyn size */
	put(b, 42);                        /* weight */
	put(b, 0xda7a);                    /* data_src */
	put(b, 0x7a);                      /* transaction */
	put(b, PERF_SAMPLE_REGS_ABI_64);   /* regs_intr abi, 2 regs */
	put(b, 0x1111); put(b, 0x2222);
	put(b, 0xf1f1);                    /* phys addr */
	put(b, 0xc6);                      /* cgroup */
	put(b, 4096);                      /* data page size */
	put(b, 2 << 20);                   /* code page size */
	put(b, 8);                         /* aux size */
	put(b, 0xa0a0);
	return rb_done(b);
}

START_TEST(test_field_order)
{
	struct perf_event_attr attr;
	struct perf_sample s;
	struct rb b;
	struct perf_event_header *h = build_full(&b, &attr);
	uint64_t v;

	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
	ck_assert_uint_eq(s.ip, 0x401000);
	ck_assert_uint_eq(s.pid, 100);
	ck_assert_uint_eq(s.tid, 101);
	ck_assert_uint_eq(s.time, 123456789);
	ck_assert_uint_eq(s.addr, 0xadd7);
	ck_assert_uint_eq(s.id, 0x1d);
	ck_assert_uint_eq(s.cpu, 3);
	ck_assert_uint_eq(s.period, 1000);
	ck_assert_uint_eq(s.cpumode, PERF_RECORD_MISC_USER);
	ck_assert_uint_eq(s.callchain_nr, 3);
	ck_assert_uint_eq(s.callchain[0], PERF_CONTEXT_USER);
	ck_assert_uint_eq(s.callchain[2], 0x402000);
	ck_assert_uint_eq(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
	ck_assert_uint_eq(s.regs_mask, attr.sample_regs_user);
	ck_assert(perf_sample__reg(&s, PERF_X86_BP, &v));
	ck_assert_uint_eq(v, 0xb0);
	ck_assert(perf_sample__reg(&s, PERF_X86_SP, &v));
	ck_assert_uint_eq(v, 0x5b);
	ck_assert(perf_sample__reg(&s, PERF_X86_IP, &v));
	ck_assert_uint_eq(v, 0x1b);
	ck_assert(!perf_sample__reg(&s, PERF_X86_AX, &v));
	ck_assert(!perf_sample__reg(&s, 64, &v));
	ck_assert_uint_eq(s.stack_size, 16);
	ck_assert_uint_eq(s.stack_dyn_size, 8);
	ck_assert_uint_eq(((const uint64_t *)s.stack)[1], 0x6666);
	/* Pointers land inside the record, 8-byte aligned. */
	ck_assert_ptr_eq(s.callchain, &b.w[20]);
	ck_assert_uint_eq((uintptr_t)s.regs % 8, 0);
}
END_TEST

/* Every field is bounded: any shorter record is refused. */
START_TEST(test_every_cut)
{
	struct perf_event_attr attr;
	struct perf_sample s;
	struct rb b;
	struct perf_event_header *h = build_full(&b, &attr);
	uint16_t full = h->size, size;

	for (size = 8; size < full; size += 8) {
		h->size = size;
		ck_assert_msg(perf_sample__parse(&attr, h, &s) == -EBADMSG, "size %u accepted",
			      size);
	}
	/* Odd sizes too (the last field is a byte blob). */
	for (size = 8; size < full; size++) {
		h->size = size;
		ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
	}
	h->size = full;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
	h->size = 4;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
}
END_TEST

/* A damaged attr: unknown sample_type bits, or a layout shorter than the record (one register
 * fewer in the mask), are refused by name, never decoded into wrong fields. */
START_TEST(test_attr_mismatch)
{
	struct perf_event_attr attr;
	struct perf_sample s;
	struct rb b;
	struct perf_event_header *h = build_full(&b, &attr);
	struct perf_event_attr bad = attr;

	bad.sample_type = ~0ULL;
	ck_assert_int_eq(perf_sample__parse(&bad, h, &s), -EPROTO);
	bad.sample_type = attr.sample_type | PERF_SAMPLE_MAX;
	ck_assert_int_eq(perf_sample__parse(&bad, h, &s), -EPROTO);
	/* without the last field (aux), the record is longer than the attr says */
	bad = attr;
	bad.sample_type &= ~(uint64_t)PERF_SAMPLE_AUX;
	ck_assert_int_eq(perf_sample__parse(&bad, h, &s), -EMSGSIZE);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
}
END_TEST

/* Each sample_type bit alone: consumes exactly its own words. */
START_TEST(test_single_fields)
{
	static const struct {
		uint64_t bit;
		int words;
	} f[] = {
		{ PERF_SAMPLE_IDENTIFIER, 1 }, { PERF_SAMPLE_IP, 1 }, { PERF_SAMPLE_TID, 1 },
		{ PERF_SAMPLE_TIME, 1 }, { PERF_SAMPLE_ADDR, 1 }, { PERF_SAMPLE_ID, 1 },
		{ PERF_SAMPLE_STREAM_ID, 1 }, { PERF_SAMPLE_CPU, 1 }, { PERF_SAMPLE_PERIOD, 1 },
		{ PERF_SAMPLE_WEIGHT, 1 }, { PERF_SAMPLE_DATA_SRC, 1 },
		{ PERF_SAMPLE_TRANSACTION, 1 }, { PERF_SAMPLE_PHYS_ADDR, 1 },
		{ PERF_SAMPLE_CGROUP, 1 }, { PERF_SAMPLE_DATA_PAGE_SIZE, 1 },
		{ PERF_SAMPLE_CODE_PAGE_SIZE, 1 },
	};
	struct perf_event_attr attr = { .size = sizeof(attr) };
	struct perf_sample s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		struct rb b;
		struct perf_event_header *h;
		int k;

		attr.sample_type = f[i].bit;
		rb_init(&b, PERF_RECORD_SAMPLE, 0);
		for (k = 0; k < f[i].words; k++)
			put(&b, 0x77);
		h = rb_done(&b);
		ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
		h->size -= 8;
		ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
	}
}
END_TEST

START_TEST(test_read_formats)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	struct perf_sample s;
	struct rb b;
	struct perf_event_header *h;

	/* Not a group: value, enabled, running, id, lost = 5 words, then the period. */
	attr.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_PERIOD;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			   PERF_FORMAT_ID | PERF_FORMAT_LOST;
	/* PERIOD comes before READ: put it first. */
	rb_init(&b, PERF_RECORD_SAMPLE, 0);
	put(&b, 99);
	put(&b, 1); put(&b, 2); put(&b, 3); put(&b, 4); put(&b, 5);
	h = rb_done(&b);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
	ck_assert_uint_eq(s.period, 99);
	h->size -= 8;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);

	/* Group without times, with id: nr, {value, id} x nr; then a callchain. */
	attr.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	rb_init(&b, PERF_RECORD_SAMPLE, 0);
	put(&b, 2);
	put(&b, 10); put(&b, 1); put(&b, 20); put(&b, 2);
	put(&b, 1); put(&b, 0xcafe);
	h = rb_done(&b);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
	ck_assert_uint_eq(s.callchain_nr, 1);
	ck_assert_uint_eq(s.callchain[0], 0xcafe);

	/* Hostile group nr: refused without overflow. */
	b.w[1] = UINT64_MAX / 2;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
	b.w[1] = (1ULL << 62) + 1;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
}
END_TEST

START_TEST(test_hostile_lengths)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	struct perf_sample s;
	struct rb b;
	struct perf_event_header *h;
	static const uint64_t huge[] = { UINT64_MAX, 1ULL << 61, 1ULL << 63, 9 };

	for (size_t i = 0; i < ARRAY_SIZE(huge); i++) {
		attr.sample_type = PERF_SAMPLE_CALLCHAIN;
		rb_init(&b, PERF_RECORD_SAMPLE, 0);
		put(&b, huge[i]);
		put(&b, 0x1);
		h = rb_done(&b);
		ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);

		attr.sample_type = PERF_SAMPLE_BRANCH_STACK;
		ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);

		attr.sample_type = PERF_SAMPLE_STACK_USER;
		ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);

		attr.sample_type = PERF_SAMPLE_AUX;
		ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
	}

	/* Raw data whose size breaks alignment. */
	attr.sample_type = PERF_SAMPLE_RAW;
	rb_init(&b, PERF_RECORD_SAMPLE, 0);
	put(&b, pair(5, 0));
	put(&b, 0);
	h = rb_done(&b);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
	b.w[1] = pair(12, 0);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
	b.w[1] = pair(UINT32_MAX - 3, 0);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);

	/* User stack: dyn_size larger than size, size not a multiple of 8. */
	attr.sample_type = PERF_SAMPLE_STACK_USER;
	rb_init(&b, PERF_RECORD_SAMPLE, 0);
	put(&b, 8);
	put(&b, 0);
	put(&b, 16);
	h = rb_done(&b);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
	b.w[3] = 8;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
	ck_assert_uint_eq(s.stack_dyn_size, 8);
	b.w[1] = 4;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
	/* size 0: no data and no dyn_size word. */
	b.w[1] = 0;
	h->size = 16;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
	ck_assert_ptr_null(s.stack);

	/* Wrong record type. */
	h->type = PERF_RECORD_MMAP;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
}
END_TEST

START_TEST(test_branch_hw_idx)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	struct perf_sample s;
	struct rb b;
	struct perf_event_header *h;

	attr.sample_type = PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_PERIOD;
	/* PERIOD comes first; then nr = 1 and one entry: without hw_idx it fits exactly. */
	rb_init(&b, PERF_RECORD_SAMPLE, 0);
	put(&b, 5);
	put(&b, 1);
	put(&b, 0x10); put(&b, 0x20); put(&b, 0);
	h = rb_done(&b);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
	attr.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
	put(&b, 0);
	h = rb_done(&b);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
}
END_TEST

START_TEST(test_regs_abi_none)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	struct perf_sample s;
	struct rb b;
	struct perf_event_header *h;
	uint64_t v;

	attr.sample_type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_WEIGHT;
	attr.sample_regs_user = PERF_X86_REGS_USER_MASK;
	rb_init(&b, PERF_RECORD_SAMPLE, 0);
	put(&b, PERF_SAMPLE_REGS_ABI_NONE);
	put(&b, 1); /* weight */
	h = rb_done(&b);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
	ck_assert_uint_eq(s.regs_abi, 0);
	ck_assert(!perf_sample__reg(&s, PERF_X86_IP, &v));

	/* abi 64 with a 20-register mask needs 20 words. */
	b.w[1] = PERF_SAMPLE_REGS_ABI_64;
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), -EBADMSG);
	b.n = 2;
	for (int i = 0; i < 20; i++)
		put(&b, 0x100 + i);
	put(&b, 1);
	h = rb_done(&b);
	ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
	ck_assert(perf_sample__reg(&s, PERF_X86_R15, &v));
	ck_assert_uint_eq(v, 0x100 + 19);
	ck_assert(perf_sample__reg(&s, PERF_X86_R8, &v));
	ck_assert_uint_eq(v, 0x100 + 12);
	ck_assert(!perf_sample__reg(&s, PERF_X86_DS, &v));
}
END_TEST

START_TEST(test_trailer)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	struct perf_sample s;
	struct rb b;
	struct perf_event_header *h;

	attr.sample_id_all = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER |
			   PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD; /* the last two are not in a trailer */
	rb_init(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_USER);
	put(&b, pair(7, 8));        /* body: pid, tid */
	put(&b, 0x6f6f66);          /* "foo" */
	put(&b, pair(7, 8));        /* trailer: tid */
	put(&b, 555);               /* time */
	put(&b, 0x1d);              /* id */
	put(&b, 0x5e);              /* stream id */
	put(&b, pair(1, 0));        /* cpu */
	put(&b, 0x1d);              /* identifier */
	h = rb_done(&b);
	ck_assert_int_eq(perf_sample__parse_id(&attr, h, &s), 0);
	ck_assert_uint_eq(s.pid, 7);
	ck_assert_uint_eq(s.tid, 8);
	ck_assert_uint_eq(s.time, 555);
	ck_assert_uint_eq(s.id, 0x1d);
	ck_assert_uint_eq(s.cpu, 1);

	/* Too short for the trailer. */
	h->size = 8 + 5 * 8;
	ck_assert_int_eq(perf_sample__parse_id(&attr, h, &s), -EBADMSG);
	h->size = 8;
	ck_assert_int_eq(perf_sample__parse_id(&attr, h, &s), -EBADMSG);

	/* Without sample_id_all there is no trailer: all zero. */
	attr.sample_id_all = 0;
	h->size = 8;
	ck_assert_int_eq(perf_sample__parse_id(&attr, h, &s), 0);
	ck_assert_uint_eq(s.time, 0);
	ck_assert_uint_eq(s.pid, 0);
}
END_TEST

/* perf_sample__place against the decoder, for every choice of the fields a sample carries at a
 * fixed place: the time and CPU read at the places given are the ones parse and parse_id find. */
START_TEST(test_place)
{
	static const uint64_t fixed[] = { PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID,
					  PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
					  PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU };
	static const uint64_t trailer[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
					    PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
					    PERF_SAMPLE_IDENTIFIER };

	for (unsigned int m = 0; m < 256; m++) {
		struct perf_event_attr attr = { .size = sizeof(attr), .sample_id_all = 1 };
		struct perf_sample_place pt, pc;
		struct perf_sample s;
		struct perf_event_header *h;
		struct rb b;
		uint32_t cpu;
		uint64_t t;

		for (int i = 0; i < 8; i++)
			if (m & 1u << i)
				attr.sample_type |= fixed[i];
		pt = perf_sample__place(&attr, PERF_SAMPLE_TIME);
		pc = perf_sample__place(&attr, PERF_SAMPLE_CPU);
		ck_assert_int_eq(pt.sample_off >= 0, !!(attr.sample_type & PERF_SAMPLE_TIME));
		ck_assert_int_eq(pc.id_back != 0, !!(attr.sample_type & PERF_SAMPLE_CPU));

		rb_init(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
		for (int i = 0; i < 8; i++)
			if (m & 1u << i)
				put(&b, fixed[i] == PERF_SAMPLE_CPU ? pair(3, 0) :
					fixed[i] == PERF_SAMPLE_TIME ? 777 : 100 + i);
		h = rb_done(&b);
		ck_assert_int_eq(perf_sample__parse(&attr, h, &s), 0);
		if (pt.sample_off >= 0) {
			memcpy(&t, (const uint8_t *)h + pt.sample_off, 8);
			ck_assert_uint_eq(t, s.time);
		}
		if (pc.sample_off >= 0) {
			memcpy(&cpu, (const uint8_t *)h + pc.sample_off, 4);
			ck_assert_uint_eq(cpu, s.cpu);
		}

		rb_init(&b, PERF_RECORD_EXIT, 0);
		put(&b, pair(7, 7));
		for (int i = 0; i < 6; i++)
			if (attr.sample_type & trailer[i])
				put(&b, trailer[i] == PERF_SAMPLE_CPU ? pair(3, 0) :
					trailer[i] == PERF_SAMPLE_TIME ? 777 : 200 + i);
		h = rb_done(&b);
		ck_assert_int_eq(perf_sample__parse_id(&attr, h, &s), 0);
		if (pt.id_back) {
			memcpy(&t, (const uint8_t *)h + h->size - pt.id_back, 8);
			ck_assert_uint_eq(t, s.time);
		}
		if (pc.id_back) {
			memcpy(&cpu, (const uint8_t *)h + h->size - pc.id_back, 4);
			ck_assert_uint_eq(cpu, s.cpu);
		}
	}
	/* no sample_id: nothing in other records */
	{
		struct perf_event_attr attr = { .size = sizeof(attr),
						.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU };

		ck_assert_int_eq(perf_sample__place(&attr, PERF_SAMPLE_TIME).id_back, 0);
		ck_assert_int_eq(perf_sample__place(&attr, PERF_SAMPLE_CPU).sample_off, 16);
	}
}
END_TEST

Suite *perf_sample_suite(void)
{
	Suite *s = suite_create("perf_sample");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_field_order);
	tcase_add_test(tc, test_attr_mismatch);
	tcase_add_test(tc, test_single_fields);
	tcase_add_test(tc, test_read_formats);
	tcase_add_test(tc, test_branch_hw_idx);
	tcase_add_test(tc, test_regs_abi_none);
	tcase_add_test(tc, test_trailer);
	tcase_add_test(tc, test_place);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_test(tc, test_every_cut);
	tcase_add_test(tc, test_hostile_lengths);
	suite_add_tcase(s, tc);
	return s;
}
