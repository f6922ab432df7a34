/* preport: reads any perf.data (precord's or perf's), unwinds DWARF stacks in parallel and
 * reports what perf report reports. Records are applied in time order on this thread; samples
 * are gathered in batches with a snapshot of their process's maps at their time, unwound over
 * the workqueue's parallel_for, then added to the report in order. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "unwind/elfcache.h"
#include "unwind/maps.h"
#include "perf/abi.h"
#include "perf/reader.h"
#include "perf/sample.h"
#include "report/report.h"
#include "unwind/symbols.h"
#include "unwind/unwinder.h"
#include "lib/workqueue.h"
#include "perf/pause_stats.h"

#ifndef PRECORD_VERSION
#define PRECORD_VERSION "0.1"
#endif

enum { EXIT_DAMAGED = 1, EXIT_USAGE = 2, EXIT_FAIL = 3 };

#define BATCH 2048
#define ARENA_SIZE (24u << 20)

struct item {
	struct perf_sample s;
	struct map_snapshot *snap;
	const char *comm;
	int attr;
	bool filtered;          /* counted, not unwound */
	int nr_frames;
	struct unwind_frame *frames;
};

struct ctx {
	struct perf_reader *r;
	struct machine *m;
	struct wq *wq;
	struct report **reports; /* one per attr */
	size_t nr_attrs;
	int max_stack;
	/* filters preport applies before unwinding (the report applies them too) */
	const int32_t *pids, *tids, *cpus;
	size_t nr_pids, nr_tids, nr_cpus;
	const char *const *comms;
	size_t nr_comms;
	/* the batch */
	struct item items[BATCH];
	size_t nr_items;
	uint8_t *arena;
	size_t arena_used;
	struct unwind_frame *frame_pool;
	uint64_t nr_samples, nr_bad_samples, nr_frames;
	int err;
};

static bool verbose;

static void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err(const char *fmt, ...)
{
	va_list ap;

	fputs("preport: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* One unwinder per thread that takes part in parallel_for, freed at the end. */
static __thread struct unwinder *tl_unwinder;
static pthread_mutex_t unwinders_lock = PTHREAD_MUTEX_INITIALIZER;
static struct unwinder *unwinders[256];
static size_t nr_unwinders;

static struct unwinder *thread_unwinder(void)
{
	if (!tl_unwinder) {
		tl_unwinder = unwinder__new();
		if (!tl_unwinder)
			return NULL;
		pthread_mutex_lock(&unwinders_lock);
		if (nr_unwinders < 256)
			unwinders[nr_unwinders++] = tl_unwinder;
		pthread_mutex_unlock(&unwinders_lock);
	}
	return tl_unwinder;
}

static void unwind_one(size_t i, void *arg)
{
	struct ctx *c = arg;
	struct item *it = &c->items[i];
	struct unwinder *u;
	int n;

	if (it->filtered) {
		it->nr_frames = 1;
		it->frames[0] = (struct unwind_frame){ .ip = it->s.ip };
		return;
	}
	u = thread_unwinder();
	n = u ? unwinder__unwind(u, it->snap, &it->s, it->frames, c->max_stack) : -ENOMEM;
	if (n <= 0) {
		it->nr_frames = 1;
		it->frames[0] = (struct unwind_frame){ .ip = it->s.ip };
		unwind_frame__resolve(it->snap, it->s.ip, true, &it->frames[0]);
	} else {
		it->nr_frames = n;
	}
}

static const char *short_dso(const struct unwind_frame *f)
{
	const char *name, *slash;

	if (!f->dso)
		return NULL;
	name = dso__name(f->dso);
	if (!name)
		return NULL;
	if (name[0] == '[')
		return name;
	slash = strrchr(name, '/');
	return slash ? slash + 1 : name;
}

static int flush_batch(struct ctx *c)
{
	struct report_frame rf[512];
	int ret = 0;

	if (!c->nr_items)
		return 0;
	if (!c->wq || wq__parallel_for(c->wq, c->nr_items, 8, unwind_one, c) < 0)
		for (size_t i = 0; i < c->nr_items; i++)
			unwind_one(i, c);
	for (size_t i = 0; i < c->nr_items; i++) {
		struct item *it = &c->items[i];
		struct report_sample rs;
		int n = it->nr_frames < 512 ? it->nr_frames : 512;

		for (int k = 0; k < n; k++) {
			/* perf stores a DWARF-unwound caller at its return address - 1, and shows
			 * that address when no symbol holds it. */
			uint64_t adj = it->frames[k].caller ? 1 : 0;

			rf[k].ip = it->frames[k].ip - adj;
			rf[k].map_ip = it->frames[k].addr - adj;
			rf[k].sym_start = it->frames[k].sym ? it->frames[k].sym->start : 0;
			rf[k].dso = short_dso(&it->frames[k]);
			rf[k].sym = unwind_frame__name(&it->frames[k]);
			rf[k].kernel = it->frames[k].kernel;
		}
		c->nr_frames += n;
		rs = (struct report_sample){
			.comm = it->comm ? it->comm : ":unknown",
			.pid = (int32_t)it->s.pid,
			.tid = (int32_t)it->s.tid,
			.cpu = (perf_reader__attr(c->r, it->attr)->attr.sample_type & PERF_SAMPLE_CPU) ?
				       (int32_t)it->s.cpu : -1,
			.period = it->s.period ? it->s.period : 1,
			.time = it->s.time,
			.nr_frames = n,
			.frames = rf,
		};
		if (report__add_sample(c->reports[it->attr], &rs) < 0 && !ret)
			ret = -ENOMEM;
		map_snapshot__put(it->snap);
	}
	c->nr_items = 0;
	c->arena_used = 0;
	return ret;
}

static bool in_list(const int32_t *l, size_t n, int32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] == v)
			return true;
	return false;
}

