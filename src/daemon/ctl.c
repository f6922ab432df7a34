/* The control socket: request parsing, authorization and a non-blocking server. The server
 * never waits on a client: the listening socket and every connection are non-blocking, a
 * request must arrive whole within a deadline and fit in CTL_MAX_LINE, and replies are sent
 * with MSG_DONTWAIT (a client that does not read its reply loses it). So a slow or hostile
 * client costs one fd and a kilobyte until it is dropped, and recording never notices. */
#include "daemon/ctl.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/cleanup.h"
#include "lib/fdpass.h"
#include "lib/parse.h"
#include "record/record.h"

/* ---- protocol ---- */

static const char *const record_args[] = { "pid", "cgroup", "duration", "frequency",
					   "call_graph", "lossless" };

/* Argument k of record_args with its value into r. Returns NULL, or the (static) reason. */
static const char *record_arg(size_t k, const char *val, struct ctl_request *r)
{
	enum callgraph_mode mode;
	uint64_t v;

	switch (k) {
	case 0:
		if (parse__pid(val, &r->pid))
			return "bad pid";
		break;
	case 1:
		if (parse__cgroup_path(val))
			return "bad cgroup (a path like /user.slice/x.scope, no '.' or '..')";
		strcpy(r->cgroup, val);
		break;
	case 2:
		if (parse__duration_ms(val, &v) || !v || v > CTL_MAX_DURATION_MS)
			return "bad duration (like 1500ms or 30s, at most a day)";
		r->duration_ms = v;
		break;
	case 3:
		if (parse__freq(val, &v))
			return "bad frequency (1 to " PARSE_STR(PARSE_FREQ_MAX) ")";
		r->frequency = (uint32_t)v;
		break;
	case 4:
		if (parse__callgraph(val, &mode, &r->stack_size))
			return "bad call_graph (dwarf[,SIZE] with SIZE from " PARSE_STR(PARSE_STACK_MIN)
			       " to " PARSE_STR(PARSE_STACK_MAX) ", fp or none)";
		r->callgraph = (int)mode;
		break;
	case 5:
		if (strcmp(val, "0") && strcmp(val, "1"))
			return "bad lossless (0 or 1)";
		r->lossless = val[0] == '1';
		break;
	}
	return NULL;
}

/* The key=value words of a record request (p, split in place). Returns NULL or the reason. */
static const char *record_request(char *p, struct ctl_request *r)
{
	bool seen[ARRAY_SIZE(record_args)] = { false };
	const char *why;
	char *word;

	while ((word = strsep(&p, " "))) {
		char *val = strchr(word, '=');
		size_t k;

		if (!val)
			return "malformed argument (expected key=value)";
		*val++ = 0;
		for (k = 0; k < ARRAY_SIZE(record_args); k++)
			if (!strcmp(word, record_args[k]))
				break;
		if (k == ARRAY_SIZE(record_args))
			return "unknown argument (expected pid, cgroup, duration, frequency, "
			       "call_graph or lossless)";
		if (seen[k])
			return "an argument is given twice";
		seen[k] = true;
		why = record_arg(k, val, r);
		if (why)
			return why;
	}
	if (!r->pid == !r->cgroup[0])
		return "record needs exactly one of pid= and cgroup=";
	return NULL;
}

/* ret on failure: empty but for the reason. Returns -EINVAL. */
static int refused_request(struct ctl_request *ret, const char *why)
{
	*ret = (struct ctl_request){ .callgraph = -1 };
	snprintf(ret->err, sizeof(ret->err), "%s", why);
	return -EINVAL;
}

const char *ctl__request_error(const struct ctl_request *req)
{
	return req->err;
}

int ctl__parse_request(const char *buf, size_t len, struct ctl_request *ret)
{
	char line[CTL_MAX_LINE];
	struct ctl_request r = { .callgraph = -1 };
	const char *why = NULL;
	char *p, *word;

	if (len >= sizeof(line))
		return refused_request(ret, "request too long");
	for (size_t i = 0; i < len; i++)
		if (buf[i] != ' ' && !isgraph((unsigned char)buf[i]))
			return refused_request(ret, "malformed request: only printable ASCII and "
					       "spaces are allowed");
	memcpy(line, buf, len);
	line[len] = 0;
	p = line;
	word = strsep(&p, " ");
	if (!strcmp(word, "status"))
		r.verb = CTL_STATUS;
	else if (!strcmp(word, "rotate"))
		r.verb = CTL_ROTATE;
	else if (!strcmp(word, "record"))
		r.verb = CTL_RECORD;
	else
		why = "unknown request (expected status, rotate or record)";
	if (!why && r.verb != CTL_RECORD && p)
		why = "status and rotate take no arguments";
	if (!why && r.verb == CTL_RECORD)
		why = record_request(p, &r);
	if (why)
		return refused_request(ret, why);
	*ret = r;
	return 0;
}

