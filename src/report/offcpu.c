/* The off-CPU filter. Records arrive in time order: a thread's switch-out sample is held (its
 * frames copied, its map snapshot referenced) until the thread's next switch-in, then handed on
 * weighted by the gap. Switch-ins come from PERF_RECORD_SWITCH (per-task recordings) and
 * PERF_RECORD_SWITCH_CPU_WIDE (-a) without the OUT flag; both carry the task switched in in their
 * sample_id. A thread's life, as seen here, runs from its first switch-in (or the first record
 * that names it) to its EXIT record; its last switch-out, after EXIT, is not off-CPU time. */
#include "report/offcpu.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/abi.h"
#include "perf/reader.h"
#include "perf/tracing_data.h"
#include "unwind/map_snapshot.h"
#include "unwind/symbols.h"

#ifndef PERF_RECORD_MISC_SWITCH_OUT
#define PERF_RECORD_MISC_SWITCH_OUT (1 << 13)
#endif

/* prev_state as the kernel reports it (TASK_REPORT): the state bits, and the preempted flag
 * one bit above them ("R+"). */
#define STATE_S 0x01
#define STATE_D 0x02
#define STATE_MASK 0xff

struct thr {
	struct offcpu_thread t;
	bool running, exited, seen_in;
	uint64_t in_time;
	/* wall-clock mode: an on-CPU sample weighs the on-CPU time since the thread's previous
	 * one (on_carry from earlier stretches, then from on_mark in this one), as the switches
	 * measure it, not the kernel's estimate of its period: they add up to on_ns */
	uint64_t on_carry, on_mark;
	/* the held switch-out */
	bool pending;
	uint64_t out_time;
	enum offcpu_state state;
	struct perf_sample ps;
	int32_t cpu;
	uint32_t thread;        /* report_session_sample.thread of the switch-out */
	const char *cgroup;
	bool filtered;
	struct map_snapshot *snap;
	struct unwind_frame *frames; /* [0] is the state's leaf frame */
	size_t nr_frames, cap;
};

struct offcpu {
	enum offcpu_mode mode;
	size_t sw_attr, on_attr, out_attr;
	uint32_t state_off, state_size;
	struct perf_reader *r;
	struct thr **thr;          /* in order of appearance */
	size_t nr, cap;
	int32_t *slots;            /* open addressing: tid -> index + 1 */
	size_t nr_slots;
	char err[256];             /* offcpu__error() */
};

static struct symbol state_syms[OFFCPU_NR_STATES] = {
	[OFFCPU_SLEEPING] = { .name = "[sleeping]" },
	[OFFCPU_IO] = { .name = "[blocked-io]" },
	[OFFCPU_PREEMPTED] = { .name = "[preempted]" },
	[OFFCPU_OTHER] = { .name = "[other-wait]" },
};

const char *offcpu__state_name(enum offcpu_state st)
{
	return st < OFFCPU_NR_STATES ? state_syms[st].name : "?";
}

static enum offcpu_state classify(uint64_t prev_state)
{
	uint64_t st = prev_state & STATE_MASK;

	if (!st)
		return OFFCPU_PREEMPTED; /* R or R+ */
	if (st & STATE_D)
		return OFFCPU_IO;
	if (st & STATE_S)
		return OFFCPU_SLEEPING;
	return OFFCPU_OTHER;
}

static int grow_slots(struct offcpu *o)
{
	size_t n = o->nr_slots ? o->nr_slots * 2 : 1024;
	int32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < o->nr; i++) {
		size_t h = (uint32_t)o->thr[i]->t.tid * 2654435761u % n;

		while (s[h])
			h = (h + 1) % n;
		s[h] = (int32_t)i + 1;
	}
	free(o->slots);
	o->slots = s;
	o->nr_slots = n;
	return 0;
}

/* The thread tid, made on first sight at time t. NULL only without memory. */
static struct thr *thread(struct offcpu *o, int32_t pid, int32_t tid, uint64_t t)
{
	size_t h;
	struct thr *th;

	if (o->nr_slots) {
		for (h = (uint32_t)tid * 2654435761u % o->nr_slots; o->slots[h]; h = (h + 1) % o->nr_slots)
			if (o->thr[o->slots[h] - 1]->t.tid == tid)
				return o->thr[o->slots[h] - 1];
	}
	if ((o->nr + 1) * 2 > o->nr_slots && grow_slots(o) < 0)
		return NULL;
	if (o->nr == o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 64;
		struct thr **n = realloc(o->thr, nc * sizeof(*n));

		if (!n)
			return NULL;
		o->thr = n;
		o->cap = nc;
	}
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	th->t.pid = pid;
	th->t.tid = tid;
	th->t.start = th->t.end = t;
	th->on_mark = t;
	o->thr[o->nr] = th;
	for (h = (uint32_t)tid * 2654435761u % o->nr_slots; o->slots[h]; h = (h + 1) % o->nr_slots)
		;
	o->slots[h] = (int32_t)++o->nr;
	return th;
}

