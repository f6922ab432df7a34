/* Tests for src/lib/fdpass: a message with an fd and one without, over a socketpair; the fd
 * arrives close-on-exec and names the same file; of several fds passed at once only the first
 * is kept and the others are closed; end of stream and errors come back as 0 and -errno. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdpass.h"

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

START_TEST(test_roundtrip)
{
	int sv[2], fd = -2, p[2];
	char buf[16];
	struct stat a, b;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(fdpass__send(sv[0], "with", 4, p[0], 0), 4);
	ck_assert_int_eq(fdpass__recv(sv[1], buf, sizeof(buf), &fd, 0), 4);
	ck_assert(!memcmp(buf, "with", 4));
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(fd, p[0]);
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	ck_assert_int_eq(fstat(fd, &a), 0);
	ck_assert_int_eq(fstat(p[0], &b), 0);
	ck_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	close(fd);
	/* without an fd: *ret_fd says none */
	ck_assert_int_eq(fdpass__send(sv[0], "none", 4, -1, 0), 4);
	ck_assert_int_eq(fdpass__recv(sv[1], buf, sizeof(buf), &fd, 0), 4);
	ck_assert_int_eq(fd, -1);
	/* nothing waiting: -EAGAIN; the peer gone: 0 */
	ck_assert_int_eq(fdpass__recv(sv[1], buf, sizeof(buf), &fd, MSG_DONTWAIT), -EAGAIN);
	close(sv[0]);
	ck_assert_int_eq(fdpass__recv(sv[1], buf, sizeof(buf), &fd, 0), 0);
	/* sending on a socket without a peer: -EPIPE, and no SIGPIPE */
	ck_assert_int_eq(fdpass__send(sv[1], "x", 1, -1, 0), -EPIPE);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* A peer passing three fds at once leaks none into the receiver. */
START_TEST(test_extra_fds_closed)
{
	int sv[2], fd, fds[3], before, p[2];
	union {
		char b[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { "three", 5 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			     .msg_controllen = sizeof(cm.b) };
	struct cmsghdr *h;
	char buf[16];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(pipe(p), 0);
	fds[0] = p[0];
	fds[1] = p[1];
	fds[2] = p[0];
	memset(&cm, 0, sizeof(cm));
	h = CMSG_FIRSTHDR(&mh);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(h), fds, sizeof(fds));
	ck_assert_int_eq(sendmsg(sv[0], &mh, 0), 5);
	before = open_fds();
	ck_assert_int_eq(fdpass__recv(sv[1], buf, sizeof(buf), &fd, 0), 5);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(open_fds(), before + 1); /* the first kept, two closed */
	close(fd);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}
END_TEST

Suite *fdpass_suite(void)
{
	Suite *s = suite_create("fdpass");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_extra_fds_closed);
	suite_add_tcase(s, tc);
	return s;
}
