/* Aggregation and perf-report-style output. Adding a sample interns its strings and frames and
 * walks a prefix tree of frames from the root; the sample then only bumps the counter of its
 * (tree node, thread context) record. Rows, Children/Self and call graphs are derived from the
 * records when printing, so a million samples over a few thousand distinct stacks cost a few
 * thousand records. Output follows perf 6.1 (builtin-report, ui/stdio/hist.c) in layout, order
 * and numbers; every place where perf's behaviour is surprising says so. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "lib/cleanup.h"
#include "report/flamegraph.h"
#include "report/report.h"

#define NONE UINT32_MAX
#define DEFAULT_MIN_PERCENT 0.5

/* ---- small building blocks: string arena, open-addressing index table ---------------------- */

struct arena {
	char **blocks;
	size_t nr_blocks;
	char *cur;
	size_t left;
};

static char *arena_strdup(struct arena *a, const char *s, size_t len)
{
	if (len + 1 > a->left) {
		size_t sz = len + 1 > 65536 ? len + 1 : 65536;
		char **nb = realloc(a->blocks, (a->nr_blocks + 1) * sizeof(*nb));
		if (!nb)
			return NULL;
		a->blocks = nb;
		a->cur = malloc(sz);
		if (!a->cur) {
			a->left = 0;
			return NULL;
		}
		a->blocks[a->nr_blocks++] = a->cur;
		a->left = sz;
	}
	char *p = a->cur;
	memcpy(p, s, len);
	p[len] = '\0';
	a->cur += len + 1;
	a->left -= len + 1;
	return p;
}

static void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->nr_blocks; i++)
		free(a->blocks[i]);
	free(a->blocks);
}

/* Slots hold the full hash and id + 1 (0: empty); ids index an array owned by the user, which
 * also answers equality. Load stays below 1/2. */
struct slot {
	uint32_t hash, id1;
};

struct htab {
	struct slot *slots;
	uint32_t mask;
	uint32_t nr;
};

static int htab_reserve(struct htab *t)
{
	if (t->slots && (t->nr + 1) * 2 <= t->mask + 1)
		return 0;
	uint32_t cap = t->slots ? (t->mask + 1) * 2 : 64;
	struct slot *ns = calloc(cap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	if (t->slots) {
		for (uint32_t i = 0; i <= t->mask; i++) {
			if (!t->slots[i].id1)
				continue;
			uint32_t j = t->slots[i].hash & (cap - 1);
			while (ns[j].id1)
				j = (j + 1) & (cap - 1);
			ns[j] = t->slots[i];
		}
		free(t->slots);
	}
	t->slots = ns;
	t->mask = cap - 1;
	return 0;
}

/* Finds the slot of the id equal to key, or the empty slot where it belongs. The table must
 * have been reserved. */
static struct slot *htab_probe(const struct htab *t, uint32_t h,
			       bool (*eq)(const void *ctx, uint32_t id, const void *key),
			       const void *ctx, const void *key)
{
	uint32_t j = h & t->mask;
	for (;;) {
		struct slot *s = &t->slots[j];
		if (!s->id1 || (s->hash == h && eq(ctx, s->id1 - 1, key)))
			return s;
		j = (j + 1) & t->mask;
	}
}

static void htab_set(struct htab *t, struct slot *s, uint32_t h, uint32_t id)
{
	s->hash = h;
	s->id1 = id + 1;
	t->nr++;
}

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint32_t hash_words(const uint32_t *w, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	for (size_t i = 0; i < n; i++)
		h = mix64(h ^ w[i]) + i;
	return (uint32_t)(h ^ (h >> 32));
}

static uint32_t hash_str(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (uint32_t)(h ^ (h >> 32));
}

/* Grow *arr (of *cap elements of size sz) to hold n + 1. */
static int grow(void *arr, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	void *p = realloc(*(void **)arr, nc * sz);
	if (!p)
		return -ENOMEM;
	*(void **)arr = p;
	*cap = nc;
	return 0;
}

/* ---- the report --------------------------------------------------------------------------- */

struct frame {
	uint32_t dso;   /* string id or NONE */
	uint32_t sym;   /* string id or NONE (then ip and map_ip are the identity) */
	uint64_t ip, map_ip, sym_start;
	bool kernel;
};

struct tnode {          /* prefix tree of stacks, root first; node 0 is the empty root */
	uint32_t parent, frame;
	uint32_t depth;
};

struct ctx {            /* who ran: everything a row key may need besides the frame */
	uint32_t comm;
	int32_t pid, tid, cpu;
	uint32_t leaf_kernel;   /* the sample's mode (frames[0].kernel) */
	uint32_t filtered;      /* excluded by --pid/--tid/--comm: counted, never shown */
};

struct rec {            /* one distinct (stack, context) with its counters */
	uint32_t node, ctx;
	uint64_t period, count;
};

struct tidcomm {
	int32_t tid;
	uint32_t comm;
};

struct report {
	struct report_opts opts;
	int32_t *pids, *tids, *cpus;
	char **comms;
	bool key_cpu;

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
	const char *last_comm_ptr;

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

static bool str_eq(const void *c, uint32_t id, const void *key)
{
	const struct report *r = c;
	const char *const *k = key;
	return strcmp(r->strs[id], *k) == 0;
}

/* Interned id of s (NULL: NONE). Returns 0 and sets *ret, or -ENOMEM. */
static int intern(struct report *r, const char *s, uint32_t *ret)
{
	if (!s) {
		*ret = NONE;
		return 0;
	}
	size_t len = strlen(s);
	uint32_t h = hash_str(s, len);
	if (htab_reserve(&r->str_ht) < 0)
		return -ENOMEM;
	struct slot *sl = htab_probe(&r->str_ht, h, str_eq, r, &s);
	if (sl->id1) {
		*ret = sl->id1 - 1;
		return 0;
	}
	if (grow(&r->strs, &r->cap_strs, r->nr_strs, sizeof(*r->strs)) < 0)
		return -ENOMEM;
	char *p = arena_strdup(&r->arena, s, len);
	if (!p)
		return -ENOMEM;
	r->strs[r->nr_strs] = p;
	htab_set(&r->str_ht, sl, h, r->nr_strs);
	*ret = r->nr_strs++;
	return 0;
}

static const char *str(const struct report *r, uint32_t id)
{
	return id == NONE ? NULL : r->strs[id];
}

static bool frame_eq(const void *c, uint32_t id, const void *key)
{
	const struct report *r = c;
	const struct frame *a = &r->frames[id], *b = key;
	return a->dso == b->dso && a->sym == b->sym && a->kernel == b->kernel &&
	       a->sym_start == b->sym_start &&
	       (a->sym != NONE || (a->ip == b->ip && a->map_ip == b->map_ip));
}

static int frame_id(struct report *r, const struct report_frame *f, uint32_t *ret)
{
	/* A frame outside any map has no mode of its own: perf shows it with the mode of the
	 * frame visited before it (see view_add_rec), so it is one frame whatever the flag. */
	struct frame k = { .kernel = f->dso && f->kernel };
	int err = intern(r, f->dso, &k.dso);
	if (!err)
		err = intern(r, f->sym, &k.sym);
	if (err)
		return err;
	/* Resolved frames are one function whatever the ip (perf's sort_key=function); the
	 * addresses are kept as zero in the key and filled in below. */
	if (k.sym == NONE) {
		k.ip = f->ip;
		k.map_ip = f->map_ip;
	} else {
		k.sym_start = f->sym_start;
	}
	uint64_t a = k.ip ^ mix64(k.map_ip) ^ mix64(k.sym_start + 1);
	uint32_t w[5] = { k.dso, k.sym, (uint32_t)a, (uint32_t)(a >> 32), k.kernel };
	uint32_t h = hash_words(w, 5);
	if (htab_reserve(&r->frame_ht) < 0)
		return -ENOMEM;
	struct slot *sl = htab_probe(&r->frame_ht, h, frame_eq, r, &k);
	if (sl->id1) {
		*ret = sl->id1 - 1;
		return 0;
	}
	if (grow(&r->frames, &r->cap_frames, r->nr_frames, sizeof(*r->frames)) < 0)
		return -ENOMEM;
	/* A resolved frame keeps the first addresses seen: they order siblings in graphs. */
	if (k.sym != NONE && !k.sym_start)
		k.ip = f->ip;
	r->frames[r->nr_frames] = k;
	htab_set(&r->frame_ht, sl, h, r->nr_frames);
	*ret = r->nr_frames++;
	return 0;
}

static bool node_eq(const void *c, uint32_t id, const void *key)
{
	const struct report *r = c;
	const uint32_t *k = key;
	return r->nodes[id].parent == k[0] && r->nodes[id].frame == k[1];
}

static int child_node(struct report *r, uint32_t parent, uint32_t frame, uint32_t *ret)
{
	uint32_t k[2] = { parent, frame };
	uint32_t h = hash_words(k, 2);
	if (htab_reserve(&r->node_ht) < 0)
		return -ENOMEM;
	struct slot *sl = htab_probe(&r->node_ht, h, node_eq, r, k);
	if (sl->id1) {
		*ret = sl->id1 - 1;
		return 0;
	}
	if (grow(&r->nodes, &r->cap_nodes, r->nr_nodes, sizeof(*r->nodes)) < 0)
		return -ENOMEM;
	uint32_t depth = r->nodes[parent].depth + 1;
	r->nodes[r->nr_nodes] = (struct tnode){ .parent = parent, .frame = frame, .depth = depth };
	htab_set(&r->node_ht, sl, h, r->nr_nodes);
	*ret = r->nr_nodes++;
	return 0;
}

static bool filtered(const struct report_opts *o, const struct report_sample *s);

static bool ctx_eq(const void *c, uint32_t id, const void *key)
{
	const struct report *r = c;
	return memcmp(&r->ctxs[id], key, sizeof(struct ctx)) == 0;
}

static int ctx_id(struct report *r, const struct report_sample *s, uint32_t *ret)
{
	int32_t cpu = r->key_cpu ? s->cpu : -1;

	/* Consecutive samples mostly come from the same thread: skip the lookup then. */
	uint32_t lk = s->frames[0].kernel;
	if (r->last_ctx != NONE && r->last_pid == s->pid && r->last_tid == s->tid &&
	    r->last_cpu == cpu && r->ctxs[r->last_ctx].leaf_kernel == lk && s->comm && r->last_comm_ptr &&
	    strcmp(r->last_comm_ptr, s->comm) == 0) {
		*ret = r->last_ctx;
		return 0;
	}
	struct ctx k;
	memset(&k, 0, sizeof(k));
	int err = intern(r, s->comm ? s->comm : ":-1", &k.comm);
	if (err)
		return err;
	k.pid = s->pid;
	k.tid = s->tid;
	k.cpu = cpu;
	k.leaf_kernel = lk;
	k.filtered = filtered(&r->opts, s);
	uint32_t h = hash_words((const uint32_t *)&k, sizeof(k) / 4);
	if (htab_reserve(&r->ctx_ht) < 0)
		return -ENOMEM;
	struct slot *sl = htab_probe(&r->ctx_ht, h, ctx_eq, r, &k);
	if (!sl->id1) {
		if (grow(&r->ctxs, &r->cap_ctxs, r->nr_ctxs, sizeof(*r->ctxs)) < 0)
			return -ENOMEM;
		r->ctxs[r->nr_ctxs] = k;
		htab_set(&r->ctx_ht, sl, h, r->nr_ctxs++);
	}
	*ret = sl->id1 - 1;
	r->last_ctx = *ret;
	r->last_pid = s->pid;
	r->last_tid = s->tid;
	r->last_cpu = cpu;
	r->last_comm_ptr = r->strs[k.comm];
	return 0;
}

static bool rec_eq(const void *c, uint32_t id, const void *key)
{
	const struct report *r = c;
	const uint32_t *k = key;
	return r->recs[id].node == k[0] && r->recs[id].ctx == k[1];
}

static bool tidcomm_eq(const void *c, uint32_t id, const void *key)
{
	const struct report *r = c;
	return r->tidcomms[id].tid == *(const int32_t *)key;
}

/* perf prints a thread's latest comm in the pid column. */
static int note_tid_comm(struct report *r, int32_t tid, uint32_t comm)
{
	uint32_t w = (uint32_t)tid;
	uint32_t h = hash_words(&w, 1);
	if (htab_reserve(&r->tidcomm_ht) < 0)
		return -ENOMEM;
	struct slot *sl = htab_probe(&r->tidcomm_ht, h, tidcomm_eq, r, &tid);
	if (sl->id1) {
		r->tidcomms[sl->id1 - 1].comm = comm;
		return 0;
	}
	if (grow(&r->tidcomms, &r->cap_tidcomms, r->nr_tidcomms, sizeof(*r->tidcomms)) < 0)
		return -ENOMEM;
	r->tidcomms[r->nr_tidcomms] = (struct tidcomm){ tid, comm };
	htab_set(&r->tidcomm_ht, sl, h, r->nr_tidcomms++);
	return 0;
}

static uint32_t latest_comm(const struct report *r, int32_t tid, uint32_t fallback)
{
	uint32_t w = (uint32_t)tid;
	if (!r->tidcomm_ht.slots)
		return fallback;
	struct slot *sl = htab_probe(&r->tidcomm_ht, hash_words(&w, 1), tidcomm_eq, r, &tid);
	return sl->id1 ? r->tidcomms[sl->id1 - 1].comm : fallback;
}

static bool in_list(const int32_t *l, size_t n, int32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] == v)
			return true;
	return false;
}

