/* The output side of preport: aggregates resolved samples and prints what `perf report` prints
 * (the --stdio table with Children/Self, call graphs), plus collapsed stacks for flame graphs
 * and `--stats`. Samples are stored once per unique (thread, stack): a prefix tree of interned
 * frames plus a counter, so memory grows with the number of distinct stacks, not samples. */
#ifndef PRECORD_REPORT_H
#define PRECORD_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct report;

/* One resolved frame. Strings are copied (interned) by report__add_sample: they need to live
 * only for the duration of the call. */
struct report_frame {
	uint64_t ip;        /* absolute address: call-graph lines of unresolved frames show it */
	uint64_t map_ip;    /* address within the dso (map->map_ip(ip)); equal to ip outside any
			     * map. The row of an unresolved leaf shows it, like perf */
	uint64_t map_off;   /* perf's map_ip: the file offset of map_ip (ip - map start + pgoff),
			     * which the row of an unresolved user leaf shows; map_ip elsewhere */
	uint64_t sym_start; /* start of sym in the dso, 0 if unknown: two symbols of one name in
			     * one dso (static functions, plt stubs) stay apart, as in perf */
	const char *dso;  /* short name as perf shows it ("libc.so.6", "[kernel.kallsyms]");
			   * NULL: no map, shown as "[unknown]" */
	uint32_t dso_seq; /* the dso's creation order (dso__seq), which orders equal siblings in
			   * call graphs as perf's dso pointers do; 0: unknown, the order the
			   * report first saw the name in stands in */
	const char *sym;  /* NULL: unresolved, shown as its address */
	bool kernel;      /* kernel-mode frame: "[k]" rather than "[.]" */
	bool inlined;     /* perf's "sym (inlined)": a function inlined at ip (shown so) */
	bool expanded;    /* one of the frames perf makes of one address (its inline chain,
			   * innermost first): consecutive expanded frames of equal ip are one
			   * location, as pprof's Location.line lists */
	const char *srcline; /* "file.c:12" as perf's srcline shows it; NULL: unknown */
	const char *srcfile; /* "file.c" as perf's srcfile shows it ("" unknown); NULL: not
			      * asked for */
};

struct report_sample {
	const char *comm;
	const char *cgroup; /* the sample's cgroup path; NULL: not recorded ("N/A") */
	bool filtered;      /* excluded by the caller's own filters (the session's --cgroup):
			     * counted in the totals, never shown, as the opts' filters */
	int32_t pid, tid;
	uint32_t thread;  /* which thread of tid (a FORK of a tid seen before makes another):
			   * report_session_sample.thread; 0 for all: one per tid */
	int32_t cpu;      /* -1 when the file has no PERF_SAMPLE_CPU */
	uint64_t period;
	uint64_t time;    /* unused today; samples must simply arrive in time order */
	size_t nr_frames; /* frames[0] is the sampled ip; 0: no chain (self is then the ip) */
	const struct report_frame *frames; /* leaf first */
	/* The Self row's frame, perf's sample symbol, when frames[0] is not it (the leaf's
	 * inlined frames come first); NULL: frames[0]. */
	const struct report_frame *self;
	/* perf's parent symbol: the name of the frame -p's regex matched (the parent key);
	 * NULL: none ("[other]"). Kept (by address) until the report is freed. */
	const char *parent;
	/* NULL, or the sample's place in the report's call tree for a caller that sees the same
	 * stacks again: when known, frames and self are not read (frames may be NULL; nr_frames
	 * must still be >= 1); else report__add_sample fills it in. Valid for this report only. */
	struct report_chain *chain;
};

struct report_chain {
	uint32_t node, self;
	bool known;
	bool leaf_kernel;
};

enum report_sort_key {
	REPORT_SORT_COMM,
	REPORT_SORT_DSO,
	REPORT_SORT_SYM,
	REPORT_SORT_PID, /* perf's "pid": one row per thread, printed "tid:comm" */
	REPORT_SORT_CPU,
	REPORT_SORT_CGROUP, /* perf's "cgroup": the cgroup path */
	REPORT_SORT_UNIT,   /* the systemd unit of the cgroup (service, scope or slice) */
	REPORT_SORT_SRCLINE, /* perf's srcline: "file.c:12" of the row's address (report_frame's
			      * srcline; rows of one function split by line) */
	REPORT_SORT_PARENT,  /* perf's parent: the sample's caller matching -p's regex, or
			      * "[other]" (report_sample.parent) */
	REPORT_SORT_SRCFILE, /* perf's srcfile: the source file of the row's address
			      * (report_frame's srcfile) */
};
#define REPORT_SORT_LAST REPORT_SORT_SRCFILE
#define REPORT_MAX_SORT_KEYS 8

