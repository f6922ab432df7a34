/* perf_event_open for every (event, CPU, task) and one mmap'd ring per CPU. The first fd opened
 * on a CPU owns that CPU's ring; every later fd of the CPU is redirected into it, so a reader
 * drains exactly one ring per CPU whatever the number of events and tasks. */
#include "record/evlist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/creds.h"
#include "ringbuf/ringbuf.h"

struct evlist {
	size_t nr_attrs, nr_cpus, nr_tids;
	int *cpus;
	pid_t *tids;           /* [tid] as given */
	int *fds;              /* [attr][cpu][tid] */
	uint64_t *ids;         /* same shape */
	struct ringbuf **rings; /* [cpu] */
	int *ring_fds;          /* [cpu] */
	int *poll_fds;          /* [cpu]: a dummy of our own redirected into the ring, else ring_fds */
	uint64_t read_format_lost; /* PERF_FORMAT_LOST set in the attrs */
};

static size_t idx(const struct evlist *el, size_t a, size_t c, size_t t)
{
	return (a * el->nr_cpus + c) * el->nr_tids + t;
}

static int perf_event_open(const struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The fd to poll for a ring. The ring's own fd reports POLLHUP, at once and at every poll,
 * as soon as the task it was opened on has exited with no child left: pollers spin from then
 * on, and in -p mode other tasks may still be writing into the ring. A dummy event on our own
 * thread (which outlives the recording), redirected into the ring, is woken by every wakeup
 * of the ring like every fd attached to it, and never hangs up. It records nothing. If the
 * kernel refuses it, the ring's fd it is. */
static int open_poll_fd(int ring_fd, int cpu, const struct perf_event_attr *ring_attr)
{
	/* the kernel redirects only between events of one clock */
	struct perf_event_attr d = {
		.size = sizeof(d),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.use_clockid = ring_attr->use_clockid,
		.clockid = ring_attr->clockid,
	};
	int fd = perf_event_open(&d, 0, cpu);

	if (fd < 0)
		return ring_fd;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) < 0) {
		close(fd);
		return ring_fd;
	}
	return fd;
}

void evlist__free(struct evlist *el)
{
	if (!el)
		return;
	if (el->rings)
		for (size_t c = 0; c < el->nr_cpus; c++)
			ringbuf__free(el->rings[c]);
	if (el->fds)
		for (size_t i = 0; i < el->nr_attrs * el->nr_cpus * el->nr_tids; i++)
			if (el->fds[i] >= 0)
				close(el->fds[i]);
	free(el->rings);
	if (el->poll_fds)
		for (size_t c = 0; c < el->nr_cpus; c++)
			if (el->poll_fds[c] >= 0 && (!el->ring_fds || el->poll_fds[c] != el->ring_fds[c]))
				close(el->poll_fds[c]);
	free(el->poll_fds);
	free(el->ring_fds);
	free(el->fds);
	free(el->ids);
	free(el->cpus);
	free(el->tids);
	free(el);
}

struct open_ctx {
	struct evlist *el;
	const struct evlist_opts *o;
	struct evlist_failure *ret_fail;
};

/* Every perf_event_open, with the opts' credentials (see creds__run). Returns 0 or -errno. */
static int open_fds(void *p)
{
	struct open_ctx *x = p;
	const struct evlist_opts *o = x->o;

	for (size_t c = 0; c < o->nr_cpus; c++) {
		for (size_t a = 0; a < o->nr_attrs; a++) {
			for (size_t t = 0; t < o->nr_tids; t++) {
				int fd = perf_event_open(&o->attrs[a], o->tids[t], o->cpus[c]);

				if (fd < 0) {
					if (x->ret_fail)
						*x->ret_fail = (struct evlist_failure){
							a, o->cpus[c], o->tids[t], errno, 0, 0 };
					return -errno;
				}
				x->el->fds[idx(x->el, a, c, t)] = fd;
			}
		}
	}
	return 0;
}

struct evlist *evlist__open(const struct evlist_opts *o, struct evlist_failure *ret_fail)
{
	struct open_ctx ctx;
	struct evlist *el;
	size_t n;
	int err;

