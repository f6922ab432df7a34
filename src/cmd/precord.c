/* precord: the command-line recorder. Parses options into a record session, shows a status line
 * while recording, prints the closing summary and exits with the command's status (or one of
 * the documented codes of its own). All error reporting to the user happens here. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/human.h"
#include "perf/buildid_cache.h"
#include "record/record.h"
#include "cmd/cli.h"
#include "cmd/subcmd.h"

/* Exit codes of precord's own (see man/precord.1, EXIT STATUS). */
enum {
	EXIT_USAGE = 2,       /* bad options: nothing was started */
	EXIT_LOSSLESS = 124,  /* --lossless and events were lost anyway */
	EXIT_FAIL = 125,      /* precord failed while setting up or recording */
	EXIT_NOEXEC = 126,    /* the command could not be executed */
	EXIT_NOTFOUND = 127,  /* the command was not found */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static bool quiet, verbose;

static void usage(FILE *f)
{
	fprintf(f,
"usage: precord [options] [--] COMMAND [ARGS...]   record a command\n"
"       precord [options] -p PID[,PID...]          record running processes\n"
"       precord [options] -a [-C CPUS]             record the whole system\n"
"       precord bench synthesize [-t]               measure /proc synthesis\n"
"       precord bench pause [-n N] [-m MECH]         measure --lossless pause latency\n"
"       precord ctl status|rotate|record ...        talk to precordd (precord ctl --help)\n"
"\n"
"  -o, --output FILE          write FILE (default perf.data; an old one becomes FILE.old)\n"
"  -e, --event EVENT[,...]    events to sample (default cycles; cpu-clock when the\n"
"                             machine has no hardware PMU). perf names, libpfm4 names\n"
"                             or tracepoints (subsystem:event, sampled at every hit)\n"
"      --filter FILTER        tracepoint filter for the last -e event (perf's syntax)\n"
"  -F, --freq HZ              samples per second (default 4000)\n"
"  -c, --count PERIOD         sample every PERIOD events instead of -F\n"
"  -g                         record call graphs (the default, dwarf)\n"
"      --call-graph MODE      dwarf[,SIZE] (default dwarf,8192), fp or none\n"
"  -m, --mmap-pages N         ring buffer pages per CPU, a power of two, or a size\n"
"                             such as 512K or 4M (default 2M with dwarf, else 512K;\n"
"                             --lossless: as large as the settings and the pause,\n"
"                             timed at start, need; too small a -m is refused)\n"
"  -z, --compression-level[=N]  zstd level 1-22 (on by default at 1)\n"
"      --no-compress          write records uncompressed\n"
"      --max-size SIZE        stop once the file holds SIZE of data (e.g. 500M); what\n"
"                             the rings still bring is counted lost, not written\n"
"  -N, --no-buildid-cache     do not add the recorded files to ~/.debug (perf's build-id\n"
"                             cache, where perf report and preport find them later)\n"
"      --switch-events        record context switches\n"
"      --all-cgroups          record each sample's cgroup (perf report --sort cgroup,\n"
"                             preport --sort cgroup or unit)\n"
"      --off-cpu              also record where threads block: the stack at every\n"
"                             switch-out (sched:sched_switch) and every switch-in\n"
"  -a, --all-cpus             record every CPU (system-wide)\n"
"  -C, --cpu CPUS             only these CPUs, e.g. 0-3,6\n"
"  -p, --pid PIDS             record running processes (and their new threads)\n"
"      --readers N            reader threads (default one per CPU recorded)\n"
"      --affinity SCOPE       where readers run: cpu (default), smt, cache, numa, system\n"
"      --lossless             never lose an event: pause the target when a ring buffer\n"
"                             passes the high watermark, resume below the low one;\n"
"                             what it cannot honour is refused (man precord)\n"
"      --high-watermark PCT   pause above this fill level (default 50, lower when a\n"
"                             slow pause needs more room above it in a given -m)\n"
"      --low-watermark PCT    resume below this fill level (default 25)\n"
"  -q, --quiet                no status line, no summary, no notices but that the\n"
"                             file cannot be written (a full disk)\n"
"  -v, --verbose              more detail in the summary\n"
"  -h, --help                 this text\n"
"      --version              precord's version\n"
"\n"
"Exit status: the command's; 2 bad usage, 124 --lossless lost events, 125 precord failed,\n"
"126 the command cannot be executed, 127 the command was not found.\n");
}

static void on_notice(void *ctx, const char *msg)
{
	if (!quiet)
		fprintf(stderr, "precord: %s\n", msg);
}

/* Said even with -q: without it a --lossless run paused by a full disk looks hung. */
static void on_alert(void *ctx, const char *msg)
{
	fprintf(stderr, "precord: %s\n", msg);
}

static int parse_pids(const char *s, pid_t **ret, size_t *nr)
{
	_cleanup_free_ char *copy = strdup(s);
	char *p = copy, *tok;

	if (!copy)
		return -ENOMEM;
	while ((tok = strsep(&p, ","))) {
		pid_t pid, *n;

		if (parse__pid(tok, &pid) < 0)
			return -EINVAL;
		n = realloc(*ret, (*nr + 1) * sizeof(pid_t));
		if (!n)
			return -ENOMEM;
		*ret = n;
		(*ret)[(*nr)++] = pid;
	}
	return 0;
}

static void status_line(const struct record_stats *s, const struct record_stats *prev,
			double dt)
{
	char rd[32], wr[32];
	double rate = dt > 0 ? (s->samples - prev->samples) / dt : 0;

	human__bytes(s->bytes_read, rd, sizeof(rd));
	human__bytes(s->bytes_written, wr, sizeof(wr));
	fprintf(stderr, "\r\033[K[precord] %6.1fs  %8.0f samples/s  read %s  written %s  (%.1fx)  lost %llu",
		s->elapsed, rate, rd, wr,
		s->bytes_written ? (double)s->bytes_read / s->bytes_written : 1.0,
		(unsigned long long)(s->lost_events > s->lost_samples ? s->lost_events : s->lost_samples) +
			s->unwritten_records);
	if (s->pause_mechanism)
		fprintf(stderr, "  paused %.1f%%", s->elapsed > 0 ? 100 * s->paused_total / s->elapsed : 0);
	fflush(stderr);
}

static void summary(const struct record_stats *s, const char *out, int comp_level)
{
	char rd[32], wr[32];

	human__bytes(s->bytes_read, rd, sizeof(rd));
	human__bytes(s->bytes_written, wr, sizeof(wr));
	fprintf(stderr, "[ precord: %.3f s, %llu samples (%.0f/s), %llu records",
		s->elapsed, (unsigned long long)s->samples,
		s->elapsed > 0 ? s->samples / s->elapsed : 0.0, (unsigned long long)s->records);
	if (s->switches)
		fprintf(stderr, ", %llu context switches", (unsigned long long)s->switches);
	fprintf(stderr, " ]\n");
	fprintf(stderr, "[ precord: read %s from %u ring%s with %u reader%s, wrote %s to %s", rd,
		s->nr_rings, s->nr_rings == 1 ? "" : "s", s->nr_readers, s->nr_readers == 1 ? "" : "s",
		wr, out);
	if (comp_level && s->bytes_written)
		fprintf(stderr, " (zstd -%d, ratio %.1f)", comp_level,
			(double)s->bytes_read / s->bytes_written);
	fprintf(stderr, " ]\n");
	if (s->lost_events || s->lost_samples)
		/* The kernel's LOST records and the events' PERF_FORMAT_LOST counts describe
		 * the same drops (the latter only samples): show both, add neither. */
		fprintf(stderr, "[ precord: LOST %llu events in %llu chunks; of them %llu samples (PERF_FORMAT_LOST) ]\n",
			(unsigned long long)s->lost_events, (unsigned long long)s->lost_records,
			(unsigned long long)s->lost_samples);
	else if (!s->unwritten_records)
		fprintf(stderr, "[ precord: 0 lost ]\n");
	if (s->unwritten_records) {
		char nw[32];

		human__bytes(s->unwritten_bytes, nw, sizeof(nw));
		fprintf(stderr, "[ precord: LOST %llu records, %llu of them samples (%s), that %s %s ]\n",
			(unsigned long long)s->unwritten_records,
			(unsigned long long)s->unwritten_samples, nw,
			s->limit_hit ? "came past --max-size in" : "could not be written to", out);
	}
	if (s->pause_mechanism) {
		fprintf(stderr, "[ precord: lossless via %s: %llu pauses, %.3f s paused (%.1f%% of the run), longest %.3f s",
			s->pause_mechanism, (unsigned long long)s->pauses, s->paused_total,
			s->elapsed > 0 ? 100 * s->paused_total / s->elapsed : 0, s->paused_longest);
		if (s->pauses && s->pauses_by_ring) {
			fprintf(stderr, "; caused by");
			for (unsigned int i = 0; i < s->nr_rings && i < RECORD_MAX_RING_STATS; i++)
				if (s->pauses_by_ring[i])
					fprintf(stderr, " cpu%d:%llu", s->pause_ring_cpu[i],
						(unsigned long long)s->pauses_by_ring[i]);
		}
		fprintf(stderr, " ]\n");
		if (verbose || s->lost_events || s->lost_samples) {
			if (s->pauses) {
				char after[32], room[32];

				human__bytes(s->pause_after_bytes, after, sizeof(after));
				human__bytes(s->pause_room_bytes, room, sizeof(room));
				fprintf(stderr, "[ precord: the slowest pause: the rings grew for %.1f ms "
					"after it was decided, by %s in all (room above a ring's high mark: "
					"%s; %.1f ms were allowed for) ]\n", s->pause_after_ns / 1e6, after,
					room, s->pause_allowed_ms);
				fprintf(stderr, "[ precord: pauses were decided at up to %.1f%% of a ring "
					"(the high mark: %.1f%%) ]\n", s->pause_decided_permille / 10.0,
					s->pause_high_permille / 10.0);
				fprintf(stderr, "[ precord: one call to pause the target took up to %.1f ms, "
					"to resume it %.1f ms; a fill report reached the call it decided "
					"within %.1f ms ]\n", s->pause_call_ns / 1e6,
					s->resume_call_ns / 1e6, s->pause_wait_ns / 1e6);
				if (s->pause_reasserts)
					fprintf(stderr, "[ precord: %llu times a watcher paused the target "
						"again, its ring still growing 1 ms after the pause was "
						"decided ]\n", (unsigned long long)s->pause_reasserts);
			}
			fprintf(stderr, "[ precord: a watcher looked up to %.1f ms later than it planned "
				"to ]\n", s->watcher_late_ns / 1e6);
			if (s->steal_ns)
				fprintf(stderr, "[ precord: the hypervisor took %.0f ms of CPU time from "
					"this machine's virtual CPUs during the run (steal time: whatever "
					"ran on them, precord's threads included, was held meanwhile) ]\n",
					s->steal_ns / 1e6);
		}
		if (s->pause_error)
			fprintf(stderr, "[ precord: WARNING: pausing the target failed: %s ]\n",
				strerror(-s->pause_error));
	}
	if (verbose)
		fprintf(stderr, "[ precord: %llu reader passes ]\n", (unsigned long long)s->wakeups);
	if (verbose && s->pause_mechanism)
		fprintf(stderr, "[ precord: %llu looks at the rings by the lossless watchers (%.0f/s) ]\n",
			(unsigned long long)s->watcher_looks,
			s->elapsed > 0 ? (double)s->watcher_looks / s->elapsed : 0);
}

enum {
	OPT_CALL_GRAPH = 256, OPT_NO_COMPRESS, OPT_SWITCH, OPT_READERS, OPT_AFFINITY,
	OPT_LOSSLESS, OPT_HIGH, OPT_LOW, OPT_VERSION, OPT_FILTER, OPT_OFF_CPU, OPT_ALL_CGROUPS,
	OPT_MAX_SIZE,
};

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "event", required_argument, NULL, 'e' },
	{ "freq", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "mmap-pages", required_argument, NULL, 'm' },
	{ "compression-level", optional_argument, NULL, 'z' },
	{ "no-compress", no_argument, NULL, OPT_NO_COMPRESS },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "no-buildid-cache", no_argument, NULL, 'N' },
	{ "switch-events", no_argument, NULL, OPT_SWITCH },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "all-cgroups", no_argument, NULL, OPT_ALL_CGROUPS },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "pid", required_argument, NULL, 'p' },
	{ "readers", required_argument, NULL, OPT_READERS },
	{ "affinity", required_argument, NULL, OPT_AFFINITY },
	{ "lossless", no_argument, NULL, OPT_LOSSLESS },
	{ "high-watermark", required_argument, NULL, OPT_HIGH },
	{ "low-watermark", required_argument, NULL, OPT_LOW },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 }
};