int ctl__format_request(const struct ctl_request *r, char *buf, size_t size)
{
	size_t n = 0;
	int k;

#define ADD(...)                                                        \
	do {                                                            \
		k = snprintf(buf + n, size > n ? size - n : 0, __VA_ARGS__); \
		if (k < 0)                                              \
			return -EINVAL;                                 \
		n += (size_t)k;                                         \
	} while (0)

	switch (r->verb) {
	case CTL_STATUS:
		ADD("status");
		break;
	case CTL_ROTATE:
		ADD("rotate");
		break;
	case CTL_RECORD:
		ADD("record");
		if (r->pid > 0)
			ADD(" pid=%d", (int)r->pid);
		if (r->cgroup[0])
			ADD(" cgroup=%s", r->cgroup);
		if (r->duration_ms)
			ADD(" duration=%llums", (unsigned long long)r->duration_ms);
		if (r->frequency)
			ADD(" frequency=%u", r->frequency);
		if (r->callgraph >= 0 && parse__callgraph_name(r->callgraph))
			ADD(" call_graph=%s", parse__callgraph_name(r->callgraph));
		if (r->callgraph == CALLGRAPH_DWARF && r->stack_size)
			ADD(",%u", r->stack_size);
		if (r->lossless)
			ADD(" lossless=1");
		break;
	default:
		return -EINVAL;
	}
	ADD("\n");
#undef ADD
	if (n >= size || n > CTL_MAX_LINE)
		return -ENOSPC;
	return (int)n;
}

/* ---- authorization ---- */

bool ctl__peer_in_group(const struct ctl_peer *peer, gid_t group)
{
	struct passwd pw, *res = NULL;
	char buf[16384];
	gid_t groups[256];
	int n = ARRAY_SIZE(groups);

	if (group == (gid_t)-1)
		return false;
	if (peer->gid == group)
		return true;
	if (getpwuid_r(peer->uid, &pw, buf, sizeof(buf), &res) || !res)
		return false;
	if (getgrouplist(res->pw_name, res->pw_gid, groups, &n) < 0) {
		/* more than 256 groups: look the other way round */
		struct group gr, *g = NULL;
		char gbuf[65536];

		if (getgrgid_r(group, &gr, gbuf, sizeof(gbuf), &g) || !g)
			return false;
		for (char **m = g->gr_mem; *m; m++)
			if (!strcmp(*m, res->pw_name))
				return true;
		return res->pw_gid == group;
	}
	for (int i = 0; i < n; i++)
		if (groups[i] == group)
			return true;
	return false;
}

int ctl__cgroup_pids(const char *cgroup_root, const char *path, pid_t **ret, size_t *ret_nr)
{
	char file[PATH_MAX];
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ pid_t *pids = NULL;
	size_t nr = 0, cap = 0;
	long v;

	if (parse__cgroup_path(path))
		return -EINVAL;
	if ((size_t)snprintf(file, sizeof(file), "%s%s/cgroup.procs",
			     cgroup_root ? cgroup_root : "/sys/fs/cgroup", path) >= sizeof(file))
		return -ENAMETOOLONG;
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%ld", &v) == 1) {
		if (v <= 0 || v > INT_MAX)
			continue;
		if (nr == cap) {
			size_t nc = cap ? cap * 2 : 16;
			pid_t *np = realloc(pids, nc * sizeof(pid_t));

			if (!np)
				return -ENOMEM;
			pids = np;
			cap = nc;
		}
		pids[nr++] = (pid_t)v;
	}
	*ret = TAKE_PTR(pids);
	*ret_nr = nr;
	return 0;
}

