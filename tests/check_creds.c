/* Tests for src/lib/creds: the rule of who may record the kernel, and creds__run: the work
 * runs as the given user with no capability on its own thread, the caller keeps its own, and the kernel then refuses what that user may not do
 * (perf_event_open on root's process, reading a root-only file). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/creds.h"

START_TEST(test_kernel_rules)
{
	ck_assert(creds__may_record_kernel(0, 2));     /* root */
	ck_assert(creds__may_record_kernel(0, 4));
	ck_assert(!creds__may_record_kernel(1000, 2)); /* a user at the default */
	ck_assert(!creds__may_record_kernel(1000, 3));
	ck_assert(creds__may_record_kernel(1000, 1));
	ck_assert(creds__may_record_kernel(1000, -1));
	ck_assert_int_ge(creds__paranoid(), -1);
}
END_TEST

/* What the running thread holds, from /proc/thread-self/status. */
struct seen {
	unsigned int uid[4], gid[4];
	unsigned long long cap_eff, cap_prm, cap_inh;
	int ngroups;
	int perf_root_err;  /* errno of perf_event_open on pid 1, 0 if it opened */
	int perf_self_err;  /* on this thread */
	int read_err;       /* errno of opening a root-only file */
	const char *root_file;
};

static int look(void *arg)
{
	struct seen *s = arg;
	char line[512];
	FILE *f = fopen("/proc/thread-self/status", "re");
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1, .exclude_kernel = 1, .exclude_hv = 1,
	};
	int fd;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4))
			sscanf(line + 4, "%u %u %u %u", &s->uid[0], &s->uid[1], &s->uid[2], &s->uid[3]);
		else if (!strncmp(line, "Gid:", 4))
			sscanf(line + 4, "%u %u %u %u", &s->gid[0], &s->gid[1], &s->gid[2], &s->gid[3]);
		else if (!strncmp(line, "CapEff:", 7))
			s->cap_eff = strtoull(line + 7, NULL, 16);
		else if (!strncmp(line, "CapPrm:", 7))
			s->cap_prm = strtoull(line + 7, NULL, 16);
		else if (!strncmp(line, "CapInh:", 7))
			s->cap_inh = strtoull(line + 7, NULL, 16);
		else if (!strncmp(line, "Groups:", 7)) {
			char *p = line + 7, *e;

			s->ngroups = 0;
			while (strtoul(p, &e, 10), e != p) {
				s->ngroups++;
				p = e;
			}
		}
	}
	fclose(f);
	fd = (int)syscall(SYS_perf_event_open, &a, 1, -1, -1, PERF_FLAG_FD_CLOEXEC);
	s->perf_root_err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	s->perf_self_err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	fd = open(s->root_file, O_RDONLY | O_CLOEXEC);
	s->read_err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	return 42;
}

START_TEST(test_run_as_user)
{
	struct passwd *pw = getpwnam("nobody");
	struct creds c = { 0 };
	struct seen s = { .root_file = "/tmp/check-creds-secret" };
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int fd;

	if (!pw || geteuid() != 0)
		return; /* needs root and a nobody user */
	fd = open(s.root_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	c.uid = pw->pw_uid;
	c.gid = pw->pw_gid;
	c.groups[0] = pw->pw_gid;
	c.nr_groups = 1;
	/* an inheritable set, as systemd's AmbientCapabilities gives precordd: a uid change
	 * keeps it, the work must not (this test runs in a process of its own) */
	ck_assert_int_eq(syscall(SYS_capget, &h, d), 0);
	d[1].inheritable |= 1u << (38 - 32); /* CAP_PERFMON */
	ck_assert_int_eq(syscall(SYS_capset, &h, d), 0);
	ck_assert_int_eq(creds__run(&c, look, &s), 42);
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_eq(s.uid[i], pw->pw_uid);
		ck_assert_uint_eq(s.gid[i], pw->pw_gid);
	}
	ck_assert_int_eq(s.ngroups, 1);
	ck_assert_uint_eq(s.cap_eff, 0);
	ck_assert_uint_eq(s.cap_prm, 0);
	ck_assert_uint_eq(s.cap_inh, 0);
	/* the kernel's rules now: not root's process, not root's file; its own thread yes
	 * (at perf_event_paranoid <= 2) */
	ck_assert(s.perf_root_err == EACCES || s.perf_root_err == EPERM);
	ck_assert_int_eq(s.read_err, EACCES);
	if (creds__paranoid() <= 2)
		ck_assert_int_eq(s.perf_self_err, 0);
	/* the caller kept everything */
	ck_assert_uint_eq(geteuid(), 0);
	ck_assert_int_eq(access(s.root_file, R_OK), 0);

	unlink(s.root_file);
}
END_TEST

static int ret_seven(void *arg)
{
	(void)arg;
	return 7;
}

START_TEST(test_run_limits)
{
	struct creds c = { .nr_groups = CREDS_MAX_GROUPS + 1 };

	ck_assert_int_eq(creds__run(NULL, ret_seven, NULL), 7);  /* NULL: the caller's own */
	ck_assert_int_eq(creds__run(&c, ret_seven, NULL), -EINVAL);
	if (geteuid() != 0) {
		/* not allowed to switch: fn never runs */
		struct creds o = { .uid = 0, .gid = 0 };

		ck_assert_int_eq(creds__run(&o, ret_seven, NULL), -EPERM);
	}
}
END_TEST

Suite *creds_suite(void)
{
	Suite *s = suite_create("creds");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, test_kernel_rules);
	suite_add_tcase(s, tc);
	tc = tcase_create("run");
	tcase_add_test(tc, test_run_as_user);
	tcase_add_test(tc, test_run_limits);
	suite_add_tcase(s, tc);
	return s;
}
