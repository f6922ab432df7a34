/* Call graphs in perf's "graph" style under a row: branches sorted by their share, percentages
 * of the total, the threshold applied as perf applies it. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "lib/cleanup.h"
#include "report/report_int.h"

/* ---- call graphs in perf's "graph" style -------------------------------------------------- */


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


struct kids {
	const struct view *v;
	const uint32_t *ids;    /* children in creation order */
};

/* perf's append_chain_children() tree: a new child z goes left of x when match_chain(x, z)
 * says x is less: an inlined frame compares with another by name, other frames by dso
 * pointer (the dsos' creation order stands in for them, else the order of first sight; no
 * dso is NULL), then symbol start (or, when unknown, any ip within it, which orders them the
 * same way). */
static bool kid_left_of(const void *ctx, uint32_t z, uint32_t x)
{
	const struct kids *k = ctx;
	const struct report *r = k->v->r;
	const struct frame *fx = &r->frames[k->v->cnodes[k->ids[x]].frame];
	const struct frame *fz = &r->frames[k->v->cnodes[k->ids[z]].frame];
	if (fx->inlined || fz->inlined) {
		const char *sx = rep_str(r, fx->sym), *sz = rep_str(r, fz->sym);
		int d = strcmp(sx ? sx : "", sz ? sz : "");
		if (d)
			return d < 0;
	}
	uint64_t dx = fx->dso == NONE ? 0 : fx->dso_seq ? fx->dso_seq : (uint64_t)fx->dso + 1;
	uint64_t dz = fz->dso == NONE ? 0 : fz->dso_seq ? fz->dso_seq : (uint64_t)fz->dso + 1;
	if (dx != dz)
		return dx < dz;
	uint64_t ax = fx->sym != NONE && fx->sym_start ? fx->sym_start : fx->ip;
	uint64_t az = fz->sym != NONE && fz->sym_start ? fz->sym_start : fz->ip;
	return ax < az;
}

/* Children of c in the order of perf's walk of its insertion tree; returns a malloc'd array
 * with room for twice their number (count in *ret_n). */
static uint32_t *walk_kids(const struct view *v, uint32_t c, size_t *ret_n)
{
	size_t all = v->cnodes[c].nr_children, n = all;
	uint32_t *ids = malloc((all ? all : 1) * 5 * sizeof(*ids)); /* out, walk, the tree's 3 */
	bool *red = malloc((all ? all : 1) * sizeof(*red));
	if (!ids || !red) {
		free(ids);
		free(red);
		return NULL;
	}
	uint32_t *walk = ids + all;
	struct rbt t = { ids + 2 * all, ids + 3 * all, ids + 4 * all, red, NONE };
	/* the list holds the newest first */
	size_t i = n;
	for (uint32_t k = v->cnodes[c].first_child; k != NONE && i > 0; k = v->cnodes[k].next_sibling)
		ids[--i] = k;
	struct kids kc = { v, ids + i };
	n -= i;
	for (size_t k = 0; k < n; k++)
		rep_rb_insert(&t, kid_left_of, &kc, (uint32_t)k);
	n = rep_rb_inorder(&t, walk);
	for (size_t k = 0; k < n; k++)
		walk[k] = kc.ids[walk[k]];
	free(red);
	memmove(ids, walk, n * sizeof(*ids));
	*ret_n = n;
	return ids;
}

/* Insert id into a[0..*n), most `by` first, after every equal one (perf's rb tree, which sends
 * an equal key right). */
static void insert_stable(const struct view *v, uint32_t *a, size_t *n, uint32_t id, bool by_hit)
{
	const struct cnode *c = v->cnodes;
	uint64_t key = by_hit ? c[id].hit : c[id].cumul;
	size_t at = *n;

	while (at > 0 && (by_hit ? c[a[at - 1]].hit : c[a[at - 1]].cumul) < key) {
		a[at] = a[at - 1];
		at--;
	}
	a[at] = id;
	(*n)++;
}

/* Children of c above the threshold in perf's order; returns a malloc'd array (count in
 * *ret_n). perf walks its insertion tree in order and inserts each child above the threshold
 * into a tree by cumulative hits, equal ones after: a stable sort of that walk. */
