/* Tests for src/daemon/ctl: the request parser (every verb and argument, each kind of malformed
 * input), format/parse round trips, cgroup listing on a fake cgroup tree, the authorization
 * rules (membership only: which processes is the kernel's decision), and the server driven
 * in-process: replies, an fd handed over, garbage, oversized and silent clients dropped, the
 * connection limit, hang-ups reported, a non-member (a forked child turned into nobody)
 * refused at connect, and a member held to 4 connections while root keeps its own slots. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/ctl.h"
#include "record/record.h"

static int parse(const char *s, struct ctl_request *r)
{
	return ctl__parse_request(s, strlen(s), r);
}

START_TEST(test_parse_ok)
{
	struct ctl_request r;

	ck_assert_int_eq(parse("status", &r), 0);
	ck_assert_int_eq(r.verb, CTL_STATUS);
	ck_assert_int_eq(parse("rotate", &r), 0);
	ck_assert_int_eq(r.verb, CTL_ROTATE);
	ck_assert_int_eq(parse("record pid=42", &r), 0);
	ck_assert_int_eq(r.verb, CTL_RECORD);
	ck_assert_int_eq(r.pid, 42);
	ck_assert_uint_eq(r.duration_ms, 0);
	ck_assert_int_eq(r.callgraph, -1);
	ck_assert(!r.lossless);
	ck_assert_int_eq(parse("record cgroup=/user.slice/a.scope duration=1500ms frequency=99 "
			       "call_graph=fp lossless=1", &r), 0);
	ck_assert_int_eq(r.pid, 0);
	ck_assert_str_eq(r.cgroup, "/user.slice/a.scope");
	ck_assert_uint_eq(r.duration_ms, 1500);
	ck_assert_uint_eq(r.frequency, 99);
	ck_assert_int_eq(r.callgraph, CALLGRAPH_FP);
	ck_assert(r.lossless);
}
END_TEST

START_TEST(test_parse_bad)
{
	static const struct { const char *req, *why; } t[] = {
		{ "", "unknown request" },
		{ "STATUS", "unknown request" },
		{ "status now", "take no arguments" },
		{ "rotate ", "take no arguments" },
		{ "record", "exactly one of pid= and cgroup=" },
		{ "record pid=1 cgroup=/a", "exactly one of" },
		{ "record pid=0", "bad pid" },
		{ "record pid=-1", "bad pid" },
		{ "record pid=99999999999", "bad pid" },
		{ "record pid=1x", "bad pid" },
		{ "record pid=", "bad pid" },
		{ "record pid=1 pid=2", "given twice" },
		{ "record pid=1 duration=0", "bad duration" },
		{ "record pid=1 duration=86400001ms", "bad duration" },
		{ "record pid=1 frequency=1000001", "bad frequency" },
		{ "record pid=1 call_graph=lbr", "bad call_graph" },
		{ "record pid=1 lossless=yes", "bad lossless" },
		{ "record pid=1 colour=red", "unknown argument" },
		{ "record  pid=1", "malformed argument" },
		{ "record pid", "malformed argument" },
		{ "record cgroup=relative", "bad cgroup" },
		{ "record cgroup=/a/../b", "bad cgroup" },
		{ "record cgroup=/a//b", "bad cgroup" },
		{ "record cgroup=/..", "bad cgroup" },
		{ "record cgroup=/./a", "bad cgroup" },
		{ "status\t", "printable" },
		{ "status\x7f", "printable" },
		{ "record pid=1\xc3\xa9", "printable" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct ctl_request r;

		ck_assert_msg(parse(t[i].req, &r) == -EINVAL, "accepted '%s'", t[i].req);
		ck_assert_msg(strstr(ctl__request_error(&r), t[i].why), "'%s': reason '%s' lacks '%s'",
			      t[i].req, ctl__request_error(&r), t[i].why);
		/* nothing but the reason: no half-parsed target */
		ck_assert_int_eq(r.pid, 0);
		ck_assert_str_eq(r.cgroup, "");
	}
	{
		/* NUL inside, and too long */
		struct ctl_request r;
		char big[CTL_MAX_LINE + 10];

		ck_assert_int_eq(ctl__parse_request("status\0x", 8, &r), -EINVAL);
		memset(big, 'a', sizeof(big));
		ck_assert_int_eq(ctl__parse_request(big, sizeof(big), &r), -EINVAL);
		ck_assert_str_eq(ctl__request_error(&r), "request too long");
	}
}
END_TEST