static const char *group_name(gid_t g, char *buf, size_t size)
{
	struct group gr, *res = NULL;
	char tmp[16384];

	if (getgrgid_r(g, &gr, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, size, "%s", res->gr_name);
	else
		snprintf(buf, size, "%u", (unsigned int)g);
	return buf;
}

const char *ctl__peer_error(const struct ctl_peer *peer)
{
	return peer->err;
}

static int deny(struct ctl_peer *peer, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int deny(struct ctl_peer *peer, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(peer->err, sizeof(peer->err), fmt, ap);
	va_end(ap);
	return -EPERM;
}

int ctl__authorize(struct ctl_peer *peer, gid_t group, const struct ctl_request *req)
{
	char gname[64];

	peer->err[0] = 0;
	if (peer->uid == 0)
		return 0;
	if (!ctl__peer_in_group(peer, group)) {
		if (group == (gid_t)-1)
			return deny(peer, "permission denied: only root may use this socket");
		return deny(peer, "permission denied: uid %u is not in group %s",
			    (unsigned int)peer->uid, group_name(group, gname, sizeof(gname)));
	}
	if (!req)
		return 0; /* membership alone: the connect-time check */
	switch (req->verb) {
	case CTL_STATUS:
		return 0;
	case CTL_ROTATE:
		return deny(peer, "permission denied: only root may rotate");
	case CTL_RECORD:
		/* which processes: the kernel decides, when the events are opened as the peer */
		return 0;
	}
	return deny(peer, "unknown request");
}

/* ---- server ---- */

enum client_state { CLIENT_READING, CLIENT_BUSY, CLIENT_GONE };

struct ctl_client {
	struct ctl_server *srv;
	int fd;
	struct ctl_peer peer;
	bool same_pidns;      /* the peer's pid namespace is ours */
	int pidfd;            /* a pidfd the peer passed with its request, or -1 */
	enum client_state state;
	uint64_t deadline_ms;
	size_t len;
	char buf[CTL_MAX_LINE];
};

struct ctl_server {
	struct ctl_server_opts o;
	char *path;
	int fd;
	dev_t dev;
	ino_t ino;
	struct ctl_client **clients;
	size_t nr;
	bool bound;           /* path is our socket (until another server replaces it) */
	char err[512];        /* ctl_server__error() */
};

struct ctl_server *ctl_server__new(const struct ctl_server_opts *o)
{
	struct ctl_server *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->o = *o;
	s->fd = -1;
	if (!s->o.max_clients)
		s->o.max_clients = 32;
	if (!s->o.max_per_uid)
		s->o.max_per_uid = 4;
	if (s->o.request_timeout_ms <= 0)
		s->o.request_timeout_ms = 2000;
	s->path = o->path ? strdup(o->path) : NULL;
	s->clients = calloc(2 * (size_t)s->o.max_clients, sizeof(*s->clients));
	if ((o->path && !s->path) || !s->clients) {
		ctl_server__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

const char *ctl_server__error(const struct ctl_server *s)
{
	return s->err;
}

static int listen_failed(struct ctl_server *s, int e, const char *remedy)
{
	snprintf(s->err, sizeof(s->err), "cannot listen on %s: %s%s", s->path ? s->path : "(none)",
		 strerror(e), remedy);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	return -e;
}

int ctl_server__listen(struct ctl_server *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int e;

	s->err[0] = 0;
	if (s->fd >= 0) {
		snprintf(s->err, sizeof(s->err), "cannot listen on %s: already listening", s->path);
		return -EBUSY;
	}
	if (!s->path || strlen(s->path) >= sizeof(sa.sun_path) || s->path[0] != '/')
		return listen_failed(s, EINVAL, " (an absolute path of at most 107 bytes)");
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->fd < 0)
		return listen_failed(s, errno, "");
	strcpy(sa.sun_path, s->path);
	/* A socket left by an earlier run is replaced; anything else there is not ours. */
	if (lstat(s->path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return listen_failed(s, EEXIST, " (and it is not a socket: remove it, or set "
					     "another socket path)");
		unlink(s->path);
	}
	if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return listen_failed(s, errno, "");
	if (chmod(s->path, 0666) < 0 || listen(s->fd, 16) < 0 || stat(s->path, &st) < 0) {
		e = errno;
		unlink(s->path);
		return listen_failed(s, e, "");
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->bound = true;
	return 0;
}

void ctl_server__set_group(struct ctl_server *s, gid_t group)
{
	s->o.group = group;
}

size_t ctl_server__pollfds(const struct ctl_server *s, struct pollfd *pfds, size_t max)
{
	size_t n = 0;

	if (!max)
		return 0;
	pfds[n++] = (struct pollfd){ .fd = s->fd, .events = POLLIN };
	for (size_t i = 0; i < s->nr && n < max; i++)
		pfds[n++] = (struct pollfd){ .fd = s->clients[i]->fd, .events = POLLIN | POLLRDHUP };
	return n;
}

int ctl_server__timeout(const struct ctl_server *s)
{
	uint64_t now = clock__ms(), best = UINT64_MAX;

	for (size_t i = 0; i < s->nr; i++)
		if (s->clients[i]->state == CLIENT_READING && s->clients[i]->deadline_ms < best)
			best = s->clients[i]->deadline_ms;
	if (best == UINT64_MAX)
		return -1;
	return best <= now ? 0 : (int)(best - now);
}

const struct ctl_peer *ctl_client__peer(const struct ctl_client *c)
{
	return &c->peer;
}

static int send_line(int fd, const char *line, int pass_fd)
{
	char buf[CTL_MAX_LINE + 1];
	size_t n = strnlen(line, CTL_MAX_LINE - 1);
	ssize_t r;

	memcpy(buf, line, n);
	buf[n] = '\n';
	r = fdpass__send(fd, buf, n + 1, pass_fd, MSG_DONTWAIT);
	if (r < 0)
		return (int)r;
	return (size_t)r == n + 1 ? 0 : -EAGAIN;
}

int ctl_client__send(struct ctl_client *c, const char *line)
{
	return send_line(c->fd, line, -1);
}

static bool listed(const struct ctl_server *s, const struct ctl_client *c)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->clients[i] == c)
			return true;
	return false;
}

static void drop(struct ctl_server *s, struct ctl_client *c)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->clients[i] == c) {
			s->clients[i] = s->clients[--s->nr];
			break;
		}
	close(c->fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	free(c);
}

/* Drop c, telling the handler first if it holds c (it may still finish c then). */
static void end_client(struct ctl_server *s, struct ctl_client *c, bool orderly)
{
	if (c->state == CLIENT_BUSY && s->o.gone) {
		c->state = CLIENT_GONE;
		s->o.gone(s->o.ctx, c, orderly);
	}
	if (listed(s, c))
		drop(s, c);
}

void ctl_client__finish(struct ctl_client *c, const char *line, int fd)
{
	if (line)
		send_line(c->fd, line, fd);
	drop(c->srv, c);
}

static void refuse(struct ctl_server *s, struct ctl_client *c, const char *why)
{
	char line[CTL_MAX_LINE];

	snprintf(line, sizeof(line), "ERR %s", why);
	send_line(c->fd, line, -1);
	if (s->o.refused)
		s->o.refused(s->o.ctx, &c->peer, why);
	end_client(s, c, false);
}

/* Whether one more connection of peer fits: root has max_clients slots of its own; any other
 * uid at most max_per_uid, all of them together max_clients. Returns NULL or why not. */
static const char *no_room(const struct ctl_server *s, const struct ctl_peer *peer)
{
	size_t mine = 0, others = 0;

	for (size_t i = 0; i < s->nr; i++) {
		uid_t u = s->clients[i]->peer.uid;

		if ((u == 0) == (peer->uid == 0))
			others++;
		if (u == peer->uid)
			mine++;
	}
	if (peer->uid != 0 && mine >= s->o.max_per_uid)
		return "busy: too many connections of your uid at once, try again later";
	if (others >= s->o.max_clients)
		return "busy: too many connections, try again later";
	return NULL;
}

pid_t ctl__pidfd_pid(int pidfd)
{
	char path[64], line[128];
	pid_t pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Pid:", 4)) {
			pid = (pid_t)strtol(line + 4, NULL, 10);
			break;
		}
	fclose(f);
	return pid;
}

/* The supplementary groups the peer holds (SO_PEERGROUPS). Not its capabilities: what a
 * process holds can change under us (an exec of a set-uid program that inherited the
 * connection) and a capability held in a user namespace of its own means nothing here; the
 * job runs with the peer's uid and groups alone, and the kernel decides the rest. */
static void peer_details(int fd, struct ctl_peer *p)
{
	socklen_t len = sizeof(p->groups);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, p->groups, &len) == 0)
		p->nr_groups = len / sizeof(gid_t);
	else
		p->nr_groups = 0; /* more than CREDS_MAX_GROUPS: it records with none */
}