static bool comm_in_list(const char *const *l, size_t n, const char *v)
{
	for (size_t i = 0; i < n; i++)
		if (v && !strcmp(l[i], v))
			return true;
	return false;
}

static int on_record(const struct perf_reader_record *rec, void *arg)
{
	struct ctx *c = arg;
	const struct perf_event_header *h = rec->hdr;
	struct item *it;
	uint8_t *copy;
	int a;

	if (h->type != PERF_RECORD_SAMPLE) {
		if (h->type < PERF_RECORD_USER_TYPE_START) {
			/* A record that changes maps must not overtake batched samples that came
			 * before it: their snapshots are already taken, so nothing to flush. */
			int e = machine__process(c->m, h);

			if (e == -ENOMEM)
				return e;
		}
		return 0;
	}
	a = rec->attr_index < 0 ? 0 : rec->attr_index;
	if ((size_t)a >= c->nr_attrs)
		a = 0;
	if (c->nr_items == BATCH || c->arena_used + h->size > ARENA_SIZE) {
		int e = flush_batch(c);

		if (e)
			return e;
	}
	it = &c->items[c->nr_items];
	copy = c->arena + c->arena_used;
	memcpy(copy, h, h->size);
	if (perf_sample__parse(&perf_reader__attr(c->r, a)->attr, (void *)copy, &it->s) < 0) {
		c->nr_bad_samples++;
		return 0;
	}
	if (c->nr_cpus && !in_list(c->cpus, c->nr_cpus, (int32_t)it->s.cpu))
		return 0;
	c->arena_used += (h->size + 7) & ~7u;
	c->nr_samples++;
	it->attr = a;
	it->comm = machine__comm_of(c->m, (int32_t)it->s.pid, (int32_t)it->s.tid);
	it->filtered = (c->nr_pids && !in_list(c->pids, c->nr_pids, (int32_t)it->s.pid)) ||
		       (c->nr_tids && !in_list(c->tids, c->nr_tids, (int32_t)it->s.tid)) ||
		       (c->nr_comms && !comm_in_list(c->comms, c->nr_comms, it->comm));
	it->snap = machine__snapshot(c->m, (int32_t)it->s.pid);
	if (!it->snap)
		return -ENOMEM;
	it->frames = c->frame_pool + c->nr_items * (size_t)c->max_stack;
	c->nr_items++;
	return 0;
}

