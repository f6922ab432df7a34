/* preport: reads any perf.data (precord's or perf's) and reports what perf report reports. A
 * thin command line over the report session (src/report/session.h): options in, a session with
 * its sinks (the aggregation, and the pprof writer with --pprof) run once, the outputs printed. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/inputs.h"
#include "lib/parse.h"
#include "lib/clock.h"
#include "lib/cleanup.h"
#include "perf/abi.h"
#include "perf/pause_stats.h"
#include "perf/ring_order.h"
#include "perf/reader.h"
#include "report/aggregate.h"
#include "report/header.h"
#include "report/pprof.h"
#include "report/report.h"
#include "report/inject.h"
#include "report/offcpu.h"
#include "report/session.h"
#include "report/timerange.h"

enum { EXIT_DAMAGED = 1, EXIT_USAGE = 2, EXIT_FAIL = 3 };

/* What the command line asked for. */
struct cli {
	const char *input, *flame, *repair, *pprof, *time, *unwind_to, *since, *until;
	const char **args;                  /* -i as given */
	size_t nr_args;
	struct inputs inputs;               /* -i expanded (directories) and in time order */
	uint64_t first_time, last_time;     /* over every input (0, 0: unknown) */
	bool stats, folded, force, quiet, header, header_only, verbose;
	bool off_cpu, wall;
	bool hide_unresolved;	/* -U */
	const char *symfs, *kallsyms;
	bool children_set, children;
	bool graph_set;	/* -g given */
	bool inverted;	/* -G */
	int32_t *pids, *tids, *cpus;
	const char **comms, **cgroups, **dsos, **symbols;
	size_t nr_pids, nr_tids, nr_cpus, nr_comms, nr_cgroups, nr_dsos, nr_symbols;
	struct report_opts ro;
	struct time_range *times;
	size_t nr_times;
	uint64_t since_ns, until_ns;
	unsigned int jobs;
	int max_stack;
};

/* preport reports through the programs' one error line */
#define err cli__err

/* "1,2,5", and with ranges "0-3,6" (perf's cpu lists) */
static int parse_int_list(const char *s, bool ranges, int32_t **ret, size_t *nr)
{
	_cleanup_free_ char *copy = strdup(s);
	char *p = copy, *tok;

	if (!copy)
		return -ENOMEM;
	*nr = 0; /* a repeated option replaces the list, as perf's last one wins */
	while ((tok = strsep(&p, ","))) {
		char *end;
		long v = strtol(tok, &end, 10), last = v;

		if (ranges && end != tok && *end == '-') {
			char *r = end + 1;

			last = strtol(r, &end, 10);
			if (end == r || last < v || last - v > 65536)
				return -EINVAL;
		}
		if (!*tok || *end || v < 0 || last > INT_MAX || !isdigit((unsigned char)*tok))
			return -EINVAL;
		for (; v <= last; v++) {
			int32_t *n = realloc(*ret, (*nr + 1) * sizeof(int32_t));

			if (!n)
				return -ENOMEM;
			*ret = n;
			(*ret)[(*nr)++] = (int32_t)v;
		}
	}
	return 0;
}

/* A list of names, as perf's strlist takes it: comma-separated, an empty last one left out
 * (an empty one elsewhere is a name: "" matches nothing), and each once (-EEXIST, *ret_dup the
 * one named twice). A repeated option replaces the list, as perf's last one wins. */
