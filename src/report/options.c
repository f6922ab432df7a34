/* Parsing of perf's --sort and -g arguments into report options. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "lib/cleanup.h"
#include "report/report_int.h"

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
		else if (!strcmp(t, "cgroup"))
			k = REPORT_SORT_CGROUP;
		else if (!strcmp(t, "unit"))
			k = REPORT_SORT_UNIT;
		else if (!strcmp(t, "srcline"))
			k = REPORT_SORT_SRCLINE;
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
	bool any = false;

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
		else if (!strcmp(t, "function") || !strcmp(t, "percent"))
			; /* perf's defaults, accepted */
		else {
			double d = strtod(t, &end);
			if (end == t || *end || !(d >= 0 && d <= 100)) /* NaN too */
				return -EINVAL;
			o.min_percent = d;
		}
	}
	if (!any)
		return -EINVAL;
	*opts = o;
	return 0;
}
