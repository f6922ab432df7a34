/* Tests for src/daemon/compact: a file the unwinding child refuses comes back with the child's
 * own reason (inject__error, through a pipe), not a bare errno, and leaves no copy behind. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/compact.h"
#include "daemon/isolate.h"

START_TEST(test_refused_file_says_why)
{
	char path[] = "/tmp/check_compact.XXXXXX";
	int fd = mkstemp(path);
	struct compactor *c;
	struct compact_done r;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int got = 0;

	/* the child is precordd run again: this binary is not, the one built beside it is */
	ck_assert_msg(access("./precordd", X_OK) == 0, "./precordd is not built");
	isolate__set_program("./precordd");
	c = compactor__new(1, 60 * 1000);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "not a perf.data file at all, but long enough", 44), 44);
	close(fd);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(compactor__submit(c, path), 0);
	/* the job ends when the child does: wait for that, bounded only against a hang */
	for (int i = 0; i < 30000 && !got; i++) {
		got = compactor__take(c, &r);
		if (!got)
			nanosleep(&ts, NULL);
	}
	ck_assert_int_eq(got, 1);
	ck_assert_str_eq(r.path, path);
	ck_assert_int_eq(r.err, -EINVAL);
	ck_assert_msg(strstr(r.why, "not a perf.data file") && strstr(r.why, path), "why: '%s'",
		      r.why);
	ck_assert_int_ne(access(r.tmp, F_OK), 0);
	compactor__free(c);
	unlink(path);
}
END_TEST

Suite *compact_suite(void)
{
	Suite *s = suite_create("compact");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_refused_file_says_why);
	suite_add_tcase(s, tc);
	return s;
}