/* --stats: records by type and per event, without unwinding anything. */
struct stats_ctx {
	struct perf_reader *r;
	struct report_stats st;
	struct report_event_stats *ev;
};

static int on_stat_record(const struct perf_reader_record *rec, void *arg)
{
	struct stats_ctx *c = arg;
	const struct perf_event_header *h = rec->hdr;
	int a = rec->attr_index;

	if (h->type < REPORT_NR_RECORD_TYPES)
		c->st.nr_events[h->type]++;
	if (a < 0 || (size_t)a >= c->st.nr_events_stats)
		a = 0;
	if (h->type == PERF_RECORD_SAMPLE) {
		c->ev[a].nr_samples++;
	} else if (h->type == PERF_RECORD_LOST_SAMPLES && h->size >= 16) {
		uint64_t n;

		memcpy(&n, (const char *)h + 8, 8);
		c->ev[a].nr_lost_samples += n;
		c->st.total_lost_samples += n;
	}
	return 0;
}

static int parse_int_list(const char *s, int32_t **ret, size_t *nr)
{
	_cleanup_free_ char *copy = strdup(s);
	char *p = copy, *tok;

	if (!copy)
		return -ENOMEM;
	while ((tok = strsep(&p, ","))) {
		char *end;
		long v = strtol(tok, &end, 10);
		int32_t *n;

		if (!*tok || *end || v < 0 || v > INT_MAX)
			return -EINVAL;
		n = realloc(*ret, (*nr + 1) * sizeof(int32_t));
		if (!n)
			return -ENOMEM;
		*ret = n;
		(*ret)[(*nr)++] = (int32_t)v;
	}
	return 0;
}

static int parse_str_list(char *s, const char ***ret, size_t *nr)
{
	char *tok;

	while ((tok = strsep(&s, ","))) {
		const char **n = realloc(*ret, (*nr + 1) * sizeof(char *));

		if (!n)
			return -ENOMEM;
		*ret = n;
		(*ret)[(*nr)++] = tok;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: preport [options] [-i FILE]\n"
"Reads perf.data (from precord or perf record) and reports like perf report --stdio.\n"
"\n"
"  -i, --input FILE       the recording (default perf.data)\n"
"      --stdio            text output (the default; accepted for perf compatibility)\n"
"      --children         Children and Self columns (the default with call graphs)\n"
"      --no-children      Self only\n"
"  -s, --sort KEYS        comma-separated: comm, dso, sym, pid, tid, cpu (default comm,dso,sym)\n"
"  -g, --call-graph ARG   graph or none, caller or callee, and a minimum percent,\n"
"                         e.g. -g caller,1 (default graph,0.5)\n"
"      --folded           collapsed stacks: one line 'comm;root;...;leaf COUNT' per stack\n"
"      --flamegraph FILE  write an interactive SVG flame graph to FILE\n"
"      --stats            records by type, samples, lost events, precord's pauses\n"
"      --header           print the recording's header information first\n"
"      --pid PIDS, --tid TIDS, --comm NAMES, --cpu CPUS   only these (comma-separated)\n"
"      --max-stack N      deepest call chain to unwind (default 127)\n"
"  -j, --jobs N           unwinding threads (default: online CPUs)\n"
"      --force            report a damaged file and exit 0\n"
"      --repair OUT       rewrite the readable part of a damaged file into OUT\n"
"  -q, --quiet            no warnings\n"
"  -v, --verbose          timing and unwinding statistics on stderr\n"
"  -h, --help             this text\n"
"      --version          preport's version\n"
"\n"
"Exit status: 0 success, 1 the file is damaged (the report covers what precedes the damage;\n"
"--force makes it 0), 2 bad usage, 3 the file cannot be read.\n");
}

enum {
	OPT_STDIO = 256, OPT_CHILDREN, OPT_NO_CHILDREN, OPT_FOLDED, OPT_FLAME, OPT_STATS,
	OPT_HEADER, OPT_PID, OPT_TID, OPT_COMM, OPT_CPU, OPT_MAXSTACK, OPT_FORCE, OPT_REPAIR,
	OPT_VERSION,
};

