/* Aggregation. Adding a sample interns its strings and frames and walks a prefix tree of frames
 * from the root; the sample then only bumps the counter of its (tree node, thread context)
 * record. Rows, Children/Self and call graphs are derived from the records when printing (view.c),
 * so a million samples over a few thousand distinct stacks cost a few thousand records. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "lib/cgroupfs.h"
#include "lib/cleanup.h"
#include "report/report_int.h"

/* ---- the report --------------------------------------------------------------------------- */







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
	/* Callers pass the same long names (C++ symbols, dsos) sample after sample, mostly
	 * from the same pointers: a memo by address, checked by comparing the strings, skips
	 * hashing them (a pointer may come back holding another string: then it misses). */
	struct memo *m = &r->memo[((uintptr_t)s >> 3) % REPORT_MEMO];
	if (m->p == s && !strcmp(r->strs[m->id], s)) {
		*ret = m->id;
		return 0;
	}
	size_t len = strlen(s);
	uint32_t h = rep_hash_str(s, len);
	if (rep_htab_reserve(&r->str_ht) < 0)
		return -ENOMEM;
	struct slot *sl = rep_htab_probe(&r->str_ht, h, str_eq, r, &s);
	if (sl->id1) {
		*ret = sl->id1 - 1;
		*m = (struct memo){ s, *ret };
		return 0;
	}
	if (rep_grow(&r->strs, &r->cap_strs, r->nr_strs, sizeof(*r->strs)) < 0)
		return -ENOMEM;
	char *p = rep_arena_strdup(&r->arena, s, len);
	if (!p)
		return -ENOMEM;
	r->strs[r->nr_strs] = p;
	rep_htab_set(&r->str_ht, sl, h, r->nr_strs);
	*ret = r->nr_strs++;
	*m = (struct memo){ s, *ret };
	return 0;
}

const char *rep_str(const struct report *r, uint32_t id)
{
	return id == NONE ? NULL : r->strs[id];
}

static bool frame_eq(const void *c, uint32_t id, const void *key)
{
	const struct report *r = c;
	const struct frame *a = &r->frames[id], *b = key;
	return a->dso == b->dso && a->sym == b->sym && a->kernel == b->kernel &&
	       a->sym_start == b->sym_start && a->srcline == b->srcline &&
	       a->srcfile == b->srcfile &&
	       (a->sym != NONE || (a->ip == b->ip && a->map_ip == b->map_ip));
}

static int frame_id(struct report *r, const struct report_frame *f, uint32_t *ret)
{
	/* A frame outside any map has no mode of its own: perf shows it with the mode of the
	 * frame visited before it (see view_add_rec), so it is one frame whatever the flag. */
	struct frame k = { .kernel = f->dso && f->kernel, .inlined = f->inlined && f->sym,
			   .dso_seq = f->dso ? f->dso_seq : 0 };
	int err = intern(r, f->dso, &k.dso);
	if (!err && f->inlined && f->sym) {
		/* perf's fake symbol of an inlined function prints as "NAME (inlined)" */
		static const char sfx[] = REP_INLINED_SUFFIX;
		size_t len = strlen(f->sym);
		char buf[1024];
		_cleanup_free_ char *big = NULL;
		char *name = buf;
		if (len + sizeof(sfx) > sizeof(buf) && !(name = big = malloc(len + sizeof(sfx))))
			return -ENOMEM;
		memcpy(name, f->sym, len);
		memcpy(name + len, sfx, sizeof(sfx));
		err = intern(r, name, &k.sym);
	} else if (!err) {
		err = intern(r, f->sym, &k.sym);
	}
	if (!err)
		err = intern(r, f->srcline, &k.srcline);
	if (!err)
		err = intern(r, f->srcfile, &k.srcfile);
	if (err)
		return err;
	/* Resolved frames are one function whatever the ip (perf's sort_key=function); the
	 * addresses are kept as zero in the key and filled in below. */
	if (k.sym == NONE) {
		k.ip = f->ip;
		k.map_ip = f->map_ip;
		k.map_off = f->map_off;
	} else {
		k.sym_start = f->sym_start;
	}
	uint64_t a = k.ip ^ rep_mix64(k.map_ip) ^ rep_mix64(k.sym_start + 1);
	uint32_t w[7] = { k.dso, k.sym, (uint32_t)a, (uint32_t)(a >> 32), k.kernel, k.srcline,
			  k.srcfile };
	uint32_t h = rep_hash_words(w, 7);
	if (rep_htab_reserve(&r->frame_ht) < 0)
		return -ENOMEM;
	struct slot *sl = rep_htab_probe(&r->frame_ht, h, frame_eq, r, &k);
	if (sl->id1) {
		*ret = sl->id1 - 1;
		return 0;
	}
	k.graph = r->nr_frames;
	if (k.srcline != NONE || k.srcfile != NONE) {
		struct report_frame nosrc = *f;

		nosrc.srcline = nosrc.srcfile = NULL;
		if ((err = frame_id(r, &nosrc, &k.graph)) < 0)
			return err;
		/* (the table grew: the slot is found again) */
		if (rep_htab_reserve(&r->frame_ht) < 0)
			return -ENOMEM;
		sl = rep_htab_probe(&r->frame_ht, h, frame_eq, r, &k);
	}
	if (rep_grow(&r->frames, &r->cap_frames, r->nr_frames, sizeof(*r->frames)) < 0)
		return -ENOMEM;
	/* A resolved frame keeps the first addresses seen: they order siblings in graphs. */
	if (k.sym != NONE && !k.sym_start)
		k.ip = f->ip;
	if (k.srcline == NONE && k.srcfile == NONE)
		k.graph = r->nr_frames;
	r->frames[r->nr_frames] = k;
	rep_htab_set(&r->frame_ht, sl, h, r->nr_frames);
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
	uint32_t h = rep_hash_words(k, 2);
	if (rep_htab_reserve(&r->node_ht) < 0)
		return -ENOMEM;
	struct slot *sl = rep_htab_probe(&r->node_ht, h, node_eq, r, k);
	if (sl->id1) {
		*ret = sl->id1 - 1;
		return 0;
	}
	if (rep_grow(&r->nodes, &r->cap_nodes, r->nr_nodes, sizeof(*r->nodes)) < 0)
		return -ENOMEM;
	uint32_t depth = r->nodes[parent].depth + 1;
	r->nodes[r->nr_nodes] = (struct tnode){ .parent = parent, .frame = frame, .depth = depth };
	rep_htab_set(&r->node_ht, sl, h, r->nr_nodes);
	*ret = r->nr_nodes++;
	return 0;
}

