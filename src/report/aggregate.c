/* The aggregation sink: converts each resolved sample's frames into report frames (perf's
 * names: the short dso name, callers at return address - 1) and adds it to its event's report.
 * Runs on the session's thread, so the reports need no locking. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perf/abi.h"
#include "report/aggregate.h"
#include "unwind/symbols.h"

#define MAX_FRAMES 1024

struct report_set {
	struct report **reports;
	size_t nr;
	struct report_frame frames[MAX_FRAMES];
};

static const char *short_dso(const struct unwind_frame *f)
{
	const char *name, *slash;

	if (!f->dso)
		return NULL;
	name = dso__name(f->dso);
	if (!name)
		return NULL;
	if (name[0] == '[')
		return name;
	slash = strrchr(name, '/');
	return slash ? slash + 1 : name;
}

size_t report_frames__from_unwind(const struct report_session_sample *s, struct report_frame *out,
				  size_t max)
{
	size_t n = s->nr_frames < max ? s->nr_frames : max;

	for (size_t k = 0; k < n; k++) {
		const struct unwind_frame *f = &s->frames[k];
		/* perf stores a DWARF-unwound caller at its return address - 1, and shows that
		 * address when no symbol holds it. */
		uint64_t adj = f->caller ? 1 : 0;

		out[k].ip = f->ip - adj;
		out[k].map_ip = f->addr - adj;
		out[k].sym_start = f->sym ? f->sym->start : 0;
		out[k].dso = short_dso(f);
		out[k].sym = unwind_frame__name(f);
		out[k].kernel = f->kernel;
	}
	return n;
}

static int add_sample(void *ctx, const struct report_session_sample *s)
{
	struct report_set *rs = ctx;
	struct report_sample sample = {
		.comm = s->comm,
		.pid = (int32_t)s->raw->pid,
		.tid = (int32_t)s->raw->tid,
		.cpu = s->cpu,
		.period = s->period,
		.time = s->raw->time,
		.frames = rs->frames,
	};

	if (s->attr >= rs->nr)
		return 0;
	sample.nr_frames = report_frames__from_unwind(s, rs->frames, MAX_FRAMES);
	return report__add_sample(rs->reports[s->attr], &sample) < 0 ? -ENOMEM : 0;
}

struct report_set *report_set__new(struct report_session *s, const struct report_opts *opts,
				   bool children_set)
{
	struct perf_reader *r = report_session__reader(s);
	struct report_opts def = { .min_percent = -1, .graph = REPORT_GRAPH_GRAPH };
	struct report_set *rs = calloc(1, sizeof(*rs));
	struct report_sink sink = { .sample = add_sample, .ctx = rs };

	if (!rs)
		return NULL;
	rs->nr = perf_reader__nr_attrs(r) ? perf_reader__nr_attrs(r) : 1;
	rs->reports = calloc(rs->nr, sizeof(*rs->reports));
	if (!rs->reports)
		goto fail;
	for (size_t i = 0; i < rs->nr; i++) {
		struct report_opts o = opts ? *opts : def;
		const struct perf_reader_attr *a = perf_reader__attr(r, i);

		/* no call graph recorded: no graph to print */
		if (a && !(a->attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER))) {
			o.graph = REPORT_GRAPH_NONE;
			if (!children_set)
				o.no_children = true;
		}
		rs->reports[i] = report__new(&o);
		if (!rs->reports[i])
			goto fail;
	}
	if (report_session__add_sink(s, &sink) < 0) {
		errno = ENOMEM;
		goto fail;
	}
	return rs;
fail:
	{
		int e = errno;

		report_set__free(rs);
		errno = e;
	}
	return NULL;
}

size_t report_set__nr(const struct report_set *rs)
{
	return rs->nr;
}

struct report *report_set__report(struct report_set *rs, size_t idx)
{
	return idx < rs->nr ? rs->reports[idx] : NULL;
}

void report_set__free(struct report_set *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; rs->reports && i < rs->nr; i++)
		report__free(rs->reports[i]);
	free(rs->reports);
	free(rs);
}
