/* A thread pool: each worker owns a FIFO queue (mutex + condvar) of submitted items, and all
 * workers share a list of running parallel_for jobs. A job's indexes are handed out by one
 * atomic counter, so whoever is free claims the next chunk: a worker busy in a long-lived item
 * simply never looks, and the calling thread claims chunks too, which is why a job always
 * finishes. The job lives on its caller's stack; the caller unlinks it and then waits, under
 * pf_lock, until no helper is still inside it, so a helper never touches a dead job. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/topology.h"
#include "lib/workqueue.h"

struct item {
	void (*fn)(void *arg);
	void *arg;
	struct item *next;
};

struct pf_job {
	size_t n, chunk;
	atomic_size_t next;            /* first unclaimed index */
	void (*fn)(size_t i, void *ctx);
	void *ctx;
	unsigned int helpers;          /* workers inside the job; under wq->pf_lock */
	struct pf_job *prev, *succ;    /* wq->jobs list; under wq->pf_lock */
};

struct worker {
	struct wq *wq;
	pthread_t thread;
	bool started;
	cpu_set_t cpus;
	pthread_mutex_t lock;
	pthread_cond_t wake;           /* an item arrived, a job was posted, or stop */
	pthread_cond_t idle;           /* the queue drained and nothing runs */
	struct item *head, *tail;      /* under lock */
	atomic_uint queued;            /* items in the queue: a helper polls it to yield */
	bool running;                  /* under lock */
	bool stop;                     /* under lock */
	unsigned long seen_gen;        /* the pf_gen this worker last found nothing to do at */
};

struct wq {
	unsigned int nr_workers;
	struct worker *workers;
	pthread_mutex_t pf_lock;
	pthread_cond_t pf_left;        /* a job's last helper left it */
	struct pf_job *jobs;           /* under pf_lock */
	/* Bumped after each job is linked; a worker compares it with seen_gen under its own lock
	 * before sleeping, and the poster takes that lock before signalling, so no wake-up is lost. */
	atomic_ulong pf_gen;
};

/* Claim one chunk of job: [*ret_start, *ret_end). False when nothing is left. A CAS loop rather
 * than fetch_add, so the counter never runs past n whatever the number of participants. */
static bool claim(struct pf_job *job, size_t *ret_start, size_t *ret_end)
{
	size_t cur = atomic_load_explicit(&job->next, memory_order_relaxed);

	for (;;) {
		size_t take;

		if (cur >= job->n)
			return false;
		take = job->n - cur < job->chunk ? job->n - cur : job->chunk;
		if (atomic_compare_exchange_weak_explicit(&job->next, &cur, cur + take,
							  memory_order_relaxed, memory_order_relaxed)) {
			*ret_start = cur;
			*ret_end = cur + take;
			return true;
		}
	}
}

/* Run chunks of job until none is left. A worker (w non-NULL) stops early when an item lands in
 * its own queue, so a reader loop submitted to it starts within one chunk. Returns true when it
 * stopped early. */
static bool run_chunks(struct pf_job *job, struct worker *w)
{
	size_t start, end;

	for (;;) {
		if (w && atomic_load_explicit(&w->queued, memory_order_relaxed))
			return true;
		if (!claim(job, &start, &end))
			return false;
		for (size_t i = start; i < end; i++)
			job->fn(i, job->ctx);
	}
}

/* Help every job that still has unclaimed indexes. Returns false when it stopped because the
 * worker's own queue got an item, true when no job had anything left. */
