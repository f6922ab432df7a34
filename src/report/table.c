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
	size_t comm, dso, sym, pid, cgroup, unit, srcline;
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
	for (size_t i = 0; i < v->nr_entries; i++) {
		const struct entry *e = &v->entries[i];
		const struct frame *f = &r->frames[e->frame];
		if (e->filtered)
			continue;
		size_t cl = strlen(rep_str(r, e->comm));
		w->comm = col_max(w->comm, cl);
		w->cgroup = col_max(w->cgroup, strlen(rep_str(r, e->cgroup)));
		w->unit = col_max(w->unit, strlen(rep_str(r, e->unit)));
		w->pid = col_max(w->pid, strlen(rep_str(r, rep_latest_comm(r, e->tid, e->comm))) + 8);
		if (f->sym != NONE) {
			/* perf sizes an inlined function by its name, without " (inlined)" */
			size_t sl = strlen(r->strs[f->sym]) - (f->inlined ? strlen(" (inlined)") : 0);

			w->sym = col_max(w->sym, sl + 4);
		} else {
			w->sym = col_max(w->sym, 16 + 4 + 2);
			w->dso = col_max(w->dso, 16);
		}
		w->dso = col_max(w->dso, f->dso != NONE ? strlen(r->strs[f->dso]) : strlen("[unknown]"));
		if (e->key.srcline != NONE)
			w->srcline = col_max(w->srcline, strlen(r->strs[e->key.srcline]));
	}
}

static void print_dots(FILE *fp, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc('.', fp);
}

/* perf hides a column filtered down to one value (--comm, --dsos or --symbols with a single
 * name) and names the value in the preamble instead; but not every column: when all would go,
 * all stay. A hidden column takes no part in the order of the rows either (perf's
 * perf_hpp__should_skip). */
static bool one_value(const struct report *r, enum report_sort_key k)
{
	return (k == REPORT_SORT_COMM && r->opts.nr_comms == 1) ||
	       (k == REPORT_SORT_DSO && r->opts.nr_dsos == 1) ||
	       (k == REPORT_SORT_SYM && r->opts.nr_symbols == 1);
}

bool rep_elided(const struct report *r, enum report_sort_key k)
{
	if (!one_value(r, k))
		return false;
	for (size_t i = 0; i < r->opts.nr_sort_keys; i++)
		if (!one_value(r, r->opts.sort_keys[i]))
			return true;
	return false;
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
		for (int c = 0; c < 2; c++) {
			if (!(c ? o->show_total_period : o->show_nr_samples))
				continue;
			fputs("  ", fp);
			if (line)
				print_dots(fp, 12);
			else
				fprintf(fp, "%12s", c ? "Period" : "Samples");
		}
		for (size_t i = 0; i < o->nr_sort_keys; i++) {
			const char *h = NULL;
			size_t wd = 0;
			if (rep_elided(r, o->sort_keys[i]))
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
			case REPORT_SORT_CGROUP:
				h = "Cgroup", wd = w->cgroup;
				break;
			case REPORT_SORT_UNIT:
				h = "Unit", wd = w->unit;
				break;
			case REPORT_SORT_SRCLINE:
				h = "Source:Line", wd = w->srcline;
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

double rep_pct(uint64_t v, uint64_t total)
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

	/* perf's " %*.2f%%" in a column of 8, after two spaces: a share over 9999.99% (of the
	 * rows shown, --percentage relative) pushes the line right, not the space before it */
	if (!o->no_children)
		fprintf(fp, "   %6.2f%%   %6.2f%%", rep_pct(e->children, v->total),
			rep_pct(e->self, v->total));
	else
		fprintf(fp, "   %6.2f%%", rep_pct(e->self, v->total));
	if (o->show_nr_samples)
		fprintf(fp, "  %12llu", (unsigned long long)e->nr_samples);
	if (o->show_total_period)
		fprintf(fp, "  %12llu", (unsigned long long)e->self);
	for (size_t i = 0; i < o->nr_sort_keys; i++) {
		bool last = i + 1 == o->nr_sort_keys;
		if (rep_elided(r, o->sort_keys[i]))
			continue;
		fputs("  ", fp);
		switch (o->sort_keys[i]) {
		case REPORT_SORT_COMM:
			fprintf(fp, "%-*s", (int)w->comm, rep_str(r, e->comm));
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
				rep_str(r, rep_latest_comm(r, e->tid, e->comm)));
			break;
		case REPORT_SORT_CPU:
			fprintf(fp, "%*.*d", 3, 3, e->cpu);
			break;
		case REPORT_SORT_CGROUP:
			fprintf(fp, "%-*s", last ? 0 : (int)w->cgroup, rep_str(r, e->cgroup));
			break;
		case REPORT_SORT_UNIT:
			fprintf(fp, "%-*s", last ? 0 : (int)w->unit, rep_str(r, e->unit));
			break;
		case REPORT_SORT_SRCLINE:
			fprintf(fp, "%-*s", last ? 0 : (int)w->srcline,
				e->key.srcline != NONE ? r->strs[e->key.srcline] : "??:0");
			break;
		}
	}
	fputc('\n', fp);
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
	print_headers(r, &w, fp);

	/* The call graphs' shares stay of every sample's period; their threshold is of the
	 * rows' total (perf 6.1's hist_entry__fprintf and hists__output_resort). */
	struct gctx g = { .v = &v, .fp = fp, .total = r->total_period,
			  .fractal = o->graph == REPORT_GRAPH_FRACTAL, .min_percent = o->min_percent };
	/* perf truncates the threshold to a whole period count. */
	g.min_hit = (uint64_t)((double)v.total * (o->min_percent / 100.0));
	for (size_t i = 0; !err && i < v.nr_entries; i++) {
		const struct entry *e = &v.entries[v.order[i]];
		if (e->filtered || under_limit(&v, e))
			continue;
		print_row(&v, e, &w, fp);
		if (o->graph == REPORT_GRAPH_GRAPH || g.fractal)
			err = rep_print_graph(&g, e);
		else if (graph)
			err = rep_print_chains(&g, e, o->graph == REPORT_GRAPH_FOLDED);
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
