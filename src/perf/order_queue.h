/* The time-order queue of perf_reader__for_each_ordered: records go in as the file holds them
 * and come out by (time, seq), seq being the order they went in.
 *
 * A file's records arrive as runs already in time order (a ring's records, written a chunk at a
 * time: perf's two CPUs' chunks of a round interleave in time, each in order within). The queue
 * keeps each run as a list and a heap of the runs by their first record, so a record costs a
 * step along its run and a sift among a few runs, not a sift among every queued record. A record
 * joins the run whose last record is the latest not after it; one older than every run's last
 * starts a run of its own, so any order of arrival comes out right (records in no order at all
 * make runs of one, the heap of records this replaces). */
#ifndef PRECORD_ORDER_QUEUE_H
#define PRECORD_ORDER_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "perf/reader.h"

struct oq_entry { /* 64 bytes: one cache line */
	uint64_t time, seq;
	struct perf_reader_record rec;
	uint32_t size;  /* rec.hdr->size, read while the record was in cache */
	uint32_t next;  /* the queue's: the next record of its run */
};
_Static_assert(sizeof(struct oq_entry) == 64, "a queued record fills one cache line");

struct oq_run {
	uint32_t head, tail; /* entries; a free run keeps the next free run in head */
};

struct order_queue {
	struct oq_entry *ent;
	uint32_t nr_ent, cap_ent, free_ent; /* free entries are listed through next */
	struct oq_run *runs;
	uint32_t cap_runs, free_run;
	uint32_t *heap;  /* runs, a min-heap on their head's (time, seq) */
	uint32_t nr_heap;
	uint32_t last;   /* the run the last record joined (UINT32_MAX: none) */
	size_t nr_queued;
	uint64_t seq;
};

#define ORDER_QUEUE_INIT { .free_ent = UINT32_MAX, .free_run = UINT32_MAX, .last = UINT32_MAX }

/* Queue rec (its time, and its size as read now); its seq is the count of records queued
 * before it. Returns 0 or -ENOMEM. */
int order_queue__push(struct order_queue *q, uint64_t time, const struct perf_reader_record *rec,
		      uint32_t size);

/* The record to come out next, or NULL when the queue is empty. */
static inline const struct oq_entry *order_queue__top(const struct order_queue *q)
{
	return q->nr_heap ? &q->ent[q->runs[q->heap[0]].head] : NULL;
}

/* Take the top record out into ret (the queue must not be empty). */
void order_queue__pop(struct order_queue *q, struct oq_entry *ret);

/* Up to max of the records likely to come out after the top one (to prefetch): the one after
 * it in its run and the heads of the runs below it. Returns how many it gave. */
size_t order_queue__after_top(const struct order_queue *q, const struct oq_entry **ret, size_t max);

static inline size_t order_queue__len(const struct order_queue *q)
{
	return q->nr_queued;
}

/* Hand every queued record to release (in no particular order) and free the queue. */
void order_queue__fini(struct order_queue *q, void (*release)(struct oq_entry *e));

#endif
