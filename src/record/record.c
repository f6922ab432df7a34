/* The recording session. Order matters and is the whole point of this file:
 *   command: fork held -> open events on it (disabled, enable_on_exec) -> create the file ->
 *            kernel map synthesized -> readers started -> exec (events switch on at exec);
 *   -p / -a: open events (disabled) -> create the file -> synthesize what already runs
 *            (written before any ring data, at time 0) -> readers started -> enable.
 * Stopping reverses it: disable, drain, write the kernel's lost counts, finalize. */
#include "record/record.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "lib/cgroupfs.h"
#include "lib/cleanup.h"
#include "lib/topology.h"
#include "lib/clock.h"
#include "perf/compress.h"
#include "record/events.h"
#include "record/evlist.h"
#include "perf/abi.h"
#include "perf/writer.h"
#include "record/readers.h"
#include "ringbuf/ringbuf.h"
#include "record/synthesize.h"
#include "lib/creds.h"
#include "record/target.h"
#include "record/tracefs.h"
#include "lib/workqueue.h"
#include "record/lossless/lossless.h"
#include "record/lossless/ringsize.h"
#include "perf/pause_stats.h"
#include "perf/ring_order.h"

#define MAX_EVENTS 16
/* How long a stop waits for the command to end after SIGTERM before leaving it running. */
#define TERM_WAIT_MS 2000

struct record {
	struct record_opts o;
	struct evdesc ev[MAX_EVENTS];
	size_t nr_ev;
	struct perf_event_attr attrs[MAX_EVENTS];
	int *cpus;
	size_t nr_cpus;
	pid_t *tids;
	size_t nr_tids;
	struct topology *topo;
	struct wq *wq;
	struct evlist *el;
	struct perf_writer *w;
	struct readers *rd;
	struct target *tgt;
	struct lossless *ll;
	struct ringbuf **rings;   /* for the lossless watcher */
	bool started, stopped, target_ended;
	bool left_running; /* the command outlived TERM_WAIT_MS after SIGTERM at the stop */
	int target_status;
	int exec_err;
	bool refused;           /* start refused the settings before anything ran */
	uint64_t lost_samples;
	uint64_t t0_ns, t_end_ns;     /* CLOCK_MONOTONIC */
	unsigned long long steal0_ns; /* the host's steal time at the start (topology__steal_ns) */
	uint64_t steal_ns;            /* ... and how much more it took until the stop */
	uint64_t last_sync_ns;
	uint64_t unwritten_told;      /* unwritten records already noticed */
	bool waiting_told;            /* the wait for space was noticed */
	char *rotated_output;  /* the current file's path after record__rotate (owned) */
	void *tracing_data;    /* the tracepoints' formats for each file (NULL: no tracepoint) */
	size_t tracing_len;
	void *kmmap;           /* the kernel MMAP record, kept for rotations: reading kallsyms
				* again would cost a good part of a second */
	size_t kmmap_len;
	char err[512];
	struct ringsize_plan plan; /* ring sizes from the settings */
	struct ringsize_events plan_ev; /* what plan was worked out from */
	bool auto_ring;            /* -m left out: precord picked the ring */
	uint64_t reaction_ns;      /* --lossless: the reaction the ring and marks allow for */
};

static void seterr(struct record *rec, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rec->err, sizeof(rec->err), fmt, ap);
	va_end(ap);
}

/* The reason for an allocation that failed: what it was for. Returns -ENOMEM. */
static int oom(struct record *rec, const char *what)
{
	seterr(rec, "cannot allocate memory for %s", what);
	return -ENOMEM;
}

int record__exec_error(const struct record *rec)
{
	return rec->exec_err;
}

bool record__refused(const struct record *rec)
{
	return rec->refused;
}

const char *record__error(const struct record *rec)
{
	return rec->err;
}

static void vsay(struct record *rec, void (*fn)(void *, const char *), const char *fmt,
		 va_list ap)
{
	char buf[512];

	if (!fn)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	fn(rec->o.notice_ctx, buf);
}

static void notice(struct record *rec, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(rec, rec->o.notice, fmt, ap);
	va_end(ap);
}

/* A notice that must reach the user even when notices are kept quiet (record_opts.alert). */
static void alert(struct record *rec, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(rec, rec->o.alert ? rec->o.alert : rec->o.notice, fmt, ap);
	va_end(ap);
}

void record__free(struct record *rec)
{
	if (!rec)
		return;
	if (rec->started && !rec->stopped)
		record__stop(rec);
	readers__free(rec->rd);
	lossless__free(rec->ll);
	perf_writer__free(rec->w);
	evlist__free(rec->el);
	target__free(rec->tgt);
	wq__free(rec->wq);
	topology__free(rec->topo);
	free(rec->rings);
	free(rec->cpus);
	free(rec->tids);
	free(rec->rotated_output);
	free(rec->tracing_data);
	free(rec->kmmap);
	free(rec);
}

static int choose_cpus(struct record *rec)
{
	const cpu_set_t *online = topology__online(rec->topo);
	int n = topology__nr_cpus(rec->topo);
	cpu_set_t want;

	if (rec->o.cpu_list) {
		const char *l = rec->o.cpu_list;
		int r = cpulist__parse(l, &want);

		if (r == -ERANGE) {
			/* as for any CPU past the last: the number named, and how many there are */
			while (*l && !(isdigit((unsigned char)*l) &&
				       strtoull(l, NULL, 10) >= (unsigned long long)n))
				l++;
			seterr(rec, "CPU %.*s given with -C does not exist (this machine has %d)",
			       (int)strspn(l, "0123456789"), l, n);
			return -EINVAL;
		}
		if (r < 0) {
			seterr(rec, "invalid CPU list '%s' for -C: expected a list like 0-3,6",
				       rec->o.cpu_list);
			return -EINVAL;
		}
		if (!CPU_COUNT(&want)) {
			seterr(rec, "-C '%s' names no CPU: expected a list like 0-3,6 (or leave -C out "
				    "to record on every CPU)", rec->o.cpu_list);
			return -EINVAL;
		}
	} else {
		want = *online;
	}
	rec->cpus = calloc(n ? n : 1, sizeof(int));
	if (!rec->cpus)
		return oom(rec, "the CPU list");
	for (int c = 0; c < n && c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &want))
			continue;
		if (!CPU_ISSET(c, online)) {
			seterr(rec, "CPU %d given with -C is not online (online CPUs: see "
				       "/sys/devices/system/cpu/online)", c);
			return -EINVAL;
		}
		rec->cpus[rec->nr_cpus++] = c;
	}
	for (int c = n; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &want)) {
			seterr(rec, "CPU %d given with -C does not exist (this machine has %d)", c, n);
			return -EINVAL;
		}
	if (!rec->nr_cpus) {
		seterr(rec, "no CPU to record on");
		return -EINVAL;
	}
	return 0;
}

/* Whether the kernel refuses filter on tracepoint ev: tried on a throwaway disabled event of
 * this thread, so a typo is bad usage caught before anything starts. Only EINVAL counts (an
 * event that cannot be opened at all is explained when the real ones are opened). */
static bool filter_refused(const struct evdesc *ev, const char *filter)
{
	struct perf_event_attr a = ev->attr;
	_cleanup_close_ int fd = -1;

	a.size = sizeof(a);
	a.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	return ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0 && errno == EINVAL;
}

struct record *record__new(void)
{
	struct record *rec = calloc(1, sizeof(*rec));

	if (!rec)
		return NULL;
	rec->target_status = -1;
	return rec;
}

/* The options' defaults, and -F lowered to the kernel's limit as perf does. */
static void apply_defaults(struct record *rec)
{
	if (!rec->o.output)
		rec->o.output = "perf.data";
	if (!rec->o.events)
		rec->o.events = "cycles";
	if (!rec->o.period) {
		_cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
		unsigned long long max = 0;

		if (!f || fscanf(f, "%llu", &max) != 1)
			max = 0;
		if (max && rec->o.freq > max) {
			notice(rec, "-F %llu is above the kernel's limit; lowering it to %llu "
				    "(raise kernel.perf_event_max_sample_rate to go higher)",
			       (unsigned long long)rec->o.freq, max);
			rec->o.freq = max;
		}
	}
}

/* Say why events__parse_list refused item bad of the list (n its -errno). */
static int explain_event_list(struct record *rec, int n, size_t bad)
{
	char sugg[3][64], one[160];
	const char *tok = rec->o.events, *end;
	size_t ns;

	/* name the bad item of the list (spaces around it do not count) */
	for (size_t i = 0; i < bad && (end = strchr(tok, ',')); i++)
		tok = end + 1;
	end = strchrnul(tok, ',');
	while (tok < end && isspace((unsigned char)*tok))
		tok++;
	while (end > tok && isspace((unsigned char)end[-1]))
		end--;
	snprintf(one, sizeof(one), "%.*s", (int)(end - tok), tok);
	if (n == -E2BIG) {
		/* the count, not the list: 2000 events made a 20 KB message */
		size_t count = 1;
		bool in_terms = false; /* a comma inside "pmu/a=1,b=2/" belongs to the terms */

		for (const char *c = rec->o.events; *c; c++) {
			in_terms ^= *c == '/';
			count += *c == ',' && !in_terms;
		}
		seterr(rec, "too many events for -e: %zu given, at most %d at once (record the "
			    "others in another run)", count, MAX_EVENTS);
		return -EINVAL;
	} else if (n == -EINVAL && !*one) {
		seterr(rec, "invalid -e '%.64s%s': event %zu of the list has no name (give event "
			    "names separated by commas, e.g. -e cpu-clock,page-faults)", rec->o.events,
		       strlen(rec->o.events) > 64 ? "..." : "", bad + 1);
	} else if (n == -ENOENT) {
		ns = event__suggest(one, sugg, 3);
		seterr(rec, "unknown event '%s'%s%s%s%s%s%s (list them with 'perf list')", one,
		       ns ? "; did you mean " : "", ns ? sugg[0] : "", ns > 1 ? ", " : "",
		       ns > 1 ? sugg[1] : "", ns > 2 ? ", " : "", ns > 2 ? sugg[2] : "");
	} else {
		seterr(rec, "invalid event '%s': %s", one,
		       n == -EINVAL ? "bad modifier" : strerror(-n));
	}
	return n;
}

