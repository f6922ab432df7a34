/* Reader threads. Each pass: note the writer's round, drain each owned ring in slices that fit
 * the staging buffer (the ring's tail moves as soon as a slice is copied, so the kernel gets its
 * space back before compression starts), then append each slice, or, when compressing, feed it
 * into the reader's open zstd frame. A frame stays open across passes (long frames let zstd's
 * long-distance matching find DWARF stack copies that repeat megabytes apart) and is appended
 * when it holds FRAME_BYTES, is FRAME_AGE_NS old, or at stop. The writer places FINISHED_ROUND
 * markers once every reader reports a pass whose records are all in the file, so a pass whose
 * records wait in an open frame is reported only when that frame is appended: an open frame
 * holds rounds back, which FRAME_AGE_NS bounds. Between passes a reader sleeps in poll() on its
 * rings' fds (woken by the kernel's wakeup watermark) and a stop eventfd.
 *
 * A failed append (a full disk) is never silent: its records are counted unwritten at once, or,
 * with hold_on_full, kept in memory while the reader stops draining and retries every poll_ms;
 * the rings then fill and --lossless pauses the target until the space is back. */
#include "record/readers.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/cleanup.h"
#include "perf/compress.h"
#include "record/evlist.h"
#include "perf/abi.h"
#include "perf/sample.h"
#include "perf/writer.h"
#include "ringbuf/ringbuf.h"
#include "lib/workqueue.h"

/* One slice: large enough for few appends, small enough to keep the ring moving. */
#define STAGING_SIZE (1024 * 1024)
/* When compressing, slices are fed to zstd, whose long-distance matching costs ~1-2 ms per MiB:
 * shorter slices bring the reader back to its rings sooner (the frame, not the slice, sets the
 * ratio). */
#define FEED_SLICE (256 * 1024)
/* A frame is appended once it holds this much input. A reader of the file in time order holds
 * about a frame of each ring's records, and decodes frames ahead, so the frame sets its memory:
 * on 265k-sample DWARF recordings of the mixed workload (2026-12-03, 5 each) 4 MiB frames made
 * files 3% larger than 8 MiB ones (26.8 against 26.0 bytes a sample; before stacks were cut to
 * their dyn_size, 4% larger than 8 MiB and 20% smaller than 1 MiB ones) and took preport's peak
 * memory at -j 2 from 80 to 66-69 MB, a little faster. */
#define FRAME_BYTES (4u << 20)
/* ... or once its first slice is this old: bounds how long rounds are held back (perf's reader
 * keeps every record since the last FINISHED_ROUND in memory) and what a killed recorder loses. */
#define FRAME_AGE_NS (200 * 1000 * 1000ull)

struct reader {
	struct readers *pool;
	unsigned int slot;
	size_t *rings;        /* ring indexes owned */
	size_t nr_rings;
	uint64_t *ring_max;   /* per owned ring: the largest record time drained from it */
	size_t cur;           /* the owned ring being drained */
	struct pollfd *pfds;  /* rings' fds, then the stop eventfd */
	struct compress *zc;
	size_t slice;         /* drain at most this much before compressing */
	uint8_t *staging;
	size_t staged;
	size_t drained;	/* the ring's bytes of the records staged (more than staged: compact_stack) */
	uint64_t frame_t0;    /* when the open frame got its first slice */
	bool held;            /* a completed pass's records wait in the open frame: */
	uint64_t held_round;  /* its round, reported when the frame is appended */
	uint64_t first_time, last_time;
	unsigned int writer_gen; /* the pool's writer_gen when first/last_time were reset */
	/* per-pass counters, folded into the pool's atomics after each slice */
	uint64_t records, samples, switches, lost_records, lost_events;
	uint64_t frame_records, frame_samples; /* fed into the open frame */
	/* hold_on_full: bytes that could not be appended, retried before anything else */
	uint8_t *pend;
	size_t pend_len, pend_cap;
	uint64_t pend_records, pend_samples, pend_raw; /* pend_raw: a frame's input size */
};