static uint32_t *sorted_kids(struct gctx *g, uint32_t c, size_t *ret_n)
{
	size_t n, m = 0;
	uint32_t *ids = walk_kids(g->v, c, &n);

	if (!ids)
		return NULL;
	const struct cnode *pc = &g->v->cnodes[c];
	/* fractal: perf's ceil of the node's children's hits times the threshold */
	uint64_t min_hit = g->fractal ? (uint64_t)ceil((double)(pc->cumul - pc->hit) *
						       (g->min_percent / 100.0)) : g->min_hit;

	for (size_t k = 0; k < n; k++)
		if (g->v->cnodes[ids[k]].cumul >= min_hit)
			insert_stable(g->v, ids + n, &m, ids[k], false);
	memmove(ids, ids + n, m * sizeof(*ids));
	*ret_n = m;
	return ids;
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

/* perf's callchain value (-g percent, period, count) of a branch or chain: period and count,
 * its share of total. */
static const char *value_str(const struct gctx *g, uint64_t period, uint64_t count,
			     uint64_t total, char *buf, size_t sz)
{
	switch (g->v->r->opts.graph_value) {
	case REPORT_VALUE_PERIOD:
		snprintf(buf, sz, "%" PRIu64, period);
		break;
	case REPORT_VALUE_COUNT:
		snprintf(buf, sz, "%" PRIu64, count);
		break;
	default:
		snprintf(buf, sz, "%.2f%%", rep_pct(period, total));
		break;
	}
	return buf;
}

/* Whether the n-th entry printed (from 1) is the last print_limit allows. */
static bool at_limit(const struct gctx *g, size_t n)
{
	return g->v->r->opts.print_limit && n == g->v->r->opts.print_limit;
}

/* The line of a branch's first frame (with its value) or of a later one (value NULL). */
static void branch_line(struct gctx *g, size_t depth, const char *value, const char *name)
{
	gmargin(g);
	for (size_t i = 0; i < depth; i++) {
		fputc(g->mask[i] ? '|' : ' ', g->fp);
		if (value && i == depth - 1)
			fprintf(g->fp, "--%s--", value);
		else
			fputs("          ", g->fp);
	}
	fprintf(g->fp, "%s\n", name);
}

/* The branches under parent, their shares of total. */
static int print_level(struct gctx *g, uint32_t parent, size_t depth, uint64_t total)
{
	const struct view *v = g->v;
	char name[4096], val[32];
	uint64_t remaining = total, counted = 0;
	size_t n;

	if (gmask_reserve(g, depth) < 0)
		return -ENOMEM;
	_cleanup_free_ uint32_t *kids = sorted_kids(g, parent, &n);
	if (!kids)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		uint32_t c = kids[k];

		remaining -= v->cnodes[c].cumul;
		counted += v->cnodes[c].cumul_n;
		/* The separator keeps the old mask; the last child's lines drop its pipe (in
		 * fractal, unless a "[...]" line for the branches under the threshold follows). */
		gmargin(g);
		for (size_t i = 0; i < depth; i++)
			fputs(g->mask[i] ? "|          " : "           ", g->fp);
		fputc('\n', g->fp);
		/* (a branch cut by print_limit keeps its pipe, as in perf) */
		if (k + 1 == n && (!g->fractal || !remaining))
			g->mask[depth - 1] = false;

		int line = 0;
		uint32_t end = c;
		for (uint32_t x = c; x != NONE; x = run_next(v, x), line++) {
			end = x;
			cell_name(v->r, v->cnodes[x].frame, name, sizeof(name));
			branch_line(g, depth, line ? NULL : value_str(g, v->cnodes[c].cumul,
								       v->cnodes[c].cumul_n, total,
								       val, sizeof(val)), name);
		}
		g->mask[depth] = true;
		int err = print_level(g, end, depth + 1,
				      g->fractal ? v->cnodes[end].cumul - v->cnodes[end].hit : total);
		if (err)
			return err;
		if (at_limit(g, k + 1))
			break;
	}
	if (g->fractal && remaining && remaining != total) {
		/* perf's count of the rest: the parent's children's samples less those shown */
		uint64_t rest_n = v->cnodes[parent].cumul_n - v->cnodes[parent].hit_n - counted;

		if (v->r->opts.graph_value == REPORT_VALUE_COUNT && !rest_n)
			return 0;
		g->mask[depth - 1] = false;
		branch_line(g, depth, value_str(g, remaining, rest_n, total, val, sizeof(val)), "[...]");
	}
	return 0;
}

