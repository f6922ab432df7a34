/* The --stdio table as perf 6.1 prints it (ui/stdio/hist.c): column widths, headers, rows with
 * Children/Self, --percent-limit, and report__fprintf, which prints one event's section. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "lib/cleanup.h"
#include "report/report_int.h"

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
	size_t comm, dso, sym, pid, cgroup, unit, srcline, parent, srcfile;
	size_t row_limit;       /* the most a row holds (see struct line) */
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
	w->cgroup = strlen("Cgroup");
	w->unit = strlen("Unit");
	w->srcline = strlen("Source:Line");
	w->parent = strlen("Parent symbol");
	w->srcfile = strlen("Source File");
	for (size_t i = 0; i < v->nr_entries; i++) {
		const struct entry *e = &v->entries[i];
		const struct frame *f = &r->frames[e->frame];
		if (e->filtered)
			continue;
		/* perf sizes the comm column by the row's thread's last name (its cells are cut to
		 * that width: a name the thread dropped may be longer) */
		w->comm = col_max(w->comm, rep_comm_width(r, e));
		w->cgroup = col_max(w->cgroup, strlen(rep_str(r, e->cgroup)));
		w->unit = col_max(w->unit, strlen(rep_str(r, e->unit)));
		if (e->key.parent != NONE)
			w->parent = col_max(w->parent, strlen(r->strs[e->key.parent]));
		w->pid = col_max(w->pid, strlen(rep_str(r, rep_latest_comm(r, e))) + 8);
		if (f->sym != NONE) {
			w->sym = col_max(w->sym, rep_sym_len(r, f) + 4);
		} else {
			w->sym = col_max(w->sym, 16 + 4 + 2);
			w->dso = col_max(w->dso, 16);
		}
		w->dso = col_max(w->dso, f->dso != NONE ? strlen(r->strs[f->dso]) : strlen("[unknown]"));
		if (e->key.srcline != NONE)
			w->srcline = col_max(w->srcline, strlen(r->strs[e->key.srcline]));
		if (e->key.srcfile != NONE)
			w->srcfile = col_max(w->srcfile, strlen(r->strs[e->key.srcfile]));
	}
}

const char *rep_single_value(const struct report_opts *o, enum report_sort_key k,
			     const char **ret_label)
{
	switch (k) {
	case REPORT_SORT_COMM:
		*ret_label = "comm";
		return o->nr_comms == 1 ? o->comms[0] : NULL;
	case REPORT_SORT_DSO:
		*ret_label = "dso";
		return o->nr_dsos == 1 ? o->dsos[0] : NULL;
	case REPORT_SORT_SYM:
		*ret_label = "symbol";
		return o->nr_symbols == 1 ? o->symbols[0] : NULL;
	default:
		return NULL;
	}
}

/* perf hides a column filtered down to one value and names the value in the preamble instead;
 * but not every column: when all would go, all stay. */
uint32_t rep_elided_keys(const struct report_opts *o)
{
	uint32_t mask = 0;
	bool all = true;
	const char *label;

	for (size_t i = 0; i < o->nr_sort_keys; i++) {
		if (rep_single_value(o, o->sort_keys[i], &label))
			mask |= 1u << o->sort_keys[i];
		else
			all = false;
	}
	return all ? 0 : mask;
}

/* A line being printed: with -t a row holds at most what perf's line buffer holds (the
 * columns' widths and two characters between each, plus 3), which cuts a last Symbol cell
 * longer than its column (an inlined function's: perf sizes it without " (inlined)"). */
struct line {
	FILE *fp;
	bool header, first;
	size_t used, limit;
};

static void put_text(struct line *l, const char *t)
{
	size_t n = strlen(t);

	if (n > l->limit - l->used)
		n = l->limit - l->used;
	fwrite(t, 1, n, l->fp);
	l->used += n;
}

static void put_fill(struct line *l, char c, size_t n)
{
	for (; n && l->used < l->limit; n--, l->used++)
		fputc(c, l->fp);
}

/* A cell begins: after two spaces (but the first of a header line, after its "# "), or with -t
 * after the separator (none before the first cell). */
