/* The report session: one time-ordered pass over a perf.data. Records are applied to the machine
 * on the calling thread; samples are gathered in batches, each sample holding its record in the
 * reader's decompressed block (no copy) and a reference to its process's map snapshot at its
 * time. Two batches alternate: while the workers unwind one, the calling thread reads the next;
 * then it helps finish the older one and hands its samples to the sinks, in order. A worker
 * that has done its share of a batch decodes the file's next zstd frame (precord's files: the
 * reader's decoding thread only finds them), so two CPUs carry two busy threads. Invariant: a
 * batch is delivered whole before any sample of a later batch, so sinks see time order.
 * Several files (a daemon's rotations) are read one after the other into the same machine and
 * sinks, as one recording: each is delivered whole before the next is read. */
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
#include "lib/clock.h"
#include "lib/workqueue.h"
#include "perf/abi.h"
#include "report/report.h"
#include "report/session.h"
#include "unwind/symbols.h"

#define BATCH 256
#define CHUNK 8         /* samples claimed at a time */
#define NAME_LEN 96
/* files loaded ahead at most (the rest on first use): a system-wide recording names thousands */
#define PREFETCH_MAX 64

struct item {
	struct perf_sample s;
	struct perf_reader_ref *ref; /* keeps the record (s points into it) */
	struct map_snapshot *snap;
	const char *comm;
	uint32_t thread;        /* machine__comm_of's serial */
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
	struct unwind_frame *frames;    /* BATCH * (2 * max_stack + 1): unwinder__unwind_perf */
	size_t n;
	atomic_size_t next;             /* next item to claim */
	/* the workers' jobs; the batch is done when those that started and the caller are */
	pthread_mutex_t lock;
	pthread_cond_t cond;            /* a job is done */
	unsigned int nr_jobs;           /* submitted at the last start */
	struct job *jobs;               /* one per worker */
};

/* A worker's job on a batch (see batch_job). b and slot are set once; r, the file the batch is
 * from, and state change at each start of the batch. */
enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_CANCELLED };
struct job {
	struct batch *b;
	unsigned int slot;
	_Atomic(struct perf_reader *) r;
	atomic_int state;
};

struct report_session {
	struct report_session_opts opts;
	struct perf_reader *r;
	struct machine *m;
	struct wq *wq;
	unsigned int nr_threads;
	bool ran;
	bool chains_unwound; /* the file is preport --unwind-to's copy (REPORT_UNWOUND_TAG) */

	struct report_sink *sinks;
	size_t nr_sinks;

	/* cgroup ids to paths, from PERF_RECORD_CGROUP */
	struct cgroup_name { uint64_t id; char *path; } *cgroups;
	size_t nr_cgroups, cap_cgroups;
	struct report_filter filter;
	bool has_filter;

	struct batch batches[2];
	struct batch *fill, *inflight;  /* being read; being unwound (or NULL) */
	/* a perf -z file's decoding thread unwinds too while it would wait (decoder_idle): the job
	 * of the batch started last, for it */
	bool decoder_helps;
	_Atomic(struct job *) decoder_job;

	/* unwinders, one per thread and made on its first job: slot 0 the calling thread's, slot
	 * i + 1 worker i's. An unwinder (its libunwind caches, its address spaces) stays on the
	 * core of its thread; handed round a pool, its locks and caches crossed cores each batch. */
	struct unwinder **all;
	size_t nr_slots;

	/* with more than one thread: kernel symbols, and the files the maps name, loading beside
	 * the pass (prefetch_start); the files in a queue the record thread fills */
	pthread_t prefetch[2];
	bool prefetching[2];
	pthread_mutex_t pf_lock;
	pthread_cond_t pf_cond;
	bool pf_stop;
	struct dso *pf_queue[PREFETCH_MAX];
	size_t pf_head, pf_tail;

	struct report_session_stats st;
	uint64_t *attr_samples, *attr_lost, *attr_bad;
	int *attr_bad_err;
	char (*names)[NAME_LEN];
	char err[512];                  /* report_session__error() */

