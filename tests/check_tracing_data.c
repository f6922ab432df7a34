/* Tests for src/perf/tracing_data: a field's offset and size found in a real tracing-data
 * payload (made by the recorder from tracefs) agree with the format file, absent events and
 * fields say -ENOENT, and every truncation and a corrupt size of the payload is refused with
 * -EBADMSG or -ENOENT, never read past. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perf/tracing_data.h"
#include "record/tracefs.h"

static void *blob;
static size_t blob_len;

static int make_blob(void)
{
	static const char *const specs[] = { "sched:sched_wakeup", "sched:sched_switch" };

	return tracefs__dir() ? tracefs__tracing_data(specs, 2, &blob, &blob_len) : -ENOENT;
}

START_TEST(test_field)
{
	uint32_t off = 0, size = 0;

	if (make_blob() < 0)
		return; /* no tracefs here */
	ck_assert_int_eq(tracing_data__field(blob, blob_len, "sched", "sched_switch", "prev_state",
					     &off, &size), 0);
	ck_assert_uint_eq(off, 32);
	ck_assert_uint_eq(size, 8);
	ck_assert_int_eq(tracing_data__field(blob, blob_len, "sched", "sched_switch", "prev_comm",
					     &off, &size), 0);
	ck_assert_uint_eq(off, 8);
	ck_assert_uint_eq(size, 16);
	ck_assert_int_eq(tracing_data__field(blob, blob_len, "sched", "sched_switch", "prev",
					     &off, &size), -ENOENT);
	ck_assert_int_eq(tracing_data__field(blob, blob_len, "sched", "sched_switc", "prev_state",
					     &off, &size), -ENOENT);
	ck_assert_int_eq(tracing_data__field(blob, blob_len, "irq", "sched_switch", "prev_state",
					     &off, &size), -ENOENT);
	free(blob);
}
END_TEST

START_TEST(test_damage)
{
	uint32_t off, size;
	uint8_t *copy;

	if (make_blob() < 0)
		return;
	for (size_t n = 0; n < blob_len; n++) {
		copy = malloc(n ? n : 1); /* exactly n bytes: ASan sees any read past */
		memcpy(copy, blob, n);
		int r = tracing_data__field(copy, n, "sched", "sched_switch", "prev_state", &off, &size);
		ck_assert_msg(r == -EBADMSG || r == -ENOENT || (r == 0 && off == 32),
			      "cut at %zu: %d", n, r);
		free(copy);
	}
	copy = malloc(blob_len);
	memcpy(copy, blob, blob_len);
	memset(copy + 32, 0xff, 8); /* header_page's size: magic, "0.6", 2 + 4 bytes, "header_page" */
	ck_assert_int_eq(tracing_data__field(copy, blob_len, "sched", "sched_switch", "prev_state",
					     &off, &size), -EBADMSG);
	ck_assert_int_eq(tracing_data__field(NULL, 0, "sched", "sched_switch", "prev_state", &off,
					     &size), -EBADMSG);
	free(copy);
	free(blob);
}
END_TEST

Suite *tracing_data_suite(void)
{
	Suite *s = suite_create("tracing_data");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_field);
	tcase_add_test(tc, test_damage);
	suite_add_tcase(s, tc);
	return s;
}
