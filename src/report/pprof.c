/* The pprof sink: interns strings, mappings, functions and locations as samples arrive and
 * merges identical samples, so memory grows with distinct stacks, not samples; at write time it
 * builds protobuf-c's structs of profile.proto (compiled from src/report/profile.proto by
 * protoc-c), packs them and gzips the bytes with zlib. A Location is one address of one mapping;
 * its lines are the inlined functions at that address, innermost first, then the function that
 * holds it, as pprof models inlining. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/cgroupfs.h"
#include "report/pprof.h"
#include "report/profile.pb-c.h"
#include "unwind/elfcache.h"
#include "unwind/inlines.h"
#include "unwind/symbols.h"

/* ---- an index of objects by hash: slots hold (hash, index + 1) ---- */

struct slot {
	uint32_t hash, idx1;
};

struct itab {
	struct slot *slots;
	size_t cap, nr;
};

typedef bool (*eq_fn)(const struct pprof_writer *w, uint32_t idx, const void *key);

static uint32_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdULL;
	return (uint32_t)(h ^ (h >> 32));
}

static int itab_grow(struct itab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct slot *n;

	if (t->nr + 1 <= t->cap / 2)
		return 0;
	n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i].idx1)
			continue;
		for (j = t->slots[i].hash & (cap - 1); n[j].idx1; j = (j + 1) & (cap - 1))
			;
		n[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = n;
	t->cap = cap;
	return 0;
}

/* The slot of key, or the empty slot where it goes (t must have room). */
static struct slot *itab_find(const struct pprof_writer *w, const struct itab *t, uint32_t h,
			      eq_fn eq, const void *key)
{
	for (size_t j = h & (t->cap - 1);; j = (j + 1) & (t->cap - 1)) {
		struct slot *s = &t->slots[j];

		if (!s->idx1 || (s->hash == h && eq(w, s->idx1 - 1, key)))
			return s;
	}
}

/* ---- the gathered profile ---- */

struct pmap {
	const struct dso *dso;
	uint64_t start, end, pgoff;
};

struct pfunc {
	const void *key;        /* the symbol; NULL for a function inlined somewhere */
	int64_t name, system_name, filename;
};

struct pline {
	uint64_t function;
	int64_t line;           /* 0: unknown */
};

struct ploc {
	uint64_t mapping, address;
	uint32_t line_off, nr_lines; /* in w->lines, inlined functions first, the symbol last */
};

struct psample {
	uint32_t loc_off, nr_locs, attr;
	int32_t pid, tid;
	int64_t comm, unit;     /* unit: 0 when the samples carry no cgroup */
	uint64_t count, period;
};

#define MAX_EXTRA_LABELS 8

struct pprof_writer {
	struct report_session *session;
	size_t nr_attrs;
	char *time_type;       /* pprof_writer__set_time_view: the event time_attr's name */
	size_t time_attr;
	uint64_t first_time, last_time;
	int64_t time_nanos, duration_nanos; /* pprof_writer__set_time; duration -1: unset */
	int64_t extra_key[MAX_EXTRA_LABELS], extra_str[MAX_EXTRA_LABELS];
	size_t nr_extra;

	char **strs;
	size_t nr_strs, cap_strs;
	struct itab str_idx;

	struct pmap *maps;
	size_t nr_maps, cap_maps;
	struct itab map_idx;

	struct pfunc *funcs;
	size_t nr_funcs, cap_funcs;
	struct itab func_idx;

	struct ploc *locs;
	size_t nr_locs, cap_locs;
	struct itab loc_idx;
	struct pline *lines;    /* every location's lines */
	size_t nr_lines, cap_lines;
	bool no_inline;
	bool no_demangle;

	struct psample *samples;
	size_t nr_samples, cap_samples;
	struct itab sample_idx;
	uint64_t *stack_ids;    /* location ids of every sample */
	size_t nr_stack_ids, cap_stack_ids;

	uint64_t *stack;        /* the sample being added */
	size_t cap_stack;
};

static int grow(void *arr, size_t *cap, size_t need, size_t sz)
{
	void **p = arr;
	size_t n = *cap ? *cap : 64;
	void *m;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	m = realloc(*p, n * sz);
	if (!m)
		return -ENOMEM;
	*p = m;
	*cap = n;
	return 0;
}

static uint32_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return mix(h, 0);
}

