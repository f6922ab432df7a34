/* Finished control recordings copied to their clients through pipes (see handover.h). */
#include "daemon/handover.h"
#include "daemon/daemon_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "lib/clock.h"

int handover__start(struct daemon *d, int file, uid_t uid)
{
	struct handover_slot *h;
	struct stat st;
	int p[2];

	if (d->nr_handovers == MAX_JOBS) {
		close(file);
		return -EBUSY;
	}
	/* only the daemon's end is non-blocking: the client reads its end as any pipe */
	if (fstat(file, &st) < 0 || pipe2(p, O_CLOEXEC) < 0) {
		int err = -errno;

		close(file);
		return err;
	}
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) < 0) {
		int err = -errno;

		close(file);
		close(p[0]);
		close(p[1]);
		return err;
	}
	/* a larger buffer: fewer turns of the loop per file (the default is 64 KiB) */
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	h = &d->handovers[d->nr_handovers++];
	*h = (struct handover_slot){ .file = file, .pipe = p[1], .uid = uid, .size = st.st_size,
				     .idle_deadline_ms = clock__ms() + HANDOVER_IDLE_MS,
				     .end_ms = clock__ms() + HANDOVER_MAX_MS };
	return p[0];
}

static void end(struct daemon *d, size_t i)
{
	close(d->handovers[i].file);
	close(d->handovers[i].pipe);
	d->handovers[i] = d->handovers[--d->nr_handovers];
}

size_t handover__pollfds(const struct daemon *d, struct pollfd *p, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nr_handovers && n < max; i++)
		p[n++] = (struct pollfd){ .fd = d->handovers[i].pipe, .events = POLLOUT };
	return n;
}

/* Copy what the pipe takes now. Returns 1 when the copy is over (done or failed), else 0. */
static int pump_one(struct daemon *d, struct handover_slot *h, uint64_t now)
{
	while (h->off < h->size) {
		ssize_t n = splice(h->file, &h->off, h->pipe, NULL, (size_t)(h->size - h->off),
				   SPLICE_F_NONBLOCK);

		if (n > 0) {
			h->idle_deadline_ms = now + HANDOVER_IDLE_MS;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (now < h->idle_deadline_ms && now < h->end_ms)
				return 0;
			daemon__log(d, LOG_NOTICE, "control: the client of uid %u %s: the copy of its "
				    "recording is dropped at %lld of %lld bytes", (unsigned int)h->uid,
				    now >= h->end_ms ? "took too long to read it"
						     : "stopped reading it",
				    (long long)h->off, (long long)h->size);
			return 1;
		}
		daemon__log(d, n < 0 && errno == EPIPE ? LOG_INFO : LOG_WARNING,
			    "control: handing a recording to uid %u ended at %lld of %lld bytes: %s",
			    (unsigned int)h->uid, (long long)h->off, (long long)h->size,
			    n < 0 ? (errno == EPIPE ? "the client left" : strerror(errno))
				  : "the file is shorter");
		return 1;
	}
	return 1;
}

void handover__pump(struct daemon *d)
{
	uint64_t now = clock__ms();

	for (size_t i = 0; i < d->nr_handovers;) {
		if (pump_one(d, &d->handovers[i], now))
			end(d, i);
		else
			i++;
	}
}

void handover__drain(struct daemon *d, uint64_t max_ms)
{
	uint64_t limit = clock__ms() + max_ms;

	for (size_t i = 0; i < d->nr_handovers; i++)
		if (d->handovers[i].end_ms > limit)
			d->handovers[i].end_ms = limit;
	while (d->nr_handovers) {
		struct pollfd p[MAX_JOBS];
		size_t n = handover__pollfds(d, p, MAX_JOBS);

		poll(p, n, 100);
		handover__pump(d);
	}
}

void handover__clear(struct daemon *d)
{
	while (d->nr_handovers)
		end(d, 0);
}

size_t handover__count(const struct daemon *d, uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nr_handovers; i++)
		if (d->handovers[i].uid == uid)
			n++;
	return n;
}

uint64_t handover__bytes(const struct daemon *d)
{
	uint64_t b = 0;

	for (size_t i = 0; i < d->nr_handovers; i++)
		b += (uint64_t)d->handovers[i].size;
	return b;
}