/* -e, --off-cpu's tracepoint and --filter. */
static int parse_events(struct record *rec)
{
	size_t bad = 0;
	int n, err = events__init();

	if (err) {
		seterr(rec, "cannot initialise libpfm4: %s", strerror(-err));
		return err;
	}
	n = events__parse_list(rec->o.events, rec->ev, MAX_EVENTS, &bad);
	if (n < 0)
		return explain_event_list(rec, n, bad);
	rec->nr_ev = n;
	if (rec->o.off_cpu) {
		/* the blocking stack at every switch-out; the switch records give the switch-ins */
		if (rec->nr_ev == MAX_EVENTS ||
		    event__parse("sched:sched_switch", &rec->ev[rec->nr_ev]) < 0) {
			seterr(rec, "--off-cpu needs the sched:sched_switch tracepoint%s",
			       rec->nr_ev == MAX_EVENTS ? " and one event less" :
			       " (is tracefs available? mount -t tracefs nodev /sys/kernel/tracing)");
			return -EINVAL;
		}
		rec->nr_ev++;
		rec->o.switch_events = true;
	}
	if (rec->o.filter && rec->ev[n - 1].attr.type != PERF_TYPE_TRACEPOINT) {
		seterr(rec, "--filter applies to the last event of -e, which must be a tracepoint "
			    "(subsystem:event, see 'perf list tracepoint'); '%s' is not one",
		       rec->ev[n - 1].name);
		return -EINVAL;
	}
	if (rec->o.filter && filter_refused(&rec->ev[n - 1], rec->o.filter)) {
		char sys[64], tp[64];

		tracefs__split(rec->ev[n - 1].name, sys, tp);
		seterr(rec, "the kernel refuses the filter '%s' of %s (the fields a filter may name "
			    "are in %s/events/%s/%s/format)", rec->o.filter, rec->ev[n - 1].name,
		       tracefs__dir(), sys, tp);
		return -EINVAL;
	}
	return 0;
}

static uint64_t read_sysctl(const char *path, uint64_t dflt)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	long long v;

	if (!f || fscanf(f, "%lld", &v) != 1)
		return dflt;
	return (uint64_t)v;
}

/* Whether the kernel lets us lock any amount of ring memory: CAP_IPC_LOCK (bit 14 of CapEff)
 * or perf_event_paranoid -1. */
static bool unlimited_lock(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool cap = false;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7))
			cap = (strtoull(line + 7, NULL, 16) >> 14) & 1;
	return cap || (int64_t)read_sysctl("/proc/sys/kernel/perf_event_paranoid", 2) < 0;
}

static uint64_t rlimit_memlock(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return rl.rlim_cur;
}

static size_t pages_to_kib(size_t pages)
{
	return pages * ((size_t)sysconf(_SC_PAGESIZE) / 1024);
}

/* The explicit -m of a message, as the user typed it: "-m 512 (2048 KiB per CPU)", or with a
 * size "-m 3K (1 page, 4 KiB per CPU)", never a page count the user did not type. */
static const char *given_m(const struct record *rec, char *buf, size_t len)
{
	size_t pages = rec->o.mmap_pages;
	char plain[32];

	snprintf(plain, sizeof(plain), "%zu", pages);
	if (rec->o.mmap_arg && strcmp(rec->o.mmap_arg, plain))
		snprintf(buf, len, "-m %s (%zu page%s, %zu KiB per CPU)", rec->o.mmap_arg, pages,
			 pages == 1 ? "" : "s", pages_to_kib(pages));
	else
		snprintf(buf, len, "-m %zu (%zu KiB per CPU)", pages, pages_to_kib(pages));
	return buf;
}

/* An explicit -m below the plan's minimum: say why, and the minimum. */
static int refuse_ring(struct record *rec)
{
	const struct ringsize_plan *p = &rec->plan;
	char m[96];

	if (rec->o.lossless)
		seterr(rec, "--lossless cannot honour %s: with these settings a "
			    "ring is written at up to %.0f MB/s in records of up to %llu bytes, and the "
			    "%u.%u%% above the high mark must absorb %.1f ms of that while the target is "
			    "being stopped; the minimum is -m %zu (%zu KiB). Leave -m out and precord "
			    "picks a ring large enough",
		       given_m(rec, m, sizeof(m)), p->max_rate * 1e3,
		       (unsigned long long)p->max_record, (1000 - rec->o.high_permille) / 10,
		       (1000 - rec->o.high_permille) % 10, RINGSIZE_REACTION_NS / 1e6, p->min_pages,
		       pages_to_kib(p->min_pages));
	else
		seterr(rec, "%s cannot hold one sample of these settings (up to "
			    "%llu bytes): every such sample would be lost; the minimum is -m %zu (%zu KiB)",
		       given_m(rec, m, sizeof(m)),
		       (unsigned long long)p->max_record, p->min_pages, pages_to_kib(p->min_pages));
	return -EINVAL;
}

/* The ring precord picks (-m left out): the default or, for --lossless, if larger, one whose
 * room above the high mark absorbs cover_ns where such a ring exists (else the plan's minimum).
 * cover_ns is RINGSIZE_AUTO_MARGIN times the reaction an explicit -m must allow for (a CPU hog
 * or a slow freezer stretches it; measured: 2 MiB over a 32 MiB ring at 64 KiB stacks and
 * 50 kHz on a quiet machine), or the reaction the calibration asks for, if longer. */
static size_t auto_pages(const struct record *rec, uint64_t cover_ns)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), want = rec->plan.min_pages, dflt;
	struct ringsize_plan roomy;

	if (rec->o.lossless &&
	    ringsize__plan(&rec->plan_ev, true, rec->o.high_permille, cover_ns,
			   RECORD_MAX_MMAP_PAGES, &roomy) == 0 && roomy.min_pages > want)
		want = roomy.min_pages;
	dflt = (rec->o.callgraph == CALLGRAPH_DWARF ? 2 << 20 : 512 << 10) / page;
	return dflt > want ? dflt : want;
}

/* The bytes of ring this process may lock (UINT64_MAX: no limit). */
static uint64_t lock_limit(const struct record *rec)
{
	return unlimited_lock() ? UINT64_MAX :
		ringsize__lock_limit(false, read_sysctl("/proc/sys/kernel/perf_event_mlock_kb", 516),
				     (unsigned int)rec->nr_cpus, rlimit_memlock());
}

/* The per-CPU ring from the settings (ringsize.h): the default, or larger where --lossless
 * needs it; an explicit -m that is too small for a record (or for --lossless's headroom) is
 * refused, naming the smallest that works; so is a ring the memory lock limit cannot hold. */
static int plan_rings(struct record *rec)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct ringsize_events ev = {
		.nr_events = (unsigned int)rec->nr_ev,
		.freq = rec->o.period ? 0 : rec->o.freq,
		.max_freq = read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate", 100000),
		.identifier = rec->nr_ev > 1,
		.callchain = rec->o.callgraph != CALLGRAPH_NONE,
		.max_stack = (unsigned int)read_sysctl("/proc/sys/kernel/perf_event_max_stack", 127),
		.nr_user_regs = rec->o.callgraph == CALLGRAPH_DWARF ?
				(unsigned int)__builtin_popcountll(PERF_X86_REGS_USER_MASK) : 0,
		.stack_user = rec->o.callgraph == CALLGRAPH_DWARF ? rec->o.stack_size : 0,
		.switch_events = rec->o.switch_events,
		.page_size = page,
	};
	uint64_t limit, total;
	int r;

	for (size_t i = 0; i < rec->nr_ev; i++)
		ev.nr_tracepoints += rec->ev[i].attr.type == PERF_TYPE_TRACEPOINT;
	r = ringsize__plan(&ev, rec->o.lossless, rec->o.high_permille, RINGSIZE_REACTION_NS,
			   RECORD_MAX_MMAP_PAGES, &rec->plan);
	if (r == -E2BIG) {
		seterr(rec, "%sno ring of at most %zu KiB per CPU can hold these settings: %s would need "
			    "%zu KiB (records up to %llu bytes at up to %.0f MB/s); lower -F or the stack "
			    "size of --call-graph dwarf,SIZE", rec->o.lossless ? "--lossless: " : "",
		       pages_to_kib(RECORD_MAX_MMAP_PAGES),
		       rec->o.lossless ? "the room above the high mark" : "one record",
		       pages_to_kib(rec->plan.min_pages), (unsigned long long)rec->plan.max_record,
		       rec->plan.max_rate * 1e3);
		return -EINVAL;
	}
	if (r < 0) {
		seterr(rec, "cannot size the rings: %s", strerror(-r));
		return r;
	}
	if (rec->o.mmap_pages && rec->o.mmap_pages < rec->plan.min_pages)
		return refuse_ring(rec);
	rec->plan_ev = ev;
	if (!rec->o.mmap_pages) {
		/* --lossless grows it once the pause is timed (fit_rings) */
		rec->o.mmap_pages = auto_pages(rec, RINGSIZE_AUTO_MARGIN * RINGSIZE_REACTION_NS);
		rec->auto_ring = true;
	}
	limit = lock_limit(rec);
	total = (uint64_t)rec->nr_cpus * (rec->o.mmap_pages + 1) * page;
	if (rec->o.lossless && total > limit) {
		seterr(rec, "--lossless needs %zu KiB of ring per CPU (%llu KiB for %zu CPUs) but this "
			    "user may lock only %llu KiB: raise kernel.perf_event_mlock_kb (sysctl, per "
			    "CPU) or the locked-memory limit (ulimit -l, RLIMIT_MEMLOCK), or run with "
			    "CAP_IPC_LOCK; or lower -F or the stack size",
		       pages_to_kib(rec->o.mmap_pages), (unsigned long long)(total / 1024),
		       rec->nr_cpus, (unsigned long long)(limit / 1024));
		return -EINVAL;
	}
	return 0;
}