static void cell_start(const struct report_opts *o, struct line *l)
{
	if (o->field_sep) {
		if (!l->first)
			put_text(l, o->field_sep);
	} else if (!l->header || !l->first) {
		put_text(l, "  ");
	}
	l->first = false;
}

/* A row's cell, its own copies of the separator's first character turned into '.', as perf's
 * repsep_snprintf. */
static void put_cell(const struct report_opts *o, struct line *l, char *cell)
{
	cell_start(o, l);
	for (char *c = cell; o->field_sep && (c = strchr(c, *o->field_sep)); c++)
		*c = '.';
	put_text(l, cell);
}

/* A header cell of width w: its name (right-aligned when right), or with dots its underline. */
static void put_head(const struct report_opts *o, struct line *l, const char *name, size_t w,
		     bool right, bool dots)
{
	size_t n = strlen(name);

	cell_start(o, l);
	if (dots) {
		put_fill(l, '.', w);
		return;
	}
	if (right)
		put_fill(l, ' ', w > n ? w - n : 0);
	put_text(l, name);
	if (!right)
		put_fill(l, ' ', w > n ? w - n : 0);
}

/* The header of sort key k's column, and its width. */
static const char *key_header(enum report_sort_key k, const struct widths *w, size_t *wd)
{
	switch (k) {
	case REPORT_SORT_COMM:
		return *wd = w->comm, "Command";
	case REPORT_SORT_DSO:
		return *wd = w->dso, "Shared Object";
	case REPORT_SORT_SYM:
		return *wd = w->sym, "Symbol";
	case REPORT_SORT_PID:
		return *wd = w->pid, "    Pid:Command";
	case REPORT_SORT_CPU:
		return *wd = 3, "CPU";
	case REPORT_SORT_CGROUP:
		return *wd = w->cgroup, "Cgroup";
	case REPORT_SORT_UNIT:
		return *wd = w->unit, "Unit";
	case REPORT_SORT_SRCLINE:
		return *wd = w->srcline, "Source:Line";
	case REPORT_SORT_PARENT:
		return *wd = w->parent, "Parent symbol";
	case REPORT_SORT_SRCFILE:
		return *wd = w->srcfile, "Source File";
	}
	return *wd = 0, "";
}

/* The header of column c and its width: a number's (right-aligned) or a key's. */
static const char *col_header(const struct report *r, struct report_field c,
			      const struct widths *w, size_t *wd)
{
	switch (c.kind) {
	case REPORT_FIELD_OVERHEAD:
		return *wd = 8, r->self_header ? "Self" : "Overhead";
	case REPORT_FIELD_CHILDREN:
		return *wd = 8, "Children";
	case REPORT_FIELD_SYS:
		return *wd = 8, "sys";
	case REPORT_FIELD_US:
		return *wd = 8, "usr";
	case REPORT_FIELD_SAMPLE:
		return *wd = 12, "Samples";
	case REPORT_FIELD_PERIOD:
		return *wd = 12, "Period";
	case REPORT_FIELD_KEY:
		break;
	}
	return key_header(c.key, w, wd);
}

/* Whether column c is shown: a key filtered down to one value is not (rep_elided). */
static bool col_shown(const struct report *r, struct report_field c)
{
	return c.kind != REPORT_FIELD_KEY || !rep_elided(r, c.key);
}

/* The column headers and their dotted underline (none with -t, as perf). */
static void print_headers(const struct report *r, const struct widths *w, FILE *fp)
{
	const struct report_opts *o = &r->opts;

	for (int line = 0; line < (o->field_sep ? 1 : 2); line++) {
		struct line l = { .fp = fp, .header = true, .first = true, .limit = SIZE_MAX };

		fputs("# ", fp);
		for (size_t i = 0; i < r->nr_cols; i++) {
			size_t wd;
			const char *h = col_header(r, r->cols[i], w, &wd);

			if (col_shown(r, r->cols[i]))
				put_head(o, &l, h, wd, r->cols[i].kind != REPORT_FIELD_KEY, line);
		}
		fputc('\n', fp);
	}
	if (!o->field_sep)
		fputs("#\n", fp);
}