static bool str_eq(const struct pprof_writer *w, uint32_t idx, const void *key)
{
	return !strcmp(w->strs[idx], key);
}

/* The string table index of s, added when new. Returns >= 0 or -ENOMEM. */
static int64_t intern(struct pprof_writer *w, const char *s)
{
	uint32_t h = hash_str(s);
	struct slot *sl;

	if (itab_grow(&w->str_idx) < 0)
		return -ENOMEM;
	sl = itab_find(w, &w->str_idx, h, str_eq, s);
	if (sl->idx1)
		return sl->idx1 - 1;
	if (grow(&w->strs, &w->cap_strs, w->nr_strs + 1, sizeof(char *)) < 0)
		return -ENOMEM;
	w->strs[w->nr_strs] = strdup(s);
	if (!w->strs[w->nr_strs])
		return -ENOMEM;
	*sl = (struct slot){ h, (uint32_t)++w->nr_strs };
	w->str_idx.nr++;
	return (int64_t)w->nr_strs - 1;
}

static bool map_eq(const struct pprof_writer *w, uint32_t idx, const void *key)
{
	const struct pmap *a = &w->maps[idx], *b = key;

	return a->dso == b->dso && a->start == b->start && a->end == b->end && a->pgoff == b->pgoff;
}

/* Mapping id (>= 1) of the map holding ip in maps, 0 when none does; -ENOMEM. */
static int64_t mapping_id(struct pprof_writer *w, const struct map_snapshot *maps, uint64_t ip)
{
	const struct map *m = maps ? map_snapshot__find(maps, ip) : NULL;
	struct pmap key;
	struct slot *sl;
	uint32_t h;

	if (!m)
		return 0;
	key = (struct pmap){ m->dso, m->start, m->end, m->pgoff };
	h = mix(mix(mix((uintptr_t)m->dso, m->start), m->end), m->pgoff);
	if (itab_grow(&w->map_idx) < 0)
		return -ENOMEM;
	sl = itab_find(w, &w->map_idx, h, map_eq, &key);
	if (sl->idx1)
		return sl->idx1;
	if (grow(&w->maps, &w->cap_maps, w->nr_maps + 1, sizeof(key)) < 0)
		return -ENOMEM;
	w->maps[w->nr_maps] = key;
	*sl = (struct slot){ h, (uint32_t)++w->nr_maps };
	w->map_idx.nr++;
	return (int64_t)w->nr_maps;
}

static bool func_eq(const struct pprof_writer *w, uint32_t idx, const void *key)
{
	const struct pfunc *a = &w->funcs[idx], *b = key;

	return a->key == b->key && (a->key || (a->name == b->name && a->filename == b->filename));
}

/* Function id (>= 1) of fn (found by its symbol, or by name and file when inlined); -ENOMEM. */
static int64_t function_get(struct pprof_writer *w, const struct pfunc *fn)
{
	uint32_t h = fn->key ? mix(0, (uintptr_t)fn->key) : mix(mix(1, (uint64_t)fn->name),
								  (uint64_t)fn->filename);
	struct slot *sl;

	if (itab_grow(&w->func_idx) < 0)
		return -ENOMEM;
	sl = itab_find(w, &w->func_idx, h, func_eq, fn);
	if (sl->idx1)
		return sl->idx1;
	if (grow(&w->funcs, &w->cap_funcs, w->nr_funcs + 1, sizeof(*fn)) < 0)
		return -ENOMEM;
	w->funcs[w->nr_funcs] = *fn;
	*sl = (struct slot){ h, (uint32_t)++w->nr_funcs };
	w->func_idx.nr++;
	return (int64_t)w->nr_funcs;
}

/* Function id (>= 1) of frame f's symbol, 0 when it has none; -ENOMEM. */
static int64_t function_id(struct pprof_writer *w, const struct unwind_frame *f)
{
	const char *pretty = unwind_frame__name(f);
	struct pfunc fn = { .key = f->sym };
	size_t before = w->nr_funcs;
	int64_t id;

	if (!f->sym || !pretty)
		return 0;
	/* names are interned only for a new function: look it up by its symbol first */
	fn.name = -1;
	id = function_get(w, &fn);
	if (id > 0 && w->nr_funcs > before) {
		struct pfunc *nf = &w->funcs[id - 1];

		nf->system_name = intern(w, f->sym->name ? f->sym->name : pretty);
		nf->name = w->no_demangle ? nf->system_name : intern(w, pretty);
		nf->filename = 0;
		if (nf->name < 0 || nf->system_name < 0)
			return -ENOMEM;
	}
	return id;
}