/* perf's -F/--fields: a column of the table. */
enum report_field_kind {
	REPORT_FIELD_OVERHEAD,  /* perf's overhead: the row's own share ("Self" beside Children) */
	REPORT_FIELD_CHILDREN,  /* overhead_children: with the functions it calls */
	REPORT_FIELD_SYS,       /* overhead_sys: the own share of samples taken in the kernel */
	REPORT_FIELD_US,        /* overhead_us: ... in user mode */
	REPORT_FIELD_SAMPLE,    /* sample: the row's own samples */
	REPORT_FIELD_PERIOD,    /* period: the row's own period */
	REPORT_FIELD_KEY,       /* a sort key's column */
};
struct report_field {
	enum report_field_kind kind;
	enum report_sort_key key;       /* REPORT_FIELD_KEY */
};
#define REPORT_MAX_FIELDS (REPORT_MAX_SORT_KEYS + 6)

enum report_graph {
	REPORT_GRAPH_NONE,  /* -g none, or no callchains recorded */
	REPORT_GRAPH_GRAPH, /* perf's "graph": tree with absolute percentages */
	REPORT_GRAPH_FLAT,  /* perf's "flat": each chain whole, one frame a line */
	REPORT_GRAPH_FOLDED, /* perf's "folded": each chain on one line, frames joined by ';' */
	REPORT_GRAPH_FRACTAL, /* perf's "fractal": the tree, each branch's share of its parent's */
};

/* perf's -g value: what a call-graph branch shows */
enum report_graph_value {
	REPORT_VALUE_PERCENT, /* its share of the total (of its parent's, fractal) */
	REPORT_VALUE_PERIOD,  /* the period of the samples through it */
	REPORT_VALUE_COUNT,   /* their number */
};

enum report_order {
	REPORT_ORDER_DEFAULT, /* perf's: caller with children, callee without */
	REPORT_ORDER_CALLER,
	REPORT_ORDER_CALLEE,
};

struct report_opts {
	/* Sort keys, in order; nr_sort_keys == 0 means perf's default comm,dso,sym. */
	enum report_sort_key sort_keys[REPORT_MAX_SORT_KEYS];
	size_t nr_sort_keys;
	bool no_children;         /* --no-children */
	bool show_nr_samples;     /* -n: a Samples column (the row's own samples), as perf's */
	bool show_total_period;   /* --show-total-period: a Period column (the row's own) */
	bool show_cpu_utilization; /* sys and usr columns after Self (not with a -F list of
				    * its own, as perf) */
	const char *field_sep;    /* -t: cells separated by this, not padded spaces (NULL) */
	bool relative;            /* --percentage relative: shares of the rows shown (the
				   * filters' leftovers), not of every sample */
	bool no_inline;           /* --no-inline: frames as they are, no inlined functions */
	bool full_source_path;    /* srclines and srcfiles with the file's path as addr2line
				   * gives it, not its base name */
	/* perf's --ignore-callees: an extended regex; in each chain the frames under the
	 * outermost function it matches are left out, the sample counted as that function's.
	 * NULL: none. report_set__new fails with EINVAL when it does not compile. */
	const char *ignore_callees;
	/* perf's -p/--parent: an extended regex naming the parents (with it, the parent key is
	 * added to the sort keys if missing; without it, a parent key takes perf's default
	 * "^sys_|^do_page_fault"); exclude_other (-x): samples without a parent count in the
	 * totals but show in no row. */
	const char *parent;
	bool exclude_other;
	bool no_demangle;         /* --no-demangle: symbols named as their files spell them
				   * (ELF version included); inlined functions keep their names */
	enum report_graph graph;
	enum report_order order;
	double min_percent;       /* call-graph threshold in percent of the total; < 0: 0.5 */
	enum report_graph_value graph_value;
	uint32_t print_limit;     /* perf's -g print_limit: at most this many branches a level
				   * (and lines of a single root's run, chains of flat and
				   * folded); 0: all */
	/* Folded stacks and the flame graph count periods, in this unit ("ns" for off-CPU and
	 * wall-clock profiles, whose periods are times), rather than samples. NULL: samples. */
	const char *period_unit;
	const char *time_str;     /* --time as given: "(time slices: ...)" in the Samples line */
	double percent_limit;     /* --percent-limit: rows under this percent (Children with
				   * children, else Self) are not printed; 0: all */
	/* perf's -F/--fields: the columns, in this order; the sort keys among them sort too
	 * (after -s's, which follow them as columns), and the rows are ordered by -s's keys,
	 * then by these fields in turn. With fields_append (perf's "+list"), they follow perf's
	 * default columns and order instead. nr_fields 0: the default columns (Children, Self or
	 * Overhead, -n's Samples, --show-total-period's Period, the sort keys). */
	struct report_field fields[REPORT_MAX_FIELDS];
	size_t nr_fields;
	bool fields_append;
	/* perf's --hierarchy: a level per sort key, each row the sum of those under it; the
	 * columns are Overhead (self), -n's and --show-total-period's; no fields. */
	bool hierarchy;

