/* precord bench: measurements shaped like perf bench's, so the two can be compared side by side
 * (bench/run.sh prints the ratios), and the pause latency of --lossless per mechanism. */
#include "cmd/subcmd.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/cleanup.h"
#include "record/lossless/pauser.h"
#include "record/synthesize.h"

static void bench_usage(FILE *f)
{
	fprintf(f, "usage: precord bench synthesize [-t] [-s N] [-m N] [-I N] [-i N]\n"
		   "  -t, --mt             multi-threaded synthesis of every process (as perf's -t)\n"
		   "  -s, --min-threads N  fewest threads to try (default 1)\n"
		   "  -m, --max-threads N  most threads to try (default: online CPUs)\n"
		   "  -i, --single-iterations N  iterations for this process alone (default 10000)\n"
		   "  -I, --multi-iterations N   iterations for every process (default 10)\n");
}

static int bench_synthesize(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mt", no_argument, NULL, 't' },
		{ "min-threads", required_argument, NULL, 's' },
		{ "max-threads", required_argument, NULL, 'm' },
		{ "single-iterations", required_argument, NULL, 'i' },
		{ "multi-iterations", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct synth_bench_opts o = { 0 };
	bool threads = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ts:m:i:I:h", lo, NULL)) != -1) {
		char *end;
		unsigned long v = 0;

		if (c != 't' && c != 'h') {
			v = strtoul(optarg, &end, 10);
			if (*end || !v || v > 1000000) {
				fprintf(stderr, "precord bench synthesize: invalid number '%s' for -%c\n", optarg, c);
				return 2;
			}
		}
		switch (c) {
		case 't': threads = true; break;
		case 's': o.min_threads = v; break;
		case 'm': o.max_threads = v; break;
		case 'i': o.single_iterations = v; break;
		case 'I': o.multi_iterations = v; break;
		case 'h': bench_usage(stdout); return 0;
		default: bench_usage(stderr); return 2;
		}
	}
	if (synthesize__bench(stdout, threads, &o) < 0) {
		fprintf(stderr, "precord bench synthesize: failed: %m\n");
		return 1;
	}
	return 0;
}

/* ---- precord bench pause ------------------------------------------------------------------ */

static void pause_usage(FILE *f)
{
	fprintf(f, "usage: precord bench pause [-n CYCLES] [-w WORKERS] [-m MECH]\n"
		   "  -n, --cycles N    pauses measured per mechanism (default 200)\n"
		   "  -w, --workers N   busy processes in the target tree (default 2 per CPU)\n"
		   "  -m, --mechanism M cgroup2, cgroup1 or signals (default: each available)\n");
}

static __attribute__((noreturn)) void spin_forever(void)
{
	volatile uint64_t x = 0;

	for (;;)
		x++;
}

/* The target: a root held on a pipe until adopted, then forking `workers` spinning children
 * (the root spins too), all in one process group so that they can be ended together. Returns
 * the root's pid or -errno. */