int record__setup(struct record *rec, const struct record_opts *opts)
{
	int err;

	if (rec->nr_ev || rec->started) {
		seterr(rec, "the recording session is already set up");
		return -EBUSY;
	}
	rec->o = *opts;
	apply_defaults(rec);
	err = parse_events(rec);
	if (err)
		return err;
	rec->topo = topology__read("/sys");
	if (!rec->topo) {
		err = -errno;
		seterr(rec, "cannot read the CPU topology under /sys: %s", strerror(-err));
		return err;
	}
	err = choose_cpus(rec);
	return err ? err : plan_rings(rec);
}

/* Lift the soft fd limit to the hard one: one fd per event per CPU per task adds up. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int list_threads(pid_t pid, pid_t **tids, size_t *nr, size_t *cap)
{
	char path[64];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (*nr == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			pid_t *t = realloc(*tids, nc * sizeof(pid_t));

			if (!t) {
				closedir(d);
				return -ENOMEM;
			}
			*tids = t;
			*cap = nc;
		}
		(*tids)[(*nr)++] = atoi(de->d_name);
	}
	closedir(d);
	return 0;
}

/* --lossless: have the kernel stop each sampled task's process at its next sample while a
 * pause is on (backstop.h), when PRECORD_BACKSTOP=1 asks for it. Where the kernel cannot (an old
 * kernel) the pauser alone acts, with a notice. */
static int arm_backstop(struct record *rec)
{
	size_t n = evlist__nr_fds(rec->el);
	_cleanup_free_ int *fds = calloc(n, sizeof(int));
	_cleanup_free_ pid_t *tids = calloc(n, sizeof(pid_t));
	int err;

	if (!fds || !tids)
		return oom(rec, "the lossless backstop's list of events");
	for (size_t i = 0; i < n; i++)
		fds[i] = evlist__fd(rec->el, i, &tids[i]);
	err = lossless__backstop(rec->ll, fds, tids, n);
	if (err == -ENOMEM)
		return oom(rec, "the lossless backstop");
	if (err < 0)
		notice(rec, "--lossless: the kernel cannot stop the target by itself (%s): pauses rely "
			    "on the pauser alone", strerror(-err));
	return 0;
}

static void setup_attrs(struct record *rec, bool command)
{
	for (size_t i = 0; i < rec->nr_ev; i++) {
		struct perf_event_attr *a = &rec->attrs[i];
		size_t ring = rec->o.mmap_pages * (size_t)sysconf(_SC_PAGESIZE);

		*a = rec->ev[i].attr;
		a->size = PERF_FILE_ATTR_SIZE;
		if (a->type == PERF_TYPE_TRACEPOINT) {
			/* every hit, as perf samples tracepoints; -c N keeps one in N */
			a->sample_period = rec->o.period ? rec->o.period : 1;
			a->freq = 0;
		} else if (rec->o.period) {
			a->sample_period = rec->o.period;
			a->freq = 0;
		} else {
			a->sample_freq = rec->o.freq;
			a->freq = 1;
		}
		a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
		if (rec->nr_ev > 1)
			a->sample_type |= PERF_SAMPLE_IDENTIFIER;
		if (a->type == PERF_TYPE_TRACEPOINT)
			a->sample_type |= PERF_SAMPLE_RAW; /* the fields, decoded by the file's formats */
		if (rec->o.all_cgroups)
			a->sample_type |= PERF_SAMPLE_CGROUP; /* the sampled task's cgroup id */
		if (rec->o.callgraph == CALLGRAPH_FP) {
			a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		} else if (rec->o.callgraph == CALLGRAPH_DWARF) {
			/* kernel part from the kernel; user part unwound later from regs + stack */
			a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
					  PERF_SAMPLE_STACK_USER;
			a->exclude_callchain_user = 1;
			a->sample_regs_user = PERF_X86_REGS_USER_MASK;
			a->sample_stack_user = rec->o.stack_size;
		}
		if (rec->o.user_only) {
			a->exclude_kernel = a->exclude_hv = 1;
			a->exclude_callchain_kernel = 1;
		}
		a->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
		a->disabled = 1;
		a->inherit = !rec->o.system_wide;
		a->enable_on_exec = command;
		a->sample_id_all = 1;
		/* Timestamps on CLOCK_MONOTONIC (perf record -k CLOCK_MONOTONIC), not the kernel's
		 * perf clock: each file's CLOCK_DATA then ties them to the wall clock, so reports
		 * can be asked for a time of day (preport --since) across files and restarts. */
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC;
		/* Wake the reader at a quarter full (perf waits for half). Earlier wakeups cost
		 * more than they save: on a sched_yield storm at 20 kHz, waking at 1/16 doubled
		 * the run time (each wakeup preempts the target) without saving any event. */
		a->watermark = 1;
		a->wakeup_watermark = ring / 4;
		/* --lossless: a ring paused above the high mark must wake its reader, or the
		 * target stays paused until the reader's poll times out (100 ms): keep the
		 * wakeup at or below half the high mark (with the default 50% it stays at 1/4). */
		if (rec->o.lossless && (uint64_t)ring * rec->o.high_permille / 2000 < a->wakeup_watermark)
			a->wakeup_watermark = (uint64_t)ring * rec->o.high_permille / 2000;
		if (!a->wakeup_watermark)
			a->wakeup_watermark = 8;
		if (i == 0) {
			/* the first event tracks tasks and mappings for everyone */
			a->mmap = a->mmap2 = a->mmap_data = 1;
			a->comm = a->comm_exec = 1;
			a->task = 1;
			a->context_switch = rec->o.switch_events;
			a->cgroup = rec->o.all_cgroups; /* PERF_RECORD_CGROUP for new cgroups */
		}
	}
}

/* Whether any event samples the kernel. */
static bool events_include_kernel(const struct record *rec)
{
	for (size_t i = 0; i < rec->nr_ev; i++)
		if (!rec->attrs[i].exclude_kernel)
			return true;
	return false;
}

/* The events the user listed (--off-cpu's tracepoint comes after them). */
static size_t n_user_events(const struct record *rec)
{
	return rec->nr_ev - (rec->o.off_cpu ? 1 : 0);
}

static int open_events(struct record *rec, bool command)
{
	struct evlist_failure f = { 0 };
	struct evlist_opts eo;

	for (;;) {
		setup_attrs(rec, command);
		const char *filters[MAX_EVENTS] = { 0 };

		if (rec->o.filter)
			filters[n_user_events(rec) - 1] = rec->o.filter;
		eo = (struct evlist_opts){ rec->attrs, rec->nr_ev, rec->cpus, rec->nr_cpus,
					   rec->tids, rec->nr_tids, rec->o.mmap_pages, filters,
					   rec->o.creds };
		rec->el = evlist__open(&eo, &f);
		if (rec->el)
			return 0;
		if (f.err == EINVAL && (rec->attrs[0].read_format & PERF_FORMAT_LOST)) {
			/* kernels before 6.0 have no PERF_FORMAT_LOST: the LOST records remain */
			for (size_t i = 0; i < rec->nr_ev; i++)
				rec->ev[i].attr.read_format = 0;
		}
		if (!f.at_mmap && (f.err == EACCES || f.err == EPERM) && !rec->o.user_only &&
		    !rec->o.creds && geteuid() != 0 && !rec->attrs[f.attr].exclude_kernel) {
			/* as perf: a user kept from the kernel (perf_event_paranoid above 1)
			 * records user space only */
			notice(rec, "this user may not record the kernel (kernel.perf_event_paranoid "
				    "is %ld): recording user space only, as with ':u'",
			       creds__paranoid());
			rec->o.user_only = true;
			continue;
		}
		if (!f.at_mmap && event__is_hardware(&rec->ev[f.attr]) &&
		    (f.err == ENOENT || f.err == ENODEV || f.err == ENXIO || f.err == EOPNOTSUPP)) {
			struct evdesc fb;

			if (event__fallback(&rec->ev[f.attr], &fb) == 0) {
				notice(rec, "%s is not available on this machine (no hardware PMU); "
					    "falling back to %s", rec->ev[f.attr].name, fb.name);
				rec->ev[f.attr] = fb;
				continue;
			}
		}
		break;
	}
	if (!f.err) /* the list itself could not be allocated */
		f.err = errno ? errno : ENOMEM;
	if (f.at_filter) {
		seterr(rec, "cannot set the filter '%s' of %s: %s", rec->o.filter,
		       rec->ev[f.attr].name, strerror(f.err));
	} else if (f.at_mmap) {
		char buf[384];

		seterr(rec, "%s", events__explain_mmap_error(f.err, rec->o.mmap_pages, buf, sizeof(buf)));
	} else {
		char buf[384];

		event__explain_open_error(&rec->ev[f.attr], f.err, buf, sizeof(buf));
		if (f.tid > 0)
			seterr(rec, "cannot open event on CPU %d for task %d: %s", f.cpu, f.tid, buf);
		else
			seterr(rec, "cannot open event on CPU %d: %s", f.cpu, buf);
	}
	return -f.err;
}