struct readers {
	struct readers_opts o;
	struct reader *r;
	unsigned int nr;
	int stop_fd;
	atomic_bool stopping;
	struct perf_sample_place time_at; /* where records carry their time */
	_Atomic uint64_t max_back; /* the largest step back in time within a ring (drain order) */
	bool stacks;   /* SAMPLE records carry user stacks */
	_Atomic uint64_t records, samples, switches, lost_records, lost_events, bytes_read,
		bytes_written, wakeups, discarded, unwritten_records, unwritten_samples,
		unwritten_bytes;
	atomic_int nr_waiting;
	atomic_int error;
	pthread_mutex_t done_lock;
	pthread_cond_t done_cond;
	unsigned int running;
	/* Held for reading for a whole pass, for writing by readers__swap_writer(): a pass appends
	 * to exactly one writer, and every pass that starts after a swap uses the new one. */
	pthread_rwlock_t swap_lock;
	unsigned int writer_gen;
};

/* The kernel copies dyn_size bytes of a user stack into a sample and skips the rest of the
 * size it reserved, which keeps whatever the ring held there a lap earlier: stale bytes of
 * older records (of any task the ring served). No reader looks past dyn_size (perf takes it as
 * the stack's size, and reads the dump's size from each sample, not from the attr), so the
 * staged copy keeps dyn_size rounded up to 8 bytes (at least one word, the rounding zeroed) and
 * the fields after the dump move down: on the mixed workload more than a quarter of each
 * sample's bytes. Returns the bytes the record lost. */
static size_t compact_stack(const struct readers *p, struct perf_event_header *rec)
{
	struct perf_sample s;
	uint8_t *dump, *after, *end = (uint8_t *)rec + rec->size;
	uint64_t keep;

	if (perf_sample__parse(p->o.attr, rec, &s) || !s.stack_size)
		return 0;
	keep = s.stack_dyn_size ? (s.stack_dyn_size + 7) & ~7ULL : 8;
	dump = (uint8_t *)s.stack;
	memset(dump + s.stack_dyn_size, 0, keep - s.stack_dyn_size);
	if (keep >= s.stack_size)
		return 0;
	after = dump + s.stack_size;    /* dyn_size, then what the ABI puts after the stack */
	memmove(dump + keep, after, (size_t)(end - after));
	memcpy(dump - 8, &keep, 8);
	rec->size -= (uint16_t)(s.stack_size - keep);
	return s.stack_size - keep;
}

/* A record's time, or 0 when it carries none. */
static uint64_t record_time(const struct readers *p, const struct perf_event_header *h)
{
	const uint8_t *at = perf_sample__at(h, p->time_at);
	uint64_t t = 0;

	if (at)
		memcpy(&t, at, 8);
	return t;
}

/* The kernel takes a record's time before it reserves the record's space, so a record written
 * from an interrupt in between comes first with a later time: the ring's order steps back in
 * time. The file's ring-order claim (ring_order.h) says by how much at most. */
static void note_order(struct reader *rd, uint64_t t)
{
	uint64_t *max = &rd->ring_max[rd->cur];

	if (t >= *max) {
		*max = t;
	} else if (t) {
		uint64_t back = *max - t, cur = atomic_load_explicit(&rd->pool->max_back,
								    memory_order_relaxed);

		while (back > cur && !atomic_compare_exchange_weak(&rd->pool->max_back, &cur, back))
			;
	}
}