static bool thread_filtered(const struct report_opts *o, const struct report_sample *s);

static bool ctx_eq(const void *c, uint32_t id, const void *key)
{
	const struct report *r = c;
	return memcmp(&r->ctxs[id], key, sizeof(struct ctx)) == 0;
}

static int ctx_id(struct report *r, const struct report_sample *s, uint32_t *ret)
{
	int32_t cpu = r->key_cpu ? s->cpu : -1;
	/* perf's -x: a sample without a parent counts, in no row */
	bool xo = r->opts.exclude_other && !s->parent;

	/* Consecutive samples mostly come from the same thread: skip the lookup then. */
	uint32_t lk = s->chain && s->chain->known ? s->chain->leaf_kernel :
		      s->self ? s->self->kernel : s->frames[0].kernel;
	/* (the thread's filters are the last sample's on this path; the caller's, --dsos and
	 * --symbols, go by the sample's ip) */
	if (r->last_ctx != NONE && r->last_pid == s->pid && r->last_tid == s->tid &&
	    r->last_thread == s->thread &&
	    r->last_cpu == cpu && r->ctxs[r->last_ctx].leaf_kernel == lk &&
	    r->ctxs[r->last_ctx].filtered == (s->filtered || r->last_thread_filtered || xo) &&
	    s->comm && r->last_comm_ptr &&
	    r->last_cgroup_ptr == s->cgroup && r->last_parent_ptr == s->parent &&
	    strcmp(r->last_comm_ptr, s->comm) == 0) {
		*ret = r->last_ctx;
		return 0;
	}
	struct ctx k;
	memset(&k, 0, sizeof(k));
	int err = intern(r, s->comm ? s->comm : ":-1", &k.comm);
	if (err)
		return err;
	/* as perf: "N/A" when the file has no cgroups; a unit only for systemd's cgroups */
	char unit[256];
	const char *u = s->cgroup ? cgroupfs__unit(s->cgroup, unit, sizeof(unit)) : NULL;
	if ((err = intern(r, s->cgroup ? s->cgroup : "N/A", &k.cgroup)) ||
	    (err = intern(r, u ? u : s->cgroup ? s->cgroup : "N/A", &k.unit)))
		return err;
	k.parent = NONE;
	if (s->parent && (err = intern(r, s->parent, &k.parent)))
		return err;
	k.pid = s->pid;
	k.tid = s->tid;
	k.thread = s->thread;
	k.cpu = cpu;
	k.leaf_kernel = lk;
	bool tf = thread_filtered(&r->opts, s);
	k.filtered = s->filtered || tf || xo;
	uint32_t h = rep_hash_words((const uint32_t *)&k, sizeof(k) / 4);
	if (rep_htab_reserve(&r->ctx_ht) < 0)
		return -ENOMEM;
	struct slot *sl = rep_htab_probe(&r->ctx_ht, h, ctx_eq, r, &k);
	if (!sl->id1) {
		if (rep_grow(&r->ctxs, &r->cap_ctxs, r->nr_ctxs, sizeof(*r->ctxs)) < 0)
			return -ENOMEM;
		r->ctxs[r->nr_ctxs] = k;
		rep_htab_set(&r->ctx_ht, sl, h, r->nr_ctxs++);
	}
	*ret = sl->id1 - 1;
	r->last_ctx = *ret;
	r->last_pid = s->pid;
	r->last_tid = s->tid;
	r->last_thread = s->thread;
	r->last_cpu = cpu;
	r->last_comm_ptr = r->strs[k.comm];
	r->last_cgroup_ptr = s->cgroup;
	r->last_parent_ptr = s->parent;
	r->last_thread_filtered = tf;
	return 0;
}