/* What the command line asked for: the session's options and what only the CLI checks. */
struct args {
	struct record_opts o;
	pid_t *pids;
	size_t nr_pids;
	bool freq_set, period_set;
	bool no_buildid_cache;      /* -N */
};

/* Report a usage error; returns EXIT_USAGE for the caller to return. */
static int usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_err(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli__err("%s", msg);
	return EXIT_USAGE;
}

/* -F HZ or -F max (the kernel's current limit). */
static int opt_freq(const char *arg, struct args *a)
{
	uint64_t v = 0;

	if (!strcmp(arg, "max")) {
		_cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");

		if (!f || fscanf(f, "%" SCNu64, &v) != 1 || !v)
			v = 4000;
	} else if (parse__freq(arg, &v) < 0) {
		return usage_err("invalid frequency '%s' for -F: expected samples per second from 1 "
				 "to %d, e.g. -F 4000", arg, PARSE_FREQ_MAX);
	}
	a->o.freq = v;
	a->freq_set = true;
	return 0;
}

static int opt_call_graph(const char *arg, struct args *a)
{
	uint32_t stack;
	int r = parse__callgraph(arg, &a->o.callgraph, &stack);

	if (r == -ERANGE)
		return usage_err("invalid stack size in '--call-graph %s': expected %d to %d bytes, "
				 "e.g. dwarf,16384", arg, PARSE_STACK_MIN, PARSE_STACK_MAX);
	if (r < 0)
		return usage_err("invalid call graph mode '%s': expected dwarf[,SIZE], fp or none",
				 arg);
	if (stack)
		a->o.stack_size = stack;
	return 0;
}

