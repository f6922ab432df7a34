/* precord ctl: the client of precordd's control socket. status and rotate print the daemon's
 * answer; record asks the daemon to record a process (or a cgroup, or a command this client
 * starts and holds until recording has begun) and copies the finished file, received as an fd,
 * to -o FILE. ^C asks the daemon to stop early and still delivers what was recorded. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fdpass.h"
#include "lib/parse.h"
#include "daemon/ctl.h"
#include "record/record.h"
#include "cmd/subcmd.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	interrupted++;
}

static void ctl_usage(FILE *f)
{
	fprintf(f,
"usage: precord ctl [-s SOCKET] status\n"
"       precord ctl [-s SOCKET] rotate\n"
"       precord ctl [-s SOCKET] record [options] (-p PID | --cgroup PATH | -- COMMAND...)\n"
"\n"
"  -s, --socket PATH      precordd's control socket (default $PRECORD_CTL_SOCKET, else\n"
"                         " CTL_DEFAULT_SOCKET ")\n"
"record options:\n"
"  -p, --pid PID          a running process of yours (root: any)\n"
"      --cgroup PATH      every process in a cgroup, e.g. /user.slice/user-1000.slice/x.scope\n"
"  -d, --duration TIME    how long, e.g. 30 (seconds), 1.5s, 500ms, 10m (default and limit:\n"
"                         the daemon's control_max_duration);\n"
"                         recording also ends when the process ends\n"
"  -F, --freq HZ          samples per second (default 4000)\n"
"      --call-graph MODE  dwarf[,SIZE] (default dwarf,8192), fp or none\n"
"      --lossless         pause the process instead of losing events\n"
"  -o, --output FILE      where to write the recording (default perf.data; an old one\n"
"                         becomes FILE.old)\n"
"  -q, --quiet            no summary\n");
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* Line reader that also collects an fd passed with SCM_RIGHTS. */
struct conn {
	int fd;
	char buf[CTL_MAX_LINE * 2];
	size_t len;
	int passed_fd;
};

/* Read one line (without '\n') into line. Returns its length, 0 at end of stream, -errno
 * (-EINTR when interrupted: call again). */
static int read_line(struct conn *c, char *line, size_t size)
{
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		ssize_t n;
		int f;

		if (nl) {
			size_t l = (size_t)(nl - c->buf);

			snprintf(line, size, "%.*s", (int)l, c->buf);
			memmove(c->buf, nl + 1, c->len - l - 1);
			c->len -= l + 1;
			return (int)(l < size ? l : size - 1) + 1;
		}
		if (c->len == sizeof(c->buf))
			return -EMSGSIZE;
		n = fdpass__recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, &f, 0);
		if (n <= 0)
			return (int)n;
		if (f >= 0) {
			if (c->passed_fd < 0)
				c->passed_fd = f;
			else
				close(f);
		}
		c->len += (size_t)n;
	}
}

/* The value of key in a "key=value key=value" line, copied to out; false if absent. */
static bool field(const char *line, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key);

	for (const char *p = line; (p = strstr(p, key)); p++) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t l = strcspn(p + kl + 1, " ");

			snprintf(out, size, "%.*s", (int)l, p + kl + 1);
			return true;
		}
	}
	return false;
}

/* Copy what precordd hands over to path: a pipe it copies the recording into (read to its
 * end, which must come at expect bytes), or from an older daemon the file itself. */