/* Whether process pid is in our pid namespace (a pid it sends means the same to us). */
static bool same_pidns(pid_t pid)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	if (pid <= 0 || stat(path, &a) < 0 || stat("/proc/self/ns/pid", &b) < 0)
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Returns false when there is nothing (more) to accept. */
static bool accept_one(struct ctl_server *s)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct ctl_client *c;
	const char *refused;
	int fd;

	fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return errno == ECONNABORTED || errno == EINTR;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		close(fd);
		return true;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		send_line(fd, "ERR out of memory", -1);
		close(fd);
		return true;
	}
	c->srv = s;
	c->fd = fd;
	c->pidfd = -1;
	c->peer.pid = cred.pid;
	c->peer.uid = cred.uid;
	c->peer.gid = cred.gid;
	c->state = CLIENT_READING;
	c->deadline_ms = clock__ms() + (uint64_t)s->o.request_timeout_ms;
	/* who it is first: a refused peer never holds a slot */
	if (ctl__authorize(&c->peer, s->o.group, NULL))
		refused = ctl__peer_error(&c->peer);
	else
		refused = no_room(s, &c->peer);
	if (refused) {
		char line[CTL_MAX_LINE];

		/* not in the list: answer and forget */
		snprintf(line, sizeof(line), "ERR %s", refused);
		send_line(fd, line, -1);
		if (s->o.refused)
			s->o.refused(s->o.ctx, &c->peer, refused);
		close(fd);
		free(c);
		return true;
	}
	peer_details(fd, &c->peer);
	c->same_pidns = same_pidns(c->peer.pid);
	s->clients[s->nr++] = c;
	return true;
}

