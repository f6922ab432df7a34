/* The record walk of the perf.data reader (see perf/reader.h: for_each, for_each_ordered,
 * stats): every record of the data section in file order, COMPRESSED records replaced by what
 * they decode to, delivered as they come or in perf's time order. A decoding side reads the file
 * and decodes (on the calling thread, or on a thread of its own); a delivering side hands
 * records on from the blocks they were decoded into, without copying them. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perf/order_queue.h"
#include "perf/reader_int.h"
#include "perf/ring_order.h"

/* ---- record classification: the time of a whole record ---- */

static uint64_t record_time(const struct perf_reader *r, const struct perf_event_header *rec,
			    int idx)
{
	const uint8_t *p = idx < 0 ? NULL : perf_sample__at(rec, r->places[idx].time);

	return p ? rd64(p) : PERF_READER_NO_TIME;
}

/* The CPU in a whole record, or UINT32_MAX when it carries none. */
static uint32_t record_cpu(const struct perf_reader *r, const struct perf_event_header *rec,
			   int idx)
{
	const uint8_t *p = idx < 0 ? NULL : perf_sample__at(rec, r->places[idx].cpu);

	return p ? rd32(p) : UINT32_MAX;
}

const struct perf_reader_stats *perf_reader__walk_stats(const struct perf_reader *r)
{
	return &r->walk_stats;
}

uint64_t perf_reader__frame_jobs(const struct perf_reader *r)
{
	return r->frame_jobs;
}

void perf_reader__set_decode_thread(struct perf_reader *r, bool on)
{
	r->decode_thread = on;
}

void perf_reader__set_frame_helper(struct perf_reader *r, bool on)
{
	r->frame_helper = on;
}

void perf_reader__set_idle_work(struct perf_reader *r, bool (*fn)(void *ctx), void *ctx)
{
	r->idle_fn = fn;
	r->idle_ctx = ctx;
}

uint64_t perf_reader__nr_unordered(const struct perf_reader *r)
{
	return r->nr_unordered;
}

size_t perf_reader__peak_queued(const struct perf_reader *r)
{
	return r->peak_queued;
}

/* ---- the record walk ---- */

/* Internal walk functions return 0 to go on or STOP; why they stopped (the callback's value,
 * -ENOMEM, or 0 for damage, which is recorded in the reader) is in walk.result. */
#define STOP 1
/* With a decoding thread: items queued between it and the delivering thread, and how many
 * blocks it may fill ahead of the one being delivered. With 4, on a 335k-sample perf -z file at
 * -j 2 the decoding thread waited 100-128 ms in all, most of it at the start, where the other two
 * threads wait 50 ms for the kernel's symbols, and the delivering thread then waited 200-280 ms
 * for it (instrumented build); with 12, 54-65 ms and 115-130 ms, -j 2 took 0.58-0.62 s against
 * 0.65-0.70 s (medians of alternating runs) and peak memory 85 MB against 72 MB. */
#define PIPE_ITEMS 256
#define PIPE_AHEAD_BLOCKS 12
/* Items queued before a waiting delivering side is woken. */
#define PIPE_WAKE 16
/* A decoder that had to wait goes on once it has room for several items or blocks, not one:
 * woken for each, the two sides took turns on one CPU every few microseconds. */
#define PIPE_RESUME_ITEMS (PIPE_ITEMS / 2)
#define PIPE_RESUME_BLOCKS (PIPE_AHEAD_BLOCKS - 2)

struct walk;
/* rec->ref NULL: rec->hdr stays valid after the call (it points into the mapping). */
typedef int (*sink_fn)(struct walk *w, const struct perf_reader_record *rec);


/* What the decoding side hands the delivering side, in file order. */
enum item_kind {
	IT_PLAIN,       /* the record at off, in the mapping */
	IT_CONTAINER,   /* the COMPRESSED record at off (counted only) */
	IT_SEGMENT,     /* bytes [start, end) of blk, decoded from the COMPRESSED record at off */
	IT_DAMAGE,      /* zstd failed on the COMPRESSED record at off: reason */
	IT_ERROR,       /* err (-ENOMEM) */
	IT_END,         /* no more; off: the last COMPRESSED record */
	IT_FRAME,       /* the items of a whole zstd frame, decoded apart: job */
};

struct frame_job;

struct item {
	enum item_kind kind;
	int err;
	uint64_t off;
	struct perf_reader_ref *blk; /* IT_SEGMENT: a reference of the item's own */
	size_t start, end;
	struct frame_job *job;       /* IT_FRAME */
	char reason[96];
};

/* The decoding side: the file's records in order, COMPRESSED payloads decoded into blocks. */
struct decoder {
	ZSTD_DCtx **dsp;    /* where its zstd context is kept across walks */
	ZSTD_DCtx *ds;
	struct frame_job *job; /* its items go to this job's list, not to the walk */
	size_t need;        /* bytes of the next unit zstd takes (0: a frame starts) */
	uint8_t *stage;     /* a unit cut between payloads, gathered */
	size_t staged;
	uint8_t fhdr[ZSTD_FRAMEHEADERSIZE_MAX]; /* the frame header being read */
	size_t nr_fhdr;
	bool skipping;      /* inside a skippable frame's content */
	struct perf_reader_ref *blk, *prev; /* output block; the one before, zstd's history */
	size_t len, seg;    /* bytes in blk; where the segment not yet handed on starts */
	uint64_t off;       /* the COMPRESSED record being decoded */
	struct perf_reader_ref *last_pushed; /* block of the last segment (for the pipe's limit) */
};

/* The pipe between a decoding thread and the delivering (calling) thread. */
struct pipe {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* either side waits on it; both signal it */
	struct item *ring;
	size_t head, tail;          /* counts: items popped, pushed */
	uint64_t blocks_pushed, blocks_seen;
	bool c_waiting, p_waiting;  /* the delivering, the decoding side waits on cond */
	bool p_far;                 /* the decoding side waits for blocks, not items */
	bool stop;                  /* the delivering side stopped: the decoder ends */
	/* frame jobs pushed and not yet delivered, oldest first (see produce_frames) */
	struct frame_job *jobs, **jobs_tail;
	size_t nr_jobs;
	size_t nr_claimed;          /* of them, decoded or being decoded */
	bool p_jobs;                /* the decoding side waits for nr_jobs to drop to p_wake_at */
	size_t p_wake_at;
};

struct walk {
	struct perf_reader *r;
	sink_fn sink;
	perf_reader_fn fn;
	void *ctx;
	int result;
	struct perf_reader_stats *stats;
	struct decoder dec;
	struct decoder pdec, cdec; /* frame jobs' decoders on the decoding, the delivering side */
	struct decoder hdec;       /* and a helper's (perf_reader__decode_ahead) */
	struct pipe *pipe;  /* NULL: the decoder delivers as it goes, on the calling thread */
	bool in_job;        /* the delivering side takes a frame job's items (not the pipe's) */
	/* delivering side: decompressed bytes not yet delivered are data[head, end) of blk; a
	 * record cut by the end of a block is gathered in carry */
	struct perf_reader_ref *blk;
	size_t head, end;
	uint8_t *carry;
	size_t nr_carry;
	/* ordered mode */
	struct order_queue q;
	uint64_t next_flush, max_time, last_flush;
	size_t queued_bytes;
	size_t peak_queued;
	/* ordered mode with the file's ring-order claim (perf/ring_order.h): per CPU stream (one
	 * ring each) the largest time seen; stream_of maps a CPU to its stream, -1 for none */
	int32_t *stream_of;
	uint32_t nr_stream_of;
	uint64_t *stream_last;
	uint32_t nr_streams, stream_min; /* stream_min: a stream whose last time is the least */
	uint64_t stream_back;            /* the claim's largest step back in a ring */
	/* decoding side: a run from a COMPRESSED record, [rel_lo, rel_hi) of the file, decoded or
	 * gathered already (see map_consumed); rel_open: a COMPRESSED record began one */
	uint64_t rel_lo, rel_hi;
	bool rel_open;
};