double rep_pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* With -t, perf's line buffer: the columns' widths, two characters between each, and 3 more;
 * no limit without. */
static size_t row_limit(const struct report *r, const struct widths *w)
{
	size_t n = 3, shown = 0;

	if (!r->opts.field_sep)
		return SIZE_MAX;
	for (size_t i = 0; i < r->nr_cols; i++) {
		size_t wd;

		if (col_shown(r, r->cols[i])) {
			col_header(r, r->cols[i], w, &wd);
			n += (shown++ ? 2 : 0) + wd;
		}
	}
	return n;
}

/* The cell of a number column: a share of total (perf's " %*.2f%%" in a column of 8: a share
 * of 1000% or more, of the rows shown with --percentage relative, pushes the line right, not
 * the space before it; with -t, " %.2f%%" left in the column, unpadded in the last) or a count
 * (" %llu" in 12, the same way). */
static void num_cell(const struct view *v, const struct entry *e, enum report_field_kind k,
		     bool last, char *cell, size_t sz)
{
	const struct report_opts *o = &v->r->opts;
	uint64_t x = k == REPORT_FIELD_CHILDREN ? e->children :
		     k == REPORT_FIELD_SYS ? e->self_sys :
		     k == REPORT_FIELD_US ? e->self - e->self_sys :
		     k == REPORT_FIELD_SAMPLE ? e->nr_samples : e->self;
	char buf[64];

	if (k == REPORT_FIELD_SAMPLE || k == REPORT_FIELD_PERIOD) {
		if (o->field_sep) {
			snprintf(buf, sizeof(buf), " %llu", (unsigned long long)x);
			snprintf(cell, sz, "%-*s", last ? 0 : 12, buf);
		} else {
			snprintf(cell, sz, "%12llu", (unsigned long long)x);
		}
		return;
	}
	if (k == REPORT_FIELD_CHILDREN && o->no_children) { /* perf's " %*s", -t or not */
		snprintf(cell, sz, " %7s", "N/A");
		return;
	}
	snprintf(buf, sizeof(buf), o->field_sep ? " %.2f%%" : " %6.2f%%", rep_pct(x, v->total));
	snprintf(cell, sz, o->field_sep ? "%-*s" : "%*s", o->field_sep && last ? 0 : 8, buf);
}

/* The cell of sort key k for row e; a symbol, cgroup, unit or srcline left unpadded when last
 * (perf pads the others whatever their place). */
static void key_cell(const struct report *r, const struct entry *e, enum report_sort_key k,
		     const struct widths *w, bool last, char *cell, size_t sz)
{
	const struct frame *f = &r->frames[e->frame];
	char buf[4096];

	switch (k) {
	case REPORT_SORT_COMM:
		snprintf(cell, sz, "%-*.*s", (int)w->comm, (int)w->comm, rep_str(r, e->comm));
		break;
	case REPORT_SORT_DSO:
		snprintf(cell, sz, "%-*s", (int)w->dso, f->dso != NONE ? r->strs[f->dso] : "[unknown]");
		break;
	case REPORT_SORT_SYM:
		sym_cell(r, e, buf, sizeof(buf));
		snprintf(cell, sz, "%-*s", last ? 0 : (int)w->sym, buf);
		break;
	case REPORT_SORT_PID:
		snprintf(cell, sz, "%7d:%-*s", e->tid, (int)w->pid - 8,
			 rep_str(r, rep_latest_comm(r, e)));
		break;
	case REPORT_SORT_CPU:
		snprintf(cell, sz, "%*.*d", 3, 3, e->cpu);
		break;
	case REPORT_SORT_CGROUP:
		snprintf(cell, sz, "%-*s", last ? 0 : (int)w->cgroup, rep_str(r, e->cgroup));
		break;
	case REPORT_SORT_UNIT:
		snprintf(cell, sz, "%-*s", last ? 0 : (int)w->unit, rep_str(r, e->unit));
		break;
	case REPORT_SORT_SRCLINE:
		snprintf(cell, sz, "%-*s", last ? 0 : (int)w->srcline,
			 e->key.srcline != NONE ? r->strs[e->key.srcline] : "??:0");
		break;
	case REPORT_SORT_PARENT:
		snprintf(cell, sz, "%-*s", (int)w->parent,
			 e->key.parent != NONE ? r->strs[e->key.parent] : "[other]");
		break;
	case REPORT_SORT_SRCFILE:
		snprintf(cell, sz, "%-*s", last ? 0 : (int)w->srcfile,
			 e->key.srcfile != NONE ? r->strs[e->key.srcfile] : "");
		break;
	}
}