static bool has_key(const struct report_opts *o, enum report_sort_key k)
{
	for (size_t i = 0; i < o->nr_sort_keys; i++)
		if (o->sort_keys[i] == k)
			return true;
	return false;
}

static int32_t *dup_ints(const int32_t *l, size_t n)
{
	int32_t *p = malloc((n ? n : 1) * sizeof(*p));
	if (p && n)
		memcpy(p, l, n * sizeof(*p));
	return p;
}

struct report *report__new(const struct report_opts *opts)
{
	struct report *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	if (opts)
		r->opts = *opts;
	else
		r->opts.graph = REPORT_GRAPH_GRAPH;
	struct report_opts *o = &r->opts;
	if (o->nr_sort_keys > REPORT_MAX_SORT_KEYS)
		goto einval;
	for (size_t i = 0; i < o->nr_sort_keys; i++)
		if (o->sort_keys[i] > REPORT_SORT_CPU)
			goto einval;
	if (o->nr_sort_keys == 0) {
		o->sort_keys[0] = REPORT_SORT_COMM;
		o->sort_keys[1] = REPORT_SORT_DSO;
		o->sort_keys[2] = REPORT_SORT_SYM;
		o->nr_sort_keys = 3;
	}
	if (o->order == REPORT_ORDER_DEFAULT)
		o->order = o->no_children ? REPORT_ORDER_CALLEE : REPORT_ORDER_CALLER;
	if (o->min_percent < 0)
		o->min_percent = DEFAULT_MIN_PERCENT;
	r->key_cpu = has_key(o, REPORT_SORT_CPU);
	r->last_ctx = NONE;

	/* Own copies of the filter lists. */
	r->pids = dup_ints(o->pids, o->nr_pids);
	r->tids = dup_ints(o->tids, o->nr_tids);
	r->cpus = dup_ints(o->cpus, o->nr_cpus);
	r->comms = calloc(o->nr_comms + 1, sizeof(char *));
	if (!r->pids || !r->tids || !r->cpus || !r->comms)
		goto enomem;
	for (size_t i = 0; i < o->nr_comms; i++)
		if (!(r->comms[i] = strdup(o->comms[i])))
			goto enomem;
	o->pids = r->pids;
	o->tids = r->tids;
	o->cpus = r->cpus;
	o->comms = (const char *const *)r->comms;

	r->nodes = calloc(64, sizeof(*r->nodes));
	if (!r->nodes)
		goto enomem;
	r->cap_nodes = 64;
	r->nodes[0] = (struct tnode){ .parent = NONE, .frame = NONE, .depth = 0 };
	r->nr_nodes = 1;
	return r;
einval:
	report__free(r);
	errno = EINVAL;
	return NULL;
enomem:
	report__free(r);
	errno = ENOMEM;
	return NULL;
}

void report__free(struct report *r)
{
	if (!r)
		return;
	free(r->pids);
	free(r->tids);
	free(r->cpus);
	if (r->comms)
		for (size_t i = 0; r->comms[i]; i++)
			free(r->comms[i]);
	free(r->comms);
	arena_free(&r->arena);
	free(r->strs);
	free(r->str_ht.slots);
	free(r->frames);
	free(r->frame_ht.slots);
	if (r->fnames)
		for (size_t i = 0; i < r->nr_frames; i++)
			free(r->fnames[i]);
	free(r->fnames);
	free(r->nodes);
	free(r->node_ht.slots);
	free(r->ctxs);
	free(r->ctx_ht.slots);
	free(r->recs);
	free(r->rec_ht.slots);
	free(r->tidcomms);
	free(r->tidcomm_ht.slots);
	free(r->scratch);
	free(r);
}