/* -m: a plain number counts pages; one with a unit is bytes, rounded up to pages. */
static int opt_mmap_pages(const char *arg, struct args *a)
{
	long page = sysconf(_SC_PAGESIZE);
	bool suffixed;
	uint64_t v;

	if (parse__size(arg, &v, &suffixed) < 0 || !v)
		return usage_err("invalid ring size '%s' for -m: expected a power of two of pages "
				 "(e.g. 128) or a size (e.g. 4M)", arg);
	if (suffixed)
		v = v / page + !!(v % page);
	if (v & (v - 1)) {
		unsigned long long lo = 1ULL << (63 - __builtin_clzll(v));

		/* the suggestion in the unit typed: -m 12K is 3 pages, try 8K or 16K */
		if (suffixed)
			return usage_err("invalid ring size '%s' for -m: %llu pages is not a power "
					 "of two (try -m %lluK or -m %lluK)", arg,
					 (unsigned long long)v, lo * page / 1024, 2 * lo * page / 1024);
		return usage_err("invalid ring size '%s' for -m: %llu pages is not a power of two "
				 "(try -m %llu or -m %llu)", arg, (unsigned long long)v, lo, 2 * lo);
	}
	if (v > (1ULL << 20))
		return usage_err("ring size '%s' for -m is too large (at most 1048576 pages per CPU)",
				 arg);
	a->o.mmap_pages = v;
	a->o.mmap_arg = arg;
	return 0;
}