	/* Filters. pid/tid/comm behave like perf's: a filtered sample still counts in the totals
	 * (percentages stay absolute) but makes no row. cpu drops the sample entirely. */
	const int32_t *pids;
	size_t nr_pids;
	const int32_t *tids;
	size_t nr_tids;
	const char *const *comms;
	size_t nr_comms;
	/* perf's --dsos and --symbols: rows of samples whose own ip lies in one of these DSOs
	 * (short name, "libc.so.6", or path) or symbols (names); the caller marks the others
	 * filtered (report_sample.filtered). Here: the preamble and the hidden column. A list
	 * that is not NULL filters, empty too (then it lets nothing through; as comms). */
	const char *const *dsos;
	size_t nr_dsos;
	const char *const *symbols;
	size_t nr_symbols;
	/* perf's --symbol-filter: only rows whose own symbol's name holds this (NULL: all) */
	const char *symbol_filter;
	const int32_t *cpus;
	size_t nr_cpus;
};

/* Whether name (NULL: none) is one of the n names of list: the test of every name filter
 * (--comm, --dsos, --symbols). */
bool report__name_listed(const char *const *list, size_t n, const char *name);

/* Parse a perf-style --sort list ("comm,dso,sym"; also "symbol", "pid", "tid" (same as pid),
 * "cpu") into opts. Returns 0, or -EINVAL (unknown or repeated key, too many keys) leaving opts
 * untouched. */
int report__parse_sort(const char *list, struct report_opts *opts);

/* Parse perf's -F list (overhead, overhead_children, overhead_sys, overhead_us, sample,
 * period and the sort keys; a leading '+' appends them to the default columns) into opts.
 * A field given twice counts once. Returns 0, or -EINVAL with the offending word (or the
 * whole list when it is empty) copied to bad, opts untouched. */
int report__parse_fields(const char *list, struct report_opts *opts, char *bad, size_t bad_size);

/* Whether the report sorts by key k: a -s key or a -F field. */
bool report__wants_key(const struct report_opts *opts, enum report_sort_key k);
/* ... a -s key (before -F's fields join them). */
bool report__sorts_by(const struct report_opts *opts, enum report_sort_key k);
/* Whether a report with opts reads more of a sample than its own ip: a Children column, a
 * call graph, a parent or --ignore-callees (its table and folded stacks alike). Without,
 * the samples need not be unwound (report_session_opts.self_only). */
bool report__needs_callers(const struct report_opts *opts);

/* Parse perf's -g argument: comma-separated "graph"/"none", "caller"/"callee" and a threshold
 * number, any subset in any order. Returns 0 or -EINVAL (opts untouched). */
int report__parse_callgraph(const char *arg, struct report_opts *opts);

/* New empty report. opts may be NULL (perf's defaults). Returns NULL with errno set (ENOMEM,
 * EINVAL for a bad option). */
struct report *report__new(const struct report_opts *opts);

/* Add one sample. Cheap (one hash lookup per frame; no allocation once the stack has been
 * seen). Not thread-safe: call it from one thread; unwinding can run in parallel beforehand.
 * Returns 0 (also when a filter dropped the sample), -EINVAL (no frames) or -ENOMEM (the
 * report is unchanged). */
int report__add_sample(struct report *r, const struct report_sample *s);

/* perf's pid column names a row after the thread of the sample that made it, by the thread's
 * last name in the recording, which may come after its last sample (a thread renamed, or
 * exec'd, late): each thread's name from comm_of (NULL: keep the one of its last sample).
 * Call after the last sample. Returns 0 or -ENOMEM. */
int report__final_comms(struct report *r,
			const char *(*comm_of)(void *ctx, int32_t tid, uint32_t thread),
			void *ctx);

/* Totals as perf's header shows them: samples and period counted, filtered rows included. */
uint64_t report__nr_samples(const struct report *r);
uint64_t report__total_period(const struct report *r);

