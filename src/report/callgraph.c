/* Call graphs in perf's "graph" style under a row: branches sorted by their share, percentages
 * of the total, the threshold applied as perf applies it. */
#include <errno.h>
#include <inttypes.h>
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


static int kid_cmp(const void *pa, const void *pb, void *c)
{
	const struct view *v = c;
	const struct report *r = v->r;
	const struct cnode *a = &v->cnodes[*(const uint32_t *)pa];
	const struct cnode *b = &v->cnodes[*(const uint32_t *)pb];
	int d = rep_cmp_u64_desc(a->cumul, b->cumul);
	if (d)
		return d;
	/* perf keeps equal siblings in the order of its insertion tree, which compares dso
	 * pointers and then addresses, higher first. Dsos in order of first sight stand in
	 * for the pointers (no dso sorts as NULL, last); symbols order by start address or,
	 * when unknown, by any ip within them, which orders them the same way. */
	const struct frame *fa = &r->frames[a->frame], *fb = &r->frames[b->frame];
	uint64_t da = fa->dso == NONE ? 0 : (uint64_t)fa->dso + 1;
	uint64_t db = fb->dso == NONE ? 0 : (uint64_t)fb->dso + 1;
	if ((d = rep_cmp_u64_desc(da, db)))
		return d;
	uint64_t aa = fa->sym != NONE && fa->sym_start ? fa->sym_start : fa->ip;
	uint64_t ab = fb->sym != NONE && fb->sym_start ? fb->sym_start : fb->ip;
	if ((d = rep_cmp_u64_desc(aa, ab)))
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
					fprintf(g->fp, "--%.2f%%--", rep_pct(v->cnodes[c].cumul, g->total));
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
