/* Tests for src/lib/topology: CPU lists, scope names, and topology__read() against two fake sysfs
 * trees under tests/data (8 CPUs with SMT, 2 LLCs, 2 nodes and CPU 7 offline; 4 CPUs with no
 * cache or node information) and against the real /sys of this machine; the hypervisor's steal
 * time against two fake /proc/stat files (tests/data/proc-steal, proc-short). */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/topology.h"

static const char *data_path(const char *name)
{
	static char buf[PATH_MAX];
	const char *top = getenv("PRECORD_TOP");

	snprintf(buf, sizeof(buf), "%s/tests/data/%s", top ? top : ".", name);
	return buf;
}

/* Build a set from a -1-terminated list. */
static cpu_set_t mkset(int first, ...)
{
	cpu_set_t set;
	va_list ap;

	CPU_ZERO(&set);
	va_start(ap, first);
	for (int c = first; c >= 0; c = va_arg(ap, int))
		CPU_SET(c, &set);
	va_end(ap);
	return set;
}

static void assert_scope(const struct topology *t, int cpu, enum topo_scope scope,
			 cpu_set_t want)
{
	cpu_set_t got;

	ck_assert_int_eq(topology__scope_cpus(t, cpu, scope, &got), 0);
	ck_assert_msg(CPU_EQUAL(&got, &want), "cpu %d scope %s: wrong set (count %d, want %d)",
		      cpu, topo_scope__name(scope), CPU_COUNT(&got), CPU_COUNT(&want));
}

START_TEST(test_cpulist_parse)
{
	cpu_set_t s, want;

	ck_assert_int_eq(cpulist__parse("0-3,6\n", &s), 0);
	want = mkset(0, 1, 2, 3, 6, -1);
	ck_assert(CPU_EQUAL(&s, &want));
	ck_assert_int_eq(cpulist__parse("5", &s), 0);
	want = mkset(5, -1);
	ck_assert(CPU_EQUAL(&s, &want));
	ck_assert_int_eq(cpulist__parse("\n", &s), 0);
	ck_assert_int_eq(CPU_COUNT(&s), 0);
	ck_assert_int_eq(cpulist__parse("0,2-2,4-5", &s), 0);
	want = mkset(0, 2, 4, 5, -1);
	ck_assert(CPU_EQUAL(&s, &want));

	ck_assert_int_eq(cpulist__parse("3-1", &s), -EINVAL);
	ck_assert_int_eq(cpulist__parse("1,", &s), -EINVAL);
	ck_assert_int_eq(cpulist__parse("a", &s), -EINVAL);
	ck_assert_int_eq(cpulist__parse("1-", &s), -EINVAL);
	ck_assert_int_eq(cpulist__parse("1 2", &s), -EINVAL);
	/* a CPU past CPU_SETSIZE: out of range, not a malformed list (precord -C says it does not
	 * exist, as for any CPU past the last) */
	ck_assert_int_eq(cpulist__parse("99999", &s), -ERANGE);
	ck_assert_int_eq(cpulist__parse("0-1024", &s), -ERANGE);
	ck_assert_int_eq(cpulist__parse(NULL, &s), -EINVAL);
}
END_TEST

START_TEST(test_scope_names)
{
	enum topo_scope sc;
	const char *names[] = { "cpu", "smt", "cache", "numa", "system" };

	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(topo_scope__parse(names[i], &sc), 0);
		ck_assert_int_eq(sc, i);
		ck_assert_str_eq(topo_scope__name(sc), names[i]);
	}
	ck_assert_int_eq(topo_scope__parse("core", &sc), -EINVAL);
	ck_assert_int_eq(topo_scope__parse("", &sc), -EINVAL);
	ck_assert_ptr_null(topo_scope__name((enum topo_scope)42));
}
END_TEST

START_TEST(test_fake_8cpu)
{
	struct topology *t = topology__read(data_path("sysfs-8cpu"));
	cpu_set_t online = mkset(0, 1, 2, 3, 4, 5, 6, -1), llc_a = mkset(0, 1, 4, 5, -1),
		  llc_b = mkset(2, 3, 6, -1), s;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(topology__nr_cpus(t), 8);
	ck_assert(CPU_EQUAL(topology__online(t), &online));

	assert_scope(t, 0, TOPO_SCOPE_CPU, mkset(0, -1));
	assert_scope(t, 0, TOPO_SCOPE_SMT, mkset(0, 4, -1));
	assert_scope(t, 5, TOPO_SCOPE_SMT, mkset(1, 5, -1));
	/* CPU 7 is offline: its sibling's core is CPU 3 alone. */
	assert_scope(t, 3, TOPO_SCOPE_SMT, mkset(3, -1));
	/* The L3 (highest level), not the per-core L1/L2. */
	assert_scope(t, 0, TOPO_SCOPE_CACHE, llc_a);
	assert_scope(t, 4, TOPO_SCOPE_CACHE, llc_a);
	assert_scope(t, 2, TOPO_SCOPE_CACHE, llc_b);
	assert_scope(t, 6, TOPO_SCOPE_CACHE, llc_b);
	assert_scope(t, 1, TOPO_SCOPE_NUMA, mkset(0, 1, 4, 5, -1));
	assert_scope(t, 3, TOPO_SCOPE_NUMA, mkset(2, 3, 6, -1));
	assert_scope(t, 6, TOPO_SCOPE_SYSTEM, online);

	ck_assert_int_eq(topology__scope_cpus(t, 7, TOPO_SCOPE_CPU, &s), -EINVAL);
	ck_assert_int_eq(topology__scope_cpus(t, 8, TOPO_SCOPE_SMT, &s), -EINVAL);
	ck_assert_int_eq(topology__scope_cpus(t, -1, TOPO_SCOPE_SMT, &s), -EINVAL);
	ck_assert_int_eq(topology__scope_cpus(t, 0, (enum topo_scope)9, &s), -EINVAL);
	topology__free(t);
}
END_TEST