static int fail(struct walk *w, int err)
{
	w->result = err;
	return STOP;
}

static void block_unmap(struct perf_reader_ref *b)
{
	munmap(b, sizeof(*b) + b->cap);
}

void walk_free_blocks(struct perf_reader *r)
{
	while (r->nr_free_blocks)
		block_unmap(r->free_blocks[--r->nr_free_blocks]);
}

/* Blocks are made by the decoding side and released by both: refs are atomic, the cache of free
 * blocks and block_cap are under block_lock. */
static struct perf_reader_ref *block_new(struct perf_reader *r)
{
	struct perf_reader_ref *b = NULL;
	size_t cap;

	pthread_mutex_lock(&r->block_lock);
	if (!r->block_cap)
		r->block_cap = BLOCK_CAP;
	cap = r->block_cap;
	while (r->nr_free_blocks && r->free_blocks[r->nr_free_blocks - 1]->cap < cap)
		block_unmap(r->free_blocks[--r->nr_free_blocks]); /* from before a larger window */
	if (r->nr_free_blocks)
		b = r->free_blocks[--r->nr_free_blocks];
	pthread_mutex_unlock(&r->block_lock);
	if (!b) {
		void *m = mmap(NULL, sizeof(*b) + cap, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return NULL;
		b = m;
		b->cap = cap;
	}
	b->r = r;
	atomic_init(&b->refs, 1);
	b->small = false;
	return b;
}

/* A block of cap bytes of its own, freed (not cached) when its last reference goes. */
static struct perf_reader_ref *block_sized(struct perf_reader *r, size_t cap)
{
	struct perf_reader_ref *b = malloc(sizeof(*b) + cap);

	if (!b)
		return NULL;
	b->r = r;
	atomic_init(&b->refs, 1);
	b->small = true;
	b->cap = cap;
	return b;
}

/* An aligned copy of one record that lies misaligned in the file, as a block of its own. */
static struct perf_reader_ref *block_copy(struct perf_reader *r, const void *rec, size_t size)
{
	struct perf_reader_ref *b = block_sized(r, size);

	if (b)
		memcpy(b->data, rec, size);
	return b;
}

static void block_put(struct perf_reader_ref *b)
{
	struct perf_reader *r;

	if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
		return;
	r = b->r;
	if (!b->small) {
		pthread_mutex_lock(&r->block_lock);
		if (b->cap >= r->block_cap && r->nr_free_blocks < BLOCK_CACHE) {
			r->free_blocks[r->nr_free_blocks++] = b;
			b = NULL;
		}
		pthread_mutex_unlock(&r->block_lock);
		if (b)
			block_unmap(b);
		return;
	}
	free(b);
}

struct perf_reader_ref *perf_reader__hold(const struct perf_reader_record *rec)
{
	struct perf_reader_ref *b = rec->ref;

	if (b)
		atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
	return b;
}

void perf_reader__release(struct perf_reader_ref *ref)
{
	block_put(ref);
}

/* Decompressed records are counted here; plain ones (COMPRESSED containers among them) by
 * count_plain. */
static void count_record(struct perf_reader_stats *s, const struct perf_event_header *h,
			 bool compressed)
{
	if (compressed) {
		s->total++;
		if (h->type < PERF_RECORD_HEADER_MAX)
			s->nr_by_type[h->type]++;
		else
			s->nr_other++;
	}
	/* LOST: {u64 id, u64 lost}; LOST_SAMPLES: {u64 lost}. */
	if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 16)
		s->total_lost += rd64((const uint8_t *)(h + 1) + 8);
	else if (h->type == PERF_RECORD_LOST_SAMPLES && h->size >= sizeof(*h) + 8)
		s->total_lost_samples += rd64(h + 1);
}

static void count_plain(struct perf_reader_stats *s, uint32_t type)
{
	if (!s)
		return;
	s->total++;
	if (type < PERF_RECORD_HEADER_MAX)
		s->nr_by_type[type]++;
	else
		s->nr_other++;
}

static int deliver(struct walk *w, const struct perf_event_header *h, uint64_t off,
		   bool compressed, struct perf_reader_ref *ref)
{
	struct perf_reader_record rec = {
		.hdr = h,
		.offset = off,
		.compressed = compressed,
		.ref = ref,
	};

	rec.attr_index = perf_reader__attr_index(w->r, h);
	if (rec.attr_index < 0)
		rec.attr_index = -1;
	rec.time = record_time(w->r, h, rec.attr_index);
	if (w->stats)
		count_record(w->stats, h, compressed);
	return w->sink(w, &rec);
}

/* ---- delivering side ---- */

static bool bad_size(uint16_t size)
{
	return size < sizeof(struct perf_event_header) || size % 8;
}

/* Bytes of the current block towards the record in carry; delivers it once whole. */
static int fill_carry(struct walk *w, uint64_t off)
{
	struct perf_event_header h;
	struct perf_reader_ref *b;
	size_t want, take;
	int stop;

	for (;;) {
		want = sizeof(h);
		if (w->nr_carry >= sizeof(h)) {
			memcpy(&h, w->carry, sizeof(h));
			if (bad_size(h.size)) {
				reader__data_damage(w->r, off, "bad record size inside compressed data");
				return STOP;
			}
			want = h.size;
			if (w->nr_carry == want)
				break;
		}
		take = want - w->nr_carry < w->end - w->head ? want - w->nr_carry : w->end - w->head;
		if (!take)
			return 0; /* the rest comes with the next segment */
		memcpy(w->carry + w->nr_carry, w->blk->data + w->head, take);
		w->nr_carry += take;
		w->head += take;
	}
	w->nr_carry = 0;
	b = block_copy(w->r, w->carry, want);
	if (!b)
		return fail(w, -ENOMEM);
	stop = deliver(w, (const void *)b->data, off, true, b);
	block_put(b);
	return stop;
}

/* Hand on the complete records in the current block; a record that the block's end cuts
 * waits in carry (the rest comes in the next block). */
static int drain_pending(struct walk *w, uint64_t off)
{
	if (w->nr_carry && fill_carry(w, off))
		return STOP;
	while (w->end - w->head >= sizeof(struct perf_event_header)) {
		const uint8_t *at = w->blk->data + w->head;
		struct perf_event_header h;

		memcpy(&h, at, sizeof(h));
		if (bad_size(h.size)) {
			reader__data_damage(w->r, off, "bad record size inside compressed data");
			return STOP;
		}
		if (h.size > w->end - w->head)
			break;
		if ((uintptr_t)at % 8) {
			/* a frame decoded apart that starts inside a record: its records lie
			 * misaligned in its block (never in precord's or perf's files) */
			struct perf_reader_ref *b = block_copy(w->r, at, h.size);
			int stop;

			if (!b)
				return fail(w, -ENOMEM);
			stop = deliver(w, (const void *)b->data, off, true, b);
			block_put(b);
			if (stop)
				return STOP;
		} else if (deliver(w, (const void *)at, off, true, w->blk)) {
			return STOP;
		}
		w->head += h.size;
	}
	return 0;
}

/* Decoded bytes [start, end) of it->blk: more of the current block, or the next block. */
static int take_segment(struct walk *w, struct item *it)
{
	if (it->blk != w->blk) {
		size_t left = w->end - w->head;

		if (left) { /* a record cut by the block's end: gathered */
			if (!w->carry && !(w->carry = malloc(65536)))
				return fail(w, -ENOMEM);
			memcpy(w->carry + w->nr_carry, w->blk->data + w->head, left);
			w->nr_carry += left;
		}
		block_put(w->blk);
		w->blk = it->blk;
		w->head = it->start;
		if (w->pipe && !w->in_job) {
			pthread_mutex_lock(&w->pipe->lock);
			w->pipe->blocks_seen++;
			if (w->pipe->p_waiting && w->pipe->p_far &&
			    w->pipe->blocks_pushed - w->pipe->blocks_seen <= PIPE_RESUME_BLOCKS)
				pthread_cond_broadcast(&w->pipe->cond);
			pthread_mutex_unlock(&w->pipe->lock);
		}
	} else {
		block_put(it->blk); /* the walk holds the block already */
	}
	it->blk = NULL;
	w->end = it->end;
	return drain_pending(w, it->off);
}

