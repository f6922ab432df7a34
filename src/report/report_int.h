/* What the files of the aggregation (report.c) and its outputs (view.c, table.c, callgraph.c,
 * folded.c, stats.c, options.c) share: the report's interned tables, the rows and call trees of
 * a view, and the containers under them (containers.c). Private to src/report: the public
 * interface is report.h. */
#ifndef PRECORD_REPORT_INT_H
#define PRECORD_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/report.h"

#define NONE UINT32_MAX
#define DEFAULT_MIN_PERCENT 0.5

struct arena {
	char **blocks;
	size_t nr_blocks;
	char *cur;
	size_t left;
};

struct slot {
	uint32_t hash, id1;
};

struct htab {
	struct slot *slots;
	uint32_t mask;
	uint32_t nr;
};

/* What an inlined function's name carries in the report's strings (perf prints its fake symbol
 * so). */
#define REP_INLINED_SUFFIX " (inlined)"

struct frame {
	uint32_t dso;   /* string id or NONE */
	uint32_t sym;   /* string id or NONE (then ip and map_ip are the identity) */
	uint64_t ip, map_ip, map_off, sym_start;
	bool kernel;
	bool inlined;   /* sym is "NAME (inlined)" */
	uint32_t srcline; /* string id or NONE: set only when sorting by srcline */
	uint32_t srcfile; /* string id or NONE: set only when sorting by srcfile */
	uint32_t graph;   /* the frame a call graph shows: this one without its srcline and
			   * srcfile (perf's chains match by function, whatever the line) */
	uint32_t dso_seq; /* report_frame.dso_seq of the first sight */
};

struct tnode {          /* prefix tree of stacks, root first; node 0 is the empty root */
	uint32_t parent, frame;
	uint32_t depth;
};

struct ctx {            /* who ran: everything a row key may need besides the frame */
	uint32_t comm;
	uint32_t cgroup, unit;  /* interned cgroup path and unit name */
	uint32_t parent;        /* interned parent symbol (report_sample.parent), NONE: none */
	int32_t pid, tid, cpu;
	uint32_t thread;        /* which thread of tid (report_sample.thread) */
	uint32_t leaf_kernel;   /* the sample's mode (frames[0].kernel) */
	uint32_t filtered;      /* excluded by --pid/--tid/--comm, or the caller's filters
				 * (--dsos, --symbols, --cgroup): counted, never shown */
};

struct rec {            /* one distinct (stack, context, self frame) with its counters */
	uint32_t node, ctx;
	uint32_t self;          /* the Self row's frame: the leaf, or the symbol its inlined
				 * frames were expanded from */
	uint64_t period, count;
};

struct tidcomm {         /* a thread: a tid, and which thread of it */
	int32_t tid;
	uint32_t thread;
	uint32_t comm;
	bool final;     /* comm is the thread's last name in the recording (report__final_comms) */
};

#define REPORT_MEMO 1024
struct memo {
	const char *p;
	uint32_t id;
};

struct report {
	struct report_opts opts;
	struct memo memo[REPORT_MEMO]; /* intern()'s last id by string address */
	int32_t *pids, *tids, *cpus;
	char **comms;
	bool key_cpu;
	uint32_t elided;        /* rep_elided_keys of opts */
	/* The table's columns and the rows' order (each field's comparison in turn), from the
	 * sort keys and -F (report_opts.fields); self_header: the overhead column is "Self". */
	struct report_field cols[2 * REPORT_MAX_FIELDS], sorts[2 * REPORT_MAX_FIELDS];
	size_t nr_cols, nr_sorts;
	bool self_header;

	struct arena arena;
	char **strs;
	size_t nr_strs, cap_strs;
	struct htab str_ht;

	struct frame *frames;
	size_t nr_frames, cap_frames;
	struct htab frame_ht;
	char **fnames;          /* folded names per frame, made lazily */
	size_t cap_fnames;

	struct tnode *nodes;
	size_t nr_nodes, cap_nodes;
	struct htab node_ht;
	uint32_t max_depth;

