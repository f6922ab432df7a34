/* The unwinding copy. A filter of the report session gets every resolved sample and, in time
 * order among them, every kernel record; a sample is spliced: its call chain is rebuilt (the
 * recorded kernel part up to PERF_CONTEXT_USER, then PERF_CONTEXT_USER and the unwound user
 * frames' addresses, callers at their return address - 1 as perf keeps the frames it unwinds)
 * and its REGS_USER and STACK_USER fields, which sit next to each other in
 * the layout, are cut out; every other field stays as recorded. The attrs lose REGS_USER and
 * STACK_USER. Records are gathered into a buffer and written (compressed) once it holds
 * FLUSH_BYTES, followed by FINISHED_ROUND: everything before a round is older than what
 * follows it.
 *
 * Once stacks are call chains, the side-band shrinks to what the samples need: a first pass
 * over the file finds the threads with samples, then, through FORK records, the threads and
 * processes they inherited a name or mappings from; MMAP records of other processes and COMM,
 * FORK and EXIT records of other threads are left out, and so are mappings of data. On a busy
 * machine the records of processes that were never sampled (every short-lived command, every
 * thread of a thread pool that ran between two samples) outweigh the samples many times. */
#include "report/inject.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "perf/abi.h"
#include "perf/compress.h"
#include "perf/reader.h"
#include "perf/sample.h"
#include "perf/writer.h"
#include "report/session.h"

#define FLUSH_BYTES (4u << 20)
#define DROP (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
/* Linux's PID_MAX_LIMIT: pids and tids are below it. An id at or above it is always kept. */
#define ID_LIMIT (1u << 22)

/* The threads (tid) and processes (pid) whose side-band records the copy keeps: bitmaps over
 * the id space, 512 KiB each. */
struct needed {
	uint64_t *tid, *pid;
	struct fork_edge { int32_t pid, tid, ppid, ptid; } *forks;
	size_t nr_forks, cap_forks;
	bool all;                   /* keep everything: a sample without TID, or no memory */
};

struct inject {
	struct perf_reader *r;
	struct perf_writer *w;
	struct compress *z;
	uint8_t *buf;
	size_t len, cap;
	int err;
	struct inject_stats st;
	char why[512];          /* inject__error() */
	struct needed nd;
};

static bool id_in(const uint64_t *set, int32_t id)
{
	return (uint32_t)id >= ID_LIMIT || (set[(uint32_t)id / 64] >> ((uint32_t)id % 64) & 1);
}

/* Adds id; returns whether it was new. */
static bool id_add(uint64_t *set, int32_t id)
{
	uint64_t bit = 1ull << ((uint32_t)id % 64);

	if ((uint32_t)id >= ID_LIMIT || (set[(uint32_t)id / 64] & bit))
		return false;
	set[(uint32_t)id / 64] |= bit;
	return true;
}

static int scan_record(const struct perf_reader_record *rec, void *ctx)
{
	struct inject *in = ctx;
	struct needed *nd = &in->nd;
	const struct perf_event_header *h = rec->hdr;
	const int32_t *body = (const int32_t *)(h + 1);

	if (h->type == PERF_RECORD_SAMPLE) {
		const struct perf_reader_attr *a = rec->attr_index >= 0 ?
			perf_reader__attr(in->r, (size_t)rec->attr_index) : NULL;
		struct perf_sample ps;

		if (!a || !(a->attr.sample_type & PERF_SAMPLE_TID)) {
			nd->all = true;
			return 1;
		}
		if (perf_sample__parse(&a->attr, h, &ps) == 0) {
			id_add(nd->tid, (int32_t)ps.tid);
			id_add(nd->pid, (int32_t)ps.pid);
		}
	} else if (h->type == PERF_RECORD_FORK && h->size >= sizeof(*h) + 16) {
		if (nd->nr_forks == nd->cap_forks) {
			size_t nc = nd->cap_forks ? 2 * nd->cap_forks : 1024;
			struct fork_edge *ne = realloc(nd->forks, nc * sizeof(*ne));

			if (!ne) {
				nd->all = true;
				return 1;
			}
			nd->forks = ne;
			nd->cap_forks = nc;
		}
		/* pid, ppid, tid, ptid */
		nd->forks[nd->nr_forks++] = (struct fork_edge){ body[0], body[2], body[1], body[3] };
	}
	return 0;
}

/* The first pass: the threads with samples, then whom they inherited from, until nothing is
 * added (a child's FORK may come before its parent's in file order). A thread inherits its
 * name from the thread that cloned it; a process its mappings from the process it forked from.
 * When the file cannot be read through (the second pass says why) or memory runs out,
 * nd->all: nothing is left out. */