/* The formats of the tracepoints among the events, once per session (rotations reuse it), so
 * perf script can decode their fields. Returns 0 or -errno with the reason set. */
static int tracing_data(struct record *rec)
{
	const char *specs[MAX_EVENTS];
	size_t n = 0;
	int r;

	if (rec->tracing_data)
		return 0;
	for (size_t i = 0; i < rec->nr_ev; i++)
		if (rec->attrs[i].type == PERF_TYPE_TRACEPOINT)
			specs[n++] = rec->ev[i].name;
	if (!n)
		return 0;
	r = tracefs__tracing_data(specs, n, &rec->tracing_data, &rec->tracing_len);
	if (r < 0)
		seterr(rec, "cannot read the tracepoints' formats from tracefs: %s", strerror(-r));
	return r;
}

static int open_file(struct record *rec)
{
	struct perf_writer_event wev[MAX_EVENTS];
	struct perf_writer_opts wo = { 0 };
	struct perf_clock_ref clock = { .clockid = CLOCK_MONOTONIC };
	struct timespec wall, mono;
	int r = tracing_data(rec);

	if (r < 0)
		return r;

	for (size_t i = 0; i < rec->nr_ev; i++) {
		wev[i].name = rec->ev[i].name;
		wev[i].attr = &rec->attrs[i];
		wev[i].ids = evlist__ids(rec->el, i, &wev[i].nr_ids);
	}
	/* the events' clock and the wall clock, read back to back, for CLOCK_DATA */
	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock.wall_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	clock.clock_ns = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
	wo.events = wev;
	wo.nr_events = rec->nr_ev;
	wo.argc = rec->o.cmdline_argc;
	wo.argv = rec->o.cmdline_argv;
	wo.comp_level = rec->o.comp_level;
	wo.comp_mmap_len = COMPRESS_MAX_DECOMPRESSED;
	wo.keep_old = rec->o.keep_old;
	wo.max_data_size = rec->o.max_size;
	wo.tracing_data = rec->tracing_data;
	wo.tracing_len = rec->tracing_len;
	wo.creds = rec->o.creds;
	wo.clock = &clock;
	wo.buildid_cache = rec->o.buildid_cache;
	rec->w = perf_writer__open(rec->o.output, &wo);
	if (!rec->w) {
		int e = errno;

		seterr(rec, "cannot create %s: %s%s", rec->o.output, strerror(e),
		       e == EACCES || e == EROFS ? " (choose another place with -o)" :
		       e == ENOSPC ? " (nothing was recorded, and a file that was there is kept: "
				     "free some space or write elsewhere with -o)" :
		       e == ESPIPE || e == ENXIO || e == EISDIR ? " (not a regular file: give "
				     "the name of a file on a disk)" : "");
		return -e;
	}
	return 0;
}