/* perf keeps samples of filtered threads and comms as hidden rows: they count in the totals
 * and, since they take part in the output tree, in the order of tied rows. */
static bool filtered(const struct report_opts *o, const struct report_sample *s)
{
	if ((o->nr_pids && !in_list(o->pids, o->nr_pids, s->pid)) ||
	    (o->nr_tids && !in_list(o->tids, o->nr_tids, s->tid)))
		return true;
	if (!o->nr_comms)
		return false;
	for (size_t i = 0; i < o->nr_comms && s->comm; i++)
		if (strcmp(o->comms[i], s->comm) == 0)
			return false;
	return true;
}

int report__add_sample(struct report *r, const struct report_sample *s)
{
	const struct report_opts *o = &r->opts;

	if (!s->nr_frames || !s->frames)
		return -EINVAL;
	/* perf skips samples outside --cpu before counting them. */
	if (o->nr_cpus && !in_list(o->cpus, o->nr_cpus, s->cpu))
		return 0;

	uint32_t ctx, node = 0;
	int err = ctx_id(r, s, &ctx);
	for (size_t i = s->nr_frames; !err && i-- > 0;) {
		uint32_t f;
		err = frame_id(r, &s->frames[i], &f);
		if (!err)
			err = child_node(r, node, f, &node);
	}
	if (!err)
		err = note_tid_comm(r, s->tid, r->ctxs[ctx].comm);
	if (err)
		return err;

	uint32_t k[2] = { node, ctx };
	uint32_t h = hash_words(k, 2);
	if (htab_reserve(&r->rec_ht) < 0)
		return -ENOMEM;
	struct slot *sl = htab_probe(&r->rec_ht, h, rec_eq, r, k);
	if (!sl->id1) {
		if (grow(&r->recs, &r->cap_recs, r->nr_recs, sizeof(*r->recs)) < 0)
			return -ENOMEM;
		r->recs[r->nr_recs] = (struct rec){ .node = node, .ctx = ctx };
		htab_set(&r->rec_ht, sl, h, r->nr_recs++);
	}
	struct rec *rc = &r->recs[sl->id1 - 1];
	rc->period += s->period;
	rc->count++;
	if (r->nodes[node].depth > r->max_depth)
		r->max_depth = r->nodes[node].depth;
	r->nr_samples++;
	r->total_period += s->period;
	return 0;
}

uint64_t report__nr_samples(const struct report *r)
{
	return r->nr_samples;
}

uint64_t report__total_period(const struct report *r)
{
	return r->total_period;
}