static int opt_pids(const char *arg, struct args *a)
{
	int r = parse_pids(arg, &a->pids, &a->nr_pids);

	if (r == -ENOMEM) {
		cli__err("cannot read the pid list: %s", strerror(ENOMEM));
		return EXIT_FAIL;
	}
	if (r < 0)
		return usage_err("invalid pid list '%s' for -p: expected PID[,PID...]", arg);
	return 0;
}

/* A number option from min to max into *ret; what names it in the message. */
static int opt_uint(const char *arg, uint64_t min, uint64_t max, const char *what, uint64_t *ret)
{
	if (parse__uint(arg, min, max, ret) < 0)
		return usage_err("invalid %s '%s': expected %llu to %llu", what, arg,
				 (unsigned long long)min, (unsigned long long)max);
	return 0;
}

static int opt_watermark(int c, const char *arg, struct args *a)
{
	uint64_t v;

	if (parse__uint(arg, 1, 99, &v) < 0)
		return usage_err("invalid watermark '%s' for --%s-watermark: expected a percentage "
				 "from 1 to 99", arg, c == OPT_HIGH ? "high" : "low");
	*(c == OPT_HIGH ? &a->o.high_permille : &a->o.low_permille) = (unsigned int)v * 10;
	if (c == OPT_HIGH)
		a->o.high_given = true;
	return 0;
}

