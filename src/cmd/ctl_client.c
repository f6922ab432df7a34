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
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
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
		union {
			char b[CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr align;
		} cm;
		struct iovec iov;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
				     .msg_controllen = sizeof(cm.b) };
		ssize_t n;

		if (nl) {
			size_t l = (size_t)(nl - c->buf);

			snprintf(line, size, "%.*s", (int)l, c->buf);
			memmove(c->buf, nl + 1, c->len - l - 1);
			c->len -= l + 1;
			return (int)(l < size ? l : size - 1) + 1;
		}
		if (c->len == sizeof(c->buf))
			return -EMSGSIZE;
		iov.iov_base = c->buf + c->len;
		iov.iov_len = sizeof(c->buf) - c->len;
		n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h)) {
			if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
				continue;
			for (size_t k = 0; k < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
				int f;

				memcpy(&f, CMSG_DATA(h) + k * sizeof(int), sizeof(int));
				if (c->passed_fd < 0)
					c->passed_fd = f;
				else
					close(f);
			}
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

static int copy_out(int from, const char *path)
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
	while (off < st.st_size) {
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
	struct ctl_request req = { .verb = CTL_RECORD, .callgraph = -1 };
	const char *out = "perf.data";
	struct conn c = { .passed_fd = -1 };
	char buf[CTL_MAX_LINE], line[CTL_MAX_LINE];
	bool quiet = false, started = false;
	pid_t child = -1;
	int go[2] = { -1, -1 };
	int opt, n, rc = 1;
	struct sigaction sa = { .sa_handler = on_sigint }; /* no SA_RESTART: recv sees EINTR */

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+p:d:F:o:qh", lo, NULL)) != -1) {
		enum callgraph_mode mode;
		uint64_t freq;

		switch (opt) {
		case 'p':
			if (parse__pid(optarg, &req.pid)) {
				fprintf(stderr, "precord ctl record: invalid pid '%s'\n", optarg);
				return 2;
			}
			break;
		case 'C':
			if (parse__cgroup_path(optarg)) {
				fprintf(stderr, "precord ctl record: invalid cgroup '%s' (a path below "
					"/sys/fs/cgroup starting with '/', no '.' or '..' components, "
					"shorter than %d bytes)\n", optarg, PARSE_CGROUP_PATH_SIZE);
				return 2;
			}
			strcpy(req.cgroup, optarg);
			break;
		case 'd':
			if (parse__duration_ms(optarg, &req.duration_ms) || !req.duration_ms ||
			    req.duration_ms > CTL_MAX_DURATION_MS) {
				fprintf(stderr, "precord ctl record: invalid duration '%s' (like 30, 1.5s, "
					"500ms or 10m; at most a day)\n", optarg);
				return 2;
			}
			break;
		case 'F':
			if (parse__freq(optarg, &freq)) {
				fprintf(stderr, "precord ctl record: invalid frequency '%s' (1 to %d)\n",
					optarg, PARSE_FREQ_MAX);
				return 2;
			}
			req.frequency = (uint32_t)freq;
			break;
		case 'g':
			if (parse__callgraph(optarg, &mode, &req.stack_size)) {
				fprintf(stderr, "precord ctl record: --call-graph takes dwarf[,SIZE] (SIZE "
					"from %d to %d), fp or none\n", PARSE_STACK_MIN, PARSE_STACK_MAX);
				return 2;
			}
			req.callgraph = (int)mode;
			break;
		case 'L': req.lossless = true; break;
		case 'o': out = optarg; break;
		case 'q': quiet = true; break;
		case 'h': ctl_usage(stdout); return 0;
		default: ctl_usage(stderr); return 2;
		}
	}
	if ((req.pid != 0) + (req.cgroup[0] != 0) + (optind < argc) != 1) {
		fprintf(stderr, "precord ctl record: give one of -p PID, --cgroup PATH or a command\n");
		return 2;
	}
	c.fd = connect_to(sock);
	if (c.fd < 0) {
		fprintf(stderr, "precord ctl: cannot connect to %s: %s (is precordd running?)\n",
			sock, strerror(-c.fd));
		return 1;
	}
	if (optind < argc) {
		/* The command waits for a byte on go[0], sent once recording has begun. */
		if (pipe2(go, O_CLOEXEC) < 0)
			goto sys_fail;
		child = fork();
		if (child < 0)
			goto sys_fail;
		if (child == 0) {
			char b;

			close(go[1]);
			close(c.fd);
			if (read(go[0], &b, 1) != 1)
				_exit(127);
			execvp(argv[optind], argv + optind);
			fprintf(stderr, "precord ctl record: cannot run %s: %m\n", argv[optind]);
			_exit(errno == ENOENT ? 127 : 126);
		}
		close(go[0]);
		go[0] = -1;
		req.pid = child;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	n = ctl__format_request(&req, buf, sizeof(buf));
	if (n < 0)
		goto sys_fail;
	/* a refusal may close the connection before the request is sent: read it anyway */
	send(c.fd, buf, (size_t)n, MSG_NOSIGNAL);
	for (;;) {
		n = read_line(&c, line, sizeof(line));
		if (n == -EINTR) {
			if (interrupted > 1)
				break;
			/* first ^C: stop early, still take the file */
			shutdown(c.fd, SHUT_WR);
			continue;
		}
		if (n <= 0) {
			fprintf(stderr, "precord ctl record: precordd closed the connection%s\n",
				started ? " before the recording was handed over" : "");
			break;
		}
		if (!strncmp(line, "STARTED", 7)) {
			started = true;
			if (go[1] >= 0) {
				if (write(go[1], "g", 1) != 1)
					break;
				close(go[1]);
				go[1] = -1;
			}
			continue;
		}
		if (!strncmp(line, "ERR ", 4)) {
			fprintf(stderr, "precord ctl record: %s\n", line + 4);
			break;
		}
		if (strncmp(line, "OK", 2) || c.passed_fd < 0) {
			fprintf(stderr, "precord ctl record: unexpected answer '%.80s'\n", line);
			break;
		}
		n = copy_out(c.passed_fd, out);
		if (n < 0) {
			fprintf(stderr, "precord ctl record: cannot write %s: %s\n", out, strerror(-n));
			break;
		}
		if (!quiet) {
			char s[32] = "?", l[32] = "?", b[32] = "?", note[64] = "";

			field(line, "samples", s, sizeof(s));
			field(line, "lost", l, sizeof(l));
			field(line, "bytes", b, sizeof(b));
			field(line, "note", note, sizeof(note));
			fprintf(stderr, "precord ctl: wrote %s: %s samples, %s lost, %s bytes%s%s%s\n",
				out, s, l, b, note[0] ? " (" : "", note, note[0] ? ")" : "");
		}
		rc = 0;
		break;
	}
	goto out;
sys_fail:
	fprintf(stderr, "precord ctl record: %m\n");
	rc = 1;
out:
	if (go[1] >= 0)
		close(go[1]); /* a held command never started: it exits 127 */
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