static void print_row(const struct view *v, const struct entry *e, const struct widths *w,
		      FILE *fp)
{
	const struct report *r = v->r;
	const struct report_opts *o = &r->opts;
	struct line l = { .fp = fp, .first = true, .limit = w->row_limit };
	char cell[4200];

	for (size_t i = 0; i < r->nr_cols; i++) {
		struct report_field c = r->cols[i];
		bool last = i + 1 == r->nr_cols;

		if (!col_shown(r, c))
			continue;
		if (c.kind != REPORT_FIELD_KEY)
			num_cell(v, e, c.kind, last, cell, sizeof(cell));
		else
			key_cell(r, e, c.key, w, last, cell, sizeof(cell));
		put_cell(o, &l, cell);
	}
	fputc('\n', fp);
}

/* The call graph under e's row, as -g asks: perf's graph or fractal tree, its flat or folded
 * chains, or none. */
static int print_graph(struct gctx *g, const struct entry *e)
{
	enum report_graph m = g->v->r->opts.graph;

	if (m == REPORT_GRAPH_GRAPH || m == REPORT_GRAPH_FRACTAL)
		return rep_print_graph(g, e);
	return m == REPORT_GRAPH_NONE ? 0 : rep_print_chains(g, e, m == REPORT_GRAPH_FOLDED);
}

/* ---- --hierarchy ------------------------------------------------------------------------ */

/* perf's --hierarchy (ui/stdio/hist.c, hierarchy): a level per shown sort key, each row the sum
 * of the rows under it, indented by HIER_INDENT a level; the leaves carry the call graphs. */
#define HIER_INDENT 3

struct hier {
	const struct view *v;
	const struct widths *w;
	struct gctx *g;
	FILE *fp;
	enum report_sort_key keys[REPORT_MAX_SORT_KEYS];
	size_t nr_keys, level;  /* level: the comparators' */
	int err;
};

struct hgroup {
	uint32_t *idx;          /* its rows */
	size_t n;
	struct entry sum;       /* the first row, with the group's sums */
};

static const char *skip_spaces(const char *t)
{
	while (*t == ' ')
		t++;
	return t;
}

static void put_spaces(FILE *fp, size_t n)
{
	fprintf(fp, "%*s", (int)n, "");
}

static void put_dots(FILE *fp, size_t n)
{
	for (; n; n--)
		fputc('.', fp);
}

/* A key's header without the spaces in front ("    Pid:Command"). */
static const char *hier_key_header(const struct hier *h, size_t i, size_t *wd)
{
	return skip_spaces(key_header(h->keys[i], h->w, wd));
}

/* The number columns' headers, then the keys', " / " between them; under them, dotted lines:
 * one for the numbers (their columns, and the indent of the levels), one for the keys (as wide
 * as their header, or as the widest key with its level's indent). */