/* One option. Returns -1 to go on, or the exit status (0 after --help and --version). */
static int parse_option(int c, const char *arg, struct args *a)
{
	struct record_opts *o = &a->o;
	uint64_t v = 0;
	int r = 0;

	switch (c) {
	case 'o':
		if (!*arg)
			return usage_err("-o needs a file name");
		o->output = arg;
		break;
	case 'e': o->events = arg; break;
	case 'F': r = opt_freq(arg, a); break;
	case 'c':
		r = opt_uint(arg, 1, UINT64_MAX >> 1, "period for -c", &v);
		o->period = v;
		a->period_set = true;
		break;
	case 'g': o->callgraph = CALLGRAPH_DWARF; break;
	case OPT_CALL_GRAPH: r = opt_call_graph(arg, a); break;
	case 'm': r = opt_mmap_pages(arg, a); break;
	case 'z':
		v = 1;
		if (arg)
			r = opt_uint(arg, 1, 22, "compression level", &v);
		o->comp_level = (int)v;
		break;
	case OPT_NO_COMPRESS: o->comp_level = 0; break;
	case 'N': a->no_buildid_cache = true; break;
	case OPT_MAX_SIZE:
		if (parse__size(arg, &o->max_size, NULL) < 0 || o->max_size < 4096)
			r = usage_err("invalid size '%s' for --max-size: expected at least 4K, in "
				      "bytes or with K, M, G or T, e.g. --max-size 500M", arg);
		break;
	case OPT_FILTER: o->filter = arg; break;
	case OPT_OFF_CPU: o->off_cpu = true; break;
	case OPT_ALL_CGROUPS: o->all_cgroups = true; break;
	case OPT_SWITCH: o->switch_events = true; break;
	case 'a': o->system_wide = true; break;
	case 'C': o->cpu_list = arg; break;
	case 'p': r = opt_pids(arg, a); break;
	case OPT_READERS:
		r = opt_uint(arg, 1, 4096, "reader count for --readers", &v);
		o->nr_readers = (unsigned int)v;
		break;
	case OPT_AFFINITY:
		if (topo_scope__parse(arg, &o->affinity) < 0)
			return usage_err("invalid affinity scope '%s': expected cpu, smt, cache, numa "
					 "or system", arg);
		break;
	case OPT_LOSSLESS: o->lossless = true; break;
	case OPT_HIGH:
	case OPT_LOW: r = opt_watermark(c, arg, a); break;
	case 'q': quiet = true; break;
	case 'v': verbose = true; break;
	case 'h':
		usage(stdout);
		return 0;
	case OPT_VERSION:
		printf("precord %s\n", PRECORD_VERSION);
		return 0;
	default:
		fprintf(stderr, "Try 'precord --help' for the options.\n");
		return EXIT_USAGE;
	}
	return r ? r : -1;
}

/* -o must be (or become) a regular file on a disk: perf.data is written with seeks, and a FIFO
 * would block open() until a reader came. Looked at with stat only, before anything starts. */
static int check_output(const char *path)
{
	char what[PATH_MAX + 96];
	int r;

	/* perf's -o - writes a pipe-mode stream to standard output; precord has no pipe mode */
	if (!strcmp(path, "-"))
		return usage_err("cannot write -o -: precord writes perf.data with seeks, so not to "
				 "standard output (perf's pipe mode); record to a file, then read it "
				 "from there (or name a file called '-' as ./-)");
	struct stat st;

	/* the file there would become path.old: that name must be free for it */
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		char old[PATH_MAX + 8];

		snprintf(old, sizeof(old), "%s.old", path);
		if (stat(old, &st) == 0 && S_ISDIR(st.st_mode))
			return usage_err("cannot write -o %s: the file there would become %s, which is a "
					 "directory (move it away, or give another -o)", path, old);
	}
	r = fileio__check_seekable(path, what, sizeof(what));

	if (r == -EINVAL && !strncmp(what, "a symlink", 9))
		return usage_err("cannot write -o %s: it is %s (create it, or give another -o)", path,
				 what);
	if (r == -EINVAL && !strncmp(what, "in ", 3))
		return usage_err("cannot write -o %s: it would be %s (%s)", path, what,
				 strstr(what, "stores no files") ? "give the name of a file on a disk" :
				 "create the directory first, or give another -o");
	if (r == -EINVAL)
		return usage_err("cannot write -o %s: it is %s, and precord writes perf.data with "
				 "seeks, which needs a regular file (give the name of a file on a "
				 "disk, e.g. -o perf.data%s)", path, what,
				 strstr(what, "pipe") || strstr(what, "character") ?
				 "; precord cannot write to a pipe or a terminal: record to a file, "
				 "then read it from there" : "");
	if (r < 0)
		return usage_err("cannot write -o %s: %s (give another -o)", path, strerror(-r));
	return -1;
}