static bool rec_eq(const void *c, uint32_t id, const void *key)
{
	const struct report *r = c;
	const uint32_t *k = key;
	return r->recs[id].node == k[0] && r->recs[id].ctx == k[1] && r->recs[id].self == k[2];
}

static bool tidcomm_eq(const void *c, uint32_t id, const void *key)
{
	const struct report *r = c;
	const uint32_t *k = key;
	return (uint32_t)r->tidcomms[id].tid == k[0] && r->tidcomms[id].thread == k[1];
}

/* perf prints a thread's latest comm in the pid column. */
static int note_tid_comm(struct report *r, int32_t tid, uint32_t thread, uint32_t comm)
{
	uint32_t k[2] = { (uint32_t)tid, thread };
	uint32_t h = rep_hash_words(k, 2);
	if (rep_htab_reserve(&r->tidcomm_ht) < 0)
		return -ENOMEM;
	struct slot *sl = rep_htab_probe(&r->tidcomm_ht, h, tidcomm_eq, r, k);
	if (sl->id1) {
		r->tidcomms[sl->id1 - 1].comm = comm;
		return 0;
	}
	if (rep_grow(&r->tidcomms, &r->cap_tidcomms, r->nr_tidcomms, sizeof(*r->tidcomms)) < 0)
		return -ENOMEM;
	r->tidcomms[r->nr_tidcomms] = (struct tidcomm){ tid, thread, comm, false };
	rep_htab_set(&r->tidcomm_ht, sl, h, r->nr_tidcomms++);
	return 0;
}

size_t rep_sym_len(const struct report *r, const struct frame *f)
{
	size_t n = strlen(r->strs[f->sym]);

	return f->inlined ? n - strlen(REP_INLINED_SUFFIX) : n;
}

int report__final_comms(struct report *r,
			const char *(*comm_of)(void *ctx, int32_t tid, uint32_t thread), void *ctx)
{
	for (size_t i = 0; i < r->nr_tidcomms; i++) {
		const char *c = comm_of(ctx, r->tidcomms[i].tid, r->tidcomms[i].thread);
		int err = c ? intern(r, c, &r->tidcomms[i].comm) : 0;

		if (err)
			return err;
		r->tidcomms[i].final = c != NULL;
	}
	return 0;
}

/* The row's thread's entry in tidcomms, NULL when no sample of it came. */
static const struct tidcomm *tidcomm_of(const struct report *r, const struct entry *e)
{
	uint32_t k[2] = { (uint32_t)e->tid, e->thread };
	struct slot *sl;

	if (!r->tidcomm_ht.slots)
		return NULL;
	sl = rep_htab_probe(&r->tidcomm_ht, rep_hash_words(k, 2), tidcomm_eq, r, k);
	return sl->id1 ? &r->tidcomms[sl->id1 - 1] : NULL;
}

size_t rep_comm_width(const struct report *r, const struct entry *e)
{
	const struct tidcomm *tc = tidcomm_of(r, e);
	size_t own = strlen(rep_str(r, e->comm));

	if (!tc)
		return own;
	size_t last = strlen(r->strs[tc->comm]);
	return tc->final || last > own ? last : own;
}

