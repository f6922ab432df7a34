/* Tests of the lossless watcher's sleep planner: the margin below the high mark over the bound
 * rate, the rates it sees overriding a bound that is too low and fading after a burst, the
 * fullest of several rings deciding, and the limits on either side. */
#include <check.h>
#include <errno.h>
#include <math.h>

#include "record/lossless/lookahead.h"

#define RING (256 * 1024ull) /* -m 64 */
#define HIGH (RING / 2)      /* 500 per mille */

START_TEST(test_new_validates)
{
	errno = 0;
	ck_assert_ptr_null(lookahead__new(0, RING, 500, 0.1));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(lookahead__new(1, 0, 500, 0.1));
	ck_assert_ptr_null(lookahead__new(1, RING, 1000, 0.1));
	ck_assert_ptr_null(lookahead__new(1, RING, 500, -1));
	lookahead__free(NULL);
}
END_TEST

START_TEST(test_margin_over_bound)
{
	struct lookahead *la = lookahead__new(1, RING, 500, 0.1); /* 100 MB/s */
	uint64_t head = 0, used = 0;

	/* empty: the whole margin, 128 KiB at 0.1 byte/ns */
	ck_assert_uint_eq(lookahead__next(la, &head, &used, 1000), (uint64_t)(HIGH / 0.1));
	/* a quarter full: half the margin (no rate seen above the bound) */
	head = used = RING / 4;
	ck_assert_uint_eq(lookahead__next(la, &head, &used, 1000 + 2000000000ull), (uint64_t)(HIGH / 2 / 0.1));
	/* at or above the mark: as soon as allowed */
	head += HIGH;
	used = HIGH;
	ck_assert_uint_eq(lookahead__next(la, &head, &used, 4000000000ull), LOOKAHEAD_MIN_NS);
	used = RING;
	ck_assert_uint_eq(lookahead__next(la, &head, &used, 6000000000ull), LOOKAHEAD_MIN_NS);
	lookahead__free(la);
}
END_TEST

START_TEST(test_limits_and_default_bound)
{
	struct lookahead *la = lookahead__new(1, RING, 500, 0.00001); /* 10 KB/s */
	uint64_t head = 0, used = 0;

	ck_assert_uint_eq(lookahead__next(la, &head, &used, 0), LOOKAHEAD_MAX_NS);
	lookahead__free(la);
	/* no bound known (a fixed period): the default one */
	la = lookahead__new(1, RING, 500, 0);
	ck_assert_uint_eq(lookahead__next(la, &head, &used, 0), (uint64_t)(HIGH / LOOKAHEAD_DEFAULT_BOUND));
	ck_assert(fabs(lookahead__rate(la, 0) - LOOKAHEAD_DEFAULT_BOUND) < 1e-12);
	lookahead__free(la);
}
END_TEST

START_TEST(test_seen_rate_overrides_and_fades)
{
	struct lookahead *la = lookahead__new(1, RING, 500, 0.01);
	uint64_t head = 0, used = 0, t = 1000000000ull, s;

	ck_assert_uint_eq(lookahead__next(la, &head, &used, t), LOOKAHEAD_MAX_NS);
	/* 1 MB in 1 ms: 1 byte/ns, a hundred times the bound */
	head = 1000000;
	t += 1000000;
	s = lookahead__next(la, &head, &used, t);
	ck_assert_uint_eq(s, HIGH); /* 128 KiB at 1 byte/ns */
	ck_assert(fabs(lookahead__rate(la, 0) - 1.0) < 1e-9);
	/* nothing written for one half-life: half the rate, twice the sleep */
	t += LOOKAHEAD_PEAK_HALF_LIFE_NS;
	s = lookahead__next(la, &head, &used, t);
	ck_assert(fabs(lookahead__rate(la, 0) - 0.5) < 1e-9);
	ck_assert_uint_eq(s, 2 * HIGH);
	/* long quiet: back to the bound (and the upper limit) */
	t += 40 * LOOKAHEAD_PEAK_HALF_LIFE_NS;
	ck_assert_uint_eq(lookahead__next(la, &head, &used, t), LOOKAHEAD_MAX_NS);
	ck_assert(fabs(lookahead__rate(la, 0) - 0.01) < 1e-9);
	/* a slower rate does not lower the faster one seen */
	head += 3000000; /* 3 bytes/ns */
	t += 1000000;
	lookahead__next(la, &head, &used, t);
	head += 10000; /* 0.01 byte/ns */
	t += 1000000;
	lookahead__next(la, &head, &used, t);
	ck_assert(lookahead__rate(la, 0) > 2.5);
	/* a head that went back (a ring mapped anew) is no rate */
	head = 0;
	t += 1000000;
	lookahead__next(la, &head, &used, t);
	ck_assert(lookahead__rate(la, 0) < 3.0);
	lookahead__free(la);
}
END_TEST

START_TEST(test_fullest_ring_decides)
{
	struct lookahead *la = lookahead__new(3, RING, 500, 0.1);
	uint64_t heads[3] = { 0, 0, 0 }, used[3] = { 0, HIGH - 1000, RING / 8 };

	/* ring 1 has 1000 bytes left before the mark: 10 us, raised to the lower limit */
	ck_assert_uint_eq(lookahead__next(la, heads, used, 0), LOOKAHEAD_MIN_NS);
	used[1] = HIGH - 50000; /* 500 us */
	ck_assert_uint_eq(lookahead__next(la, heads, used, 1000000000ull), 500000);
	used[1] = 0;            /* ring 2 now: 3/4 of the margin */
	ck_assert_uint_eq(lookahead__next(la, heads, used, 2000000000ull), (uint64_t)((HIGH - RING / 8) / 0.1));
	lookahead__free(la);
}
END_TEST

Suite *lookahead_suite(void)
{
	Suite *s = suite_create("lookahead");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_new_validates);
	tcase_add_test(tc, test_margin_over_bound);
	tcase_add_test(tc, test_limits_and_default_bound);
	tcase_add_test(tc, test_seen_rate_overrides_and_fades);
	tcase_add_test(tc, test_fullest_ring_decides);
	suite_add_tcase(s, tc);
	return s;
}
