/* Tests for src/record/tracefs: the name checks that keep "sys:name" from becoming any other
 * path, tracepoint ids as tracefs gives them, and the tracing-data blob walked back field by
 * field as perf's trace_report() walks it (magic, version, headers, systems, formats,
 * printk_formats, cmdlines), with duplicate events written once. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/tracefs.h"

START_TEST(test_split)
{
	char sys[64], name[64];

	ck_assert_int_eq(tracefs__split("sched:sched_switch", sys, name), 0);
	ck_assert_str_eq(sys, "sched");
	ck_assert_str_eq(name, "sched_switch");
	ck_assert_int_eq(tracefs__split("syscalls:sys_enter_read", sys, name), 0);
	static const char *const bad[] = {
		"sched", ":x", "x:", "../x:y", "x:../y", "x:y/z", "x:y:z", "x y:z", "x:y\n",
		"sched:sched_switch:u", "a:" "0123456789012345678901234567890123456789012345678901234567890123",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(tracefs__split(bad[i], sys, name) == -EINVAL, "accepted '%s'", bad[i]);
}
END_TEST

START_TEST(test_event_id)
{
	uint64_t id = 0;
	char path[256], text[32] = "";
	FILE *f;

	if (!tracefs__dir())
		return; /* no tracefs in this kernel: nothing to compare with */
	ck_assert_int_eq(tracefs__event_id("sched", "sched_switch", &id), 0);
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", tracefs__dir());
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(text, sizeof(text), f));
	fclose(f);
	ck_assert_uint_eq(id, strtoull(text, NULL, 10));
	ck_assert_int_eq(tracefs__event_id("sched", "no_such_event", &id), -ENOENT);
	ck_assert_int_eq(tracefs__event_id("no_such_subsystem", "x", &id), -ENOENT);
	ck_assert_int_eq(tracefs__event_id("..", "sched", &id), -EINVAL);
	ck_assert_int_eq(tracefs__event_id("sched", "sched_switch/../id", &id), -EINVAL);
}
END_TEST

struct walk {
	const uint8_t *p, *end;
};

static uint64_t take(struct walk *w, size_t n)
{
	uint64_t v = 0;

	ck_assert_msg(w->p + n <= w->end, "blob ends early");
	memcpy(&v, w->p, n);
	w->p += n;
	return v;
}

static const char *take_str(struct walk *w)
{
	const char *s = (const char *)w->p;
	size_t n = strnlen(s, (size_t)(w->end - w->p));

	ck_assert_msg(w->p + n < w->end, "unterminated string");
	w->p += n + 1;
	return s;
}

START_TEST(test_tracing_data)
{
	static const char *const specs[] = { "sched:sched_switch", "sched:sched_wakeup",
					     "sched:sched_switch", "irq:irq_handler_entry" };
	void *blob = NULL;
	size_t len = 0;
	struct walk w;
	uint64_t sz;

	if (!tracefs__dir())
		return;
	ck_assert_int_eq(tracefs__tracing_data(specs, 4, &blob, &len), 0);
	w = (struct walk){ blob, (const uint8_t *)blob + len };
	ck_assert_int_eq(memcmp(w.p, "\027\010\104tracing0.6", 14), 0);
	w.p += 14;
	ck_assert_uint_eq(take(&w, 1), 0);             /* little endian */
	ck_assert_uint_eq(take(&w, 1), sizeof(long));
	ck_assert_uint_eq(take(&w, 4), 4096);
	ck_assert_str_eq(take_str(&w), "header_page");
	sz = take(&w, 8);
	ck_assert_msg(sz > 0 && memmem(w.p, sz, "field: u64 timestamp", 20), "header_page");
	w.p += sz;
	ck_assert_str_eq(take_str(&w), "header_event");
	w.p += take(&w, 8);
	ck_assert_uint_eq(take(&w, 4), 0);             /* no ftrace formats */
	ck_assert_uint_eq(take(&w, 4), 2);             /* sched, irq */
	ck_assert_str_eq(take_str(&w), "sched");
	ck_assert_uint_eq(take(&w, 4), 2);             /* sched_switch once, sched_wakeup */
	sz = take(&w, 8);
	ck_assert_msg(!strncmp((const char *)w.p, "name: sched_switch\n", 19), "first format");
	ck_assert_msg(memmem(w.p, sz, "prev_state", 10), "sched_switch's fields");
	w.p += sz;
	sz = take(&w, 8);
	ck_assert_msg(!strncmp((const char *)w.p, "name: sched_wakeup\n", 19), "second format");
	w.p += sz;
	ck_assert_str_eq(take_str(&w), "irq");
	ck_assert_uint_eq(take(&w, 4), 1);
	w.p += take(&w, 8);
	ck_assert_uint_eq(take(&w, 4), 0);             /* no kallsyms */
	w.p += take(&w, 4);                            /* printk_formats */
	ck_assert_uint_eq(take(&w, 8), 0);             /* no saved cmdlines */
	ck_assert_ptr_eq(w.p, w.end);
	free(blob);

	ck_assert_int_eq(tracefs__tracing_data((const char *const[]){ "sched:../x" }, 1, &blob, &len),
			 -EINVAL);
	ck_assert_int_eq(tracefs__tracing_data((const char *const[]){ "sched:no_such_event" }, 1,
					       &blob, &len), -ENOENT);
}
END_TEST

Suite *tracefs_suite(void)
{
	Suite *s = suite_create("tracefs");
	TCase *tc = tcase_create("names");

	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_event_id);
	suite_add_tcase(s, tc);
	tc = tcase_create("tracing_data");
	tcase_add_test(tc, test_tracing_data);
	suite_add_tcase(s, tc);
	return s;
}