static int on_record(void *ctx, const struct perf_event_header *h)
{
	struct reader *rd = ctx;
	struct readers *p = rd->pool;
	uint64_t t;

	if (rd->staged + h->size > rd->slice && rd->staged)
		return -1; /* slice full: flush, then this record comes again */
	memcpy(rd->staging + rd->staged, h, h->size);
	rd->staged += h->size;
	rd->drained += h->size;
	rd->records++;
	t = record_time(p, h);
	note_order(rd, t);
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		rd->samples++;
		if (p->stacks)
			rd->staged -= compact_stack(p, (struct perf_event_header *)(rd->staging +
										     rd->staged - h->size));
		if (t) {
			if (!rd->first_time || t < rd->first_time)
				rd->first_time = t;
			if (t > rd->last_time)
				rd->last_time = t;
		}
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		rd->switches++;
		break;
	case PERF_RECORD_LOST:
		if (h->size >= 24) {
			uint64_t n;

			memcpy(&n, (const char *)h + 16, 8);
			rd->lost_records++;
			rd->lost_events += n;
		}
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (p->o.hooks.task && h->size >= 24) {
			uint32_t v[4]; /* pid, ppid, tid, ptid */

			memcpy(v, h + 1, sizeof(v));
			p->o.hooks.task(p->o.hooks.ctx, h->type, v[0], v[2]);
		}
		break;
	case PERF_RECORD_MMAP2:
		/* Executable mappings are candidates for the BUILD_ID feature. */
		perf_writer__note_mmap(p->o.writer, h);
		break;
	}
	return 0;
}

static void fold_counters(struct reader *rd)
{
	struct readers *p = rd->pool;

	atomic_fetch_add_explicit(&p->records, rd->records, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->samples, rd->samples, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->switches, rd->switches, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->lost_records, rd->lost_records, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->lost_events, rd->lost_events, memory_order_relaxed);
	rd->records = rd->samples = rd->switches = rd->lost_records = rd->lost_events = 0;
}

static void set_error(struct readers *p, int err)
{
	int zero = 0;

	atomic_compare_exchange_strong(&p->error, &zero, err);
}

/* Records that will never be in the file, counted once. */
static void unwritten(struct readers *p, uint64_t records, uint64_t samples, uint64_t bytes)
{
	atomic_fetch_add_explicit(&p->unwritten_records, records, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->unwritten_samples, samples, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->unwritten_bytes, bytes, memory_order_relaxed);
}

/* err refused an append for the writer's size limit (perf_writer_opts.max_data_size): what
 * it held is lost, not a write error, and the owner stops the recording. */
static bool past_limit(const struct readers *p, int err)
{
	return err == -EFBIG && perf_writer__limit_hit(p->o.writer);
}

/* err is a full disk (or quota, or file size) that may pass: not the writer's own limit */
static bool no_space(const struct readers *p, int err)
{
	return (err == -ENOSPC || err == -EDQUOT || err == -EFBIG) && !past_limit(p, err);
}

/* Append len bytes holding `records` records (`samples` samples; raw: a frame's input size, else
 * 0). On failure they are counted unwritten, or, with hold_on_full and no space while the
 * recording goes on, kept as the pending append. Returns 0 or -errno. */
static int append(struct reader *rd, const void *buf, size_t len, uint64_t records,
		  uint64_t samples, uint64_t raw)
{
	struct readers *p = rd->pool;
	struct iovec iov = { (void *)buf, len };
	int err = perf_writer__append(p->o.writer, &iov, 1);

	if (!err) {
		atomic_fetch_add_explicit(&p->bytes_written, len, memory_order_relaxed);
		if (raw)
			perf_writer__note_compression(p->o.writer, raw, len);
		return 0;
	}
	if (p->o.hold_on_full && no_space(p, err) && !atomic_load(&p->stopping)) {
		if (rd->pend_cap < len) {
			uint8_t *n = realloc(rd->pend, len);

			if (!n)
				goto lost;
			rd->pend = n;
			rd->pend_cap = len;
		}
		memcpy(rd->pend, buf, len);
		rd->pend_len = len;
		rd->pend_records = records;
		rd->pend_samples = samples;
		rd->pend_raw = raw;
		atomic_fetch_add(&p->nr_waiting, 1);
		return err;
	}
lost:
	if (!past_limit(p, err))
		set_error(p, err);
	unwritten(p, records, samples, raw ? raw : len);
	return err;
}

/* Try the pending append again; at stop, give it up as unwritten. Returns true when nothing is
 * pending any more. */
