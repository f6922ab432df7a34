/* Handing a finished control recording to its client through a pipe, not as the file: the
 * client gets the pipe's read end and the daemon copies the (unlinked) file into it from its
 * main loop, without blocking. A file descriptor of the file itself could be kept by the client
 * for ever, holding disk the budget no longer counts; a pipe holds at most its buffer, and the
 * file is freed when the copy ends: done, the reader gone, no progress for HANDOVER_IDLE_MS,
 * or HANDOVER_MAX_MS in all. Until then it counts in the control recordings' share of the budget and
 * against their number. */
#ifndef PRECORD_DAEMON_HANDOVER_H
#define PRECORD_DAEMON_HANDOVER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct daemon;

#define HANDOVER_IDLE_MS 60000
/* and however it reads, a copy ends this long after it began */
#define HANDOVER_MAX_MS (10 * 60000)

/* Start handing file (read-only, unlinked; taken over, closed in every case) to uid. Returns
 * the pipe's read end to pass to the client (the caller closes its copy once sent), or
 * -errno (no slot left, no pipe). */
int handover__start(struct daemon *d, int file, uid_t uid);
/* The pollfds of the copies in progress (POLLOUT on their pipes): at most max. */
size_t handover__pollfds(const struct daemon *d, struct pollfd *p, size_t max);
/* Copy what the pipes take now; end the copies that are done, whose reader left, or that made
 * no progress for HANDOVER_IDLE_MS. */
void handover__pump(struct daemon *d);
/* At shutdown: pump until every copy has ended, for max_ms at most. */
void handover__drain(struct daemon *d, uint64_t max_ms);
/* End every copy now. */
void handover__clear(struct daemon *d);
/* The copies in progress of uid (d->nr_handovers: of all), and the bytes all their files hold. */
size_t handover__count(const struct daemon *d, uid_t uid);
uint64_t handover__bytes(const struct daemon *d);

#endif
