/* Parsing of perf's --sort and -g arguments into report options. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/perf_event.h>

#include "lib/cleanup.h"
#include "report/report_int.h"

/* ---- option parsing ------------------------------------------------------------------------ */

/* A sort key by perf's name (and preport's: tid, unit), in any case as perf takes it; -1 for
 * another word. */
static int key_by_name(const char *t)
{
	static const struct {
		const char *name;
		enum report_sort_key key;
	} keys[] = {
		{ "comm", REPORT_SORT_COMM },     { "dso", REPORT_SORT_DSO },
		{ "sym", REPORT_SORT_SYM },       { "symbol", REPORT_SORT_SYM },
		{ "pid", REPORT_SORT_PID },       { "tid", REPORT_SORT_PID },
		{ "cpu", REPORT_SORT_CPU },       { "cgroup", REPORT_SORT_CGROUP },
		{ "unit", REPORT_SORT_UNIT },     { "srcline", REPORT_SORT_SRCLINE },
		{ "parent", REPORT_SORT_PARENT }, { "srcfile", REPORT_SORT_SRCFILE },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcasecmp(t, keys[i].name))
			return (int)keys[i].key;
	return -1;
}

int report__parse_sort(const char *list, struct report_opts *opts)
{
	enum report_sort_key keys[REPORT_MAX_SORT_KEYS];
	size_t n = 0;
	_cleanup_free_ char *copy = strdup(list ? list : "");
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k = key_by_name(t);

		if (k < 0)
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			if (keys[i] == (enum report_sort_key)k)
				return -EINVAL;
		if (n == REPORT_MAX_SORT_KEYS)
			return -EINVAL;
		keys[n++] = (enum report_sort_key)k;
	}
	if (!n)
		return -EINVAL;
	memcpy(opts->sort_keys, keys, n * sizeof(keys[0]));
	opts->nr_sort_keys = n;
	return 0;
}

int report__parse_fields(const char *list, struct report_opts *opts, char *bad, size_t bad_size)
{
	static const char *const names[] = {
		[REPORT_FIELD_OVERHEAD] = "overhead", [REPORT_FIELD_CHILDREN] = "overhead_children",
		[REPORT_FIELD_SYS] = "overhead_sys",  [REPORT_FIELD_US] = "overhead_us",
		[REPORT_FIELD_SAMPLE] = "sample",     [REPORT_FIELD_PERIOD] = "period",
	};
	struct report_field f[REPORT_MAX_FIELDS];
	size_t n = 0;
	bool append = list && list[0] == '+';
	_cleanup_free_ char *copy = strdup(list ? list + append : "");
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	snprintf(bad, bad_size, "%s", list ? list : "");
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		struct report_field x = { .kind = REPORT_FIELD_KEY };
		int k = key_by_name(t);
		bool dup = false;

		if (k >= 0)
			x.key = (enum report_sort_key)k;
		for (size_t i = 0; k < 0 && i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcasecmp(t, names[i])) {
				x.kind = (enum report_field_kind)i;
				k = 0;
			}
		if (k < 0) {
			snprintf(bad, bad_size, "%s", t);
			return -EINVAL;
		}
		for (size_t i = 0; i < n; i++)
			dup |= rep_field_eq(f[i], x);
		if (!dup)
			f[n++] = x; /* at most one of each: never more than REPORT_MAX_FIELDS */
	}
	if (!n)
		return -EINVAL;
	memcpy(opts->fields, f, n * sizeof(f[0]));
	opts->nr_fields = n;
	opts->fields_append = append;
	return 0;
}

bool report__sorts_by(const struct report_opts *o, enum report_sort_key k)
{
	for (size_t i = 0; i < o->nr_sort_keys; i++)
		if (o->sort_keys[i] == k)
			return true;
	return false;
}

bool report__wants_key(const struct report_opts *o, enum report_sort_key k)
{
	if (report__sorts_by(o, k))
		return true;
	for (size_t i = 0; i < o->nr_fields; i++)
		if (o->fields[i].kind == REPORT_FIELD_KEY && o->fields[i].key == k)
			return true;
	return false;
}

bool report__needs_callers(const struct report_opts *o)
{
	if (!o->no_children || o->graph != REPORT_GRAPH_NONE || o->ignore_callees || o->parent ||
	    o->exclude_other || report__wants_key(o, REPORT_SORT_PARENT))
		return true;
	for (size_t i = 0; i < o->nr_fields; i++)
		if (o->fields[i].kind == REPORT_FIELD_CHILDREN)
			return true;
	return false;
}

/* perf's -g print types by name; -1 for another word. */
static int graph_mode(const char *t)
{
	static const char *const names[] = {
		[REPORT_GRAPH_NONE] = "none", [REPORT_GRAPH_GRAPH] = "graph",
		[REPORT_GRAPH_FLAT] = "flat", [REPORT_GRAPH_FOLDED] = "folded",
		[REPORT_GRAPH_FRACTAL] = "fractal",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(t, names[i]))
			return (int)i;
	return -1;
}

int report__parse_callgraph(const char *arg, struct report_opts *opts)
{
	struct report_opts o = *opts;
	_cleanup_free_ char *copy = strdup(arg ? arg : "");
	char *save = NULL;
	bool any = false, threshold = false;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		any = true;
		int mode = graph_mode(t);

		if (mode >= 0)
			o.graph = (enum report_graph)mode;
		else if (!strcmp(t, "caller"))
			o.order = REPORT_ORDER_CALLER;
		else if (!strcmp(t, "callee"))
			o.order = REPORT_ORDER_CALLEE;
		else if (!strcmp(t, "function"))
			; /* perf's default key, accepted */
		else if (!strcmp(t, "percent"))
			o.graph_value = REPORT_VALUE_PERCENT;
		else if (!strcmp(t, "period"))
			o.graph_value = REPORT_VALUE_PERIOD;
		else if (!strcmp(t, "count"))
			o.graph_value = REPORT_VALUE_COUNT;
		else if (!threshold) { /* perf: the first number the threshold, then print_limit */
			double d = strtod(t, &end);
			if (end == t || *end || !(d >= 0 && d <= 100)) /* NaN too */
				return -EINVAL;
			o.min_percent = d;
			threshold = true;
		} else {
			errno = 0;
			unsigned long l = strtoul(t, &end, 10);
			if (end == t || *end || t[0] == '-' || errno || l > UINT32_MAX)
				return -EINVAL;
			o.print_limit = (uint32_t)l;
		}
	}
	if (!any)
		return -EINVAL;
	*opts = o;
	return 0;
}
