/* The report session: one time-ordered pass over a perf.data. Records are applied to the machine
 * on the calling thread; samples are gathered in batches, each sample holding its record in the
 * reader's decompressed block (no copy) and a reference to its process's map snapshot at its
 * time. Two batches alternate: while the workers unwind one, the calling thread reads the next;
 * then it helps finish the older one and hands its samples to the sinks, in order. Invariant: a
 * batch is delivered whole before any sample of a later batch, so sinks see time order. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cgroupfs.h"
#include "lib/cleanup.h"
#include "lib/workqueue.h"
#include "perf/abi.h"
#include "report/session.h"
#include "unwind/symbols.h"

#define BATCH 1024
#define CHUNK 8         /* samples claimed at a time */
#define NAME_LEN 96

struct item {
	struct perf_sample s;
	struct perf_reader_ref *ref; /* keeps the record (s points into it) */
	struct map_snapshot *snap;
	const char *comm;
	size_t attr;
	bool filtered;          /* counted, not unwound */
	const char *cgroup;
	/* a side-band record for the filter (held by ref), not a sample */
	const struct perf_event_header *side;
	uint64_t side_time, side_offset;
	int side_attr;
	int nr_frames;
	struct unwind_frame *frames;
};

struct batch {
	struct report_session *s;
	struct item *items;
	struct unwind_frame *frames;    /* BATCH * max_stack */
	size_t n;
	atomic_size_t next;             /* next item to claim */
	/* worker jobs not yet finished; the batch is done when they and the caller are */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int pending;
};

struct report_session {
	struct report_session_opts opts;
	struct perf_reader *r;
	struct machine *m;
	struct wq *wq;
	unsigned int nr_threads;
	bool ran;

	struct report_sink *sinks;
	size_t nr_sinks;

	/* cgroup ids to paths, from PERF_RECORD_CGROUP */
	struct cgroup_name { uint64_t id; char *path; } *cgroups;
	size_t nr_cgroups, cap_cgroups;
	struct report_filter filter;
	bool has_filter;

	struct batch batches[2];
	struct batch *fill, *inflight;  /* being read; being unwound (or NULL) */

	/* unwinders: one per job (at most nr_threads at once), back to the pool after it */
	pthread_mutex_t pool_lock;
	struct unwinder **pool;
	size_t nr_pool, nr_unwinders;
	struct unwinder **all;

	struct report_session_stats st;
	uint64_t *attr_samples, *attr_lost, *attr_bad;
	int *attr_bad_err;
	char (*names)[NAME_LEN];
	char err[512];                  /* report_session__error() */
};

static void seterr(struct report_session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
}

static bool in_list(const int32_t *l, size_t n, int32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] == v)
			return true;
	return false;
}

static bool comm_in_list(const char *const *l, size_t n, const char *v)
{
	for (size_t i = 0; i < n; i++)
		if (v && !strcmp(l[i], v))
			return true;
	return false;
}

static struct unwinder *pool_get(struct report_session *s)
{
	struct unwinder *u = NULL;

	pthread_mutex_lock(&s->pool_lock);
	if (s->nr_pool) {
		u = s->pool[--s->nr_pool];
	} else if (s->nr_unwinders < s->nr_threads) {
		u = unwinder__new();
		if (u)
			s->all[s->nr_unwinders++] = u;
	}
	pthread_mutex_unlock(&s->pool_lock);
	return u;
}

static void pool_put(struct report_session *s, struct unwinder *u)
{
	if (!u)
		return;
	pthread_mutex_lock(&s->pool_lock);
	s->pool[s->nr_pool++] = u;
	pthread_mutex_unlock(&s->pool_lock);
}

static void unwind_item(struct report_session *s, struct unwinder *u, struct item *it)
{
	int n;

	if (it->side)
		return;
	if (it->filtered) {
		it->nr_frames = 1;
		it->frames[0] = (struct unwind_frame){ .ip = it->s.ip };
		return;
	}
	n = u ? unwinder__unwind(u, it->snap, &it->s, it->frames, s->opts.max_stack) : -ENOMEM;
	if (n <= 0) {
		it->nr_frames = 1;
		it->frames[0] = (struct unwind_frame){ .ip = it->s.ip };
		unwind_frame__resolve(it->snap, it->s.ip, true, &it->frames[0]);
	} else {
		it->nr_frames = n;
	}
}

