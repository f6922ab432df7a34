/* A thread pool with one queue per worker, placed by affinity scope. It serves three users:
 * the recorder's reader pool (long-lived work, one per CPU), synthesis (parallel_for over /proc
 * pids) and preport's unwinding (parallel_for over sample batches). A worker that is busy with
 * long-lived work never receives parallel_for chunks: idle workers steal from busy queues. */
#ifndef PRECORD_WORKQUEUE_H
#define PRECORD_WORKQUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "topology.h"

struct wq;

struct wq_opts {
	unsigned int nr_workers;  /* 0: one per online CPU (of cpus, when given) */
	enum topo_scope scope;    /* where each worker may run; TOPO_SCOPE_SYSTEM: anywhere */
	bool strict;              /* fail (-errno) when affinity cannot be set, rather than ignore */
	const cpu_set_t *cpus;     /* restrict placement to these CPUs; NULL: all online */
	const char *name;         /* thread name prefix (<= 10 chars), "precord" if NULL */
};

/* Start the workers. Returns NULL with errno set. */
struct wq *wq__new(const struct wq_opts *opts);

unsigned int wq__nr_workers(const struct wq *wq);

/* The CPUs worker i may run on, as placed by the scope. Returns 0 or -EINVAL. */
int wq__worker_cpus(const struct wq *wq, unsigned int i, cpu_set_t *ret_set);

/* Queue fn(arg) on worker i's own queue (i % nr_workers). Long-lived work (a reader loop) is
 * fine: the other workers keep serving their queues. Returns 0 or -ENOMEM. */
int wq__submit(struct wq *wq, unsigned int worker, void (*fn)(void *arg), void *arg);

/* Run fn(i, ctx) for every i in [0, n) exactly once, on all workers that are not running
 * long-lived work plus the calling thread, in chunks of `chunk` indexes (0: automatic), and
 * return when all are done. The caller must not be a worker of this pool. Returns 0 or -errno
 * (nothing has run when it fails). */
int wq__parallel_for(struct wq *wq, size_t n, size_t chunk, void (*fn)(size_t i, void *ctx),
		     void *ctx);

/* Wait until every submitted item has finished. Long-lived work must be told to stop first. */
void wq__wait_idle(struct wq *wq);

/* Wait for all queued work to finish, stop and join the workers, free. NULL is a no-op. */
void wq__free(struct wq *wq);

#endif