static int consume_frame(struct walk *w, struct frame_job *j);

/* One item from the decoding side; STOP ends the walk (w->result says why). */
static int consume(struct walk *w, struct item *it)
{
	struct perf_reader *r = w->r;
	const struct perf_event_header *h = (const void *)(r->map + it->off);
	uint16_t size;

	switch (it->kind) {
	case IT_CONTAINER:
		count_plain(w->stats, PERF_RECORD_COMPRESSED);
		return 0;
	case IT_PLAIN:
		memcpy(&size, r->map + it->off + 6, 2);
		count_plain(w->stats, rd32(r->map + it->off));
		if (it->off % 8) {
			/* Only after an odd-sized COMPRESSED record: callers get aligned records. */
			struct perf_reader_ref *b = block_copy(r, h, size);
			int stop;

			if (!b)
				return fail(w, -ENOMEM);
			stop = deliver(w, (const void *)b->data, it->off, false, b);
			block_put(b);
			return stop;
		}
		return deliver(w, h, it->off, false, NULL);
	case IT_SEGMENT:
		return take_segment(w, it);
	case IT_DAMAGE:
		snprintf(r->reason_buf, sizeof(r->reason_buf), "%s", it->reason);
		reader__data_damage(r, it->off, r->reason_buf);
		return STOP;
	case IT_ERROR:
		return fail(w, it->err);
	case IT_END:
		if ((w->nr_carry || w->end > w->head) && !r->has_data_damage)
			reader__data_damage(r, it->off, "compressed data ends inside a record");
		return STOP;
	case IT_FRAME:
		return consume_frame(w, it->job);
	}
	return STOP;
}

/* ---- decoding side ---- */

/* Hand an item on: delivered now, or queued for the delivering thread (waiting while the queue
 * is full or the decoder is PIPE_AHEAD_BLOCKS ahead). STOP when the walk is to end. */
static int push(struct walk *w, struct item *it)
{
	struct pipe *p = w->pipe;
	bool fresh = it->kind == IT_SEGMENT && it->blk != w->dec.last_pushed;

	if (it->kind == IT_SEGMENT)
		w->dec.last_pushed = it->blk;
	if (!p) {
		int stop = consume(w, it);

		block_put(it->blk);
		return stop;
	}
	pthread_mutex_lock(&p->lock);
	for (bool waited = false, idle = w->r->idle_fn; !p->stop; waited = true) {
		size_t used = p->tail - p->head;
		uint64_t ahead = p->blocks_pushed - p->blocks_seen;
		bool full = used >= (waited ? PIPE_RESUME_ITEMS : PIPE_ITEMS);
		bool far = fresh && ahead > (waited ? PIPE_RESUME_BLOCKS : PIPE_AHEAD_BLOCKS - 1);

		if (!full && !far)
			break;
		/* the delivering side may be waiting for a batch that will not fill now */
		if (p->c_waiting)
			pthread_cond_broadcast(&p->cond);
		/* The caller's work instead of a wait, while it has some (then the lower bounds of
		 * a decoder that waited apply). The pipe is looked at again after each call, that
		 * with no work too: the delivering side may have emptied it meanwhile and be
		 * waiting, and no one would wake a decoder that waited then. */
		if (idle) {
			pthread_mutex_unlock(&p->lock);
			idle = w->r->idle_fn(w->r->idle_ctx);
			pthread_mutex_lock(&p->lock);
			continue;
		}
		p->p_waiting = true;
		p->p_far = !full;
		pthread_cond_wait(&p->cond, &p->lock);
		p->p_waiting = false;
	}
	if (p->stop) {
		pthread_mutex_unlock(&p->lock);
		block_put(it->blk);
		return STOP;
	}
	p->blocks_pushed += fresh;
	p->ring[p->tail++ % PIPE_ITEMS] = *it;
	/* a waiting delivering side is woken for a batch of items (or the last one), not for each:
	 * one wakeup per COMPRESSED record was most of the decoding thread's context switches */
	if (p->c_waiting && (p->tail - p->head >= PIPE_WAKE || it->kind >= IT_DAMAGE))
		pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* A frame job: one zstd frame's bytes gathered from the COMPRESSED payloads that carry it, each
 * piece with the record it came from, and once decoded the items the walk's decoder would have
 * pushed for them (segments, and damage or an error). state is under the pipe's lock. */
enum job_state { JOB_QUEUED, JOB_CLAIMED, JOB_DONE };

struct job_cut {
	size_t end;   /* src[previous cut's end, end) came from */
	uint64_t off; /* the COMPRESSED record at off */
	bool first;   /* the record's first cut: it is counted here (IT_CONTAINER) */
};

struct frame_job {
	struct frame_job *next;
	enum job_state state;
	uint8_t *src;
	size_t len, cap;
	struct job_cut *cuts;
	size_t nr_cuts, cap_cuts;
	uint64_t max_out; /* the most its blocks can decode to (the scan's bound) */
	struct item *items;
	size_t nr_items, cap_items;
	int err;      /* -ENOMEM: items after the last are missing */
};

/* Room in the array *p (of *cap elements of size elem) for need of them: doubled from at least
 * min. Returns 0 or -ENOMEM (the array is as it was). */
static int grow(void **p, size_t *cap, size_t need, size_t elem, size_t min)
{
	size_t nc = *cap ? *cap : min;
	void *n;

	if (need <= *cap)
		return 0;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		nc *= 2;
	}
	if (!(n = realloc(*p, nc * elem)))
		return -ENOMEM;
	*p = n;
	*cap = nc;
	return 0;
}

/* An item of the decoder d: to its job's list, or on to the walk. */
static int dpush(struct walk *w, struct decoder *d, struct item *it)
{
	struct frame_job *j = d->job;

	if (!j)
		return push(w, it);
	if (grow((void **)&j->items, &j->cap_items, j->nr_items + 1, sizeof(*j->items), 8) < 0) {
		block_put(it->blk);
		j->err = -ENOMEM;
		return STOP;
	}
	j->items[j->nr_items++] = *it;
	return 0;
}

/* The decoded bytes not yet handed on, as a segment of their own (with a reference). */
static int push_segment(struct walk *w, struct decoder *d)
{
	struct item it = { .kind = IT_SEGMENT, .off = d->off, .blk = d->blk, .start = d->seg,
			   .end = d->len };

	if (!d->blk || d->len == d->seg)
		return 0;
	atomic_fetch_add_explicit(&d->blk->refs, 1, memory_order_relaxed);
	d->seg = d->len;
	return dpush(w, d, &it);
}

static int push_error(struct walk *w, struct decoder *d, int err)
{
	struct item it = { .kind = IT_ERROR, .err = err };

	dpush(w, d, &it);
	return STOP;
}

static int zstd_damage(struct walk *w, struct decoder *d, const char *reason)
{
	struct item it = { .kind = IT_DAMAGE, .off = d->off };

	snprintf(it.reason, sizeof(it.reason), "zstd: %s", reason);
	if (push_segment(w, d) == 0)
		dpush(w, d, &it);
	return STOP;
}

/* Room for a zstd block in the current block, else a fresh block; the old one stays held as
 * zstd's history (see decompress) until the next switch. */
static int block_room(struct walk *w, struct decoder *d)
{
	struct perf_reader_ref *b;

	if (d->blk && d->blk->cap - d->len >= ZSTD_BLOCKSIZE_MAX)
		return 0;
	if (push_segment(w, d))
		return STOP;
	b = block_new(w->r);
	if (!b)
		return push_error(w, d, -ENOMEM);
	block_put(d->prev);
	d->prev = d->blk;
	d->blk = b;
	d->len = d->seg = 0;
	return 0;
}

