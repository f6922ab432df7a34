/* Tests for src/lib/workqueue: parallel_for coverage (every index exactly once) across sizes and
 * chunkings, under contention from concurrent callers and with all but one worker stuck in a
 * long-lived item, per-worker submit order, placement by scope (real affinity on this machine,
 * computed sets on a fake topology), thread names, and freeing with work still queued. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/topology.h"
#include "lib/workqueue.h"

static const char *data_path(const char *name)
{
	static char buf[PATH_MAX];
	const char *top = getenv("PRECORD_TOP");

	snprintf(buf, sizeof(buf), "%s/tests/data/%s", top ? top : ".", name);
	return buf;
}

/* Check's passing assertions each write to a pipe, so hot loops count and assert once. */
struct cover {
	size_t n;
	atomic_uchar *hits;
	atomic_uint out_of_range;
};

static void cover_fn(size_t i, void *ctx)
{
	struct cover *c = ctx;

	if (i >= c->n) {
		atomic_fetch_add(&c->out_of_range, 1);
		return;
	}
	atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
}

/* The first index not hit exactly once, or n. */
static size_t first_bad(const struct cover *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->hits[i] != 1)
			return i;
	return c->out_of_range ? 0 : c->n;
}

static void check_cover(struct wq *wq, size_t n, size_t chunk)
{
	struct cover c = { .n = n };
	size_t bad;

	c.hits = calloc(n ? n : 1, 1);
	ck_assert_ptr_nonnull(c.hits);
	ck_assert_int_eq(wq__parallel_for(wq, n, chunk, cover_fn, &c), 0);
	bad = first_bad(&c);
	ck_assert_msg(bad == n, "n=%zu chunk=%zu: index %zu ran %u times, %u out of range", n,
		      chunk, bad, bad < n ? (unsigned int)c.hits[bad] : 0, c.out_of_range);
	free(c.hits);
}

START_TEST(test_pf_cover)
{
	struct wq_opts o = { .nr_workers = 3, .name = "pftest" };
	struct wq *wq = wq__new(&o);
	const size_t sizes[] = { 0, 1, 7, 1000000 };
	const size_t chunks[] = { 0, 1, 3, 7, 64, 1000001 };

	ck_assert_ptr_nonnull(wq);
	ck_assert_uint_eq(wq__nr_workers(wq), 3);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++)
			check_cover(wq, sizes[s], chunks[k]);
	wq__free(wq);
}
END_TEST

START_TEST(test_pf_errors)
{
	struct wq_opts o = { .nr_workers = 1 };
	struct wq *wq = wq__new(&o);
	struct cover c = { .n = 0 };

	ck_assert_ptr_nonnull(wq);
	ck_assert_int_eq(wq__parallel_for(wq, 10, 0, NULL, NULL), -EINVAL);
	ck_assert_int_eq(wq__parallel_for(wq, SIZE_MAX, 0, cover_fn, &c), -EINVAL);
	ck_assert_int_eq(wq__parallel_for(NULL, 1, 0, cover_fn, &c), -EINVAL);
	wq__free(wq);
}
END_TEST

/* Records which threads ran chunks, to show workers really take part. */
static pthread_t main_thread;
static atomic_uint ran_on_worker;

static void spin_fn(size_t i, void *ctx)
{
	volatile unsigned int x = 0;

	for (int k = 0; k < 2000; k++)
		x += k;
	if (!pthread_equal(pthread_self(), main_thread))
		atomic_fetch_add(&ran_on_worker, 1);
	cover_fn(i, ctx);
}

START_TEST(test_pf_workers_help)
{
	struct wq_opts o = { .nr_workers = 2 };
	struct wq *wq = wq__new(&o);
	struct cover c = { .n = 20000 };

	ck_assert_ptr_nonnull(wq);
	main_thread = pthread_self();
	atomic_store(&ran_on_worker, 0);
	c.hits = calloc(c.n, 1);
	ck_assert_int_eq(wq__parallel_for(wq, c.n, 16, spin_fn, &c), 0);
	ck_assert_uint_eq(first_bad(&c), c.n);
	ck_assert_uint_gt(atomic_load(&ran_on_worker), 0);
	free(c.hits);
	wq__free(wq);
}
END_TEST

