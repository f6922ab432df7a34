/* The time-order queue as runs merged by a heap; see order_queue.h. */
#include "perf/order_queue.h"

#include <errno.h>
#include <stdlib.h>

#define NONE UINT32_MAX
/* A record that does not follow the last one's run looks among at most this many runs for
 * another; past that (records in little order) it starts a run at once. */
#define SCAN_MAX 32

static bool head_less(const struct order_queue *q, uint32_t a, uint32_t b)
{
	const struct oq_entry *x = &q->ent[q->runs[a].head], *y = &q->ent[q->runs[b].head];

	return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

static void sift_up(struct order_queue *q, uint32_t i)
{
	uint32_t r = q->heap[i];

	while (i) {
		uint32_t p = (i - 1) / 2;

		if (!head_less(q, r, q->heap[p]))
			break;
		q->heap[i] = q->heap[p];
		i = p;
	}
	q->heap[i] = r;
}

static void sift_down(struct order_queue *q, uint32_t i)
{
	uint32_t r = q->heap[i];

	for (;;) {
		uint32_t l = 2 * i + 1, m;

		if (l >= q->nr_heap)
			break;
		m = l + 1 < q->nr_heap && head_less(q, q->heap[l + 1], q->heap[l]) ? l + 1 : l;
		if (!head_less(q, q->heap[m], r))
			break;
		q->heap[i] = q->heap[m];
		i = m;
	}
	q->heap[i] = r;
}

static uint32_t new_entry(struct order_queue *q)
{
	uint32_t i = q->free_ent;

	if (i != NONE) {
		q->free_ent = q->ent[i].next;
		return i;
	}
	if (q->nr_ent == q->cap_ent) {
		size_t n = q->cap_ent ? 2 * (size_t)q->cap_ent : 1024;
		struct oq_entry *m;

		if (n > (size_t)1 << 31 || !(m = realloc(q->ent, n * sizeof(*m))))
			return NONE;
		q->ent = m;
		q->cap_ent = (uint32_t)n;
	}
	return q->nr_ent++;
}

/* A run of the one entry i, in the heap; NONE when out of memory. Every run in use is in the
 * heap, so there are at most nr_heap of them and cap_runs bounds the heap too. */
static uint32_t new_run(struct order_queue *q, uint32_t i)
{
	uint32_t r = q->free_run;

	if (r != NONE) {
		q->free_run = q->runs[r].head;
	} else {
		if (q->nr_heap == q->cap_runs) {
			size_t n = q->cap_runs ? 2 * (size_t)q->cap_runs : 64;
			void *h, *ru;

			/* the heap first: one larger than cap_runs is no harm */
			if (n > (size_t)1 << 31 || !(h = realloc(q->heap, n * sizeof(*q->heap))))
				return NONE;
			q->heap = h;
			if (!(ru = realloc(q->runs, n * sizeof(*q->runs))))
				return NONE;
			q->runs = ru;
			q->cap_runs = (uint32_t)n;
		}
		r = q->nr_heap; /* no free run: runs[0, nr_heap) are all in use */
	}
	q->runs[r].head = q->runs[r].tail = i;
	q->heap[q->nr_heap] = r;
	sift_up(q, q->nr_heap++);
	return r;
}

/* The run whose last record is the latest at or before time, NONE for none. */
static uint32_t run_for(const struct order_queue *q, uint64_t time)
{
	uint32_t best = NONE;
	uint64_t best_time = 0;

	if (q->last != NONE && q->ent[q->runs[q->last].tail].time == time)
		return q->last; /* (nothing can be later and still not after it) */
	if (q->nr_heap > SCAN_MAX)
		return q->last != NONE && q->ent[q->runs[q->last].tail].time <= time ? q->last : NONE;
	for (uint32_t k = 0; k < q->nr_heap; k++) {
		uint64_t t = q->ent[q->runs[q->heap[k]].tail].time;

		if (t <= time && (best == NONE || t > best_time)) {
			best = q->heap[k];
			best_time = t;
		}
	}
	return best;
}

int order_queue__push(struct order_queue *q, uint64_t time, const struct perf_reader_record *rec,
		      uint32_t size)
{
	uint32_t i = new_entry(q), r;
	struct oq_entry *e;

	if (i == NONE)
		return -ENOMEM;
	e = &q->ent[i];
	e->time = time;
	e->seq = q->seq;
	e->rec = *rec;
	e->size = size;
	e->next = NONE;
	r = run_for(q, time);
	if (r == NONE) {
		r = new_run(q, i);
		if (r == NONE) {
			e->next = q->free_ent;
			q->free_ent = i;
			return -ENOMEM;
		}
	} else {
		/* the run's head stays: its place in the heap too */
		q->ent[q->runs[r].tail].next = i;
		q->runs[r].tail = i;
	}
	q->last = r;
	q->seq++;
	q->nr_queued++;
	return 0;
}

void order_queue__pop(struct order_queue *q, struct oq_entry *ret)
{
	uint32_t r = q->heap[0], i = q->runs[r].head;

	*ret = q->ent[i];
	q->runs[r].head = q->ent[i].next;
	q->ent[i].next = q->free_ent;
	q->free_ent = i;
	q->nr_queued--;
	if (q->runs[r].head == NONE) {
		q->runs[r].head = q->free_run;
		q->free_run = r;
		if (q->last == r)
			q->last = NONE;
		q->heap[0] = q->heap[--q->nr_heap];
	}
	if (q->nr_heap)
		sift_down(q, 0);
}

size_t order_queue__after_top(const struct order_queue *q, const struct oq_entry **ret, size_t max)
{
	size_t n = 0;
	uint32_t next;

	if (!q->nr_heap)
		return 0;
	next = q->ent[q->runs[q->heap[0]].head].next;
	if (n < max && next != NONE)
		ret[n++] = &q->ent[next];
	for (uint32_t k = 1; k < 3 && k < q->nr_heap && n < max; k++)
		ret[n++] = &q->ent[q->runs[q->heap[k]].head];
	return n;
}

void order_queue__fini(struct order_queue *q, void (*release)(struct oq_entry *e))
{
	for (uint32_t k = 0; k < q->nr_heap; k++)
		for (uint32_t i = q->runs[q->heap[k]].head; i != NONE; i = q->ent[i].next)
			release(&q->ent[i]);
	free(q->ent);
	free(q->runs);
	free(q->heap);
	*q = (struct order_queue)ORDER_QUEUE_INIT;
}