/* A frame header is whole (its bytes in d->fhdr): blocks from now on hold at least its window
 * beside the room for two zstd blocks. */
static int frame_started(struct walk *w, struct decoder *d)
{
	struct perf_reader *r = w->r;
	ZSTD_frameHeader fh;
	size_t e = ZSTD_getFrameHeader(&fh, d->fhdr, d->nr_fhdr), cap;

	if (ZSTD_isError(e))
		return zstd_damage(w, d, ZSTD_getErrorName(e));
	if (e || fh.frameType == ZSTD_skippableFrame)
		return 0;
	if (fh.windowSize > ZSTD_WINDOW_MAX)
		return zstd_damage(w, d, "frame window larger than 128 MiB");
	cap = fh.windowSize + BLOCK_MIN_ROOM + 2 * ZSTD_BLOCKSIZE_MAX;
	pthread_mutex_lock(&r->block_lock);
	if (cap > r->block_cap)
		r->block_cap = (cap + 65535) & ~(size_t)65535;
	pthread_mutex_unlock(&r->block_lock);
	/* the frames before are not its history */
	block_put(d->prev);
	d->prev = NULL;
	return 0;
}

/* The next unit zstd asks for is whole (at src): decode it into the current block. */
static int decode_unit(struct walk *w, struct decoder *d, const uint8_t *src, size_t n)
{
	ZSTD_nextInputType_e type = ZSTD_nextInputType(d->ds);
	size_t ret;

	if (type == ZSTDnit_frameHeader && n <= sizeof(d->fhdr) - d->nr_fhdr) {
		memcpy(d->fhdr + d->nr_fhdr, src, n);
		d->nr_fhdr += n;
	}
	if ((type == ZSTDnit_block || type == ZSTDnit_lastBlock || !d->blk) && block_room(w, d))
		return STOP;
	ret = ZSTD_decompressContinue(d->ds, d->blk->data + d->len, d->blk->cap - d->len, src, n);
	if (ZSTD_isError(ret))
		return zstd_damage(w, d, ZSTD_getErrorName(ret));
	d->len += ret;
	if (type == ZSTDnit_frameHeader && ZSTD_nextInputType(d->ds) != ZSTDnit_frameHeader &&
	    frame_started(w, d))
		return STOP;
	/* after a skippable frame's size: its content */
	d->skipping = type == ZSTDnit_skippableFrame;
	return 0;
}

/*
 * COMPRESSED payloads in file order form one zstd stream of frames, as perf reads them. zstd's
 * buffer-less API decodes each unit (frame header, block header, block) straight into the blocks
 * that records are delivered from: no copy through a window of zstd's own. Its history is the
 * current block's output and the previous block's (zstd keeps two segments), so a block holds a
 * whole window (see frame_started). A unit cut between two payloads is gathered in d->stage.
 */
static int decompress(struct walk *w, struct decoder *d, const uint8_t *payload, size_t n,
		      uint64_t off)
{
	size_t pos = 0;

	d->off = off;
	if (!d->ds) {
		if (!*d->dsp)
			*d->dsp = ZSTD_createDCtx();
		if (!*d->dsp || !(d->stage = malloc(ZSTD_BLOCKSIZE_MAX)))
			return push_error(w, d, -ENOMEM);
		d->ds = *d->dsp;
		d->need = 0;
	}
	while (pos < n) {
		const uint8_t *src = payload + pos;
		size_t take;

		if (!d->need) {
			/* A frame that ends is followed by a new one in the same stream (a
			 * skippable frame of size 0 ends at its header). */
			ZSTD_decompressBegin(d->ds);
			d->need = ZSTD_nextSrcSizeToDecompress(d->ds);
			d->nr_fhdr = 0;
			d->skipping = false;
		}
		if (d->skipping) {
			/* skippable content (any size): passed over, not gathered; the next frame
			 * starts afresh */
			take = n - pos < d->need ? n - pos : d->need;
			pos += take;
			d->need -= take;
			d->skipping = d->need > 0;
			continue;
		}
		if (d->need > ZSTD_BLOCKSIZE_MAX)
			return zstd_damage(w, d, "block larger than 128 KiB");
		if (!d->staged && n - pos >= d->need) {
			pos += d->need;
		} else {
			take = d->need - d->staged < n - pos ? d->need - d->staged : n - pos;
			memcpy(d->stage + d->staged, src, take);
			d->staged += take;
			pos += take;
			if (d->staged < d->need)
				break;
			src = d->stage;
		}
		if (decode_unit(w, d, src, d->need))
			return STOP;
		d->staged = 0;
		d->need = ZSTD_nextSrcSizeToDecompress(d->ds);
	}
	return push_segment(w, d);
}

/* The records of the file in order, COMPRESSED ones decoded; ends with IT_END (or a stop). */
/* The pages of the mapping that hold COMPRESSED records are read once, by the decoding side,
 * and nothing points into them once it has decoded or gathered their bytes: they are given back
 * (reader__release_pages), each run of such records whole pages inward once it holds
 * REL_BYTES. Without this, the mapping's pages stayed resident to the end: on a perf -z file a
 * quarter of preport's peak memory. The plain records between them (perf -z's FINISHED_ROUND
 * after every few) stay in the run: the mapping is the file's, read-only, so a released page
 * that one of them may still be read from (queued, or handed on to the delivering thread) is
 * read back from the page cache on that access. Ended at each, the runs were a few KiB and
 * each release a TLB shootdown of the other threads' CPUs: 627 on a 24 MB perf -z file. A run
 * starts at a COMPRESSED record: the pages of a file of plain records are not given back (they
 * would only be read back for its queued records). */
#define REL_BYTES ((uint64_t)4 << 20)

/* The record at [off, end) has been taken from the mapping (compressed: its payload decoded or
 * gathered). */
static void map_consumed(struct walk *w, uint64_t off, uint64_t end, bool compressed)
{
	bool in_run = w->rel_open && w->rel_hi == off;

	if (!compressed && !in_run) {
		w->rel_open = false;
		return;
	}
	if (!in_run) /* a COMPRESSED record starts a run */
		w->rel_lo = off;
	w->rel_open = true;
	w->rel_hi = end;
	if (w->rel_hi - w->rel_lo >= REL_BYTES)
		w->rel_lo = reader__release_pages(w->r, w->rel_lo, w->rel_hi);
}

static int produce(struct walk *w)
{
	struct perf_reader *r = w->r;
	uint64_t off = r->data_start, last_comp = 0;
	bool seen_comp = false;

	while (off < r->data_end) {
		struct item it = { .kind = IT_PLAIN, .off = off };
		uint32_t type = rd32(r->map + off);
		uint16_t size;

		/* scan_records() checked every header below data_end. */
		memcpy(&size, r->map + off + 6, 2);
		if (type == PERF_RECORD_COMPRESSED) {
			if (!seen_comp && !perf_reader__has_feature(r, FEAT_COMPRESSED))
				r->warnings |= PERF_READER_W_NO_COMP_FEATURE;
			seen_comp = true;
			last_comp = off;
			it.kind = IT_CONTAINER;
			if (push(w, &it) ||
			    decompress(w, &w->dec, r->map + off + sizeof(struct perf_event_header),
				       size - sizeof(struct perf_event_header), off))
				return STOP;
			map_consumed(w, off, off + size, true);
		} else if (push(w, &it)) {
			return STOP;
		} else {
			map_consumed(w, off, off + size, false);
		}
		off += size;
	}
	return push(w, &(struct item){ .kind = IT_END, .off = last_comp });
}

/* ---- frames decoded apart ----
 *
 * precord's files hold many independent zstd frames (one per reader flush, each carried by a
 * run of COMPRESSED records). With a decoding thread, that thread finds where each frame ends by
 * reading its frame and block headers (without decoding), gathers its bytes into a job and
 * pushes an IT_FRAME item. The job is decoded by whichever side is free: the decoding thread once
 * it is JOBS_AHEAD frames ahead of the delivering one (with a frame helper, only the frames left
 * at the end of the file: perf_reader__decode_ahead's callers decode the ones ahead), or the
 * delivering thread when it reaches a job nobody has started, or must wait for one while another
 * is still queued. A frame that a plain record interrupts, that grows past JOB_MAX_SRC (perf
 * -z's one frame for the whole file), or whose headers are not zstd's, goes to the one-stream
 * decoder instead, and so does the rest of the file: either way the same records come out, at
 * the same offsets, with the same damage.
 */