static const struct option longopts[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "stdio", no_argument, NULL, OPT_STDIO },
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
	{ "sort", required_argument, NULL, 's' },
	{ "call-graph", required_argument, NULL, 'g' },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "flamegraph", required_argument, NULL, OPT_FLAME },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "header", no_argument, NULL, OPT_HEADER },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "max-stack", required_argument, NULL, OPT_MAXSTACK },
	{ "jobs", required_argument, NULL, 'j' },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "repair", required_argument, NULL, OPT_REPAIR },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 }
};

static void print_header(FILE *f, struct perf_reader *r, const char *path)
{
	const struct perf_reader_info *in = perf_reader__info(r);
	const struct perf_file_header *h = perf_reader__header(r);

	fprintf(f, "# ========\n# file          : %s\n", path);
	fprintf(f, "# data offset   : %llu\n# data size     : %llu\n",
		(unsigned long long)h->data.offset, (unsigned long long)h->data.size);
	if (in->hostname)
		fprintf(f, "# hostname      : %s\n", in->hostname);
	if (in->osrelease)
		fprintf(f, "# os release    : %s\n", in->osrelease);
	if (in->version)
		fprintf(f, "# recorded by   : %s\n", in->version);
	if (in->arch)
		fprintf(f, "# arch          : %s\n", in->arch);
	if (in->nr_cpus_online)
		fprintf(f, "# nrcpus online : %u\n# nrcpus avail  : %u\n", in->nr_cpus_online,
			in->nr_cpus_avail);
	if (in->cpudesc)
		fprintf(f, "# cpudesc       : %s\n", in->cpudesc);
	if (in->cmdline_argc) {
		fprintf(f, "# cmdline       :");
		for (unsigned int i = 0; i < in->cmdline_argc; i++)
			fprintf(f, " %s", in->cmdline_argv[i]);
		fputc('\n', f);
	}
	for (size_t i = 0; i < perf_reader__nr_attrs(r); i++) {
		const struct perf_reader_attr *a = perf_reader__attr(r, i);

		fprintf(f, "# event         : name = %s, type = %u, config = %#llx, sample_type = %#llx\n",
			a->name ? a->name : "?", a->attr.type, (unsigned long long)a->attr.config,
			(unsigned long long)a->attr.sample_type);
	}
	if (in->comp_type)
		fprintf(f, "# compressed    : zstd, level = %u, ratio = %u\n", in->comp_level,
			in->comp_ratio);
	fprintf(f, "# ========\n#\n");
}