/* Function id of an inlined record (a function inlined at the address). */
static int64_t inlined_function_id(struct pprof_writer *w, const struct inline_frame *in)
{
	struct pfunc fn = { .key = NULL };

	fn.name = intern(w, w->no_demangle ? in->raw : in->name);
	fn.filename = in->file ? intern(w, in->file) : 0;
	if (fn.name < 0 || fn.filename < 0)
		return -ENOMEM;
	fn.system_name = fn.name;
	return function_get(w, &fn);
}

struct loc_key {
	uint64_t mapping, address;
	const struct pline *lines;
	uint32_t nr_lines;
};

static bool loc_eq(const struct pprof_writer *w, uint32_t idx, const void *key)
{
	const struct ploc *a = &w->locs[idx];
	const struct loc_key *b = key;

	return a->mapping == b->mapping && a->address == b->address &&
	       a->nr_lines == b->nr_lines &&
	       /* an unsymbolized location has no lines, and w->lines may still be NULL */
	       (!b->nr_lines ||
		!memcmp(w->lines + a->line_off, b->lines, b->nr_lines * sizeof(struct pline)));
}

#define MAX_LINES 32

/* The lines of frame f: the functions inlined at its address innermost first (pprof's model
 * of inlining: one Location, several Lines), then its symbol; just the symbol with --no-inline
 * or without DWARF. The last line is always the function the code belongs to, named by its
 * symbol as the self table names it (perf's "NAME (inlined)" for an outermost DWARF name that
 * differs from the ELF symbol, glibc's __GI_ aliases, is the table's view, not pprof's), so
 * that `go tool pprof -noinlines` sees preport's symbols. Returns the number of lines or
 * -ENOMEM. */
static int frame_lines(struct pprof_writer *w, const struct unwind_frame *f,
		       struct pline *lines)
{
	const struct inline_frame *in = NULL;
	uint64_t addr = f->addr - (f->caller ? 1 : 0);
	int nr = w->no_inline ? 0 : unwind_frame__inlines(f, addr, &in), n = 0;
	int64_t fid;

	for (int k = 0; k < nr; k++) {
		bool outermost = k == nr - 1 && f->sym;

		if (k < nr - 1 && n >= MAX_LINES - 1)
			continue;	/* a deeper chain keeps its innermost and outermost lines */

		fid = in[k].inlined && !outermost ? inlined_function_id(w, &in[k]) :
						    function_id(w, f);
		if (fid < 0)
			return -ENOMEM;
		if (fid)
			lines[n++] = (struct pline){ (uint64_t)fid, in[k].line };
	}
	if (nr > 0)
		return n;
	fid = function_id(w, f);
	if (fid < 0)
		return -ENOMEM;
	if (fid)
		lines[n++] = (struct pline){ (uint64_t)fid, 0 };
	return n;
}

/* Location id (>= 1) of frame f of s; -ENOMEM. */
static int64_t location_id(struct pprof_writer *w, const struct report_session_sample *s,
			   const struct unwind_frame *f)
{
	struct pline lines[MAX_LINES];
	struct loc_key key = { .lines = lines };
	struct ploc loc;
	struct slot *sl;
	int64_t mid;
	int nl;
	uint32_t h;

	/* perf's convention: a caller's frame is its return address - 1 */
	key.address = f->ip - (f->caller ? 1 : 0);
	mid = mapping_id(w, s->maps, f->ip);
	if (mid < 0)
		return mid;
	key.mapping = (uint64_t)mid;
	nl = frame_lines(w, f, lines);
	if (nl < 0)
		return nl;
	key.nr_lines = (uint32_t)nl;
	h = mix(mix(key.mapping, key.address), key.nr_lines ? lines[0].function : 0);
	if (itab_grow(&w->loc_idx) < 0)
		return -ENOMEM;
	sl = itab_find(w, &w->loc_idx, h, loc_eq, &key);
	if (sl->idx1)
		return sl->idx1;
	if (grow(&w->locs, &w->cap_locs, w->nr_locs + 1, sizeof(loc)) < 0 ||
	    grow(&w->lines, &w->cap_lines, w->nr_lines + key.nr_lines, sizeof(struct pline)) < 0)
		return -ENOMEM;
	loc = (struct ploc){ key.mapping, key.address, (uint32_t)w->nr_lines, key.nr_lines };
	if (key.nr_lines)
		memcpy(w->lines + w->nr_lines, lines, key.nr_lines * sizeof(struct pline));
	w->nr_lines += key.nr_lines;
	w->locs[w->nr_locs] = loc;
	*sl = (struct slot){ h, (uint32_t)++w->nr_locs };
	w->loc_idx.nr++;
	return (int64_t)w->nr_locs;
}

