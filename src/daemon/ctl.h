/* The control socket of precordd: the protocol (shared with `precord ctl`) and the server side.
 *
 * Protocol: a unix stream connection carries one request line of at most CTL_MAX_LINE bytes,
 * '\n' included, printable ASCII words separated by spaces:
 *     status
 *     rotate
 *     record pid=N|cgroup=/PATH [duration=DURATION] [frequency=HZ]
 *            [call_graph=dwarf[,SIZE]|fp|none] [lossless=0|1]
 * Values are read by the parsers of lib/parse.h, as in the config file and on precord's command
 * line (a DURATION is 1500ms, 30s, 10m...; a bare number is seconds).
 * Replies are lines starting "OK ", "ERR " or (record only, once recording) "STARTED ". A
 * record's final "OK ..." line carries the finished perf.data as an open read-only fd
 * (SCM_RIGHTS), already unlinked, so the caller reads it whatever the directory permissions.
 * A record request may carry a pidfd of its process (SCM_RIGHTS): it then names the process
 * whatever the client's pid namespace; without one, a client in another pid namespace is
 * refused (its pid would name another process here). The server closes the connection after
 * the final line. A request that is too long, not
 * printable, not understood or not complete within the time limit gets one "ERR" line and the
 * connection is closed; nothing else in the daemon waits on a client.
 *
 * Authorization uses the peer's credentials (SO_PEERCRED): root may do anything; a member of
 * the configured group (primary or supplementary, per the user database) may ask status and
 * record; everyone else is refused at connect time. Which processes a member may record is not
 * decided here: precordd opens the events with the member's credentials and the kernel decides
 * (see precordd(8), SECURITY). Each uid holds at most max_per_uid connections at once, and
 * root has slots of its own, so that no user can lock the others (or root) out. */
#ifndef PRECORD_CTL_H
#define PRECORD_CTL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/parse.h"
#include "lib/creds.h"

#define CTL_MAX_LINE 1024
#define CTL_MAX_DURATION_MS 86400000ULL /* a day */
#define CTL_DEFAULT_SOCKET "/run/precord/control"

enum ctl_verb { CTL_STATUS = 1, CTL_ROTATE, CTL_RECORD };

struct ctl_request {
	enum ctl_verb verb;
	pid_t pid;              /* record: the process, 0 when cgroup is given */
	char cgroup[PARSE_CGROUP_PATH_SIZE]; /* record: a cgroup below the cgroup root, "" when
					      * pid is given */
	uint64_t duration_ms;   /* record: 0 means the server's longest */
	uint32_t frequency;     /* record: 0 means the server's default */
	int callgraph;          /* record: -1 default, else an enum callgraph_mode */
	uint32_t stack_size;    /* record, dwarf: stack bytes per sample (0: the default) */
	bool lossless;
	char err[256];          /* ctl__request_error(): why the request was refused */
};

struct ctl_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	/* filled by the server at connect time: the supplementary groups the peer holds
	 * (SO_PEERGROUPS) */
	gid_t groups[CREDS_MAX_GROUPS];
	size_t nr_groups;
	char err[256];          /* ctl__peer_error(): why ctl__authorize refused it */
};

/* Errors: every function that fails returns -errno (NULL with errno set for a constructor) and,
 * where a reason helps, leaves it in the object it was given: the request a parse fills, the
 * peer that was refused (see README, "How it works"). */

/* Parse one request (the bytes before '\n', which must not be included) into ret. Returns 0,
 * or -EINVAL with the reason in ctl__request_error(ret) (ret then holds nothing else). */
int ctl__parse_request(const char *buf, size_t len, struct ctl_request *ret);

/* Why the parse that filled req refused it; "" if it did not. */
const char *ctl__request_error(const struct ctl_request *req);

/* Write req as a request line with its '\n'. Returns its length, or -ENOSPC / -EINVAL. */
int ctl__format_request(const struct ctl_request *req, char *buf, size_t size);

/* Whether the peer belongs to group: its gid, or the user's groups in the user database. */
bool ctl__peer_in_group(const struct ctl_peer *peer, gid_t group);

/* The processes in <cgroup_root><path>/cgroup.procs ("/sys/fs/cgroup" if NULL), malloc'd.
 * Returns 0, -ENOENT, -EINVAL (a path with ".."), -ENOMEM, -errno. */