	struct ctx *ctxs;
	size_t nr_ctxs, cap_ctxs;
	struct htab ctx_ht;
	uint32_t last_ctx;
	int32_t last_pid, last_tid, last_cpu;
	uint32_t last_thread;
	const char *last_comm_ptr;
	const char *last_cgroup_ptr;
	const char *last_parent_ptr;
	bool last_thread_filtered;      /* its --pid/--tid/--comm outcome */

	struct rec *recs;
	size_t nr_recs, cap_recs;
	struct htab rec_ht;

	struct tidcomm *tidcomms;
	size_t nr_tidcomms, cap_tidcomms;
	struct htab tidcomm_ht;

	uint64_t nr_samples, total_period;
	uint32_t *scratch;      /* frame path of one record, max_depth long */
	size_t cap_scratch;
};

struct gctx {
	const struct view *v;
	FILE *fp;
	uint64_t total, min_hit;
	bool fractal;           /* perf's fractal: shares of the parent, thresholds per node */
	double min_percent;     /* fractal's threshold */
	int margin;             /* extra left margin after "---" */
	bool *mask;             /* mask[i]: draw the '|' of depth i */
	size_t cap_mask;
	bool any;               /* this graph printed something */
};

struct ekey {
	uint32_t comm, dso, frame;
	uint32_t cgroup, unit;
	uint32_t parent;        /* string id, NONE: "[other]" (or not a key) */
	int32_t tid, cpu;
	uint32_t addr_lo, addr_hi; /* unresolved symbol: the address (frame is then NONE) */
	uint32_t unresolved;
	uint32_t srcline;       /* string id, NONE: not a key */
	uint32_t srcfile;       /* string id, NONE: not a key */
};

struct entry {
	struct ekey key;
	uint32_t frame, comm;   /* what the row shows */
	uint32_t cgroup, unit;
	bool filtered;          /* created by a filtered sample: hidden, as in perf */
	uint64_t addr;          /* unresolved: the address shown and sorted on */
	bool kernel;            /* "[k]": the mode when the row was created */
	int32_t pid, tid, cpu;  /* of the sample that created the row (perf's he->thread) */
	uint32_t thread;
	uint64_t self, children, nr_samples;
	uint64_t self_sys;      /* of self: samples taken in the kernel (perf's period_sys) */
	uint32_t max_depth;     /* longest chain appended (perf's callchain->max_depth) */
	uint32_t stamp;         /* last record that touched it: counts a stack once */
	uint32_t croot;         /* call tree root in view.cnodes, NONE without graphs */
};

struct cnode {
	uint32_t frame, parent;
	uint32_t first_child, next_sibling, nr_children;
	uint64_t hit, cumul;    /* chains ending here; chains through here (periods) */
	uint64_t hit_n, cumul_n; /* ... their samples */
};

struct view {
	struct report *r;
	struct entry *entries;
	size_t nr_entries, cap_entries;
	struct htab entry_ht;
	struct cnode *cnodes;
	size_t nr_cnodes, cap_cnodes;
	struct htab cnode_ht;
	uint32_t *order;        /* entries in output order */
	bool graph;
	/* the rows' percentages are of total (--percentage relative: of the rows shown) */
	uint64_t total;
	/* perf's nr_non_filtered_samples: the samples whose own row was shown when they came
	 * (--symbol-filter hides rows only later) */
	uint64_t nr_unfiltered;
};

/* containers.c. A copy of s[0..len) with a NUL in the arena; NULL when out of memory. */
char *rep_arena_strdup(struct arena *a, const char *s, size_t len);
/* Free every block of the arena. */
void rep_arena_free(struct arena *a);
/* Room for one more id (rehashing as needed). Returns 0 or -ENOMEM. */
int rep_htab_reserve(struct htab *t);
/* The slot holding the id eq() finds equal to key, or the empty slot where it goes. */
struct slot *rep_htab_probe(const struct htab *t, uint32_t h,
			       bool (*eq)(const void *ctx, uint32_t id, const void *key),
			       const void *ctx, const void *key);