static int parse_str_list(char *s, const char ***ret, size_t *nr, const char **ret_dup)
{
	char *tok;

	*nr = 0;
	/* (an empty list is a filter too: non-NULL, it lets nothing through) */
	if (!*ret && !(*ret = malloc(sizeof(char *))))
		return -ENOMEM;
	while ((tok = strsep(&s, ","))) {
		const char **n;

		if (!s && !*tok)
			break;
		for (size_t i = 0; i < *nr; i++)
			if (!strcmp((*ret)[i], tok))
				return *ret_dup = tok, -EEXIST;
		if (!(n = realloc(*ret, (*nr + 1) * sizeof(char *))))
			return -ENOMEM;
		*ret = n;
		(*ret)[(*nr)++] = tok;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: preport [options] [-i FILE|DIR]...\n"
"Reads perf.data (from precord or perf record) and reports like perf report --stdio.\n"
"\n"
"  -i, --input FILE|DIR   the recording (default perf.data); several -i, or a directory of\n"
"                         precordd's (its precord-*.data files), are read as one recording\n"
"      --since TIME, --until TIME   only samples recorded from / until this time of day:\n"
"                         [YYYY-MM-DD ]HH:MM[:SS[.FRAC]] (local; Z at the end: UTC), or\n"
"                         @SECONDS since the epoch (recordings with CLOCK_DATA: precord's)\n"
"      --stdio            text output (the default; accepted for perf compatibility)\n"
"      --children         Children and Self columns (the default with call graphs;\n"
"                         ignored, as by perf, in a file without call chains)\n"
"      --no-children      Self only\n"
"  -n, --show-nr-samples  a Samples column: each row's own samples\n"
"      --show-total-period   a Period column: each row's own period (event count)\n"
"      --show-cpu-utilization   sys and usr columns: each row's own share in kernel and\n"
"                         in user mode\n"
"  -t, --field-separator SEP   the table's cells separated by SEP, as perf's (its first\n"
"                         character in a cell becomes '.')\n"
"      --inline           show functions inlined at each frame as 'NAME (inlined)' (default)\n"
"      --no-inline        frames as they are, without inlined functions\n"
"      --no-demangle      symbols named as their files spell them (C++ names mangled, with\n"
"                         the ELF version demangling drops); --demangle is the default\n"
"  -s, --sort KEYS        comma-separated: comm, dso, sym, pid, tid, cpu, cgroup, unit, srcline,\n"
"                         srcfile, parent\n"
"                         (default comm,dso,sym)\n"
"      --full-source-path   srclines and srcfiles with the source file's path, not its base\n"
"                         name\n"
"      --hierarchy        a level per sort key, each row the sum of those under it, as perf's\n"
"                         (self overhead; call graphs under the last level)\n"
"  -F, --fields FIELDS    the table's columns in this order, as perf's: overhead,\n"
"                         overhead_children, overhead_sys, overhead_us, sample, period and\n"
"                         sort keys (-s's keys follow as columns); the rows ordered by -s's\n"
"                         keys, then by these; +FIELDS adds them to the default columns\n"
"  -g, --call-graph ARG   graph, fractal, flat, folded or none, caller or callee, a minimum\n"
"                         percent and the most branches a level, percent, period or count,\n"
"                         e.g. -g caller,1 (default graph,0.5); refused, but none, in a file\n"
"                         without call chains\n"
"  -G, --inverted         -g caller\n"
"      --off-cpu          where threads waited (precord --off-cpu files): each blocking\n"
"                         stack weighted by the time until the thread ran again, in ns,\n"
"                         under a leaf naming the state; per-thread times at the end\n"
"      --wall             wall-clock time: on-CPU samples plus off-CPU time, in ns\n"
"      --folded           collapsed stacks: one line 'comm;root;...;leaf COUNT' per stack\n"
"      --flamegraph FILE  write an interactive SVG flame graph to FILE\n"
"      --pprof FILE       write a gzip'd pprof profile.proto to FILE (go tool pprof reads it)\n"
"      --unwind-to OUT    write a copy of the recording whose DWARF stacks are unwound into\n"
"                         call chains (smaller; read without unwinding, like fp recordings)\n"
"      --stats            records by type, samples, lost events, precord's pauses\n"
"      --header           the recording's header as perf report --header prints it, then the\n"
"                         report\n"
"      --header-only      only the header (the records are not read)\n"
"      --pid PIDS, --tid TIDS, --comm NAMES, --cpu CPUS   only these (comma-separated;\n"
"                         CPUS may hold ranges, 0-3); perf's spellings -c/--comms, -C too\n"
"  -d, --dsos DSOS        only rows of samples in these files (short name, libc.so.6, or path)\n"
"  -S, --symbols NAMES    only rows of samples in these functions; as with --comm, the others\n"
"                         still count in the percentages, and a single value hides its column\n"
"      --symbol-filter TEXT   only rows whose symbol's name holds TEXT (perf's, which\n"
"                         perf 6.1 ignores unless the sort keys include comm or srcline)\n"
"      --percentage relative|absolute   with filters, percentages of the rows shown or\n"
"                         (the default) of every sample, as perf\n"
"      --cgroup CGROUPS   only these cgroups, by path or systemd unit (recordings made with\n"
"                         precord --all-cgroups; -s cgroup or unit sorts by them)\n"
"      --max-stack N      frames of a recorded call chain, and of a stack unwound, at most\n"
"                         (default 127; counted as perf counts them)\n"
"      --percent-limit P  hide rows (and call-graph branches) under P percent\n"
"      --ignore-callees REGEX   the frames under the outermost function REGEX matches are\n"
"                         left out and the sample counts as that function's: its callers\n"
"                         gathered in one place (every chain, DWARF ones too; not --pprof)\n"
"  -p, --parent REGEX     a Parent symbol column: the first function of the chain (the\n"
"                         sample's own included) REGEX matches, in the graph's order, or\n"
"                         [other] (-s parent alone: '^sys_|^do_page_fault')\n"
"  -x, --exclude-other    only rows of samples with a parent (the others still count)\n"
"  -U, --hide-unresolved  only samples whose own address a symbol holds (the others count\n"
"                         nowhere), their chains without the frames no symbol holds, as perf\n"
"      --symfs DIR        look for the recording's files under DIR (a copy of the recording\n"
"                         machine's /usr, /lib...: DIR/usr/lib/libc.so.6), and only there\n"
"      --kallsyms FILE    the kernel's symbols from FILE (a copy of the recording machine's\n"
"                         /proc/kallsyms), whatever kernel made the recording\n"
"      --time RANGES      only samples in these times, as perf: START,STOP in seconds (either\n"
"                         may be empty; several separated by spaces), or shares of the\n"
"                         recording: 10%%/2 (the second tenth), 0%%-10%%,30%%-40%%\n"
"  -j, --jobs N           unwinding threads (default: online CPUs); with more than one,\n"
"                         compressed data is read (perf -z's decoded) on a thread of its own, and\n"
"                         kernel symbols and the files' debug info load ahead on up to two more\n"
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
	OPT_HEADER, OPT_PID, OPT_TID, OPT_COMM, OPT_CGROUP, OPT_CPU, OPT_MAXSTACK, OPT_FORCE, OPT_REPAIR,
	OPT_VERSION, OPT_PPROF, OPT_UNWIND_TO, OPT_OFF_CPU, OPT_WALL, OPT_PERCENT_LIMIT, OPT_TIME,
	OPT_INLINE, OPT_NO_INLINE, OPT_DEMANGLE, OPT_NO_DEMANGLE, OPT_CPU_UTIL, OPT_FULL_PATH,
	OPT_IGNORE_CALLEES, OPT_SINCE, OPT_UNTIL, OPT_HEADER_ONLY, OPT_DSOS, OPT_SYMBOLS,
	OPT_TOTAL_PERIOD, OPT_PERCENTAGE, OPT_SYMBOL_FILTER, OPT_FIELD_SEP, OPT_HIDE_UNRESOLVED,
	OPT_FIELDS, OPT_SYMFS, OPT_KALLSYMS, OPT_HIERARCHY,
};

static const struct option longopts[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "stdio", no_argument, NULL, OPT_STDIO },
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
	{ "show-nr-samples", no_argument, NULL, 'n' },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "demangle", no_argument, NULL, OPT_DEMANGLE },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "show-cpu-utilization", no_argument, NULL, OPT_CPU_UTIL },
	{ "full-source-path", no_argument, NULL, OPT_FULL_PATH },
	{ "ignore-callees", required_argument, NULL, OPT_IGNORE_CALLEES },
	{ "parent", required_argument, NULL, 'p' },
	{ "exclude-other", no_argument, NULL, 'x' },
	{ "sort", required_argument, NULL, 's' },
	{ "fields", required_argument, NULL, OPT_FIELDS },
	{ "hierarchy", no_argument, NULL, OPT_HIERARCHY },
	{ "call-graph", required_argument, NULL, 'g' },
	{ "inverted", no_argument, NULL, 'G' },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "wall", no_argument, NULL, OPT_WALL },
	{ "flamegraph", required_argument, NULL, OPT_FLAME },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "unwind-to", required_argument, NULL, OPT_UNWIND_TO },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "header", no_argument, NULL, OPT_HEADER },
	{ "header-only", no_argument, NULL, OPT_HEADER_ONLY },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "comms", required_argument, NULL, OPT_COMM },	/* perf's spelling */
	{ "dsos", required_argument, NULL, OPT_DSOS },
	{ "show-total-period", no_argument, NULL, OPT_TOTAL_PERIOD },
	{ "symbol-filter", required_argument, NULL, OPT_SYMBOL_FILTER },
	{ "field-separator", required_argument, NULL, OPT_FIELD_SEP },
	{ "percentage", required_argument, NULL, OPT_PERCENTAGE },
	{ "symbols", required_argument, NULL, OPT_SYMBOLS },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "max-stack", required_argument, NULL, OPT_MAXSTACK },
	{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
	{ "hide-unresolved", no_argument, NULL, OPT_HIDE_UNRESOLVED },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "jobs", required_argument, NULL, 'j' },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "repair", required_argument, NULL, OPT_REPAIR },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 }
};

