/* perf/feat_decode: feature sections built with perf's encodings (perf/features.h's fbuf, as
 * the writer builds them) decode back to what was put in; every shorter cut of them, and a
 * string without its NUL, fails with -EBADMSG instead of reading past the section. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perf/feat_decode.h"
#include "perf/features.h"

static void put_attr(struct fbuf *b, uint32_t type, uint64_t config)
{
	struct perf_event_attr a = { .type = type, .size = sizeof(a), .config = config };

	fbuf__put(b, &a, sizeof(a));
}

/* EVENT_DESC of two events: cpu-clock with ids 7 and 8, task-clock without ids. */
static void event_desc(struct fbuf *b)
{
	fbuf__put_u32(b, 2);
	fbuf__put_u32(b, sizeof(struct perf_event_attr));
	put_attr(b, PERF_TYPE_SOFTWARE, 0);
	fbuf__put_u32(b, 2);
	fbuf__put_string(b, "cpu-clock");
	fbuf__put_u64(b, 7);
	fbuf__put_u64(b, 8);
	put_attr(b, PERF_TYPE_SOFTWARE, 1);
	fbuf__put_u32(b, 0);
	fbuf__put_string(b, "task-clock");
}

static int walk_event_desc(const void *p, size_t len, struct feat_event_desc *ret)
{
	struct feat_cur c;
	uint32_t nr, sz;
	int e = feat_event_desc__begin(&c, p, len, &nr, &sz);

	for (uint32_t i = 0; !e && i < nr; i++)
		e = feat_event_desc__next(&c, sz, &ret[i]);
	return e;
}

START_TEST(test_event_desc)
{
	struct fbuf b = { 0 };
	struct feat_event_desc d[2];

	event_desc(&b);
	ck_assert(!b.oom);
	ck_assert_int_eq(walk_event_desc(b.data, b.len, d), 0);
	ck_assert_str_eq(d[0].name, "cpu-clock");
	ck_assert_uint_eq(d[0].nr_ids, 2);
	ck_assert_uint_eq(feat_event_desc__id(&d[0], 0), 7);
	ck_assert_uint_eq(feat_event_desc__id(&d[0], 1), 8);
	ck_assert_str_eq(d[1].name, "task-clock");
	ck_assert_uint_eq(d[1].nr_ids, 0);
	ck_assert_uint_eq(d[1].attr.config, 1);
	/* every cut is refused, through a copy of its own size (ASan sees any overrun) */
	for (size_t n = 0; n < b.len; n++) {
		uint8_t *cut = malloc(n ? n : 1);

		memcpy(cut, b.data, n);
		ck_assert_int_eq(walk_event_desc(cut, n, d), -EBADMSG);
		free(cut);
	}
	fbuf__free(&b);
}
END_TEST

START_TEST(test_string_without_nul)
{
	struct fbuf b = { 0 };
	struct feat_cur c;
	const char *s;

	fbuf__put_u32(&b, 4);
	fbuf__put(&b, "abcd", 4);
	c = feat_cur__new(b.data, b.len);
	ck_assert_int_eq(feat_cur__string(&c, &s), -EBADMSG);
	ck_assert_uint_eq(c.left, b.len); /* not moved */
	fbuf__free(&b);
}
END_TEST

START_TEST(test_lists)
{
	struct fbuf b = { 0 };
	struct feat_group g;
	struct feat_cur c;
	const char *name, *value;
	uint32_t nr, type, id;

	fbuf__put_u32(&b, 1);
	fbuf__put_u32(&b, 8);
	fbuf__put_string(&b, "uprobe");
	ck_assert_int_eq(feat_list__begin(&c, b.data, b.len, &nr), 0);
	ck_assert_uint_eq(nr, 1);
	ck_assert_int_eq(feat_pmu_mapping__next(&c, &type, &name), 0);
	ck_assert_uint_eq(type, 8);
	ck_assert_str_eq(name, "uprobe");
	ck_assert_int_eq(feat_pmu_mapping__next(&c, &type, &name), -EBADMSG);
	fbuf__free(&b);

	fbuf__put_u32(&b, 1);
	fbuf__put_string(&b, "{anon_group}");
	fbuf__put_u32(&b, 0);
	fbuf__put_u32(&b, 2);
	ck_assert_int_eq(feat_list__begin(&c, b.data, b.len, &nr), 0);
	ck_assert_int_eq(feat_group__next(&c, &g), 0);
	ck_assert_str_eq(g.name, "{anon_group}");
	ck_assert_uint_eq(g.leader_idx, 0);
	ck_assert_uint_eq(g.nr_members, 2);
	ck_assert_uint_eq(c.left, 0);
	fbuf__free(&b);

	fbuf__put_u32(&b, 1);
	fbuf__put_string(&b, "branches");
	fbuf__put_string(&b, "16");
	ck_assert_int_eq(feat_list__begin(&c, b.data, b.len, &nr), 0);
	ck_assert_int_eq(feat_cap__next(&c, &name, &value), 0);
	ck_assert_str_eq(name, "branches");
	ck_assert_str_eq(value, "16");
	fbuf__free(&b);

	fbuf__put_u32(&b, 1);
	fbuf__put_u32(&b, 42);
	fbuf__put_u32(&b, 3);
	fbuf__put(&b, "xyz", 3);
	ck_assert_int_eq(feat_list__begin(&c, b.data, b.len, &nr), 0);
	ck_assert_int_eq(feat_btf__next(&c, &id), 0);
	ck_assert_uint_eq(id, 42);
	ck_assert_uint_eq(c.left, 0);
	c = feat_cur__new(b.data, b.len - 1);
	feat_cur__skip(&c, 4);
	ck_assert_int_eq(feat_btf__next(&c, &id), -EBADMSG);
	fbuf__free(&b);
}
END_TEST

Suite *feat_decode_suite(void)
{
	Suite *s = suite_create("feat_decode");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_event_desc);
	tcase_add_test(tc, test_string_without_nul);
	tcase_add_test(tc, test_lists);
	suite_add_tcase(s, tc);
	return s;
}