/* Claim and unwind chunks of b until none is left. */
static void help(struct batch *b)
{
	struct report_session *s = b->s;
	struct unwinder *u = NULL;
	size_t i;

	while ((i = atomic_fetch_add_explicit(&b->next, CHUNK, memory_order_relaxed)) < b->n) {
		size_t hi = i + CHUNK < b->n ? i + CHUNK : b->n;

		if (!u)
			u = pool_get(s);
		for (; i < hi; i++)
			unwind_item(s, u, &b->items[i]);
	}
	pool_put(s, u);
}

/* A worker's share of a batch; the mutex hands its items' frames to the caller. */
static void batch_job(void *arg)
{
	struct batch *b = arg;

	help(b);
	pthread_mutex_lock(&b->lock);
	if (!--b->pending)
		pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/* Hand b to the workers (they start as soon as they are free). */
static void batch_start(struct report_session *s, struct batch *b)
{
	unsigned int nw = s->wq ? wq__nr_workers(s->wq) : 0;

	atomic_store(&b->next, 0);
	b->pending = 0;
	for (unsigned int i = 0; i < nw && i * CHUNK < b->n; i++) {
		pthread_mutex_lock(&b->lock);
		b->pending++;
		pthread_mutex_unlock(&b->lock);
		if (wq__submit(s->wq, i, batch_job, b) < 0) {
			pthread_mutex_lock(&b->lock);
			b->pending--;
			pthread_mutex_unlock(&b->lock);
		}
	}
}

static int deliver_item(struct report_session *s, struct item *it)
{
	const struct perf_reader_attr *a = perf_reader__attr(s->r, it->attr);
	char nocomm[16];

	/* perf names a thread it saw no COMM for ":TID" */
	snprintf(nocomm, sizeof(nocomm), ":%d", (int32_t)it->s.tid);
	struct report_session_sample rs = {
		.attr = it->attr,
		.raw = &it->s,
		.comm = it->comm ? it->comm : nocomm,
		.cgroup = it->cgroup,
		.cpu = (a->attr.sample_type & PERF_SAMPLE_CPU) ? (int32_t)it->s.cpu : -1,
		.period = it->s.period ? it->s.period : 1,
		.filtered = it->filtered,
		.maps = it->snap,
		.nr_frames = (size_t)it->nr_frames,
		.frames = it->frames,
	};

	s->st.nr_frames += rs.nr_frames;
	if (s->has_filter)
		return s->filter.sample ? s->filter.sample(s->filter.ctx, s, &rs) : 0;
	return report_session__emit(s, &rs);
}

int report_session__emit(struct report_session *s, const struct report_session_sample *ss)
{
	for (size_t k = 0; k < s->nr_sinks; k++) {
		int e = s->sinks[k].sample(s->sinks[k].ctx, ss);

		if (e)
			return e;
	}
	return 0;
}

int report_session__set_filter(struct report_session *s, const struct report_filter *f)
{
	if (s->has_filter)
		return -EBUSY;
	s->filter = *f;
	s->has_filter = true;
	return 0;
}

static int deliver_side(struct report_session *s, struct item *it)
{
	struct perf_reader_record rec = { .hdr = it->side, .offset = it->side_offset,
					  .time = it->side_time, .attr_index = it->side_attr };

	return s->filter.side(s->filter.ctx, s, &rec);
}

/* Help finish b, wait for its workers, deliver it (ret: the first sink error) and empty it. */
static int batch_finish(struct report_session *s, struct batch *b, bool deliver)
{
	int ret = 0;

	help(b);
	pthread_mutex_lock(&b->lock);
	while (b->pending)
		pthread_cond_wait(&b->cond, &b->lock);
	pthread_mutex_unlock(&b->lock);
	for (size_t i = 0; i < b->n; i++) {
		if (b->items[i].side) {
			if (deliver && !ret)
				ret = deliver_side(s, &b->items[i]);
		} else {
			if (deliver && !ret)
				ret = deliver_item(s, &b->items[i]);
			map_snapshot__put(b->items[i].snap);
		}
		perf_reader__release(b->items[i].ref);
	}
	b->n = 0;
	return ret;
}

/* The filling batch is full (or the pass is over): start it, finish and deliver the older one
 * (only finish it when !deliver: a sink stopped the pass), which becomes the one to fill. */
static int flush_batch(struct report_session *s, bool deliver)
{
	struct batch *older = s->inflight;
	int ret = 0;

	if (s->fill->n) {
		batch_start(s, s->fill);
		s->inflight = s->fill;
	} else {
		s->inflight = NULL;
	}
	if (older) {
		ret = batch_finish(s, older, deliver);
		s->fill = older;
	} else {
		s->fill = s->fill == &s->batches[0] ? &s->batches[1] : &s->batches[0];
	}
	return ret;
}

/* Deliver (or with !deliver only finish) everything still queued, in order. */
static int flush_all(struct report_session *s, bool deliver)
{
	int ret = flush_batch(s, deliver);
	int e = flush_batch(s, deliver && !ret);

	return ret ? ret : e;
}

/* The path of cgroup id, as the file's CGROUP records named it; "unknown" otherwise. */
static const char *cgroup_name(const struct report_session *s, uint64_t id)
{
	for (size_t i = s->nr_cgroups; i-- > 0;) /* the latest record of an id wins */
		if (s->cgroups[i].id == id)
			return s->cgroups[i].path;
	return "unknown";
}

static bool cgroup_in_list(const char *const *l, size_t n, const char *path)
{
	char unit[256];
	const char *u = path ? cgroupfs__unit(path, unit, sizeof(unit)) : NULL;

	for (size_t i = 0; i < n && path; i++)
		if (!strcmp(l[i], path) || (u && !strcmp(l[i], u)))
			return true;
	return false;
}

/* PERF_RECORD_CGROUP: u64 id, then the path, NUL-terminated within the record. */
static int note_cgroup(struct report_session *s, const struct perf_event_header *h)
{
	const char *path = (const char *)(h + 1) + 8;
	size_t max = h->size > sizeof(*h) + 8 ? h->size - sizeof(*h) - 8 : 0;
	uint64_t id;
	char *copy;

	if (!max || !memchr(path, 0, max))
		return 0; /* malformed: the samples of that id stay "unknown" */
	memcpy(&id, h + 1, 8);
	if (s->nr_cgroups == s->cap_cgroups) {
		size_t nc = s->cap_cgroups ? s->cap_cgroups * 2 : 64;
		struct cgroup_name *n = realloc(s->cgroups, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->cgroups = n;
		s->cap_cgroups = nc;
	}
	if (!(copy = strdup(path)))
		return -ENOMEM;
	s->cgroups[s->nr_cgroups++] = (struct cgroup_name){ id, copy };
	return 0;
}

static bool keep_sample(const struct report_session *s, const struct perf_sample *ps)
{
	const struct report_session_opts *o = &s->opts;

	if (o->nr_cpus && !in_list(o->cpus, o->nr_cpus, (int32_t)ps->cpu))
		return false;
	if (o->nr_times && !time_ranges__contains(o->times, o->nr_times, ps->time))
		return false;
	return true;
}

/* A SAMPLE record that does not decode with its attr: counted per event, with the first reason. */
static void bad_sample(struct report_session *s, size_t a, int err)
{
	s->st.nr_bad_samples++;
	if (!s->attr_bad[a]++)
		s->attr_bad_err[a] = err;
}

static int on_sample(struct report_session *s, const struct perf_reader_record *rec)
{
	const struct report_session_opts *o = &s->opts;
	size_t a = rec->attr_index < 0 || (size_t)rec->attr_index >= s->st.nr_attrs ?
			   0 : (size_t)rec->attr_index;
	struct batch *b;
	struct item *it;

	s->attr_samples[a]++;
	if (s->fill->n == BATCH) {
		int e = flush_batch(s, true);

		if (e)
			return e;
	}
	b = s->fill;
	it = &b->items[b->n];
	it->side = NULL;
	int pe = perf_sample__parse(&perf_reader__attr(s->r, a)->attr, rec->hdr, &it->s);
	if (pe < 0) {
		bad_sample(s, a, pe);
		return 0;
	}
	if (!keep_sample(s, &it->s))
		return 0;
	s->st.nr_samples++;
	it->attr = a;
	it->comm = machine__comm_of(s->m, (int32_t)it->s.pid, (int32_t)it->s.tid);
	it->cgroup = (perf_reader__attr(s->r, a)->attr.sample_type & PERF_SAMPLE_CGROUP) ?
			     cgroup_name(s, it->s.cgroup) : NULL;
	it->filtered = (o->nr_pids && !in_list(o->pids, o->nr_pids, (int32_t)it->s.pid)) ||
		       (o->nr_tids && !in_list(o->tids, o->nr_tids, (int32_t)it->s.tid)) ||
		       (o->nr_comms && !comm_in_list(o->comms, o->nr_comms, it->comm)) ||
		       (o->nr_cgroups && !cgroup_in_list(o->cgroups, o->nr_cgroups, it->cgroup));
	it->snap = machine__snapshot(s->m, (int32_t)it->s.pid);
	if (!it->snap)
		return -ENOMEM;
	it->ref = perf_reader__hold(rec);
	it->frames = b->frames + b->n * (size_t)o->max_stack;
	b->n++;
	return 0;
}

/* A side-band record the filter wants, queued in the batch so it keeps its place in time. */
static int queue_side(struct report_session *s, const struct perf_reader_record *rec)
{
	struct batch *b;
	struct item *it;

	if (s->fill->n == BATCH) {
		int e = flush_batch(s, true);

		if (e)
			return e;
	}
	b = s->fill;
	it = &b->items[b->n];
	*it = (struct item){ .side = rec->hdr, .side_time = rec->time, .side_offset = rec->offset,
			     .side_attr = rec->attr_index, .ref = perf_reader__hold(rec) };
	b->n++;
	return 0;
}

static void count_lost(struct report_session *s, const struct perf_reader_record *rec)
{
	const struct perf_event_header *h = rec->hdr;
	size_t a = rec->attr_index < 0 || (size_t)rec->attr_index >= s->st.nr_attrs ?
			   0 : (size_t)rec->attr_index;
	uint64_t n;

	if (h->size < sizeof(*h) + 8)
		return;
	memcpy(&n, h + 1, 8);
	s->attr_lost[a] += n;
}

static int on_record(const struct perf_reader_record *rec, void *arg)
{
	struct report_session *s = arg;
	const struct perf_event_header *h = rec->hdr;

	if (h->type == PERF_RECORD_SAMPLE)
		return on_sample(s, rec);
	if (h->type == PERF_RECORD_LOST_SAMPLES)
		count_lost(s, rec);
	if (h->type == PERF_RECORD_CGROUP && note_cgroup(s, h) < 0)
		return -ENOMEM;
	if (s->has_filter && s->filter.side && h->type < 64 && (s->filter.side_types >> h->type & 1)) {
		int e = queue_side(s, rec);

		if (e)
			return e;
	}
	if (h->type < PERF_RECORD_USER_TYPE_START) {
		/* A record that changes maps must not overtake batched samples that came before
		 * it: their snapshots are already taken, so nothing to flush. */
		int e = machine__process(s->m, h);

		if (e == -ENOMEM)
			return e;
	}
	return 0;
}

static int on_count(const struct perf_reader_record *rec, void *arg)
{
	struct report_session *s = arg;
	size_t a = rec->attr_index < 0 || (size_t)rec->attr_index >= s->st.nr_attrs ?
			   0 : (size_t)rec->attr_index;

	if (rec->hdr->type == PERF_RECORD_SAMPLE) {
		struct perf_sample ps;
		int pe = perf_sample__parse(&perf_reader__attr(s->r, a)->attr, rec->hdr, &ps);

		s->attr_samples[a]++;
		if (pe < 0)
			bad_sample(s, a, pe);
	} else if (rec->hdr->type == PERF_RECORD_LOST_SAMPLES)
		count_lost(s, rec);
	return 0;
}

static void name_events(struct report_session *s)
{
	for (size_t i = 0; i < s->st.nr_attrs; i++) {
		const struct perf_reader_attr *a = perf_reader__attr(s->r, i);
		const char *n = NULL;

		if (a->name)
			n = a->name;
		else if (a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config == PERF_COUNT_SW_CPU_CLOCK)
			n = "cpu-clock";
		else if (a->attr.type == PERF_TYPE_SOFTWARE &&
			 a->attr.config == PERF_COUNT_SW_TASK_CLOCK)
			n = "task-clock";
		else if (a->attr.type == PERF_TYPE_HARDWARE &&
			 a->attr.config == PERF_COUNT_HW_CPU_CYCLES)
			n = "cycles";
		if (n)
			snprintf(s->names[i], NAME_LEN, "%s", n);
		else
			snprintf(s->names[i], NAME_LEN, "event %zu (type %u, config %#llx)", i,
				 a->attr.type, (unsigned long long)a->attr.config);
	}
}

/* Kernel symbols from /proc/kallsyms only when the file was recorded on the running kernel; a
 * file without features (its recorder was killed) names no kernel: take it for this one, as perf
 * does. */
static struct machine *machine_for(struct perf_reader *r)
{
	const struct perf_reader_info *in = perf_reader__info(r);
	struct machine_opts mo = { 0 };
	const uint8_t *kid = NULL;
	size_t kid_len = 0;
	struct machine *m;

	for (size_t i = 0; i < in->nr_build_ids; i++)
		if (!strcmp(in->build_ids[i].path, "[kernel.kallsyms]")) {
			kid = in->build_ids[i].id;
			kid_len = in->build_ids[i].id_len;
		}
	if (kallsyms__matches_running(in->osrelease, kid, kid_len) || (!in->osrelease && !kid)) {
		mo.kallsyms = "/proc/kallsyms";
		mo.running_vdso = true;
	}
	m = machine__new(&mo);
	for (size_t i = 0; m && i < in->nr_build_ids; i++)
		if (machine__set_build_id(m, in->build_ids[i].path, in->build_ids[i].id,
					  in->build_ids[i].id_len) < 0) {
			machine__free(m);
			return NULL;
		}
	return m;
}

static int session_setup(struct report_session *s)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	size_t na = perf_reader__nr_attrs(s->r);

	s->nr_threads = s->opts.jobs ? s->opts.jobs : (unsigned int)(online > 0 ? online : 1);
	s->st.nr_attrs = na ? na : 1;
	s->attr_samples = calloc(s->st.nr_attrs, sizeof(uint64_t));
	s->attr_lost = calloc(s->st.nr_attrs, sizeof(uint64_t));
	s->attr_bad = calloc(s->st.nr_attrs, sizeof(uint64_t));
	s->attr_bad_err = calloc(s->st.nr_attrs, sizeof(int));
	s->names = calloc(s->st.nr_attrs, NAME_LEN);
	s->pool = calloc(s->nr_threads, sizeof(*s->pool));
	s->all = calloc(s->nr_threads, sizeof(*s->all));
	s->m = machine_for(s->r);
	if (!s->attr_samples || !s->attr_lost || !s->attr_bad || !s->attr_bad_err || !s->names ||
	    !s->pool || !s->all || !s->m)
		return -ENOMEM;
	s->st.attr_samples = s->attr_samples;
	s->st.attr_lost_samples = s->attr_lost;
	s->st.attr_bad_samples = s->attr_bad;
	s->st.attr_bad_error = s->attr_bad_err;
	if (na)
		name_events(s);
	else
		snprintf(s->names[0], NAME_LEN, "unknown");
	return 0;
}

struct report_session *report_session__new(const struct report_session_opts *opts)
{
	struct report_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->pool_lock, NULL);
	for (int i = 0; i < 2; i++) {
		pthread_mutex_init(&s->batches[i].lock, NULL);
		pthread_cond_init(&s->batches[i].cond, NULL);
	}
	if (opts)
		s->opts = *opts;
	return s;
}