/* One row of the table, in output order. Strings belong to the report. */
struct report_entry {
	const char *comm;
	const char *cgroup, *unit;  /* meaningful only for the keys that were sorted on */
	int32_t pid, tid, cpu;      /* meaningful only for the keys that were sorted on */
	const char *dso;            /* NULL: [unknown] */
	const char *sym;            /* NULL: unresolved, see addr */
	uint64_t addr;              /* unresolved: the address perf prints in the row */
	bool kernel;
	uint64_t self, children;    /* periods; children == self with no_children */
	uint64_t nr_samples;        /* samples whose leaf is this entry */
};

/* Call fn for every row in perf's order. Stops early and returns fn's value when it is not 0.
 * Returns 0, or -ENOMEM. */
int report__foreach_entry(struct report *r,
			  int (*fn)(const struct report_entry *e, void *ctx), void *ctx);

/* Print one event's section like `perf report --stdio`: "# Samples: ... of event 'name'",
 * "# Event count", column headers, rows and (per opts.graph) call graphs, ending with two
 * newlines. Returns 0, -ENOMEM, or -EIO when writing failed. */
int report__fprintf(struct report *r, FILE *fp, const char *event_name);

/* Collapsed stacks, as `perf script | stackcollapse-perf.pl` prints them: one line
 * "comm;root;...;leaf COUNT" per distinct stack, COUNT in samples, lines sorted bytewise.
 * Filtered samples are left out. Returns 0, -ENOMEM or -EIO. */
int report__fprintf_folded(struct report *r, FILE *fp);

/* Call fn once per distinct (comm, stack) of unfiltered samples: names[0] is the comm, then the
 * frames root first, each named as in the folded output. Strings and the array belong to the
 * report and are valid during the call. Order: first appearance. Stops and returns fn's value
 * when it is not 0. Returns 0 or -ENOMEM. */
int report__foreach_stack(struct report *r,
			  int (*fn)(const char *const *names, size_t nr, uint64_t samples,
				    uint64_t period, void *ctx),
			  void *ctx);

/* Write an interactive SVG flame graph of the unfiltered stacks (see flamegraph.h). title may be
 * NULL. Returns 0, -ENOMEM or -EIO. */
int report__fprintf_flamegraph(struct report *r, FILE *fp, const char *title);

void report__free(struct report *r);

/* What --stats prints. The caller counts records while reading. */
#define REPORT_NR_RECORD_TYPES 128

struct report_event_stats {
	const char *name;           /* "cpu-clock" */
	uint64_t nr_samples;
	uint64_t nr_lost_samples;   /* sum of PERF_RECORD_LOST_SAMPLES.lost for this event */
};

struct report_pause_stats {
	bool present;               /* the file was recorded by precord --lossless */
	uint64_t nr_pauses;
	uint64_t paused_ns;         /* total time the target was held */
	uint64_t longest_pause_ns;
	uint64_t recording_ns;      /* wall time of the recording, 0 if unknown */
	const char *mechanism;      /* how the target was paused ("" or NULL: not said) */
	const uint64_t *by_ring;    /* pauses each ring caused (nr_rings; may be unaligned) */
	uint32_t nr_rings;
};

struct report_stats {
	uint64_t nr_events[REPORT_NR_RECORD_TYPES]; /* by PERF_RECORD_* type; [0] ignored */
	uint64_t total_lost_samples;                /* all events */
	const struct report_event_stats *events;
	size_t nr_events_stats;
	struct report_pause_stats pause;
};

/* What perf prints between its "# To display the perf.data header info..." / "#" lines and the
 * first event's section: "# comm: NAME" when a single --comm hides that column (r may be
 * NULL), then "#\n# Total Lost Samples: N\n#\n". Returns 0 or -EIO. */
int report__fprintf_preamble(const struct report *r, FILE *fp, uint64_t total_lost_samples);

/* Print like `perf report --stats`: "Aggregated stats:", one line per record type seen with its
 * share, then per-event SAMPLE / LOST_SAMPLES counts, then precord's pause statistics when
 * present. Returns 0 or -EIO. */
int report__fprintf_stats(FILE *fp, const struct report_stats *st);

/* perf's warnings after processing ("Processed N events and lost M chunks!", "Processed N
 * samples and lost X%!" above 5%). Prints nothing when there is nothing to warn about.
 * Returns the number of warnings printed or -EIO. */
int report__fprintf_warnings(FILE *fp, const struct report_stats *st);

#endif