static bool pf_help(struct wq *wq, struct worker *w)
{
	for (;;) {
		struct pf_job *job;
		bool yielded;

		pthread_mutex_lock(&wq->pf_lock);
		for (job = wq->jobs; job; job = job->succ)
			if (atomic_load_explicit(&job->next, memory_order_relaxed) < job->n)
				break;
		if (!job) {
			pthread_mutex_unlock(&wq->pf_lock);
			return true;
		}
		job->helpers++;
		pthread_mutex_unlock(&wq->pf_lock);

		yielded = run_chunks(job, w);

		pthread_mutex_lock(&wq->pf_lock);
		if (--job->helpers == 0)
			pthread_cond_broadcast(&wq->pf_left);
		pthread_mutex_unlock(&wq->pf_lock);
		if (yielded)
			return false;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct wq *wq = w->wq;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		unsigned long gen;

		if (w->head) {
			struct item *it = w->head;

			w->head = it->next;
			if (!w->head)
				w->tail = NULL;
			atomic_fetch_sub_explicit(&w->queued, 1, memory_order_relaxed);
			w->running = true;
			pthread_mutex_unlock(&w->lock);
			it->fn(it->arg);
			free(it);
			pthread_mutex_lock(&w->lock);
			w->running = false;
			if (!w->head)
				pthread_cond_broadcast(&w->idle);
			continue;
		}
		gen = atomic_load(&wq->pf_gen);
		if (gen != w->seen_gen) {
			bool drained;

			pthread_mutex_unlock(&w->lock);
			drained = pf_help(wq, w);
			pthread_mutex_lock(&w->lock);
			/* Having yielded to an item, come back to the job afterwards. */
			if (drained)
				w->seen_gen = gen;
			continue;
		}
		if (w->stop)
			break;
		pthread_cond_wait(&w->wake, &w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

unsigned int wq__nr_workers(const struct wq *wq)
{
	return wq->nr_workers;
}

int wq__worker_cpus(const struct wq *wq, unsigned int i, cpu_set_t *ret_set)
{
	if (!wq || i >= wq->nr_workers)
		return -EINVAL;
	*ret_set = wq->workers[i].cpus;
	return 0;
}

int wq__submit(struct wq *wq, unsigned int worker, void (*fn)(void *arg), void *arg)
{
	struct worker *w;
	struct item *it;

	if (!wq || !fn)
		return -EINVAL;
	it = malloc(sizeof(*it));
	if (!it)
		return -ENOMEM;
	*it = (struct item){ .fn = fn, .arg = arg };
	w = &wq->workers[worker % wq->nr_workers];
	pthread_mutex_lock(&w->lock);
	if (w->tail)
		w->tail->next = it;
	else
		w->head = it;
	w->tail = it;
	atomic_fetch_add_explicit(&w->queued, 1, memory_order_relaxed);
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

int wq__parallel_for(struct wq *wq, size_t n, size_t chunk, void (*fn)(size_t i, void *ctx),
		     void *ctx)
{
	struct pf_job job = { .n = n, .fn = fn, .ctx = ctx };

	if (!wq || !fn || n > SIZE_MAX / 2)
		return -EINVAL;
	if (n == 0)
		return 0;
	if (chunk == 0) {
		/* About four chunks per participant: enough to even out uneven items, few enough
		 * that the shared counter is not a hot spot. */
		chunk = n / (4 * ((size_t)wq->nr_workers + 1));
		if (chunk == 0)
			chunk = 1;
	}
	job.chunk = chunk;
	atomic_init(&job.next, 0);

	/* One chunk: nobody could help, so waking them would be pure cost. */
	if (n <= chunk) {
		run_chunks(&job, NULL);
		return 0;
	}

	pthread_mutex_lock(&wq->pf_lock);
	job.succ = wq->jobs;
	if (wq->jobs)
		wq->jobs->prev = &job;
	wq->jobs = &job;
	pthread_mutex_unlock(&wq->pf_lock);
	atomic_fetch_add(&wq->pf_gen, 1);
	for (unsigned int i = 0; i < wq->nr_workers; i++) {
		struct worker *w = &wq->workers[i];

		pthread_mutex_lock(&w->lock);
		if (!w->running)
			pthread_cond_signal(&w->wake);
		pthread_mutex_unlock(&w->lock);
	}

	run_chunks(&job, NULL);

	/* Every index is claimed. Unlink so no new helper enters, then wait for those inside: each
	 * leaves only after finishing its chunk, so then every index has run. */
	pthread_mutex_lock(&wq->pf_lock);
	if (job.prev)
		job.prev->succ = job.succ;
	else
		wq->jobs = job.succ;
	if (job.succ)
		job.succ->prev = job.prev;
	while (job.helpers)
		pthread_cond_wait(&wq->pf_left, &wq->pf_lock);
	pthread_mutex_unlock(&wq->pf_lock);
	return 0;
}

void wq__wait_idle(struct wq *wq)
{
	bool waited;

	if (!wq)
		return;
	/* An item may submit to a worker already passed: repeat until a pass finds all idle. */
	do {
		waited = false;
		for (unsigned int i = 0; i < wq->nr_workers; i++) {
			struct worker *w = &wq->workers[i];

			pthread_mutex_lock(&w->lock);
			while (w->head || w->running) {
				waited = true;
				pthread_cond_wait(&w->idle, &w->lock);
			}
			pthread_mutex_unlock(&w->lock);
		}
	} while (waited);
}

void wq__free(struct wq *wq)
{
	if (!wq)
		return;
	for (unsigned int i = 0; i < wq->nr_workers; i++) {
		struct worker *w = &wq->workers[i];

		if (!w->started)
			continue;
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_signal(&w->wake);
		pthread_mutex_unlock(&w->lock);
	}
	/* A worker leaves only with an empty queue, so joining drains every pending item. */
	for (unsigned int i = 0; i < wq->nr_workers; i++)
		if (wq->workers[i].started)
			pthread_join(wq->workers[i].thread, NULL);
	for (unsigned int i = 0; i < wq->nr_workers; i++) {
		struct worker *w = &wq->workers[i];

		while (w->head) {
			struct item *it = w->head;

			w->head = it->next;
			free(it);
		}
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->wake);
		pthread_cond_destroy(&w->idle);
	}
	pthread_mutex_destroy(&wq->pf_lock);
	pthread_cond_destroy(&wq->pf_left);
	free(wq->workers);
	free(wq);
}

/* The i-th CPU of set, counting round when i >= CPU_COUNT(set). */
static int nth_cpu(const cpu_set_t *set, unsigned int i)
{
	unsigned int k = i % (unsigned int)CPU_COUNT(set);

	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set) && k-- == 0)
			return c;
	return -1;
}

/* Work out every worker's CPU set. Returns the number of workers, or -errno. */
static int place(const struct wq_opts *opts, struct topology **owned, cpu_set_t **ret_sets)
{
	const struct topology *topo = opts->topo;
	cpu_set_t candidates;
	unsigned int nr;
	cpu_set_t *sets;

	if (!topo) {
		*owned = topology__read("/sys");
		if (!*owned && opts->strict)
			return -errno;
		topo = *owned;
	}
	if (topo) {
		candidates = *topology__online(topo);
	} else if (sched_getaffinity(0, sizeof(candidates), &candidates) < 0) {
		return -errno;
	}
	if (opts->cpus)
		CPU_AND(&candidates, &candidates, opts->cpus);
	if (CPU_COUNT(&candidates) == 0)
		return -EINVAL;

	nr = opts->nr_workers ? opts->nr_workers : (unsigned int)CPU_COUNT(&candidates);
	sets = calloc(nr, sizeof(*sets));
	if (!sets)
		return -ENOMEM;
	for (unsigned int i = 0; i < nr; i++) {
		int cpu = nth_cpu(&candidates, i);

		if (!topo) {
			/* Unplaced: anywhere the process may run. */
			sets[i] = candidates;
			continue;
		}
		if (topology__scope_cpus(topo, cpu, opts->scope, &sets[i]) < 0) {
			free(sets);
			return -EINVAL;
		}
		if (opts->cpus)
			CPU_AND(&sets[i], &sets[i], &candidates);
	}
	*ret_sets = sets;
	return (int)nr;
}

struct wq *wq__new(const struct wq_opts *opts)
{
	static const struct wq_opts defaults = { .scope = TOPO_SCOPE_SYSTEM };
	_cleanup_free_ cpu_set_t *sets = NULL;
	struct topology *owned = NULL;
	const char *prefix;
	sigset_t all, saved;
	struct wq *wq;
	int nr, r = 0;

	if (!opts)
		opts = &defaults;
	if ((unsigned int)opts->scope > TOPO_SCOPE_SYSTEM) {
		errno = EINVAL;
		return NULL;
	}
	prefix = opts->name ? opts->name : "precord";
	nr = place(opts, &owned, &sets);
	topology__free(owned);
	if (nr < 0) {
		errno = -nr;
		return NULL;
	}

	wq = calloc(1, sizeof(*wq));
	if (!wq)
		return NULL;
	wq->workers = calloc(nr, sizeof(*wq->workers));
	if (!wq->workers) {
		free(wq);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&wq->pf_lock, NULL);
	pthread_cond_init(&wq->pf_left, NULL);
	atomic_init(&wq->pf_gen, 0);
	wq->nr_workers = nr;
	for (int i = 0; i < nr; i++) {
		struct worker *w = &wq->workers[i];

		w->wq = wq;
		w->cpus = sets[i];
		pthread_mutex_init(&w->lock, NULL);
		pthread_cond_init(&w->wake, NULL);
		pthread_cond_init(&w->idle, NULL);
		atomic_init(&w->queued, 0);
	}

	/* Workers inherit a full signal mask: process-directed signals (SIGINT, SIGCHLD) then go
	 * to the program's own threads, never into a worker's item. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	for (int i = 0; i < nr; i++) {
		struct worker *w = &wq->workers[i];
		char name[16];

		r = -pthread_create(&w->thread, NULL, worker_main, w);
		if (r < 0)
			break;
		w->started = true;
		snprintf(name, sizeof(name), "%.10s/%u", prefix, (unsigned int)i % 10000);
		pthread_setname_np(w->thread, name);
		r = -pthread_setaffinity_np(w->thread, sizeof(w->cpus), &w->cpus);
		if (r < 0 && opts->strict)
			break;
		r = 0;
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (r < 0) {
		wq__free(wq);
		errno = -r;
		return NULL;
	}
	return wq;
}