static int parse_num(const char *arg, long lo, long hi, long *ret)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (!*arg || *end || v < lo || v > hi)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* -i, kept as given until every option is read. Returns -1 or EXIT_FAIL (said). */
static int add_arg(struct cli *c, const char *arg)
{
	const char **n = realloc(c->args, (c->nr_args + 1) * sizeof(*n));

	if (!n) {
		err("out of memory");
		return EXIT_FAIL;
	}
	c->args = n;
	c->args[c->nr_args++] = arg;
	return -1;
}

/* Whether re compiles as an extended regex; if not, says so for option opt (example: one that
 * would). */
static bool regex_ok(const char *opt, const char *re, const char *example)
{
	regex_t x;
	int e = regcomp(&x, re, REG_EXTENDED | REG_NOSUB);
	char why[128];

	if (!e) {
		regfree(&x);
		return true;
	}
	regerror(e, &x, why, sizeof(why));
	err("invalid %s '%s': %s (give an extended regular expression, e.g. %s)", opt, re, why,
	    example);
	return false;
}

/* One option into cli. Returns -1 to go on, or the exit status to leave with. */
static int parse_opt(struct cli *c, int opt)
{
	long v;

	switch (opt) {
	case 'i': return add_arg(c, optarg);
	case OPT_SINCE: c->since = optarg; break;
	case OPT_UNTIL: c->until = optarg; break;
	case OPT_STDIO: break;
	case OPT_CHILDREN: c->children = true; c->children_set = true; break;
	case OPT_NO_CHILDREN: c->children = false; c->children_set = true; break;
	case 'n': c->ro.show_nr_samples = true; break;
	case OPT_TOTAL_PERIOD: c->ro.show_total_period = true; break;
	case OPT_SYMBOL_FILTER: c->ro.symbol_filter = optarg; break;
	case OPT_FIELD_SEP:
		if (!*optarg) {
			err("invalid -t/--field-separator '': expected a separator, such as ','");
			return EXIT_USAGE;
		}
		c->ro.field_sep = optarg;
		break;
	case OPT_PERCENTAGE:
		if (strcmp(optarg, "relative") && strcmp(optarg, "absolute")) {
			err("invalid --percentage '%s': expected relative or absolute", optarg);
			return EXIT_USAGE;
		}
		c->ro.relative = !strcmp(optarg, "relative");
		break;
	case OPT_INLINE: c->ro.no_inline = false; break;
	case OPT_NO_INLINE: c->ro.no_inline = true; break;
	case OPT_DEMANGLE: c->ro.no_demangle = false; break;
	case OPT_NO_DEMANGLE: c->ro.no_demangle = true; break;
	case OPT_CPU_UTIL: c->ro.show_cpu_utilization = true; break;
	case OPT_FULL_PATH: c->ro.full_source_path = true; break;
	case 's':
		if (report__parse_sort(optarg, &c->ro) < 0) {
			err("invalid sort keys '%s': expected a comma-separated list of comm, dso, sym, pid, tid, cpu, cgroup, unit, srcline, srcfile, parent", optarg);
			return EXIT_USAGE;
		}
		break;
	case OPT_FIELDS: {
		char bad[64];

		if (report__parse_fields(optarg, &c->ro, bad, sizeof(bad)) < 0) {
			err("invalid -F/--fields '%s': unknown field '%s'; expected overhead, overhead_children, overhead_sys, overhead_us, sample, period or a sort key (comm, dso, sym, pid, tid, cpu, cgroup, unit, srcline, srcfile, parent)", optarg, bad);
			return EXIT_USAGE;
		}
		break;
	}
	case 'g':
		c->graph_set = true;
		if (report__parse_callgraph(optarg, &c->ro) < 0) {
			err("invalid call graph option '%s': expected graph, fractal, flat, folded or none, caller or callee, percent, period or count, function, a minimum percent (0-100) and the most branches a level (a whole number), e.g. caller,0.5 or graph,0.5,3,count", optarg);
			return EXIT_USAGE;
		}
		break;
	case 'G': /* perf's --inverted: caller order whatever -g says, before or after */
		c->inverted = true;
		break;
	case OPT_FOLDED: c->folded = true; break;
	case OPT_OFF_CPU: c->off_cpu = true; c->ro.period_unit = "ns"; break;
	case OPT_WALL: c->wall = true; c->ro.period_unit = "ns"; break;
	case OPT_FLAME: c->flame = optarg; break;
	case OPT_PPROF: c->pprof = optarg; break;
	case OPT_UNWIND_TO: c->unwind_to = optarg; break;
	case OPT_HIDE_UNRESOLVED: c->hide_unresolved = true; break;
	case OPT_HIERARCHY: c->ro.hierarchy = true; break;
	case OPT_IGNORE_CALLEES:
		if (!regex_ok("--ignore-callees", optarg, "'^malloc$|^free$'"))
			return EXIT_USAGE;
		c->ro.ignore_callees = optarg;
		break;
	case 'p':
		if (!regex_ok("-p/--parent", optarg, "'^__x64_sys_'"))
			return EXIT_USAGE;
		c->ro.parent = optarg;
		break;
	case 'x': c->ro.exclude_other = true; break;
	case OPT_SYMFS: {
		struct stat st;
		int e = stat(optarg, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;

		if (e) {
			err("invalid --symfs '%s': %s (give the directory that holds a copy of the recording machine's files)",
			    optarg, strerror(e));
			return EXIT_USAGE;
		}
		c->symfs = optarg;
		break;
	}
	case OPT_KALLSYMS: {
		int fd = open(optarg, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		char b;

		if (fd < 0 || read(fd, &b, 1) != 1) {
			err("invalid --kallsyms '%s': %s (give a copy of the recording machine's /proc/kallsyms)",
			    optarg, fd < 0 ? strerror(errno) : "empty or unreadable");
			if (fd >= 0)
				close(fd);
			return EXIT_USAGE;
		}
		close(fd);
		c->kallsyms = optarg;
		break;
	}
	case OPT_STATS: c->stats = true; break;
	case OPT_HEADER: c->header = true; break;
	case OPT_HEADER_ONLY: c->header_only = true; break;
	case OPT_PID:
	case OPT_TID:
	case OPT_CPU:
		if (parse_int_list(optarg, opt == OPT_CPU,
				   opt == OPT_PID ? &c->pids : opt == OPT_TID ? &c->tids : &c->cpus,
				   opt == OPT_PID ? &c->nr_pids : opt == OPT_TID ? &c->nr_tids : &c->nr_cpus) < 0) {
			err("invalid list '%s' for --%s: expected numbers separated by commas%s", optarg,
			    opt == OPT_PID ? "pid" : opt == OPT_TID ? "tid" : "cpu",
			    opt == OPT_CPU ? " (or ranges, 0-3)" : "");
			return EXIT_USAGE;
		}
		break;
	case OPT_COMM:
	case OPT_DSOS:
	case OPT_SYMBOLS:
	case OPT_CGROUP: {
		const char ***l = &c->cgroups, *name = "cgroup", *dup = NULL;
		size_t *n = &c->nr_cgroups;
		int e;

		if (opt == OPT_COMM)
			l = &c->comms, n = &c->nr_comms, name = "comm";
		else if (opt == OPT_DSOS)
			l = &c->dsos, n = &c->nr_dsos, name = "dsos";
		else if (opt == OPT_SYMBOLS)
			l = &c->symbols, n = &c->nr_symbols, name = "symbols";
		e = parse_str_list(optarg, l, n, &dup);
		if (e == -EEXIST) {
			err("invalid --%s list: '%s' is named twice (perf refuses it too)", name, dup);
			return EXIT_USAGE;
		}
		if (e < 0)
			return EXIT_FAIL;
		break;
	}
	case OPT_MAXSTACK:
		if (parse_num(optarg, 1, 1024, &v) < 0) {
			err("invalid --max-stack '%s': expected 1 to 1024", optarg);
			return EXIT_USAGE;
		}
		c->max_stack = (int)v;
		break;
	case 'j':
		if (parse_num(optarg, 1, 256, &v) < 0) {
			err("invalid job count '%s' for -j: expected 1 to 256", optarg);
			return EXIT_USAGE;
		}
		c->jobs = (unsigned int)v;
		break;
	case OPT_PERCENT_LIMIT: {
		char *end;
		double d = strtod(optarg, &end);

		if (end == optarg || (*end && strcmp(end, "%")) || !(d >= 0 && d <= 100)) {
			err("invalid --percent-limit '%s': expected a percent from 0 to 100", optarg);
			return EXIT_USAGE;
		}
		/* as perf: the limit is also the call graphs' threshold */
		c->ro.percent_limit = d;
		c->ro.min_percent = d;
		break;
	}
	case OPT_TIME: c->time = optarg; c->ro.time_str = optarg; break;
	case OPT_FORCE: c->force = true; break;
	case OPT_REPAIR: c->repair = optarg; break;
	case 'q': c->quiet = true; break;
	case 'v': c->verbose = true; break;
	case 'h': usage(stdout); return 0;
	case OPT_VERSION: printf("preport %s\n", PRECORD_VERSION); return 0;
	default:
		fprintf(stderr, "Try 'preport --help' for the options.\n");
		return EXIT_USAGE;
	}
	return -1;
}

static int parse_args(struct cli *c, int argc, char **argv)
{
	int opt, e;

	while ((opt = getopt_long(argc, argv, "i:s:g:Gj:c:C:d:S:t:F:nqvhUp:x", longopts, NULL)) != -1)
		if ((e = parse_opt(c, opt == 'c' ? OPT_COMM : opt == 'C' ? OPT_CPU :
				      opt == 'd' ? OPT_DSOS : opt == 'S' ? OPT_SYMBOLS :
				      opt == 't' ? OPT_FIELD_SEP :
				      opt == 'U' ? OPT_HIDE_UNRESOLVED :
				      opt == 'F' ? OPT_FIELDS : opt)) >= 0)
			return e;
	if (optind < argc) {
		err("unexpected argument '%s' (the input file is given with -i)", argv[optind]);
		return EXIT_USAGE;
	}
	if (c->ro.parent && !report__sorts_by(&c->ro, REPORT_SORT_PARENT) &&
	    (c->ro.nr_sort_keys ? c->ro.nr_sort_keys : 3) >= REPORT_MAX_SORT_KEYS) {
		err("too many sort keys with -p/--parent: its parent key makes %d, at most %d (give fewer -s keys, or put parent among them)",
		    REPORT_MAX_SORT_KEYS + 1, REPORT_MAX_SORT_KEYS);
		return EXIT_USAGE;
	}
	if (c->off_cpu && c->wall) {
		err("--off-cpu and --wall are two views of one recording: choose one");
		return EXIT_USAGE;
	}
	/* (-p's parent key is one) */
	if (c->ro.nr_fields && !c->ro.fields_append && !c->ro.nr_sort_keys && !c->ro.parent) {
		bool key = false;

		for (size_t i = 0; i < c->ro.nr_fields; i++)
			key |= c->ro.fields[i].kind == REPORT_FIELD_KEY;
		if (!key) {
			err("-F/--fields lists no sort key to make rows of: add one (e.g. -F overhead,sym) or give -s");
			return EXIT_USAGE;
		}
	}
	if (c->ro.hierarchy && c->ro.nr_fields) {
		err("--hierarchy takes its levels from -s and its columns from -n and --show-total-period: -F is not for it");
		return EXIT_USAGE;
	}
	if (c->hide_unresolved && c->unwind_to) {
		err("-U/--hide-unresolved hides samples from reports; --unwind-to copies every sample: use one, then the other on the copy");
		return EXIT_USAGE;
	}
	if (c->children_set)
		c->ro.no_children = !c->children;
	/* Folded stacks and flame graphs stand for perf script's chains, resolved leaf first:
	 * inlined frames are named as perf script names them (see frames_of in report/aggregate.c). */
	if (c->inverted)
		c->ro.order = REPORT_ORDER_CALLER;
	if ((c->folded || c->flame) && c->ro.order == REPORT_ORDER_DEFAULT)
		c->ro.order = REPORT_ORDER_CALLEE;
	c->ro.pids = c->pids; c->ro.nr_pids = c->nr_pids;
	c->ro.tids = c->tids; c->ro.nr_tids = c->nr_tids;
	c->ro.comms = c->comms; c->ro.nr_comms = c->nr_comms;
	c->ro.dsos = c->dsos; c->ro.nr_dsos = c->nr_dsos;
	c->ro.symbols = c->symbols; c->ro.nr_symbols = c->nr_symbols;
	c->ro.cpus = c->cpus; c->ro.nr_cpus = c->nr_cpus;
	return -1;
}

/* -i expanded and ordered, and --since/--until parsed. Returns -1 to go on, or the exit
 * status. */
static int resolve_inputs(struct cli *c)
{
	static const char *const dflt[] = { "perf.data" };
	const char *const *args = c->nr_args ? c->args : dflt;
	size_t n = c->nr_args ? c->nr_args : 1;
	uint64_t *ts[2] = { &c->since_ns, &c->until_ns };
	const char *tv[2] = { c->since, c->until };

	for (size_t i = 0; i < n; i++) {
		if (inputs__add(&c->inputs, args[i]) < 0) {
			err("%s", inputs__error(&c->inputs));
			return EXIT_FAIL;
		}
	}
	if (c->inputs.nr > 1 && (c->repair || c->unwind_to)) {
		err("--%s takes one recording, not %zu (give one -i FILE)",
		    c->repair ? "repair" : "unwind-to", c->inputs.nr);
		return EXIT_USAGE;
	}
	for (int k = 0; k < 2; k++) {
		if (tv[k] && parse__wall_time(tv[k], time(NULL), ts[k]) < 0) {
			err("invalid --%s '%s': expected a time of day, [YYYY-MM-DD ]HH:MM[:SS[.FRAC]] (local time; with Z at the end UTC), or @SECONDS since the epoch",
			    k ? "until" : "since", tv[k]);
			return EXIT_USAGE;
		}
	}
	if (!c->until)
		c->until_ns = UINT64_MAX;
	if (c->since && c->until && c->since_ns > c->until_ns) {
		err("--since %s is after --until %s: nothing to report", c->since, c->until);
		return EXIT_USAGE;
	}
	inputs__sort(&c->inputs, &c->first_time, &c->last_time);
	c->input = c->inputs.paths[0];
	return -1;
}

/* The further inputs, and --since/--until. Returns 0 or the exit status (said). */
static int add_inputs(const struct cli *c, struct report_session *s)
{
	for (size_t i = 1; i < c->inputs.nr; i++) {
		int e = report_session__add_file(s, c->inputs.paths[i]);

		if (e < 0) {
			err("%s", report_session__error(s));
			return e == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
		}
	}
	if ((c->since || c->until) && report_session__set_wall_range(s, c->since_ns, c->until_ns) < 0) {
		err("%s", report_session__error(s));
		return EXIT_USAGE;
	}
	return 0;
}

/* Whether a report with these options reads DWARF: inlined frames, or a srcline or srcfile
 * key. */
static bool wants_dwarf(const struct report_opts *ro)
{
	return !ro->no_inline || report__wants_key(ro, REPORT_SORT_SRCLINE) ||
	       report__wants_key(ro, REPORT_SORT_SRCFILE);
}

/* Why the input did not open: reason, or for a missing file what to do. */
static void say_open_error(const struct cli *c, int e, const char *reason)
{
	if (e == -ENOENT)
		err("cannot open %s: no such file (record one with precord, or give another with -i)", c->input);
	else
		err("%s", reason);
}

static struct report_session *open_session(const struct cli *c, int *ret_status)
{
	struct report_session_opts so = {
		.jobs = c->jobs, .max_stack = c->max_stack,
		/* perf's caller order (-g caller, or the default with children) walks a chain from
		 * its root: --max-stack keeps the outermost frames there */
		.outermost = c->ro.order == REPORT_ORDER_CALLER ||
			     (c->ro.order == REPORT_ORDER_DEFAULT && !c->ro.no_children),
		.cpus = c->cpus, .nr_cpus = c->nr_cpus,
		.pids = c->pids, .nr_pids = c->nr_pids,
		.tids = c->tids, .nr_tids = c->nr_tids,
		.comms = c->comms, .nr_comms = c->nr_comms,
		.cgroups = c->cgroups, .nr_cgroups = c->nr_cgroups,
		.prefetch_dwarf = wants_dwarf(&c->ro),
		/* the folded stacks, the flame graph, pprof and the time views are made of the
		 * whole chains */
		.self_only = !report__needs_callers(&c->ro) && !c->folded && !c->flame &&
			     !c->pprof && !c->off_cpu && !c->wall,
		.hide_unresolved = c->hide_unresolved,
		.symfs = c->symfs, .kallsyms = c->kallsyms,
	};
	struct report_session *s = report_session__new(&so);
	int e;

	if (!s) {
		err("cannot read %s: %s", c->input, strerror(errno));
		return NULL;
	}
	e = report_session__open(s, c->input);
	if (e < 0) {
		say_open_error(c, e, report_session__error(s));
		report_session__free(s);
		return NULL;
	}
	if (!c->quiet && (perf_reader__warnings(report_session__reader(s)) & PERF_READER_W_RECOVERED))
		err("warning: %s was not closed properly (the recorder was killed?): its header is out of date; reading every complete record it holds",
		    c->input);
	*ret_status = add_inputs(c, s);
	if (*ret_status) {
		report_session__free(s);
		return NULL;
	}
	return s;
}

/* --header-only: the first input's header, from its reader alone (no record is read). Damage
 * in the records is not the header's: a warning, as a report would give it. */
static int do_header_only(const struct cli *c)
{
	struct perf_reader *r = perf_reader__new(NULL);
	int e = r ? perf_reader__open(r, c->input) : -ENOMEM;
	const struct perf_reader_damage *d, *fd;

	if (e < 0) {
		say_open_error(c, e, r ? perf_reader__error(r) : strerror(-e));
		perf_reader__free(r);
		return EXIT_FAIL;
	}
	if (report__fprintf_header(stdout, r) < 0 || fflush(stdout) != 0) {
		err("cannot write the header: %s", strerror(errno));
		perf_reader__free(r);
		return EXIT_FAIL;
	}
	d = perf_reader__damage(r);
	fd = perf_reader__feat_damage(r);
	if (d && d != fd)
		err("warning: %s is damaged at offset %llu, in its records: %s (the header is whole)",
		    c->input, (unsigned long long)d->offset, d->reason ? d->reason : "unreadable");
	if (fd)
		err("%s is damaged at offset %llu: %s; %s", c->input, (unsigned long long)fd->offset,
		    fd->reason ? fd->reason : "unreadable",
		    c->force ? "printed what could be read (--force)"
			     : "the header shows what could be read (--force to accept)");
	perf_reader__free(r);
	return fd && !c->force ? EXIT_DAMAGED : 0;
}

static int do_repair(const struct cli *c, struct perf_reader *r)
{
	int e = perf_reader__repair(r, c->repair);

	if (e < 0) {
		err("%s", perf_reader__error(r));
		return e == -ENODATA ? EXIT_DAMAGED : EXIT_FAIL;
	}
	if (!c->quiet)
		fprintf(stderr, "preport: wrote the readable part of %s to %s\n", c->input, c->repair);
	return 0;
}

static int do_stats(struct report_session *s)
{
	const struct report_session_stats *ss;
	struct report_stats st = { 0 };
	struct pause_stats ps;
	_cleanup_free_ struct report_event_stats *ev = NULL;

	if (report_session__count(s) == -ENOMEM)
		return EXIT_FAIL;
	ss = report_session__stats(s);
	ev = calloc(ss->nr_attrs, sizeof(*ev));
	if (!ev)
		return EXIT_FAIL;
	for (size_t i = 0; i < ss->nr_attrs; i++) {
		ev[i].name = report_session__event_name(s, i);
		ev[i].nr_samples = ss->attr_samples[i];
		ev[i].nr_lost_samples = ss->attr_lost_samples[i];
		st.total_lost_samples += ss->attr_lost_samples[i];
	}
	/* as perf --stats shows them: the decompressed records and their COMPRESSED containers */
	for (int t = 0; t < REPORT_NR_RECORD_TYPES && t < PERF_RECORD_HEADER_MAX; t++)
		st.nr_events[t] = ss->records.nr_by_type[t];
	st.events = ev;
	st.nr_events_stats = ss->nr_attrs;
	if (pause_stats__read(report_session__reader(s), &ps) == 1) {
		st.pause.present = true;
		st.pause.nr_pauses = ps.pauses;
		st.pause.paused_ns = ps.paused_ns;
		st.pause.longest_pause_ns = ps.longest_ns;
		st.pause.recording_ns = ps.recording_ns;
		st.pause.mechanism = ps.mechanism;
		st.pause.by_ring = ps.by_ring;
		st.pause.nr_rings = ps.nr_rings;
	}
	report__fprintf_stats(stdout, &st);
	return 0;
}

static int write_flame(const struct cli *c, struct report_session *s, struct report_set *rs,
		       size_t idx, const char *name)
{
	FILE *f = fopen(c->flame, "we");
	char title[256];

	if (!f) {
		err("cannot write the flame graph to %s: %s", c->flame, strerror(errno));
		return EXIT_FAIL;
	}
	snprintf(title, sizeof(title), "%s (%s)", c->input, name);
	if (report__fprintf_flamegraph(report_set__report(rs, idx), f, title) < 0 || fclose(f) != 0) {
		err("cannot write the flame graph to %s: %s", c->flame, strerror(errno));
		return EXIT_FAIL;
	}
	return 0;
}

/* The threads of an off-CPU or wall-clock view: where each one's lifetime went. */
static void print_threads(const struct offcpu *oc)
{
	printf("\n# Threads: lifetime as recorded = on-CPU (switch-in to switch-out) + off-CPU "
	       "(switch-out to switch-in), in ms\n#\n");
	printf("# %7s %7s  %-16s %10s %10s %10s %10s %10s %10s %10s\n", "pid", "tid", "comm",
	       "lifetime", "on-CPU", "off-CPU", "sleeping", "blocked-io", "preempted", "other");
	for (size_t i = 0; i < offcpu__nr_threads(oc); i++) {
		const struct offcpu_thread *t = offcpu__thread(oc, i);
		uint64_t off = 0;

		for (int k = 0; k < OFFCPU_NR_STATES; k++)
			off += t->off_ns[k];
		if (!t->on_ns && !off)
			continue;
		printf("  %7d %7d  %-16s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n", t->pid,
		       t->tid, t->comm[0] ? t->comm : ":unknown", (t->end - t->start) / 1e6,
		       t->on_ns / 1e6, off / 1e6, t->off_ns[OFFCPU_SLEEPING] / 1e6,
		       t->off_ns[OFFCPU_IO] / 1e6, t->off_ns[OFFCPU_PREEMPTED] / 1e6,
		       t->off_ns[OFFCPU_OTHER] / 1e6);
	}
}

/* --off-cpu / --wall: one profile, in ns. */
static void print_time_view(const struct cli *c, struct report_session *s, struct report_set *rs,
			    const struct offcpu *oc, const char *name)
{
	const struct report_session_stats *ss = report_session__stats(s);
	struct report *r = report_set__report(rs, offcpu__attr(oc));

	if (c->folded) {
		report__fprintf_folded(r, stdout);
		return;
	}
	if (c->flame || c->pprof)
		return;
	report__fprintf_preamble(r, stdout, ss->records.total_lost_samples);
	printf("# %s: %.3f s (the event count below is in ns)\n", name, report__total_period(r) / 1e9);
	report__fprintf(r, stdout, name);
	print_threads(oc);
}

static void print_outputs(const struct cli *c, struct report_session *s, struct report_set *rs)
{
	const struct report_session_stats *ss = report_session__stats(s);
	size_t n = report_set__nr(rs);

	if (c->folded) {
		for (size_t i = 0; i < n; i++)
			report__fprintf_folded(report_set__report(rs, i), stdout);
		return;
	}
	if (c->flame || c->pprof)
		return;
	report__fprintf_preamble(report_set__report(rs, 0), stdout, ss->records.total_lost_samples);
	for (size_t i = 0; i < n; i++) {
		if (n > 1 && !report__nr_samples(report_set__report(rs, i)))
			continue;
		report__fprintf(report_set__report(rs, i), stdout, report_session__event_name(s, i));
	}
}

static void print_verbose(struct report_session *s, double secs)
{
	const struct report_session_stats *ss = report_session__stats(s);
	struct ring_order ro;
	double t = secs > 0 ? secs : 1;

	fprintf(stderr, "preport: %llu samples, %llu frames in %.3f s (%.0f samples/s, %.0f frames/s) with %u threads; %llu DWARF unwinds, %llu stopped early, %llu truncated\n",
		(unsigned long long)ss->nr_samples, (unsigned long long)ss->nr_frames, secs,
		ss->nr_samples / t, ss->nr_frames / t, ss->nr_threads,
		(unsigned long long)ss->unwind.dwarf_samples,
		(unsigned long long)ss->unwind.dwarf_errors, (unsigned long long)ss->unwind.truncated);
	if (!ss->peak_queued)
		return;
	fprintf(stderr, "preport: the time order held at most %.1f MiB of records",
		ss->peak_queued / 1048576.0);
	if (ring_order__read(report_session__reader(s), &ro) == 1)
		fprintf(stderr, " (the file's ring order: %u CPU%s, steps back in time by %.1f us at most)",
			ro.nr_cpus, ro.nr_cpus == 1 ? "" : "s", ro.max_back_ns / 1000.0);
	fputc('\n', stderr);
}

static void print_warnings(const struct report_session_stats *ss)
{
	struct report_stats rs = { 0 };

	for (int t = 0; t < REPORT_NR_RECORD_TYPES && t < PERF_RECORD_HEADER_MAX; t++)
		rs.nr_events[t] = ss->records.nr_by_type[t];
	rs.total_lost_samples = ss->records.total_lost_samples;
	report__fprintf_warnings(stderr, &rs);
}

static int write_pprof(const struct cli *c, struct pprof_writer *pw)
{
	int e = pprof_writer__write(pw, c->pprof);

	if (e < 0) {
		err("cannot write the pprof profile to %s: %s", c->pprof, strerror(-e));
		return EXIT_FAIL;
	}
	return 0;
}

static int do_report(const struct cli *c, struct report_session *s, double t0)
{
	struct report_set *rs = report_set__new(s, &c->ro, c->children_set);
	struct pprof_writer *pw = NULL;
	struct offcpu *oc = NULL;
	const char *view = c->wall ? "wall-time (cpu-clock + offcpu-time)" : "offcpu-time";
	int e, ret = 0;

	if (!rs) {
		err("invalid report options: %s", strerror(errno));
		return errno == ENOMEM ? EXIT_FAIL : EXIT_USAGE;
	}
	if (c->pprof && (pw = pprof_writer__new(s)))
		pprof_writer__set_frames(pw, !c->ro.no_inline, !c->ro.no_demangle);
	if (c->pprof && !pw) {
		err("out of memory");
		report_set__free(rs);
		return EXIT_FAIL;
	}
	if (c->off_cpu || c->wall) {
		oc = offcpu__new();
		e = oc ? offcpu__setup(oc, s, c->wall ? OFFCPU_WALL : OFFCPU_ONLY) : -ENOMEM;
		if (e < 0) {
			err("cannot make a%s profile of %s: %s", c->wall ? " wall-clock" : "n off-CPU",
			    c->input, oc ? offcpu__error(oc) : strerror(-e));
			offcpu__free(oc);
			pprof_writer__free(pw);
			report_set__free(rs);
			return e == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
		}
		if (pw && pprof_writer__set_time_view(pw, offcpu__attr(oc),
						      c->wall ? "wall-time" : "offcpu-time") < 0) {
			err("out of memory");
			pprof_writer__free(pw);
			report_set__free(rs);
			offcpu__free(oc);
			return EXIT_FAIL;
		}
	}
	e = report_session__run(s);
	if (e == -ENOMEM) {
		err("out of memory while reading %s", c->input);
		pprof_writer__free(pw);
		report_set__free(rs);
		return EXIT_FAIL;
	}
	double t1 = clock__s();

	if (oc)
		print_time_view(c, s, rs, oc, view);
	else
		print_outputs(c, s, rs);
	if (c->flame)
		ret = oc ? write_flame(c, s, rs, offcpu__attr(oc), view)
			 : write_flame(c, s, rs, 0, report_session__event_name(s, 0));
	if (pw && !ret)
		ret = write_pprof(c, pw);
	pprof_writer__free(pw);
	if (c->verbose)
		print_verbose(s, t1 - t0);
	if (!c->quiet)
		print_warnings(report_session__stats(s));
	report_set__free(rs);
	offcpu__free(oc);
	return ret;
}

/* --time, parsed once the file's first and last sample times are known. Returns 0 or the
 * exit status. */
static int set_times(struct cli *c, struct report_session *s)
{
	const struct perf_reader_info *in = perf_reader__info(report_session__reader(s));
	/* several files: shares of them all, from the first's first sample to the last's last */
	uint64_t first = c->inputs.nr > 1 ? c->first_time : in->first_sample_time;
	uint64_t last = c->inputs.nr > 1 ? c->last_time : in->last_sample_time;
	int e = time_ranges__parse(c->time, first, last, &c->times, &c->nr_times);

	if (e == -ENODATA) {
		err("cannot use --time '%s' on %s: percentages need the recording's first and last sample times (its SAMPLE_TIME feature), which it lacks; give times in seconds instead",
		    c->time, c->input);
		return EXIT_USAGE;
	}
	if (e < 0) {
		err("invalid --time '%s': expected START,STOP in seconds (either may be empty; several ranges separated by spaces) or percentages such as 10%%/2 or 0%%-10%%,30%%-40%%",
		    c->time);
		return e == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
	}
	report_session__set_times(s, c->times, c->nr_times);
	return 0;
}

static int check_damage(const struct cli *c, struct report_session *s, int ret)
{
	const char *path = c->input;
	const struct perf_reader_damage *d = report_session__damage(s, &path);

	if (!d)
		d = perf_reader__damage(report_session__reader(s));
	if (!d)
		return ret;
	if (!path)
		path = c->input;
	err("%s is damaged at offset %llu: %s; %s", path, (unsigned long long)d->offset,
	    d->reason ? d->reason : "unreadable",
	    c->force ? "reported what precedes it (--force)"
		     : "the report covers what precedes it (--force to accept, --repair OUT to rewrite it)");
	return !c->force && !ret ? EXIT_DAMAGED : ret;
}

static int do_unwind_to(const struct cli *c)
{
	struct inject_opts io = { .comp_level = 1, .jobs = c->jobs };
	struct inject_stats st;
	struct inject *in = inject__new();
	int e = in ? inject__unwind(in, c->input, c->unwind_to, &io, &st) : -ENOMEM;

	if (e < 0)
		err("%s", in ? inject__error(in) : strerror(-e));
	inject__free(in);
	if (e < 0)
		return e == -EINVAL ? EXIT_USAGE : e == -EBADMSG ? EXIT_DAMAGED : EXIT_FAIL;
	if (!c->quiet)
		fprintf(stderr, "preport: %s: %llu samples (%llu unwound into call chains), %llu other "
			"records; %.1f KB -> %.1f KB\n", c->unwind_to, (unsigned long long)st.samples,
			(unsigned long long)st.unwound, (unsigned long long)st.records,
			st.bytes_in / 1024.0, st.bytes_out / 1024.0);
	return 0;
}

/* A file without call chains (no event has PERF_SAMPLE_CALLCHAIN or a user stack to unwind):
 * perf report turns --children off, silently, and refuses a -g other than none with this
 * message (then prints an empty report and exits 0, which is perf's bug: preport exits
 * EXIT_USAGE). Returns -1 to go on, or the exit status. */
static int check_callchains(struct cli *c, struct report_session *s)
{
	struct perf_reader *r = report_session__reader(s);
	uint64_t type = 0;

	for (size_t i = 0; i < perf_reader__nr_attrs(r); i++)
		type |= perf_reader__attr(r, i)->attr.sample_type;
	if (!perf_reader__nr_attrs(r) || (type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)))
		return -1;
	if (c->graph_set && c->ro.graph != REPORT_GRAPH_NONE) {
		err("Selected -g or --branch-history.\n"
		    "But no callchain or branch data.\n"
		    "Did you call 'perf record' without -g or -b?");
		return EXIT_USAGE;
	}
	c->ro.no_children = true;
	c->children_set = false;
	return -1;
}

/* --cpu on a file with an event that has no PERF_SAMPLE_CPU: perf refuses it with this message
 * (perf_session__cpu_bitmap; it then exits 0, preport EXIT_USAGE). Returns -1 or the status. */
static int check_cpu_filter(const struct cli *c, struct report_session *s)
{
	struct perf_reader *r = report_session__reader(s);

	for (size_t i = 0; c->nr_cpus && i < perf_reader__nr_attrs(r); i++)
		if (!(perf_reader__attr(r, i)->attr.sample_type & PERF_SAMPLE_CPU)) {
			err("File does not contain CPU events. Remove -C option to proceed.");
			return EXIT_USAGE;
		}
	return -1;
}

/* Samples that do not decode with their attr are not in the report: say how many, whose and
 * why, and that the report is partial. */
static int check_undecodable(const struct cli *c, struct report_session *s, int ret)
{
	const struct report_session_stats *st = report_session__stats(s);
	struct perf_reader *r = report_session__reader(s);
	bool any = false;

	for (size_t i = 0; i < st->nr_attrs && i < perf_reader__nr_attrs(r); i++) {
		const struct perf_event_attr *at = &perf_reader__attr(r, i)->attr;
		int e = st->attr_bad_error[i];

		if (!st->attr_bad_samples[i])
			continue;
		any = true;
		err("%llu of %llu samples of event '%s' (attr %zu) cannot be decoded: %s "
		    "(sample_type %#llx, sample_regs_user %#llx); %s",
		    (unsigned long long)st->attr_bad_samples[i],
		    (unsigned long long)st->attr_samples[i], report_session__event_name(s, i), i,
		    e == -EPROTO ? "the attr's sample_type has fields no kernel defines: the attr is damaged" :
		    e == -EMSGSIZE ? "the records are longer than the attr's layout: the attr is damaged" :
				     "the records do not fit the attr's layout: the attr or the records are damaged",
		    (unsigned long long)at->sample_type, (unsigned long long)at->sample_regs_user,
		    c->force ? "reported the others (--force)" : "the report is partial (--force to accept)");
	}
	return any && !c->force && !ret ? EXIT_DAMAGED : ret;
}

int main(int argc, char **argv)
{
	/* perf's default: a call graph whenever callchains were recorded */
	struct cli c = { .input = "perf.data", .children = true, .max_stack = 127,
			 .ro = { .min_percent = -1, .graph = REPORT_GRAPH_GRAPH } };
	struct report_session *s;
	double t0 = clock__s();
	int ret;

	ret = parse_args(&c, argc, argv);
	if (ret >= 0)
		goto out;
	ret = 0;
	if (c.unwind_to) {
		ret = resolve_inputs(&c);
		ret = ret >= 0 ? ret : do_unwind_to(&c);
		goto out;
	}
	ret = resolve_inputs(&c);
	if (ret >= 0)
		goto out;
	if (c.header_only) {
		ret = do_header_only(&c);
		goto out;
	}
	ret = EXIT_FAIL;
	s = open_session(&c, &ret);
	if (!s)
		goto out;
	if (c.repair) {
		ret = do_repair(&c, report_session__reader(s));
		report_session__free(s);
		goto out;
	}
	if (c.time && (ret = set_times(&c, s)) > 0) {
		report_session__free(s);
		goto out;
	}
	if (!c.stats && ((ret = check_callchains(&c, s)) >= 0 || (ret = check_cpu_filter(&c, s)) >= 0)) {
		report_session__free(s);
		goto out;
	}
	if (c.header)
		report__fprintf_header(stdout, report_session__reader(s));
	ret = c.stats ? do_stats(s) : do_report(&c, s, t0);
	ret = check_undecodable(&c, s, ret);
	ret = check_damage(&c, s, ret);
	report_session__free(s);
	fflush(stdout);
	if (ferror(stdout) && !ret) {
		err("cannot write the report: %s", strerror(errno));
		ret = EXIT_FAIL;
	}
out:
	free(c.pids);
	free(c.tids);
	free(c.cpus);
	free(c.comms);
	free(c.dsos);
	free(c.symbols);
	free(c.cgroups);
	free(c.times);
	free(c.args);
	inputs__free(&c.inputs);
	return ret;
}