START_TEST(test_format_roundtrip)
{
	struct ctl_request in = { .verb = CTL_RECORD, .pid = 1234, .duration_ms = 2500,
				  .frequency = 777, .callgraph = CALLGRAPH_NONE, .lossless = true };
	struct ctl_request out, in2 = { .verb = CTL_RECORD, .callgraph = -1 };
	char buf[CTL_MAX_LINE];
	int n;

	n = ctl__format_request(&in, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(buf[n - 1], '\n');
	ck_assert_int_eq(ctl__parse_request(buf, (size_t)n - 1, &out), 0);
	ck_assert_int_eq(out.pid, 1234);
	ck_assert_uint_eq(out.duration_ms, 2500);
	ck_assert_uint_eq(out.frequency, 777);
	ck_assert_int_eq(out.callgraph, CALLGRAPH_NONE);
	ck_assert(out.lossless);
	strcpy(in2.cgroup, "/x/y");
	n = ctl__format_request(&in2, buf, sizeof(buf));
	ck_assert_str_eq(buf, "record cgroup=/x/y\n");
	ck_assert_int_eq(ctl__format_request(&in, buf, 10), -ENOSPC);
	in.verb = CTL_STATUS;
	ck_assert_int_eq(ctl__format_request(&in, buf, sizeof(buf)), 7);
	ck_assert_str_eq(buf, "status\n");
}
END_TEST

/* A fake /proc and cgroup tree under a temporary directory. */
static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256], dir[256], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = dir + strlen(root) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = 0;
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void make_tree(void)
{
	snprintf(root, sizeof(root), "/tmp/check-ctl-%d", (int)getpid());
	mkdir(root, 0755);
	put("/proc/100/status", "Name:\ta\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n");
	put("/proc/101/status", "Name:\tb\nUid:\t1001\t1001\t1001\t1001\n");
	put("/proc/102/status", "Name:\tsu\nUid:\t1000\t0\t0\t0\n");
	put("/proc/103/status", "Name:\tweird\n");
	put("/cg/mine/cgroup.procs", "100\n");
	put("/cg/mixed/cgroup.procs", "100\n101\n");
	put("/cg/empty/cgroup.procs", "");
	put("/cg/gone/cgroup.procs", "100\n999\n");
}

