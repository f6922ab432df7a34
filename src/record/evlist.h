/* The recorder's perf events: one fd per (event, CPU, task), one ring buffer per CPU that every
 * other fd of that CPU is redirected into (PERF_EVENT_IOC_SET_OUTPUT). Callers see rings and
 * ids; they never see how the kernel was asked. */
#ifndef PRECORD_EVLIST_H
#define PRECORD_EVLIST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

struct evlist;
struct ringbuf;
struct creds;

struct evlist_opts {
	const struct perf_event_attr *attrs; /* fully set up by the caller */
	size_t nr_attrs;
	const int *cpus;                     /* CPUs to open on */
	size_t nr_cpus;
	const pid_t *tids;                   /* tasks; one entry -1 for system-wide */
	size_t nr_tids;
	size_t mmap_pages;                   /* data pages per ring, a power of two */
	const char *const *filters;          /* per attr: tracepoint filter or NULL; may be NULL */
	/* perf_event_open runs with these credentials (the kernel then decides, with its own
	 * ptrace and perf_event_paranoid rules, what they may record); rings are mapped and
	 * set up by the caller's thread. NULL: the caller's. */
	const struct creds *creds;
};

/* Where an open failed, for the caller's message. */
struct evlist_failure {
	size_t attr;  /* index into attrs */
	int cpu;
	pid_t tid;
	int err;      /* positive errno */
	int at_mmap;  /* 1 when mmap (not perf_event_open) failed */
	int at_filter;/* 1 when the kernel refused the attr's filter */
};

/* Open every fd and map the rings. Returns NULL with errno set; *ret_fail (may be NULL) says
 * which open failed. Events start as their attrs say (disabled / enable_on_exec). */
struct evlist *evlist__open(const struct evlist_opts *opts, struct evlist_failure *ret_fail);

size_t evlist__nr_rings(const struct evlist *el);
struct ringbuf *evlist__ring(const struct evlist *el, size_t i);
/* The fd to poll for ring i: POLLIN at each of its wakeups, and no POLLHUP when the tasks end. */
int evlist__ring_fd(const struct evlist *el, size_t i);
int evlist__ring_cpu(const struct evlist *el, size_t i);

/* Every event fd (nr_attrs x CPUs x tasks), for fcntl on them (the --lossless backstop);
 * fd i samples task *ret_tid (the tids given to evlist__open). Out of range: -1. */
size_t evlist__nr_fds(const struct evlist *el);
int evlist__fd(const struct evlist *el, size_t i, pid_t *ret_tid);

/* Kernel ids of attr a's fds (PERF_EVENT_IOC_ID), for the file's attr section. */
const uint64_t *evlist__ids(const struct evlist *el, size_t a, size_t *ret_n);

/* Enable / disable every fd. Return 0 or -errno. */
int evlist__enable(struct evlist *el);
int evlist__disable(struct evlist *el);

/* Samples the kernel dropped for attr a on ring (CPU) i, from PERF_FORMAT_LOST (0 when the
 * kernel does not support it). Returns 0 or -errno. */
int evlist__lost_samples(const struct evlist *el, size_t a, size_t ring, uint64_t *ret_lost);

/* Close everything. NULL is a no-op. */
void evlist__free(struct evlist *el);

#endif