static bool retry_pending(struct reader *rd)
{
	struct readers *p = rd->pool;
	struct iovec iov = { rd->pend, rd->pend_len };
	int err;

	if (!rd->pend_len)
		return true;
	err = perf_writer__append(p->o.writer, &iov, 1);
	if (err && no_space(p, err) && !atomic_load(&p->stopping))
		return false;
	if (err) {
		if (!past_limit(p, err))
			set_error(p, err);
		unwritten(p, rd->pend_records, rd->pend_samples,
			  rd->pend_raw ? rd->pend_raw : rd->pend_len);
	} else {
		atomic_fetch_add_explicit(&p->bytes_written, rd->pend_len, memory_order_relaxed);
		if (rd->pend_raw)
			perf_writer__note_compression(p->o.writer, rd->pend_raw, rd->pend_len);
	}
	rd->pend_len = 0;
	atomic_fetch_sub(&p->nr_waiting, 1);
	/* A frame's pass, held until the frame was in the file, is complete now. */
	if (rd->held && !(rd->zc && compress__fed(rd->zc))) {
		perf_writer__pass_done(p->o.writer, rd->slot, rd->held_round);
		rd->held = false;
	}
	return true;
}

/* End the open frame and append it; then a pass whose records it held is complete. */
static void finish_frame(struct reader *rd)
{
	struct readers *p = rd->pool;
	size_t fed = compress__fed(rd->zc);
	const void *out;
	ssize_t n;

	if (!fed)
		return;
	n = compress__finish(rd->zc, &out);
	if (n > 0) {
		if (append(rd, out, n, rd->frame_records, rd->frame_samples, fed) < 0 && rd->pend_len) {
			/* held: the pass is done once the frame is in the file */
			rd->frame_records = rd->frame_samples = 0;
			return;
		}
	} else if (n < 0) {
		set_error(p, (int)n); /* the frame's records are lost: say so at the end */
		unwritten(p, rd->frame_records, rd->frame_samples, fed);
	}
	rd->frame_records = rd->frame_samples = 0;
	if (rd->held) {
		perf_writer__pass_done(p->o.writer, rd->slot, rd->held_round);
		rd->held = false;
	}
}

/* Append what is staged, or feed it into the open frame when compressing (appending the frame
 * when it is full). */
static void flush_staging(struct reader *rd)
{
	struct readers *p = rd->pool;

	if (!rd->staged)
		return;
	atomic_fetch_add_explicit(&p->bytes_read, rd->drained, memory_order_relaxed);
	rd->drained = 0;
	if (perf_writer__limit_hit(p->o.writer)) {
		/* past max_data_size nothing more is written: lost without being compressed */
		unwritten(p, rd->records, rd->samples, rd->staged);
		goto done;
	}
	if (rd->zc) {
		bool first = !compress__fed(rd->zc);
		int err = compress__feed(rd->zc, rd->staging, rd->staged);

		if (!err) {
			if (first)
				rd->frame_t0 = clock__ns();
			rd->frame_records += rd->records;
			rd->frame_samples += rd->samples;
			if (compress__fed(rd->zc) >= FRAME_BYTES)
				finish_frame(rd);
			goto done;
		}
		/* -ENOMEM left the frame as it was: append it, then these records as they are.
		 * -EIO dropped the frame: say so at the end, keep what can still be kept. */
		if (err == -ENOMEM) {
			finish_frame(rd);
		} else {
			set_error(p, err);
			unwritten(p, rd->frame_records, rd->frame_samples, 0);
			rd->frame_records = rd->frame_samples = 0;
		}
		if (rd->pend_len) {
			/* the frame waits for space: these records wait in the ring's stead */
			unwritten(p, rd->records, rd->samples, rd->staged);
			set_error(p, -ENOSPC);
			goto done;
		}
	}
	append(rd, rd->staging, rd->staged, rd->records, rd->samples, 0);
done:
	rd->staged = 0;
	fold_counters(rd);
}

