/* The aggregation sink: converts each resolved sample's frames into report frames (perf's
 * names: the short dso name, callers at return address - 1) and adds it to its event's report.
 * Runs on the session's thread, so the reports need no locking. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perf/abi.h"
#include "report/aggregate.h"
#include "unwind/elfcache.h"
#include "unwind/inlines.h"
#include "unwind/symbols.h"

#define MAX_FRAMES 1024

struct report_set {
	struct report **reports;
	size_t nr;
	enum report_inline inlines;
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

static void convert(const struct unwind_frame *f, struct report_frame *out)
{
	/* perf stores a DWARF-unwound caller at its return address - 1, and shows that address
	 * when no symbol holds it. */
	uint64_t adj = f->caller ? 1 : 0;

	*out = (struct report_frame){
		.ip = f->ip - adj,
		.map_ip = f->addr - adj,
		.sym_start = f->sym ? f->sym->start : 0,
		.dso = short_dso(f),
		.dso_seq = f->dso ? dso__seq(f->dso) : 0,
		.sym = unwind_frame__name(f),
		.kernel = f->kernel,
	};
}

/* addr2line's records for a frame perf would expand (a user-space symbol in an ELF file). */
static int frame_inlines(const struct unwind_frame *f, uint64_t addr,
			 const struct inline_frame **ret)
{
	struct elf_file *ef;

	if (!f->sym || !f->dso || f->kernel || dso__kind(f->dso) != DSO_FILE)
		return 0;
	ef = dso__elf(f->dso);
	return ef ? elf_file__inlines(ef, addr, f->sym, ret) : 0;
}

size_t report_frames__from_unwind(const struct report_session_sample *s, struct report_frame *out,
				  size_t max)
{
	return report_frames__from_unwind_inline(s, REPORT_INLINE_NONE, out, max, NULL);
}

/* Appends frame f's report frames (its inline records, or itself) to out[*n..max). */
static void emit(const struct unwind_frame *f, const struct inline_frame *in, int nr,
		 struct report_frame *out, size_t *n, size_t max)
{
	struct report_frame base;

	if (*n >= max)
		return;
	convert(f, &base);
	if (nr <= 0) {	/* no DWARF there (or no memory for it): the frame as it is */
		out[(*n)++] = base;
		return;
	}
	/* perf's append_inlines(): the records replace the frame, innermost first; a record
	 * named like the symbol is the symbol itself. perf's fake inline symbol starts where
	 * the symbol does: rows of one inlined name stay apart per function it is inlined in. */
	for (int i = 0; i < nr && *n < max; i++) {
		struct report_frame *o = &out[(*n)++];

		*o = base;
		if (in[i].inlined)
			o->sym = in[i].name;
		o->inlined = in[i].inlined;
		o->expanded = true;
	}
}

size_t report_frames__from_unwind_inline(const struct report_session_sample *s,
					 enum report_inline inlines, struct report_frame *out,
					 size_t max, struct report_frame *ret_self)
{
	size_t n = 0;

	if (ret_self && s->nr_frames)
		convert(&s->frames[0], ret_self);
	if (inlines == REPORT_INLINE_NONE || s->filtered) {
		for (size_t k = 0; k < s->nr_frames; k++)
			emit(&s->frames[k], NULL, 0, out, &n, max);
		return n;
	}
	if (inlines == REPORT_INLINE_LEAF_FIRST) {
		for (size_t k = 0; k < s->nr_frames; k++) {
			const struct unwind_frame *f = &s->frames[k];
			const struct inline_frame *in = NULL;
			int nr = frame_inlines(f, f->addr - (f->caller ? 1 : 0), &in);

			emit(f, in, nr, out, &n, max);
		}
		return n;
	}
	/* perf resolves a caller-ordered chain from the root, and addr2line's answers depend
	 * on the order it is asked in: ask root first, keep copies (an answer is valid only
	 * until the next question), then lay the frames out leaf first. */
	{
		struct inline_frame copy[MAX_FRAMES];
		int nrs[MAX_FRAMES];
		size_t used = 0, nf = s->nr_frames < MAX_FRAMES ? s->nr_frames : MAX_FRAMES;
		size_t first[MAX_FRAMES];

		for (size_t k = nf; k-- > 0;) {
			const struct unwind_frame *f = &s->frames[k];
			const struct inline_frame *in = NULL;
			int nr = frame_inlines(f, f->addr - (f->caller ? 1 : 0), &in);

			if (nr > 0 && used + (size_t)nr > MAX_FRAMES)
				nr = 0;
			nrs[k] = nr;
			first[k] = used;
			if (nr > 0) {
				memcpy(copy + used, in, (size_t)nr * sizeof(*in));
				used += (size_t)nr;
			}
		}
		for (size_t k = 0; k < nf; k++)
			emit(&s->frames[k], copy + first[k], nrs[k], out, &n, max);
	}
	return n;
}

static int add_sample(void *ctx, const struct report_session_sample *s)
{
	struct report_set *rs = ctx;
	struct report_frame self;
	struct report_sample sample = {
		.comm = s->comm,
		.cgroup = s->cgroup,
		.filtered = s->filtered,
		.pid = (int32_t)s->raw->pid,
		.tid = (int32_t)s->raw->tid,
		.cpu = s->cpu,
		.period = s->period,
		.time = s->raw->time,
		.frames = rs->frames,
	};

	if (s->attr >= rs->nr)
		return 0;
	sample.nr_frames = report_frames__from_unwind_inline(s, rs->inlines, rs->frames, MAX_FRAMES,
							     &self);
	if (rs->inlines != REPORT_INLINE_NONE)
		sample.self = &self;
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
	{
		const struct report_opts *o = opts ? opts : &def;
		bool caller = o->order == REPORT_ORDER_CALLER ||
			      (o->order == REPORT_ORDER_DEFAULT && !o->no_children);

		rs->inlines = o->no_inline ? REPORT_INLINE_NONE :
			      caller ? REPORT_INLINE_ROOT_FIRST : REPORT_INLINE_LEAF_FIRST;
	}
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