	/* further files, read after r in this order (report_session__add_file) */
	struct input { struct perf_reader *r; char *path; } *more;
	size_t nr_more;
	struct perf_reader *cur;        /* the file being read: its attrs decode its samples */
	const char *first_path;
	/* the wall-clock range, in the clock of the file being read (set per file) */
	bool has_wall;
	uint64_t since_ns, until_ns;    /* ns since the epoch, both inclusive */
	uint64_t cur_lo, cur_hi;
	/* the first damaged file and its damage */
	const char *damage_path;
	struct perf_reader_damage damage;
	char damage_reason[256];
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

/* The unwinder of slot (made on first use; only its own thread uses a slot). */
static struct unwinder *slot_unwinder(struct report_session *s, unsigned int slot)
{
	struct unwinder *u;

	if (slot >= s->nr_slots)
		return NULL;
	if ((u = s->all[slot]))
		return u;
	u = unwinder__new();
	if (u && s->opts.addresses_only)
		unwinder__set_addresses_only(u, true);
	s->all[slot] = u;
	return u;
}

/* Whether the recorded call chain of s leaves out its sampled ip (its first address is another:
 * perf record --user-callchains keeps only the user part of a kernel sample's chain). */
static bool off_chain(const struct perf_sample *s)
{
	for (uint64_t i = 0; i < s->callchain_nr; i++)
		if (s->callchain[i] < PERF_CONTEXT_MAX)
			return s->callchain[i] != s->ip && s->ip;
	return false;
}

/* perf takes a sample's Self row from its ip, whatever its chain holds: that ip in front of the
 * chain, marked off_chain (the chain's own frames stay what the call graphs show). */
static void add_sampled_ip(struct report_session *s, struct item *it)
{
	size_t cap = 2 * (size_t)s->opts.max_stack + 1;
	size_t n = (size_t)it->nr_frames < cap ? (size_t)it->nr_frames : cap - 1;

	memmove(it->frames + 1, it->frames, n * sizeof(*it->frames));
	unwind_frame__resolve(it->snap, it->s.ip, true, &it->frames[0]);
	it->frames[0].off_chain = true;
	it->nr_frames = (int)n + 1;
}

static void unwind_item(struct report_session *s, struct unwinder *u, struct item *it)
{
	int n;

	if (it->side)
		return;
	if (it->filtered || s->opts.self_only) {
		it->nr_frames = 1;
		it->frames[0] = (struct unwind_frame){ .ip = it->s.ip };
		/* perf drops a filtered sample with an unknown ip too (not counted) */
		if (s->opts.hide_unresolved || !it->filtered)
			unwind_frame__resolve(it->snap, it->s.ip, true, &it->frames[0]);
		return;
	}
	n = u ? unwinder__unwind_perf(u, it->snap, &it->s, it->frames, (size_t)s->opts.max_stack,
				      s->opts.outermost) : -ENOMEM;
	if (n <= 0) {
		it->nr_frames = 1;
		it->frames[0] = (struct unwind_frame){ .ip = it->s.ip };
		unwind_frame__resolve(it->snap, it->s.ip, true, &it->frames[0]);
	} else {
		it->nr_frames = n;
		/* a copy's user frames were unwound from its original's stacks */
		for (int i = 0; s->chains_unwound && !it->s.stack_size && i < n; i++)
			it->frames[i].unwound |= !it->frames[i].kernel;
		/* a DWARF sample's chain starts at its user registers' ip, which is not its own
		 * when it was taken in the kernel and the kernel part is not recorded
		 * (--user-callchains) */
		if (!it->frames[0].off_chain && it->s.ip &&
		    (it->s.stack_size ? it->frames[0].ip != it->s.ip : off_chain(&it->s)))
			add_sampled_ip(s, it);
	}
}

/* Claim and unwind chunks of b until none is left, with slot's unwinder. */
static void help(struct batch *b, unsigned int slot)
{
	struct report_session *s = b->s;
	struct unwinder *u = NULL;
	size_t i;

	while ((i = atomic_fetch_add_explicit(&b->next, CHUNK, memory_order_relaxed)) < b->n) {
		size_t hi = i + CHUNK < b->n ? i + CHUNK : b->n;

		if (!u)
			u = slot_unwinder(s, slot);
		for (; i < hi; i++) {
			/* the next sample's registers and stack top were decoded long ago: out of
			 * cache by now */
			if (i + 1 < b->n && !b->items[i + 1].side) {
				const struct perf_sample *nx = &b->items[i + 1].s;

				/* a sample without registers or stack has NULL there */
				if (nx->regs) {
					__builtin_prefetch(nx->regs);
					__builtin_prefetch(nx->regs + 8);
				}
				if (nx->stack) {
					__builtin_prefetch(nx->stack);
					__builtin_prefetch(nx->stack + 64);
				}
			}
			unwind_item(s, u, &b->items[i]);
		}
	}
}

static bool job_take(struct job *j)
{
	int queued = JOB_QUEUED;

	return atomic_compare_exchange_strong_explicit(&j->state, &queued, JOB_RUNNING,
						       memory_order_acquire, memory_order_relaxed);
}

/* A taken job's share, then done (the mutex hands the items' frames to the caller). */
static void job_do(struct job *j)
{
	struct batch *b = j->b;

	help(b, j->slot);
	pthread_mutex_lock(&b->lock);
	atomic_store_explicit(&j->state, JOB_DONE, memory_order_release);
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/* A worker's share of a batch, unless the caller took the whole batch before the worker came to
 * it (it was decoding a frame: see below) and cancelled the job; the mutex hands the items'
 * frames to the caller. The item in the worker's queue may come to the job only at a later start
 * of the batch: it then does that start's share (and that start's own item finds it taken). */
static void batch_job(void *arg)
{
	struct job *j = arg;
	bool took = job_take(j);
	/* read after the take: this start's file (not taken: a file of this session) */
	struct perf_reader *r = atomic_load_explicit(&j->r, memory_order_relaxed);

	if (took)
		job_do(j);
	/* its share done, a worker decodes the next zstd frame (the delivering thread would) */
	perf_reader__decode_ahead(r);
}

/* The decoding thread of a perf -z file, instead of waiting for the calling thread: the batch
 * started last, which the calling thread comes to only once it has unwound the one before. It
 * may take the job at a later start of that batch: it then does that start's share, as a
 * worker would. */
static bool decoder_idle(void *arg)
{
	struct report_session *s = arg;
	struct job *j = atomic_load_explicit(&s->decoder_job, memory_order_acquire);

	if (!j || !job_take(j))
		return false;
	job_do(j);
	return true;
}

/* Hand b to the workers (they start as soon as they are free). */
static void batch_start(struct report_session *s, struct batch *b)
{
	unsigned int nw = s->wq ? wq__nr_workers(s->wq) : 0;

	atomic_store(&b->next, 0);
	for (b->nr_jobs = 0; b->nr_jobs < nw && b->nr_jobs * CHUNK < b->n; b->nr_jobs++) {
		struct job *j = &b->jobs[b->nr_jobs];

		atomic_store_explicit(&j->r, s->cur, memory_order_relaxed);
		atomic_store_explicit(&j->state, JOB_QUEUED, memory_order_release);
		/* (an item still queued from an earlier start may take it: see batch_job) */
		wq__submit(s->wq, b->nr_jobs, batch_job, j);
	}
	/* the decoding thread's job (decoder_idle): the slot after the workers' */
	if (s->decoder_helps && b->nr_jobs * CHUNK < b->n) {
		struct job *j = &b->jobs[b->nr_jobs++];

		atomic_store_explicit(&j->state, JOB_QUEUED, memory_order_release);
		atomic_store_explicit(&s->decoder_job, j, memory_order_release);
	}
}

/* perf's --hide-unresolved on an unwound item: false when its own ip has no symbol (the sample
 * is dropped); otherwise the frames without one are taken out of its chain. */
static bool keep_resolved(struct item *it)
{
	int n = 0;

	if (it->nr_frames < 1 || !it->frames[0].sym)
		return false;
	for (int i = 0; i < it->nr_frames; i++)
		if (it->frames[i].sym)
			it->frames[n++] = it->frames[i];
	it->nr_frames = n;
	return true;
}

static int deliver_item(struct report_session *s, struct item *it)
{
	const struct perf_reader_attr *a = perf_reader__attr(s->cur, it->attr);
	char nocomm[16];

	if (s->opts.hide_unresolved && !keep_resolved(it))
		return 0;
	/* perf names a thread it saw no COMM for ":TID" */
	if (!it->comm)
		snprintf(nocomm, sizeof(nocomm), ":%d", (int32_t)it->s.tid);
	struct report_session_sample rs = {
		.attr = it->attr,
		.raw = &it->s,
		.comm = it->comm ? it->comm : nocomm,
		.thread = it->thread,
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

/* How long the delivering thread spins on a running job before it sleeps. The job is in its
 * last chunk (a few samples: microseconds), where a sleep and wake-up between two CPUs took 25 us
 * of latency and 16 us of CPU on either side on a VM. On a 295k-sample precord file -j 2 went
 * from 0.38 to 0.35 s (medians of 15 alternating runs). */
#define SPIN_NS 30000

static void spin_while_running(atomic_int *state)
{
	uint64_t until = clock__ns() + SPIN_NS;

	for (unsigned int i = 1;
	     atomic_load_explicit(state, memory_order_acquire) == JOB_RUNNING; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#elif defined(__aarch64__)
		__asm__ volatile("yield");
#endif
		if (i % 64 == 0 && clock__ns() >= until)
			return;
	}
}

/* Help finish b, wait for its workers, deliver it (ret: the first sink error) and empty it. */
static int batch_finish(struct report_session *s, struct batch *b, bool deliver)
{
	int ret = 0;

	/* a stopped pass unwinds no more of it (running jobs finish their chunks) */
	if (!deliver)
		atomic_store_explicit(&b->next, b->n, memory_order_relaxed);
	help(b, 0);
	/* Every item is claimed. A job not started yet is cancelled rather than waited for: its
	 * worker is busy elsewhere, most often decoding a frame, which took longer than the rest
	 * of the batch did. */
	for (unsigned int i = 0; i < b->nr_jobs; i++) {
		struct job *j = &b->jobs[i];
		int queued = JOB_QUEUED;

		if (atomic_compare_exchange_strong_explicit(&j->state, &queued, JOB_CANCELLED,
							    memory_order_acquire,
							    memory_order_acquire) ||
		    queued != JOB_RUNNING)
			continue;
		spin_while_running(&j->state);
		pthread_mutex_lock(&b->lock);
		while (atomic_load_explicit(&j->state, memory_order_acquire) == JOB_RUNNING)
			pthread_cond_wait(&b->cond, &b->lock);
		pthread_mutex_unlock(&b->lock);
	}
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
	if (s->has_wall && (ps->time < s->cur_lo || ps->time > s->cur_hi))
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
	int pe = perf_sample__parse(&perf_reader__attr(s->cur, a)->attr, rec->hdr, &it->s);
	if (pe < 0) {
		bad_sample(s, a, pe);
		return 0;
	}
	if (!keep_sample(s, &it->s))
		return 0;
	s->st.nr_samples++;
	it->attr = a;
	/* A thread of tid -1 (sched_switch of a task that has exited, from the pid namespace it
	 * left) is one no record names: perf makes it a thread of its own, named ":-1", not one of
	 * the process's threads */
	it->thread = 0;
	it->comm = (int32_t)it->s.tid == -1 ? NULL :
		   machine__comm_of(s->m, (int32_t)it->s.pid, (int32_t)it->s.tid, &it->thread);
	it->cgroup = (perf_reader__attr(s->cur, a)->attr.sample_type & PERF_SAMPLE_CGROUP) ?
			     cgroup_name(s, it->s.cgroup) : NULL;
	it->filtered = (o->nr_pids && !in_list(o->pids, o->nr_pids, (int32_t)it->s.pid)) ||
		       (o->nr_tids && !in_list(o->tids, o->nr_tids, (int32_t)it->s.tid)) ||
		       (o->comms && !report__name_listed(o->comms, o->nr_comms, it->comm)) ||
		       (o->nr_cgroups && !cgroup_in_list(o->cgroups, o->nr_cgroups, it->cgroup));
	it->snap = machine__snapshot(s->m, (int32_t)it->s.pid);
	if (!it->snap)
		return -ENOMEM;
	it->ref = perf_reader__hold(rec);
	it->frames = b->frames + b->n * (2 * (size_t)o->max_stack + 1);
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
		int pe = perf_sample__parse(&perf_reader__attr(s->cur, a)->attr, rec->hdr, &ps);

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
static void prefetch_file(void *ctx, struct dso *d);

static struct machine *machine_for(struct report_session *s, struct perf_reader *r)
{
	const struct perf_reader_info *in = perf_reader__info(r);
	struct machine_opts mo = { .on_new_file = prefetch_file, .ctx = s, .symfs = s->opts.symfs };
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
	if (s->opts.kallsyms)
		mo.kallsyms = s->opts.kallsyms;
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
	/* with more than one thread, zstd decodes ahead of the pass on a thread of its own */
	perf_reader__set_decode_thread(s->r, s->nr_threads > 1);
	s->st.nr_attrs = na ? na : 1;
	s->attr_samples = calloc(s->st.nr_attrs, sizeof(uint64_t));
	s->attr_lost = calloc(s->st.nr_attrs, sizeof(uint64_t));
	s->attr_bad = calloc(s->st.nr_attrs, sizeof(uint64_t));
	s->attr_bad_err = calloc(s->st.nr_attrs, sizeof(int));
	s->names = calloc(s->st.nr_attrs, NAME_LEN);
	s->all = calloc(s->nr_threads, sizeof(*s->all));
	s->nr_slots = s->all ? s->nr_threads : 0;
	s->m = machine_for(s, s->r);
	if (!s->attr_samples || !s->attr_lost || !s->attr_bad || !s->attr_bad_err || !s->names ||
	    !s->all || !s->m)
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
	pthread_mutex_init(&s->pf_lock, NULL);
	pthread_cond_init(&s->pf_cond, NULL);
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
	size_t len;
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
	s->chains_unwound = perf_reader__private(s->r, REPORT_UNWOUND_TAG, &len) != NULL;
	e = session_setup(s);
	if (e < 0)
		seterr(s, "cannot read %s: cannot set up the session: %s", path, strerror(-e));
	s->first_path = path;
	s->cur = s->r;
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

/* Whether b records the same events as a, so that its samples read with a's attrs. */
static bool same_events(struct perf_reader *a, struct perf_reader *b, size_t *ret_which)
{
	size_t n = perf_reader__nr_attrs(a);

	*ret_which = n;
	if (perf_reader__nr_attrs(b) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct perf_event_attr *x = &perf_reader__attr(a, i)->attr;
		const struct perf_event_attr *y = &perf_reader__attr(b, i)->attr;

		*ret_which = i;
		/* a file precordd has unwound lacks the stack copies; the others keep them */
		uint64_t stacks = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

		if (x->type != y->type || x->config != y->config ||
		    (x->sample_type | stacks) != (y->sample_type | stacks) ||
		    x->read_format != y->read_format || x->sample_id_all != y->sample_id_all ||
		    x->use_clockid != y->use_clockid ||
		    (x->use_clockid && x->clockid != y->clockid))
			return false;
	}
	return true;
}

int report_session__add_file(struct report_session *s, const char *path)
{
	struct perf_reader_opts rdo = { .ordered_max_bytes = s->opts.ordered_max_bytes };
	struct perf_reader *r;
	struct input *n;
	size_t which;
	int e;

	s->err[0] = 0;
	if (!s->r || s->ran) {
		seterr(s, "cannot read %s: %s", path, !s->r ? "no first file is open" :
							 "the session has already run");
		return -EINVAL;
	}
	r = perf_reader__new(&rdo);
	if (!r) {
		seterr(s, "cannot read %s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	e = perf_reader__open(r, path);
	if (e < 0) {
		seterr(s, "%s", perf_reader__error(r));
		perf_reader__free(r);
		return e;
	}
	if (!same_events(s->r, r, &which)) {
		if (which < perf_reader__nr_attrs(s->r))
			seterr(s, "cannot read %s with %s as one recording: its event %zu (%s) is "
			       "recorded otherwise (type, config, sample fields or clock); report "
			       "them one at a time", path, s->first_path, which, s->names[which]);
		else
			seterr(s, "cannot read %s with %s as one recording: it records %zu events, "
			       "not %zu; report them one at a time", path, s->first_path,
			       perf_reader__nr_attrs(r), which);
		perf_reader__free(r);
		return -EINVAL;
	}
	n = realloc(s->more, (s->nr_more + 1) * sizeof(*n));
	if (!n) {
		perf_reader__free(r);
		seterr(s, "cannot read %s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	s->more = n;
	s->more[s->nr_more++] = (struct input){ r, (char *)path };
	perf_reader__set_decode_thread(r, s->nr_threads > 1); /* as the first file's */
	return 0;
}

/* sample clock of r at wall-clock time w (ns since the epoch), clamped to the clock's range */
static uint64_t wall_to_clock(const struct perf_reader_info *in, uint64_t w)
{
	if (w == UINT64_MAX)
		return UINT64_MAX;
	if (w >= in->clock.wall_ns)
		return w - in->clock.wall_ns > UINT64_MAX - in->clock.clock_ns ? UINT64_MAX :
			in->clock.clock_ns + (w - in->clock.wall_ns);
	return in->clock.wall_ns - w > in->clock.clock_ns ? 0 :
		in->clock.clock_ns - (in->clock.wall_ns - w);
}

int report_session__set_wall_range(struct report_session *s, uint64_t since, uint64_t until)
{
	for (size_t i = 0; i <= s->nr_more; i++) {
		struct perf_reader *r = i ? s->more[i - 1].r : s->r;

		if (!r || !perf_reader__info(r)->has_clock) {
			seterr(s, "cannot tell the time of day of %s's samples: it has no CLOCK_DATA "
			       "(recorded by perf without -k CLOCK_MONOTONIC, or by an older precord); "
			       "give --time in the recording's own seconds instead",
			       i ? s->more[i - 1].path : s->first_path);
			return -ENODATA;
		}
	}
	s->has_wall = true;
	s->since_ns = since;
	s->until_ns = until;
	return 0;
}

const struct perf_reader_damage *report_session__damage(const struct report_session *s,
							const char **ret_path)
{
	if (ret_path)
		*ret_path = s->damage_path;
	return s->damage_path ? &s->damage : NULL;
}

/* Before reading r: the wall-clock range in its clock. Returns false when none of its samples
 * (SAMPLE_TIME feature) can fall in it: the file is not read. */
static bool enter_file(struct report_session *s, struct perf_reader *r)
{
	const struct perf_reader_info *in = perf_reader__info(r);

	if (!s->has_wall)
		return true;
	s->cur_lo = wall_to_clock(in, s->since_ns);
	s->cur_hi = wall_to_clock(in, s->until_ns);
	if (perf_reader__has_feature(r, FEAT_SAMPLE_TIME) &&
	    (in->last_sample_time < s->cur_lo || in->first_sample_time > s->cur_hi))
		return false;
	return true;
}

/* After reading r: its counts added to the session's, its damage kept if it is the first. */
static void leave_file(struct report_session *s, struct perf_reader *r, const char *path,
		       struct perf_reader_stats *sum)
{
	const struct perf_reader_stats *w = perf_reader__walk_stats(r);
	const struct perf_reader_damage *d = perf_reader__damage(r);

	sum->total += w->total;
	for (int t = 0; t < PERF_RECORD_HEADER_MAX; t++)
		sum->nr_by_type[t] += w->nr_by_type[t];
	sum->nr_other += w->nr_other;
	sum->total_lost += w->total_lost;
	sum->total_lost_samples += w->total_lost_samples;
	if (perf_reader__peak_queued(r) > s->st.peak_queued)
		s->st.peak_queued = perf_reader__peak_queued(r);
	if (d && !s->damage_path) {
		s->damage_path = path;
		snprintf(s->damage_reason, sizeof(s->damage_reason), "%s",
			 d->reason ? d->reason : "unreadable");
		s->damage = (struct perf_reader_damage){ d->offset, s->damage_reason };
	}
}

/* The build ids of a further file, for its dsos. Returns 0 or -ENOMEM. */
static int note_build_ids(struct report_session *s, struct perf_reader *r)
{
	const struct perf_reader_info *in = perf_reader__info(r);

	for (size_t i = 0; i < in->nr_build_ids; i++)
		if (machine__set_build_id(s->m, in->build_ids[i].path, in->build_ids[i].id,
					  in->build_ids[i].id_len) < 0)
			return -ENOMEM;
	return 0;
}

/* Walk every file with fn in turn (ordered: deliver each file whole before the next), the
 * counts summed into s->st.records. Returns what a walk or delivery returned first. */
static int walk_files(struct report_session *s, perf_reader_fn fn, bool ordered)
{
	struct perf_reader_stats sum = { 0 };
	int ret = 0;

	for (size_t i = 0; i <= s->nr_more && !ret; i++) {
		struct perf_reader *r = i ? s->more[i - 1].r : s->r;
		const char *path = i ? s->more[i - 1].path : s->first_path;

		if (!enter_file(s, r) && ordered)
			continue;       /* --stats counts every file */
		s->cur = r;
		if (i && ordered && (ret = note_build_ids(s, r)) < 0)
			break;
		ret = ordered ? perf_reader__for_each_ordered(r, fn, s) :
				perf_reader__for_each(r, fn, s);
		if (ordered && !ret && i < s->nr_more)
			ret = flush_all(s, true); /* this file's samples, before the next file's */
		leave_file(s, r, path, &sum);
	}
	s->st.records = sum;
	return ret;
}

static int run_setup(struct report_session *s)
{
	/* the calling thread unwinds too: one worker fewer than threads */
	struct wq_opts wo = { .nr_workers = s->nr_threads - 1, .scope = TOPO_SCOPE_SYSTEM,
			      .name = "preport" };

	/* The decoding thread of a one-stream file (perf -z) is busy from start to end, a thread
	 * of its own: one worker fewer again. With a worker beside it at -j 2, three busy threads
	 * took turns on two CPUs, the decoding one (the pass's critical path) was descheduled, and
	 * the calling thread waited 0.12-0.28 s for its records where it waited 0.02-0.06 s
	 * without the worker (a 445k-sample perf -z file; see README, reporting). */
	/* It unwinds too while it would wait for this thread (on the same file, the decoding
	 * thread waited 20-75 ms of a 0.5-0.8 s pass for room): in 21 alternating runs at -j 2 the
	 * median went from 0.60 to 0.57 s (-j 1: 1.03 s). */
	if (s->nr_threads > 1 && perf_reader__one_stream(s->r)) {
		wo.nr_workers--;
		s->decoder_helps = true;
		perf_reader__set_idle_work(s->r, decoder_idle, s);
	}

	for (int i = 0; i < 2; i++) {
		struct batch *b = &s->batches[i];

		b->s = s;
		b->items = calloc(BATCH, sizeof(*b->items));
		b->frames = malloc(sizeof(struct unwind_frame) * BATCH * (2 * (size_t)s->opts.max_stack + 1));
		b->jobs = calloc(s->nr_threads, sizeof(*b->jobs));
		if (!b->items || !b->frames || !b->jobs)
			return -ENOMEM;
		for (unsigned int k = 0; k < s->nr_threads; k++) {
			b->jobs[k].b = b;
			b->jobs[k].slot = k + 1;
			atomic_init(&b->jobs[k].state, JOB_DONE);
		}
	}
	s->fill = &s->batches[0];
	if (wo.nr_workers) {
		s->wq = wq__new(&wo);
		if (!s->wq)
			s->nr_threads = 1; /* run on this thread alone */
	}
	/* only where workers will decode the frames ahead (not for count's or repair's walks) */
	for (size_t i = 0; i <= s->nr_more; i++)
		perf_reader__set_frame_helper(i ? s->more[i - 1].r : s->r, s->wq != NULL);
	return 0;
}

static void *prefetch_kernel(void *arg)
{
	struct report_session *s = arg;

	dso__preload(machine__kernel_dso(s->m), false);
	return NULL;
}

/* The files the first maps name, in that order, until the pass is over. */
static void *prefetch_files(void *arg)
{
	struct report_session *s = arg;
	struct dso *d;

	for (;;) {
		pthread_mutex_lock(&s->pf_lock);
		while (s->pf_head == s->pf_tail && !s->pf_stop)
			pthread_cond_wait(&s->pf_cond, &s->pf_lock);
		d = s->pf_stop ? NULL : s->pf_queue[s->pf_head++];
		pthread_mutex_unlock(&s->pf_lock);
		if (!d)
			return NULL;
		dso__preload(d, s->opts.prefetch_dwarf);
	}
}

/* machine's on_new_file, on the thread applying records */
static void prefetch_file(void *ctx, struct dso *d)
{
	struct report_session *s = ctx;

	pthread_mutex_lock(&s->pf_lock);
	if (s->prefetching[1] && !s->pf_stop && s->pf_tail < PREFETCH_MAX) {
		s->pf_queue[s->pf_tail++] = d;
		pthread_cond_signal(&s->pf_cond);
	}
	pthread_mutex_unlock(&s->pf_lock);
}

/* What the first samples would otherwise wait for in turn, one thread at a time (reading
 * /proc/kallsyms, libc's compressed DWARF: a tenth of a pass each), loads from the start, on
 * two threads of their own, in parallel with each other and with decoding and reading: the
 * kernel's symbols (when an event counts the kernel), and the files as the first maps name
 * them (symbols, and DWARF when the sinks ask for it). One thread means one: nothing loads
 * ahead. A thread that cannot start leaves its loads to first use. */
static void prefetch_start(struct report_session *s)
{
	void *(*fn[2])(void *) = { prefetch_kernel, prefetch_files };
	bool kernel = false;

	if (s->nr_threads < 2 || s->opts.addresses_only)
		return;
	/* kernel symbols only for a file whose events count the kernel */
	for (size_t i = 0; i < perf_reader__nr_attrs(s->r); i++)
		kernel |= !perf_reader__attr(s->r, i)->attr.exclude_kernel;
	for (int i = 0; i < 2; i++)
		if (i || kernel)
			s->prefetching[i] = !pthread_create(&s->prefetch[i], NULL, fn[i], s);
}

static void prefetch_join(struct report_session *s)
{
	pthread_mutex_lock(&s->pf_lock);
	s->pf_stop = true;
	pthread_cond_broadcast(&s->pf_cond);
	pthread_mutex_unlock(&s->pf_lock);
	for (int i = 0; i < 2; i++)
		if (s->prefetching[i]) {
			pthread_join(s->prefetch[i], NULL);
			s->prefetching[i] = false;
		}
	s->st.nr_preload_queued = s->pf_tail;
}

static void sum_unwind_stats(struct report_session *s)
{
	struct unwinder_stats us, *t = &s->st.unwind;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < s->nr_slots; i++) {
		if (!s->all[i])
			continue;
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
	prefetch_start(s);
	ret = walk_files(s, on_record, true);
	/* damage is not an error: what preceded it is delivered */
	e = flush_all(s, !ret);
	if (!ret)
		ret = e;
	prefetch_join(s);
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
	e = walk_files(s, on_count, false);
	return e;
}

const struct report_session_stats *report_session__stats(struct report_session *s)
{
	return &s->st;
}

const char *report_session__comm(struct report_session *s, int32_t tid, uint32_t thread)
{
	return s->m ? machine__thread_comm(s->m, tid, thread) : NULL;
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
	prefetch_join(s);
	wq__free(s->wq);
	for (int i = 0; i < 2; i++) {
		struct batch *b = &s->batches[i];

		for (size_t k = 0; k < b->n; k++) {
			map_snapshot__put(b->items[k].snap);
			perf_reader__release(b->items[k].ref);
		}
		free(b->items);
		free(b->frames);
		free(b->jobs);
		pthread_mutex_destroy(&b->lock);
		pthread_cond_destroy(&b->cond);
	}
	pthread_mutex_destroy(&s->pf_lock);
	pthread_cond_destroy(&s->pf_cond);
	for (size_t i = 0; i < s->nr_slots; i++)
		unwinder__free(s->all[i]);
	machine__free(s->m);
	perf_reader__free(s->r);
	for (size_t i = 0; i < s->nr_more; i++)
		perf_reader__free(s->more[i].r);
	free(s->more);
	for (size_t i = 0; i < s->nr_cgroups; i++)
		free(s->cgroups[i].path);
	free(s->cgroups);
	free(s->all);
	free(s->sinks);
	free(s->attr_samples);
	free(s->attr_lost);
	free(s->attr_bad);
	free(s->attr_bad_err);
	free(s->names);
	free(s);
}