static bool sample_eq(const struct pprof_writer *w, uint32_t idx, const void *key)
{
	const struct psample *a = &w->samples[idx], *b = key;

	return a->attr == b->attr && a->pid == b->pid && a->tid == b->tid && a->comm == b->comm &&
	       a->unit == b->unit && a->nr_locs == b->nr_locs &&
	       !memcmp(w->stack_ids + a->loc_off, w->stack, b->nr_locs * sizeof(uint64_t));
}

static int add_merged(struct pprof_writer *w, struct psample *key)
{
	uint32_t h = mix(mix(mix(mix(key->attr, (uint32_t)key->pid), (uint32_t)key->tid), key->comm),
			 (uint64_t)key->unit);
	struct slot *sl;

	for (size_t k = 0; k < key->nr_locs; k++)
		h = mix(h, w->stack[k]);
	if (itab_grow(&w->sample_idx) < 0)
		return -ENOMEM;
	sl = itab_find(w, &w->sample_idx, h, sample_eq, key);
	if (sl->idx1) {
		w->samples[sl->idx1 - 1].count += key->count;
		w->samples[sl->idx1 - 1].period += key->period;
		return 0;
	}
	if (grow(&w->samples, &w->cap_samples, w->nr_samples + 1, sizeof(*key)) < 0 ||
	    grow(&w->stack_ids, &w->cap_stack_ids, w->nr_stack_ids + key->nr_locs,
		 sizeof(uint64_t)) < 0)
		return -ENOMEM;
	key->loc_off = (uint32_t)w->nr_stack_ids;
	memcpy(w->stack_ids + w->nr_stack_ids, w->stack, key->nr_locs * sizeof(uint64_t));
	w->nr_stack_ids += key->nr_locs;
	w->samples[w->nr_samples] = *key;
	*sl = (struct slot){ h, (uint32_t)++w->nr_samples };
	w->sample_idx.nr++;
	return 0;
}

static int on_sample(void *ctx, const struct report_session_sample *s)
{
	struct pprof_writer *w = ctx;
	struct psample key = { .attr = (uint32_t)s->attr, .pid = (int32_t)s->raw->pid,
			       .tid = (int32_t)s->raw->tid, .count = 1, .period = s->period };

	if (s->filtered || s->attr >= w->nr_attrs)
		return 0;
	if (!w->first_time || s->raw->time < w->first_time)
		w->first_time = s->raw->time;
	if (s->raw->time > w->last_time)
		w->last_time = s->raw->time;
	key.comm = intern(w, s->comm);
	if (s->cgroup) {
		char buf[256];
		const char *unit = cgroupfs__unit(s->cgroup, buf, sizeof(buf));

		/* as preport's unit key: the cgroup's path when no systemd unit made it */
		key.unit = intern(w, unit ? unit : s->cgroup);
		if (key.unit < 0)
			return -ENOMEM;
	}
	if (key.comm < 0 || grow(&w->stack, &w->cap_stack, s->nr_frames, sizeof(uint64_t)) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_frames; i++) {
		int64_t id = location_id(w, s, &s->frames[i]);

		if (id < 0)
			return (int)id;
		w->stack[key.nr_locs++] = (uint64_t)id;
	}
	return add_merged(w, &key);
}

struct pprof_writer *pprof_writer__new(struct report_session *s)
{
	struct pprof_writer *w = calloc(1, sizeof(*w));
	struct report_sink sink = { .sample = on_sample, .ctx = w };

