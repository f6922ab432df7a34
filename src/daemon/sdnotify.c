/* The notify protocol: a datagram per state change. The socket is opened per message (the
 * manager may be restarted; a cached fd would then point nowhere) and with SOCK_CLOEXEC so a
 * recorded command never inherits it. */
#include "daemon/sdnotify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/clock.h"

#define MAX_STATE 4096

int sdnotify__send_to(const char *socket_name, const char *state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(socket_name), len = strlen(state);
	socklen_t salen;
	_cleanup_close_ int fd = -1;

	if ((socket_name[0] != '/' && socket_name[0] != '@') || n < 2 || n >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, socket_name, n);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;  /* abstract: no NUL at the end, the length says where it ends */
	salen = offsetof(struct sockaddr_un, sun_path) + n + (socket_name[0] == '/');
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, state, len, MSG_NOSIGNAL, (struct sockaddr *)&sa, salen) < 0)
		return -errno;
	return 1;
}

int sdnotify__send(const char *state)
{
	const char *s = getenv("NOTIFY_SOCKET");

	if (!s || !*s)
		return 0;
	return sdnotify__send_to(s, state);
}

int sdnotify__sendf(const char *fmt, ...)
{
	char buf[MAX_STATE + 1];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(buf)) {
		/* keep whole lines only: a cut assignment would be misread */
		char *nl = strrchr(buf, '\n');

		if (!nl)
			return -EMSGSIZE;
		nl[1] = 0;
	}
	return sdnotify__send(buf);
}

/* One line: the protocol reads a newline as the start of the next assignment. */
static void one_line(char *dst, size_t size, const char *s)
{
	size_t i = 0;

	for (; s[i] && i + 1 < size; i++)
		dst[i] = s[i] == '\n' || s[i] == '\r' ? ' ' : s[i];
	dst[i] = 0;
}

int sdnotify__ready(const char *status)
{
	char line[1024];

	if (!status)
		return sdnotify__send("READY=1");
	one_line(line, sizeof(line), status);
	return sdnotify__sendf("READY=1\nSTATUS=%s", line);
}

int sdnotify__status(const char *status)
{
	char line[1024];

	one_line(line, sizeof(line), status);
	return sdnotify__sendf("STATUS=%s", line);
}

int sdnotify__reloading(void)
{
	return sdnotify__sendf("RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long)clock__us());
}

int sdnotify__stopping(void)
{
	return sdnotify__send("STOPPING=1");
}

int sdnotify__watchdog(void)
{
	return sdnotify__send("WATCHDOG=1");
}

static int parse_ull(const char *s, unsigned long long *ret)
{
	char *end;

	if (!s || !*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*ret = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

uint64_t sdnotify__watchdog_usec(void)
{
	unsigned long long usec, pid;
	const char *p = getenv("WATCHDOG_PID");

	if (parse_ull(getenv("WATCHDOG_USEC"), &usec) || !usec)
		return 0;
	/* the variables may have been inherited from a parent the watchdog is meant for */
	if (p && (parse_ull(p, &pid) || pid != (unsigned long long)getpid()))
		return 0;
	return usec;
}