static void drop_pending(struct thr *th)
{
	if (!th->pending)
		return;
	map_snapshot__put(th->snap);
	th->snap = NULL;
	th->pending = false;
}

/* th stops running at t (or is sampled at t): the on-CPU time since its last sample carries to
 * its next one. */
static void stretch_end(struct thr *th, uint64_t t)
{
	if ((th->running || !th->seen_in) && t >= th->on_mark)
		th->on_carry += t - th->on_mark;
	th->on_mark = t;
}

/* Hold a switch-out sample until the thread's switch-in. */
static int hold(struct offcpu *o, struct thr *th, const struct report_session_sample *ss)
{
	uint64_t prev_state = 0;
	const struct perf_sample *ps = ss->raw;

	if (ps->raw && o->state_off + o->state_size <= ps->raw_size && o->state_size <= 8)
		memcpy(&prev_state, ps->raw + o->state_off, o->state_size); /* little endian */
	if (ss->nr_frames + 1 > th->cap) {
		size_t nc = ss->nr_frames + 1 > 32 ? ss->nr_frames + 1 : 32;
		struct unwind_frame *f = realloc(th->frames, nc * sizeof(*f));

		if (!f)
			return -ENOMEM;
		th->frames = f;
		th->cap = nc;
	}
	drop_pending(th);
	th->state = classify(prev_state);
	th->frames[0] = (struct unwind_frame){ .sym = &state_syms[th->state], .kernel = true };
	memcpy(th->frames + 1, ss->frames, ss->nr_frames * sizeof(*ss->frames));
	th->nr_frames = ss->nr_frames + 1;
	th->thread = ss->thread;
	th->ps = *ps;
	th->ps.callchain = NULL, th->ps.callchain_nr = 0;
	th->ps.regs = NULL, th->ps.regs_abi = 0;
	th->ps.stack = NULL, th->ps.stack_size = th->ps.stack_dyn_size = 0;
	th->ps.raw = NULL, th->ps.raw_size = 0;
	th->cpu = ss->cpu;
	th->cgroup = ss->cgroup;
	th->filtered = ss->filtered;
	th->snap = ss->maps ? map_snapshot__get((struct map_snapshot *)ss->maps) : NULL;
	th->out_time = ps->time;
	th->pending = true;
	return 0;
}

static int on_sample(void *ctx, struct report_session *s, const struct report_session_sample *ss)
{
	struct offcpu *o = ctx;
	uint64_t t = ss->raw->time;
	struct thr *th = thread(o, (int32_t)ss->raw->pid, (int32_t)ss->raw->tid, t);

	if (!th)
		return -ENOMEM;
	if (t > th->t.end)
		th->t.end = t;
	snprintf(th->t.comm, sizeof(th->t.comm), "%s", ss->comm); /* it may have been renamed */
	if (ss->attr == o->sw_attr) {
		if (th->exited)
			return 0; /* its last switch-out, on its way out: not a wait */
		if (th->running && t >= th->in_time)
			th->t.on_ns += t - th->in_time;
		else if (!th->seen_in && t >= th->t.start)
			th->t.on_ns += t - th->t.start; /* running since before the first record */
		stretch_end(th, t);
		th->running = false;
		th->seen_in = true;
		return hold(o, th, ss);
	}
	if (o->mode == OFFCPU_WALL && ss->attr == o->on_attr) {
		struct report_session_sample fw = *ss;
		uint64_t w;

		stretch_end(th, t);
		w = th->on_carry;
		th->on_carry = 0;
		fw.attr = o->out_attr;
		fw.period = w ? w : ss->period;	/* nothing measured yet: the kernel's period */
		return report_session__emit(s, &fw);
	}
	return 0;
}

/* The switch-in of th at t: its held stack, weighted by the time it waited. */
static int switch_in(struct offcpu *o, struct report_session *s, struct thr *th, uint64_t t)
{
	int e = 0;

	if (th->pending && t >= th->out_time) {
		struct report_session_sample fw = {
			.attr = o->out_attr, .raw = &th->ps, .comm = th->t.comm[0] ? th->t.comm : ":unknown",
			.thread = th->thread, .cgroup = th->cgroup,
			.cpu = th->cpu, .period = t - th->out_time ? t - th->out_time : 1,
			.filtered = th->filtered, .maps = th->snap,
			.nr_frames = th->filtered ? 1 : th->nr_frames, .frames = th->frames,
		};

		th->t.off_ns[th->state] += t - th->out_time;
		th->t.nr_switches++;
		th->ps.period = fw.period;
		e = report_session__emit(s, &fw);
	}
	drop_pending(th);
	th->running = true;
	th->seen_in = true;
	th->exited = false;
	th->in_time = t;
	th->on_mark = t;
	return e;
}