static void scan_needed(struct inject *in, const char *path)
{
	struct needed *nd = &in->nd;
	struct perf_reader *r = perf_reader__new(NULL);
	bool added = true;

	nd->tid = calloc(ID_LIMIT / 64, sizeof(uint64_t));
	nd->pid = calloc(ID_LIMIT / 64, sizeof(uint64_t));
	in->r = r;
	if (!r || !nd->tid || !nd->pid || perf_reader__open(r, path) < 0 ||
	    perf_reader__for_each(r, scan_record, in) < 0 || perf_reader__damage(r))
		nd->all = true;
	in->r = NULL;
	perf_reader__free(r);
	while (added && !nd->all) {
		added = false;
		for (size_t i = nd->nr_forks; i-- > 0;) {
			const struct fork_edge *f = &nd->forks[i];
			bool process = f->pid == f->tid && f->pid != f->ppid;

			if (id_in(nd->tid, f->tid))
				added |= id_add(nd->tid, f->ptid);
			if (process && id_in(nd->pid, f->pid)) {
				added |= id_add(nd->pid, f->ppid);
				added |= id_add(nd->tid, f->ptid);
			}
		}
	}
}

/* Whether the copy keeps side-band record h. */
static bool keep_side(const struct needed *nd, const struct perf_event_header *h)
{
	const int32_t *body = (const int32_t *)(h + 1);

	if ((h->type == PERF_RECORD_MMAP2 || h->type == PERF_RECORD_MMAP) &&
	    (h->misc & PERF_RECORD_MISC_MMAP_DATA))
		return false;
	if (nd->all || h->size < sizeof(*h) + 16)
		return true;
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:                 /* pid, tid: pid -1 is the kernel's */
		return body[0] == -1 || id_in(nd->pid, body[0]);
	case PERF_RECORD_COMM:                  /* pid, tid: an exec replaces the mappings */
		return id_in(nd->tid, body[1]) ||
		       ((h->misc & PERF_RECORD_MISC_COMM_EXEC) && id_in(nd->pid, body[0]));
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:                  /* pid, ppid, tid, ptid */
		return id_in(nd->tid, body[2]) || (body[0] == body[2] && id_in(nd->pid, body[0]));
	default:
		return true;
	}
}

static void put(struct inject *in, const void *p, size_t n)
{
	if (in->err)
		return;
	if (in->len + n > in->cap) {
		size_t nc = in->cap ? in->cap : FLUSH_BYTES + 65536;
		uint8_t *b;

		while (nc < in->len + n)
			nc *= 2;
		b = realloc(in->buf, nc);
		if (!b) {
			in->err = -ENOMEM;
			return;
		}
		in->buf = b;
		in->cap = nc;
	}
	memcpy(in->buf + in->len, p, n);
	in->len += n;
}

static int flush(struct inject *in)
{
	static const struct perf_event_header round = { PERF_RECORD_FINISHED_ROUND, 0, 8 };
	struct iovec iov[2];
	const void *out = in->buf;
	ssize_t n = (ssize_t)in->len;

	if (in->err || !in->len)
		return in->err;
	if (in->z) {
		n = compress__compress(in->z, in->buf, in->len, &out);
		if (n < 0) { /* write it plain: a reader takes both */
			out = in->buf;
			n = (ssize_t)in->len;
		}
	}
	iov[0] = (struct iovec){ (void *)out, (size_t)n };
	iov[1] = (struct iovec){ (void *)&round, sizeof(round) };
	in->err = perf_writer__append(in->w, iov, 2);
	in->len = 0;
	return in->err;
}

static bool unwindable(const struct perf_event_attr *a)
{
	return (a->sample_type & DROP) == DROP && (a->sample_type & PERF_SAMPLE_CALLCHAIN) &&
	       !(a->sample_type & PERF_SAMPLE_BRANCH_STACK);
}

/* The bytes of a sample from its REGS_USER field to the end of its STACK_USER field. */
static void user_span(const struct perf_sample *ps, const uint8_t **ret_lo, const uint8_t **ret_hi)
{
	const uint8_t *p = ps->raw ? ps->raw + ps->raw_size
				   : (const uint8_t *)(ps->callchain + ps->callchain_nr);

	*ret_lo = p;
	p += 8;                                              /* abi */
	if (ps->regs_abi)
		p += 8 * (size_t)__builtin_popcountll(ps->regs_mask);
	p += 8;                                              /* stack size */
	if (ps->stack_size)
		p += ps->stack_size + 8;                     /* stack, dyn_size */
	*ret_hi = p;
}

