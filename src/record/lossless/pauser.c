/* Pausing the whole target for --lossless: the mechanism chosen (a cgroup freezer, freezer.c,
 * in our own cgroup found by cgroup.c; or signals to a process set, procset.c), the guardian
 * that thaws the target if the recorder dies (guardian.c), and the lock that orders pauses and
 * resumes from many reader threads. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "record/lossless/freezer.h"
#include "record/lossless/guardian.h"
#include "record/lossless/pauser.h"
#include "record/lossless/procset.h"

/* How long cleanup keeps moving survivors out before giving up on removing our cgroup. */
#define RMDIR_TRY_MS 200

struct pauser {
	enum pause_mech mech;
	pthread_mutex_t lock; /* the process list (signals), adoption, waits; not a freezer's writes */
	bool paused;          /* what was asked for last (atomic loads and stores) */
	struct freezer fz;    /* the cgroup mechanisms */
	struct procset ps;    /* signals */
	struct guardian g;
};

/* ---- construction ------------------------------------------------------------------------ */

static struct pauser *pauser_alloc(enum pause_mech mech)
{
	struct pauser *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->mech = mech;
	freezer__init(&p->fz);
	guardian__init(&p->g);
	procset__init(&p->ps, &p->g);
	{
		/* Priority inheritance: the real-time watcher may wait for this lock while
		 * a reader at normal priority holds it; without it the reader could sit
		 * preempted by the very target that should have been paused. */
		pthread_mutexattr_t ma;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
		pthread_mutex_init(&p->lock, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	return p;
}

/* Our cgroup for mechanism m (a freezer) under parent (NULL: beside the recorder). */
static int cgroup_setup(struct pauser *p, enum pause_mech m, const char *parent)
{
	int r = freezer__setup(&p->fz, m == PAUSE_MECH_CGROUP2, parent);

	if (!r)
		p->mech = m;
	return r;
}

static struct guardian_spec guardian_spec(const struct pauser *p)
{
	if (p->mech == PAUSE_MECH_SIGNALS)
		return (struct guardian_spec){ 0 };
	return (struct guardian_spec){ .v2 = p->fz.v2, .cg_dir = p->fz.dir, .cg_home = p->fz.home };
}

struct pauser *pauser__new_for_command(const struct pauser_opts *opts)
{
	static const struct pauser_opts defaults;
	struct pauser *p;
	int r = -ENOTSUP;

	if (!opts)
		opts = &defaults;
	p = pauser_alloc(PAUSE_MECH_SIGNALS);
	if (!p)
		return NULL;
	switch (opts->mech) {
	case PAUSE_MECH_AUTO:
		r = cgroup_setup(p, PAUSE_MECH_CGROUP2, opts->cgroup_parent);
		if (r < 0) {
			int r2 = r;

			freezer__teardown(&p->fz);
			r = cgroup_setup(p, PAUSE_MECH_CGROUP1, opts->cgroup_parent);
			if (r == -ENOTSUP)
				r = r2; /* "not a v1 freezer" says less than why v2 failed */
		}
		if (r < 0 && opts->cgroup_parent)
			goto err; /* the caller asked for that cgroup: do not fall back silently */
		if (r < 0) {
			freezer__teardown(&p->fz);
			p->mech = PAUSE_MECH_SIGNALS;
			r = 0;
		}
		break;
	case PAUSE_MECH_CGROUP2:
	case PAUSE_MECH_CGROUP1:
		r = cgroup_setup(p, opts->mech, opts->cgroup_parent);
		if (r < 0)
			goto err;
		break;
	case PAUSE_MECH_SIGNALS:
		p->mech = PAUSE_MECH_SIGNALS;
		r = 0;
		break;
	default:
		r = -EINVAL;
		goto err;
	}
	if (!opts->no_guardian) {
		struct guardian_spec gs = guardian_spec(p);

		r = guardian__start(&p->g, &gs);
		if (r < 0)
			goto err;
	}
	return p;
err:
	freezer__teardown(&p->fz);
	pauser__free(p);
	errno = -r;
	return NULL;
}

struct pauser *pauser__new_for_pids(const pid_t *pids, size_t n, const struct pauser_opts *opts)
{
	struct pauser *p;
	int r;

	if (opts && opts->mech != PAUSE_MECH_AUTO && opts->mech != PAUSE_MECH_SIGNALS) {
		errno = ENOTSUP;
		return NULL;
	}
	if (!n) {
		errno = EINVAL;
		return NULL;
	}
	p = pauser_alloc(PAUSE_MECH_SIGNALS);
	if (!p)
		return NULL;
	if (!(opts && opts->no_guardian)) {
		struct guardian_spec gs = guardian_spec(p);

		r = guardian__start(&p->g, &gs);
		if (r < 0)
			goto err;
	}
	for (size_t i = 0; i < n; i++) {
		pid_t pid = pids[i] > 0 ? procset__tgid_of(pids[i]) : -EINVAL;

		if (pid == getpid() || pid == p->g.pid) {
			r = -EINVAL;
			goto err;
		}
		if (pid < 0) {
			r = pid;
			goto err;
		}
		r = procset__add(&p->ps, pid, p->paused);
		if (r < 0)
			goto err;
		if (r == 0 && procset__find(&p->ps, pid) < 0) {
			r = -ESRCH;
			goto err;
		}
	}
	return p;
err:
	pauser__free(p);
	errno = -r;
	return NULL;
}

/* ---- use ---------------------------------------------------------------------------------- */

int pauser__adopt(struct pauser *p, pid_t pid)
{
	int r;

	if (pid <= 0 || pid == getpid())
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	if (p->mech == PAUSE_MECH_SIGNALS) {
		r = procset__add(&p->ps, pid, p->paused);
		if (r == 0 && procset__find(&p->ps, pid) < 0)
			r = -ESRCH;
	} else {
		r = freezer__adopt(&p->fz, pid);
	}
	pthread_mutex_unlock(&p->lock);
	return r < 0 ? r : 0;
}

void pauser__group(struct pauser *p, pid_t pgid)
{
	if (pgid > 0)
		guardian__group(&p->g, pgid);
}

int pauser__task_new(struct pauser *p, pid_t pid, pid_t tid)
{
	int r = 0;

	if (p->mech != PAUSE_MECH_SIGNALS)
		return 0;
	if (pid <= 0)
		return -EINVAL;
	/* A new thread of a known process needs nothing: SIGSTOP stops the whole group. */
	pthread_mutex_lock(&p->lock);
	if (pid != getpid() && pid != p->g.pid)
		r = procset__add(&p->ps, pid, p->paused);
	pthread_mutex_unlock(&p->lock);
	return r < 0 ? r : 0;
}

int pauser__task_exit(struct pauser *p, pid_t pid, pid_t tid)
{
	ssize_t i;

	if (p->mech != PAUSE_MECH_SIGNALS || pid != tid)
		return 0;
	pthread_mutex_lock(&p->lock);
	i = procset__find(&p->ps, pid);
	if (i >= 0) {
		/* A pidfd polls readable once the whole thread group has exited; a leader that
		 * called pthread_exit while its threads run is not gone yet. */
		struct pollfd pfd = { .fd = p->ps.procs[i].pidfd, .events = POLLIN };

		if (poll(&pfd, 1, 0) > 0)
			procset__remove(&p->ps, i);
	}
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* A freezer is set without the lock: its fd is fixed once set up, the kernel orders the writes,
 * and a writer held off its CPU in the middle of one must not hold up the next (pauser.h). The
 * signals need the lock for the process list, which only brief kill(2)s hold. */
static int set_paused(struct pauser *p, bool pause)
{
	if (p->mech != PAUSE_MECH_SIGNALS) {
		__atomic_store_n(&p->paused, pause, __ATOMIC_RELAXED);
		return freezer__set(&p->fz, pause);
	}
	pthread_mutex_lock(&p->lock);
	__atomic_store_n(&p->paused, pause, __ATOMIC_RELAXED);
	if (pause)
		procset__stop(&p->ps);
	else
		procset__signal(&p->ps, SIGCONT);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int pauser__pause(struct pauser *p)
{
	return set_paused(p, true);
}

int pauser__resume(struct pauser *p)
{
	return set_paused(p, false);
}

static int stopped_once(struct pauser *p)
{
	if (p->mech != PAUSE_MECH_SIGNALS)
		return freezer__frozen(&p->fz);
	return procset__stopped(&p->ps);
}

int pauser__wait_stopped(struct pauser *p, int timeout_ms)
{
	uint64_t deadline = clock__ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
	useconds_t nap = 20;
	int r;

	pthread_mutex_lock(&p->lock);
	if (!p->paused) {
		r = -EINVAL;
		goto out;
	}
	for (;;) {
		uint64_t now;

		r = stopped_once(p);
		if (r != 0)
			break;
		now = clock__ns();
		if (now >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		if (p->mech == PAUSE_MECH_CGROUP2) {
			/* cgroup.events signals a change with POLLPRI (our read above re-armed it),
			 * but the kernel sends at most one notification per 10 ms per file, and the
			 * previous resume has usually spent it: wake up on our own as well. */
			struct pollfd pfd = { .fd = p->fz.state_fd, .events = POLLPRI };
			struct timespec ts = { 0, (long)nap * 1000 };

			ppoll(&pfd, 1, &ts, NULL);
		} else {
			usleep(nap);
		}
		if (nap < 1000)
			nap *= 2;
	}
	if (r == 1)
		r = 0;
out:
	pthread_mutex_unlock(&p->lock);
	return r;
}

int pauser__measure_pause(struct pauser *p, int timeout_ms, uint64_t *ret_ns)
{
	uint64_t t0 = clock__ns();
	int r = pauser__pause(p);

	if (r < 0)
		return r;
	r = pauser__wait_stopped(p, timeout_ms);
	if (r < 0)
		return r;
	*ret_ns = clock__ns() - t0;
	return 0;
}

/* The helper of pauser__calibrate: spins until killed, and dies with its parent. */
static pid_t spawn_spinner(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		static volatile unsigned long sink;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			sink++;
	}
	return pid;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Pause, wait, resume, n times (fewer when a cycle times out); ns[] gets each latency. */
static unsigned int time_cycles(struct pauser *p, unsigned int n, int timeout_ms, uint64_t *ns)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct timespec run = { 0, 300000 };
		int r = pauser__measure_pause(p, timeout_ms, &ns[i]);

		pauser__resume(p);
		if (r < 0) {
			ns[i++] = (uint64_t)timeout_ms * 1000000;
			break;
		}
		nanosleep(&run, NULL);
	}
	return i;
}

int pauser__calibrate(struct pauser *p, unsigned int cycles, int timeout_ms,
		      uint64_t *ret_worst_ns, uint64_t *ret_median_ns)
{
	struct pauser *own = p;
	uint64_t *ns;
	unsigned int n = 0;
	pid_t pid;
	int r = 0;

	if (!cycles || timeout_ms <= 0)
		return -EINVAL;
	ns = calloc(cycles, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	pid = spawn_spinner();
	if (pid < 0) {
		free(ns);
		return -errno;
	}
	if (p->mech == PAUSE_MECH_SIGNALS) {
		struct pauser_opts o = { .mech = PAUSE_MECH_SIGNALS, .no_guardian = true };

		own = pauser__new_for_pids(&pid, 1, &o);
		if (!own)
			r = -errno;
	} else {
		r = pauser__adopt(p, pid);
	}
	if (!r)
		n = time_cycles(own, cycles, timeout_ms, ns);
	if (own && own != p)
		pauser__free(own);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (!r && !n)
		r = -EIO;
	if (!r) {
		qsort(ns, n, sizeof(*ns), cmp_u64);
		*ret_worst_ns = ns[n - 1];
		*ret_median_ns = ns[n / 2];
	}
	free(ns);
	return r;
}

bool pauser__paused(const struct pauser *p)
{
	return __atomic_load_n(&p->paused, __ATOMIC_RELAXED); /* a snapshot, without the lock */
}

enum pause_mech pauser__mechanism(const struct pauser *p)
{
	return p->mech;
}

const char *pauser__mechanism_name(const struct pauser *p)
{
	switch (p->mech) {
	case PAUSE_MECH_CGROUP2:
		return "cgroup2-freezer";
	case PAUSE_MECH_CGROUP1:
		return "cgroup1-freezer";
	default:
		return "signals";
	}
}

const char *pauser__cgroup_path(const struct pauser *p)
{
	return p->mech == PAUSE_MECH_SIGNALS ? NULL : p->fz.dir;
}

pid_t pauser__guardian_pid(const struct pauser *p)
{
	return p->g.pid > 0 ? p->g.pid : 0;
}

void pauser__free(struct pauser *p)
{
	bool clean = true;

	if (!p)
		return;
	if (p->mech == PAUSE_MECH_SIGNALS) {
		if (p->paused)
			procset__signal(&p->ps, SIGCONT);
	} else if (p->fz.dir) {
		clean = freezer__release(&p->fz, RMDIR_TRY_MS) == 0;
	}
	freezer__teardown(&p->fz);
	procset__clear(&p->ps);
	p->paused = false;
	guardian__stop(&p->g, clean);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