static int on_side(void *ctx, struct report_session *s, const struct perf_reader_record *rec)
{
	struct offcpu *o = ctx;
	const struct perf_event_header *h = rec->hdr;
	const struct perf_reader_attr *a = perf_reader__attr(o->r, (size_t)rec->attr_index);
	struct perf_sample id;
	struct thr *th;
	uint64_t t = rec->time;

	if (!a || t == PERF_READER_NO_TIME)
		return 0;
	if (h->type == PERF_RECORD_EXIT) {
		struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } ex;

		if (h->size < sizeof(*h) + sizeof(ex))
			return 0;
		memcpy(&ex, h + 1, sizeof(ex));
		th = thread(o, (int32_t)ex.pid, (int32_t)ex.tid, t);
		if (!th)
			return -ENOMEM;
		if (th->running && t >= th->in_time)
			th->t.on_ns += t - th->in_time;
		stretch_end(th, t);
		th->running = false;
		th->exited = true;
		if (t > th->t.end)
			th->t.end = t;
		drop_pending(th);
		return 0;
	}
	if (perf_sample__parse_id(&a->attr, h, &id) < 0 || !(a->attr.sample_type & PERF_SAMPLE_TID))
		return 0;
	th = thread(o, (int32_t)id.pid, (int32_t)id.tid, t);
	if (!th)
		return -ENOMEM;
	if (t > th->t.end)
		th->t.end = t;
	if (h->type == PERF_RECORD_COMM)
		return 0; /* names the thread, marks its start (exec) */
	if (h->misc & PERF_RECORD_MISC_SWITCH_OUT)
		return 0; /* the sched_switch sample of the same switch holds the stack */
	return switch_in(o, s, th, t);
}

static int on_finish(void *ctx, struct report_session *s)
{
	struct offcpu *o = ctx;

	for (size_t i = 0; i < o->nr; i++)
		drop_pending(o->thr[i]); /* still waiting when the recording ended */
	return 0;
}

static bool is_time_clock(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);
}

struct offcpu *offcpu__new(void)
{
	return calloc(1, sizeof(struct offcpu));
}

const char *offcpu__error(const struct offcpu *o)
{
	return o->err;
}

static int refuse(struct offcpu *o, int err, const char *why)
{
	snprintf(o->err, sizeof(o->err), "%s", why);
	return err;
}

int offcpu__setup(struct offcpu *o, struct report_session *s, enum offcpu_mode mode)
{
	struct perf_reader *r = report_session__reader(s);
	size_t n = perf_reader__nr_attrs(r), len = 0;
	const void *td = perf_reader__feature(r, FEAT_TRACING_DATA, &len);
	bool have_sw = false, have_on = false, have_switches = false;
	struct report_filter f;
	int e;

	if (o->r)
		return refuse(o, -EBUSY, "the view is already set up");
	o->mode = mode;
	o->r = r;
	for (size_t i = 0; i < n; i++) {
		const struct perf_event_attr *a = &perf_reader__attr(r, i)->attr;
		const char *name = report_session__event_name(s, i);

		if (!have_sw && a->type == PERF_TYPE_TRACEPOINT && name &&
		    !strcmp(name, "sched:sched_switch") && (a->sample_type & PERF_SAMPLE_RAW)) {
			o->sw_attr = i;
			have_sw = true;
		}
		if (!have_on && is_time_clock(a)) {
			o->on_attr = i;
			have_on = true;
		}
		have_switches |= a->context_switch;
	}
	if (!have_sw)
		return refuse(o, -ENOENT, "it has no sched:sched_switch samples (record with precord --off-cpu)");
	if (!have_switches)
		return refuse(o, -ENOENT, "it has no context-switch records (record with precord --off-cpu)");
	if (mode == OFFCPU_WALL && !have_on)
		return refuse(o, -EINVAL, "its on-CPU samples are not timed (record cpu-clock or "
			      "task-clock: precord --off-cpu -e cpu-clock)");
	if (tracing_data__field(td, len, "sched", "sched_switch", "prev_state", &o->state_off,
				&o->state_size) < 0 || o->state_size > 8)
		return refuse(o, -EBADMSG, "its tracing data does not describe sched_switch's prev_state");
	o->out_attr = mode == OFFCPU_WALL ? o->on_attr : o->sw_attr;
	f = (struct report_filter){
		.sample = on_sample, .side = on_side, .finish = on_finish, .ctx = o,
		.side_types = 1ull << PERF_RECORD_SWITCH | 1ull << PERF_RECORD_SWITCH_CPU_WIDE |
			      1ull << PERF_RECORD_EXIT | 1ull << PERF_RECORD_COMM,
	};
	e = report_session__set_filter(s, &f);
	if (e < 0)
		return refuse(o, e, "another view already filters the samples");
	return 0;
}

size_t offcpu__attr(const struct offcpu *o)
{
	return o->out_attr;
}

size_t offcpu__nr_threads(const struct offcpu *o)
{
	return o->nr;
}

const struct offcpu_thread *offcpu__thread(const struct offcpu *o, size_t i)
{
	return i < o->nr ? &o->thr[i]->t : NULL;
}

void offcpu__free(struct offcpu *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nr; i++) {
		drop_pending(o->thr[i]);
		free(o->thr[i]->frames);
		free(o->thr[i]);
	}
	free(o->thr);
	free(o->slots);
	free(o);
}
