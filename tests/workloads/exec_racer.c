/* The exec race against precordd, as a member would run it: ask precordd to record a child,
 * and let the child exec a set-uid program DELAY_US microseconds after the request was sent,
 * so that the exec lands between precordd's checks and its opening of the events. Recording
 * is stopped early after 150 ms (as ^C would) and the child killed; the recording handed back
 * (if any) goes to OUT, and it prints "recorded" or "refused: REASON".
 *   exec_racer SOCKET OUT DELAY_US PROG FILE MS    (the child runs PROG spin FILE MS) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* One reply line, and an fd passed with it (else -1). Returns the line's length or -1. */
static int read_line(int s, char *buf, size_t size, int *ret_fd)
{
	size_t n = 0;

	*ret_fd = -1;
	while (n + 1 < size) {
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} cm;
		struct iovec iov = { buf + n, 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
				     .msg_controllen = sizeof(cm.b) };
		struct cmsghdr *c;

		if (recvmsg(s, &mh, MSG_CMSG_CLOEXEC) != 1)
			return -1;
		c = CMSG_FIRSTHDR(&mh);
		if (c && c->cmsg_type == SCM_RIGHTS)
			memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
		if (buf[n++] == '\n')
			break;
	}
	buf[n] = 0;
	return (int)n;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char req[128], line[1100], b;
	int go[2], s, fd = -1, st;
	pid_t child;

	if (argc != 7) {
		fprintf(stderr, "usage: exec_racer SOCKET OUT DELAY_US PROG FILE MS\n");
		return 2;
	}
	if (pipe(go) < 0)
		return 1;
	child = fork();
	if (child == 0) {
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		usleep((useconds_t)atoi(argv[3]));
		execl(argv[4], argv[4], "spin", argv[5], argv[6], (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		return 1;
	}
	snprintf(req, sizeof(req), "record pid=%d duration=3s\n", (int)child);
	if (write(s, req, strlen(req)) != (ssize_t)strlen(req))
		return 1;
	if (write(go[1], "g", 1) != 1)
		return 1;
	while (read_line(s, line, sizeof(line), &fd) > 0) {
		if (!strncmp(line, "STARTED", 7)) {
			/* record a while, then stop early as ^C would: the file comes back */
			usleep(150000);
			shutdown(s, SHUT_WR);
			continue;
		}
		break;
	}
	/* our own child: a set-uid program's real uid is still ours */
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	if (fd >= 0) {
		int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		char buf[65536];
		ssize_t n;

		while (out >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				return 1;
		printf("recorded\n");
		return 0;
	}
	printf("refused: %s", line);
	return 0;
}