const char *report_session__error(const struct report_session *s)
{
	return s->err;
}

int report_session__open(struct report_session *s, const char *path)
{
	struct perf_reader_opts rdo = { .ordered_max_bytes = s->opts.ordered_max_bytes };
	int e;

	s->err[0] = 0;
	if (s->r) {
		seterr(s, "cannot read %s: the session already holds a file", path);
		return -EBUSY;
	}
	if (s->opts.max_stack < 0 || s->opts.max_stack > 1024 || s->opts.jobs > 256) {
		seterr(s, "cannot read %s: bad session options (max_stack %d: 0 to 1024; jobs %u: up to 256)",
		       path, s->opts.max_stack, s->opts.jobs);
		return -EINVAL;
	}
	if (!s->opts.max_stack)
		s->opts.max_stack = 127;
	s->r = perf_reader__new(&rdo);
	if (!s->r) {
		seterr(s, "cannot read %s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	e = perf_reader__open(s->r, path);
	if (e < 0) {
		seterr(s, "%s", perf_reader__error(s->r));
		return e;
	}
	e = session_setup(s);
	if (e < 0)
		seterr(s, "cannot read %s: cannot set up the session: %s", path, strerror(-e));
	return e;
}

struct perf_reader *report_session__reader(struct report_session *s)
{
	return s->r;
}

void report_session__set_times(struct report_session *s, const struct time_range *times,
			       size_t nr)
{
	s->opts.times = times;
	s->opts.nr_times = nr;
}

int report_session__add_sink(struct report_session *s, const struct report_sink *sink)
{
	struct report_sink *n = realloc(s->sinks, (s->nr_sinks + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	s->sinks = n;
	s->sinks[s->nr_sinks++] = *sink;
	return 0;
}

static int run_setup(struct report_session *s)
{
	/* the calling thread unwinds too: one worker fewer than threads */
	struct wq_opts wo = { .nr_workers = s->nr_threads - 1, .scope = TOPO_SCOPE_SYSTEM,
			      .name = "preport" };

	for (int i = 0; i < 2; i++) {
		struct batch *b = &s->batches[i];

		b->s = s;
		b->items = calloc(BATCH, sizeof(*b->items));
		b->frames = malloc(sizeof(struct unwind_frame) * BATCH * (size_t)s->opts.max_stack);
		if (!b->items || !b->frames)
			return -ENOMEM;
	}
	s->fill = &s->batches[0];
	if (wo.nr_workers) {
		s->wq = wq__new(&wo);
		if (!s->wq)
			s->nr_threads = 1; /* run on this thread alone */
	}
	return 0;
}

static void sum_unwind_stats(struct report_session *s)
{
	struct unwinder_stats us, *t = &s->st.unwind;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < s->nr_unwinders; i++) {
		unwinder__stats(s->all[i], &us);
		t->samples += us.samples;
		t->dwarf_samples += us.dwarf_samples;
		t->frames += us.frames;
		t->dwarf_errors += us.dwarf_errors;
		t->truncated += us.truncated;
		t->flushes += us.flushes;
		t->address_spaces += us.address_spaces;
		t->sigprocmask_skipped += us.sigprocmask_skipped;
	}
	s->st.nr_threads = s->nr_threads;
}

int report_session__run(struct report_session *s)
{
	int e, ret;

	if (s->ran)
		return -EALREADY;
	s->ran = true;
	e = run_setup(s);
	if (e < 0)
		return e;
	ret = perf_reader__for_each_ordered(s->r, on_record, s);
	/* damage is not an error: what preceded it is delivered */
	e = flush_all(s, !ret);
	if (!ret)
		ret = e;
	s->st.records = *perf_reader__walk_stats(s->r);
	sum_unwind_stats(s);
	if (s->has_filter && s->filter.finish) {
		e = s->filter.finish(s->filter.ctx, s);
		if (!ret)
			ret = e;
	}
	for (size_t k = 0; k < s->nr_sinks; k++) {
		if (!s->sinks[k].finish)
			continue;
		e = s->sinks[k].finish(s->sinks[k].ctx, s);
		if (!ret)
			ret = e;
	}
	return ret;
}

int report_session__count(struct report_session *s)
{
	int e;

	if (s->ran)
		return -EALREADY;
	s->ran = true;
	e = perf_reader__for_each(s->r, on_count, s);
	s->st.records = *perf_reader__walk_stats(s->r);
	return e;
}

const struct report_session_stats *report_session__stats(struct report_session *s)
{
	return &s->st;
}

const char *report_session__event_name(struct report_session *s, size_t idx)
{
	return idx < s->st.nr_attrs ? s->names[idx] : "unknown";
}

void report_session__free(struct report_session *s)
{
	if (!s)
		return;
	/* after a stopped pass: no batch is in flight (run finished them), only leftovers */
	wq__free(s->wq);
	for (int i = 0; i < 2; i++) {
		struct batch *b = &s->batches[i];

		for (size_t k = 0; k < b->n; k++) {
			map_snapshot__put(b->items[k].snap);
			perf_reader__release(b->items[k].ref);
		}
		free(b->items);
		free(b->frames);
		pthread_mutex_destroy(&b->lock);
		pthread_cond_destroy(&b->cond);
	}
	for (size_t i = 0; i < s->nr_unwinders; i++)
		unwinder__free(s->all[i]);
	machine__free(s->m);
	perf_reader__free(s->r);
	for (size_t i = 0; i < s->nr_cgroups; i++)
		free(s->cgroups[i].path);
	free(s->cgroups);
	pthread_mutex_destroy(&s->pool_lock);
	free(s->all);
	free(s->pool);
	free(s->sinks);
	free(s->attr_samples);
	free(s->attr_lost);
	free(s->attr_bad);
	free(s->attr_bad_err);
	free(s->names);
	free(s);
}
