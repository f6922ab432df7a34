/* The reader pool: long-lived work items on the workqueue, each draining a fixed subset of the
 * per-CPU rings into a staging buffer, compressing it with its own zstd context and appending it
 * through the one writer. A slow reader never blocks the others: each owns its rings, its
 * buffer and its compressor; they meet only in the writer's append lock. */
#ifndef PRECORD_READERS_H
#define PRECORD_READERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct readers;
struct evlist;
struct perf_writer;
struct wq;

struct readers_hooks {
	void *ctx;
	/* A FORK or EXIT record was read (type is PERF_RECORD_FORK/EXIT). Called from reader
	 * threads; must be thread-safe and cheap. May be NULL. */
	void (*task)(void *ctx, uint32_t type, uint32_t pid, uint32_t tid);
	/* Fill level of ring i in per mille, reported before and after every drain of it. Called
	 * from reader threads; may be NULL. */
	void (*fill)(void *ctx, size_t ring, unsigned int permille);
};

struct readers_opts {
	struct evlist *evlist;
	struct perf_writer *writer;
	struct wq *wq;
	unsigned int nr_readers;      /* rings are dealt round-robin; 0: one per ring */
	int comp_level;               /* 0: write records as they are */
	bool fast_compress;           /* no long-distance matching (less CPU, larger file) */
	const struct perf_event_attr *attr; /* the events' (one sample layout for all): to find
					     * sample times and user stacks; must outlive the pool */
	bool realtime;                /* try SCHED_FIFO for the reader threads */
	int poll_ms;                  /* longest sleep between passes (default 100) */
	size_t max_slice;             /* bytes drained before compressing (0: 1 MiB) */
	bool hold_on_full;            /* a full disk: keep what could not be written and stop
				       * draining (the rings fill, --lossless pauses the target)
				       * until it can be; else count it lost and go on */
	struct readers_hooks hooks;
};

struct readers_stats {
	uint64_t records;
	uint64_t samples;
	uint64_t switches;           /* PERF_RECORD_SWITCH(_CPU_WIDE) */
	uint64_t lost_records;       /* PERF_RECORD_LOST records */
	uint64_t lost_events;        /* sum of their counts */
	uint64_t bytes_read;         /* raw bytes drained from the rings */
	uint64_t bytes_written;      /* bytes appended to the file (compressed or not) */
	uint64_t wakeups;            /* passes */
	uint64_t ring_discarded;     /* bytes thrown away on a corrupt ring header */
	/* Drained but not in the file: appends that failed (a full disk) and frames that could
	 * not be compressed. Counted in records/samples/switches above too. */
	uint64_t unwritten_records, unwritten_samples, unwritten_bytes;
	uint64_t max_back_ns;        /* the largest step back in time between a ring's records
				      * in the order drained (see perf/ring_order.h) */
	bool waiting;                /* hold_on_full: a reader waits for space right now */
	int error;                   /* first write error (-errno), 0 if none */
};

/* Start the readers on the workqueue. Returns NULL with errno set. */
struct readers *readers__start(const struct readers_opts *opts);

/* A consistent-enough snapshot of the totals (each counter is read atomically). */
void readers__stats(const struct readers *r, struct readers_stats *ret);

/* Number of reader threads and, for each, how many rings it drains. */
unsigned int readers__count(const struct readers *r);

/* Direct every later pass to w (a file rotation): waits for the passes in progress, which end
 * on the old writer, so each record goes to exactly one file and each file's FINISHED_ROUND
 * bookkeeping starts from scratch. The caller finalizes the old writer afterwards. Returns 0, or
 * -errno from w's round setup (nothing changed then). */
int readers__swap_writer(struct readers *r, struct perf_writer *w);

/* Tell the readers to drain everything that is left and end (call after the events were
 * disabled), wait for them. What still cannot be written then is counted unwritten. Returns 0
 * or the first append error (-errno). */
int readers__stop(struct readers *r);

/* Stops if needed, frees. NULL is a no-op. */
void readers__free(struct readers *r);

#endif