static void remove_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_cgroup_pids)
{
	char cg[128];
	pid_t *pids = NULL;
	size_t nr = 0;

	make_tree();
	snprintf(cg, sizeof(cg), "%s/cg", root);
	ck_assert_int_eq(ctl__cgroup_pids(cg, "/mixed", &pids, &nr), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_int_eq(pids[0], 100);
	ck_assert_int_eq(pids[1], 101);
	free(pids);
	ck_assert_int_eq(ctl__cgroup_pids(cg, "/empty", &pids, &nr), 0);
	ck_assert_uint_eq(nr, 0);
	free(pids);
	ck_assert_int_eq(ctl__cgroup_pids(cg, "/none", &pids, &nr), -ENOENT);
	ck_assert_int_eq(ctl__cgroup_pids(cg, "/mine/../mixed", &pids, &nr), -EINVAL);
	remove_tree();
}
END_TEST

START_TEST(test_authorize)
{
	struct ctl_peer rootp = { .pid = 1, .uid = 0, .gid = 0 };
	struct ctl_peer member = { .pid = 2, .uid = 1000, .gid = 4242 };
	struct ctl_peer other = { .pid = 3, .uid = 1000, .gid = 77 };
	struct ctl_request st = { .verb = CTL_STATUS }, rot = { .verb = CTL_ROTATE };
	struct ctl_request rec = { .verb = CTL_RECORD };
	/* root: anything */
	ck_assert_int_eq(ctl__authorize(&rootp, (gid_t)-1, &rot), 0);
	/* no group configured: only root */
	ck_assert_int_eq(ctl__authorize(&member, (gid_t)-1, &st),
			 -EPERM);
	ck_assert_ptr_nonnull(strstr(ctl__peer_error(&member), "only root"));
	/* not a member (gid 77, uid 1000 unknown to the user database or not in 4242) */
	ck_assert_int_eq(ctl__authorize(&other, 4242, NULL), -EPERM);
	ck_assert_ptr_nonnull(strstr(ctl__peer_error(&other), "is not in group"));
	/* a member by its gid */
	ck_assert_int_eq(ctl__authorize(&member, 4242, NULL), 0);
	ck_assert_str_eq(ctl__peer_error(&member), "");
	ck_assert_int_eq(ctl__authorize(&member, 4242, &st), 0);
	ck_assert_int_eq(ctl__authorize(&member, 4242, &rot), -EPERM);
	ck_assert_ptr_nonnull(strstr(ctl__peer_error(&member), "only root may rotate"));
	/* Which processes a member may record is the kernel's decision, made when precordd
	 * opens the events with the member's credentials: another user's process, a set-uid
	 * one, a cgroup of mixed owners all pass here. */
	rec.pid = 100;
	ck_assert_int_eq(ctl__authorize(&member, 4242, &rec), 0);
	rec.pid = 101;
	ck_assert_int_eq(ctl__authorize(&member, 4242, &rec), 0);
	rec.pid = 102;
	ck_assert_int_eq(ctl__authorize(&member, 4242, &rec), 0);
	rec.pid = 0;
	strcpy(rec.cgroup, "/mixed");
	ck_assert_int_eq(ctl__authorize(&member, 4242, &rec), 0);
	/* but a non-member may not even ask */
	ck_assert_int_eq(ctl__authorize(&other, 4242, &rec), -EPERM);
}
END_TEST

START_TEST(test_group_database)
{
	/* root's supplementary groups come from the user database: root is in group 0 */
	struct ctl_peer p = { .pid = 1, .uid = 0, .gid = 4242 };
	struct passwd *pw = getpwnam("nobody");

	ck_assert(ctl__peer_in_group(&p, 0));
	ck_assert(!ctl__peer_in_group(&p, 4243));
	ck_assert(!ctl__peer_in_group(&p, (gid_t)-1));
	if (pw) {
		struct ctl_peer n = { .pid = 1, .uid = pw->pw_uid, .gid = 4242 };

		ck_assert(ctl__peer_in_group(&n, pw->pw_gid)); /* primary group in passwd */
		ck_assert(!ctl__peer_in_group(&n, 0));
	}
}
END_TEST

/* ---- the server, in this process ---- */

struct srv_ctx {
	int requests, gone, orderly, refused;
	int pass_fd;              /* handed with the reply when >= 0 */
	bool keep;                /* keep the client instead of answering */
	struct ctl_client *kept;
	char last_refusal[256];
};

static void h_request(void *ctx, struct ctl_client *c, const struct ctl_request *req)
{
	struct srv_ctx *x = ctx;

	x->requests++;
	if (x->keep) {
		x->kept = c;
		ctl_client__send(c, "STARTED");
		return;
	}
	ctl_client__finish(c, req->verb == CTL_STATUS ? "OK state=test" : "OK", x->pass_fd);
}

static void h_gone(void *ctx, struct ctl_client *c, bool orderly)
{
	struct srv_ctx *x = ctx;

	x->gone++;
	x->orderly += orderly;
	if (x->kept == c)
		x->kept = NULL;
	if (orderly)
		ctl_client__finish(c, "OK late", -1);
}

static void h_refused(void *ctx, const struct ctl_peer *p, const char *why)
{
	struct srv_ctx *x = ctx;

	x->refused++;
	snprintf(x->last_refusal, sizeof(x->last_refusal), "%s", why);
}

static char sock_path[64];

static struct ctl_server *server(struct srv_ctx *x, unsigned int max_clients, int timeout_ms)
{
	struct ctl_server_opts o = {
		.path = sock_path, .group = (gid_t)-1, .max_clients = max_clients,
		.request_timeout_ms = timeout_ms, .ctx = x, .request = h_request, .gone = h_gone,
		.refused = h_refused,
	};
	struct ctl_server *s;

	snprintf(sock_path, sizeof(sock_path), "/tmp/check-ctl-%d.sock", (int)getpid());
	x->pass_fd = -1;
	s = ctl_server__new(&o);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(ctl_server__listen(s) == 0, "%s", ctl_server__error(s));
	return s;
}

/* Serve for at least ms milliseconds (the server's own deadlines need the time to pass), then
 * until nothing is left to do: no fd of the server is ready. The clients of these tests wrote
 * before the pump, so what the server has to do is ready at once; a busy machine that lets the
 * pump run only now and then makes it take longer, never end early. */
static void pump(struct ctl_server *s, int ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (;;) {
		struct pollfd p[40];
		size_t n = ctl_server__pollfds(s, p, 40);
		int r;

		clock_gettime(CLOCK_MONOTONIC, &b);
		int left = ms - (int)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
		r = poll(p, n, left <= 0 ? 0 : left < 20 ? left : 20);
		ctl_server__handle(s, p, r > 0 ? n : 0);
		if (left <= 0 && r == 0)
			break;
	}
}

static uint64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* How long a child process may take to do its part: only one that never does waits this long. */
#define WAIT_MS 60000

static int client(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, sock_path);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Everything the server sent before closing, or before quiet_ms of silence (what is there now
 * if it keeps the client). */
static const char *answer_within(int fd, char *buf, size_t size, int *ret_fd, int quiet_ms)
{
	size_t len = 0;

	if (ret_fd)
		*ret_fd = -1;
	for (;;) {
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr a;
		} cm;
		struct iovec iov = { buf + len, size - 1 - len };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
				     .msg_controllen = sizeof(cm.b) };
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, quiet_ms) <= 0)
			break;
		n = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (n <= 0)
			break;
		struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
		if (h && h->cmsg_type == SCM_RIGHTS && ret_fd)
			memcpy(ret_fd, CMSG_DATA(h), sizeof(int));
		len += (size_t)n;
	}
	buf[len] = 0;
	return buf;
}