static int on_sample(void *ctx, struct report_session *s, const struct report_session_sample *ss)
{
	struct inject *in = ctx;
	const struct perf_sample *ps = ss->raw;
	const struct perf_event_header *h = ps->hdr;
	const uint8_t *rec = (const uint8_t *)h, *end = rec + h->size, *lo, *hi;
	const uint8_t *cc = (const uint8_t *)ps->callchain - 8;
	const uint8_t *cc_end = (const uint8_t *)(ps->callchain + ps->callchain_nr);
	uint64_t nk = 0, nu = 0, nr, marker = PERF_CONTEXT_USER;
	struct perf_event_header nh = *h;
	const struct perf_reader_attr *a = perf_reader__attr(in->r, ss->attr);

	in->st.samples++;
	if (!a || !unwindable(&a->attr) || !ps->callchain) {
		put(in, h, h->size);
		return in->err;
	}
	user_span(ps, &lo, &hi);
	if (lo < cc_end || hi > end) { /* cannot happen for a sample the decoder accepted */
		put(in, h, h->size);
		return in->err;
	}
	while (nk < ps->callchain_nr && ps->callchain[nk] != PERF_CONTEXT_USER)
		nk++;
	/* (an off_chain frame is the sampled ip alone, outside the chain: not written) */
	for (size_t i = 0; i < ss->nr_frames; i++)
		nu += !ss->frames[i].kernel && !ss->frames[i].off_chain;
	nr = nk + (nu ? 1 + nu : 0);
	nh.size = (uint16_t)(h->size - (cc_end - cc) + 8 + 8 * nr - (hi - lo));
	put(in, &nh, sizeof(nh));
	put(in, rec + sizeof(nh), (size_t)(cc - rec) - sizeof(nh));
	put(in, &nr, 8);
	put(in, ps->callchain, 8 * nk);
	if (nu) {
		put(in, &marker, 8);
		for (size_t i = 0; i < ss->nr_frames; i++) {
			/* a caller at its return address - 1, where perf puts the callers it
			 * unwinds itself: readers take call-chain entries as they are */
			uint64_t ip = ss->frames[i].ip - (ss->frames[i].caller ? 1 : 0);

			if (!ss->frames[i].kernel && !ss->frames[i].off_chain)
				put(in, &ip, 8);
		}
	}
	put(in, cc_end, (size_t)(lo - cc_end));
	put(in, hi, (size_t)(end - hi));
	in->st.unwound++;
	if (!in->err && in->len >= FLUSH_BYTES)
		flush(in);
	return in->err;
}

static int on_side(void *ctx, struct report_session *s, const struct perf_reader_record *rec)
{
	struct inject *in = ctx;
	const struct perf_event_header *h = rec->hdr;

	if (!keep_side(&in->nd, h)) {
		in->st.dropped++;
		return 0;
	}
	put(in, h, h->size);
	in->st.records++;
	if (h->type == PERF_RECORD_MMAP2 && h->size > sizeof(*h) + 64) {
		/* a dso for the BUILD_ID feature (read from disk at finalize, as precord does) */
		const char *name = (const char *)h + sizeof(*h) + 64;
		size_t max = h->size - sizeof(*h) - 64;

		if (memchr(name, 0, max) && name[0] == '/')
			perf_writer__add_dso(in->w, name, false);
	}
	if (!in->err && in->len >= FLUSH_BYTES)
		flush(in);
	return in->err;
}

/* The writer for the copy: the same events, without the user registers and stack. */
static struct perf_writer *open_copy(struct report_session *s, const char *out_path,
				     const struct inject_opts *o, bool *ret_any)
{
	struct perf_reader *r = report_session__reader(s);
	size_t n = perf_reader__nr_attrs(r);
	const struct perf_reader_info *info = perf_reader__info(r);
	_cleanup_free_ struct perf_writer_event *ev = calloc(n ? n : 1, sizeof(*ev));
	_cleanup_free_ struct perf_event_attr *attrs = calloc(n ? n : 1, sizeof(*attrs));
	struct perf_writer_opts wo = {
		.nr_events = n, .argc = info->cmdline_argc, .argv = (char *const *)info->cmdline_argv,
		.comp_level = o->comp_level, .comp_mmap_len = COMPRESS_MAX_DECOMPRESSED,
	};
	size_t td_len = 0;
	const void *td = perf_reader__feature(r, FEAT_TRACING_DATA, &td_len);

	if (!ev || !attrs)
		return NULL;
	*ret_any = false;
	for (size_t i = 0; i < n; i++) {
		const struct perf_reader_attr *a = perf_reader__attr(r, i);

		attrs[i] = a->attr;
		if (unwindable(&a->attr)) {
			attrs[i].sample_type &= ~(uint64_t)DROP;
			attrs[i].sample_regs_user = 0;
			attrs[i].sample_stack_user = 0;
			attrs[i].exclude_callchain_user = 0;
			*ret_any = true;
		}
		ev[i] = (struct perf_writer_event){ report_session__event_name(s, i), &attrs[i],
						    a->ids, a->nr_ids };
	}
	if (!*ret_any) {
		errno = EINVAL;
		return NULL;
	}
	wo.events = ev;
	wo.clock = info->has_clock ? &info->clock : NULL;
	wo.tracing_data = td;
	wo.tracing_len = td ? td_len : 0;
	return perf_writer__open(out_path, &wo);
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : 0;
}