struct caller {
	struct wq *wq;
	int rounds;
	int failures;
};

static void *caller_main(void *arg)
{
	struct caller *cl = arg;

	for (int r = 0; r < cl->rounds; r++) {
		struct cover c = { .n = 5000 + r * 13 };

		c.hits = calloc(c.n, 1);
		if (wq__parallel_for(cl->wq, c.n, (size_t)r % 5, cover_fn, &c) != 0)
			cl->failures++;
		if (first_bad(&c) != c.n)
			cl->failures++;
		free(c.hits);
	}
	return NULL;
}

START_TEST(test_pf_concurrent_callers)
{
	struct wq_opts o = { .nr_workers = 3 };
	struct wq *wq = wq__new(&o);
	struct caller callers[4];
	pthread_t th[4];

	ck_assert_ptr_nonnull(wq);
	for (int i = 0; i < 4; i++) {
		callers[i] = (struct caller){ .wq = wq, .rounds = 50 };
		ck_assert_int_eq(pthread_create(&th[i], NULL, caller_main, &callers[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(callers[i].failures, 0);
	}
	wq__free(wq);
}
END_TEST

/* A long-lived item: runs until told to stop, like a reader loop. */
struct longlived {
	atomic_int started;
	atomic_int stop;
};

static void longlived_fn(void *arg)
{
	struct longlived *l = arg;

	atomic_fetch_add(&l->started, 1);
	while (!atomic_load(&l->stop))
		usleep(1000);
}

/* Until n items run (the tcase's timeout bounds it: a busy machine may take its time). */
static void wait_started(struct longlived *l, int n)
{
	while (atomic_load(&l->started) < n)
		usleep(1000);
	ck_assert_int_eq(atomic_load(&l->started), n);
}

START_TEST(test_pf_busy_workers)
{
	struct wq_opts o = { .nr_workers = 4 };
	struct wq *wq = wq__new(&o);
	struct longlived l = { 0 };

	ck_assert_ptr_nonnull(wq);
	/* Workers 0..2 are stuck for the whole test; only worker 3 and the caller are free. */
	for (unsigned int i = 0; i < 3; i++)
		ck_assert_int_eq(wq__submit(wq, i, longlived_fn, &l), 0);
	wait_started(&l, 3);
	main_thread = pthread_self();
	atomic_store(&ran_on_worker, 0);
	check_cover(wq, 1000000, 0);
	check_cover(wq, 7, 1);
	{
		struct cover c = { .n = 20000 };

		c.hits = calloc(c.n, 1);
		ck_assert_int_eq(wq__parallel_for(wq, c.n, 8, spin_fn, &c), 0);
		ck_assert_uint_eq(first_bad(&c), c.n);
		free(c.hits);
	}
	/* Now all four busy: the caller alone must finish. */
	ck_assert_int_eq(wq__submit(wq, 3, longlived_fn, &l), 0);
	wait_started(&l, 4);
	check_cover(wq, 100000, 0);
	atomic_store(&l.stop, 1);
	wq__wait_idle(wq);
	wq__free(wq);
}
END_TEST

/* parallel_for called from inside a worker item and from inside fn. */
struct nested {
	struct wq *wq;
	atomic_uint total;
	int err;
};

static void inner_fn(size_t i, void *ctx)
{
	struct nested *ns = ctx;

	atomic_fetch_add(&ns->total, (unsigned int)i + 1);
}

static void outer_fn(size_t i, void *ctx)
{
	struct nested *ns = ctx;

	if (wq__parallel_for(ns->wq, 10, 1, inner_fn, ns) != 0)
		ns->err = 1;
}

static void item_calls_pf(void *arg)
{
	struct nested *ns = arg;

	if (wq__parallel_for(ns->wq, 8, 1, outer_fn, ns) != 0)
		ns->err = 1;
}

START_TEST(test_pf_nested)
{
	struct wq_opts o = { .nr_workers = 2 };
	struct nested ns = { 0 };

	ns.wq = wq__new(&o);
	ck_assert_ptr_nonnull(ns.wq);
	ck_assert_int_eq(wq__submit(ns.wq, 0, item_calls_pf, &ns), 0);
	wq__wait_idle(ns.wq);
	ck_assert_int_eq(ns.err, 0);
	/* 8 outer indexes, each summing 1..10 */
	ck_assert_uint_eq(atomic_load(&ns.total), 8 * 55);
	wq__free(ns.wq);
}
END_TEST

/* Submit: items on one worker run in submission order, on that worker's thread. */
struct order {
	pthread_mutex_t lock;
	int seq[3][200];
	int len[3];
	pthread_t thread[3];
	int wrong_thread;
};

struct order_item {
	struct order *o;
	int worker, value;
};

static void order_fn(void *arg)
{
	struct order_item *it = arg;
	struct order *o = it->o;

	pthread_mutex_lock(&o->lock);
	if (o->len[it->worker] == 0)
		o->thread[it->worker] = pthread_self();
	else if (!pthread_equal(o->thread[it->worker], pthread_self()))
		o->wrong_thread++;
	o->seq[it->worker][o->len[it->worker]++] = it->value;
	pthread_mutex_unlock(&o->lock);
}

START_TEST(test_submit_order)
{
	struct wq_opts opts = { .nr_workers = 3 };
	struct wq *wq = wq__new(&opts);
	static struct order o;
	static struct order_item items[600];

	ck_assert_ptr_nonnull(wq);
	memset(&o, 0, sizeof(o));
	pthread_mutex_init(&o.lock, NULL);
	for (int v = 0; v < 200; v++)
		for (int w = 0; w < 3; w++) {
			struct order_item *it = &items[v * 3 + w];

			*it = (struct order_item){ .o = &o, .worker = w, .value = v };
			/* worker + 3 also addresses worker: i % nr_workers */
			ck_assert_int_eq(wq__submit(wq, w + (v & 1) * 3, order_fn, it), 0);
		}
	wq__wait_idle(wq);
	for (int w = 0; w < 3; w++) {
		ck_assert_int_eq(o.len[w], 200);
		for (int v = 0; v < 200; v++)
			ck_assert_int_eq(o.seq[w][v], v);
	}
	ck_assert_int_eq(o.wrong_thread, 0);
	ck_assert(!pthread_equal(o.thread[0], o.thread[1]));
	ck_assert_int_eq(wq__submit(wq, 0, NULL, NULL), -EINVAL);
	wq__free(wq);
}
END_TEST

/* Free with work pending: every queued item still runs. */
static atomic_int pending_ran;

static void slow_fn(void *arg)
{
	usleep(20000);
	atomic_fetch_add(&pending_ran, 1);
}

static void count_fn(void *arg)
{
	atomic_fetch_add(&pending_ran, 1);
}

START_TEST(test_free_pending)
{
	struct wq_opts o = { .nr_workers = 2 };
	struct wq *wq = wq__new(&o);

	ck_assert_ptr_nonnull(wq);
	atomic_store(&pending_ran, 0);
	ck_assert_int_eq(wq__submit(wq, 0, slow_fn, NULL), 0);
	ck_assert_int_eq(wq__submit(wq, 1, slow_fn, NULL), 0);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(wq__submit(wq, i, count_fn, NULL), 0);
	wq__free(wq);
	ck_assert_int_eq(atomic_load(&pending_ran), 102);
	wq__free(NULL);
	wq__wait_idle(NULL);
}
END_TEST

/* Inside items: what the worker's affinity really is, and its name. */
struct probe {
	cpu_set_t affinity;
	char name[16];
	int rc;
};

static void probe_fn(void *arg)
{
	struct probe *p = arg;

	p->rc = sched_getaffinity(0, sizeof(p->affinity), &p->affinity);
	pthread_getname_np(pthread_self(), p->name, sizeof(p->name));
}

static void probe_all(struct wq *wq, struct probe *probes)
{
	for (unsigned int i = 0; i < wq__nr_workers(wq); i++)
		ck_assert_int_eq(wq__submit(wq, i, probe_fn, &probes[i]), 0);
	wq__wait_idle(wq);
}

START_TEST(test_place_real_cpu)
{
	struct topology *t = topology__read("/sys");
	struct wq_opts o = { .scope = TOPO_SCOPE_CPU, .strict = true, .name = "plc" };
	struct probe probes[CPU_SETSIZE];
	const cpu_set_t *online;
	struct wq *wq;
	int k = 0;

	ck_assert_ptr_nonnull(t);
	online = topology__online(t);
	wq = wq__new(&o);
	ck_assert_ptr_nonnull(wq);
	ck_assert_uint_eq(wq__nr_workers(wq), CPU_COUNT(online));
	probe_all(wq, probes);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		cpu_set_t want, got;
		char name[16];

		if (!CPU_ISSET(c, online))
			continue;
		CPU_ZERO(&want);
		CPU_SET(c, &want);
		ck_assert_int_eq(probes[k].rc, 0);
		ck_assert_msg(CPU_EQUAL(&probes[k].affinity, &want), "worker %d not pinned to cpu %d",
			      k, c);
		ck_assert_int_eq(wq__worker_cpus(wq, k, &got), 0);
		ck_assert(CPU_EQUAL(&got, &want));
		snprintf(name, sizeof(name), "plc/%d", k);
		ck_assert_str_eq(probes[k].name, name);
		k++;
	}
	cpu_set_t dummy;
	ck_assert_int_eq(wq__worker_cpus(wq, k, &dummy), -EINVAL);
	wq__free(wq);
	topology__free(t);
}
END_TEST

START_TEST(test_place_real_system)
{
	struct topology *t = topology__read("/sys");
	struct wq_opts o = { .nr_workers = 3, .scope = TOPO_SCOPE_SYSTEM, .strict = true };
	struct probe probes[3];
	struct wq *wq;

	ck_assert_ptr_nonnull(t);
	wq = wq__new(&o);
	ck_assert_ptr_nonnull(wq);
	probe_all(wq, probes);
	for (int i = 0; i < 3; i++) {
		char name[16];

		ck_assert(CPU_EQUAL(&probes[i].affinity, topology__online(t)));
		snprintf(name, sizeof(name), "precord/%d", i);
		ck_assert_str_eq(probes[i].name, name);
	}
	wq__free(wq);
	topology__free(t);
}
END_TEST

/* opts->cpus on the real machine: one CPU only, every worker there. */
START_TEST(test_place_real_cpus_mask)
{
	struct topology *t = topology__read("/sys");
	cpu_set_t only;
	int last = -1;
	struct wq_opts o = { .scope = TOPO_SCOPE_SYSTEM, .strict = true, .cpus = &only };
	struct probe probes[2];
	struct wq *wq;

	ck_assert_ptr_nonnull(t);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, topology__online(t)))
			last = c;
	CPU_ZERO(&only);
	CPU_SET(last, &only);
	wq = wq__new(&o);
	ck_assert_ptr_nonnull(wq);
	ck_assert_uint_eq(wq__nr_workers(wq), 1);
	probe_all(wq, probes);
	ck_assert(CPU_EQUAL(&probes[0].affinity, &only));
	wq__free(wq);

	/* No online CPU in the mask. */
	CPU_ZERO(&only);
	CPU_SET(CPU_SETSIZE - 1, &only);
	errno = 0;
	ck_assert_ptr_null(wq__new(&o));
	ck_assert_int_eq(errno, EINVAL);
	topology__free(t);
}
END_TEST