	if (!o->nr_attrs || !o->nr_cpus || !o->nr_tids) {
		errno = EINVAL;
		return NULL;
	}
	el = calloc(1, sizeof(*el));
	if (!el)
		return NULL;
	el->nr_attrs = o->nr_attrs;
	el->nr_cpus = o->nr_cpus;
	el->nr_tids = o->nr_tids;
	n = o->nr_attrs * o->nr_cpus * o->nr_tids;
	el->cpus = calloc(o->nr_cpus, sizeof(int));
	el->tids = malloc(o->nr_tids * sizeof(pid_t));
	if (el->tids)
		memcpy(el->tids, o->tids, o->nr_tids * sizeof(pid_t));
	el->fds = malloc(n * sizeof(int));
	if (el->fds)
		for (size_t i = 0; i < n; i++)
			el->fds[i] = -1;
	el->ids = calloc(n, sizeof(uint64_t));
	el->rings = calloc(o->nr_cpus, sizeof(*el->rings));
	el->ring_fds = malloc(o->nr_cpus * sizeof(int));
	el->poll_fds = malloc(o->nr_cpus * sizeof(int));
	for (size_t c = 0; c < o->nr_cpus; c++) {
		if (el->ring_fds)
			el->ring_fds[c] = -1;
		if (el->poll_fds)
			el->poll_fds[c] = -1;
	}
	if (!el->cpus || !el->tids || !el->fds || !el->ids || !el->rings || !el->ring_fds || !el->poll_fds)
		goto err_errno;
	memcpy(el->cpus, o->cpus, o->nr_cpus * sizeof(int));
	el->read_format_lost = o->attrs[0].read_format & PERF_FORMAT_LOST;

	ctx = (struct open_ctx){ el, o, ret_fail };
	err = creds__run(o->creds, open_fds, &ctx);
	if (err) {
		errno = -err;
		goto err_errno;
	}
	for (size_t c = 0; c < o->nr_cpus; c++) {
		for (size_t a = 0; a < o->nr_attrs; a++) {
			for (size_t t = 0; t < o->nr_tids; t++) {
				int fd = el->fds[idx(el, a, c, t)];

				if (o->filters && o->filters[a] &&
				    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, o->filters[a]) < 0) {
					if (ret_fail)
						*ret_fail = (struct evlist_failure){ a, o->cpus[c], o->tids[t],
										     errno, 0, 1 };
					goto err_errno;
				}
				if (ioctl(fd, PERF_EVENT_IOC_ID, &el->ids[idx(el, a, c, t)]) < 0)
					goto err_errno;
				if (el->ring_fds[c] < 0) {
					el->rings[c] = ringbuf__mmap(fd, o->mmap_pages);
					if (!el->rings[c]) {
						if (ret_fail)
							*ret_fail = (struct evlist_failure){
								a, o->cpus[c], o->tids[t], errno, 1, 0 };
						goto err_errno;
					}
					el->ring_fds[c] = fd;
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, el->ring_fds[c]) < 0) {
					if (ret_fail)
						*ret_fail = (struct evlist_failure){ a, o->cpus[c], o->tids[t],
										     errno, 1, 0 };
					goto err_errno;
				}
			}
		}
		el->poll_fds[c] = open_poll_fd(el->ring_fds[c], o->cpus[c], &o->attrs[0]);
	}
	return el;

err_errno:;
	int saved = errno;
	evlist__free(el);
	errno = saved;
	return NULL;
}

size_t evlist__nr_fds(const struct evlist *el)
{
	return el->nr_attrs * el->nr_cpus * el->nr_tids;
}

int evlist__fd(const struct evlist *el, size_t i, pid_t *ret_tid)
{
	if (i >= evlist__nr_fds(el))
		return -1;
	*ret_tid = el->tids[i % el->nr_tids];
	return el->fds[i];
}

size_t evlist__nr_rings(const struct evlist *el)
{
	return el->nr_cpus;
}

struct ringbuf *evlist__ring(const struct evlist *el, size_t i)
{
	return el->rings[i];
}

int evlist__ring_fd(const struct evlist *el, size_t i)
{
	return el->poll_fds[i];
}

int evlist__ring_cpu(const struct evlist *el, size_t i)
{
	return el->cpus[i];
}

const uint64_t *evlist__ids(const struct evlist *el, size_t a, size_t *ret_n)
{
	*ret_n = el->nr_cpus * el->nr_tids;
	return &el->ids[idx(el, a, 0, 0)];
}

static int ioctl_all(struct evlist *el, unsigned long req)
{
	for (size_t i = 0; i < el->nr_attrs * el->nr_cpus * el->nr_tids; i++)
		if (el->fds[i] >= 0 && ioctl(el->fds[i], req, 0) < 0)
			return -errno;
	return 0;
}

int evlist__enable(struct evlist *el)
{
	return ioctl_all(el, PERF_EVENT_IOC_ENABLE);
}

int evlist__disable(struct evlist *el)
{
	return ioctl_all(el, PERF_EVENT_IOC_DISABLE);
}

int evlist__lost_samples(const struct evlist *el, size_t a, size_t ring, uint64_t *ret_lost)
{
	uint64_t total = 0;

	if (!el->read_format_lost) {
		*ret_lost = 0;
		return 0;
	}
	for (size_t t = 0; t < el->nr_tids; t++) {
		/* read_format ID | LOST: { value, id, lost } */
		uint64_t v[3];
		int fd = el->fds[idx(el, a, ring, t)];

		if (fd < 0)
			continue;
		if (read(fd, v, sizeof(v)) != (ssize_t)sizeof(v))
			return errno ? -errno : -EIO;
		total += v[2];
	}
	*ret_lost = total;
	return 0;
}