/* Records made from /proc go straight to the file, before any ring data. */
static int synth_emit(void *ctx, const void *buf, size_t len)
{
	struct record *rec = ctx;
	struct iovec iov = { (void *)buf, len };

	/* The kernel's map and the vDSO are candidates for the BUILD_ID feature. Not the files
	 * that the processes running before the recording mapped: perf record names only those
	 * its samples hit, and perf report takes minutes over a file naming hundreds. */
	for (size_t off = 0; off + sizeof(struct perf_event_header) <= len;) {
		const struct perf_event_header *h = (const void *)((const char *)buf + off);

		if (h->size < sizeof(*h) || off + h->size > len)
			break;
		if ((h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL ||
		    (h->type == PERF_RECORD_MMAP2 && h->size > 8 + 64 &&
		     strncmp((const char *)h + 8 + 64, "[vdso]", 7) == 0))
			perf_writer__note_mmap(rec->w, h);
		off += h->size;
	}
	return perf_writer__append(rec->w, &iov, 1);
}

/* The same, keeping a copy for record__rotate. */
static int synth_emit_kernel(void *ctx, const void *buf, size_t len)
{
	struct record *rec = ctx;
	void *copy = malloc(len);

	if (copy) {
		memcpy(copy, buf, len);
		free(rec->kmmap);
		rec->kmmap = copy;
		rec->kmmap_len = len;
	}
	return synth_emit(ctx, buf, len);
}

/* --all-cgroups: the cgroups that exist already, by id and path (new ones come from the
 * kernel as PERF_RECORD_CGROUP). No cgroup2 mount: the samples carry ids only. */
static int synthesize_cgroups(struct record *rec, const struct synth_opts *so)
{
	char root[PATH_MAX];

	if (!rec->o.all_cgroups || cgroupfs__v2_mount(root, sizeof(root)) < 0)
		return 0;
	return synthesize__cgroups(so, root, synth_emit, rec, NULL);
}

struct synth_run {
	struct record *rec;
	const struct synth_opts *so;
	const pid_t *pids;
	size_t nr;
};

static int synth_pids_fn(void *p)
{
	struct synth_run *x = p;

	return synthesize__pids(x->so, x->pids, x->nr, synth_emit, x->rec, NULL);
}

/* The processes' /proc files are read with the recording's credentials, if any (on one
 * thread then: the workqueue's workers keep the caller's). */
static int synth_pids(struct record *rec, struct synth_opts *so, const pid_t *pids, size_t nr)
{
	struct synth_run x = { rec, so, pids, nr };

	if (rec->o.creds)
		so->wq = NULL;
	return creds__run(rec->o.creds, synth_pids_fn, &x);
}

static int synthesize(struct record *rec, bool command)
{
	size_t nids;
	const uint64_t *ids = evlist__ids(rec->el, 0, &nids);
	struct synth_opts so = {
		.attr = &rec->attrs[0],
		.id = ids[0],
		.cpu = (uint32_t)rec->cpus[0],
		.wq = rec->wq,
	};
	int err;

	err = rec->o.user_only ? 0 : synthesize__kernel_mmap(&so, synth_emit_kernel, rec);
	if (err == -EACCES || err == -ENOENT) {
		/* kernel addresses hidden from this user (kptr_restrict): no kernel map, as perf */
		if (events_include_kernel(rec))
			notice(rec, "kernel addresses are hidden from this user (/proc/kallsyms shows "
				    "0, see kernel.kptr_restrict): kernel samples will have no symbols");
		err = 0;
	}
	if (!err)
		err = synthesize_cgroups(rec, &so);
	if (err)
		return err;
	if (rec->o.system_wide)
		return synthesize__all(&so, synth_emit, rec, NULL);
	if (!command)
		return synth_pids(rec, &so, rec->o.pids, rec->o.nr_pids);
	return 0;
}

static void on_task(void *ctx, uint32_t type, uint32_t pid, uint32_t tid)
{
	struct record *rec = ctx;

	lossless__task(rec->ll, type == PERF_RECORD_FORK, pid, tid);
}

static void on_fill(void *ctx, size_t ring, unsigned int permille)
{
	struct record *rec = ctx;

	lossless__fill(rec->ll, ring, permille);
}

/* ms of the plan's fastest rate that the room above the high mark of a ring of pages absorbs */
static double room_ms(const struct record *rec, size_t pages, unsigned int high)
{
	double room = (double)pages * (double)sysconf(_SC_PAGESIZE) * (1000 - high) / 1000 -
		      (double)rec->plan.max_record;

	return rec->plan.max_rate > 0 ? room / rec->plan.max_rate / 1e6 : 1e9;
}

/* PRECORD_PAUSE_ALLOW_MS=MS: allow for pauses this slow at least, as if the timing at start had
 * met one (the host's tails are known to be longer than a few cycles show). Returns 1 when it
 * is set, 0 when not, or -EINVAL (rec->refused) for a value that is not milliseconds from 0.1
 * to 50. */
static int pause_allowance(struct record *rec, struct lossless_stats *ls)
{
	const char *v = getenv("PRECORD_PAUSE_ALLOW_MS");
	char *end;
	double ms;

	if (!v || !*v)
		return 0;
	errno = 0;
	ms = strtod(v, &end);
	if (errno || *end || !(ms >= 0.1 && ms <= RINGSIZE_MAX_REACTION_NS / 1e6)) {
		rec->refused = true;
		seterr(rec, "invalid PRECORD_PAUSE_ALLOW_MS '%s' in the environment: expected "
			    "milliseconds from 0.1 to %.0f", v, RINGSIZE_MAX_REACTION_NS / 1e6);
		return -EINVAL;
	}
	if (ms * 1e6 > (double)ls->calib_worst_ns)
		ls->calib_worst_ns = (uint64_t)(ms * 1e6);
	return 1;
}

/* --lossless, once the pause is timed (lossless__new): the reaction to allow for is
 * ringsize__reaction of the slowest and the median cycle. A ring precord picks grows to cover it
 * (as far as the lock limit lets, which is then said); with an explicit -m the high mark is
 * lowered until the room above it does, unless --high-watermark was given or no mark can: such
 * a -m cannot be honoured here, and is refused (-EINVAL, rec->refused) naming the smallest
 * that would be, before the command starts. */
static int fit_rings(struct record *rec)
{
	struct lossless_stats ls;
	size_t pages = rec->o.mmap_pages, page = (size_t)sysconf(_SC_PAGESIZE);
	struct ringsize_plan need, twice;
	char spare[160] = "", m[96];
	const char *why;
	unsigned int h;
	int r, allowed;

	lossless__stats(rec->ll, &ls);
	allowed = pause_allowance(rec, &ls);
	if (allowed < 0)
		return allowed;
	rec->reaction_ns = ringsize__reaction(ls.calib_worst_ns, ls.calib_median_ns);
	if (rec->auto_ring) {
		uint64_t cover = RINGSIZE_AUTO_MARGIN * RINGSIZE_REACTION_NS;
		size_t want = auto_pages(rec, rec->reaction_ns > cover ? rec->reaction_ns : cover);

		if (want > pages && (uint64_t)rec->nr_cpus * (want + 1) * page <= lock_limit(rec))
			rec->o.mmap_pages = pages = want;
		notice(rec, "--lossless: rings of %zu KiB per CPU (records up to %llu bytes at up to "
			    "%.0f MB/s; pausing took %.2f ms, at most %.2f ms here, so %.1f ms are allowed "
			    "for; above the high mark, room for %.1f ms)",
		       pages_to_kib(pages), (unsigned long long)rec->plan.max_record,
		       rec->plan.max_rate * 1e3, ls.calib_median_ns / 1e6, ls.calib_worst_ns / 1e6,
		       rec->reaction_ns / 1e6,
		       room_ms(rec, pages, rec->o.high_permille));
	}
	if (room_ms(rec, pages, rec->o.high_permille) * 1e6 >= (double)rec->reaction_ns)
		return 0;
	h = ringsize__high_for(&rec->plan, (uint64_t)pages * page, rec->reaction_ns);
	if (!rec->o.high_given && h > rec->o.low_permille && lossless__set_high(rec->ll, h, rec->o.low_permille) == 0) {
		notice(rec, "--lossless: pausing took up to %.2f ms here: high watermark lowered from "
			    "%u%% to %u.%u%%, so that the room above it absorbs %.1f ms",
		       ls.calib_worst_ns / 1e6, rec->o.high_permille / 10, h / 10, h % 10,
		       rec->reaction_ns / 1e6);
		rec->o.high_permille = h;
		return 0;
	}
	if (rec->auto_ring) {	/* -m left out is never refused: what held the ring back is said */
		notice(rec, "--lossless: the room above the high mark absorbs %.1f ms of the %.1f ms "
			    "to allow for here: the ring is held to %zu KiB per CPU by the memory lock "
			    "limit (raise /proc/sys/kernel/perf_event_mlock_kb or ulimit -l) or by the "
			    "4 GiB at most a ring may have (lower -F or the stack size)",
		       room_ms(rec, pages, rec->o.high_permille), rec->reaction_ns / 1e6,
		       pages_to_kib(pages));
		return 0;
	}
	rec->refused = true;
	why = allowed ? "timed at start, or PRECORD_PAUSE_ALLOW_MS" : "timed at start";
	r = ringsize__plan(&rec->plan_ev, true, rec->o.high_permille, rec->reaction_ns,
			   RECORD_MAX_MMAP_PAGES, &need);
	if (r < 0) {
		seterr(rec, "--lossless cannot honour %s here: pausing takes up to %.2f ms (%s), "
			    "so %.1f ms must be allowed for, and no ring of "
			    "at most %zu KiB per CPU absorbs that above a high mark of %u.%u%%: lower -F "
			    "or the stack size of --call-graph dwarf,SIZE, or record on a less busy "
			    "machine", given_m(rec, m, sizeof(m)), ls.calib_worst_ns / 1e6, why, rec->reaction_ns / 1e6,
		       pages_to_kib(RECORD_MAX_MMAP_PAGES), rec->o.high_permille / 10,
		       rec->o.high_permille % 10);
		return -EINVAL;
	}
	/* The pause's timing at start varies from run to run (beside a CPU hog, 8 ms to allow for
	 * in one run and 12 ms in the next): a second ring, for a pause twice as slow, is named
	 * too, so that a rerun is not refused again. */
	if (ringsize__plan(&rec->plan_ev, true, rec->o.high_permille, 2 * rec->reaction_ns,
			   RECORD_MAX_MMAP_PAGES, &twice) == 0 && twice.min_pages > need.min_pages)
		snprintf(spare, sizeof(spare), ", and -m %zu (%zu KiB) for a pause twice as slow "
			 "(its timing varies from run to run)", twice.min_pages,
			 pages_to_kib(twice.min_pages));
	seterr(rec, "--lossless cannot honour %s here: pausing takes up to "
		    "%.2f ms (%s), so %.1f ms must be allowed for, and the "
		    "room above the high mark (%u.%u%%) absorbs %.1f ms; the minimum is -m %zu (%zu "
		    "KiB) for that%s. Leave -m out and precord picks a ring large enough%s",
	       given_m(rec, m, sizeof(m)), ls.calib_worst_ns / 1e6, why, rec->reaction_ns / 1e6,
	       rec->o.high_permille / 10, rec->o.high_permille % 10,
	       room_ms(rec, pages, rec->o.high_permille), need.min_pages,
	       pages_to_kib(need.min_pages), spare,
	       rec->o.high_given ? ", or give a lower --high-watermark" : "");
	return -EINVAL;
}

/* The pauser first: its guardian is a fork of this process, and a command must be in the
 * pause cgroup before it execs. */
static int start_lossless(struct record *rec)
{
	struct lossless_opts lo = {
		.nr_rings = rec->nr_cpus,
		.high_permille = rec->o.high_permille,
		.low_permille = rec->o.low_permille,
		.pids = rec->o.pids,
		.nr_pids = rec->o.nr_pids,
		.max_rate = rec->plan.max_rate,
	};
	int err;

	rec->ll = lossless__new();
	if (!rec->ll)
		return oom(rec, "--lossless");
	err = lossless__setup(rec->ll, &lo);
	if (err)
		seterr(rec, "--lossless: %s", lossless__error(rec->ll));
	else
		err = fit_rings(rec);
	if (err) {	/* before the target is placed: nothing of it to let go */
		lossless__free(rec->ll);
		rec->ll = NULL;
	}
	return err;
}

/* Why exec of cmd, a file that is there, said ENOENT: what it needs that is missing, into buf
 * ("the interpreter its #! line names, /x/y", or its ELF loader). Returns false when cmd is not
 * there after all. */
static bool exec_interpreter(const char *cmd, char *buf, size_t size)
{
	char file[PATH_MAX], line[256];
	_cleanup_fclose_ FILE *f = NULL;

	if (target__check_command(cmd, file, sizeof(file)) || !(f = fopen(file, "re")))
		return false;
	if (fgets(line, sizeof(line), f) && line[0] == '#' && line[1] == '!') {
		char *p = line + 2;

		p += strspn(p, " \t");
		p[strcspn(p, " \t\n")] = 0;
		snprintf(buf, size, "the interpreter its #! line names, %s,", p);
	} else {
		snprintf(buf, size, "its ELF loader (the interpreter it was linked for)");
	}
	return true;
}

/* The command, held before exec (and placed where it can be paused). */
static int start_command(struct record *rec)
{
	char file[PATH_MAX] = "";
	struct stat cs, os;
	int err = target__check_command(rec->o.argv[0], file, sizeof(file));
	bool named = strcmp(file, rec->o.argv[0]) != 0; /* found in PATH */

	if (err) {
		/* exec's own errno for the exit status (126 for all but ENOENT, as a shell's) */
		rec->exec_err = err == -ENOENT ? ENOENT : EACCES;
		if (err == -ENOENT)
			seterr(rec, "cannot run '%s': command not found (is it in PATH?)",
			       rec->o.argv[0]);
		else
			seterr(rec, "cannot run '%s': %s%s%s is %s", rec->o.argv[0],
			       named ? "the file found in PATH, " : "it", named ? file : "",
			       named ? "," : "",
			       err == -EISDIR ? "a directory, not a program" :
			       err == -ENODEV ? "not a regular file, not a program" :
			       "not executable (chmod +x it, or run it through its interpreter)");
		return err == -ENOENT ? -ENOENT : -EACCES;
	}
	/* -o naming the command itself would rename it to .old before it runs */
	if (stat(file, &cs) == 0 && stat(rec->o.output, &os) == 0 && cs.st_dev == os.st_dev &&
	    cs.st_ino == os.st_ino) {
		rec->refused = true;
		seterr(rec, "-o %s is the command '%s' itself: recording would move it to %s.old "
			    "(give -o another file)", rec->o.output, rec->o.argv[0], rec->o.output);
		return -EINVAL;
	}
	if (rec->o.lossless && (err = start_lossless(rec)))
		return err;
	/* --lossless: the command leads a process group of its own, which the backstop (when on)
	 * stops as a whole (its children too); we adopt the orphans of that group, so that it is
	 * never orphaned while a member is stopped (the kernel would send it SIGHUP) */
	if (rec->o.lossless)
		prctl(PR_SET_CHILD_SUBREAPER, 1);
	rec->tgt = rec->o.lossless ? target__fork_held_group(rec->o.argv) : target__fork_held(rec->o.argv);
	if (!rec->tgt) {
		err = -errno;
		seterr(rec, "cannot start '%s': %s", rec->o.argv[0], strerror(-err));
		return err;
	}
	err = lossless__adopt(rec->ll, target__pid(rec->tgt));
	if (err)
		seterr(rec, "--lossless: cannot place '%s' where it can be paused: %s",
		       rec->o.argv[0], strerror(-err));
	return err;
}

/* The tasks the events are opened on: the command (inherited by its children), the threads
 * of -p's processes, or -1 (every task on each CPU). */
static int choose_tasks(struct record *rec, bool follow)
{
	size_t cap = 0;
	int err;

	if (!follow && rec->o.nr_pids) {
		for (size_t i = 0; i < rec->o.nr_pids; i++) {
			err = list_threads(rec->o.pids[i], &rec->tids, &rec->nr_tids, &cap);
			if (err == -ENOMEM)
				return oom(rec, "the list of threads");
			if (err) {
				seterr(rec, "no process %d to record (-p): %s", rec->o.pids[i],
				       err == -ENOENT ? "it does not exist" : strerror(-err));
				return err == -ENOENT ? -ESRCH : err;
			}
		}
		rec->tgt = target__attach(rec->o.pids, rec->o.nr_pids);
		if (!rec->tgt) {
			err = -errno;
			seterr(rec, "cannot watch process %d: %s", rec->o.pids[0], strerror(-err));
			return err;
		}
		return 0;
	}
	rec->tids = malloc(sizeof(pid_t));
	if (!rec->tids)
		return oom(rec, "the list of threads");
	rec->tids[0] = follow ? target__pid(rec->tgt) : -1;
	rec->nr_tids = 1;
	return 0;
}

/* The reader pool and its threads, after /proc has been described (synthesis runs on the
 * same pool). */
static int start_readers(struct record *rec, bool follow)
{
	struct wq_opts wo = { .nr_workers = rec->o.nr_readers ? rec->o.nr_readers : rec->nr_cpus,
			      .scope = rec->o.affinity, .name = "precord-rd" };
	struct readers_opts ro = {
		.evlist = rec->el,
		.writer = rec->w,
		.comp_level = rec->o.comp_level,
		/* lossless: the readers' CPU is taken from the target. Long-distance matching
		 * costs ~1.2 ms per MiB against ~0.3 without; on the sched_yield storm it made
		 * the run 8% longer for a file 16% smaller. */
		.fast_compress = rec->o.lossless || rec->o.fast_compress,
		.attr = &rec->attrs[0],
		/* Not real-time even for --lossless: the watcher (SCHED_FIFO) is what reacts to a
		 * filling ring, and while the target is paused the readers have its CPUs anyway.
		 * Real-time readers preempted the target at every wakeup: on the sched_yield storm
		 * (-F 20000 --switch-events, DWARF, -m 64) that added 40% context switches and
		 * took the run from 5.5 s to 7.5 s, without a lost event less. */
		.realtime = false,
		/* lossless: small slices, so fill levels are seen between short compressions */
		.max_slice = rec->o.lossless ?
			     rec->o.mmap_pages * (size_t)sysconf(_SC_PAGESIZE) / 4 : 0,
		/* lossless: a full disk pauses the target (the rings fill) until there is space
		 * again, rather than lose what cannot be written */
		.hold_on_full = rec->o.lossless,
		.hooks = { rec, rec->ll ? on_task : NULL, rec->ll ? on_fill : NULL },
	};
	int err;

	if (wo.nr_workers > rec->nr_cpus) {
		/* A reader drains whole rings, one per CPU: more readers would idle. */
		if (rec->o.nr_readers)
			notice(rec, "--readers %u: only %zu CPU%s recorded, one ring each; using %zu reader%s",
			       rec->o.nr_readers, rec->nr_cpus, rec->nr_cpus == 1 ? " is" : "s are",
			       rec->nr_cpus, rec->nr_cpus == 1 ? "" : "s");
		wo.nr_workers = rec->nr_cpus;
	}
	rec->wq = wq__new(&wo);
	if (!rec->wq) {
		err = -errno;
		seterr(rec, "cannot start the reader threads: %s", strerror(-err));
		return err;
	}
	/* Synthesize before enabling, as perf does: the rings stay empty meanwhile, so a long
	 * walk of /proc cannot overflow them before the readers run. */
	err = synthesize(rec, follow);
	if (err && perf_writer__limit_hit(rec->w)) {
		seterr(rec, "the description of the running processes alone passes the size limit "
		       "of %llu bytes: %s", (unsigned long long)rec->o.max_size,
		       rec->o.max_size_remedy ? rec->o.max_size_remedy : "give a larger --max-size");
		return err;
	}
	if (err) {
		seterr(rec, "cannot describe the running processes (from /proc): %s", strerror(-err));
		return err;
	}
	ro.wq = rec->wq;
	ro.nr_readers = wq__nr_workers(rec->wq);
	rec->rd = readers__start(&ro);
	if (!rec->rd) {
		err = -errno;
		seterr(rec, "cannot start the reader threads: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* --lossless: the watcher looks at every ring. */
static int watch_rings(struct record *rec)
{
	size_t n = evlist__nr_rings(rec->el);
	int err;

	rec->rings = calloc(n, sizeof(*rec->rings));
	if (!rec->rings)
		return oom(rec, "the lossless watcher's list of rings");
	for (size_t i = 0; i < n; i++)
		rec->rings[i] = evlist__ring(rec->el, i);
	err = arm_backstop(rec);
	if (err)
		return err;
	err = lossless__watch(rec->ll, rec->rings, n == rec->nr_cpus ? rec->cpus : NULL, n);
	if (err)
		seterr(rec, "--lossless: cannot start the watcher thread: %s", strerror(-err));
	return err;
}

/* One fd per (event, CPU, thread): refuse before opening any when that exceeds max_fds. */
static int check_fds(struct record *rec)
{
	if (!rec->o.max_fds || rec->nr_tids <= rec->o.max_fds / rec->nr_cpus / rec->nr_ev)
		return 0;
	seterr(rec, "recording %zu threads on %zu CPUs needs %zu file descriptors, more than the "
		    "limit of %zu (record fewer threads, or raise the limit)", rec->nr_tids,
	       rec->nr_cpus, rec->nr_tids * rec->nr_cpus * rec->nr_ev, rec->o.max_fds);
	return -EMFILE;
}

/* A start that failed: the readers stop (they flush into the writer) before the writer goes,
 * and the file that was there goes back (perf_writer__discard; an older .old it replaced does
 * not). */
static void start_failed(struct record *rec)
{
	readers__free(rec->rd);
	rec->rd = NULL;
	perf_writer__discard(rec->w);
	rec->w = NULL;
}

int record__start(struct record *rec)
{
	bool command = rec->o.argv && rec->o.argv[0];
	/* with -a a command only says how long to record; the events cover every task */
	bool follow = command && !rec->o.system_wide;
	int err;

	if (!rec->nr_ev || rec->started) {
		seterr(rec, "the recording session is %s",
		       rec->started ? "already started" : "not set up (record__setup)");
		return -EINVAL;
	}
	raise_nofile();
	if (command)
		err = start_command(rec);
	else
		err = rec->o.lossless ? start_lossless(rec) : 0;
	if (!err)
		err = choose_tasks(rec, follow);
	if (!err)
		err = check_fds(rec);
	if (!err)
		err = open_events(rec, follow);
	if (!err)
		err = open_file(rec);
	if (!err)
		err = start_readers(rec, follow);
	if (!err && rec->ll)
		err = watch_rings(rec);
	if (!err && !follow && (err = evlist__enable(rec->el)))
		seterr(rec, "cannot enable the events: %s", strerror(-err));
	if (err) {
		start_failed(rec);
		return err;
	}
	rec->started = true;
	rec->t0_ns = clock__ns();
	rec->steal0_ns = topology__steal_ns("/proc");
	rec->last_sync_ns = rec->t0_ns;
	if (command) {
		err = target__release(rec->tgt);
		if (err) {
			char interp[256];

			rec->exec_err = -err;
			if (err == -ENOENT && exec_interpreter(rec->o.argv[0], interp, sizeof(interp)))
				seterr(rec, "cannot run '%s': it is there, but %s does not exist",
				       rec->o.argv[0], interp);
			else
				seterr(rec, "cannot run '%s': %s%s", rec->o.argv[0], strerror(-err),
				       err == -ENOENT ? " (is it in PATH?)" : "");
			/* the command never ran: no recording of it, as for a start that failed
			 * before (its events, enabled on exec, counted nothing) */
			start_failed(rec);
			rec->started = false;
			return err;
		}
	}
	return 0;
}

/* Say at once (at the next poll) that the file cannot be written: what it costs, and what to do;
 * even to a quiet caller (alert): a target held paused by a full disk looks hung otherwise. */
static void notice_write_state(struct record *rec)
{
	struct readers_stats rs;

	if (!rec->rd)
		return;
	readers__stats(rec->rd, &rs);
	if (rs.waiting && !rec->waiting_told) {
		rec->waiting_told = true;
		alert(rec, "cannot write %s: %s: --lossless pauses the target until there is space "
		       "again (free some on that file system; Ctrl-C ends the recording and counts "
		       "what is waiting as lost)", rec->o.output, strerror(ENOSPC));
	} else if (!rs.waiting && rec->waiting_told && !rs.unwritten_records) {
		rec->waiting_told = false;
		alert(rec, "%s: there is space again; recording goes on", rec->o.output);
	}
	if (rs.unwritten_records > rec->unwritten_told) {
		/* past max_size is not a failure to write: the caller ends the recording */
		if (!rec->unwritten_told && !perf_writer__limit_hit(rec->w))
			alert(rec, "cannot write %s: %s: what cannot be written is counted as lost "
			       "(free some space, or record elsewhere with -o)", rec->o.output,
			       strerror(rs.error ? -rs.error : EIO));
		rec->unwritten_told = rs.unwritten_records;
	}
}

int record__poll(struct record *rec, int timeout_ms)
{
	uint64_t now;
	int r = 0;

	if (rec->tgt) {
		if (target__ended(rec->tgt, &rec->target_status)) {
			r = 1;
		} else {
			struct pollfd p = { .fd = target__fd(rec->tgt), .events = POLLIN };
			int n = poll(&p, 1, timeout_ms);

			if (n < 0 && errno == EINTR)
				r = -EINTR;
			else if (target__ended(rec->tgt, &rec->target_status))
				r = 1;
		}
	} else {
		struct timespec ts = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };

		if (nanosleep(&ts, NULL) < 0 && errno == EINTR)
			r = -EINTR;
	}
	if (r == 1 && !rec->target_ended) {
		rec->target_ended = true;
		rec->t_end_ns = clock__ns();
	}
	notice_write_state(rec);
	now = clock__ns();
	if (rec->w && now - rec->last_sync_ns >= 500000000) {
		perf_writer__sync(rec->w);
		rec->last_sync_ns = now;
	}
	return r;
}

/* Append the sample_id trailer of event a's records (ring r) to buf at n; returns the new n. */
static size_t put_sample_id(const struct record *rec, size_t a, size_t r, uint64_t id, uint64_t *buf,
			    size_t n)
{
	uint64_t st = rec->attrs[a].sample_type;

	if (!rec->attrs[a].sample_id_all)
		return n;
	/* tid, time, id, stream_id, cpu, identifier, in that order */
	if (st & PERF_SAMPLE_TID)
		buf[n++] = 0;
	if (st & PERF_SAMPLE_TIME)
		buf[n++] = 0;
	if (st & PERF_SAMPLE_ID)
		buf[n++] = id;
	if (st & PERF_SAMPLE_STREAM_ID)
		buf[n++] = 0;
	if (st & PERF_SAMPLE_CPU)
		buf[n++] = (uint64_t)evlist__ring_cpu(rec->el, r);
	if (st & PERF_SAMPLE_IDENTIFIER)
		buf[n++] = id;
	return n;
}

/* The file's ring-order claim (perf/ring_order.h): one ring per recorded CPU, each appended in
 * the order drained, and the largest step back in time the readers have seen in any ring so far
 * (this file's and the files before it: never less than this file's own). Without it (it could
 * not be set) a reader falls back on the FINISHED_ROUND markers alone. */
static void write_ring_order(struct record *rec, struct perf_writer *w)
{
	size_t n = evlist__nr_rings(rec->el);
	_cleanup_free_ uint32_t *cpus = calloc(n ? n : 1, sizeof(*cpus));
	struct readers_stats rs;

	if (!cpus || !rec->rd)
		return;
	readers__stats(rec->rd, &rs);
	for (size_t i = 0; i < n; i++)
		cpus[i] = (uint32_t)evlist__ring_cpu(rec->el, i);
	ring_order__write(w, &(struct ring_order){ .max_back_ns = rs.max_back_ns,
						   .nr_cpus = (uint32_t)n, .cpus = cpus });
}

/* What the readers drained but could not write (a full disk) goes into the file as one
 * PERF_RECORD_LOST {id, lost records} and one PERF_RECORD_LOST_SAMPLES {lost samples}, in the
 * space the writer keeps for the file's end: perf and preport count them as lost. */
static int write_unwritten(struct record *rec, const struct readers_stats *rs)
{
	size_t nids;
	const uint64_t *ids = evlist__ids(rec->el, 0, &nids);
	uint64_t id = nids ? ids[0] : 0;
	uint64_t buf[16];
	struct perf_event_header *h = (void *)buf;
	size_t n = 1;
	int err;

	if (!rs->unwritten_records)
		return 0;
	buf[n++] = id;
	buf[n++] = rs->unwritten_records;
	n = put_sample_id(rec, 0, 0, id, buf, n);
	*h = (struct perf_event_header){ .type = PERF_RECORD_LOST, .size = n * 8 };
	err = perf_writer__append_closing(rec->w, &(struct iovec){ buf, n * 8 }, 1);
	if (err || !rs->unwritten_samples)
		return err;
	n = 1;
	buf[n++] = rs->unwritten_samples;
	n = put_sample_id(rec, 0, 0, id, buf, n);
	*h = (struct perf_event_header){ .type = PERF_RECORD_LOST_SAMPLES, .size = n * 8 };
	return perf_writer__append_closing(rec->w, &(struct iovec){ buf, n * 8 }, 1);
}

/* PERF_RECORD_LOST_SAMPLES {u64 lost} with a sample_id trailer, one per event and CPU. */
static int write_lost_samples(struct record *rec)
{
	for (size_t a = 0; a < rec->nr_ev; a++) {
		size_t nids;
		const uint64_t *ids = evlist__ids(rec->el, a, &nids);

		for (size_t r = 0; r < evlist__nr_rings(rec->el); r++) {
			uint64_t lost = 0, buf[16];
			struct perf_event_header *h = (void *)buf;
			size_t n = 1;
			uint64_t id = ids[r * rec->nr_tids];

			if (evlist__lost_samples(rec->el, a, r, &lost) < 0 || !lost)
				continue;
			rec->lost_samples += lost;
			buf[n++] = lost;
			n = put_sample_id(rec, a, r, id, buf, n);
			h->type = PERF_RECORD_LOST_SAMPLES;
			h->misc = 0;
			h->size = n * 8;
			struct iovec iov = { buf, n * 8 };
			int err = perf_writer__append_closing(rec->w, &iov, 1);

			if (err)
				return err;
		}
	}
	return 0;
}

/* The command's group members that were orphaned and came to us (subreaper) and have ended:
 * reap them (once the command itself is reaped; those still running go on). */
static void reap_orphans(struct record *rec)
{
	pid_t pgid = rec->tgt ? target__pgid(rec->tgt) : 0;

	if (pgid > 0 && rec->target_ended)
		while (waitpid(-pgid, NULL, WNOHANG) > 0)
			;
}

int record__stop(struct record *rec)
{
	int err = 0, e;

	if (rec->stopped)
		return 0;
	rec->stopped = true;
	if (!rec->started) {
		lossless__free(rec->ll);
		rec->ll = NULL;
		return 0;
	}
	if (!rec->target_ended)
		rec->t_end_ns = clock__ns();
	/* The run ends at t_end_ns: a pause in progress counts until then. Counted until the
	 * summary instead, it took in the wait for the command after SIGTERM and the last drain,
	 * seconds with a busy tree, and came to more than the run. */
	lossless__end(rec->ll, rec->t_end_ns);
	/* The events first, as perf does: what the target does from now on is not recorded, so
	 * resumed it cannot fill a ring (resumed with the events on while the command was given
	 * its time to end, a tree of processes ran unpaused and lost events). */
	evlist__disable(rec->el);
	if (!rec->target_ended && rec->tgt && record__target_status(rec) < 0 && rec->o.argv) {
		/* Recording ends before the command: resume it, then ask it to end. */
		lossless__release(rec->ll);
		target__terminate(rec->tgt);
		if (target__wait(rec->tgt, TERM_WAIT_MS, &rec->target_status))
			rec->target_ended = true;
		else
			rec->left_running = true;
	}
	{
		unsigned long long st = topology__steal_ns("/proc");

		rec->steal_ns = st > rec->steal0_ns ? st - rec->steal0_ns : 0;
	}
	e = readers__stop(rec->rd);
	lossless__release(rec->ll);
	reap_orphans(rec);
	{
		/* What was drained but not written (a full disk, or past max_size) goes into the
		 * file as lost, whatever else failed. */
		struct readers_stats rs;
		int e2;

		readers__stats(rec->rd, &rs);
		e2 = write_unwritten(rec, &rs);
		if (e && !err) {
			err = e;
			if (rs.unwritten_records)
				seterr(rec, "cannot write %s: %s: %llu records (%llu samples) could "
				       "not be written; %s", rec->o.output, strerror(-e),
				       (unsigned long long)rs.unwritten_records,
				       (unsigned long long)rs.unwritten_samples,
				       e2 ? "not even the count of them fits in the file" :
					    "the file counts them as lost");
			else
				seterr(rec, "cannot write %s: %s", rec->o.output, strerror(-e));
		} else if (e2 && !err) {
			err = e2;
			seterr(rec, "cannot write %s: %s", rec->o.output, strerror(-e2));
		}
	}
	e = write_lost_samples(rec);
	if (e && !err) {
		err = e;
		seterr(rec, "cannot write %s: %s", rec->o.output, strerror(-e));
	}
	if (rec->ll) {
		struct lossless_stats ls;
		struct pause_stats ps = { 0 };

		lossless__stats(rec->ll, &ls);
		ps.pauses = ls.pauses;
		ps.paused_ns = (uint64_t)(ls.paused_total * 1e9);
		ps.longest_ns = (uint64_t)(ls.paused_longest * 1e9);
		/* the run of the summary's "% of the run", which the paused time stops at */
		ps.recording_ns = rec->t_end_ns - rec->t0_ns;
		snprintf(ps.mechanism, sizeof(ps.mechanism), "%s", ls.mechanism ? ls.mechanism : "");
		ps.by_ring = ls.pauses_by_ring;
		ps.nr_rings = (uint32_t)ls.nr_rings;
		pause_stats__write(rec->w, &ps);
	}
	write_ring_order(rec, rec->w);
	e = perf_writer__finalize(rec->w);
	if (e && !err) {
		err = e;
		seterr(rec, "cannot finish %s: %s", rec->o.output, strerror(-e));
	}
	return err;
}

int record__target_status(const struct record *rec)
{
	if (!rec->o.argv || !rec->target_ended)
		return -1;
	return rec->target_status;
}

void record__stats(const struct record *rec, struct record_stats *s)
{
	struct readers_stats rs = { 0 };

	memset(s, 0, sizeof(*s));
	if (rec->rd)
		readers__stats(rec->rd, &rs);
	if (rec->started)
		s->elapsed = ((rec->stopped || rec->target_ended ? rec->t_end_ns : clock__ns()) -
			      rec->t0_ns) / 1e9;
	s->samples = rs.samples;
	s->records = rs.records;
	s->switches = rs.switches;
	s->lost_records = rs.lost_records;
	s->lost_events = rs.lost_events;
	s->lost_samples = rec->lost_samples;
	s->left_running = rec->left_running && rec->tgt ? target__pid(rec->tgt) : 0;
	s->unwritten_records = rs.unwritten_records;
	s->unwritten_samples = rs.unwritten_samples;
	s->unwritten_bytes = rs.unwritten_bytes;
	s->bytes_read = rs.bytes_read;
	s->bytes_written = rec->w ? perf_writer__data_size(rec->w) : 0;
	s->limit_hit = rec->w && perf_writer__limit_hit(rec->w);
	s->wakeups = rs.wakeups;
	s->nr_readers = rec->rd ? readers__count(rec->rd) : 0;
	s->nr_rings = rec->el ? evlist__nr_rings(rec->el) : 0;
	if (rec->ll) {
		struct lossless_stats ls;

		lossless__stats(rec->ll, &ls);
		s->pause_mechanism = ls.mechanism;
		s->pauses = ls.pauses;
		s->paused_total = ls.paused_total;
		s->paused_longest = ls.paused_longest;
		s->pauses_by_ring = ls.pauses_by_ring;
		s->pause_error = ls.action_error;
		s->watcher_looks = ls.looks;
		s->pause_after_ns = ls.after_worst_ns;
		s->pause_after_bytes = ls.after_worst_bytes;
		s->watcher_late_ns = ls.late_worst_ns;
		s->pause_decided_permille = ls.decided_worst_permille;
		s->pause_call_ns = ls.pause_call_worst_ns;
		s->resume_call_ns = ls.resume_call_worst_ns;
		s->pause_wait_ns = ls.act_wait_worst_ns;
		s->pause_reasserts = ls.reasserts;
		s->pause_high_permille = rec->o.high_permille;
		s->pause_room_bytes = (uint64_t)rec->o.mmap_pages * (uint64_t)sysconf(_SC_PAGESIZE) *
				      (1000 - rec->o.high_permille) / 1000;
		s->pause_allowed_ms = rec->reaction_ns / 1e6;
		s->steal_ns = rec->steal_ns;
		for (size_t i = 0; i < ls.nr_rings && i < rec->nr_cpus; i++)
			s->pause_ring_cpu[i < RECORD_MAX_RING_STATS ? i : RECORD_MAX_RING_STATS - 1] = rec->cpus[i];
	}
}

/* Rotation: what a new file needs so that it stands alone. */

static int push_pid(pid_t pid, pid_t **list, size_t *nr, size_t *cap)
{
	for (size_t i = 0; i < *nr; i++)
		if ((*list)[i] == pid)
			return 0;
	if (*nr == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		pid_t *t = realloc(*list, nc * sizeof(pid_t));

		if (!t)
			return -ENOMEM;
		*list = t;
		*cap = nc;
	}
	(*list)[(*nr)++] = pid;
	return 0;
}

/* Add root and its descendants (parents from /proc/N/stat) to the list, each once. */
static int add_tree(pid_t root, pid_t **list, size_t *nr, size_t *cap)
{
	_cleanup_free_ pid_t *all = NULL;   /* pid, ppid pairs */
	_cleanup_free_ pid_t *queue = NULL;
	size_t n = 0, acap = 0, qh = 0, qt = 0;
	struct dirent *de;
	DIR *d;
	int err;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char path[300], buf[512], *rp;
		FILE *f;
		int pp;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* the comm may hold spaces and parentheses: the state follows the last ')' */
		rp = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (!rp || sscanf(rp + 1, " %*c %d", &pp) != 1)
			continue;
		if (n == acap) {
			size_t nc = acap ? acap * 2 : 512;
			pid_t *a = realloc(all, nc * 2 * sizeof(pid_t));

			if (!a) {
				closedir(d);
				return -ENOMEM;
			}
			all = a;
			acap = nc;
		}
		all[2 * n] = atoi(de->d_name);
		all[2 * n + 1] = pp;
		n++;
	}
	closedir(d);
	queue = malloc((n + 1) * sizeof(pid_t));
	if (!queue)
		return -ENOMEM;
	queue[qt++] = root;
	while (qh < qt) {
		pid_t cur = queue[qh++];

		err = push_pid(cur, list, nr, cap);
		if (err)
			return err;
		for (size_t j = 0; j < n && qt <= n; j++)
			if (all[2 * j + 1] == cur && all[2 * j] != cur)
				queue[qt++] = all[2 * j];
	}
	return 0;
}

/* What a new file must describe before ring data: the kernel map and, for -a every process,
 * else the target processes with their descendants as they are now. */
static int synthesize_again(struct record *rec)
{
	size_t nids, nr = 0, cap = 0;
	const uint64_t *ids = evlist__ids(rec->el, 0, &nids);
	struct synth_opts so = {
		.attr = &rec->attrs[0],
		.id = ids[0],
		.cpu = (uint32_t)rec->cpus[0],
		.wq = NULL, /* the workqueue's workers are the readers: they never return */
	};
	_cleanup_free_ pid_t *pids = NULL;
	int err;

	if (rec->o.user_only)
		err = 0;
	else if (rec->kmmap)
		err = synth_emit(rec, rec->kmmap, rec->kmmap_len);
	else
		err = synthesize__kernel_mmap(&so, synth_emit_kernel, rec);
	if (err && err != -EACCES && err != -ENOENT)
		return err;
	err = synthesize_cgroups(rec, &so);
	if (err)
		return err;
	if (rec->o.system_wide)
		return synthesize__all(&so, synth_emit, rec, NULL);
	if (rec->tgt && rec->o.argv && rec->o.argv[0]) {
		err = add_tree(target__pid(rec->tgt), &pids, &nr, &cap);
		if (err)
			return err;
	}
	for (size_t i = 0; i < rec->o.nr_pids; i++) {
		err = add_tree(rec->o.pids[i], &pids, &nr, &cap);
		if (err)
			return err;
	}
	return nr ? synth_pids(rec, &so, pids, nr) : 0;
}

int record__rotate(struct record *rec, const char *new_path)
{
	struct perf_writer *old = rec->w;
	const char *old_path = rec->o.output;
	_cleanup_free_ char *path = strdup(new_path);
	int err;

	if (!path)
		return -ENOMEM;
	if (!rec->started || rec->stopped) {
		seterr(rec, "cannot rotate: not recording");
		return -EINVAL;
	}
	rec->o.output = path;
	err = open_file(rec);   /* sets rec->w, or the error */
	if (err) {
		rec->w = old;
		rec->o.output = old_path;
		return err;
	}
	/* Before the swap, so the new file's time-0 records precede all of its ring data. A task
	 * that starts during this walk is described only in the old file. */
	err = synthesize_again(rec);
	/* the header claims the synthesized part at once: a kill now leaves a readable file */
	if (!err)
		err = perf_writer__sync(rec->w);
	if (!err)
		err = readers__swap_writer(rec->rd, rec->w);
	if (err) {
		seterr(rec, "cannot start %s: %s", path, strerror(-err));
		perf_writer__free(rec->w);
		unlink(path);
		rec->w = old;
		rec->o.output = old_path;
		return err;
	}
	free(rec->rotated_output);
	rec->rotated_output = TAKE_PTR(path);
	rec->last_sync_ns = clock__ns();
	/* all the old file's data first, so a kill while the features are written loses none */
	perf_writer__sync(old);
	write_ring_order(rec, old);
	err = perf_writer__finalize(old);
	if (err)
		seterr(rec, "cannot finish %s: %s", old_path, strerror(-err));
	perf_writer__free(old);
	return err;
}

int record__sync(struct record *rec)
{
	if (!rec->w || rec->stopped)
		return 0;
	rec->last_sync_ns = clock__ns();
	return perf_writer__sync(rec->w);
}