static const char *answer(int fd, char *buf, size_t size, int *ret_fd)
{
	return answer_within(fd, buf, size, ret_fd, 200);
}

static bool closed_by_peer(int fd)
{
	char b;
	struct pollfd p = { fd, POLLIN, 0 };

	if (poll(&p, 1, 500) <= 0)
		return false;
	return recv(fd, &b, 1, MSG_DONTWAIT) <= 0;
}

START_TEST(test_server_reply_and_fd)
{
	struct srv_ctx x = { 0 };
	struct ctl_server *s = server(&x, 0, 0);
	char buf[2048], tmpl[] = "/tmp/check-ctl-file.XXXXXX";
	int c, got, f;

	c = client();
	ck_assert_int_eq(write(c, "status\n", 7), 7);
	pump(s, 100);
	ck_assert_int_eq(x.requests, 1);
	ck_assert_str_eq(answer(c, buf, sizeof(buf), NULL), "OK state=test\n");
	ck_assert(closed_by_peer(c));
	close(c);

	/* a request in two pieces, and a file handed over */
	f = mkstemp(tmpl);
	ck_assert_int_eq(write(f, "perf data", 9), 9);
	unlink(tmpl);
	x.pass_fd = f;
	c = client();
	ck_assert_int_eq(write(c, "rec", 3), 3);
	pump(s, 50);
	ck_assert_int_eq(x.requests, 1);
	ck_assert_int_eq(write(c, "ord pid=1\n", 10), 10);
	pump(s, 100);
	ck_assert_int_eq(x.requests, 2);
	ck_assert_str_eq(answer(c, buf, sizeof(buf), &got), "OK\n");
	ck_assert_int_ge(got, 0);
	ck_assert_int_eq(pread(got, buf, sizeof(buf), 0), 9);
	ck_assert_int_eq(memcmp(buf, "perf data", 9), 0);
	close(got);
	close(f);
	close(c);
	ctl_server__free(s);
	ck_assert_int_eq(access(sock_path, F_OK), -1);
}
END_TEST