/* The tgid of task pid (from /proc/PID/status), or 0 when it cannot be read. */
static pid_t tgid_of(pid_t pid)
{
	char path[64], line[128];
	_cleanup_fclose_ FILE *f = NULL;
	int tgid = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	return tgid;
}

/* -p names processes: not precord itself, and not a thread (its process is what -p records,
 * every thread of it). A pid that does not exist is left to the start, which says so. */
static int check_pids(const struct args *a)
{
	for (size_t i = 0; i < a->nr_pids; i++) {
		pid_t pid = a->pids[i], tgid = tgid_of(pid);

		if (pid == getpid() || tgid == getpid())
			return usage_err("-p %d is precord itself, which cannot record itself (give "
					 "the pid of another process)", pid);
		if (tgid > 0 && tgid != pid)
			return usage_err("-p %d is a thread of process %d, not a process: -p records "
					 "every thread of a process (use -p %d)", pid, tgid, tgid);
	}
	return -1;
}

/* The rules between options, and the target. Returns -1 when the command line is good, else
 * EXIT_USAGE. */
static int check_args(struct args *a, int argc, char **argv)
{
	struct record_opts *o = &a->o;
	int r;

	if (a->freq_set && a->period_set)
		return usage_err("-F and -c both given: choose a frequency or a period");
	if (o->low_permille >= o->high_permille)
		return usage_err("--low-watermark (%u%%) must be below --high-watermark (%u%%)",
				 o->low_permille / 10, o->high_permille / 10);
	if (optind < argc)
		o->argv = &argv[optind];
	o->pids = a->pids;
	o->nr_pids = a->nr_pids;
	if (!o->argv && !a->nr_pids && !o->system_wide) {
		usage_err("nothing to record: give a command, -p PID or -a");
		fprintf(stderr, "Try 'precord --help' for the options.\n");
		return EXIT_USAGE;
	}
	if (o->argv && a->nr_pids)
		return usage_err("a command and -p both given: record one or the other");
	if (a->nr_pids && o->system_wide)
		return usage_err("-p and -a both given: -a already records every process");
	if (o->lossless && o->system_wide)
		return usage_err("--lossless cannot be used with -a: it pauses the profiled program, "
				 "and a system cannot pause itself (record a command or -p PID)");
	/* as perf record: -C without -p records every process on those CPUs (a command then
	 * only says how long), not the command alone */
	if (o->cpu_list && !a->nr_pids && !o->system_wide) {
		if (o->lossless)
			return usage_err("--lossless cannot be used with -C: -C records every process "
					 "on those CPUs, as perf's does, and they cannot all be "
					 "paused (record a command or -p PID on every CPU)");
		o->system_wide = true;
	}
	o->cmdline_argc = argc;
	o->cmdline_argv = argv;
	r = check_pids(a);
	return r >= 0 ? r : check_output(o->output);
}

/* Record until the target ends or a signal, with the status line on a terminal. */
static void wait_for_end(struct record *rec, uint64_t max_size)
{
	bool tty = !quiet && isatty(STDERR_FILENO);
	struct record_stats prev = { 0 }, cur;
	double last = 0;

	while (!stop_signal) {
		if (record__poll(rec, max_size ? 100 : 500) == 1)
			break;
		record__stats(rec, &cur);
		if (cur.limit_hit) {
			char sz[32];

			human__bytes(max_size, sz, sizeof(sz));
			if (!quiet)
				fprintf(stderr, "%s[ precord: the file reached --max-size (%s): "
					"recording stopped ]\n", tty ? "\r\033[K" : "", sz);
			return;
		}
		if (tty) {
			status_line(&cur, &prev, cur.elapsed - last);
			prev = cur;
			last = cur.elapsed;
		}
	}
	if (tty)
		fputs("\r\033[K", stderr);
}

