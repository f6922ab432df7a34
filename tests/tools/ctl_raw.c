/* ctl_raw: a deliberately bad control-socket client for tests. Connects to SOCKET, then
 *   --text STRING   sends STRING as is (\n and \xHH escapes understood)
 *   --bytes N       sends N bytes of 'x' without a newline
 *   --silent SECS   sends nothing, waits up to SECS for the server
 *   --hold STRING   as --text, and a file descriptor passed with the answer is kept, never
 *                   read: "<fd fifo>" (or regular, other) is printed when it comes, and once the
 *                   server has closed, ctl_raw waits to be killed (a client hoarding what
 *                   precordd hands over)
 * and prints what the server answered (until it closes, or 120 s: a busy machine may keep the
 * server from answering for seconds), then "<closed>" if it closed.
 *
 * usage: ctl_raw SOCKET (--text STRING | --bytes N | --silent SECS | --hold STRING) */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/fdpass.h"

static size_t unescape(const char *s, char *out)
{
	size_t n = 0;

	while (*s) {
		if (s[0] == '\\' && s[1] == 'n') {
			out[n++] = '\n';
			s += 2;
		} else if (s[0] == '\\' && s[1] == 'x' && s[2] && s[3]) {
			char hex[3] = { s[2], s[3], 0 };

			out[n++] = (char)strtoul(hex, NULL, 16);
			s += 4;
		} else {
			out[n++] = *s++;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, wait_ms = 120000, held = -1;
	bool hold = false;
	char *buf = NULL;
	size_t len = 0;

	if (argc != 4 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: ctl_raw SOCKET (--text STRING | --bytes N | --silent SECS)\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("ctl_raw: connect");
		return 1;
	}
	if (!strcmp(argv[2], "--text") || (hold = !strcmp(argv[2], "--hold"))) {
		buf = malloc(strlen(argv[3]) + 1);
		len = unescape(argv[3], buf);
	} else if (!strcmp(argv[2], "--bytes")) {
		len = strtoul(argv[3], NULL, 10);
		buf = malloc(len + 1);
		memset(buf, 'x', len);
	} else if (!strcmp(argv[2], "--silent")) {
		wait_ms = atoi(argv[3]) * 1000;
	} else {
		return 2;
	}
	/* the server may close early (that is the point): a short or failed send is fine */
	for (size_t off = 0; off < len;) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		char r[4096];
		ssize_t n;

		if (poll(&p, 1, wait_ms) <= 0) {
			printf("<timeout>\n");
			break;
		}
		if (hold) {
			int passed = -1;
			struct stat st;

			n = fdpass__recv(fd, r, sizeof(r), &passed, 0);
			if (n > 0)
				fwrite(r, 1, (size_t)n, stdout);
			if (passed >= 0 && held < 0 && fstat(passed, &st) == 0) {
				held = passed;
				printf("<fd %s>\n", S_ISFIFO(st.st_mode) ? "fifo" :
				       S_ISREG(st.st_mode) ? "regular" : "other");
			}
			fflush(stdout);
		} else {
			n = recv(fd, r, sizeof(r), 0);
			if (n > 0)
				fwrite(r, 1, (size_t)n, stdout);
		}
		if (n <= 0) {
			printf("<closed>\n");
			break;
		}
	}
	fflush(stdout);
	while (held >= 0)
		pause();
	free(buf);
	return 0;
}