/* Frames decoded ahead: on 270k-sample precord files (8 MiB frames then, 4 MiB now) -j 2 took
 * 0.72 s with 1, 0.53-0.61 with 2, 0.53-0.60 with 4, each frame ahead costing its size in peak
 * memory. That is JOBS_AHEAD, without a frame helper. With one, the decoding thread only scans,
 * JOBS_SCANNED frames ahead (a scanned frame costs its compressed bytes), and the helpers decode
 * while fewer than JOBS_DECODED jobs are decoded or being decoded and not yet delivered, the one
 * being delivered among them (the delivering thread, waiting for one, may decode one more). Scanning two ahead and decoding one, the helpers often found nothing to decode and
 * the delivering thread decoded 130 of a 295k-sample file's 438 frames itself; now it decodes
 * 2-14 of them, for 6.5 MB more peak memory. The decoding thread goes on scanning once half of
 * the scanned frames are delivered, not after each one: a wake-up between two CPUs cost 16 us of
 * CPU on either side on a VM (its wake-ups went from 796 to 106). */
#define JOBS_AHEAD 2
#define JOBS_DECODED 3
#define JOBS_SCANNED 8
#define JOBS_SCAN_RESUME (JOBS_SCANNED / 2)
/* A frame goes to the stream when its bytes pass JOB_MAX_SRC or what its blocks may decode to
 * passes JOB_MAX_OUT (8x precord's 4 MiB frames): a job is decoded whole before it is delivered,
 * so this bounds the memory of a frame that decompresses to far more than it takes. */
#define JOB_MAX_SRC ((size_t)16 << 20)
#define JOB_MAX_OUT ((uint64_t)32 << 20)

enum scan_state { SC_MAGIC, SC_FHD, SC_BHDR, SC_SKIPSIZE, SC_SKIP };
enum scan_then { SC_THEN_BHDR, SC_THEN_CHECKSUM, SC_THEN_END };

struct frame_scan {
	enum scan_state st;
	enum scan_then then;    /* after SC_SKIP */
	uint8_t buf[4];
	size_t have, want;      /* header bytes gathered in buf, wanted */
	uint64_t skip;          /* SC_SKIP: bytes to pass over */
	bool checksum;          /* the frame ends with a 4-byte checksum */
	uint64_t max_out;       /* the most the frame's blocks so far decode to */
};

static void scan_reset(struct frame_scan *sc)
{
	*sc = (struct frame_scan){ .st = SC_MAGIC, .want = 4 };
}

static void scan_skip(struct frame_scan *sc, uint64_t n, enum scan_then then)
{
	sc->st = SC_SKIP;
	sc->skip = n;
	sc->then = then;
}

/* The gathered header is whole: what follows it. -1: not a zstd frame. */
static int scan_header(struct frame_scan *sc)
{
	static const uint8_t did_size[4] = { 0, 1, 2, 4 }, fcs_size[4] = { 0, 2, 4, 8 };
	uint32_t v = rd32(sc->buf), type, size;
	uint8_t fhd = sc->buf[0];
	bool single;

	sc->have = 0;
	switch (sc->st) {
	case SC_MAGIC:
		if (v == ZSTD_MAGICNUMBER) {
			sc->st = SC_FHD;
			sc->want = 1;
		} else if ((v & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START) {
			sc->st = SC_SKIPSIZE;
			sc->want = 4;
		} else {
			return -1;
		}
		return 0;
	case SC_FHD:
		if (fhd & 0x08) /* reserved bit */
			return -1;
		single = fhd >> 5 & 1;
		sc->checksum = fhd >> 2 & 1;
		/* window descriptor, dictionary id, content size (1 byte when single and 0) */
		scan_skip(sc, (uint64_t)!single + did_size[fhd & 3] +
			      (fhd >> 6 ? fcs_size[fhd >> 6] : single), SC_THEN_BHDR);
		return 0;
	case SC_BHDR:
		v &= 0xffffff;
		type = v >> 1 & 3;
		size = v >> 3;
		if (type == 3 || size > ZSTD_BLOCKSIZE_MAX)
			return -1;
		/* raw and RLE blocks decode to their size, compressed ones to at most 128 KiB */
		sc->max_out += type == 2 ? ZSTD_BLOCKSIZE_MAX : size;
		scan_skip(sc, type == 1 ? 1 : size,
			  !(v & 1) ? SC_THEN_BHDR : sc->checksum ? SC_THEN_CHECKSUM : SC_THEN_END);
		return 0;
	case SC_SKIPSIZE:
		scan_skip(sc, v, SC_THEN_END);
		return 0;
	case SC_SKIP:
		break;
	}
	return -1;
}

/* n more bytes of the stream: 1 when the frame ends after *used of them, 0 when all belong to
 * it, -1 when its headers are not zstd's. *max_out: the most the frame decodes to so far. */
static int scan_feed(struct frame_scan *sc, const uint8_t *p, size_t n, size_t *used,
		     uint64_t *max_out)
{
	size_t i = 0;

	for (;;) {
		if (sc->st == SC_SKIP) {
			uint64_t t = sc->skip < n - i ? sc->skip : n - i;

			i += t;
			sc->skip -= t;
			if (sc->skip)
				break;
			if (sc->then == SC_THEN_BHDR) {
				sc->st = SC_BHDR;
				sc->want = 3;
				sc->buf[3] = 0;
			} else if (sc->then == SC_THEN_CHECKSUM) {
				scan_skip(sc, 4, SC_THEN_END);
			} else {
				*used = i;
				*max_out = sc->max_out;
				scan_reset(sc);
				return 1;
			}
			continue;
		}
		if (i == n)
			break;
		{
			size_t t = sc->want - sc->have < n - i ? sc->want - sc->have : n - i;

			memcpy(sc->buf + sc->have, p + i, t);
			sc->have += t;
			i += t;
		}
		if (sc->have == sc->want && scan_header(sc) < 0) {
			*used = i;
			return -1;
		}
	}
	*used = i;
	*max_out = sc->max_out;
	return 0;
}

static void job_free(struct frame_job *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nr_items; i++)
		block_put(j->items[i].blk);
	free(j->items);
	free(j->src);
	free(j->cuts);
	free(j);
}

/* n more bytes of the job's frame (maybe none), from the COMPRESSED record at off; first: the
 * record's first bytes, so the job counts the record. */
static int job_add(struct frame_job *j, const uint8_t *p, size_t n, uint64_t off, bool first)
{
	if (grow((void **)&j->src, &j->cap, j->len + n, 1, 4096) < 0 ||
	    grow((void **)&j->cuts, &j->cap_cuts, j->nr_cuts + 1, sizeof(*j->cuts), 16) < 0)
		return -ENOMEM;
	if (n)
		memcpy(j->src + j->len, p, n);
	j->len += n;
	j->cuts[j->nr_cuts++] = (struct job_cut){ j->len, off, first };
	return 0;
}

/* Decode the job's frame with d (a frame job decoder, its own zstd context) into its items. */
static void job_decode(struct walk *w, struct decoder *d, struct frame_job *j)
{
	size_t start = 0, i, room = j->max_out + ZSTD_BLOCKSIZE_MAX;

	d->job = j;
	d->need = d->staged = d->nr_fhdr = 0;
	d->skipping = false;
	/* A small frame gets a block of its size, not one of the cache's: in time order, every
	 * block with a record queued is held (blocks of many small frames added up to GBs). */
	if (room < BLOCK_CAP && !(d->blk = block_sized(w->r, room))) {
		j->err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < j->nr_cuts; i++) {
		const struct job_cut *c = &j->cuts[i];

		if (c->first && dpush(w, d, &(struct item){ .kind = IT_CONTAINER, .off = c->off }))
			break;
		if (c->end > start && decompress(w, d, j->src + start, c->end - start, c->off))
			break;
		start = c->end;
	}
	/* zstd and the scan read the same headers: a frame that zstd has not ended is damage */
	if (i == j->nr_cuts && d->need)
		zstd_damage(w, d, "frame ends before its last block");
out:
	block_put(d->blk);
	block_put(d->prev);
	d->blk = d->prev = NULL;
	d->len = d->seg = 0;
	d->job = NULL;
}