/* Stop, summarize and choose the exit status (man/precord.1, EXIT STATUS). */
static int finish(struct record *rec, const struct record_opts *o)
{
	struct record_stats cur;
	int r = record__stop(rec), status;

	record__stats(rec, &cur);
	if (r < 0)
		cli__err("%s (what was recorded before the failure is in %s)", record__error(rec),
			 o->output);
	if (!quiet)
		summary(&cur, o->output, o->comp_level);
	if (r < 0)
		return EXIT_FAIL;
	if (o->lossless && (cur.lost_events || cur.lost_samples)) {
		cli__err("--lossless failed: %llu events were lost anyway, %llu of them samples (the "
			 "target could not be paused in time; lower -F, raise -m or lower "
			 "--high-watermark)",
			 (unsigned long long)(cur.lost_events > cur.lost_samples ? cur.lost_events :
						  cur.lost_samples),
			 (unsigned long long)cur.lost_samples);
		return EXIT_LOSSLESS;
	}
	if (cur.left_running)
		cli__err("the command (pid %d) had not ended 2 s after SIGTERM and is left running "
			 "(its recording is complete; kill -KILL %d ends it)", cur.left_running,
			 cur.left_running);
	status = record__target_status(rec);
	if (status >= 0 && WIFEXITED(status))
		return WEXITSTATUS(status);
	if (status >= 0 && WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 0;
}

/* Create and start the session, record, finish. Returns the exit status. */
static int run(const struct record_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct record *rec = record__new();
	int r;

	if (!rec) {
		cli__err("cannot start a recording: %s", strerror(errno));
		return EXIT_FAIL;
	}
	r = record__setup(rec, o);
	if (r < 0) {
		cli__err("%s", record__error(rec));
		record__free(rec);
		return r == -ENOENT || r == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	/* SIGINT/SIGTERM end the recording cleanly; no SA_RESTART so waits return EINTR. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	r = record__start(rec);
	if (r < 0) {
		int exec_err = record__exec_error(rec);
		bool refused = record__refused(rec);

		cli__err("%s", record__error(rec));
		record__stop(rec);
		record__free(rec);
		if (exec_err)
			return exec_err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
		/* -p of a process that does not exist, or settings that cannot be honoured, are bad
		 * usage: nothing was recorded. */
		return (r == -ESRCH && o->nr_pids) || refused ? EXIT_USAGE : EXIT_FAIL;
	}
	wait_for_end(rec, o->max_size);
	r = finish(rec, o);
	record__free(rec);
	return r;
}

int main(int argc, char **argv)
{
	struct args a = {
		.o = {
			.output = "perf.data",
			.freq = 4000,
			.callgraph = CALLGRAPH_DWARF,
			.stack_size = PARSE_STACK_DEFAULT,
			.mmap_pages = 0, /* auto: see record_opts */
			.comp_level = 1,
			.affinity = TOPO_SCOPE_CPU,
			.high_permille = 500,
			.low_permille = 250,
			.keep_old = true,
			.notice = on_notice,
			.alert = on_alert,
		},
	};
	char cache[PATH_MAX];
	int c, r;

	if (argc > 1 && !strcmp(argv[1], "bench"))
		return subcmd_bench(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "ctl"))
		return subcmd_ctl(argc - 1, argv + 1);

	/* '+': stop at the first non-option, which starts the command */
	while ((c = getopt_long(argc, argv, "+o:e:F:c:gm:z::aC:p:qvhN", longopts, NULL)) != -1) {
		r = parse_option(c, optarg, &a);
		if (r >= 0)
			goto out;
	}
	r = check_args(&a, argc, argv);
	if (r < 0 && !a.no_buildid_cache)
		a.o.buildid_cache = buildid_cache__default_dir(cache, sizeof(cache));
	if (r < 0)
		r = run(&a.o);
out:
	free(a.pids);
	return r;
}
