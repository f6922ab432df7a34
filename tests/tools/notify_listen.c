/* notify_listen: stands in for the service manager in tests. Binds an AF_UNIX datagram socket
 * at PATH (or the abstract name after a leading '@'), then prints every datagram received, each
 * followed by a line "--", flushed at once, until SIGTERM/SIGINT. Run a daemon with
 * NOTIFY_SOCKET=PATH and grep the output for READY=1, STATUS=...
 *
 * usage: notify_listen PATH */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t done;

static void on_term(int sig)
{
	done = 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sigaction act = { .sa_handler = on_term }; /* no SA_RESTART: recv returns */
	socklen_t len;
	size_t n;
	int fd;

	if (argc != 2 || (n = strlen(argv[1])) < 2 || n >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: notify_listen PATH|@NAME\n");
		return 2;
	}
	memcpy(sa.sun_path, argv[1], n);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;
	else
		unlink(argv[1]);
	len = offsetof(struct sockaddr_un, sun_path) + n + (argv[1][0] != '@');
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0) {
		fprintf(stderr, "notify_listen: cannot bind %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	while (!done) {
		char buf[8192];
		ssize_t r = recv(fd, buf, sizeof(buf) - 1, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			perror("notify_listen: recv");
			break;
		}
		buf[r] = 0;
		printf("%s\n--\n", buf);
		fflush(stdout);
	}
	if (argv[1][0] != '@')
		unlink(argv[1]);
	return 0;
}