/* Drain every owned ring until it is empty; returns true if anything was read. */
static bool pass(struct reader *rd)
{
	struct readers *p = rd->pool;
	uint64_t started;
	bool any = false;

	pthread_rwlock_rdlock(&p->swap_lock);
	if (rd->writer_gen != p->writer_gen) {
		/* a new file: its SAMPLE_TIME range starts afresh */
		rd->writer_gen = p->writer_gen;
		rd->first_time = rd->last_time = 0;
	}
	started = perf_writer__round(p->o.writer);
	if (!retry_pending(rd)) {
		/* No space yet: leave the rings as they are (they fill; --lossless pauses the
		 * target) and report no pass, so no round can end before these records. */
		pthread_rwlock_unlock(&p->swap_lock);
		return false;
	}

	for (size_t i = 0; i < rd->nr_rings && !rd->pend_len; i++) {
		size_t ri = rd->rings[i];
		struct ringbuf *rb = evlist__ring(p->o.evlist, ri);

		rd->cur = i;
		if (p->o.hooks.fill)
			p->o.hooks.fill(p->o.hooks.ctx, ri, ringbuf__fill_permille(rb));
		/* Bounded per ring so a busy ring cannot starve the reader's others. */
		for (size_t got = 0, budget = 2 * ringbuf__size(rb);;) {
			size_t before = rd->staged;
			ssize_t n = ringbuf__drain(rb, on_record, rd, rd->slice - rd->staged);

			got += rd->staged - before;
			if (p->o.hooks.fill)
				p->o.hooks.fill(p->o.hooks.ctx, ri, ringbuf__fill_permille(rb));
			if (rd->staged > before)
				any = true;
			if (n == -EBADMSG)
				continue; /* resynchronised; the ring counts what it discarded */
			if (n < 0 || ringbuf__used(rb)) {
				/* the slice is full or more has arrived: make room, go on */
				flush_staging(rd);
				if (got < budget && !rd->pend_len)
					continue;
			}
			break;
		}
		if (p->o.hooks.fill)
			p->o.hooks.fill(p->o.hooks.ctx, ri, ringbuf__fill_permille(rb));
	}
	flush_staging(rd);
	if (rd->first_time)
		perf_writer__note_time(p->o.writer, rd->first_time, rd->last_time);
	if (rd->pend_len) {
		/* this pass's records wait for space: it is not complete */
		pthread_rwlock_unlock(&p->swap_lock);
		atomic_fetch_add_explicit(&p->wakeups, 1, memory_order_relaxed);
		return any;
	}
	/* The stop's last passes end the frame, so that everything is in the file. */
	if (rd->zc && compress__fed(rd->zc) &&
	    (atomic_load(&p->stopping) || clock__ns() - rd->frame_t0 >= FRAME_AGE_NS))
		finish_frame(rd);
	if (rd->zc && compress__fed(rd->zc)) {
		/* Records of this pass wait in the open frame. While they do this slot reports
		 * nothing, so the round cannot move on: held_round is the round every pass since
		 * the frame's first began in. */
		rd->held = true;
		rd->held_round = started;
	} else {
		rd->held = false;
		perf_writer__pass_done(p->o.writer, rd->slot, started);
	}
	pthread_rwlock_unlock(&p->swap_lock);
	atomic_fetch_add_explicit(&p->wakeups, 1, memory_order_relaxed);
	return any;
}