/* Store id with hash h in slot s (found by rep_htab_probe). */
void rep_htab_set(struct htab *t, struct slot *s, uint32_t h, uint32_t id);
/* Hashes: a 64-bit finalizer, of words, of a string. */
uint64_t rep_mix64(uint64_t x);
uint32_t rep_hash_words(const uint32_t *w, size_t n);
uint32_t rep_hash_str(const char *s, size_t len);
/* Grow *arr (of *cap elements of sz bytes) to hold n + 1. Returns 0 or -ENOMEM. */
int rep_grow(void *arr, size_t *cap, size_t n, size_t sz);
/* report.c. The interned string of id; NULL for NONE. */
const char *rep_str(const struct report *r, uint32_t id);
/* The last comm seen for tid (perf shows a thread by its latest name), else fallback. */
uint32_t rep_latest_comm(const struct report *r, const struct entry *e);
/* The width perf gives row e's comm: its thread's last name's; the row's own name's too when
 * that last name is not known for sure (then no cell is cut). */
size_t rep_comm_width(const struct report *r, const struct entry *e);
/* The frame ids of tree node `node` into r->scratch, leaf first. Returns their number or
 * -ENOMEM. */
int rep_rec_frames(struct report *r, uint32_t node);
/* view.c. A red-black tree over ids 0..n-1 in caller-provided arrays, inserting exactly like
 * the kernel's rbtree (the classic algorithm): with a comparison that is not transitive, the
 * in-order result depends on the tree's shape, and perf's orders are its trees'. */
struct rbt {
	uint32_t *left, *right, *parent;
	bool *red;
	uint32_t root;          /* NONE: empty */
};
/* Insert z: left_of(ctx, z, x) says whether z goes left of x, already in the tree. */
void rep_rb_insert(struct rbt *t, bool (*left_of)(const void *ctx, uint32_t z, uint32_t x),
		   const void *ctx, uint32_t z);
/* The ids in order into out; returns how many. */
size_t rep_rb_inorder(const struct rbt *t, uint32_t *out);
/* Larger first: -1, 0, 1. */
int rep_cmp_u64_desc(uint64_t a, uint64_t b);
/* Free a view built by rep_view_build. */
void rep_view_free(struct view *v);
/* Rows and (with graph) call trees of r, in perf's order. Returns 0 or -ENOMEM. */
int rep_view_build(struct view *v, struct report *r, bool graph);
/* The length of f's symbol name as perf's symbol has it: an inlined function's without
 * REP_INLINED_SUFFIX (perf sizes the Symbol column by it, and --symbol-filter searches it).
 * f->sym must not be NONE. */
size_t rep_sym_len(const struct report *r, const struct frame *f);
/* table.c. v as a percentage of total (0 when total is 0). */
double rep_pct(uint64_t v, uint64_t total);
/* The one value sort key k is filtered down to (--comm, --dsos or --symbols with a single name)
 * and the preamble's label for it ("comm", "dso", "symbol"); NULL when there is none. */
const char *rep_single_value(const struct report_opts *o, enum report_sort_key k,
			     const char **ret_label);
/* The sort keys (bit k for key k) whose columns are hidden: those filtered down to one value,
 * unless every key is. Computed once per report (struct report's elided). */
uint32_t rep_elided_keys(const struct report_opts *o);
/* Whether a and b are the same column: the same kind, and the same key for a key's. */
static inline bool rep_field_eq(struct report_field a, struct report_field b)
{
	return a.kind == b.kind && (a.kind != REPORT_FIELD_KEY || a.key == b.key);
}

/* Whether sort key k's column is hidden. It takes no part in the rows' order either (perf's
 * perf_hpp__should_skip). */
static inline bool rep_elided(const struct report *r, enum report_sort_key k)
{
	return r->elided >> k & 1;
}
/* callgraph.c. Print e's call graph. Returns 0, -ENOMEM or -EIO. */
int rep_print_graph(struct gctx *g, const struct entry *e);
/* view.c. Sort key k's output order of two rows (ascending), and its collapse order, which
 * tells rows apart (a symbol by its file and address, not its name). */
int rep_key_sort(const struct report *r, enum report_sort_key k, const struct entry *a,
		 const struct entry *b);
int rep_key_collapse(const struct report *r, enum report_sort_key k, const struct entry *a,
		     const struct entry *b);
/* perf's flat (folded false) and folded call graphs under e's row. */
int rep_print_chains(struct gctx *g, const struct entry *e, bool folded);

#endif