static int copy_out(int from, const char *path, long long expect)
{
	char old[4096];
	_cleanup_close_ int to = -1;
	struct stat st;
	off_t off = 0;

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		snprintf(old, sizeof(old), "%s.old", path);
		if (rename(path, old) < 0)
			return -errno;
	}
	to = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (to < 0 || fstat(from, &st) < 0)
		return -errno;
	if (S_ISFIFO(st.st_mode)) {
		for (;;) {
			ssize_t n = splice(from, NULL, to, NULL, 1 << 20, 0);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				break;
			off += n;
		}
		if (expect >= 0 && off != expect)
			return -EPIPE; /* precordd gave up the copy (it says why in its log) */
	}
	while (S_ISREG(st.st_mode) && off < st.st_size) {
		ssize_t n = sendfile(to, from, &off, (size_t)(st.st_size - off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
	}
	if (fsync(to) < 0)
		return -errno;
	return 0;
}

static int simple(const char *sock, enum ctl_verb verb)
{
	struct ctl_request req = { .verb = verb, .callgraph = -1 };
	struct conn c = { .passed_fd = -1 };
	char buf[CTL_MAX_LINE], line[CTL_MAX_LINE];
	int n;

	c.fd = connect_to(sock);
	if (c.fd < 0) {
		fprintf(stderr, "precord ctl: cannot connect to %s: %s (is precordd running?)\n",
			sock, strerror(-c.fd));
		return 1;
	}
	n = ctl__format_request(&req, buf, sizeof(buf));
	/* a refusal may close the connection before the request is sent: read it anyway */
	send(c.fd, buf, (size_t)n, MSG_NOSIGNAL);
	while ((n = read_line(&c, line, sizeof(line))) == -EINTR)
		;
	close(c.fd);
	if (n <= 0) {
		fprintf(stderr, "precord ctl: no answer from %s\n", sock);
		return 1;
	}
	if (strncmp(line, "OK", 2)) {
		fprintf(stderr, "precord ctl: %s\n", strncmp(line, "ERR ", 4) ? line : line + 4);
		return 1;
	}
	/* one "key: value" per line */
	for (char *p = line + 2, *w; (w = strsep(&p, " "));) {
		char *eq = strchr(w, '=');

		if (!*w)
			continue;
		if (eq) {
			*eq = 0;
			printf("%-13s %s\n", w, eq + 1);
		} else {
			printf("%s\n", w);
		}
	}
	return 0;
}

/* What `precord ctl record` was asked. */
struct record_args {
	struct ctl_request req;
	const char *out;
	bool quiet;
};

/* One option of record. Returns -1 to go on, else the exit status (0 after --help). */
static int record_option(int opt, const char *arg, struct record_args *a)
{
	struct ctl_request *req = &a->req;
	enum callgraph_mode mode;
	uint64_t freq;

	switch (opt) {
	case 'p':
		if (!parse__pid(arg, &req->pid))
			return -1;
		fprintf(stderr, "precord ctl record: invalid pid '%s'\n", arg);
		return 2;
	case 'C':
		if (!parse__cgroup_path(arg)) {
			strcpy(req->cgroup, arg);
			return -1;
		}
		fprintf(stderr, "precord ctl record: invalid cgroup '%s' (a path below /sys/fs/cgroup "
			"starting with '/', no '.' or '..' components, shorter than %d bytes)\n", arg,
			PARSE_CGROUP_PATH_SIZE);
		return 2;
	case 'd':
		if (!parse__duration_ms(arg, &req->duration_ms) && req->duration_ms &&
		    req->duration_ms <= CTL_MAX_DURATION_MS)
			return -1;
		fprintf(stderr, "precord ctl record: invalid duration '%s' (like 30, 1.5s, 500ms or "
			"10m; at most a day)\n", arg);
		return 2;
	case 'F':
		if (!parse__freq(arg, &freq)) {
			req->frequency = (uint32_t)freq;
			return -1;
		}
		fprintf(stderr, "precord ctl record: invalid frequency '%s' (1 to %d)\n", arg,
			PARSE_FREQ_MAX);
		return 2;
	case 'g':
		if (!parse__callgraph(arg, &mode, &req->stack_size)) {
			req->callgraph = (int)mode;
			return -1;
		}
		fprintf(stderr, "precord ctl record: --call-graph takes dwarf[,SIZE] (SIZE from %d to "
			"%d), fp or none\n", PARSE_STACK_MIN, PARSE_STACK_MAX);
		return 2;
	case 'L': req->lossless = true; return -1;
	case 'o': a->out = arg; return -1;
	case 'q': a->quiet = true; return -1;
	case 'h': ctl_usage(stdout); return 0;
	default: ctl_usage(stderr); return 2;
	}
}

/* Fork the command, held until a byte arrives on *ret_go (the write end, returned). Returns
 * the child's pid, or -1 with errno set. */
static pid_t fork_held(char **argv, int conn_fd, int *ret_go)
{
	int go[2];
	pid_t child;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -1;
	child = fork();
	if (child < 0) {
		int e = errno;

		close(go[0]);
		close(go[1]);
		errno = e;
		return -1;
	}
	if (child == 0) {
		char b;

		close(go[1]);
		close(conn_fd);
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "precord ctl record: cannot run %s: %m\n", argv[0]);
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(go[0]);
	*ret_go = go[1];
	return child;
}

/* The daemon's final "OK ..." line with the file: copy it to out. Returns the exit status. */
static int take_file(struct conn *c, const char *line, const struct record_args *a)
{
	char s[32] = "?", l[32] = "?", b[32] = "?", note[64] = "";
	int n;

	if (strncmp(line, "OK", 2) || c->passed_fd < 0) {
		fprintf(stderr, "precord ctl record: unexpected answer '%.80s'\n", line);
		return 1;
	}
	field(line, "bytes", b, sizeof(b));
	n = copy_out(c->passed_fd, a->out, b[0] >= '0' && b[0] <= '9' ? strtoll(b, NULL, 10) : -1);
	if (n == -EPIPE) {
		fprintf(stderr, "precord ctl record: %s is cut short: precordd stopped handing the "
			"recording over before its %s bytes (its log says why)\n", a->out, b);
		return 1;
	}
	if (n < 0) {
		fprintf(stderr, "precord ctl record: cannot write %s: %s\n", a->out, strerror(-n));
		return 1;
	}
	if (a->quiet)
		return 0;
	field(line, "samples", s, sizeof(s));
	field(line, "lost", l, sizeof(l));
	field(line, "note", note, sizeof(note));
	fprintf(stderr, "precord ctl: wrote %s: %s samples, %s lost, %s bytes%s%s%s\n", a->out, s, l,
		b, note[0] ? " (" : "", note, note[0] ? ")" : "");
	return 0;
}

/* Read the daemon's lines until the final one: STARTED lets a held command go (*go is then
 * closed), a first ^C asks the daemon to stop early, a second gives up. *started says whether
 * recording began. Returns the exit status. */
/* The request, with a pidfd of pid attached when there is one: precordd then knows the
 * process whatever our pid namespace (a pid number means another process in another). */
static void send_request(int fd, const char *buf, size_t len, pid_t pid)
{
	int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;

	fdpass__send(fd, buf, len, pidfd, 0);
	if (pidfd >= 0)
		close(pidfd);
}

static int converse(struct conn *c, int *go, bool *started, const struct record_args *a)
{
	char line[CTL_MAX_LINE];
	int n;

	for (;;) {
		n = read_line(c, line, sizeof(line));
		if (n == -EINTR) {
			if (interrupted > 1)
				return 1;
			/* first ^C: stop early, still take the file */
			shutdown(c->fd, SHUT_WR);
			continue;
		}
		if (n <= 0) {
			fprintf(stderr, "precord ctl record: precordd closed the connection%s\n",
				*started ? " before the recording was handed over" : "");
			return 1;
		}
		if (strncmp(line, "STARTED", 7))
			break;
		*started = true;
		if (*go >= 0) {
			if (write(*go, "g", 1) != 1)
				return 1;
			close(*go);
			*go = -1;
		}
	}
	if (!strncmp(line, "ERR ", 4)) {
		fprintf(stderr, "precord ctl record: %s\n", line + 4);
		return 1;
	}
	return take_file(c, line, a);
}

static int record(const char *sock, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "freq", required_argument, NULL, 'F' },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "lossless", no_argument, NULL, 'L' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct record_args a = { .req = { .verb = CTL_RECORD, .callgraph = -1 }, .out = "perf.data" };
	struct conn c = { .passed_fd = -1 };
	struct sigaction sa = { .sa_handler = on_sigint }; /* no SA_RESTART: recv sees EINTR */
	char buf[CTL_MAX_LINE];
	bool started = false;
	pid_t child = -1;
	int go = -1, opt, n, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+p:d:F:o:qh", lo, NULL)) != -1)
		if ((rc = record_option(opt, optarg, &a)) >= 0)
			return rc;
	if ((a.req.pid != 0) + (a.req.cgroup[0] != 0) + (optind < argc) != 1) {
		fprintf(stderr, "precord ctl record: give one of -p PID, --cgroup PATH or a command\n");
		return 2;
	}
	c.fd = connect_to(sock);
	if (c.fd < 0) {
		fprintf(stderr, "precord ctl: cannot connect to %s: %s (is precordd running?)\n",
			sock, strerror(-c.fd));
		return 1;
	}
	if (optind < argc && (child = a.req.pid = fork_held(argv + optind, c.fd, &go)) < 0) {
		fprintf(stderr, "precord ctl record: cannot start %s: %m\n", argv[optind]);
		close(c.fd);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	n = ctl__format_request(&a.req, buf, sizeof(buf));
	if (n < 0) {
		fprintf(stderr, "precord ctl record: cannot make the request: %s\n", strerror(-n));
		rc = 1;
	} else {
		/* a refusal may close the connection before the request is sent: read it anyway */
		send_request(c.fd, buf, (size_t)n, a.req.pid);
		rc = converse(&c, &go, &started, &a);
	}
	if (go >= 0)
		close(go); /* a held command never started: it exits 127 */
	if (c.passed_fd >= 0)
		close(c.passed_fd);
	close(c.fd);
	if (child > 0) {
		int st;

		if (!started)
			kill(child, SIGKILL);
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
	}
	return rc;
}

int subcmd_ctl(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *sock = getenv("PRECORD_CTL_SOCKET");
	int opt;

	if (!sock || !*sock)
		sock = CTL_DEFAULT_SOCKET;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+s:h", lo, NULL)) != -1) {
		switch (opt) {
		case 's': sock = optarg; break;
		case 'h': ctl_usage(stdout); return 0;
		default: ctl_usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		ctl_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "status") && optind + 1 == argc)
		return simple(sock, CTL_STATUS);
	if (!strcmp(argv[optind], "rotate") && optind + 1 == argc)
		return simple(sock, CTL_ROTATE);
	if (!strcmp(argv[optind], "record"))
		return record(sock, argc - optind, argv + optind);
	ctl_usage(stderr);
	return 2;
}
