/* Tests for src/daemon/sdnotify: datagrams arrive as sent on a path socket and on an abstract one,
 * nothing happens without $NOTIFY_SOCKET, bad names are refused, STATUS stays on one line,
 * RELOADING carries the monotonic time, long states are cut at a line end, and the watchdog
 * interval honours WATCHDOG_PID. */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon/sdnotify.h"

/* A datagram socket bound to name ("@..." abstract); returns the fd. */
static int listen_on(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memcpy(sa.sun_path, name, n);
	if (name[0] == '@')
		sa.sun_path[0] = 0;
	else
		unlink(name);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa,
			      offsetof(struct sockaddr_un, sun_path) + n + (name[0] != '@')), 0);
	return fd;
}

/* The next datagram, NUL-terminated in buf; fails the test if none within a second. */
static const char *next_msg(int fd, char *buf, size_t size)
{
	struct timeval tv = { 1, 0 };
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, buf, size - 1, 0);
	ck_assert_int_gt(n, 0);
	buf[n] = 0;
	return buf;
}

START_TEST(test_path_socket)
{
	char name[64], buf[8192];
	int fd;

	snprintf(name, sizeof(name), "/tmp/check-sdnotify-%d", (int)getpid());
	fd = listen_on(name);
	ck_assert_int_eq(sdnotify__send_to(name, "READY=1"), 1);
	ck_assert_str_eq(next_msg(fd, buf, sizeof(buf)), "READY=1");
	setenv("NOTIFY_SOCKET", name, 1);
	ck_assert_int_eq(sdnotify__ready("recording\n3 files"), 1);
	ck_assert_str_eq(next_msg(fd, buf, sizeof(buf)), "READY=1\nSTATUS=recording 3 files");
	ck_assert_int_eq(sdnotify__ready(NULL), 1);
	ck_assert_str_eq(next_msg(fd, buf, sizeof(buf)), "READY=1");
	ck_assert_int_eq(sdnotify__status("a\r\nb"), 1);
	ck_assert_str_eq(next_msg(fd, buf, sizeof(buf)), "STATUS=a  b");
	ck_assert_int_eq(sdnotify__stopping(), 1);
	ck_assert_str_eq(next_msg(fd, buf, sizeof(buf)), "STOPPING=1");
	ck_assert_int_eq(sdnotify__watchdog(), 1);
	ck_assert_str_eq(next_msg(fd, buf, sizeof(buf)), "WATCHDOG=1");
	close(fd);
	unlink(name);
	/* nobody listens any more */
	ck_assert_int_lt(sdnotify__send("READY=1"), 0);
}
END_TEST

START_TEST(test_abstract_socket)
{
	char name[64], buf[256];
	int fd;

	snprintf(name, sizeof(name), "@check-sdnotify-%d", (int)getpid());
	fd = listen_on(name);
	setenv("NOTIFY_SOCKET", name, 1);
	ck_assert_int_eq(sdnotify__send("READY=1\nSTATUS=x"), 1);
	ck_assert_str_eq(next_msg(fd, buf, sizeof(buf)), "READY=1\nSTATUS=x");
	close(fd);
}
END_TEST

START_TEST(test_reloading_time)
{
	char name[64], buf[256];
	unsigned long long usec;
	struct timespec a, b;
	int fd;

	snprintf(name, sizeof(name), "@check-sdnotify-r-%d", (int)getpid());
	fd = listen_on(name);
	setenv("NOTIFY_SOCKET", name, 1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_int_eq(sdnotify__reloading(), 1);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ck_assert_int_eq(sscanf(next_msg(fd, buf, sizeof(buf)), "RELOADING=1\nMONOTONIC_USEC=%llu",
				&usec), 1);
	ck_assert_uint_ge(usec, (unsigned long long)a.tv_sec * 1000000 + a.tv_nsec / 1000);
	ck_assert_uint_le(usec, (unsigned long long)b.tv_sec * 1000000 + b.tv_nsec / 1000);
	close(fd);
}
END_TEST

START_TEST(test_long_state_cut_at_line)
{
	char name[64], buf[16384], *big;
	int fd;

	snprintf(name, sizeof(name), "@check-sdnotify-l-%d", (int)getpid());
	fd = listen_on(name);
	setenv("NOTIFY_SOCKET", name, 1);
	big = malloc(6000);
	ck_assert_ptr_nonnull(big);
	memset(big, 'y', 5999);
	big[5999] = 0;
	ck_assert_int_eq(sdnotify__sendf("READY=1\nSTATUS=%s", big), 1);
	ck_assert_str_eq(next_msg(fd, buf, sizeof(buf)), "READY=1\n");
	/* one line too long for the limit cannot be cut */
	ck_assert_int_eq(sdnotify__sendf("STATUS=%s", big), -EMSGSIZE);
	free(big);
	close(fd);
}
END_TEST

START_TEST(test_no_socket)
{
	unsetenv("NOTIFY_SOCKET");
	ck_assert_int_eq(sdnotify__send("READY=1"), 0);
	ck_assert_int_eq(sdnotify__reloading(), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	ck_assert_int_eq(sdnotify__ready("x"), 0);
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	ck_assert_int_eq(sdnotify__send("READY=1"), -EINVAL);
	ck_assert_int_eq(sdnotify__send_to("@", "READY=1"), -EINVAL);
	{
		char longname[200];

		memset(longname, 'a', sizeof(longname));
		longname[0] = '/';
		longname[sizeof(longname) - 1] = 0;
		ck_assert_int_eq(sdnotify__send_to(longname, "READY=1"), -EINVAL);
	}
	ck_assert_int_eq(sdnotify__send_to("/nonexistent/notify", "READY=1"), -ENOENT);
}
END_TEST

START_TEST(test_watchdog_usec)
{
	char pid[32];

	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	ck_assert_uint_eq(sdnotify__watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "2000000", 1);
	ck_assert_uint_eq(sdnotify__watchdog_usec(), 2000000);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	ck_assert_uint_eq(sdnotify__watchdog_usec(), 2000000);
	snprintf(pid, sizeof(pid), "%d", (int)getpid() + 1);
	setenv("WATCHDOG_PID", pid, 1);
	ck_assert_uint_eq(sdnotify__watchdog_usec(), 0);
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "12x", 1);
	ck_assert_uint_eq(sdnotify__watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "0", 1);
	ck_assert_uint_eq(sdnotify__watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "-5", 1);
	ck_assert_uint_eq(sdnotify__watchdog_usec(), 0);
}
END_TEST

Suite *sdnotify_suite(void)
{
	Suite *s = suite_create("sdnotify");
	TCase *tc = tcase_create("send");

	tcase_add_test(tc, test_path_socket);
	tcase_add_test(tc, test_abstract_socket);
	tcase_add_test(tc, test_reloading_time);
	tcase_add_test(tc, test_long_state_cut_at_line);
	suite_add_tcase(s, tc);
	tc = tcase_create("env");
	tcase_add_test(tc, test_no_socket);
	tcase_add_test(tc, test_watchdog_usec);
	suite_add_tcase(s, tc);
	return s;
}
