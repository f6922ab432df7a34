/* backstop_reaction: what reaches the rings after a --lossless pause is requested, per way of
 * pausing. A child with THREADS spinning threads (one per CPU by default) is sampled by
 * cpu-clock at FREQ Hz with 8 KiB user stacks (precord's DWARF sample), in a cgroup2 freezer
 * cgroup of the pauser's; each cycle drains the rings, requests the pause, waits until the
 * kernel reports the child stopped, and counts the bytes written into the rings meanwhile:
 *   freezer   the cgroup2 freezer alone (pauser__pause);
 *   backstop  the kernel-side SIGSTOP at the next sample alone (backstop__arm);
 *   both      the two, backstop first, as precord --lossless does with PRECORD_BACKSTOP=1.
 * Prints, per way, the bytes after the request (p50, p99, max) and the time until stopped.
 *
 * usage: backstop_reaction [CYCLES [FREQ [THREADS]]]   (defaults 200, 20000, nr CPUs)
 * exit 0, 2 on error (no cgroup2 freezer, no perf events), 77 when not possible here. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "lib/clock.h"
#include "record/lossless/backstop.h"
#include "record/lossless/pauser.h"

#define MAX_CPUS 64
#define PAGES 512

static volatile int sink;

static void *spin(void *arg)
{
	for (;;)
		sink++;
	return arg;
}

static void child_main(int go, int threads)
{
	pthread_t t;
	char x;

	if (read(go, &x, 1) != 1)
		_exit(1);
	for (int i = 1; i < threads; i++)
		pthread_create(&t, NULL, spin, NULL);
	spin(NULL);
}

/* Every thread of pid stopped (T/t)? */
static bool all_stopped(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0, stopped = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		char sp[96 + sizeof(de->d_name)], st[512], *c;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(sp, sizeof(sp), "%s/%s/stat", path, de->d_name);
		f = fopen(sp, "re");
		if (!f)
			continue;
		c = fgets(st, sizeof(st), f) ? strrchr(st, ')') : NULL;
		fclose(f);
		n++;
		stopped += c && (c[2] == 'T' || c[2] == 't');
	}
	if (d)
		closedir(d);
	return n && n == stopped;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int cycles = argc > 1 ? atoi(argv[1]) : 200, freq = argc > 2 ? atoi(argv[2]) : 20000;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), threads = argc > 3 ? atoi(argv[3]) : ncpu;
	struct pauser_opts po = { .mech = PAUSE_MECH_CGROUP2 };
	struct perf_event_mmap_page *pg[MAX_CPUS];
	int fds[MAX_CPUS], go[2], n = 0;
	pid_t child, owners[MAX_CPUS];
	struct pauser *p;
	struct backstop *b;
	uint64_t *bytes = calloc(cycles, sizeof(uint64_t)), *ns = calloc(cycles, sizeof(uint64_t));

	p = pauser__new_for_command(&po);
	if (!p) {
		fprintf(stderr, "backstop_reaction: no cgroup2 freezer here: %s\n", strerror(errno));
		return 77;
	}
	if (pipe(go) < 0 || !bytes || !ns)
		return 2;
	child = fork();
	if (!child)
		child_main(go[0], threads);
	if (pauser__adopt(p, child) < 0)
		return 2;
	for (int c = 0; c < ncpu && c < MAX_CPUS; c++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK, .size = sizeof(a),
			.sample_freq = (uint64_t)freq, .freq = 1, .inherit = 1,
			.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
			.sample_regs_user = 0xff0fff, .sample_stack_user = 8192,
			.watermark = 1, .wakeup_watermark = PAGES * 4096 / 4, .context_switch = 1,
		};

		fds[n] = (int)syscall(SYS_perf_event_open, &a, child, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[n] < 0) {
			fprintf(stderr, "backstop_reaction: perf_event_open: %s\n", strerror(errno));
			kill(child, SIGKILL);
			return 77;
		}
		pg[n] = mmap(NULL, (PAGES + 1) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[n], 0);
		if (pg[n] == MAP_FAILED)
			return 2;
		owners[n++] = child;
	}
	b = backstop__new(fds, owners, (size_t)n);
	if (!b)
		return 2;
	if (write(go[1], "x", 1) != 1)
		return 2;
	usleep(100000);
	printf("# %d cycles, %d threads spinning on %d CPUs, cpu-clock %d Hz, 8 KiB stacks\n",
	       cycles, threads, ncpu, freq);
	printf("# way bytes_p50 bytes_p99 bytes_max stopped_us_p50 stopped_us_p99 stopped_us_max\n");
	for (int way = 0; way < 3; way++) {
		const char *name[] = { "freezer", "backstop", "both" };

		for (int k = 0; k < cycles; k++) {
			uint64_t h0 = 0, h1 = 0, t0;

			for (int i = 0; i < n; i++) {
				pg[i]->data_tail = __atomic_load_n(&pg[i]->data_head, __ATOMIC_ACQUIRE);
				h0 += pg[i]->data_tail;
			}
			t0 = clock__ns();
			if (way != 0)
				backstop__arm(b);
			if (way != 1)
				pauser__pause(p);
			/* the freezer: the kernel reports the cgroup frozen (frozen tasks are
			 * not in state T); the backstop: every thread in T */
			while (!(way != 1 && pauser__wait_stopped(p, 0) == 0) &&
			       !(way != 0 && all_stopped(child)))
				;
			ns[k] = clock__ns() - t0;
			for (int i = 0; i < n; i++)
				h1 += __atomic_load_n(&pg[i]->data_head, __ATOMIC_ACQUIRE);
			bytes[k] = h1 - h0;
			backstop__disarm(b, false);
			pauser__resume(p);
			backstop__cont(b);
			usleep(2000);
		}
		qsort(bytes, cycles, sizeof(*bytes), cmp);
		qsort(ns, cycles, sizeof(*ns), cmp);
		printf("%s %llu %llu %llu %llu %llu %llu\n", name[way],
		       (unsigned long long)bytes[cycles / 2], (unsigned long long)bytes[cycles * 99 / 100],
		       (unsigned long long)bytes[cycles - 1], (unsigned long long)ns[cycles / 2] / 1000,
		       (unsigned long long)ns[cycles * 99 / 100] / 1000, (unsigned long long)ns[cycles - 1] / 1000);
		fflush(stdout);
	}
	backstop__free(b);
	kill(child, SIGKILL);
	pauser__free(p);
	waitpid(child, NULL, 0);
	return 0;
}