struct inject *inject__new(void)
{
	return calloc(1, sizeof(struct inject));
}

const char *inject__error(const struct inject *in)
{
	return in->why;
}

void inject__free(struct inject *in)
{
	free(in);
}

static void setwhy(struct inject *in, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(in->why, sizeof(in->why), fmt, ap);
	va_end(ap);
}

/* The copy, from an open session. Returns 0 or -errno with in->why set. */
static int copy(struct inject *in, struct report_session *s, const char *in_path,
		const char *out_path, const struct inject_opts *o)
{
	struct report_filter f = { .sample = on_sample, .side = on_side, .ctx = in,
				   .side_types = ~(1ull << PERF_RECORD_SAMPLE) & ~1ull };
	bool any = true;
	int e;

	in->r = report_session__reader(s);
	in->w = open_copy(s, out_path, o, &any);
	if (!in->w) {
		e = -errno;
		if (!any)
			setwhy(in, "cannot unwind %s: no event of it has a stack copy to unwind",
			       in_path);
		else
			setwhy(in, "cannot create %s: %s", out_path, strerror(-e));
		return e;
	}
	if (o->comp_level && !(in->z = compress__new(o->comp_level))) {
		e = -errno;
		setwhy(in, "cannot set up compression for %s: %s", out_path, strerror(-e));
		return e;
	}
	e = report_session__set_filter(s, &f);
	if (!e)
		e = report_session__run(s);
	if (!e)
		e = flush(in);
	if (!e && perf_reader__damage(in->r)) {
		const struct perf_reader_damage *d = perf_reader__damage(in->r);

		setwhy(in, "%s is damaged at offset %llu: %s (preport --repair OUT rewrites what "
		       "precedes it)", in_path, (unsigned long long)d->offset,
		       d->reason ? d->reason : "unreadable");
		return -EBADMSG;
	}
	if (!e) {
		uint32_t version = 1;
		struct iovec iov = { &version, sizeof(version) };

		e = perf_writer__set_private(in->w, REPORT_UNWOUND_TAG, &iov, 1);
	}
	if (!e)
		e = perf_writer__finalize(in->w);
	if (e)
		setwhy(in, "cannot unwind %s into %s: %s", in_path, out_path, strerror(-e));
	return e;
}

int inject__unwind(struct inject *in, const char *in_path, const char *out_path,
		   const struct inject_opts *opts, struct inject_stats *ret_stats)
{
	static const struct inject_opts defaults;
	const struct inject_opts *o = opts ? opts : &defaults;
	/* the copy keeps addresses: no symbol is looked up (kernel symbols were a sixth of the
	 * time on a 60 s file of precordd's) */
	struct report_session_opts so = { .jobs = o->jobs, .addresses_only = true };
	struct report_session *s;
	uint64_t in_size = 0;
	int e;

	*in = (struct inject){ 0 };
	s = report_session__new(&so);
	if (!s) {
		setwhy(in, "cannot unwind %s: %s", in_path, strerror(ENOMEM));
		return -ENOMEM;
	}
	scan_needed(in, in_path);
	e = report_session__open(s, in_path);
	if (e < 0)
		setwhy(in, "%s", report_session__error(s));
	else
		e = copy(in, s, in_path, out_path, o);
	if (e && in->w)
		unlink(out_path);
	perf_writer__free(in->w);
	compress__free(in->z);
	free(in->buf);
	free(in->nd.tid);
	free(in->nd.pid);
	free(in->nd.forks);
	in->nd = (struct needed){ 0 };
	if (s && report_session__reader(s))
		in_size = perf_reader__size(report_session__reader(s));
	report_session__free(s);
	in->w = NULL;
	in->z = NULL;
	in->buf = NULL;
	if (!e) {
		in->st.bytes_in = in_size;
		in->st.bytes_out = (uint64_t)file_size(out_path);
		if (ret_stats)
			*ret_stats = in->st;
	}
	return e;
}