/* The job's bytes through the one-stream decoder, pushed as they decode; the job is freed. */
static int job_to_stream(struct walk *w, struct frame_job **jp)
{
	struct frame_job *j = *jp;
	size_t start = 0;
	int stop = 0;

	*jp = NULL;
	for (size_t i = 0; j && i < j->nr_cuts && !stop; i++) {
		const struct job_cut *c = &j->cuts[i];

		if (c->first)
			stop = push(w, &(struct item){ .kind = IT_CONTAINER, .off = c->off });
		if (!stop && c->end > start)
			stop = decompress(w, &w->dec, j->src + start, c->end - start, c->off);
		start = c->end;
	}
	job_free(j);
	return stop;
}

static int job_push(struct walk *w, struct frame_job *j)
{
	struct pipe *p = w->pipe;

	pthread_mutex_lock(&p->lock);
	*p->jobs_tail = j;
	p->jobs_tail = &j->next;
	p->nr_jobs++;
	pthread_mutex_unlock(&p->lock);
	return push(w, &(struct item){ .kind = IT_FRAME, .job = j });
}

/* The oldest job nobody decodes yet, or NULL. Under the pipe's lock. */
static struct frame_job *job_queued(struct pipe *p)
{
	struct frame_job *j = p->jobs;

	while (j && j->state != JOB_QUEUED)
		j = j->next;
	return j;
}

/* Claim j (queued), decode it with d, mark it done. Called and returns under the pipe's lock. */
static void job_run(struct walk *w, struct decoder *d, struct frame_job *j)
{
	struct pipe *p = w->pipe;

	j->state = JOB_CLAIMED;
	p->nr_claimed++;
	w->r->frame_jobs++; /* under the lock; read once the decoding thread is joined */
	pthread_mutex_unlock(&p->lock);
	job_decode(w, d, j);
	pthread_mutex_lock(&p->lock);
	j->state = JOB_DONE;
	if (p->c_waiting)
		pthread_cond_broadcast(&p->cond);
}

/* The decoding side, JOBS_AHEAD frames ahead (with a frame helper, JOBS_SCANNED): decode queued
 * jobs (with a helper, wait) until there is room to read on; with all, decode until none is
 * queued (with a helper, as JOBS_DECODED allows). STOP when the walk ends. */
static int jobs_help(struct walk *w, bool all)
{
	struct pipe *p = w->pipe;
	bool helper = w->r->frame_helper;
	bool stop;

	pthread_mutex_lock(&p->lock);
	while (!p->stop && (all || p->nr_jobs >= (helper ? JOBS_SCANNED : JOBS_AHEAD))) {
		struct frame_job *j = job_queued(p);

		if (all && !j)
			break;
		/* with a helper, the frames ahead are the helper's to decode */
		if (j && (!helper || (all && p->nr_claimed < JOBS_DECODED))) {
			job_run(w, &w->pdec, j);
			continue;
		}
		p->p_wake_at = all ? SIZE_MAX : helper ? JOBS_SCAN_RESUME : JOBS_AHEAD - 1;
		p->p_jobs = true;
		pthread_cond_wait(&p->cond, &p->lock);
		p->p_jobs = false;
	}
	stop = p->stop;
	pthread_mutex_unlock(&p->lock);
	return stop ? STOP : 0;
}

/* The delivering side at j's item: j decoded (by this thread, if nobody has started it; while
 * another decodes it, this one decodes a later queued job), its items consumed, j freed. */
static int consume_frame(struct walk *w, struct frame_job *j)
{
	struct pipe *p = w->pipe;
	int stop = 0;

	pthread_mutex_lock(&p->lock);
	while (j->state != JOB_DONE) {
		struct frame_job *o = j->state == JOB_QUEUED ? j : job_queued(p);

		if (o) {
			job_run(w, &w->cdec, o);
			continue;
		}
		p->c_waiting = true;
		pthread_cond_wait(&p->cond, &p->lock);
		p->c_waiting = false;
	}
	pthread_mutex_unlock(&p->lock);
	w->in_job = true;
	for (size_t i = 0; i < j->nr_items && !stop; i++) {
		stop = consume(w, &j->items[i]);
		block_put(j->items[i].blk);
		j->items[i].blk = NULL;
	}
	w->in_job = false;
	if (!stop && j->err)
		stop = fail(w, j->err);
	/* jobs are delivered in the order they were pushed: j is the first */
	pthread_mutex_lock(&p->lock);
	p->jobs = j->next;
	if (!p->jobs)
		p->jobs_tail = &p->jobs;
	p->nr_jobs--;
	p->nr_claimed--;
	if (p->p_jobs && p->nr_jobs <= p->p_wake_at)
		pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	job_free(j);
	return stop;
}

/* As produce_frames would decide, on the first frame alone: it goes to the one-stream decoder
 * when a plain record interrupts it, when it grows past JOB_MAX_SRC or JOB_MAX_OUT, or when its
 * headers are not zstd's. Only the frame's headers are read, and the headers of the plain
 * records before it, up to ONE_STREAM_SCAN bytes of them. */
#define ONE_STREAM_SCAN ((uint64_t)16 << 20)
bool perf_reader__one_stream(const struct perf_reader *r)
{
	uint64_t off = r->data_start;
	struct frame_scan sc;
	bool in_frame = false;
	size_t src = 0;

	scan_reset(&sc);
	while (off < r->data_end) {
		uint16_t size;
		size_t n, used;
		uint64_t out = 0;
		int e;

		/* scan_records() checked every header below data_end. */
		memcpy(&size, r->map + off + 6, 2);
		n = size - sizeof(struct perf_event_header);
		if (rd32(r->map + off) != PERF_RECORD_COMPRESSED) {
			if (in_frame)
				return true;
			/* a file of plain records is not read to its end for a hint */
			if (off - r->data_start > ONE_STREAM_SCAN)
				return false;
			off += size;
			continue;
		}
		e = scan_feed(&sc, r->map + off + sizeof(struct perf_event_header), n, &used, &out);
		if (e)
			return e < 0;
		in_frame |= n > 0;
		src += n;
		if (src > JOB_MAX_SRC || sc.max_out > JOB_MAX_OUT)
			return true;
		off += size;
	}
	return in_frame; /* the file ends inside it */
}

/* produce() with frames decoded apart (see above): the decoding thread's walk. A COMPRESSED
 * record is counted where the one stream would count it: by the job holding its first bytes. */