static void hier_headers(const struct hier *h, FILE *fp)
{
	const struct report *r = h->v->r;
	const char *sep = r->opts.field_sep;
	size_t indent = sep ? 0 : HIER_INDENT * (h->nr_keys - 1), numw = indent, keyw = 0, wd;
	size_t text = 0;

	for (size_t i = 0; i < h->nr_keys; i++) {
		text += (i ? 3 : 0) + strlen(hier_key_header(h, i, &wd));
		if (HIER_INDENT * i + wd > keyw)
			keyw = HIER_INDENT * i + wd;
	}
	if (text > keyw)
		keyw = text;
	fputs("# ", fp);
	put_spaces(fp, indent);
	for (size_t i = 0; i < r->nr_cols; i++) {
		const char *name = col_header(r, r->cols[i], h->w, &wd);

		if (i)
			fputs(sep ? sep : "  ", fp);
		fprintf(fp, "%*s", (int)wd, name);
		numw += wd + (i ? 2 : 0);
	}
	fputs(sep ? sep : "  ", fp);
	for (size_t i = 0; i < h->nr_keys; i++)
		fprintf(fp, "%s%s", i ? " / " : "", hier_key_header(h, i, &wd));
	fputs("\n# ", fp);
	if (sep) {
		for (size_t i = 0; i < r->nr_cols; i++) {
			col_header(r, r->cols[i], h->w, &wd);
			fputs(i ? sep : "", fp);
			put_dots(fp, wd);
		}
	} else {
		put_dots(fp, numw);
	}
	fputs(sep ? sep : "  ", fp);
	put_dots(fp, keyw);
	fputs("\n#\n", fp);
}

static int hier_collapse(const void *pa, const void *pb, void *c)
{
	const struct hier *h = c;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int d = rep_key_collapse(h->v->r, h->keys[h->level], &h->v->entries[a], &h->v->entries[b]);

	return d ? d : (a > b) - (a < b);
}

/* Groups in perf's order: the largest first, then by the level's key. */
static int hgroup_cmp(const void *pa, const void *pb, void *c)
{
	const struct hier *h = c;
	const struct hgroup *a = pa, *b = pb;
	int d = rep_cmp_u64_desc(a->sum.self, b->sum.self);

	if (!d)
		d = rep_key_sort(h->v->r, h->keys[h->level], &a->sum, &b->sum);
	return d ? d : (a->idx[0] > b->idx[0]) - (a->idx[0] < b->idx[0]);
}

static void hier_row(const struct hier *h, const struct entry *e, size_t level)
{
	const struct report *r = h->v->r;
	const char *sep = r->opts.field_sep;
	char cell[4200];

	if (!sep)
		fputs("  ", h->fp);
	put_spaces(h->fp, HIER_INDENT * level);
	for (size_t i = 0; i < r->nr_cols; i++) {
		num_cell(h->v, e, r->cols[i].kind, false, cell, sizeof(cell));
		fprintf(h->fp, "%s%s", i ? (sep ? sep : "  ") : "", cell);
	}
	if (!sep)
		put_spaces(h->fp, HIER_INDENT * (h->nr_keys - 1));
	/* a key's cell as it is last in its line, without the padding in front */
	key_cell(r, e, h->keys[level], h->w, true, cell, sizeof(cell));
	fprintf(h->fp, "%s%s\n", sep ? sep : "  ", skip_spaces(cell));
}

/* The n rows of idx at one level: grouped by its key, each group's row, then what is under it
 * (the next level, or at the last the row's call graph). */
static int hier_level(struct hier *h, uint32_t *idx, size_t n, size_t level)
{
	const struct view *v = h->v;
	const struct report_opts *o = &v->r->opts;
	struct hgroup *gs = calloc(n ? n : 1, sizeof(*gs));
	size_t ng = 0;

	if (!gs)
		return -ENOMEM;
	h->level = level;
	qsort_r(idx, n, sizeof(*idx), hier_collapse, h);
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = &v->entries[idx[i]];

		if (!ng || rep_key_collapse(v->r, h->keys[level], &gs[ng - 1].sum, e)) {
			gs[ng] = (struct hgroup){ .idx = idx + i, .sum = *e };
			gs[ng].sum.self = gs[ng].sum.self_sys = gs[ng].sum.nr_samples = 0;
			ng++;
		}
		gs[ng - 1].n++;
		gs[ng - 1].sum.self += e->self;
		gs[ng - 1].sum.self_sys += e->self_sys;
		gs[ng - 1].sum.nr_samples += e->nr_samples;
	}
	qsort_r(gs, ng, sizeof(*gs), hgroup_cmp, h);
	for (size_t i = 0; !h->err && i < ng; i++) {
		if (o->percent_limit > 0 && rep_pct(gs[i].sum.self, v->total) < o->percent_limit)
			continue;
		hier_row(h, &gs[i].sum, level);
		h->err = level + 1 < h->nr_keys ? hier_level(h, gs[i].idx, gs[i].n, level + 1) :
						  print_graph(h->g, &v->entries[gs[i].idx[0]]);
	}
	free(gs);
	return h->err;
}

