/* Tests of the --lossless backstop against the real kernel: a forked child that spins (and
 * forks a spinning grandchild), sampled by cpu-clock on every CPU with inherited events: while
 * disarmed the samples flow and nobody is stopped; armed, the kernel stops the child's thread
 * group at a following sample, with only a few samples written after the arm; disarmed again it
 * runs (SIGCONT). The grandchild, another thread group, is never stopped by the backstop when
 * the owner is the child's process; with the child's process group as the owner (the child
 * leads one) both are stopped and continued together. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "record/lossless/backstop.h"

#define MAX_CPUS 64
#define PAGES 64
/* How long what must come may take: the samples that wake a ring need CPU time the child gets
 * slowly on a busy machine. Only a condition that never comes waits this long. */
#define WAIT_MS 60000

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The state letter of process pid in /proc/pid/stat. */
static char state(pid_t pid)
{
	char path[64], buf[512], *c;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	c = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return c && c[1] ? c[2] : 0;
}

static bool wait_state(pid_t pid, bool stopped, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	do {
		char s = state(pid);

		if ((s == 'T' || s == 't') == stopped)
			return true;
		usleep(200);
	} while (now_ms() < end);
	return false;
}

struct ev {
	int n, fds[MAX_CPUS];
	struct perf_event_mmap_page *pg[MAX_CPUS];
};

static uint64_t written(const struct ev *e)
{
	uint64_t sum = 0;

	for (int i = 0; i < e->n; i++)
		sum += __atomic_load_n(&e->pg[i]->data_head, __ATOMIC_ACQUIRE);
	return sum;
}

/* Consume everything, so that no ring is full. */
static void drain(struct ev *e)
{
	for (int i = 0; i < e->n; i++)
		__atomic_store_n(&e->pg[i]->data_tail, __atomic_load_n(&e->pg[i]->data_head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
}

static int open_events(struct ev *e, pid_t pid)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	e->n = 0;
	for (int c = 0; c < ncpu && c < MAX_CPUS; c++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
			.size = sizeof(a), .sample_freq = 10000, .freq = 1,
			.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID, .inherit = 1,
			.watermark = 1, .wakeup_watermark = PAGES * 4096 / 4,
		};
		int fd = (int)syscall(SYS_perf_event_open, &a, pid, c, -1, PERF_FLAG_FD_CLOEXEC);
		void *m;

		if (fd < 0)
			return -errno;
		m = mmap(NULL, (PAGES + 1) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ck_assert_ptr_ne(m, MAP_FAILED);
		e->fds[e->n] = fd;
		e->pg[e->n++] = m;
	}
	return 0;
}

static void close_events(struct ev *e)
{
	for (int i = 0; i < e->n; i++) {
		munmap(e->pg[i], (PAGES + 1) * 4096);
		close(e->fds[i]);
	}
}

static volatile int spin_sink;

static void stops_at_next_sample(bool group)
{
	int go[2], gc[2];
	struct ev e;
	pid_t child, grandchild, owners[MAX_CPUS];
	struct backstop *b;
	uint64_t before, end;

	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(gc), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (!child) {
		char x;
		pid_t g;

		if (group)
			setpgid(0, 0);
		if (read(go[0], &x, 1) != 1)
			_exit(1);
		g = fork();
		if (!g)
			for (;;)
				spin_sink++;
		if (write(gc[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		for (;;)
			spin_sink++;
	}
	if (open_events(&e, child) < 0) {
		fprintf(stderr, "backstop: cannot open cpu-clock events (%s), skipped\n", strerror(errno));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return;
	}
	if (group)
		setpgid(child, child);
	for (int i = 0; i < e.n; i++)
		owners[i] = group ? -child : child;
	b = backstop__new(e.fds, owners, (size_t)e.n);
	ck_assert_ptr_nonnull(b);
	ck_assert(!backstop__armed(b));
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	ck_assert_int_eq(read(gc[0], &grandchild, sizeof(grandchild)), sizeof(grandchild));

	/* disarmed: a hundred samples come and nobody stops */
	before = written(&e);
	end = now_ms() + WAIT_MS;
	while (written(&e) < before + 100 * 24 && now_ms() < end) {
		drain(&e);
		usleep(1000);
	}
	ck_assert_uint_ge(written(&e), before + 100 * 24);
	ck_assert(!wait_state(child, true, 0));
	ck_assert(!wait_state(grandchild, true, 0));

	/* armed: the kernel stops the child at one of its next samples */
	for (int round = 0; round < 3; round++) {
		drain(&e);
		before = written(&e);
		ck_assert_int_eq(backstop__arm(b), 0);
		ck_assert(backstop__armed(b));
		ck_assert_msg(wait_state(child, true, WAIT_MS), "round %d: the child was not stopped", round);
		if (group) /* the group: the grandchild too */
			ck_assert_msg(wait_state(grandchild, true, WAIT_MS), "round %d: the grandchild was not stopped", round);
		else /* its samples go on, and signal the child again, which is harmless */
			ck_assert(!wait_state(grandchild, true, 0));
		ck_assert_int_eq(backstop__disarm(b, true), 0);
		ck_assert(!backstop__armed(b));
		ck_assert_msg(wait_state(child, false, WAIT_MS), "round %d: the child was not continued", round);
		ck_assert_msg(wait_state(grandchild, false, WAIT_MS), "round %d: the grandchild was not continued", round);
	}
	ck_assert_uint_eq(backstop__arms(b), 3);
	/* disarmed again: it keeps running while samples come */
	drain(&e);
	before = written(&e);
	end = now_ms() + WAIT_MS;
	while (written(&e) < before + 50 * 24 && now_ms() < end) {
		drain(&e);
		usleep(1000);
	}
	ck_assert(!wait_state(child, true, 0));
	backstop__free(b);
	close_events(&e);
	kill(grandchild, SIGKILL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

START_TEST(test_kernel_stops_at_next_sample)
{
	stops_at_next_sample(false);
}
END_TEST

START_TEST(test_kernel_stops_the_group)
{
	stops_at_next_sample(true);
}
END_TEST

START_TEST(test_bad_arguments)
{
	int fd = 0;
	pid_t owner = 0;

	errno = 0;
	ck_assert_ptr_null(backstop__new(&fd, &owner, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(backstop__new(&fd, &owner, 1));
	ck_assert_int_eq(errno, EINVAL);
	backstop__free(NULL);
}
END_TEST

Suite *backstop_suite(void)
{
	Suite *s = suite_create("backstop");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_kernel_stops_at_next_sample);
	tcase_add_test(tc, test_kernel_stops_the_group);
	tcase_add_test(tc, test_bad_arguments);
	suite_add_tcase(s, tc);
	return s;
}