static int produce_frames(struct walk *w)
{
	struct perf_reader *r = w->r;
	uint64_t off = r->data_start, last_comp = 0;
	bool seen_comp = false, stream = false;
	struct frame_job *j = NULL;
	struct frame_scan sc;
	int stop = 0;

	scan_reset(&sc);
	while (off < r->data_end && !stop) {
		struct item it = { .kind = IT_PLAIN, .off = off };
		uint32_t type = rd32(r->map + off);
		const uint8_t *pl = r->map + off + sizeof(struct perf_event_header);
		bool first = true;
		uint16_t size;
		size_t n;

		/* scan_records() checked every header below data_end. */
		memcpy(&size, r->map + off + 6, 2);
		n = size - sizeof(struct perf_event_header);
		off += size;
		if (type != PERF_RECORD_COMPRESSED) {
			/* a plain record inside a frame: the frame and the rest go to the stream */
			if (j) {
				stream = true;
				stop = job_to_stream(w, &j);
			}
			stop = stop || push(w, &it);
			map_consumed(w, it.off, off, false);
			continue;
		}
		if (!seen_comp && !perf_reader__has_feature(r, FEAT_COMPRESSED))
			r->warnings |= PERF_READER_W_NO_COMP_FEATURE;
		seen_comp = true;
		last_comp = it.off;
		if (stream || (!j && !n)) {
			it.kind = IT_CONTAINER;
			stop = push(w, &it) || (n && decompress(w, &w->dec, pl, n, it.off));
			map_consumed(w, it.off, off, true);
			continue;
		}
		do {
			size_t used = 0;
			uint64_t out = 0;
			int e;

			if (!j && !(j = calloc(1, sizeof(*j)))) {
				stop = push_error(w, &w->dec, -ENOMEM);
				break;
			}
			e = scan_feed(&sc, pl, n, &used, &out);
			if (e < 0) {
				/* not zstd's headers: the stream decoder finds the damage itself */
				stream = true;
				it.kind = IT_CONTAINER;
				stop = job_to_stream(w, &j) || (first && push(w, &it)) ||
				       decompress(w, &w->dec, pl, n, it.off);
				break;
			}
			if (job_add(j, pl, used, it.off, first) < 0) {
				stop = push_error(w, &w->dec, -ENOMEM);
				break;
			}
			first = false;
			j->max_out = out;
			pl += used;
			n -= used;
			if (j->len > JOB_MAX_SRC || j->max_out > JOB_MAX_OUT) {
				stream = true;
				stop = job_to_stream(w, &j) || (n && decompress(w, &w->dec, pl, n, it.off));
				break;
			}
			if (e == 1) {
				/* the job is the delivering side's to free from here on */
				stop = job_push(w, j);
				j = NULL;
				stop = stop || jobs_help(w, false);
			}
		} while (n && !stop);
		map_consumed(w, it.off, off, true);
	}
	/* the file ends inside a frame */
	if (!stop && j)
		stop = job_to_stream(w, &j);
	job_free(j); /* a frame being gathered when the walk stopped */
	if (stop || push(w, &(struct item){ .kind = IT_END, .off = last_comp }))
		return STOP;
	return jobs_help(w, true);
}

bool perf_reader__decode_ahead(struct perf_reader *r)
{
	struct frame_job *j = NULL;
	struct walk *w;

	/* one helper at a time: it has one decoder */
	pthread_mutex_lock(&r->help_lock);
	w = r->helping ? NULL : r->help_walk;
	if (w)
		r->helping = true;
	pthread_mutex_unlock(&r->help_lock);
	if (!w)
		return false;
	pthread_mutex_lock(&w->pipe->lock);
	if (!w->pipe->stop && w->pipe->nr_claimed < JOBS_DECODED && (j = job_queued(w->pipe)))
		job_run(w, &w->hdec, j);
	pthread_mutex_unlock(&w->pipe->lock);
	pthread_mutex_lock(&r->help_lock);
	r->helping = false;
	pthread_cond_broadcast(&r->help_cond);
	pthread_mutex_unlock(&r->help_lock);
	return j != NULL;
}

static void *decode_thread(void *arg)
{
	produce_frames(arg);
	return NULL;
}

static void decoder_fini(struct decoder *d)
{
	block_put(d->blk);
	block_put(d->prev);
	free(d->stage);
	memset(d, 0, sizeof(*d));
}

/* The delivering side of a threaded walk: items in order until one stops the walk; then the
 * decoder is told to end, joined, and what it queued beyond is dropped. */
static void consume_pipe(struct walk *w)
{
	struct pipe *p = w->pipe;
	bool stop = false;

	while (!stop) {
		struct item it;

		pthread_mutex_lock(&p->lock);
		while (p->head == p->tail) {
			p->c_waiting = true;
			pthread_cond_wait(&p->cond, &p->lock);
			p->c_waiting = false;
		}
		it = p->ring[p->head++ % PIPE_ITEMS];
		if (p->p_waiting && !p->p_far && p->tail - p->head < PIPE_RESUME_ITEMS)
			pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		stop = consume(w, &it) == STOP;
		block_put(it.blk);
	}
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	/* no helper is in the walk once it is retracted: its jobs can go */
	pthread_mutex_lock(&w->r->help_lock);
	w->r->help_walk = NULL;
	while (w->r->helping)
		pthread_cond_wait(&w->r->help_cond, &w->r->help_lock);
	pthread_mutex_unlock(&w->r->help_lock);
	while (p->head != p->tail)
		block_put(p->ring[p->head++ % PIPE_ITEMS].blk);
	while (p->jobs) {
		struct frame_job *j = p->jobs;

		p->jobs = j->next;
		job_free(j);
	}
}

/* A decoding thread for files with COMPRESSED records when the reader was asked for one; else
 * (or when the thread cannot start) the calling thread decodes as it delivers. */
static void walk_records(struct walk *w)
{
	struct perf_reader *r = w->r;
	struct pipe p = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	sigset_t all, old;

	r->frame_jobs = 0;
	p.jobs_tail = &p.jobs;
	w->dec.dsp = &r->ds;
	w->pdec.dsp = &r->job_ds[0];
	w->cdec.dsp = &r->job_ds[1];
	w->hdec.dsp = &r->job_ds[2];

	if (r->decode_thread && perf_reader__has_feature(r, FEAT_COMPRESSED) &&
	    (p.ring = malloc(PIPE_ITEMS * sizeof(*p.ring)))) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		w->pipe = &p;
		if (pthread_create(&p.thread, NULL, decode_thread, w))
			w->pipe = NULL;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (w->pipe && r->frame_helper) {
			pthread_mutex_lock(&r->help_lock);
			r->help_walk = w;
			pthread_mutex_unlock(&r->help_lock);
		}
	}
	if (w->pipe)
		consume_pipe(w);
	else
		produce(w);
	w->pipe = NULL;
	free(p.ring);
	decoder_fini(&w->dec);
	decoder_fini(&w->pdec);
	decoder_fini(&w->cdec);
	decoder_fini(&w->hdec);
}

static void release_queued(struct oq_entry *e)
{
	block_put(e->rec.ref);
}

static void walk_fini(struct walk *w)
{
	order_queue__fini(&w->q, release_queued);
	block_put(w->blk);
	free(w->carry);
}

static int sink_direct(struct walk *w, const struct perf_reader_record *rec)
{
	int err = w->fn(rec, w->ctx);

	return err ? fail(w, err) : 0;
}

int perf_reader__for_each(struct perf_reader *r, perf_reader_fn fn, void *ctx)
{
	struct walk w = { .r = r, .sink = sink_direct, .fn = fn, .ctx = ctx,
			  .stats = &r->walk_stats };

	reader__stats_init(r, &r->walk_stats);
	walk_records(&w);
	walk_fini(&w);
	return w.result;
}

/* ---- time order ---- */

/* How much of the head of a record to go is fetched ahead (see fetch_next). */
#define FETCH_HEAD 512

static void fetch_line(const volatile uint8_t *p, bool load)
{
	if (load)
		(void)*p;
	else
		__builtin_prefetch((const void *)p);
}

/* The lines of e's record its consumer reads first: the head (a sample's fields up to its
 * registers and stack size) and the last word (a sample's dyn_size); loaded or prefetched. */
static void fetch_record(const struct oq_entry *e, bool load)
{
	const volatile uint8_t *p = (const volatile uint8_t *)e->rec.hdr;

	for (uint32_t i = 0; i < e->size && i < FETCH_HEAD; i += 64)
		fetch_line(p + i, load);
	fetch_line(p + e->size - 8, load);
}

/* Fetch the first lines of the next records to go (fetch_record). A queued record was decoded
 * up to two rounds earlier, tens of MB ago in precord's files, and is in no cache by now. The
 * parse of a sample reaches these lines one after the other (the callchain's length places the
 * stack size, the stack size places dyn_size), each load waiting for the one before: about
 * 0.1 s in all on a 260k-sample file. The record after next is one of heap[0]'s children: both
 * are prefetched. The next one, heap[0], is loaded, its lines in flight together while the
 * record before is delivered: prefetched only one record ahead, the parse waited nearly as long
 * as without (with a decoding thread writing the blocks on the other core), while loads and the
 * prefetches two ahead took it from 0.5 to 0.47 s at -j 2. */
