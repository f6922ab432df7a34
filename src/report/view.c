/* A view: the rows (perf's hist entries) and their call trees built from a report's records for
 * one printing, ordered as perf 6.1 orders them (a red-black tree keyed like perf's
 * output_resort). Every place where perf's behaviour is surprising says so. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "lib/cleanup.h"
#include "report/report_int.h"

/* ---- rows (hist entries) and their call trees --------------------------------------------- */





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
	k.comm = k.dso = k.frame = k.cgroup = k.unit = k.srcline = k.parent = k.srcfile = NONE;
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
				uint64_t a = self ? r->frames[f].map_off : r->frames[f].ip;
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
		case REPORT_SORT_CGROUP:
			k.cgroup = cx->cgroup;
			break;
		case REPORT_SORT_UNIT:
			k.unit = cx->unit;
			break;
		case REPORT_SORT_SRCLINE:
			k.srcline = r->frames[f].srcline;
			break;
		case REPORT_SORT_PARENT:
			k.parent = cx->parent;
			break;
		case REPORT_SORT_SRCFILE:
			k.srcfile = r->frames[f].srcfile;
			break;
		}
	}
	uint32_t h = rep_hash_words((const uint32_t *)&k, sizeof(k) / 4);
	if (rep_htab_reserve(&v->entry_ht) < 0)
		return -ENOMEM;
	struct slot *sl = rep_htab_probe(&v->entry_ht, h, entry_eq, v, &k);
	if (!sl->id1) {
		if (rep_grow(&v->entries, &v->cap_entries, v->nr_entries, sizeof(*v->entries)) < 0)
			return -ENOMEM;
		struct entry *e = &v->entries[v->nr_entries];
		memset(e, 0, sizeof(*e));
		e->key = k;
		e->frame = f;
		e->filtered = cx->filtered;
		e->addr = self ? r->frames[f].map_off : r->frames[f].ip;
		e->kernel = kernel;
		e->comm = cx->comm;
		e->cgroup = cx->cgroup;
		e->unit = cx->unit;
		e->pid = cx->pid;
		e->tid = cx->tid;
		e->thread = cx->thread;
		e->cpu = cx->cpu;
		e->stamp = NONE;
		e->croot = NONE;
		rep_htab_set(&v->entry_ht, sl, h, v->nr_entries++);
	}
	*ret = sl->id1 - 1;
	return 0;
}