int rep_print_graph(struct gctx *g, const struct entry *e)
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
		size_t shown = 0;

		for (uint32_t x = roots[0]; x != NONE; x = run_next(v, x), i++) {
			start = x;
			/* past print_limit's lines the run goes on unprinted (perf's) */
			if (at_limit(g, shown))
				continue;
			if (i == 0 && !r->opts.nr_fields && r->opts.sort_keys[0] == REPORT_SORT_SYM)
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
			shown++;
		}
	}
	if (gmask_reserve(g, 1) < 0)
		return -ENOMEM;
	g->mask[0] = true;
	int err = print_level(g, start, 1, g->fractal ? parent_samples : g->total);
	if (err)
		return err;
	/* perf ends a graph with a blank line, unless it printed nothing at all. */
	if (g->any)
		fputc('\n', g->fp);
	return 0;
}

/* ---- perf's "flat" and "folded" call graphs ---------------------------------------------- */

struct chains {
	uint32_t *ids;
	size_t n, cap;
};

/* perf's sort_chain_flat: a walk of the insertion tree, children before their parent; each node
 * where chains end (at least min_hit of them) goes into a tree by those hits, equal ones after. */
static int collect_chains(struct gctx *g, uint32_t c, struct chains *ch)
{
	const struct view *v = g->v;
	size_t n;
	_cleanup_free_ uint32_t *kids = walk_kids(v, c, &n);

	if (!kids)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		int err = collect_chains(g, kids[k], ch);
		if (err)
			return err;
	}
	if (!v->cnodes[c].hit || v->cnodes[c].hit < g->min_hit)
		return 0;
	if (ch->n == ch->cap) {
		size_t nc = ch->cap ? 2 * ch->cap : 16;
		uint32_t *ids = realloc(ch->ids, nc * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		ch->ids = ids;
		ch->cap = nc;
	}
	insert_stable(v, ch->ids, &ch->n, c, true);
	return 0;
}

/* The frames from below root down to c, root side first. */
static void print_path(struct gctx *g, uint32_t root, uint32_t c, bool folded, bool *first)
{
	const struct view *v = g->v;
	char name[4096];

	if (c == root || c == NONE)
		return;
	print_path(g, root, v->cnodes[c].parent, folded, first);
	/* perf's flat and folded chains leave out what its graphs show of a chain deeper than
	 * the stack copy: the caller at 0xffffffffffffffff (>= PERF_CONTEXT_MAX) */
	if (v->r->frames[v->cnodes[c].frame].sym == NONE &&
	    v->r->frames[v->cnodes[c].frame].ip >= PERF_CONTEXT_MAX)
		return;
	cell_name(v->r, v->cnodes[c].frame, name, sizeof(name));
	if (folded)
		fprintf(g->fp, "%s%s", *first ? "" : ";", name);
	else
		fprintf(g->fp, "                %s\n", name);
	*first = false;
}

int rep_print_chains(struct gctx *g, const struct entry *e, bool folded)
{
	const struct view *v = g->v;
	struct chains ch = { 0 };
	int err;

	if (e->croot == NONE)
		return 0;
	err = collect_chains(g, e->croot, &ch);
	for (size_t i = 0; !err && i < ch.n; i++) {
		const struct cnode *c = &v->cnodes[ch.ids[i]];
		bool first = true;
		char val[32];

		/* flat gives what passes through the chain's end, folded what ends there */
		if (folded)
			fprintf(g->fp, "%s ", value_str(g, c->hit, c->hit_n, g->total, val, sizeof(val)));
		else
			fprintf(g->fp, "           %s\n",
				value_str(g, c->cumul, c->cumul_n, g->total, val, sizeof(val)));
		print_path(g, e->croot, ch.ids[i], folded, &first);
		fputc('\n', g->fp);
		if (at_limit(g, i + 1))
			break;
	}
	free(ch.ids);
	return err;
}