static const char *event_name(struct perf_reader *r, size_t i, char *buf, size_t len)
{
	const struct perf_reader_attr *a = perf_reader__attr(r, i);

	if (a->name)
		return a->name;
	if (a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config == PERF_COUNT_SW_CPU_CLOCK)
		return "cpu-clock";
	if (a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config == PERF_COUNT_SW_TASK_CLOCK)
		return "task-clock";
	if (a->attr.type == PERF_TYPE_HARDWARE && a->attr.config == PERF_COUNT_HW_CPU_CYCLES)
		return "cycles";
	snprintf(buf, len, "event %zu (type %u, config %#llx)", i, a->attr.type,
		 (unsigned long long)a->attr.config);
	return buf;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *input = "perf.data", *flame = NULL, *repair = NULL;
	bool stats = false, folded = false, force = false, quiet = false, header = false;
	bool children_set = false, children = true;
	_cleanup_free_ int32_t *pids = NULL, *tids = NULL, *cpus = NULL;
	_cleanup_free_ const char **comms = NULL;
	size_t nr_pids = 0, nr_tids = 0, nr_cpus = 0, nr_comms = 0;
	/* perf's default: a call graph whenever callchains were recorded */
	struct report_opts ro = { .min_percent = -1, .graph = REPORT_GRAPH_GRAPH };
	const char *reason = NULL;
	struct perf_reader_opts rdo = { .ret_reason = &reason };
	unsigned int jobs = 0;
	int max_stack = 127, c, ret = 0;
	struct perf_reader *r;
	double t0 = now_s();

	while ((c = getopt_long(argc, argv, "i:s:g:j:qvh", longopts, NULL)) != -1) {
		char *end;
		long v;

		switch (c) {
		case 'i': input = optarg; break;
		case OPT_STDIO: break;
		case OPT_CHILDREN: children = true; children_set = true; break;
		case OPT_NO_CHILDREN: children = false; children_set = true; break;
		case 's':
			if (report__parse_sort(optarg, &ro) < 0) {
				err("invalid sort keys '%s': expected a comma-separated list of comm, dso, sym, pid, tid, cpu", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'g':
			if (report__parse_callgraph(optarg, &ro) < 0) {
				err("invalid call graph option '%s': expected graph or none, caller or callee, and a minimum percent, e.g. caller,0.5", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_FOLDED: folded = true; break;
		case OPT_FLAME: flame = optarg; break;
		case OPT_STATS: stats = true; break;
		case OPT_HEADER: header = true; break;
		case OPT_PID:
		case OPT_TID:
		case OPT_CPU:
			if (parse_int_list(optarg, c == OPT_PID ? &pids : c == OPT_TID ? &tids : &cpus,
					   c == OPT_PID ? &nr_pids : c == OPT_TID ? &nr_tids : &nr_cpus) < 0) {
				err("invalid list '%s' for --%s: expected numbers separated by commas", optarg,
				    c == OPT_PID ? "pid" : c == OPT_TID ? "tid" : "cpu");
				return EXIT_USAGE;
			}
			break;
		case OPT_COMM:
			if (parse_str_list(optarg, &comms, &nr_comms) < 0)
				return EXIT_FAIL;
			break;
		case OPT_MAXSTACK:
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 1024) {
				err("invalid --max-stack '%s': expected 1 to 1024", optarg);
				return EXIT_USAGE;
			}
			max_stack = (int)v;
			break;
		case 'j':
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 256) {
				err("invalid job count '%s' for -j: expected 1 to 256", optarg);
				return EXIT_USAGE;
			}
			jobs = (unsigned int)v;
			break;
		case OPT_FORCE: force = true; break;
		case OPT_REPAIR: repair = optarg; break;
		case 'q': quiet = true; break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		case OPT_VERSION: printf("preport %s\n", PRECORD_VERSION); return 0;
		default:
			fprintf(stderr, "Try 'preport --help' for the options.\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		err("unexpected argument '%s' (the input file is given with -i)", argv[optind]);
		return EXIT_USAGE;
	}
	if (children_set)
		ro.no_children = !children;

	r = perf_reader__open(input, &rdo);
	if (!r) {
		int e = errno;

		if (e == ENOENT)
			err("cannot open %s: no such file (record one with precord, or give another with -i)", input);
		else
			err("cannot read %s: %s", input, reason ? reason : strerror(e));
		return EXIT_FAIL;
	}
	if (!quiet && (perf_reader__warnings(r) & PERF_READER_W_RECOVERED))
		err("warning: %s was not closed properly (the recorder was killed?): its header is out of date; reading every complete record it holds",
		    input);

	if (repair) {
		int e = perf_reader__repair(r, repair);

		if (e == -ENODATA) {
			err("cannot repair %s: not one complete record precedes the damage; %s not written",
			    input, repair);
			perf_reader__close(r);
			return EXIT_DAMAGED;
		}
		if (e < 0) {
			err("cannot repair %s into %s: %s", input, repair, strerror(-e));
			perf_reader__close(r);
			return EXIT_FAIL;
		}
		if (!quiet)
			fprintf(stderr, "preport: wrote the readable part of %s to %s\n", input, repair);
		perf_reader__close(r);
		return 0;
	}

	if (header)
		print_header(stdout, r, input);

	if (stats) {
		struct stats_ctx sc = { .r = r };
		size_t na = perf_reader__nr_attrs(r);
		char names[8][96];
		_cleanup_free_ struct report_event_stats *ev = calloc(na ? na : 1, sizeof(*ev));

		if (!ev)
			return EXIT_FAIL;
		for (size_t i = 0; i < na; i++)
			ev[i].name = event_name(r, i, names[i < 8 ? i : 7], sizeof(names[0]));
		sc.ev = ev;
		sc.st.events = ev;
		sc.st.nr_events_stats = na;
		perf_reader__for_each(r, on_stat_record, &sc);
		{
			struct pause_stats ps;

			if (pause_stats__read(r, &ps) == 1) {
				sc.st.pause.present = true;
				sc.st.pause.nr_pauses = ps.pauses;
				sc.st.pause.paused_ns = ps.paused_ns;
				sc.st.pause.longest_pause_ns = ps.longest_ns;
				sc.st.pause.recording_ns = ps.recording_ns;
			}
		}
		report__fprintf_stats(stdout, &sc.st);
		goto damage;
	}

	{
		struct ctx *cx = calloc(1, sizeof(*cx));
		struct machine_opts mo = { 0 };
		const struct perf_reader_info *in = perf_reader__info(r);
		const uint8_t *kid = NULL;
		size_t kid_len = 0;
		/* the calling thread unwinds too: one worker fewer than threads */
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		struct wq_opts wo = { .nr_workers = (jobs ? jobs : (unsigned int)(online > 0 ? online : 1)) - 1,
				      .scope = TOPO_SCOPE_SYSTEM, .name = "preport" };
		char names[96];

		if (!cx)
			return EXIT_FAIL;
		for (size_t i = 0; i < in->nr_build_ids; i++)
			if (!strcmp(in->build_ids[i].path, "[kernel.kallsyms]")) {
				kid = in->build_ids[i].id;
				kid_len = in->build_ids[i].id_len;
			}
		/* A file without features (its recorder was killed) names no kernel: take it
		 * for this one, as perf does. */
		if (kallsyms__matches_running(in->osrelease, kid, kid_len) ||
		    (!in->osrelease && !kid)) {
			mo.kallsyms = "/proc/kallsyms";
			mo.running_vdso = true;
		}
		cx->r = r;
		cx->m = machine__new(&mo);
		for (size_t i = 0; cx->m && i < in->nr_build_ids; i++)
			machine__set_build_id(cx->m, in->build_ids[i].path, in->build_ids[i].id,
					      in->build_ids[i].id_len);
		cx->wq = wo.nr_workers ? wq__new(&wo) : NULL;
		cx->nr_attrs = perf_reader__nr_attrs(r);
		cx->reports = calloc(cx->nr_attrs ? cx->nr_attrs : 1, sizeof(struct report *));
		cx->max_stack = max_stack;
		cx->arena = malloc(ARENA_SIZE);
		cx->frame_pool = malloc(sizeof(struct unwind_frame) * BATCH * (size_t)max_stack);
		ro.pids = pids; ro.nr_pids = nr_pids;
		ro.tids = tids; ro.nr_tids = nr_tids;
		ro.comms = comms; ro.nr_comms = nr_comms;
		ro.cpus = cpus; ro.nr_cpus = nr_cpus;
		cx->pids = pids; cx->nr_pids = nr_pids;
		cx->tids = tids; cx->nr_tids = nr_tids;
		cx->cpus = cpus; cx->nr_cpus = nr_cpus;
		cx->comms = comms; cx->nr_comms = nr_comms;
		if (!cx->m || !cx->reports || !cx->arena || !cx->frame_pool) {
			err("out of memory");
			return EXIT_FAIL;
		}
		for (size_t i = 0; i < cx->nr_attrs; i++) {
			/* no call graph recorded: no graph to print */
			struct report_opts o = ro;
			uint64_t st = perf_reader__attr(r, i)->attr.sample_type;

			if (!(st & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER))) {
				o.graph = REPORT_GRAPH_NONE;
				if (!children_set)
					o.no_children = true;
			}
			cx->reports[i] = report__new(&o);
			if (!cx->reports[i]) {
				err("invalid report options: %s", strerror(errno));
				return EXIT_USAGE;
			}
		}
		int e = perf_reader__for_each_ordered(r, on_record, cx);

		if (!e)
			e = flush_batch(cx);
		if (e == -ENOMEM) {
			err("out of memory while reading %s", input);
			return EXIT_FAIL;
		}
		double t1 = now_s();

		if (folded) {
			for (size_t i = 0; i < cx->nr_attrs; i++)
				report__fprintf_folded(cx->reports[i], stdout);
		} else if (!flame) {
			struct perf_reader_stats ps;

			if (perf_reader__stats(r, &ps) == 0)
				report__fprintf_preamble(cx->reports[0], stdout, ps.total_lost_samples);
			for (size_t i = 0; i < cx->nr_attrs; i++) {
				if (cx->nr_attrs > 1 && !report__nr_samples(cx->reports[i]))
					continue;
				report__fprintf(cx->reports[i], stdout, event_name(r, i, names, sizeof(names)));
			}
		}
		if (flame) {
			FILE *f = fopen(flame, "we");

			if (!f) {
				err("cannot write the flame graph to %s: %s", flame, strerror(errno));
				ret = EXIT_FAIL;
			} else {
				char title[256];

				snprintf(title, sizeof(title), "%s (%s)", input,
					 event_name(r, 0, names, sizeof(names)));
				if (report__fprintf_flamegraph(cx->reports[0], f, title) < 0 || fclose(f) != 0) {
					err("cannot write the flame graph to %s: %s", flame, strerror(errno));
					ret = EXIT_FAIL;
				}
			}
		}
		if (verbose) {
			struct unwinder_stats us, tot = { 0 };

			for (size_t i = 0; i < nr_unwinders; i++) {
				unwinder__stats(unwinders[i], &us);
				tot.samples += us.samples;
				tot.dwarf_samples += us.dwarf_samples;
				tot.frames += us.frames;
				tot.dwarf_errors += us.dwarf_errors;
				tot.truncated += us.truncated;
			}
			fprintf(stderr, "preport: %llu samples, %llu frames in %.3f s (%.0f samples/s, %.0f frames/s) with %u threads; %llu DWARF unwinds, %llu stopped early, %llu truncated\n",
				(unsigned long long)cx->nr_samples, (unsigned long long)cx->nr_frames,
				t1 - t0, cx->nr_samples / (t1 - t0 > 0 ? t1 - t0 : 1),
				cx->nr_frames / (t1 - t0 > 0 ? t1 - t0 : 1),
				cx->wq ? wq__nr_workers(cx->wq) + 1 : 1,
				(unsigned long long)tot.dwarf_samples, (unsigned long long)tot.dwarf_errors,
				(unsigned long long)tot.truncated);
		}
		if (!quiet) {
			struct perf_reader_stats ps;
			struct report_stats rs = { 0 };

			if (perf_reader__stats(r, &ps) == 0) {
				for (int t = 0; t < REPORT_NR_RECORD_TYPES && t < PERF_RECORD_HEADER_MAX; t++)
					rs.nr_events[t] = ps.nr_by_type[t];
				rs.total_lost_samples = ps.total_lost_samples;
				report__fprintf_warnings(stderr, &rs);
			}
		}
		for (size_t i = 0; i < cx->nr_attrs; i++)
			report__free(cx->reports[i]);
		free(cx->reports);
		wq__free(cx->wq);
		for (size_t i = 0; i < nr_unwinders; i++)
			unwinder__free(unwinders[i]);
		machine__free(cx->m);
		free(cx->arena);
		free(cx->frame_pool);
		free(cx);
	}

damage:
	if (perf_reader__damage(r)) {
		const struct perf_reader_damage *d = perf_reader__damage(r);

		err("%s is damaged at offset %llu: %s; %s", input, (unsigned long long)d->offset,
		    d->reason ? d->reason : "unreadable",
		    force ? "reported what precedes it (--force)"
			  : "the report covers what precedes it (--force to accept, --repair OUT to rewrite it)");
		if (!force && !ret)
			ret = EXIT_DAMAGED;
	}
	perf_reader__close(r);
	fflush(stdout);
	if (ferror(stdout) && !ret) {
		err("cannot write the report: %s", strerror(errno));
		ret = EXIT_FAIL;
	}
	return ret;
}