static pid_t tree_start(struct pauser *p, int workers)
{
	int go[2];
	pid_t root;
	char c;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	root = fork();
	if (root < 0) {
		int e = errno;

		close(go[0]);
		close(go[1]);
		return -e;
	}
	if (root == 0) {
		close(go[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setpgid(0, 0);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < workers; i++)
			if (fork() == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				spin_forever();
			}
		spin_forever();
	}
	close(go[0]);
	setpgid(root, root); /* as the child does: whoever comes first */
	if (pauser__adopt(p, root) < 0 || write(go[1], "g", 1) != 1) {
		close(go[1]);
		kill(root, SIGKILL);
		waitpid(root, NULL, 0);
		return -ESRCH;
	}
	close(go[1]);
	return root;
}

/* Kill the tree and reap it: the workers were orphaned to us (a subreaper) when the root died.
 * Only the tree's process group is reaped, never the pauser's guardian. */
static void tree_end(pid_t root)
{
	kill(-root, SIGKILL);
	while (waitpid(-root, NULL, 0) > 0 || errno == EINTR)
		;
}

/* As pauser__measure_pause, but looking every ~20 us: its wait backs off from 20 us to 1 ms,
 * which rounds a 150 us pause up to 300. Sleeping between looks leaves the CPU to the tasks
 * that must still reach their stopping point. */
static int measure_pause(struct pauser *p, uint64_t *ret_ns)
{
	struct timespec nap = { 0, 20000 };
	uint64_t t0 = clock__ns();
	int r = pauser__pause(p);

	if (r < 0)
		return r;
	while ((r = pauser__wait_stopped(p, 0)) == -ETIMEDOUT) {
		if (clock__ns() - t0 > 1000000000ull)
			return r;
		nanosleep(&nap, NULL);
	}
	if (r < 0)
		return r;
	*ret_ns = clock__ns() - t0;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_us(const uint64_t *v, int n, double pct)
{
	int i = (int)(pct / 100.0 * (n - 1) + 0.5);

	return v[i] / 1000.0;
}

/* One row: N pause cycles with mechanism m on a fresh busy tree. Returns 0, 1 when the
 * mechanism is not available here, or -errno. */
static int pause_row(enum pause_mech m, const char *name, int cycles, int workers)
{
	struct pauser_opts o = { .mech = m };
	struct pauser *p = pauser__new_for_command(&o);
	_cleanup_free_ uint64_t *lat = calloc(cycles, sizeof(uint64_t));
	struct timespec run = { 0, 2000000 }, settle = { 0, 50000000 };
	pid_t root;
	int r = 0;

	if (!p) {
		printf("%-10s %8s   not available: %s\n", name, "-", strerror(errno));
		return 1;
	}
	if (!lat) {
		pauser__free(p);
		return -ENOMEM;
	}
	root = tree_start(p, workers);
	if (root < 0) {
		pauser__free(p);
		return root;
	}
	nanosleep(&settle, NULL);
	/* One cycle not counted: with signals it finds the workers in /proc. */
	for (int i = -1; i < cycles; i++) {
		uint64_t ns = 0;

		r = measure_pause(p, &ns);
		if (r < 0)
			break;
		if (i >= 0)
			lat[i] = ns;
		r = pauser__resume(p);
		if (r < 0)
			break;
		nanosleep(&run, NULL);
	}
	pauser__free(p);
	tree_end(root);
	if (r < 0)
		return r;
	qsort(lat, cycles, sizeof(*lat), cmp_u64);
	printf("%-10s %8d %8.0f %8.0f %8.0f %8.0f\n", name, cycles, pct_us(lat, cycles, 50),
	       pct_us(lat, cycles, 90), pct_us(lat, cycles, 99), lat[cycles - 1] / 1000.0);
	return 0;
}

static int bench_pause(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "cycles", required_argument, NULL, 'n' },
		{ "workers", required_argument, NULL, 'w' },
		{ "mechanism", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const struct { enum pause_mech m; const char *name; } mechs[] = {
		{ PAUSE_MECH_CGROUP2, "cgroup2" },
		{ PAUSE_MECH_CGROUP1, "cgroup1" },
		{ PAUSE_MECH_SIGNALS, "signals" },
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int cycles = 200, workers = 2 * (ncpu > 0 ? (int)ncpu : 1), c, fails = 0;
	const char *only = NULL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:w:m:h", lo, NULL)) != -1) {
		char *end;
		long v;

		switch (c) {
		case 'n':
		case 'w':
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 100000) {
				fprintf(stderr, "precord bench pause: invalid number '%s' for -%c\n", optarg, c);
				return 2;
			}
			if (c == 'n')
				cycles = (int)v;
			else
				workers = (int)v;
			break;
		case 'm':
			only = optarg;
			break;
		case 'h':
			pause_usage(stdout);
			return 0;
		default:
			pause_usage(stderr);
			return 2;
		}
	}
	if (only && strcmp(only, "cgroup2") && strcmp(only, "cgroup1") && strcmp(only, "signals")) {
		fprintf(stderr, "precord bench pause: unknown mechanism '%s': expected cgroup2, cgroup1 or signals\n", only);
		return 2;
	}
	/* The orphaned workers of a tree come to us, to be reaped. We stay at normal priority:
	 * the request costs the same at any, and a real-time observer waking every few
	 * microseconds keeps the target's runnable tasks from the CPU they need to stop on
	 * (on two CPUs it turned a 0.15 ms pause into 2 ms). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	printf("# pause latency, request -> the kernel reports every task of the target stopped\n");
	printf("# target: a root and %d spinning workers; %d cycles, 2 ms running between pauses\n",
	       workers, cycles);
	printf("# %-8s %8s %8s %8s %8s %8s   (microseconds)\n", "mechanism", "cycles", "p50",
	       "p90", "p99", "max");
	for (size_t i = 0; i < ARRAY_SIZE(mechs); i++) {
		int r;

		if (only && strcmp(only, mechs[i].name))
			continue;
		r = pause_row(mechs[i].m, mechs[i].name, cycles, workers);
		if (r < 0) {
			fprintf(stderr, "precord bench pause: %s: %s\n", mechs[i].name, strerror(-r));
			fails++;
		}
	}
	return fails ? 1 : 0;
}

int subcmd_bench(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "synthesize"))
		return bench_synthesize(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "pause"))
		return bench_pause(argc - 1, argv + 1);
	fprintf(stderr, "usage: precord bench synthesize [-t]\n"
			"       precord bench pause [-n CYCLES] [-w WORKERS] [-m MECH]\n");
	return 2;
}