static cpu_set_t mkset(const char *list)
{
	cpu_set_t s;

	ck_assert_int_eq(cpulist__parse(list, &s), 0);
	return s;
}

static void expect_sets(const struct topology *t, enum topo_scope scope, const cpu_set_t *cpus,
			unsigned int nr, const char *const *want)
{
	/* Not strict: the fake CPUs 4-6 may not exist here, so setting affinity can fail. */
	struct wq_opts o = { .nr_workers = nr, .scope = scope, .topo = t, .cpus = cpus };
	struct wq *wq = wq__new(&o);

	ck_assert_ptr_nonnull(wq);
	ck_assert_uint_eq(wq__nr_workers(wq), nr);
	for (unsigned int i = 0; i < nr; i++) {
		cpu_set_t got, w = mkset(want[i]);

		ck_assert_int_eq(wq__worker_cpus(wq, i, &got), 0);
		ck_assert_msg(CPU_EQUAL(&got, &w), "scope %s worker %u: want %s (count %d got %d)",
			      topo_scope__name(scope), i, want[i], CPU_COUNT(&w), CPU_COUNT(&got));
	}
	wq__free(wq);
}

START_TEST(test_place_fake)
{
	struct topology *t = topology__read(data_path("sysfs-8cpu"));
	cpu_set_t odd = mkset("1,3,5,7");

	ck_assert_ptr_nonnull(t);
	/* Online are 0-6; worker i on the i-th online CPU. */
	expect_sets(t, TOPO_SCOPE_CPU, NULL, 7,
		    (const char *const[]){ "0", "1", "2", "3", "4", "5", "6" });
	expect_sets(t, TOPO_SCOPE_SMT, NULL, 7,
		    (const char *const[]){ "0,4", "1,5", "2,6", "3", "0,4", "1,5", "2,6" });
	expect_sets(t, TOPO_SCOPE_CACHE, NULL, 4,
		    (const char *const[]){ "0-1,4-5", "0-1,4-5", "2-3,6", "2-3,6" });
	expect_sets(t, TOPO_SCOPE_NUMA, NULL, 3,
		    (const char *const[]){ "0-1,4-5", "0-1,4-5", "2-3,6" });
	expect_sets(t, TOPO_SCOPE_SYSTEM, NULL, 2, (const char *const[]){ "0-6", "0-6" });
	/* More workers than CPUs: placement wraps round. */
	expect_sets(t, TOPO_SCOPE_CPU, NULL, 9,
		    (const char *const[]){ "0", "1", "2", "3", "4", "5", "6", "0", "1" });
	/* opts->cpus: only odd CPUs (7 offline), scopes cut down to them. */
	expect_sets(t, TOPO_SCOPE_CPU, &odd, 3, (const char *const[]){ "1", "3", "5" });
	expect_sets(t, TOPO_SCOPE_SMT, &odd, 3, (const char *const[]){ "1,5", "3", "1,5" });
	expect_sets(t, TOPO_SCOPE_NUMA, &odd, 3, (const char *const[]){ "1,5", "3", "1,5" });
	{
		/* nr_workers 0: one per CPU of the mask */
		struct wq_opts o = { .scope = TOPO_SCOPE_CPU, .topo = t, .cpus = &odd };
		struct wq *wq = wq__new(&o);

		ck_assert_ptr_nonnull(wq);
		ck_assert_uint_eq(wq__nr_workers(wq), 3);
		wq__free(wq);
	}
	{
		struct wq_opts o = { .scope = (enum topo_scope)17, .topo = t };

		errno = 0;
		ck_assert_ptr_null(wq__new(&o));
		ck_assert_int_eq(errno, EINVAL);
	}
	topology__free(t);
}
END_TEST

Suite *workqueue_suite(void)
{
	Suite *s = suite_create("workqueue");
	TCase *tc = tcase_create("parallel_for");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_pf_cover);
	tcase_add_test(tc, test_pf_errors);
	tcase_add_test(tc, test_pf_workers_help);
	tcase_add_test(tc, test_pf_concurrent_callers);
	tcase_add_test(tc, test_pf_busy_workers);
	tcase_add_test(tc, test_pf_nested);
	suite_add_tcase(s, tc);

	tc = tcase_create("submit");
	tcase_add_test(tc, test_submit_order);
	tcase_add_test(tc, test_free_pending);
	suite_add_tcase(s, tc);

	tc = tcase_create("placement");
	tcase_add_test(tc, test_place_real_cpu);
	tcase_add_test(tc, test_place_real_system);
	tcase_add_test(tc, test_place_real_cpus_mask);
	tcase_add_test(tc, test_place_fake);
	suite_add_tcase(s, tc);
	return s;
}