int ctl__cgroup_pids(const char *cgroup_root, const char *path, pid_t **ret, size_t *ret_nr);

/* May peer do req (NULL: connect at all)? group is (gid_t)-1 when only root may use the
 * socket. Which processes a record may target is not decided here (see above). Returns 0, or
 * -EPERM with the reason in ctl__peer_error(peer). */
int ctl__authorize(struct ctl_peer *peer, gid_t group, const struct ctl_request *req);

/* Why ctl__authorize last refused peer; "" if it did not. */
const char *ctl__peer_error(const struct ctl_peer *peer);

struct ctl_server;
struct ctl_client;

struct ctl_server_opts {
	const char *path;          /* created (a stale socket is replaced), mode 0666: access is
				    * decided per peer, so a refused user is told why */
	gid_t group;               /* (gid_t)-1: root only */
	unsigned int max_clients;  /* connections at once (0: 32); more are told "busy"; root
				    * has as many again of its own */
	unsigned int max_per_uid;  /* connections of one non-root uid at once (0: 4) */
	int request_timeout_ms;    /* to send the whole request (0: 2000) */
	void *ctx;
	/* A valid, authorized request. The handler answers with ctl_client__send and ends with
	 * ctl_client__finish, now or later (the client is then kept until finished or gone). */
	void (*request)(void *ctx, struct ctl_client *c, const struct ctl_request *req);
	/* A kept client closed its side (orderly: it may still read a final line, so the handler
	 * may ctl_client__finish c now), or misbehaved or the server is freed (!orderly). c is
	 * dropped when this returns, if the handler did not finish it. May be NULL. */
	void (*gone)(void *ctx, struct ctl_client *c, bool orderly);
	/* A client was refused or dropped, with why: for the log. May be NULL. */
	void (*refused)(void *ctx, const struct ctl_peer *peer, const char *why);
};

/* A server for opts (copied; its strings must outlive the server). Returns NULL with errno
 * ENOMEM (the only failure: nothing to explain). */
struct ctl_server *ctl_server__new(const struct ctl_server_opts *opts);

/* Listen on opts->path. Returns 0 or -errno (-EINVAL for a path that is not absolute or too
 * long, -EEXIST when something other than a socket is there, -EBUSY when already listening,
 * or of socket, bind, listen), with the reason, naming the path, in ctl_server__error(). */
int ctl_server__listen(struct ctl_server *s);

/* The last failure of ctl_server__listen; "" if none. */
const char *ctl_server__error(const struct ctl_server *s);

/* Change who may connect (a reload); connected clients keep their answer. */
void ctl_server__set_group(struct ctl_server *s, gid_t group);

/* Fill up to max pollfds (the socket, then the clients); returns how many. */
size_t ctl_server__pollfds(const struct ctl_server *s, struct pollfd *pfds, size_t max);

/* Milliseconds until the next client deadline, -1 if none. */
int ctl_server__timeout(const struct ctl_server *s);

/* Act on what poll() said about the n pollfds filled by ctl_server__pollfds, and on deadlines.
 * Never blocks. */
void ctl_server__handle(struct ctl_server *s, const struct pollfd *pfds, size_t n);

const struct ctl_peer *ctl_client__peer(const struct ctl_client *c);

/* A pidfd the client passed with its request (SCM_RIGHTS), owned by c; -1 if none. It names
 * the process to record whatever the client's pid namespace. */
int ctl_client__pidfd(const struct ctl_client *c);

/* Whether the client is in precordd's pid namespace, so that a pid it sends is ours too. */
bool ctl_client__same_pidns(const struct ctl_client *c);

/* The pid, in our namespace, of the process pidfd refers to (from /proc/self/fdinfo); -1 once
 * it has exited, 0 or -1 for an fd that is not a pidfd. */
pid_t ctl__pidfd_pid(int pidfd);

/* Send a reply line ('\n' added). Returns 0 or -errno (a client that does not read is
 * not waited for: -EAGAIN). */
int ctl_client__send(struct ctl_client *c, const char *line);

/* Send the final line, with fd attached when fd >= 0 (the caller keeps its fd), and close. */
void ctl_client__finish(struct ctl_client *c, const char *line, int fd);

/* Close every client (gone is called for kept ones), the socket, and remove its path. */
void ctl_server__free(struct ctl_server *s);

#endif