START_TEST(test_server_bad_clients)
{
	struct srv_ctx x = { 0 };
	struct ctl_server *s = server(&x, 0, 300);
	char buf[4096], big[5000];
	int g, o, slow, two, ok;

	g = client();
	ck_assert_int_eq(write(g, "\x01\x02garbage\n", 10), 10);
	o = client();
	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(write(o, big, sizeof(big)), (ssize_t)sizeof(big));
	slow = client();
	ck_assert_int_eq(write(slow, "stat", 4), 4);
	two = client();
	ck_assert_int_eq(write(two, "status\nstatus\n", 14), 14);
	pump(s, 100);
	ck_assert_ptr_nonnull(strstr(answer(g, buf, sizeof(buf), NULL), "ERR malformed request"));
	ck_assert(closed_by_peer(g));
	ck_assert_ptr_nonnull(strstr(answer(o, buf, sizeof(buf), NULL), "ERR request too long"));
	ck_assert_ptr_nonnull(strstr(answer(two, buf, sizeof(buf), NULL), "one request per"));
	ck_assert_int_eq(x.requests, 0);
	/* meanwhile a good client is served */
	ok = client();
	ck_assert_int_eq(write(ok, "status\n", 7), 7);
	pump(s, 50);
	ck_assert_str_eq(answer(ok, buf, sizeof(buf), NULL), "OK state=test\n");
	/* the silent one is dropped at its deadline */
	pump(s, 400);
	ck_assert_ptr_nonnull(strstr(answer(slow, buf, sizeof(buf), NULL), "ERR no complete request"));
	ck_assert(closed_by_peer(slow));
	ck_assert_int_eq(x.refused, 4);
	close(g);
	close(o);
	close(slow);
	close(two);
	close(ok);
	ctl_server__free(s);
}
END_TEST

START_TEST(test_server_limit_and_hangup)
{
	struct srv_ctx x = { .keep = true };
	struct ctl_server *s = server(&x, 1, 0);
	char buf[256];
	int a, b;

	a = client();
	ck_assert_int_eq(write(a, "record pid=1\n", 13), 13);
	pump(s, 50);
	ck_assert_ptr_nonnull(x.kept);
	ck_assert_str_eq(answer(a, buf, sizeof(buf), NULL), "STARTED\n");
	b = client();
	pump(s, 50);
	ck_assert_ptr_nonnull(strstr(answer(b, buf, sizeof(buf), NULL), "ERR busy"));
	close(b);
	/* ^C in the client: it closes its side and still reads the final line */
	shutdown(a, SHUT_WR);
	pump(s, 50);
	ck_assert_int_eq(x.gone, 1);
	ck_assert_int_eq(x.orderly, 1);
	ck_assert_str_eq(answer(a, buf, sizeof(buf), NULL), "OK late\n");
	close(a);
	/* data after the request from a kept client: dropped, not orderly */
	a = client();
	ck_assert_int_eq(write(a, "record pid=1\n", 13), 13);
	pump(s, 50);
	ck_assert_ptr_nonnull(x.kept);
	ck_assert_int_eq(write(a, "more\n", 5), 5);
	pump(s, 50);
	ck_assert_int_eq(x.gone, 2);
	ck_assert_int_eq(x.orderly, 1);
	ck_assert_ptr_nonnull(strstr(answer(a, buf, sizeof(buf), NULL), "ERR unexpected data"));
	close(a);
	/* a kept client when the server goes away */
	a = client();
	ck_assert_int_eq(write(a, "record pid=1\n", 13), 13);
	pump(s, 50);
	ck_assert_ptr_nonnull(x.kept);
	ctl_server__free(s);
	ck_assert_int_eq(x.gone, 3);
	close(a);
}
END_TEST

/* A member's connections: at most 4 of one uid; with every other slot full, root still gets in. */
START_TEST(test_server_per_uid_limit)
{
	struct srv_ctx x = { 0 };
	struct ctl_server *s = server(&x, 4, 3000);
	struct passwd *pw = getpwnam("nobody");
	int sync[2], st = -1, r;
	char b = 0, buf[256];
	pid_t child;

	if (!pw || getuid() != 0)
		return; /* needs root and a nobody user to switch to */
	ctl_server__set_group(s, pw->pw_gid);
	ck_assert_int_eq(pipe(sync), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct pollfd p;
		int c[5];

		if (setgroups(0, NULL) || setgid(pw->pw_gid) || setuid(pw->pw_uid))
			_exit(3);
		for (int i = 0; i < 5; i++)
			c[i] = client();
		/* the fifth is told why and closed; the four others wait for their request */
		p = (struct pollfd){ c[4], POLLIN, 0 };
		if (poll(&p, 1, WAIT_MS) != 1 || recv(c[4], buf, sizeof(buf) - 1, 0) <= 0)
			_exit(4);
		if (!strstr(buf, "ERR busy: too many connections of your uid"))
			_exit(5);
		if (write(sync[1], "k", 1) != 1)
			_exit(6);
		pause();
		_exit(0);
	}
	close(sync[1]);
	for (uint64_t end = mono_ms() + WAIT_MS; mono_ms() < end;) {
		struct pollfd p = { sync[0], POLLIN, 0 };

		pump(s, 10);
		if (poll(&p, 1, 0) == 1)
			break;
	}
	r = (int)read(sync[0], &b, 1);
	ck_assert_msg(r == 1 && b == 'k', "the member's fifth connection was not refused");
	/* the member holds 4 of the 4 slots: root has its own */
	{
		int c = client();

		ck_assert_int_eq(write(c, "status\n", 7), 7);
		pump(s, 50);
		ck_assert_str_eq(answer(c, buf, sizeof(buf), NULL), "OK state=test\n");
		close(c);
	}
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	close(sync[0]);
	ctl_server__free(s);
}
END_TEST

