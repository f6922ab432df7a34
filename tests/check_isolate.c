/* Tests for src/daemon/isolate: a conversion's process, here build/tools/isolate_child (through
 * the same isolate__child_main as precordd), comes back with its exit status and reason; one that
 * stops getting CPU time is killed after stall_ms, one that keeps using it is not; the stop flag
 * kills it; it starts with no signal blocked, no fd of its parent's but its reason's, and the
 * limits asked for. Each case checks that no child is left behind. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/isolate.h"

#define CHILD "./build/tools/isolate_child"

static int run(const char *const *args, unsigned int stall_ms, const bool *stop, char *why,
	       size_t size)
{
	struct isolate_job j = {
		.what = "test", .args = args, .umask = 077, .stall_ms = stall_ms, .stop = stop,
	};

	ck_assert_msg(access(CHILD, X_OK) == 0, CHILD " is not built (make test-bins)");
	isolate__set_program(CHILD);
	int err = isolate__run(&j, why, size);
	isolate__set_program(NULL);
	/* reaped, whatever happened */
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	return err;
}

START_TEST(test_exit_status_and_reason)
{
	const char *ok[] = { "ok", NULL }, *why[] = { "why", NULL };
	char buf[256];

	ck_assert_int_eq(run(ok, 10000, NULL, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(run(why, 10000, NULL, buf, sizeof(buf)), -EPROTO);
	ck_assert_str_eq(buf, "the reason");
}
END_TEST

START_TEST(test_signal_named)
{
	const char *bus[] = { "bus", NULL };
	char buf[256];

	ck_assert_int_eq(run(bus, 10000, NULL, buf, sizeof(buf)), -ECHILD);
	ck_assert_msg(strstr(buf, "the test process died of signal 7 (a mapped file shrank?)"),
		      "why: '%s'", buf);
}
END_TEST

START_TEST(test_stalled_child_killed)
{
	const char *stop[] = { "stop", NULL };
	char buf[256];

	ck_assert_int_eq(run(stop, 1000, NULL, buf, sizeof(buf)), -ETIMEDOUT);
	ck_assert_msg(strstr(buf, "the test process had no CPU time for 1 s"), "why: '%s'", buf);
}
END_TEST

/* A child that keeps computing for three stall periods is not killed (the limit is on
 * progress, not on time). */
START_TEST(test_busy_child_not_killed)
{
	const char *spin[] = { "spin", "1500", NULL };
	char buf[256];

	ck_assert_int_eq(run(spin, 500, NULL, buf, sizeof(buf)), 0);
}
END_TEST

START_TEST(test_stop_flag_kills)
{
	const char *stop[] = { "stop", NULL };
	bool flag = true;
	char buf[256];

	ck_assert_int_eq(run(stop, 600000, &flag, buf, sizeof(buf)), -ECANCELED);
	ck_assert_str_eq(buf, "the service is stopping");
}
END_TEST

/* What the parent holds and blocks stays with it: an fd without O_CLOEXEC, a blocked signal. */
START_TEST(test_clean_environment)
{
	const char *env[] = { "env", "7", "12345", NULL };
	struct isolate_job j = {
		.what = "test", .args = env, .cpu_s = 7, .fsize = 12345, .umask = 077,
		.stall_ms = 10000,
	};
	int leak = open("/dev/null", O_RDONLY); /* no O_CLOEXEC */
	sigset_t term, old;
	char buf[256];

	ck_assert_int_ge(leak, 0);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, &old);
	isolate__set_program(CHILD);
	int err = isolate__run(&j, buf, sizeof(buf));
	isolate__set_program(NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(leak);
	ck_assert_msg(err == 0, "err %d, why: '%s'", err, buf);
}
END_TEST

START_TEST(test_missing_program)
{
	const char *ok[] = { "ok", NULL };
	struct isolate_job j = { .what = "test", .args = ok, .stall_ms = 10000 };
	char buf[256];

	isolate__set_program("/nonexistent/precordd");
	int err = isolate__run(&j, buf, sizeof(buf));
	isolate__set_program(NULL);
	ck_assert_int_eq(err, -ENOEXEC);
	ck_assert_msg(strstr(buf, "cannot execute the conversion program /nonexistent/precordd"),
		      "why: '%s'", buf);
}
END_TEST

Suite *isolate_suite(void)
{
	Suite *s = suite_create("isolate");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_exit_status_and_reason);
	tcase_add_test(tc, test_signal_named);
	tcase_add_test(tc, test_stalled_child_killed);
	tcase_add_test(tc, test_busy_child_not_killed);
	tcase_add_test(tc, test_stop_flag_kills);
	tcase_add_test(tc, test_clean_environment);
	tcase_add_test(tc, test_missing_program);
	suite_add_tcase(s, tc);
	return s;
}