static int print_hierarchy(const struct view *v, const struct widths *w, struct gctx *g,
			   FILE *fp)
{
	const struct report *r = v->r;
	struct hier h = { .v = v, .w = w, .g = g, .fp = fp };
	_cleanup_free_ uint32_t *idx = malloc((v->nr_entries ? v->nr_entries : 1) * sizeof(*idx));
	size_t n = 0;

	if (!idx)
		return -ENOMEM;
	/* every key a level, one filtered down to a single value too; the graphs' shares of the
	 * rows' total, --percentage relative's too (perf 6.1) */
	for (size_t i = 0; i < r->opts.nr_sort_keys; i++)
		h.keys[h.nr_keys++] = r->opts.sort_keys[i];
	g->total = v->total;
	for (size_t i = 0; i < v->nr_entries; i++)
		if (!v->entries[v->order[i]].filtered)
			idx[n++] = v->order[i];
	hier_headers(&h, fp);
	return hier_level(&h, idx, n, 0);
}

/* perf's --percent-limit: the row's Children share with children, else its Self share. */
static bool under_limit(const struct view *v, const struct entry *e)
{
	const struct report *r = v->r;
	uint64_t p = r->opts.no_children ? e->self : e->children;

	return r->opts.percent_limit > 0 && rep_pct(p, v->total) < r->opts.percent_limit;
}

int report__fprintf(struct report *r, FILE *fp, const char *event_name)
{
	const struct report_opts *o = &r->opts;
	struct view v;
	struct widths w;
	bool graph = o->graph != REPORT_GRAPH_NONE;
	int err = rep_view_build(&v, r, graph);
	if (err)
		goto out;

	/* --percentage relative: perf's non-filtered totals, the samples whose own row was shown
	 * when they came (struct view) and the own periods of the rows shown (Self's, with
	 * children) */
	uint64_t ns = o->relative ? v.nr_unfiltered : r->nr_samples;

	v.total = r->total_period;
	if (o->relative) {
		v.total = 0;
		for (size_t i = 0; i < v.nr_entries; i++)
			if (!v.entries[i].filtered)
				v.total += v.entries[i].self;
	}
	/* perf divides by 1000 while the count exceeds 1000 and appends K/M/G. */
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
	fprintf(fp, "\n# Event count (approx.): %" PRIu64 "\n#\n", v.total);

	compute_widths(&v, &w);
	w.row_limit = row_limit(r, &w);

	/* The call graphs' shares stay of every sample's period; their threshold is of the
	 * rows' total (perf 6.1's hist_entry__fprintf and hists__output_resort). */
	struct gctx g = { .v = &v, .fp = fp, .total = r->total_period,
			  .fractal = o->graph == REPORT_GRAPH_FRACTAL, .min_percent = o->min_percent };
	/* perf truncates the threshold to a whole period count. */
	g.min_hit = (uint64_t)((double)v.total * (o->min_percent / 100.0));
	if (o->hierarchy)
		err = print_hierarchy(&v, &w, &g, fp);
	else
		print_headers(r, &w, fp);
	for (size_t i = 0; !o->hierarchy && !err && i < v.nr_entries; i++) {
		const struct entry *e = &v.entries[v.order[i]];
		if (e->filtered || under_limit(&v, e))
			continue;
		print_row(&v, e, &w, fp);
		err = print_graph(&g, e);
	}
	free(g.mask);
	if (!err) {
		fputs("\n\n", fp);
		if (ferror(fp))
			err = -EIO;
	}
out:
	rep_view_free(&v);
	return err;
}