uint32_t rep_latest_comm(const struct report *r, const struct entry *e)
{
	const struct tidcomm *tc = tidcomm_of(r, e);

	return tc ? tc->comm : e->comm;
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

/* f at the end of the list l of *n, unless it holds it already. */
static void add_field(struct report_field *l, size_t *n, struct report_field f)
{
	for (size_t i = 0; i < *n; i++)
		if (rep_field_eq(l[i], f))
			return;
	l[(*n)++] = f;
}

/* The sort keys (-s's, else perf's default comm,dso,sym but with an -F list of its own: its
 * keys), the columns and the rows' order, as perf's setup_sorting and
 * perf_hpp__setup_output_field make them. -EINVAL: no sort key at all. */
static int setup_fields(struct report *r)
{
	struct report_opts *o = &r->opts;
	bool strict = o->nr_fields && !o->fields_append;
	struct report_field key = { .kind = REPORT_FIELD_KEY };
	size_t given = o->nr_sort_keys;

	if (o->hierarchy && o->nr_fields)
		return -EINVAL; /* its columns are not a list */
	for (size_t i = 0; i < o->nr_fields; i++)
		if (o->fields[i].kind > REPORT_FIELD_KEY ||
		    (o->fields[i].kind == REPORT_FIELD_KEY && o->fields[i].key > REPORT_SORT_LAST))
			return -EINVAL;
	if (!given && !strict) {
		o->sort_keys[0] = REPORT_SORT_COMM;
		o->sort_keys[1] = REPORT_SORT_DSO;
		o->sort_keys[2] = REPORT_SORT_SYM;
		o->nr_sort_keys = 3;
	}
	/* perf's -p adds the parent key after -s's (or the default) keys, as one of them */
	if (o->parent && !has_key(o, REPORT_SORT_PARENT)) {
		if (o->nr_sort_keys == REPORT_MAX_SORT_KEYS)
			return -EINVAL;
		o->sort_keys[o->nr_sort_keys++] = REPORT_SORT_PARENT;
		given = o->nr_sort_keys;
	}
	for (size_t i = 0; i < o->nr_fields; i++)
		if (o->fields[i].kind == REPORT_FIELD_KEY && !has_key(o, o->fields[i].key)) {
			if (o->nr_sort_keys == REPORT_MAX_SORT_KEYS)
				return -EINVAL;
			o->sort_keys[o->nr_sort_keys++] = o->fields[i].key;
		}
	if (!o->nr_sort_keys)
		return -EINVAL;
	r->nr_cols = r->nr_sorts = 0;
	if (strict) {
		/* -F's columns, then -s's keys it leaves out; rows by -s's keys, then -F's */
		for (size_t i = 0; i < o->nr_fields; i++)
			add_field(r->cols, &r->nr_cols, o->fields[i]);
		for (size_t i = 0; i < given; i++) {
			key.key = o->sort_keys[i];
			add_field(r->cols, &r->nr_cols, key);
			add_field(r->sorts, &r->nr_sorts, key);
		}
		for (size_t i = 0; i < o->nr_fields; i++)
			add_field(r->sorts, &r->nr_sorts, o->fields[i]);
		return 0;
	}
	/* perf's defaults: Children, Self, --show-cpu-utilization's sys and usr, -n's and
	 * --show-total-period's numbers, a "+" list's fields, the keys (not with --hierarchy,
	 * whose levels they are; it has no children); rows by Children, Self, the keys */
	r->self_header = !o->no_children;
	if (!o->no_children)
		r->cols[r->nr_cols++] = (struct report_field){ .kind = REPORT_FIELD_CHILDREN };
	r->cols[r->nr_cols++] = (struct report_field){ .kind = REPORT_FIELD_OVERHEAD };
	memcpy(r->sorts, r->cols, r->nr_cols * sizeof(r->cols[0]));
	r->nr_sorts = r->nr_cols;
	if (o->show_cpu_utilization) {
		r->cols[r->nr_cols++] = (struct report_field){ .kind = REPORT_FIELD_SYS };
		r->cols[r->nr_cols++] = (struct report_field){ .kind = REPORT_FIELD_US };
	}
	if (o->show_nr_samples)
		r->cols[r->nr_cols++] = (struct report_field){ .kind = REPORT_FIELD_SAMPLE };
	if (o->show_total_period)
		r->cols[r->nr_cols++] = (struct report_field){ .kind = REPORT_FIELD_PERIOD };
	for (size_t i = 0; i < o->nr_fields; i++)
		add_field(r->cols, &r->nr_cols, o->fields[i]);
	for (size_t i = 0; i < o->nr_sort_keys; i++) {
		key.key = o->sort_keys[i];
		if (!o->hierarchy)
			add_field(r->cols, &r->nr_cols, key);
		add_field(r->sorts, &r->nr_sorts, key);
	}
	return 0;
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
		if (o->sort_keys[i] > REPORT_SORT_LAST)
			goto einval;
	if (o->order == REPORT_ORDER_DEFAULT)
		o->order = o->no_children ? REPORT_ORDER_CALLEE : REPORT_ORDER_CALLER;
	/* perf's hierarchy has no Children (the graphs keep the order children would give) */
	if (o->hierarchy)
		o->no_children = true;
	if (o->nr_fields > REPORT_MAX_FIELDS || setup_fields(r) < 0)
		goto einval;
	if (o->min_percent < 0)
		o->min_percent = DEFAULT_MIN_PERCENT;
	r->key_cpu = has_key(o, REPORT_SORT_CPU);
	r->last_ctx = NONE;

	/* Own copies of the filter lists. */
	r->pids = dup_ints(o->pids, o->nr_pids);
	r->tids = dup_ints(o->tids, o->nr_tids);
	r->cpus = dup_ints(o->cpus, o->nr_cpus);
	r->comms = o->comms ? calloc(o->nr_comms + 1, sizeof(char *)) : NULL;
	if (!r->pids || !r->tids || !r->cpus || (o->comms && !r->comms))
		goto enomem;
	for (size_t i = 0; i < o->nr_comms; i++)
		if (!(r->comms[i] = strdup(o->comms[i])))
			goto enomem;
	o->pids = r->pids;
	o->tids = r->tids;
	o->cpus = r->cpus;
	o->comms = (const char *const *)r->comms;
	r->elided = rep_elided_keys(o);

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
	rep_arena_free(&r->arena);
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
static bool thread_filtered(const struct report_opts *o, const struct report_sample *s)
{
	if ((o->nr_pids && !in_list(o->pids, o->nr_pids, s->pid)) ||
	    (o->nr_tids && !in_list(o->tids, o->nr_tids, s->tid)))
		return true;
	return o->comms && !report__name_listed(o->comms, o->nr_comms, s->comm);
}

bool report__name_listed(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

int report__add_sample(struct report *r, const struct report_sample *s)
{
	const struct report_opts *o = &r->opts;

	/* no frames: an empty chain, which needs the Self row's frame */
	if ((!s->nr_frames && !s->self) ||
	    (s->nr_frames && !s->frames && !(s->chain && s->chain->known)))
		return -EINVAL;
	/* perf skips samples outside --cpu before counting them; its thread's comm (the pid
	 * column's) still moves on with them */
	if (o->nr_cpus && !in_list(o->cpus, o->nr_cpus, s->cpu)) {
		uint32_t comm;
		int err = intern(r, s->comm ? s->comm : ":-1", &comm);

		return err ? err : note_tid_comm(r, s->tid, s->thread, comm);
	}

	uint32_t ctx, node = 0, self = NONE;
	int err = ctx_id(r, s, &ctx);
	if (!err && s->chain && s->chain->known) {
		/* the same frames came before: every frame and node they make exists */
		node = s->chain->node;
		self = s->chain->self;
	} else {
		for (size_t i = s->nr_frames; !err && i-- > 0;) {
			uint32_t f;
			err = frame_id(r, &s->frames[i], &f);
			if (!err)
				err = child_node(r, node, f, &node);
			self = f;
		}
		if (!err && s->self)
			err = frame_id(r, s->self, &self);
		if (!err && s->chain)
			*s->chain = (struct report_chain){ .node = node, .self = self, .known = true,
							   .leaf_kernel = s->self ? s->self->kernel :
									 s->frames[0].kernel };
	}
	if (!err)
		err = note_tid_comm(r, s->tid, s->thread, r->ctxs[ctx].comm);
	if (err)
		return err;

	uint32_t k[3] = { node, ctx, self };
	uint32_t h = rep_hash_words(k, 3);
	if (rep_htab_reserve(&r->rec_ht) < 0)
		return -ENOMEM;
	struct slot *sl = rep_htab_probe(&r->rec_ht, h, rec_eq, r, k);
	if (!sl->id1) {
		if (rep_grow(&r->recs, &r->cap_recs, r->nr_recs, sizeof(*r->recs)) < 0)
			return -ENOMEM;
		r->recs[r->nr_recs] = (struct rec){ .node = node, .ctx = ctx, .self = self };
		rep_htab_set(&r->rec_ht, sl, h, r->nr_recs++);
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
int rep_rec_frames(struct report *r, uint32_t node)
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