static void reader_main(void *arg)
{
	struct reader *rd = arg;
	struct readers *p = rd->pool;

	/* A reader runs briefly and must run soon after the kernel wakes it, even on CPUs the
	 * target keeps busy: real-time priority when asked, else a better nice value. Best
	 * effort: without CAP_SYS_NICE the readers run at normal priority. (The recorder does
	 * not ask, even for --lossless: see record.c.) */
	if (p->o.realtime) {
		struct sched_param sp = { .sched_priority = 10 };

		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	} else {
		setpriority(PRIO_PROCESS, (id_t)gettid(), -10);
	}
	while (!atomic_load(&p->stopping)) {
		pass(rd);
		/* Waiting for space: sleep on the stop eventfd alone (the full rings would wake
		 * the poll at once) and try again after poll_ms. */
		if (rd->pend_len ? poll(rd->pfds + rd->nr_rings, 1, p->o.poll_ms) < 0 :
				   poll(rd->pfds, rd->nr_rings + 1, p->o.poll_ms) < 0) {
			if (errno != EINTR)
				break;
		}
	}
	/* Events are disabled by now: drain what is left, twice in case a record was in flight. */
	pass(rd);
	pass(rd);
	if (p->o.realtime) {
		struct sched_param sp = { .sched_priority = 0 };

		pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	}
	pthread_mutex_lock(&p->done_lock);
	p->running--;
	pthread_cond_broadcast(&p->done_cond);
	pthread_mutex_unlock(&p->done_lock);
}

void readers__free(struct readers *p)
{
	if (!p)
		return;
	readers__stop(p);
	for (unsigned int i = 0; p->r && i < p->nr; i++) {
		compress__free(p->r[i].zc);
		free(p->r[i].staging);
		free(p->r[i].rings);
		free(p->r[i].ring_max);
		free(p->r[i].pfds);
		free(p->r[i].pend);
	}
	free(p->r);
	if (p->stop_fd >= 0)
		close(p->stop_fd);
	pthread_mutex_destroy(&p->done_lock);
	pthread_cond_destroy(&p->done_cond);
	pthread_rwlock_destroy(&p->swap_lock);
	free(p);
}

struct readers *readers__start(const struct readers_opts *o)
{
	size_t nr_rings = evlist__nr_rings(o->evlist);
	struct readers *p;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->o = *o;
	if (p->o.poll_ms <= 0)
		p->o.poll_ms = 100;
	p->stop_fd = -1;
	pthread_mutex_init(&p->done_lock, NULL);
	pthread_cond_init(&p->done_cond, NULL);
	{
		/* A swap must not wait behind an endless overlap of passes: prefer the writer. */
		pthread_rwlockattr_t ra;

		pthread_rwlockattr_init(&ra);
		pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&p->swap_lock, &ra);
		pthread_rwlockattr_destroy(&ra);
	}
	p->nr = o->nr_readers ? o->nr_readers : nr_rings;
	if (p->nr > nr_rings)
		p->nr = nr_rings;
	p->time_at = perf_sample__place(o->attr, PERF_SAMPLE_TIME);
	p->stacks = o->attr->sample_type & PERF_SAMPLE_STACK_USER;
	p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->r = calloc(p->nr, sizeof(*p->r));
	if (p->stop_fd < 0 || !p->r)
		goto err;
	for (unsigned int i = 0; i < p->nr; i++) {
		struct reader *rd = &p->r[i];

		rd->pool = p;
		rd->slot = i;
		rd->rings = calloc(nr_rings / p->nr + 1, sizeof(size_t));
		rd->ring_max = calloc(nr_rings / p->nr + 1, sizeof(uint64_t));
		rd->pfds = calloc(nr_rings / p->nr + 2, sizeof(struct pollfd));
		rd->slice = o->comp_level > 0 ? FEED_SLICE : STAGING_SIZE;
		if (o->max_slice && o->max_slice < rd->slice)
			rd->slice = o->max_slice;
		if (rd->slice < PERF_RECORD_MAX_SIZE + 1)
			rd->slice = PERF_RECORD_MAX_SIZE + 1;
		rd->staging = malloc(rd->slice);
		if (!rd->rings || !rd->ring_max || !rd->pfds || !rd->staging)
			goto err;
		if (o->comp_level > 0 && !(rd->zc = compress__new(o->comp_level)))
			goto err;
		if (rd->zc && o->fast_compress && (err = compress__set_long_matching(rd->zc, false)) < 0) {
			errno = -err;
			goto err;
		}
	}
	for (size_t ri = 0; ri < nr_rings; ri++) {
		struct reader *rd = &p->r[ri % p->nr];

		rd->pfds[rd->nr_rings] = (struct pollfd){ .fd = evlist__ring_fd(o->evlist, ri),
							  .events = POLLIN };
		rd->rings[rd->nr_rings++] = ri;
	}
	err = perf_writer__set_round_slots(o->writer, p->nr);
	if (err) {
		errno = -err;
		goto err;
	}
	for (unsigned int i = 0; i < p->nr; i++) {
		struct reader *rd = &p->r[i];

		rd->pfds[rd->nr_rings] = (struct pollfd){ .fd = p->stop_fd, .events = POLLIN };
		pthread_mutex_lock(&p->done_lock);
		p->running++;
		pthread_mutex_unlock(&p->done_lock);
		err = wq__submit(o->wq, i, reader_main, rd);
		if (err) {
			pthread_mutex_lock(&p->done_lock);
			p->running--;
			pthread_mutex_unlock(&p->done_lock);
			errno = -err;
			goto err;
		}
	}
	return p;