/* Read what the client sent next; a pidfd passed with it (SCM_RIGHTS) is kept, the first
 * one only, and anything else passed is closed (a second fd in the same message is closed
 * unseen by fdpass__recv). Returns as recv(). */
static ssize_t recv_request(struct ctl_client *c)
{
	int fd;
	ssize_t n = fdpass__recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, &fd,
				 MSG_DONTWAIT);

	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	if (fd >= 0 && c->pidfd < 0 && ctl__pidfd_pid(fd) > 0)
		c->pidfd = fd;
	else if (fd >= 0)
		close(fd);
	return n;
}

int ctl_client__pidfd(const struct ctl_client *c)
{
	return c->pidfd;
}

bool ctl_client__same_pidns(const struct ctl_client *c)
{
	return c->same_pidns;
}

static void read_client(struct ctl_server *s, struct ctl_client *c, short revents)
{
	struct ctl_request req;
	char *nl;
	ssize_t n;

	if (c->state == CLIENT_BUSY) {
		char b;

		/* Only a hang-up is expected now; more data breaks the protocol. */
		n = recv(c->fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n > 0) {
			refuse(s, c, "unexpected data after the request");
			return;
		}
		/* the caller closed its side (^C): it may still read what was recorded */
		end_client(s, c, true);
		return;
	}
	n = recv_request(c);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (s->o.refused)
			s->o.refused(s->o.ctx, &c->peer, "hung up before a complete request");
		drop(s, c);
		return;
	}
	nl = memchr(c->buf + c->len, '\n', (size_t)n);
	c->len += (size_t)n;
	if (!nl) {
		if (c->len == sizeof(c->buf))
			refuse(s, c, "request too long (at most 1024 bytes with its newline)");
		return;
	}
	if ((size_t)(nl - c->buf) + 1 != c->len) {
		refuse(s, c, "one request per connection");
		return;
	}
	if (ctl__parse_request(c->buf, (size_t)(nl - c->buf), &req)) {
		refuse(s, c, ctl__request_error(&req));
		return;
	}
	if (ctl__authorize(&c->peer, s->o.group, &req)) {
		refuse(s, c, ctl__peer_error(&c->peer));
		return;
	}
	c->state = CLIENT_BUSY;
	s->o.request(s->o.ctx, c, &req);
}

static struct ctl_client *client_by_fd(struct ctl_server *s, int fd)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->clients[i]->fd == fd)
			return s->clients[i];
	return NULL;
}

void ctl_server__handle(struct ctl_server *s, const struct pollfd *pfds, size_t n)
{
	uint64_t now;
	bool listen_ready = false;

	for (size_t i = 0; i < n; i++) {
		struct ctl_client *c;

		if (!pfds[i].revents)
			continue;
		if (pfds[i].fd == s->fd) {
			listen_ready = true;
			continue;
		}
		/* handlers may have closed clients (and their fd numbers been reused) */
		c = client_by_fd(s, pfds[i].fd);
		if (c)
			read_client(s, c, pfds[i].revents);
	}
	now = clock__ms();
	for (size_t i = 0; i < s->nr;) {
		struct ctl_client *c = s->clients[i];

		if (c->state == CLIENT_READING && c->deadline_ms <= now) {
			refuse(s, c, "no complete request in time");
			continue; /* the slot now holds another client */
		}
		i++;
	}
	/* last, so no fd seen above belongs to a client accepted now */
	if (listen_ready)
		for (int k = 0; k < 8 && accept_one(s); k++)
			;
}

void ctl_server__free(struct ctl_server *s)
{
	struct stat st;

	if (!s)
		return;
	while (s->nr)
		end_client(s, s->clients[0], false);
	if (s->fd >= 0)
		close(s->fd);
	/* remove the path only if it is still our socket (a new daemon may have replaced it) */
	if (s->bound && stat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(s->path);
	free(s->path);
	free(s->clients);
	free(s);
}
