/* Collapsed stacks (stackcollapse-perf.pl's format) and the flame graph, from the distinct
 * stacks of a report: frames named as perf script names them. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "lib/cleanup.h"
#include "report/flamegraph.h"
#include "report/report_int.h"

/* ---- folded stacks and flame graphs ------------------------------------------------------- */

/* Name a frame the way stackcollapse-perf.pl does after `perf script`: unresolved frames become
 * "[dso basename]" (or "[unknown]"); argument lists are dropped except "(anonymous
 * namespace)" and Go's "pkg.(*T).M"; ';' (the separator) becomes ':' and quotes go. */
static char *folded_name(const struct report *r, const struct frame *f)
{
	char *out;
	if (f->sym == NONE) {
		const char *d = rep_str(r, f->dso);
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
	/* perf script prints an inlined frame as "NAME (inlined)" with no dso after it, and
	 * stackcollapse-perf.pl takes "(inlined)" for the dso: the name alone remains. */
	size_t len = rep_sym_len(r, f);
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
	if (cut && (size_t)(cut - s) < len)
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
		uint32_t h = rep_hash_words(k, 2);
		if ((err = rep_htab_reserve(&ht)))
			break;
		struct slot *sl = rep_htab_probe(&ht, h, stackagg_eq, aggs, k);
		if (!sl->id1) {
			if ((err = rep_grow(&aggs, &cap, nr, sizeof(*aggs))))
				break;
			aggs[nr] = (struct stackagg){ .comm = k[0], .node = k[1] };
			rep_htab_set(&ht, sl, h, nr++);
		}
		aggs[sl->id1 - 1].samples += rc->count;
		aggs[sl->id1 - 1].period += rc->period;
	}
	free(ht.slots);
	if (!err && !(names = malloc(((size_t)r->max_depth + 1) * sizeof(*names))))
		err = -ENOMEM;
	for (size_t i = 0; i < nr && !err; i++) {
		_cleanup_free_ char *comm = folded_comm(r->strs[aggs[i].comm]);
		int n = rep_rec_frames(r, aggs[i].node);
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

/* A folded line: the stack's text and its count. */
struct line {
	char *s;
	uint64_t n;
};

struct lines {
	struct line *l;
	size_t nr, cap;
	bool by_period;
};

static int collect_line(const char *const *names, size_t nr, uint64_t samples, uint64_t period,
			void *ctx)
{
	struct lines *ls = ctx;
	size_t len = 1;
	for (size_t i = 0; i < nr; i++)
		len += strlen(names[i]) + 1;
	if (rep_grow(&ls->l, &ls->cap, ls->nr, sizeof(*ls->l)) < 0)
		return -ENOMEM;
	char *s = malloc(len), *p = s;
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		size_t n = strlen(names[i]);
		memcpy(p, names[i], n);
		p += n;
		*p++ = i + 1 < nr ? ';' : '\0';
	}
	ls->l[ls->nr++] = (struct line){ .s = s, .n = ls->by_period ? period : samples };
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->s, ((const struct line *)b)->s);
}

int report__fprintf_folded(struct report *r, FILE *fp)
{
	struct lines ls = { .by_period = r->opts.period_unit != NULL };
	int err = report__foreach_stack(r, collect_line, &ls);
	if (!err) {
		if (ls.nr)	/* ls.l is NULL when no stack survived: qsort(NULL, 0) is UB */
			qsort(ls.l, ls.nr, sizeof(*ls.l), line_cmp);
		/* Stacks of different frames can read the same (ld.so's _start and the program's):
		 * one line each text, as stackcollapse-perf.pl folds perf script's. */
		for (size_t i = 0; i < ls.nr; i++) {
			uint64_t n = ls.l[i].n;
			while (i + 1 < ls.nr && !strcmp(ls.l[i].s, ls.l[i + 1].s))
				n += ls.l[++i].n;
			fprintf(fp, "%s %" PRIu64 "\n", ls.l[i].s, n);
		}
		if (ferror(fp))
			err = -EIO;
	}
	for (size_t i = 0; i < ls.nr; i++)
		free(ls.l[i].s);
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