START_TEST(test_server_refuses_non_member)
{
	struct srv_ctx x = { 0 };
	struct ctl_server *s = server(&x, 0, 0);
	struct passwd *pw = getpwnam("nobody");
	pid_t child;
	int st = -1;

	if (!pw || getuid() != 0)
		return; /* needs root and a nobody user to switch to */
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		char buf[512];
		int c;

		if (setgroups(0, NULL) || setgid(pw->pw_gid) || setuid(pw->pw_uid))
			_exit(3);
		c = client();
		/* refused at connect: the request may find the connection closed already */
		send(c, "status\n", 7, MSG_NOSIGNAL);
		/* until the server closes it, however long its thread takes to be scheduled:
		 * 200 ms of silence is not an end here */
		answer_within(c, buf, sizeof(buf), NULL, WAIT_MS);
		_exit(strstr(buf, "ERR permission denied: only root") ? 0 : 5);
	}
	for (uint64_t end = mono_ms() + WAIT_MS; mono_ms() < end && waitpid(child, &st, WNOHANG) == 0;)
		pump(s, 20);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
	ck_assert_int_eq(x.requests, 0);
	ck_assert_int_eq(x.refused, 1);
	ck_assert_ptr_nonnull(strstr(x.last_refusal, "permission denied"));
	ctl_server__free(s);
}
END_TEST

START_TEST(test_server_stale_socket)
{
	struct srv_ctx x = { 0 };
	struct ctl_server *s = server(&x, 0, 0);
	struct ctl_server_opts o = { .path = sock_path, .group = (gid_t)-1, .ctx = &x,
				     .request = h_request };
	struct ctl_server *s2;
	int fd;

	/* a second server replaces the socket; freeing the first leaves the new one alone */
	s2 = ctl_server__new(&o);
	ck_assert_ptr_nonnull(s2);
	ck_assert_int_eq(ctl_server__listen(s2), 0);
	ck_assert_int_eq(ctl_server__listen(s2), -EBUSY);
	ctl_server__free(s);
	ck_assert_int_eq(access(sock_path, F_OK), 0);
	ctl_server__free(s2);
	ck_assert_int_eq(access(sock_path, F_OK), -1);
	/* a regular file at the path is not ours to replace */
	fd = open(sock_path, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	s = ctl_server__new(&o);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(ctl_server__listen(s), -EEXIST);
	ck_assert_ptr_nonnull(strstr(ctl_server__error(s), sock_path));
	ck_assert_ptr_nonnull(strstr(ctl_server__error(s), "not a socket"));
	ctl_server__free(s);
	/* freeing a server that never listened leaves the path alone */
	ck_assert_int_eq(access(sock_path, F_OK), 0);
	unlink(sock_path);
}
END_TEST

Suite *ctl_suite(void)
{
	Suite *s = suite_create("ctl");
	TCase *tc = tcase_create("protocol");

	tcase_add_test(tc, test_parse_ok);
	tcase_add_test(tc, test_parse_bad);
	tcase_add_test(tc, test_format_roundtrip);
	suite_add_tcase(s, tc);
	tc = tcase_create("authorization");
	tcase_add_test(tc, test_cgroup_pids);
	tcase_add_test(tc, test_authorize);
	tcase_add_test(tc, test_group_database);
	suite_add_tcase(s, tc);
	tc = tcase_create("server");
	tcase_add_test(tc, test_server_reply_and_fd);
	tcase_add_test(tc, test_server_bad_clients);
	tcase_add_test(tc, test_server_limit_and_hangup);
	tcase_add_test(tc, test_server_refuses_non_member);
	tcase_add_test(tc, test_server_per_uid_limit);
	tcase_add_test(tc, test_server_stale_socket);
	suite_add_tcase(s, tc);
	return s;
}