/* Frames of a record's stack, leaf first, into r->scratch. Returns the count or -ENOMEM. */
static int rec_frames(struct report *r, uint32_t node)
{
	if (r->cap_scratch < (size_t)r->max_depth + 1) {
		uint32_t *p = realloc(r->scratch, ((size_t)r->max_depth + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		r->scratch = p;
		r->cap_scratch = (size_t)r->max_depth + 1;
	}
	int n = 0;
	for (uint32_t x = node; x != 0; x = r->nodes[x].parent)
		r->scratch[n++] = r->nodes[x].frame;
	return n;
}

/* ---- rows (hist entries) and their call trees --------------------------------------------- */

struct ekey {
	uint32_t comm, dso, frame;
	int32_t tid, cpu;
	uint32_t addr_lo, addr_hi; /* unresolved symbol: the address (frame is then NONE) */
	uint32_t unresolved;
};

struct entry {
	struct ekey key;
	uint32_t frame, comm;   /* what the row shows */
	bool filtered;          /* created by a filtered sample: hidden, as in perf */
	uint64_t addr;          /* unresolved: the address shown and sorted on */
	bool kernel;            /* "[k]": the mode when the row was created */
	int32_t pid, tid, cpu;  /* of the sample that created the row (perf's he->thread) */
	uint64_t self, children, nr_samples;
	uint32_t max_depth;     /* longest chain appended (perf's callchain->max_depth) */
	uint32_t stamp;         /* last record that touched it: counts a stack once */
	uint32_t croot;         /* call tree root in view.cnodes, NONE without graphs */
};

struct cnode {
	uint32_t frame, parent;
	uint32_t first_child, next_sibling, nr_children;
	uint64_t hit, cumul;    /* chains ending here; chains through here */
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
};

static bool entry_eq(const void *c, uint32_t id, const void *key)
{
	const struct view *v = c;
	return memcmp(&v->entries[id].key, key, sizeof(struct ekey)) == 0;
}

/* The row of frame f. An unresolved frame is keyed by address, and perf takes a different
 * one by role: map-relative for the sample's own ip (self), absolute for the frames of the
 * chain (children). The same unresolved leaf thus makes two rows in perf; so it does here. */
static int entry_get(struct view *v, const struct ctx *cx, uint32_t f, bool kernel, bool self,
		     uint32_t *ret)
{
	const struct report *r = v->r;
	const struct report_opts *o = &r->opts;
	struct ekey k;
	memset(&k, 0, sizeof(k));
	k.comm = k.dso = k.frame = NONE;
	k.tid = k.cpu = -1;
	for (size_t i = 0; i < o->nr_sort_keys; i++) {
		switch (o->sort_keys[i]) {
		case REPORT_SORT_COMM:
			k.comm = cx->comm;
			break;
		case REPORT_SORT_DSO:
			k.dso = r->frames[f].dso;
			break;
		case REPORT_SORT_SYM:
			if (r->frames[f].sym != NONE) {
				k.frame = f;
			} else {
				uint64_t a = self ? r->frames[f].map_ip : r->frames[f].ip;
				k.unresolved = 1;
				k.addr_lo = (uint32_t)a;
				k.addr_hi = (uint32_t)(a >> 32);
				k.dso = r->frames[f].dso;
			}
			break;
		case REPORT_SORT_PID:
			k.tid = cx->tid;
			break;
		case REPORT_SORT_CPU:
			k.cpu = cx->cpu;
			break;
		}
	}
	uint32_t h = hash_words((const uint32_t *)&k, sizeof(k) / 4);
	if (htab_reserve(&v->entry_ht) < 0)
		return -ENOMEM;
	struct slot *sl = htab_probe(&v->entry_ht, h, entry_eq, v, &k);
	if (!sl->id1) {
		if (grow(&v->entries, &v->cap_entries, v->nr_entries, sizeof(*v->entries)) < 0)
			return -ENOMEM;
		struct entry *e = &v->entries[v->nr_entries];
		memset(e, 0, sizeof(*e));
		e->key = k;
		e->frame = f;
		e->filtered = cx->filtered;
		e->addr = self ? r->frames[f].map_ip : r->frames[f].ip;
		e->kernel = kernel;
		e->comm = cx->comm;
		e->pid = cx->pid;
		e->tid = cx->tid;
		e->cpu = cx->cpu;
		e->stamp = NONE;
		e->croot = NONE;
		htab_set(&v->entry_ht, sl, h, v->nr_entries++);
	}
	*ret = sl->id1 - 1;
	return 0;
}

static int cnode_new(struct view *v, uint32_t parent, uint32_t frame, uint32_t *ret)
{
	if (grow(&v->cnodes, &v->cap_cnodes, v->nr_cnodes, sizeof(*v->cnodes)) < 0)
		return -ENOMEM;
	struct cnode *c = &v->cnodes[v->nr_cnodes];
	memset(c, 0, sizeof(*c));
	c->frame = frame;
	c->parent = parent;
	c->first_child = c->next_sibling = NONE;
	if (parent != NONE) {
		c->next_sibling = v->cnodes[parent].first_child;
		v->cnodes[parent].first_child = v->nr_cnodes;
		v->cnodes[parent].nr_children++;
	}
	*ret = v->nr_cnodes++;
	return 0;
}

static bool cnode_eq(const void *c, uint32_t id, const void *key)
{
	const struct view *v = c;
	const uint32_t *k = key;
	return v->cnodes[id].parent == k[0] && v->cnodes[id].frame == k[1];
}

/* Append a chain of n frames (display order, frames[i * step] from base) to e's call tree. */
static int chain_append(struct view *v, struct entry *e, const uint32_t *fr, int n, int step,
			uint64_t period)
{
	if (e->croot == NONE && cnode_new(v, NONE, NONE, &e->croot) < 0)
		return -ENOMEM;
	uint32_t cur = e->croot;
	v->cnodes[cur].cumul += period;
	for (int i = 0; i < n; i++) {
		uint32_t k[2] = { cur, fr[i * step] };
		uint32_t h = hash_words(k, 2);
		if (htab_reserve(&v->cnode_ht) < 0)
			return -ENOMEM;
		struct slot *sl = htab_probe(&v->cnode_ht, h, cnode_eq, v, k);
		if (!sl->id1) {
			uint32_t id;
			if (cnode_new(v, cur, k[1], &id) < 0)
				return -ENOMEM;
			htab_set(&v->cnode_ht, sl, h, id);
		}
		cur = sl->id1 - 1;
		v->cnodes[cur].cumul += period;
	}
	v->cnodes[cur].hit += period;
	return 0;
}

/* One record into the rows, the way perf's cumulative hist iterator does it: the leaf row gets
 * Self and the whole chain; with children, every other row on the stack gets the period once
 * (the first occurrence in display order wins under recursion) with the chain from it on. */
static int view_add_rec(struct view *v, uint32_t ri)
{
	struct report *r = v->r;
	const struct rec *rc = &r->recs[ri];
	const struct ctx *cx = &r->ctxs[rc->ctx];
	bool caller = r->opts.order == REPORT_ORDER_CALLER;
	int n = rec_frames(r, rc->node);
	if (n < 0)
		return n;
	const uint32_t *f = r->scratch;
	uint32_t ei;

	/* perf's walk keeps one addr_location: a frame outside any map inherits the mode of the
	 * frame visited before it, the first one the sample's. */
	bool level = cx->leaf_kernel;
	if (entry_get(v, cx, f[0], level, true, &ei) < 0)
		return -ENOMEM;
	struct entry *e = &v->entries[ei];
	e->self += rc->period;
	e->children += rc->period;
	e->nr_samples += rc->count;
	e->stamp = ri;
	if ((uint32_t)n > e->max_depth)
		e->max_depth = n;
	if (v->graph) {
		int err = caller ? chain_append(v, e, f + n - 1, n, -1, rc->period)
				 : chain_append(v, e, f, n, 1, rc->period);
		if (err)
			return err;
	}
	if (r->opts.no_children)
		return 0;

	for (int j = 0; j < n; j++) {
		int i = caller ? n - 1 - j : j;
		const struct frame *fi = &r->frames[f[i]];
		if (fi->dso != NONE)
			level = fi->kernel;
		if (entry_get(v, cx, f[i], level, false, &ei) < 0)
			return -ENOMEM;
		e = &v->entries[ei];
		if (e->stamp == ri)
			continue;
		e->stamp = ri;
		e->children += rc->period;
		int len = caller ? i + 1 : n - i;
		if ((uint32_t)len > e->max_depth)
			e->max_depth = len;
		if (v->graph) {
			int err = caller ? chain_append(v, e, f + i, len, -1, rc->period)
					 : chain_append(v, e, f + i, len, 1, rc->period);
			if (err)
				return err;
		}
	}
	return 0;
}

static int cmp_str_null_last(const char *a, const char *b)
{
	if (!a || !b)
		return (a == NULL) - (b == NULL);
	return strcmp(a, b);
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

/* perf's output comparison, hist_entry__sort(): Children (with its caller-above-callee tie
 * break), Self, then each sort key ascending. Negative: a goes first; 0: a goes after b.
 * It is not transitive (the tie break applies only within a thread), so the order depends on
 * how the rows are inserted: view_order() replays perf's insertion. */
static int entry_sort(const struct view *v, uint32_t ia, uint32_t ib)
{
	const struct report *r = v->r;
	const struct entry *a = &v->entries[ia], *b = &v->entries[ib];
	int d;

	if (!r->opts.no_children) {
		if ((d = cmp_u64_desc(a->children, b->children)))
			return d;
		/* "Put caller above callee when they have equal period": when both rows were
		 * created by the same thread and call graphs are shown, perf compares the longest
		 * chain appended to each row, shorter first in callee order, longer first in
		 * caller order. Without call graphs it skips this (verified against perf 6.1). */
		if (r->opts.graph == REPORT_GRAPH_GRAPH && a->pid == b->pid && a->tid == b->tid &&
		    a->max_depth != b->max_depth) {
			d = a->max_depth < b->max_depth ? -1 : 1;
			return r->opts.order == REPORT_ORDER_CALLER ? -d : d;
		}
	}
	if ((d = cmp_u64_desc(a->self, b->self)))
		return d;
	for (size_t i = 0; i < r->opts.nr_sort_keys; i++) {
		const struct frame *fa = &r->frames[a->frame], *fb = &r->frames[b->frame];
		switch (r->opts.sort_keys[i]) {
		case REPORT_SORT_COMM:
			d = strcmp(str(r, a->comm), str(r, b->comm));
			break;
		case REPORT_SORT_DSO:
			d = cmp_str_null_last(str(r, fa->dso), str(r, fb->dso));
			break;
		case REPORT_SORT_SYM:
			d = cmp_str_null_last(str(r, fa->sym), str(r, fb->sym));
			if (!d && fa->sym == NONE && a->addr != b->addr)
				d = a->addr < b->addr ? -1 : 1;
			break;
		case REPORT_SORT_PID:
			d = (a->tid > b->tid) - (a->tid < b->tid);
			break;
		case REPORT_SORT_CPU:
			d = (a->cpu > b->cpu) - (a->cpu < b->cpu);
			break;
		}
		if (d)
			return d;
	}
	return 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* perf's collapse order (hist_entry__collapse), a total order on the keys: comm, dso
 * ascending (none last), sym by dso then start address (unresolved: by address, after the
 * resolved ones), thread and cpu ascending. */
static int entry_collapse_cmp(const void *pa, const void *pb, void *c)
{
	const struct view *v = c;
	const struct report *r = v->r;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct entry *a = &v->entries[ia], *b = &v->entries[ib];
	const struct frame *fa = &r->frames[a->frame], *fb = &r->frames[b->frame];
	int d = 0;

	for (size_t i = 0; i < r->opts.nr_sort_keys && !d; i++) {
		switch (r->opts.sort_keys[i]) {
		case REPORT_SORT_COMM:
			d = strcmp(str(r, a->comm), str(r, b->comm));
			break;
		case REPORT_SORT_DSO:
			d = cmp_str_null_last(str(r, fa->dso), str(r, fb->dso));
			break;
		case REPORT_SORT_SYM:
			if (fa->sym == NONE && fb->sym == NONE) {
				d = cmp_u64(a->addr, b->addr);
			} else if (fa->sym == NONE || fb->sym == NONE) {
				d = fa->sym == NONE ? 1 : -1;
			} else {
				d = cmp_str_null_last(str(r, fa->dso), str(r, fb->dso));
				if (!d)
					d = cmp_u64(fa->sym_start ? fa->sym_start : fa->ip,
						    fb->sym_start ? fb->sym_start : fb->ip);
				if (!d)
					d = strcmp(r->strs[fa->sym], r->strs[fb->sym]);
			}
			break;
		case REPORT_SORT_PID:
			d = (a->tid > b->tid) - (a->tid < b->tid);
			break;
		case REPORT_SORT_CPU:
			d = (a->cpu > b->cpu) - (a->cpu < b->cpu);
			break;
		}
	}
	return d ? d : (ia > ib) - (ia < ib);
}

/* A red-black tree insertion exactly like the kernel's rbtree (the classic algorithm): with a
 * comparison that is not transitive, the in-order result depends on the tree's shape, and
 * perf's output order is this tree's. */
struct rbt {
	uint32_t *left, *right, *parent;
	bool *red;
	uint32_t root;
};

static void rb_rotate(struct rbt *t, uint32_t x, bool left)
{
	uint32_t *a = left ? t->right : t->left, *b = left ? t->left : t->right;
	uint32_t y = a[x];
	a[x] = b[y];
	if (b[y] != NONE)
		t->parent[b[y]] = x;
	t->parent[y] = t->parent[x];
	if (t->parent[x] == NONE)
		t->root = y;
	else if (x == t->left[t->parent[x]])
		t->left[t->parent[x]] = y;
	else
		t->right[t->parent[x]] = y;
	b[y] = x;
	t->parent[x] = y;
}

static void rb_insert(struct rbt *t, const struct view *v, uint32_t z)
{
	uint32_t p = NONE, x = t->root;
	bool go_left = false;
	while (x != NONE) {
		p = x;
		go_left = entry_sort(v, z, x) < 0;
		x = go_left ? t->left[x] : t->right[x];
	}
	t->parent[z] = p;
	t->left[z] = t->right[z] = NONE;
	t->red[z] = true;
	if (p == NONE)
		t->root = z;
	else if (go_left)
		t->left[p] = z;
	else
		t->right[p] = z;
	while (t->parent[z] != NONE && t->red[t->parent[z]]) {
		uint32_t zp = t->parent[z], g = t->parent[zp];
		bool pleft = zp == t->left[g];
		uint32_t u = pleft ? t->right[g] : t->left[g];
		if (u != NONE && t->red[u]) {
			t->red[zp] = t->red[u] = false;
			t->red[g] = true;
			z = g;
			continue;
		}
		if (z == (pleft ? t->right[zp] : t->left[zp])) {
			z = zp;
			rb_rotate(t, z, pleft);
			zp = t->parent[z];
			g = t->parent[zp];
		}
		t->red[zp] = false;
		t->red[g] = true;
		rb_rotate(t, g, !pleft);
	}
	t->red[t->root] = false;
}

/* Output order: rows in collapse order inserted into perf's output tree, read in order. */
static int view_order(struct view *v)
{
	size_t n = v->nr_entries;
	_cleanup_free_ uint32_t *mem = malloc((n ? n : 1) * 4 * sizeof(uint32_t));
	_cleanup_free_ bool *red = malloc((n ? n : 1) * sizeof(bool));
	if (!mem || !red)
		return -ENOMEM;
	struct rbt t = { mem, mem + n, mem + 2 * n, red, NONE };
	uint32_t *coll = mem + 3 * n;
	for (size_t i = 0; i < n; i++)
		coll[i] = i;
	qsort_r(coll, n, sizeof(*coll), entry_collapse_cmp, v);
	for (size_t i = 0; i < n; i++)
		rb_insert(&t, v, coll[i]);
	/* In-order walk without a stack, by parent links. */
	size_t k = 0;
	uint32_t x = t.root, prev = NONE;
	while (x != NONE) {
		if (prev == t.parent[x]) {
			if (t.left[x] != NONE) {
				prev = x;
				x = t.left[x];
				continue;
			}
			prev = NONE;
		}
		if (prev == t.left[x]) {
			v->order[k++] = x;
			if (t.right[x] != NONE) {
				prev = x;
				x = t.right[x];
				continue;
			}
		}
		prev = x;
		x = t.parent[x];
	}
	return k == n ? 0 : -EFAULT;
}

static void view_free(struct view *v)
{
	free(v->entries);
	free(v->entry_ht.slots);
	free(v->cnodes);
	free(v->cnode_ht.slots);
	free(v->order);
}

static int view_build(struct view *v, struct report *r, bool graph)
{
	memset(v, 0, sizeof(*v));
	v->r = r;
	v->graph = graph;
	for (size_t i = 0; i < r->nr_recs; i++) {
		int err = view_add_rec(v, i);
		if (err)
			return err;
	}
	/* The chain hash is only needed while appending. */
	free(v->cnode_ht.slots);
	v->cnode_ht = (struct htab){ 0 };
	v->order = malloc((v->nr_entries ? v->nr_entries : 1) * sizeof(*v->order));
	if (!v->order)
		return -ENOMEM;
	for (size_t i = 0; i < v->nr_entries; i++)
		v->order[i] = i;
	return view_order(v);
}

static void fill_entry(const struct view *v, const struct entry *e, struct report_entry *out)
{
	const struct report *r = v->r;
	const struct frame *f = &r->frames[e->frame];
	out->comm = str(r, e->comm);
	out->pid = e->pid;
	out->tid = e->tid;
	out->cpu = e->cpu;
	out->dso = str(r, f->dso);
	out->sym = str(r, f->sym);
	out->addr = e->addr;
	out->kernel = e->kernel;
	out->self = e->self;
	out->children = r->opts.no_children ? e->self : e->children;
	out->nr_samples = e->nr_samples;
}

int report__foreach_entry(struct report *r,
			  int (*fn)(const struct report_entry *e, void *ctx), void *ctx)
{
	struct view v;
	int err = view_build(&v, r, false);
	for (size_t i = 0; !err && i < v.nr_entries; i++) {
		struct report_entry re;
		if (v.entries[v.order[i]].filtered)
			continue;
		fill_entry(&v, &v.entries[v.order[i]], &re);
		err = fn(&re, ctx);
	}
	view_free(&v);
	return err;
}

/* ---- the --stdio table ------------------------------------------------------------------- */

static size_t col_max(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* The text of a symbol cell: "[k] name" or "[.] 0x..." as perf's %-#.*llx makes it. */
static void sym_cell(const struct report *r, const struct entry *e, char *buf, size_t sz)
{
	const struct frame *f = &r->frames[e->frame];
	if (f->sym != NONE)
		snprintf(buf, sz, "[%c] %s", e->kernel ? 'k' : '.', r->strs[f->sym]);
	else
		snprintf(buf, sz, "[%c] %-#.*" PRIx64, e->kernel ? 'k' : '.', 16, e->addr);
}

struct widths {
	size_t comm, dso, sym, pid;
};

static void compute_widths(const struct view *v, struct widths *w)
{
	const struct report *r = v->r;
	/* Minimums are the header widths; perf widens dso to 16 when a symbol is unresolved
	 * and sizes an unresolved symbol as 16 digits + "[x] " + "0x". */
	w->comm = strlen("Command");
	w->dso = strlen("Shared Object");
	w->sym = strlen("Symbol");
	w->pid = strlen("    Pid:Command");
	for (size_t i = 0; i < v->nr_entries; i++) {
		const struct entry *e = &v->entries[i];
		const struct frame *f = &r->frames[e->frame];
		if (e->filtered)
			continue;
		size_t cl = strlen(str(r, e->comm));
		w->comm = col_max(w->comm, cl);
		w->pid = col_max(w->pid, strlen(str(r, latest_comm(r, e->tid, e->comm))) + 8);
		if (f->sym != NONE) {
			w->sym = col_max(w->sym, strlen(r->strs[f->sym]) + 4);
		} else {
			w->sym = col_max(w->sym, 16 + 4 + 2);
			w->dso = col_max(w->dso, 16);
		}
		w->dso = col_max(w->dso, f->dso != NONE ? strlen(r->strs[f->dso]) : strlen("[unknown]"));
	}
}

static void print_dots(FILE *fp, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc('.', fp);
}

/* perf hides a column filtered down to one value (--comm with a single name) and names the
 * value in the preamble instead. */
static bool elided(const struct report *r, enum report_sort_key k)
{
	return k == REPORT_SORT_COMM && r->opts.nr_comms == 1;
}

static void print_headers(const struct report *r, const struct widths *w, FILE *fp)
{
	const struct report_opts *o = &r->opts;
	for (int line = 0; line < 2; line++) {
		fputs("# ", fp);
		if (!o->no_children) {
			if (line)
				print_dots(fp, 8), fputs("  ", fp), print_dots(fp, 8);
			else
				fprintf(fp, "%8s  %8s", "Children", "Self");
		} else {
			if (line)
				print_dots(fp, 8);
			else
				fprintf(fp, "%8s", "Overhead");
		}
		for (size_t i = 0; i < o->nr_sort_keys; i++) {
			const char *h = NULL;
			size_t wd = 0;
			if (elided(r, o->sort_keys[i]))
				continue;
			switch (o->sort_keys[i]) {
			case REPORT_SORT_COMM:
				h = "Command", wd = w->comm;
				break;
			case REPORT_SORT_DSO:
				h = "Shared Object", wd = w->dso;
				break;
			case REPORT_SORT_SYM:
				h = "Symbol", wd = w->sym;
				break;
			case REPORT_SORT_PID:
				h = "    Pid:Command", wd = w->pid;
				break;
			case REPORT_SORT_CPU:
				h = "CPU", wd = 3;
				break;
			}
			fputs("  ", fp);
			if (line)
				print_dots(fp, wd);
			else
				fprintf(fp, "%-*s", (int)wd, h);
		}
		fputc('\n', fp);
	}
	fputs("#\n", fp);
}

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

static void print_row(const struct view *v, const struct entry *e, const struct widths *w,
		      FILE *fp)
{
	const struct report *r = v->r;
	const struct report_opts *o = &r->opts;
	const struct frame *f = &r->frames[e->frame];
	char buf[4096];

	if (!o->no_children)
		fprintf(fp, "  %7.2f%%  %7.2f%%", pct(e->children, r->total_period),
			pct(e->self, r->total_period));
	else
		fprintf(fp, "  %7.2f%%", pct(e->self, r->total_period));
	for (size_t i = 0; i < o->nr_sort_keys; i++) {
		bool last = i + 1 == o->nr_sort_keys;
		if (elided(r, o->sort_keys[i]))
			continue;
		fputs("  ", fp);
		switch (o->sort_keys[i]) {
		case REPORT_SORT_COMM:
			fprintf(fp, "%-*s", (int)w->comm, str(r, e->comm));
			break;
		case REPORT_SORT_DSO:
			fprintf(fp, "%-*s", (int)w->dso,
				f->dso != NONE ? r->strs[f->dso] : "[unknown]");
			break;
		case REPORT_SORT_SYM:
			/* Only the symbol cell is left unpadded when it is the last column. */
			sym_cell(r, e, buf, sizeof(buf));
			if (last)
				fputs(buf, fp);
			else
				fprintf(fp, "%-*s", (int)w->sym, buf);
			break;
		case REPORT_SORT_PID:
			fprintf(fp, "%7d:%-*s", e->tid, (int)w->pid - 8,
				str(r, latest_comm(r, e->tid, e->comm)));
			break;
		case REPORT_SORT_CPU:
			fprintf(fp, "%*.*d", 3, 3, e->cpu);
			break;
		}
	}
	fputc('\n', fp);
}

/* ---- call graphs in perf's "graph" style -------------------------------------------------- */

struct gctx {
	const struct view *v;
	FILE *fp;
	uint64_t total, min_hit;
	int margin;             /* extra left margin after "---" */
	bool *mask;             /* mask[i]: draw the '|' of depth i */
	size_t cap_mask;
	bool any;               /* this graph printed something */
};

static void gmargin(struct gctx *g)
{
	g->any = true;
	fprintf(g->fp, "            %*s", g->margin, "");
}

static void cell_name(const struct report *r, uint32_t frame, char *buf, size_t sz)
{
	const struct frame *f = &r->frames[frame];
	if (f->sym != NONE)
		snprintf(buf, sz, "%s", r->strs[f->sym]);
	else
		snprintf(buf, sz, "%#" PRIx64, f->ip);
}

/* perf's tree is a radix tree: a node holds a run of frames and ends where chains fork or end.
 * Our tree has one frame per node; a run continues while the node has one child and no hits. */
static uint32_t run_next(const struct view *v, uint32_t c)
{
	const struct cnode *n = &v->cnodes[c];
	return n->nr_children == 1 && n->hit == 0 ? n->first_child : NONE;
}


static int kid_cmp(const void *pa, const void *pb, void *c)
{
	const struct view *v = c;
	const struct report *r = v->r;
	const struct cnode *a = &v->cnodes[*(const uint32_t *)pa];
	const struct cnode *b = &v->cnodes[*(const uint32_t *)pb];
	int d = cmp_u64_desc(a->cumul, b->cumul);
	if (d)
		return d;
	/* perf keeps equal siblings in the order of its insertion tree, which compares dso
	 * pointers and then addresses, higher first. Dsos in order of first sight stand in
	 * for the pointers (no dso sorts as NULL, last); symbols order by start address or,
	 * when unknown, by any ip within them, which orders them the same way. */
	const struct frame *fa = &r->frames[a->frame], *fb = &r->frames[b->frame];
	uint64_t da = fa->dso == NONE ? 0 : (uint64_t)fa->dso + 1;
	uint64_t db = fb->dso == NONE ? 0 : (uint64_t)fb->dso + 1;
	if ((d = cmp_u64_desc(da, db)))
		return d;
	uint64_t aa = fa->sym != NONE && fa->sym_start ? fa->sym_start : fa->ip;
	uint64_t ab = fb->sym != NONE && fb->sym_start ? fb->sym_start : fb->ip;
	if ((d = cmp_u64_desc(aa, ab)))
		return d;
	return (a->frame > b->frame) - (a->frame < b->frame);
}

/* Children of c above the threshold, sorted; returns a malloc'd array (count in *ret_n). */
static uint32_t *sorted_kids(struct gctx *g, uint32_t c, size_t *ret_n)
{
	const struct view *v = g->v;
	size_t n = 0;
	for (uint32_t k = v->cnodes[c].first_child; k != NONE; k = v->cnodes[k].next_sibling)
		if (v->cnodes[k].cumul >= g->min_hit)
			n++;
	uint32_t *a = malloc((n ? n : 1) * sizeof(*a));
	if (!a)
		return NULL;
	n = 0;
	for (uint32_t k = v->cnodes[c].first_child; k != NONE; k = v->cnodes[k].next_sibling)
		if (v->cnodes[k].cumul >= g->min_hit)
			a[n++] = k;
	qsort_r(a, n, sizeof(*a), kid_cmp, (void *)v);
	*ret_n = n;
	return a;
}

static int gmask_reserve(struct gctx *g, size_t depth)
{
	if (depth + 1 < g->cap_mask)
		return 0;
	size_t nc = (depth + 1) * 2;
	bool *m = realloc(g->mask, nc * sizeof(*m));
	if (!m)
		return -ENOMEM;
	g->mask = m;
	g->cap_mask = nc;
	return 0;
}

static int print_level(struct gctx *g, uint32_t parent, size_t depth)
{
	const struct view *v = g->v;
	char name[4096];
	size_t n;

	if (gmask_reserve(g, depth) < 0)
		return -ENOMEM;
	_cleanup_free_ uint32_t *kids = sorted_kids(g, parent, &n);
	if (!kids)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		uint32_t c = kids[k];

		/* The separator keeps the old mask; the last child's lines drop its pipe. */
		gmargin(g);
		for (size_t i = 0; i < depth; i++)
			fputs(g->mask[i] ? "|          " : "           ", g->fp);
		fputc('\n', g->fp);
		if (k + 1 == n)
			g->mask[depth - 1] = false;

		int line = 0;
		uint32_t last = c;
		for (uint32_t x = c; x != NONE; x = run_next(v, x), line++) {
			last = x;
			gmargin(g);
			for (size_t i = 0; i < depth; i++) {
				fputc(g->mask[i] ? '|' : ' ', g->fp);
				if (line == 0 && i == depth - 1)
					fprintf(g->fp, "--%.2f%%--", pct(v->cnodes[c].cumul, g->total));
				else
					fputs("          ", g->fp);
			}
			cell_name(v->r, v->cnodes[x].frame, name, sizeof(name));
			fprintf(g->fp, "%s\n", name);
		}
		g->mask[depth] = true;
		int err = print_level(g, last, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

static int print_graph(struct gctx *g, const struct entry *e)
{
	const struct view *v = g->v;
	const struct report *r = v->r;
	uint64_t parent_samples = r->opts.no_children ? e->self : e->children;
	char name[4096];
	size_t n;
	bool printed = false;

	if (e->croot == NONE)
		return 0;
	g->margin = 0;
	g->any = false;
	_cleanup_free_ uint32_t *roots = sorted_kids(g, e->croot, &n);
	if (!roots)
		return -ENOMEM;
	if (n == 0)
		return 0;
	uint32_t start = e->croot;
	/* A single root that carries the whole row is printed as "---" without a percentage. */
	if (n == 1 && v->cnodes[roots[0]].cumul == parent_samples) {
		int i = 0;
		for (uint32_t x = roots[0]; x != NONE; x = run_next(v, x), i++) {
			start = x;
			if (i == 0 && r->opts.sort_keys[0] == REPORT_SORT_SYM)
				continue;
			if (!printed) {
				gmargin(g);
				fputs("|\n", g->fp);
				gmargin(g);
				fputs("---", g->fp);
				g->margin += 3;
				printed = true;
			} else {
				gmargin(g);
			}
			cell_name(r, v->cnodes[x].frame, name, sizeof(name));
			fprintf(g->fp, "%s\n", name);
		}
	}
	if (gmask_reserve(g, 1) < 0)
		return -ENOMEM;
	g->mask[0] = true;
	int err = print_level(g, start, 1);
	if (err)
		return err;
	/* perf ends a graph with a blank line, unless it printed nothing at all. */
	if (g->any)
		fputc('\n', g->fp);
	return 0;
}

/* perf's --percent-limit: the row's Children share with children, else its Self share. */
static bool under_limit(const struct report *r, const struct entry *e)
{
	uint64_t v = r->opts.no_children ? e->self : e->children;

	return r->opts.percent_limit > 0 && pct(v, r->total_period) < r->opts.percent_limit;
}

int report__fprintf(struct report *r, FILE *fp, const char *event_name)
{
	const struct report_opts *o = &r->opts;
	struct view v;
	struct widths w;
	bool graph = o->graph == REPORT_GRAPH_GRAPH;
	int err = view_build(&v, r, graph);
	if (err)
		goto out;

	/* perf divides by 1000 while the count exceeds 1000 and appends K/M/G. */
	uint64_t ns = r->nr_samples;
	char unit = ' ';
	const char *units = "KMG";
	for (int i = 0; i < 3 && ns > 1000; i++) {
		ns /= 1000;
		unit = units[i];
	}
	fprintf(fp, "# Samples: %" PRIu64 "%c", ns, unit);
	if (event_name)
		fprintf(fp, " of event '%s'", event_name);
	if (o->time_str)
		fprintf(fp, " (time slices: %s)", o->time_str);
	fprintf(fp, "\n# Event count (approx.): %" PRIu64 "\n#\n", r->total_period);

	compute_widths(&v, &w);
	print_headers(r, &w, fp);

	struct gctx g = { .v = &v, .fp = fp, .total = r->total_period };
	/* perf truncates the threshold to a whole period count. */
	g.min_hit = (uint64_t)((double)r->total_period * (o->min_percent / 100.0));
	for (size_t i = 0; !err && i < v.nr_entries; i++) {
		const struct entry *e = &v.entries[v.order[i]];
		if (e->filtered || under_limit(r, e))
			continue;
		print_row(&v, e, &w, fp);
		if (graph)
			err = print_graph(&g, e);
	}
	free(g.mask);
	if (!err) {
		fputs("\n\n", fp);
		if (ferror(fp))
			err = -EIO;
	}
out:
	view_free(&v);
	return err;
}

/* ---- folded stacks and flame graphs ------------------------------------------------------- */

/* Name a frame the way stackcollapse-perf.pl does after `perf script`: unresolved frames become
 * "[dso basename]" (or "[unknown]"); argument lists are dropped except "(anonymous
 * namespace)" and Go's "pkg.(*T).M"; ';' (the separator) becomes ':' and quotes go. */
static char *folded_name(const struct report *r, const struct frame *f)
{
	char *out;
	if (f->sym == NONE) {
		const char *d = str(r, f->dso);
		if (!d)
			return strdup("[unknown]");
		const char *base = strrchr(d, '/');
		base = base ? base + 1 : d;
		if (base[0] == '[')
			return strdup(base);
		if (asprintf(&out, "[%s]", base) < 0)
			return NULL;
		return out;
	}
	const char *s = r->strs[f->sym];
	size_t len = strlen(s);
	const char *cut = NULL;
	const char *go1 = strstr(s, ".(");
	bool go = go1 && strstr(go1, ").");
	if (!go) {
		for (const char *p = strchr(s, '('); p; p = strchr(p + 1, '(')) {
			if (strncmp(p, "(anonymous namespace)", 21) != 0) {
				cut = p;
				break;
			}
		}
	}
	if (cut)
		len = cut - s;
	out = malloc(len + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		if (ch == '"' || ch == '\'')
			continue;
		if (ch == ';')
			ch = ':';
		if (ch == '\n')
			ch = ' ';
		out[o++] = ch;
	}
	out[o] = '\0';
	return out;
}

static const char *fname(struct report *r, uint32_t frame)
{
	if (r->cap_fnames < r->nr_frames) {
		char **p = realloc(r->fnames, r->nr_frames * sizeof(*p));
		if (!p)
			return NULL;
		memset(p + r->cap_fnames, 0, (r->nr_frames - r->cap_fnames) * sizeof(*p));
		r->fnames = p;
		r->cap_fnames = r->nr_frames;
	}
	if (!r->fnames[frame])
		r->fnames[frame] = folded_name(r, &r->frames[frame]);
	return r->fnames[frame];
}

/* Folded comm: stackcollapse-perf.pl turns spaces into underscores. */
static char *folded_comm(const char *c)
{
	char *s = strdup(c);
	for (char *p = s; p && *p; p++)
		if (*p == ' ' || *p == ';' || *p == '\n')
			*p = '_';
	return s;
}

struct stackagg {
	uint32_t comm, node;
	uint64_t samples, period;
};

static bool stackagg_eq(const void *c, uint32_t id, const void *key)
{
	const struct stackagg *a = &((const struct stackagg *)c)[id];
	const uint32_t *k = key;
	return a->comm == k[0] && a->node == k[1];
}

int report__foreach_stack(struct report *r,
			  int (*fn)(const char *const *names, size_t nr, uint64_t samples,
				    uint64_t period, void *ctx),
			  void *ctx)
{
	struct htab ht = { 0 };
	struct stackagg *aggs = NULL;
	size_t nr = 0, cap = 0;
	const char **names = NULL;
	int err = 0;

	/* Records differ by pid/tid/cpu too; a stack line merges them per comm. */
	for (size_t i = 0; i < r->nr_recs && !err; i++) {
		const struct rec *rc = &r->recs[i];
		if (r->ctxs[rc->ctx].filtered)
			continue;
		uint32_t k[2] = { r->ctxs[rc->ctx].comm, rc->node };
		uint32_t h = hash_words(k, 2);
		if ((err = htab_reserve(&ht)))
			break;
		struct slot *sl = htab_probe(&ht, h, stackagg_eq, aggs, k);
		if (!sl->id1) {
			if ((err = grow(&aggs, &cap, nr, sizeof(*aggs))))
				break;
			aggs[nr] = (struct stackagg){ .comm = k[0], .node = k[1] };
			htab_set(&ht, sl, h, nr++);
		}
		aggs[sl->id1 - 1].samples += rc->count;
		aggs[sl->id1 - 1].period += rc->period;
	}
	free(ht.slots);
	if (!err && !(names = malloc(((size_t)r->max_depth + 1) * sizeof(*names))))
		err = -ENOMEM;
	for (size_t i = 0; i < nr && !err; i++) {
		_cleanup_free_ char *comm = folded_comm(r->strs[aggs[i].comm]);
		int n = rec_frames(r, aggs[i].node);
		if (n < 0 || !comm) {
			err = -ENOMEM;
			break;
		}
		names[0] = comm;
		for (int j = 0; j < n; j++) {
			names[1 + j] = fname(r, r->scratch[n - 1 - j]);
			if (!names[1 + j]) {
				err = -ENOMEM;
				break;
			}
		}
		if (!err)
			err = fn(names, n + 1, aggs[i].samples, aggs[i].period, ctx);
	}
	free(names);
	free(aggs);
	return err;
}

struct lines {
	char **l;
	size_t nr, cap;
	bool by_period;
};

static int collect_line(const char *const *names, size_t nr, uint64_t samples, uint64_t period,
			void *ctx)
{
	struct lines *ls = ctx;
	size_t len = 32;
	for (size_t i = 0; i < nr; i++)
		len += strlen(names[i]) + 1;
	if (grow(&ls->l, &ls->cap, ls->nr, sizeof(*ls->l)) < 0)
		return -ENOMEM;
	char *s = malloc(len), *p = s;
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		size_t n = strlen(names[i]);
		memcpy(p, names[i], n);
		p += n;
		*p++ = i + 1 < nr ? ';' : ' ';
	}
	snprintf(p, 32, "%" PRIu64, ls->by_period ? period : samples);
	ls->l[ls->nr++] = s;
	return 0;
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int report__fprintf_folded(struct report *r, FILE *fp)
{
	struct lines ls = { .by_period = r->opts.period_unit != NULL };
	int err = report__foreach_stack(r, collect_line, &ls);
	if (!err) {
		qsort(ls.l, ls.nr, sizeof(*ls.l), strp_cmp);
		for (size_t i = 0; i < ls.nr; i++)
			fprintf(fp, "%s\n", ls.l[i]);
		if (ferror(fp))
			err = -EIO;
	}
	for (size_t i = 0; i < ls.nr; i++)
		free(ls.l[i]);
	free(ls.l);
	return err;
}

static int add_to_fg(const char *const *names, size_t nr, uint64_t samples, uint64_t period,
		     void *ctx)
{
	return flamegraph__add(ctx, names, nr, samples);
}

static int add_period_to_fg(const char *const *names, size_t nr, uint64_t samples,
			    uint64_t period, void *ctx)
{
	return flamegraph__add(ctx, names, nr, period);
}

int report__fprintf_flamegraph(struct report *r, FILE *fp, const char *title)
{
	struct flamegraph *fg = flamegraph__new();
	if (!fg)
		return -ENOMEM;
	int err = report__foreach_stack(r, r->opts.period_unit ? add_period_to_fg : add_to_fg, fg);
	if (!err) {
		struct flamegraph_opts fo = { .title = title, .unit = r->opts.period_unit };
		err = flamegraph__write(fg, fp, &fo);
	}
	flamegraph__free(fg);
	return err;
}

/* ---- option parsing ------------------------------------------------------------------------ */

int report__parse_sort(const char *list, struct report_opts *opts)
{
	enum report_sort_key keys[REPORT_MAX_SORT_KEYS];
	size_t n = 0;
	_cleanup_free_ char *copy = strdup(list ? list : "");
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		enum report_sort_key k;
		if (!strcmp(t, "comm"))
			k = REPORT_SORT_COMM;
		else if (!strcmp(t, "dso"))
			k = REPORT_SORT_DSO;
		else if (!strcmp(t, "sym") || !strcmp(t, "symbol"))
			k = REPORT_SORT_SYM;
		else if (!strcmp(t, "pid") || !strcmp(t, "tid"))
			k = REPORT_SORT_PID;
		else if (!strcmp(t, "cpu"))
			k = REPORT_SORT_CPU;
		else
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			if (keys[i] == k)
				return -EINVAL;
		if (n == REPORT_MAX_SORT_KEYS)
			return -EINVAL;
		keys[n++] = k;
	}
	if (!n)
		return -EINVAL;
	memcpy(opts->sort_keys, keys, n * sizeof(keys[0]));
	opts->nr_sort_keys = n;
	return 0;
}

int report__parse_callgraph(const char *arg, struct report_opts *opts)
{
	struct report_opts o = *opts;
	_cleanup_free_ char *copy = strdup(arg ? arg : "");
	char *save = NULL;
	bool any = false;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		any = true;
		if (!strcmp(t, "graph"))
			o.graph = REPORT_GRAPH_GRAPH;
		else if (!strcmp(t, "none"))
			o.graph = REPORT_GRAPH_NONE;
		else if (!strcmp(t, "caller"))
			o.order = REPORT_ORDER_CALLER;
		else if (!strcmp(t, "callee"))
			o.order = REPORT_ORDER_CALLEE;
		else if (!strcmp(t, "function") || !strcmp(t, "percent"))
			; /* perf's defaults, accepted */
		else {
			double d = strtod(t, &end);
			if (end == t || *end || d < 0 || d > 100)
				return -EINVAL;
			o.min_percent = d;
		}
	}
	if (!any)
		return -EINVAL;
	*opts = o;
	return 0;
}

/* ---- stats ------------------------------------------------------------------------------- */

static const char *record_name(unsigned int type)
{
	static const char *const names[] = {
		[0] = "TOTAL", [1] = "MMAP", [2] = "LOST", [3] = "COMM", [4] = "EXIT",
		[5] = "THROTTLE", [6] = "UNTHROTTLE", [7] = "FORK", [8] = "READ", [9] = "SAMPLE",
		[10] = "MMAP2", [11] = "AUX", [12] = "ITRACE_START", [13] = "LOST_SAMPLES",
		[14] = "SWITCH", [15] = "SWITCH_CPU_WIDE", [16] = "NAMESPACES", [17] = "KSYMBOL",
		[18] = "BPF_EVENT", [19] = "CGROUP", [20] = "TEXT_POKE",
		[21] = "AUX_OUTPUT_HW_ID", [64] = "ATTR", [65] = "EVENT_TYPE",
		[66] = "TRACING_DATA", [67] = "BUILD_ID", [68] = "FINISHED_ROUND",
		[69] = "ID_INDEX", [70] = "AUXTRACE_INFO", [71] = "AUXTRACE",
		[72] = "AUXTRACE_ERROR", [73] = "THREAD_MAP", [74] = "CPU_MAP",
		[75] = "STAT_CONFIG", [76] = "STAT", [77] = "STAT_ROUND", [78] = "EVENT_UPDATE",
		[79] = "TIME_CONV", [80] = "FEATURE", [81] = "COMPRESSED", [82] = "FINISHED_INIT",
	};
	return type < ARRAY_SIZE(names) ? names[type] : NULL;
}

int report__fprintf_preamble(const struct report *r, FILE *fp, uint64_t total_lost_samples)
{
	if (r && r->opts.nr_comms == 1)
		fprintf(fp, "# comm: %s\n", r->opts.comms[0]);
	fprintf(fp, "#\n# Total Lost Samples: %" PRIu64 "\n#\n", total_lost_samples);
	return ferror(fp) ? -EIO : 0;
}

int report__fprintf_stats(FILE *fp, const struct report_stats *st)
{
	uint64_t total = 0;
	for (unsigned int t = 1; t < REPORT_NR_RECORD_TYPES; t++)
		total += st->nr_events[t];

	fprintf(fp, "\nAggregated stats:\n");
	fprintf(fp, "%16s events: %10" PRIu64 "\n", "TOTAL", total);
	for (unsigned int t = 1; t < REPORT_NR_RECORD_TYPES; t++) {
		const char *name = record_name(t);
		if (!st->nr_events[t])
			continue;
		char unknown[32];
		if (!name) {
			snprintf(unknown, sizeof(unknown), "TYPE_%u", t);
			name = unknown;
		}
		fprintf(fp, "%16s events: %10" PRIu64 "  (%4.1f%%)\n", name, st->nr_events[t],
			pct(st->nr_events[t], total));
	}
	for (size_t i = 0; i < st->nr_events_stats; i++) {
		const struct report_event_stats *e = &st->events[i];
		fprintf(fp, "%s stats:\n", e->name ? e->name : "unknown");
		if (e->nr_samples)
			fprintf(fp, "%16s events: %10" PRIu64 "\n", "SAMPLE", e->nr_samples);
		if (e->nr_lost_samples)
			fprintf(fp, "%16s events: %10" PRIu64 "\n", "LOST_SAMPLES",
				e->nr_lost_samples);
	}
	const struct report_pause_stats *p = &st->pause;
	if (p->present) {
		/* precord --lossless: what the promise of zero loss cost the target. */
		fprintf(fp, "precord pause stats:\n");
		fprintf(fp, "%16s: %10" PRIu64 "\n", "pauses", p->nr_pauses);
		fprintf(fp, "%16s: %14.3f", "paused ms", (double)p->paused_ns / 1e6);
		if (p->recording_ns)
			fprintf(fp, "  (%4.1f%% of %.3f s)", pct(p->paused_ns, p->recording_ns),
				(double)p->recording_ns / 1e9);
		fputc('\n', fp);
		fprintf(fp, "%16s: %14.3f\n", "longest ms", (double)p->longest_pause_ns / 1e6);
	}
	return ferror(fp) ? -EIO : 0;
}

int report__fprintf_warnings(FILE *fp, const struct report_stats *st)
{
	uint64_t total = 0, lost_samples = st->total_lost_samples;
	int n = 0;
	for (unsigned int t = 1; t < REPORT_NR_RECORD_TYPES; t++)
		total += st->nr_events[t];
	if (st->nr_events[PERF_RECORD_LOST]) {
		fprintf(fp, "Warning:\nProcessed %" PRIu64 " events and lost %" PRIu64
			" chunks!\n\nCheck IO/CPU overload!\n\n", total,
			st->nr_events[PERF_RECORD_LOST]);
		n++;
	}
	if (lost_samples) {
		uint64_t nr = st->nr_events[PERF_RECORD_SAMPLE] + lost_samples;
		double rate = (double)lost_samples / (double)nr;
		if (rate > 0.05) {
			fprintf(fp, "Warning:\nProcessed %" PRIu64 " samples and lost %3.2f%%!\n\n",
				nr, rate * 100.0);
			n++;
		}
	}
	return ferror(fp) ? -EIO : n;
}