static void fetch_next(const struct walk *w)
{
	const struct oq_entry *after[2], *top = order_queue__top(&w->q);
	size_t n = order_queue__after_top(&w->q, after, 2);

	for (size_t k = 0; k < n; k++)
		fetch_record(after[k], false);
	if (top)
		fetch_record(top, true);
}

/* Deliver queued records with time <= limit, oldest first. */
static int flush_until(struct walk *w, uint64_t limit)
{
	const struct oq_entry *top;

	while ((top = order_queue__top(&w->q)) && top->time <= limit) {
		struct oq_entry e;
		int err;

		order_queue__pop(&w->q, &e);
		fetch_next(w);
		w->last_flush = e.time;
		w->queued_bytes -= sizeof(e) + e.size;
		err = w->fn(&e.rec, w->ctx);
		block_put(e.rec.ref);
		if (err)
			return fail(w, err);
	}
	return 0;
}

/* Set up the streams of the file's ring-order claim, if it has one that this walk can use:
 * every attr's records carry their time and CPU (a record without them could belong to any
 * ring), and the CPUs are distinct. Otherwise (or out of memory) rounds alone decide. */
static void streams_init(struct walk *w)
{
	struct perf_reader *r = w->r;
	struct ring_order o;
	uint32_t max = 0;

	if (ring_order__read(r, &o) != 1 || !o.nr_cpus || o.nr_cpus > 65536)
		return;
	for (size_t i = 0; i < r->nr_attrs; i++) {
		const struct perf_event_attr *a = &r->attrs[i].attr;

		if (!a->sample_id_all || (a->sample_type & (PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)) !=
						 (PERF_SAMPLE_TIME | PERF_SAMPLE_CPU))
			return;
	}
	for (uint32_t i = 0; i < o.nr_cpus; i++) {
		uint32_t c = ring_order__cpu(&o, i);

		if (c >= 65536)
			return;
		if (c > max)
			max = c;
	}
	w->stream_of = malloc((size_t)(max + 1) * sizeof(*w->stream_of));
	w->stream_last = calloc(o.nr_cpus, sizeof(*w->stream_last));
	if (!w->stream_of || !w->stream_last)
		goto off;
	memset(w->stream_of, 0xff, (size_t)(max + 1) * sizeof(*w->stream_of));
	for (uint32_t i = 0; i < o.nr_cpus; i++) {
		uint32_t c = ring_order__cpu(&o, i);

		if (w->stream_of[c] >= 0)
			goto off;
		w->stream_of[c] = (int32_t)i;
	}
	w->nr_stream_of = max + 1;
	w->nr_streams = o.nr_cpus;
	w->stream_back = o.max_back_ns;
	return;
off:
	free(w->stream_of);
	free(w->stream_last);
	w->stream_of = NULL;
	w->stream_last = NULL;
}

/* A queued record of time t on a claimed stream: every record still to come on that stream is
 * at least its largest time less stream_back, so once the least of those bounds has passed a
 * queued record, no record to come is older, whatever the rounds say. On precord's files (a
 * round ends only when every reader's long zstd frame is in the file) this holds about one
 * frame's records where rounds hold two rounds' worth. */
static int stream_note(struct walk *w, const struct perf_reader_record *rec)
{
	uint32_t cpu = record_cpu(w->r, rec->hdr, rec->attr_index);
	const struct oq_entry *top;
	uint64_t least;
	int32_t s;

	if (cpu >= w->nr_stream_of || (s = w->stream_of[cpu]) < 0) {
		/* a record the claim does not cover: it says nothing about what comes */
		w->nr_streams = 0;
		return 0;
	}
	if (rec->time <= w->stream_last[s])
		return 0;
	w->stream_last[s] = rec->time;
	if ((uint32_t)s != w->stream_min)
		return 0; /* the least bound cannot have moved */
	least = rec->time;
	for (uint32_t i = 0; i < w->nr_streams; i++)
		if (w->stream_last[i] < least) {
			least = w->stream_last[i];
			w->stream_min = i;
		}
	/* (written so that a claim of any step back at all, UINT64_MAX, holds everything) */
	top = order_queue__top(&w->q);
	if (least <= w->stream_back || least - w->stream_back < 2 || !top ||
	    top->time > least - w->stream_back - 1)
		return 0;
	return flush_until(w, least - w->stream_back - 1);
}

/* Whether perf 6.1 queues rec for the time order. A time of 0 it takes for none
 * (ordered_events__queue: -ETIME) and delivers the record when read, never counted out of
 * order: perf record's records made from /proc, the LOST_SAMPLES it writes after the last
 * round, precord's records of time 0. Queued, that LOST_SAMPLES would count as out of order
 * against the last round's flush where perf counts none. */
static bool timed(const struct perf_reader_record *rec)
{
	return rec->time && rec->time != PERF_READER_NO_TIME;
}

static int sink_ordered(struct walk *w, const struct perf_reader_record *rec)
{
	int err;

	if (rec->hdr->type == PERF_RECORD_FINISHED_ROUND) {
		/* perf: deliver up to the largest time seen at the previous round, then remember
		 * the largest time seen now for the next one. */
		if (flush_until(w, w->next_flush))
			return STOP;
		w->next_flush = w->max_time;
		err = w->fn(rec, w->ctx);
		return err ? fail(w, err) : 0;
	}
	if (!timed(rec)) {
		err = w->fn(rec, w->ctx);
		return err ? fail(w, err) : 0;
	}
	if (rec->time < w->last_flush)
		w->r->nr_unordered++;
	if (rec->time > w->max_time)
		w->max_time = rec->time;
	/* A decompressed record stays in its block (a reference), a plain one in the mapping.
	 * Queued bytes count the blocks' share too, so the cap bounds the blocks kept alive. */
	if (order_queue__push(&w->q, rec->time, rec, rec->hdr->size))
		return fail(w, -ENOMEM);
	perf_reader__hold(rec);
	w->queued_bytes += sizeof(struct oq_entry) + rec->hdr->size;
	if (w->queued_bytes > w->peak_queued)
		w->peak_queued = w->queued_bytes;
	if (w->nr_streams && stream_note(w, rec))
		return STOP;
	if (w->queued_bytes > w->r->ordered_max_bytes) {
		const struct oq_entry *top;

		while ((top = order_queue__top(&w->q)) &&
		       w->queued_bytes > w->r->ordered_max_bytes / 2)
			if (flush_until(w, top->time))
				return STOP;
	}
	return 0;
}

int perf_reader__for_each_ordered(struct perf_reader *r, perf_reader_fn fn, void *ctx)
{
	struct walk w = { .r = r, .sink = sink_ordered, .fn = fn, .ctx = ctx,
			  .stats = &r->walk_stats, .q = ORDER_QUEUE_INIT };
	int err;

	reader__stats_init(r, &r->walk_stats);
	r->nr_unordered = 0;
	streams_init(&w);
	walk_records(&w);
	/* Damage is not an error: what was read before it is still delivered. */
	if (!w.result)
		flush_until(&w, UINT64_MAX);
	err = w.result;
	r->peak_queued = w.peak_queued;
	walk_fini(&w);
	free(w.stream_of);
	free(w.stream_last);
	return err;
}

/* ---- stats ---- */

static int sink_count(struct walk *w, const struct perf_reader_record *rec)
{
	return 0;
}

int perf_reader__stats(struct perf_reader *r, struct perf_reader_stats *ret)
{
	struct perf_reader_stats s;
	struct walk w = { .r = r, .sink = sink_count, .stats = &s };

	reader__stats_init(r, &s);
	walk_records(&w);
	walk_fini(&w);
	if (w.result < 0)
		return w.result;
	*ret = s;
	return 0;
}
