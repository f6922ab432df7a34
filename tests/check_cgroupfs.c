/* Tests for src/lib/cgroupfs and synthesize__cgroups: the unit a cgroup path names, the cgroup2
 * mount, ids as the kernel gives them, and one PERF_RECORD_CGROUP per directory of a cgroup
 * tree the test makes (when cgroup2 can be written here, as root). */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "lib/cgroupfs.h"
#include "record/synthesize.h"

START_TEST(test_unit)
{
	static const struct { const char *path, *unit; } cases[] = {
		{ "/system.slice/nginx.service", "nginx.service" },
		{ "/system.slice/docker-0123abcd.scope", "docker-0123abcd.scope" },
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "foo.service" },
		{ "/user.slice/user-1000.slice/session-3.scope", "session-3.scope" },
		{ "/user.slice/user-1000.slice", "user-1000.slice" },
		{ "/system.slice/nginx.service/worker", "nginx.service" },
		{ "/", NULL },
		{ "/custom/group", NULL },
		{ "/.service", NULL },
		{ "", NULL },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *u = cgroupfs__unit(cases[i].path, buf, sizeof(buf));

		if (!cases[i].unit)
			ck_assert_msg(!u, "%s: %s", cases[i].path, u);
		else
			ck_assert_msg(u && !strcmp(u, cases[i].unit), "%s: %s", cases[i].path, u ? u : "NULL");
	}
	ck_assert_str_eq(cgroupfs__unit("/a.slice/abcdefghij.service", buf, 6), "abcde");
	ck_assert_ptr_null(cgroupfs__unit(NULL, buf, sizeof(buf)));
}
END_TEST

struct got {
	int n;
	uint64_t ids[16];
	char paths[16][128];
};

static int collect(void *ctx, const void *buf, size_t len)
{
	struct got *g = ctx;
	const char *p = buf;

	while (len) {
		const struct perf_event_header *h = (const void *)p;

		ck_assert_uint_eq(h->type, PERF_RECORD_CGROUP);
		ck_assert_uint_eq(h->size % 8, 0);
		ck_assert_int_lt(g->n, 16);
		memcpy(&g->ids[g->n], h + 1, 8);
		snprintf(g->paths[g->n], sizeof(g->paths[0]), "%s", (const char *)(h + 1) + 8);
		g->n++;
		p += h->size;
		len -= h->size;
	}
	return 0;
}

/* The mounts mountinfo names are the file systems statfs finds there. */
START_TEST(test_mount)
{
	char *point = NULL, *root = NULL, buf[PATH_MAX];
	struct statfs sf;
	int r = cgroupfs__mount(NULL, &point, &root);

	if (r == -ENOENT) {
		ck_assert_int_eq(cgroupfs__v2_mount(buf, sizeof(buf)), -ENOENT);
	} else {
		ck_assert_int_eq(r, 0);
		ck_assert_int_eq(statfs(point, &sf), 0);
		ck_assert(sf.f_type == CGROUP2_SUPER_MAGIC);
		ck_assert_int_eq(root[0], '/');
		ck_assert_int_eq(cgroupfs__v2_mount(buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, point);
		ck_assert_int_eq(cgroupfs__v2_mount(buf, strlen(point)), -ENAMETOOLONG);
		free(point);
		free(root);
	}
	r = cgroupfs__mount("freezer", &point, &root);
	if (r == 0) {
		ck_assert_int_eq(statfs(point, &sf), 0);
		ck_assert(sf.f_type == CGROUP_SUPER_MAGIC);
		free(point);
		free(root);
	} else {
		ck_assert_int_eq(r, -ENOENT);
	}
	ck_assert_int_eq(cgroupfs__mount("no-such-controller", &point, &root), -ENOENT);
	ck_assert(cgroupfs__list_has("rw,freezer", "freezer"));
	ck_assert(cgroupfs__list_has("freezer", "freezer"));
	ck_assert(!cgroupfs__list_has("rw,freezer2", "freezer"));
	ck_assert(!cgroupfs__list_has("rw,xfreezer,", "freezer"));
	ck_assert(!cgroupfs__list_has("", "freezer"));
}
END_TEST

START_TEST(test_synthesize)
{
	char root[PATH_MAX], dir[PATH_MAX + 64], sub[PATH_MAX + 96];
	struct got g = { 0 };
	uint64_t nr = 0, id;
	int r;

	if (cgroupfs__v2_mount(root, sizeof(root)) < 0)
		return; /* no cgroup2 here */
	snprintf(dir, sizeof(dir), "%s/check-cgroupfs-%d", root, (int)getpid());
	if (mkdir(dir, 0755) < 0)
		return; /* not writable (not root) */
	snprintf(sub, sizeof(sub), "%s/a.service", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	r = synthesize__cgroups(NULL, dir, collect, &g, &nr);
	rmdir(sub);
	rmdir(dir);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_int_eq(g.n, 2);
	ck_assert_str_eq(g.paths[0], "/");
	ck_assert_str_eq(g.paths[1], "/a.service");
	ck_assert_uint_ne(g.ids[0], g.ids[1]);
	/* ids are the kernel's: the root of the hierarchy has its own */
	ck_assert_int_eq(cgroupfs__id(root, &id), 0);
	ck_assert_uint_ne(id, g.ids[0]);
	ck_assert_int_eq(synthesize__cgroups(NULL, "/nonexistent-cgroup-root", collect, &g, &nr), 0);
	ck_assert_uint_eq(nr, 0);
}
END_TEST

Suite *cgroupfs_suite(void)
{
	Suite *s = suite_create("cgroupfs");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_unit);
	tcase_add_test(tc, test_mount);
	tcase_add_test(tc, test_synthesize);
	suite_add_tcase(s, tc);
	return s;
}
