/* A thread pool with one queue per worker, placed by affinity scope. It serves three users:
 * the recorder's reader pool (long-lived work, one per CPU), synthesis (parallel_for over /proc
 * pids) and preport's unwinding (parallel_for over sample batches). Submitted items stay on their
 * worker's queue and run there in order. parallel_for never waits for a busy worker: its indexes
 * are claimed in chunks from one shared atomic counter by whoever is free (idle workers and the
 * calling thread), so a worker running a long-lived item simply takes no part. */
#ifndef PRECORD_WORKQUEUE_H
#define PRECORD_WORKQUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/topology.h"

struct wq;

struct wq_opts {
	unsigned int nr_workers;  /* 0: one per online CPU (of cpus, when given) */
	enum topo_scope scope;    /* where each worker may run; TOPO_SCOPE_SYSTEM: anywhere */
	bool strict;              /* fail (-errno) when affinity cannot be set, rather than ignore */
	const cpu_set_t *cpus;     /* restrict placement to these CPUs; NULL: all online */
	const char *name;         /* thread name prefix (<= 10 chars), "precord" if NULL */
	/* Topology to place by; NULL: read /sys. Tests pass a fake one. Only used inside wq__new;
	 * the placement is copied, so it may be freed afterwards. Without one (and /sys unreadable)
	 * a non-strict pool runs unplaced on the CPUs the process may use. */
	const struct topology *topo;
};

/* Start the workers; worker i is named "<name>/<i>" and placed on scope(cpu_i), cpu_i being the
 * i-th online CPU (of opts->cpus), wrapping round when there are more workers than CPUs. Returns
 * NULL with errno set: EINVAL (bad opts, or no online CPU in opts->cpus), ENOMEM, EAGAIN, or
 * with strict, whatever pthread_setaffinity_np or reading /sys failed with. */
struct wq *wq__new(const struct wq_opts *opts);

unsigned int wq__nr_workers(const struct wq *wq);

/* The CPUs worker i may run on, as placed by the scope. Returns 0 or -EINVAL. */
int wq__worker_cpus(const struct wq *wq, unsigned int i, cpu_set_t *ret_set);

/* Queue fn(arg) on worker i's own queue (i % nr_workers). Long-lived work (a reader loop) is
 * fine: the other workers keep serving their queues. Returns 0 or -ENOMEM. */
int wq__submit(struct wq *wq, unsigned int worker, void (*fn)(void *arg), void *arg);

/* Run fn(i, ctx) for every i in [0, n) exactly once, on all workers that are not running
 * long-lived work plus the calling thread, in chunks of `chunk` indexes (0: automatic), and
 * return when all are done. Several threads may call it at once. The caller always takes part
 * and never waits for a worker that has not started a chunk, so it completes even when every
 * worker is busy, and may be called from inside a worker item or from fn itself. Returns 0 or
 * -EINVAL (fn NULL, n > SIZE_MAX / 2); nothing has run when it fails. */
int wq__parallel_for(struct wq *wq, size_t n, size_t chunk, void (*fn)(size_t i, void *ctx),
		     void *ctx);

/* Wait until every submitted item has finished. Long-lived work must be told to stop first. */
void wq__wait_idle(struct wq *wq);

/* Wait for all queued work to finish, stop and join the workers, free. NULL is a no-op. */
void wq__free(struct wq *wq);

#endif