static int cnode_new(struct view *v, uint32_t parent, uint32_t frame, uint32_t *ret)
{
	if (rep_grow(&v->cnodes, &v->cap_cnodes, v->nr_cnodes, sizeof(*v->cnodes)) < 0)
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
			const struct rec *rc)
{
	/* an empty chain adds nothing, not even to the root's total (perf's callchain_append) */
	if (!n)
		return 0;
	if (e->croot == NONE && cnode_new(v, NONE, NONE, &e->croot) < 0)
		return -ENOMEM;
	uint32_t cur = e->croot;
	v->cnodes[cur].cumul += rc->period;
	v->cnodes[cur].cumul_n += rc->count;
	for (int i = 0; i < n; i++) {
		uint32_t k[2] = { cur, v->r->frames[fr[i * step]].graph };
		uint32_t h = rep_hash_words(k, 2);
		if (rep_htab_reserve(&v->cnode_ht) < 0)
			return -ENOMEM;
		struct slot *sl = rep_htab_probe(&v->cnode_ht, h, cnode_eq, v, k);
		if (!sl->id1) {
			uint32_t id;
			if (cnode_new(v, cur, k[1], &id) < 0)
				return -ENOMEM;
			rep_htab_set(&v->cnode_ht, sl, h, id);
		}
		cur = sl->id1 - 1;
		v->cnodes[cur].cumul += rc->period;
		v->cnodes[cur].cumul_n += rc->count;
	}
	v->cnodes[cur].hit += rc->period;
	v->cnodes[cur].hit_n += rc->count;
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
	int n = rep_rec_frames(r, rc->node);
	if (n < 0)
		return n;
	const uint32_t *f = r->scratch;
	uint32_t ei;

	/* perf's walk keeps one addr_location: a frame outside any map inherits the mode of the
	 * frame visited before it, the first one the sample's. */
	bool level = cx->leaf_kernel;
	if (entry_get(v, cx, rc->self, level, true, &ei) < 0)
		return -ENOMEM;
	struct entry *e = &v->entries[ei];
	e->self += rc->period;
	e->self_sys += cx->leaf_kernel ? rc->period : 0;
	e->children += rc->period;
	e->nr_samples += rc->count;
	e->stamp = ri;
	if ((uint32_t)n > e->max_depth)
		e->max_depth = n;
	if (v->graph) {
		int err = chain_append(v, e, caller ? f + n - 1 : f, n, caller ? -1 : 1, rc);
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
			int err = chain_append(v, e, f + i, len, caller ? -1 : 1, rc);
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

int rep_cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

int rep_key_sort(const struct report *r, enum report_sort_key k, const struct entry *a,
		 const struct entry *b)
{
	const struct frame *fa = &r->frames[a->frame], *fb = &r->frames[b->frame];
	int d = 0;

	switch (k) {
	case REPORT_SORT_COMM:
		d = strcmp(rep_str(r, a->comm), rep_str(r, b->comm));
		break;
	case REPORT_SORT_DSO:
		d = cmp_str_null_last(rep_str(r, fa->dso), rep_str(r, fb->dso));
		break;
	case REPORT_SORT_SYM:
		d = cmp_str_null_last(rep_str(r, fa->sym), rep_str(r, fb->sym));
		if (!d && fa->sym == NONE && a->addr != b->addr)
			d = a->addr < b->addr ? -1 : 1;
		break;
	case REPORT_SORT_PID:
		d = (a->tid > b->tid) - (a->tid < b->tid);
		break;
	case REPORT_SORT_CPU:
		d = (a->cpu > b->cpu) - (a->cpu < b->cpu);
		break;
	case REPORT_SORT_CGROUP:
		d = strcmp(rep_str(r, a->cgroup), rep_str(r, b->cgroup));
		break;
	case REPORT_SORT_UNIT:
		d = strcmp(rep_str(r, a->unit), rep_str(r, b->unit));
		break;
	case REPORT_SORT_SRCLINE:
		d = cmp_str_null_last(rep_str(r, a->key.srcline), rep_str(r, b->key.srcline));
		break;
	case REPORT_SORT_PARENT:
		/* perf's sort__parent_cmp: by name, "[other]" last */
		d = cmp_str_null_last(rep_str(r, a->key.parent), rep_str(r, b->key.parent));
		break;
	case REPORT_SORT_SRCFILE:
		d = cmp_str_null_last(rep_str(r, a->key.srcfile), rep_str(r, b->key.srcfile));
		break;
	}
	return d;
}

/* perf's output comparison, hist_entry__sort(): each field of the order in turn (perf's
 * default: Children with its caller-above-callee tie break, Self, then each sort key
 * ascending; numbers descending). Negative: a goes first; 0: a goes after b. It is not
 * transitive (the tie break applies only within a thread), so the order depends on how the
 * rows are inserted: view_order() replays perf's insertion. */
static int entry_sort(const struct view *v, uint32_t ia, uint32_t ib)
{
	const struct report *r = v->r;
	const struct entry *a = &v->entries[ia], *b = &v->entries[ib];
	int d = 0;

	for (size_t i = 0; i < r->nr_sorts && !d; i++) {
		switch (r->sorts[i].kind) {
		case REPORT_FIELD_CHILDREN:
			if (r->opts.no_children)
				break;
			if ((d = rep_cmp_u64_desc(a->children, b->children)))
				break;
			/* "Put caller above callee when they have equal period": when both rows
			 * were created by the same thread and call graphs are shown, perf compares
			 * the longest chain appended to each row, shorter first in callee order,
			 * longer first in caller order. Without call graphs it skips this (verified
			 * against perf 6.1). */
			if (r->opts.graph != REPORT_GRAPH_NONE && a->pid == b->pid &&
			    a->tid == b->tid && a->max_depth != b->max_depth) {
				d = a->max_depth < b->max_depth ? -1 : 1;
				d = r->opts.order == REPORT_ORDER_CALLER ? -d : d;
			}
			break;
		case REPORT_FIELD_OVERHEAD:
		case REPORT_FIELD_PERIOD:
			d = rep_cmp_u64_desc(a->self, b->self);
			break;
		case REPORT_FIELD_SYS:
			d = rep_cmp_u64_desc(a->self_sys, b->self_sys);
			break;
		case REPORT_FIELD_US:
			d = rep_cmp_u64_desc(a->self - a->self_sys, b->self - b->self_sys);
			break;
		case REPORT_FIELD_SAMPLE:
			d = rep_cmp_u64_desc(a->nr_samples, b->nr_samples);
			break;
		case REPORT_FIELD_KEY:
			if (!rep_elided(r, r->sorts[i].key))
				d = rep_key_sort(r, r->sorts[i].key, a, b);
			break;
		}
	}
	return d;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

int rep_key_collapse(const struct report *r, enum report_sort_key k, const struct entry *a,
		     const struct entry *b)
{
	const struct frame *fa = &r->frames[a->frame], *fb = &r->frames[b->frame];
	int d;

	if (k != REPORT_SORT_SYM)
		return rep_key_sort(r, k, a, b); /* the same as the output's */
	if (fa->sym == NONE && fb->sym == NONE)
		return cmp_u64(a->addr, b->addr);
	if (fa->sym == NONE || fb->sym == NONE)
		return fa->sym == NONE ? 1 : -1;
	d = cmp_str_null_last(rep_str(r, fa->dso), rep_str(r, fb->dso));
	if (!d)
		d = cmp_u64(fa->sym_start ? fa->sym_start : fa->ip,
			    fb->sym_start ? fb->sym_start : fb->ip);
	return d ? d : strcmp(r->strs[fa->sym], r->strs[fb->sym]);
}

/* perf's collapse order (hist_entry__collapse), a total order on the keys (rep_key_collapse),
 * then creation. */
static int entry_collapse_cmp(const void *pa, const void *pb, void *c)
{
	const struct view *v = c;
	const struct report *r = v->r;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	int d = 0;

	for (size_t i = 0; i < r->opts.nr_sort_keys && !d; i++)
		d = rep_key_collapse(r, r->opts.sort_keys[i], &v->entries[ia], &v->entries[ib]);
	return d ? d : (ia > ib) - (ia < ib);
}

/* A red-black tree insertion exactly like the kernel's rbtree (the classic algorithm): with a
 * comparison that is not transitive, the in-order result depends on the tree's shape, and
 * perf's output order is this tree's. */
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

void rep_rb_insert(struct rbt *t, bool (*left_of)(const void *ctx, uint32_t z, uint32_t x),
		   const void *ctx, uint32_t z)
{
	uint32_t p = NONE, x = t->root;
	bool go_left = false;
	while (x != NONE) {
		p = x;
		go_left = left_of(ctx, z, x);
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

size_t rep_rb_inorder(const struct rbt *t, uint32_t *out)
{
	/* In-order walk without a stack, by parent links. */
	size_t k = 0;
	uint32_t x = t->root, prev = NONE;
	while (x != NONE) {
		if (prev == t->parent[x]) {
			if (t->left[x] != NONE) {
				prev = x;
				x = t->left[x];
				continue;
			}
			prev = NONE;
		}
		if (prev == t->left[x]) {
			out[k++] = x;
			if (t->right[x] != NONE) {
				prev = x;
				x = t->right[x];
				continue;
			}
		}
		prev = x;
		x = t->parent[x];
	}
	return k;
}

static bool entry_left_of(const void *ctx, uint32_t z, uint32_t x)
{
	return entry_sort(ctx, z, x) < 0;
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
		rep_rb_insert(&t, entry_left_of, v, coll[i]);
	size_t k = rep_rb_inorder(&t, v->order);
	return k == n ? 0 : -EFAULT;
}

void rep_view_free(struct view *v)
{
	free(v->entries);
	free(v->entry_ht.slots);
	free(v->cnodes);
	free(v->cnode_ht.slots);
	free(v->order);
}

int rep_view_build(struct view *v, struct report *r, bool graph)
{
	memset(v, 0, sizeof(*v));
	v->r = r;
	v->graph = graph;
	for (size_t i = 0; i < r->nr_recs; i++) {
		int err = view_add_rec(v, i);
		if (err)
			return err;
	}
	for (size_t i = 0; i < v->nr_entries; i++)
		if (!v->entries[i].filtered)
			v->nr_unfiltered += v->entries[i].nr_samples;
	/* --symbol-filter judges each row by its own symbol (an inlined function by its name,
	 * as perf's fake symbol has it); the row stays in the totals and the order, as perf's */
	for (size_t i = 0; r->opts.symbol_filter && i < v->nr_entries; i++) {
		const struct frame *f = &r->frames[v->entries[i].frame];
		const char *want = r->opts.symbol_filter;

		if (f->sym == NONE ||
		    !memmem(r->strs[f->sym], rep_sym_len(r, f), want, strlen(want)))
			v->entries[i].filtered = true;
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
	out->comm = rep_str(r, e->comm);
	out->cgroup = rep_str(r, e->cgroup);
	out->unit = rep_str(r, e->unit);
	out->pid = e->pid;
	out->tid = e->tid;
	out->cpu = e->cpu;
	out->dso = rep_str(r, f->dso);
	out->sym = rep_str(r, f->sym);
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
	int err = rep_view_build(&v, r, false);
	for (size_t i = 0; !err && i < v.nr_entries; i++) {
		struct report_entry re;
		if (v.entries[v.order[i]].filtered)
			continue;
		fill_entry(&v, &v.entries[v.order[i]], &re);
		err = fn(&re, ctx);
	}
	rep_view_free(&v);
	return err;
}