err:;
	int saved = errno;
	readers__free(p);
	errno = saved;
	return NULL;
}

void readers__stats(const struct readers *p, struct readers_stats *s)
{
	struct readers *q = (struct readers *)p;

	s->records = atomic_load(&q->records);
	s->samples = atomic_load(&q->samples);
	s->switches = atomic_load(&q->switches);
	s->lost_records = atomic_load(&q->lost_records);
	s->lost_events = atomic_load(&q->lost_events);
	s->bytes_read = atomic_load(&q->bytes_read);
	s->bytes_written = atomic_load(&q->bytes_written);
	s->wakeups = atomic_load(&q->wakeups);
	s->unwritten_records = atomic_load(&q->unwritten_records);
	s->unwritten_samples = atomic_load(&q->unwritten_samples);
	s->unwritten_bytes = atomic_load(&q->unwritten_bytes);
	s->waiting = atomic_load(&q->nr_waiting) > 0;
	s->max_back_ns = atomic_load(&q->max_back);
	s->ring_discarded = 0;
	for (size_t i = 0; i < evlist__nr_rings(p->o.evlist); i++)
		s->ring_discarded += ringbuf__discarded(evlist__ring(p->o.evlist, i));
	s->error = atomic_load(&q->error);
}

unsigned int readers__count(const struct readers *p)
{
	return p->nr;
}

int readers__stop(struct readers *p)
{
	uint64_t one = 1;

	if (!atomic_exchange(&p->stopping, true) && p->stop_fd >= 0) {
		if (write(p->stop_fd, &one, sizeof(one)) < 0) {
			/* the eventfd cannot overflow here; poll_ms bounds the wait anyway */
		}
	}
	pthread_mutex_lock(&p->done_lock);
	while (p->running)
		pthread_cond_wait(&p->done_cond, &p->done_lock);
	pthread_mutex_unlock(&p->done_lock);
	return atomic_load(&p->error);
}

int readers__swap_writer(struct readers *p, struct perf_writer *w)
{
	int err;

	pthread_rwlock_wrlock(&p->swap_lock);
	/* No pass is running: open frames hold records drained for the old file; end them
	 * there, so each file's rounds and compressed frames stay its own. */
	for (unsigned int i = 0; i < p->nr; i++) {
		struct reader *rd = &p->r[i];

		if (rd->zc)
			finish_frame(rd);
		if (rd->pend_len) {
			/* waiting for space in the old file, which is closed now */
			set_error(p, -ENOSPC);
			unwritten(p, rd->pend_records, rd->pend_samples,
				  rd->pend_raw ? rd->pend_raw : rd->pend_len);
			rd->pend_len = 0;
			rd->held = false;
			atomic_fetch_sub(&p->nr_waiting, 1);
		}
	}
	err = perf_writer__set_round_slots(w, p->nr);
	if (!err) {
		p->o.writer = w;
		p->writer_gen++;
	}
	pthread_rwlock_unlock(&p->swap_lock);
	return err;
}