/* No thread_siblings_list, no cache directory, no node directory. */
START_TEST(test_fake_flat)
{
	struct topology *t = topology__read(data_path("sysfs-flat"));

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(topology__nr_cpus(t), 4);
	assert_scope(t, 1, TOPO_SCOPE_SMT, mkset(1, -1));
	assert_scope(t, 1, TOPO_SCOPE_CACHE, mkset(0, 1, -1));
	assert_scope(t, 3, TOPO_SCOPE_CACHE, mkset(2, 3, -1));
	assert_scope(t, 2, TOPO_SCOPE_NUMA, mkset(0, 1, 2, 3, -1));
	topology__free(t);
}
END_TEST

START_TEST(test_missing_root)
{
	errno = 0;
	ck_assert_ptr_null(topology__read("/nonexistent-sysfs"));
	ck_assert_int_eq(errno, ENOENT);
	topology__free(NULL);
}
END_TEST

/* topology__steal_ns reads the steal column of the "cpu" line of proc_root/stat, in ns; a stat
 * without that column (kernels before 2.6.11), a missing one and a path too long give 0. */
START_TEST(test_steal)
{
	char path[PATH_MAX];
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long a, b;

	snprintf(path, sizeof(path), "%s", data_path("proc-steal"));
	ck_assert_int_gt(hz, 0);
	ck_assert_uint_eq(topology__steal_ns(path), 250ull * (1000000000ull / (unsigned long long)hz));
	snprintf(path, sizeof(path), "%s", data_path("proc-short"));
	ck_assert_uint_eq(topology__steal_ns(path), 0);
	ck_assert_uint_eq(topology__steal_ns("/nonexistent-proc"), 0);
	memset(path, 'a', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	ck_assert_uint_eq(topology__steal_ns(path), 0);
	/* the real one only grows */
	a = topology__steal_ns("/proc");
	b = topology__steal_ns("/proc");
	ck_assert_uint_le(a, b);
}
END_TEST

/* The real machine: every online CPU is in each of its scopes, scopes nest, and the online set
 * agrees with sched_getaffinity's view at least in that our allowed CPUs are all online. */
START_TEST(test_real_sys)
{
	struct topology *t = topology__read("/sys");
	cpu_set_t allowed;
	int nr;

	ck_assert_ptr_nonnull(t);
	nr = topology__nr_cpus(t);
	ck_assert_int_ge(nr, 1);
	ck_assert_int_ge(CPU_COUNT(topology__online(t)), 1);
	ck_assert_int_eq(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			ck_assert_msg(CPU_ISSET(c, topology__online(t)), "cpu %d allowed, not online", c);

	for (int c = 0; c < nr; c++) {
		cpu_set_t prev, cur, tmp;

		if (!CPU_ISSET(c, topology__online(t)))
			continue;
		CPU_ZERO(&prev);
		for (int sc = TOPO_SCOPE_CPU; sc <= TOPO_SCOPE_SYSTEM; sc++) {
			ck_assert_int_eq(topology__scope_cpus(t, c, sc, &cur), 0);
			ck_assert(CPU_ISSET(c, &cur));
			/* cpu within smt within cache within system (numa may be smaller than an LLC
			 * with sub-NUMA clustering, so it is only checked against system). */
			if (sc != TOPO_SCOPE_NUMA) {
				CPU_AND(&tmp, &prev, &cur);
				ck_assert(CPU_EQUAL(&tmp, &prev));
				prev = cur;
			}
		}
	}
	topology__free(t);
}
END_TEST

Suite *topology_suite(void)
{
	Suite *s = suite_create("topology");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_cpulist_parse);
	tcase_add_test(tc, test_scope_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("sysfs");
	tcase_add_test(tc, test_fake_8cpu);
	tcase_add_test(tc, test_fake_flat);
	tcase_add_test(tc, test_missing_root);
	tcase_add_test(tc, test_real_sys);
	tcase_add_test(tc, test_steal);
	suite_add_tcase(s, tc);
	return s;
}