	if (!w)
		return NULL;
	w->session = s;
	w->duration_nanos = -1;
	w->nr_attrs = report_session__stats(s)->nr_attrs;
	if (intern(w, "") != 0 || report_session__add_sink(s, &sink) < 0) {
		pprof_writer__free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

void pprof_writer__set_frames(struct pprof_writer *w, bool inline_frames, bool demangle)
{
	w->no_inline = !inline_frames;
	w->no_demangle = !demangle;
}

int pprof_writer__add_label(struct pprof_writer *w, const char *key, const char *value)
{
	int64_t k, v;

	if (w->nr_extra == MAX_EXTRA_LABELS)
		return -E2BIG;
	k = intern(w, key);
	v = intern(w, value);
	if (k < 0 || v < 0)
		return -ENOMEM;
	w->extra_key[w->nr_extra] = k;
	w->extra_str[w->nr_extra++] = v;
	return 0;
}

void pprof_writer__set_time(struct pprof_writer *w, int64_t time_nanos, int64_t duration_nanos)
{
	w->time_nanos = time_nanos;
	w->duration_nanos = duration_nanos;
}

size_t pprof_writer__nr_samples(const struct pprof_writer *w)
{
	return w->nr_samples;
}

/* ---- building and writing profile.proto ---- */

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* Everything the packed Profile points to, freed after packing. */
struct build {
	Profile p;
	ValueType *vt, **vtp, period_type;
	Sample *smp, **smpp;
	int64_t *values;
	Label *labels, **labelp;
	Mapping *maps, **mapp;
	Location *locs, **locp;
	Line *lines, **linep;
	Function *funcs, **funcp;
};

static void build_free(struct build *b)
{
	free(b->vt);
	free(b->vtp);
	free(b->smp);
	free(b->smpp);
	free(b->values);
	free(b->labels);
	free(b->labelp);
	free(b->maps);
	free(b->mapp);
	free(b->locs);
	free(b->locp);
	free(b->lines);
	free(b->linep);
	free(b->funcs);
	free(b->funcp);
}

static bool is_time_event(const struct perf_reader_attr *a)
{
	return a && a->attr.type == PERF_TYPE_SOFTWARE &&
	       (a->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		a->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

/* sample_type: samples/count, then each event's period. */
static int build_types(struct pprof_writer *w, struct build *b)
{
	struct perf_reader *r = report_session__reader(w->session);
	size_t nv = 1 + w->nr_attrs;

	b->vt = calloc(nv, sizeof(*b->vt));
	b->vtp = calloc(nv, sizeof(*b->vtp));
	if (!b->vt || !b->vtp)
		return -ENOMEM;
	for (size_t i = 0; i < nv; i++) {
		const struct perf_reader_attr *a = i ? perf_reader__attr(r, i - 1) : NULL;
		const char *type = i ? report_session__event_name(w->session, i - 1) : "samples";
		bool t = is_time_event(a);

		perftools__profiles__value_type__init(&b->vt[i]);
		if (t && w->nr_attrs == 1)
			type = "cpu";
		if (w->time_type && i == w->time_attr + 1) {
			type = w->time_type;
			t = true;
		}
		b->vt[i].type = intern(w, type);
		b->vt[i].unit = intern(w, t ? "nanoseconds" : "count");
		if (b->vt[i].type < 0 || b->vt[i].unit < 0)
			return -ENOMEM;
		b->vtp[i] = &b->vt[i];
	}
	b->p.n_sample_type = nv;
	b->p.sample_type = b->vtp;
	/* the period of the first event: perf's -c N, or 0 when sampled by frequency */
	b->period_type = b->vt[1];
	b->p.period_type = &b->period_type;
	if (w->nr_attrs && perf_reader__attr(r, 0) && !perf_reader__attr(r, 0)->attr.freq)
		b->p.period = (int64_t)perf_reader__attr(r, 0)->attr.sample_period;
	b->p.default_sample_type = b->vt[w->time_type ? w->time_attr + 1 : 1].type;
	return 0;
}

int pprof_writer__set_time_view(struct pprof_writer *w, size_t attr, const char *type)
{
	char *t = strdup(type);

	if (!t)
		return -ENOMEM;
	free(w->time_type);
	w->time_type = t;
	w->time_attr = attr < w->nr_attrs ? attr : 0;
	return 0;
}

static int build_samples(struct pprof_writer *w, struct build *b)
{
	size_t nv = 1 + w->nr_attrs, n = w->nr_samples, nl = 4 + w->nr_extra;
	int64_t kpid = intern(w, "pid"), ktid = intern(w, "tid"), kcomm = intern(w, "comm");
	int64_t kunit = intern(w, "unit");

	if (kpid < 0 || ktid < 0 || kcomm < 0 || kunit < 0)
		return -ENOMEM;
	b->smp = calloc(n ? n : 1, sizeof(*b->smp));
	b->smpp = calloc(n ? n : 1, sizeof(*b->smpp));
	b->values = calloc(n ? n * nv : 1, sizeof(*b->values));
	b->labels = calloc(n ? n * nl : 1, sizeof(*b->labels));
	b->labelp = calloc(n ? n * nl : 1, sizeof(*b->labelp));
	if (!b->smp || !b->smpp || !b->values || !b->labels || !b->labelp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct psample *ps = &w->samples[i];
		Sample *s = &b->smp[i];
		Label *l = &b->labels[nl * i];
		size_t k = 3;

		perftools__profiles__sample__init(s);
		s->n_location_id = ps->nr_locs;
		s->location_id = w->stack_ids + ps->loc_off;
		s->n_value = nv;
		s->value = b->values + i * nv;
		s->value[0] = (int64_t)ps->count;
		s->value[1 + ps->attr] = (int64_t)ps->period;
		for (size_t j = 0; j < nl; j++) {
			perftools__profiles__label__init(&l[j]);
			b->labelp[nl * i + j] = &l[j];
		}
		l[0].key = kpid;
		l[0].num = ps->pid;
		l[1].key = ktid;
		l[1].num = ps->tid;
		l[2].key = kcomm;
		l[2].str = ps->comm;
		if (ps->unit) {
			l[k].key = kunit;
			l[k++].str = ps->unit;
		}
		for (size_t j = 0; j < w->nr_extra; j++) {
			l[k].key = w->extra_key[j];
			l[k++].str = w->extra_str[j];
		}
		s->n_label = k;
		s->label = &b->labelp[nl * i];
		b->smpp[i] = s;
	}
	b->p.n_sample = n;
	b->p.sample = b->smpp;
	return 0;
}

static int64_t build_id_string(struct pprof_writer *w, const struct dso *d)
{
	const uint8_t *id;
	size_t len = dso__build_id(d, &id);
	char hex[41];

	/* not in the recording: the file's own note (checked against the recording's id when
	 * there was one, so it is the file that was mapped) */
	if (!len && dso__kind(d) == DSO_FILE && dso__elf((struct dso *)d))
		len = elf_file__build_id(dso__elf((struct dso *)d), &id);
	if (!len)
		return 0;
	for (size_t i = 0; i < len && i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return intern(w, hex);
}

/* pprof takes mapping[0] for the main binary: the first file mapped that is not a shared
 * library (by name), else the first mapping. */
static size_t main_mapping(const struct pprof_writer *w)
{
	for (size_t i = 0; i < w->nr_maps; i++) {
		const char *name = dso__name(w->maps[i].dso);

		if (dso__kind(w->maps[i].dso) == DSO_FILE && name && !strstr(name, ".so"))
			return i;
	}
	return 0;
}

/* Mapping ids stay as the locations hold them; only the order in the profile changes. */
static int build_mappings(struct pprof_writer *w, struct build *b)
{
	size_t n = w->nr_maps, first = main_mapping(w);

	b->maps = calloc(n ? n : 1, sizeof(*b->maps));
	b->mapp = calloc(n ? n : 1, sizeof(*b->mapp));
	if (!b->maps || !b->mapp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct pmap *pm = &w->maps[i];
		Mapping *m = &b->maps[i];
		size_t pos = i == first ? 0 : i < first ? i + 1 : i;

		perftools__profiles__mapping__init(m);
		m->id = i + 1;
		m->memory_start = pm->start;
		m->memory_limit = pm->end;
		m->file_offset = pm->pgoff;
		m->filename = intern(w, dso__name(pm->dso) ? dso__name(pm->dso) : "");
		m->build_id = build_id_string(w, pm->dso);
		if (m->filename < 0 || m->build_id < 0)
			return -ENOMEM;
		m->has_functions = true;
		m->has_inline_frames = !w->no_inline;
		b->mapp[pos] = m;
	}
	b->p.n_mapping = n;
	b->p.mapping = b->mapp;
	return 0;
}

static int build_locations(struct pprof_writer *w, struct build *b)
{
	size_t n = w->nr_locs;

	b->locs = calloc(n ? n : 1, sizeof(*b->locs));
	b->locp = calloc(n ? n : 1, sizeof(*b->locp));
	b->lines = calloc(w->nr_lines ? w->nr_lines : 1, sizeof(*b->lines));
	b->linep = calloc(w->nr_lines ? w->nr_lines : 1, sizeof(*b->linep));
	if (!b->locs || !b->locp || !b->lines || !b->linep)
		return -ENOMEM;
	for (size_t i = 0; i < w->nr_lines; i++) {
		perftools__profiles__line__init(&b->lines[i]);
		b->lines[i].function_id = w->lines[i].function;
		b->lines[i].line = w->lines[i].line;
		b->linep[i] = &b->lines[i];
	}
	for (size_t i = 0; i < n; i++) {
		const struct ploc *pl = &w->locs[i];
		Location *l = &b->locs[i];

		perftools__profiles__location__init(l);
		l->id = i + 1;
		l->mapping_id = pl->mapping;
		l->address = pl->address;
		l->n_line = pl->nr_lines;
		l->line = b->linep + pl->line_off;
		b->locp[i] = l;
	}
	b->p.n_location = n;
	b->p.location = b->locp;
	return 0;
}

static int build_functions(struct pprof_writer *w, struct build *b)
{
	size_t n = w->nr_funcs;

	b->funcs = calloc(n ? n : 1, sizeof(*b->funcs));
	b->funcp = calloc(n ? n : 1, sizeof(*b->funcp));
	if (!b->funcs || !b->funcp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Function *f = &b->funcs[i];

		perftools__profiles__function__init(f);
		f->id = i + 1;
		f->name = w->funcs[i].name;
		f->system_name = w->funcs[i].system_name;
		f->filename = w->funcs[i].filename;
		b->funcp[i] = f;
	}
	b->p.n_function = n;
	b->p.function = b->funcp;
	return 0;
}

static int build(struct pprof_writer *w, struct build *b)
{
	int e;

	perftools__profiles__profile__init(&b->p);
	if ((e = build_types(w, b)) < 0 || (e = build_samples(w, b)) < 0 ||
	    (e = build_mappings(w, b)) < 0 || (e = build_locations(w, b)) < 0 ||
	    (e = build_functions(w, b)) < 0)
		return e;
	b->p.duration_nanos = (int64_t)(w->last_time - w->first_time);
	b->p.time_nanos = w->time_nanos;
	if (w->duration_nanos >= 0)
		b->p.duration_nanos = w->duration_nanos;
	/* last: every string interned above is in the table */
	b->p.n_string_table = w->nr_strs;
	b->p.string_table = w->strs;
	return 0;
}

static int write_gz(const char *path, const uint8_t *buf, size_t len)
{
	gzFile gz = gzopen(path, "wbe");
	int e = 0;

	if (!gz)
		return errno ? -errno : -ENOMEM;
	while (len && !e) {
		unsigned int chunk = len > (1u << 30) ? 1u << 30 : (unsigned int)len;
		int n = gzwrite(gz, buf, chunk);

		if (n <= 0)
			e = errno ? -errno : -EIO;
		buf += chunk;
		len -= chunk;
	}
	if (gzclose(gz) != Z_OK && !e)
		e = errno ? -errno : -EIO;
	return e;
}

int pprof_writer__write(struct pprof_writer *w, const char *path)
{
	struct build b = { 0 };
	uint8_t *buf = NULL;
	size_t len;
	int e = build(w, &b);

	if (!e) {
		len = perftools__profiles__profile__get_packed_size(&b.p);
		buf = malloc(len ? len : 1);
		if (!buf)
			e = -ENOMEM;
	}
	if (!e) {
		perftools__profiles__profile__pack(&b.p, buf);
		errno = 0;
		e = write_gz(path, buf, len);
	}
	free(buf);
	build_free(&b);
	return e;
}

void pprof_writer__free(struct pprof_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nr_strs; i++)
		free(w->strs[i]);
	free(w->strs);
	free(w->time_type);
	free(w->str_idx.slots);
	free(w->maps);
	free(w->map_idx.slots);
	free(w->funcs);
	free(w->func_idx.slots);
	free(w->locs);
	free(w->loc_idx.slots);
	free(w->lines);
	free(w->samples);
	free(w->sample_idx.slots);
	free(w->stack_ids);
	free(w->stack);
	free(w);
}
