/* status_in_rotation: how long precordd takes to answer `status` while a rotation is in
 * progress. It asks status over and over; once an answer says rotating=1, the next request is
 * sent at once and timed from its send to its answer (the client's start-up is not in it). A
 * timed answer that says rotating=1 too was asked and answered during a rotation: it counts.
 * Stops after COUNT such answers and prints "answered COUNT during rotations, slowest MS ms,
 * ..."; exits 1 when MAX_ROTATIONS rotations went by without them (a daemon that cannot answer
 * during a rotation never says rotating=1) or the daemon stopped answering.
 *
 * usage: status_in_rotation SOCKET COUNT MAX_ROTATIONS */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One status request: its answer line in buf, the time from send to answer in *ms. 0, or -1
 * when the daemon did not answer within 60 s (a hung loop: the caller fails). */
static int ask(const char *path, char *buf, size_t size, double *ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = 0;
	double t0;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror(path);
		return -1;
	}
	t0 = now_ms();
	if (send(fd, "status\n", 7, MSG_NOSIGNAL) != 7) {
		close(fd);
		return -1;
	}
	while (n + 1 < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 60000) != 1)
			break;
		r = read(fd, buf + n, size - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	*ms = now_ms() - t0;
	close(fd);
	buf[n] = 0;
	return memchr(buf, '\n', n) && !strncmp(buf, "OK ", 3) ? 0 : -1;
}

static long field(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

int main(int argc, char **argv)
{
	char line[2048];
	long want, max_rot, first_rot = -1, rot = 0;
	long got = 0, asked = 0;
	double ms, slowest = 0, slowest_any = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: status_in_rotation SOCKET COUNT MAX_ROTATIONS\n");
		return 2;
	}
	want = atol(argv[2]);
	max_rot = atol(argv[3]);
	while (got < want) {
		if (ask(argv[1], line, sizeof(line), &ms) < 0) {
			fprintf(stderr, "no answer to status after %.0f ms: %s\n", ms, line);
			return 1;
		}
		asked++;
		slowest_any = ms > slowest_any ? ms : slowest_any;
		rot = field(line, "rotations");
		if (first_rot < 0)
			first_rot = rot;
		if (rot - first_rot > max_rot) {
			fprintf(stderr, "%ld rotations, and %ld of %ld status answers during one (%ld asked; "
				"slowest answer %.0f ms); last: %s", rot - first_rot, got, want, asked,
				slowest_any, line);
			return 1;
		}
		if (field(line, "rotating") != 1) {
			usleep(5000); /* the next look: no need to keep the loop busy meanwhile */
			continue;
		}
		/* a rotation is in progress: ask again at once, and time it */
		if (ask(argv[1], line, sizeof(line), &ms) < 0) {
			fprintf(stderr, "no answer to status during a rotation after %.0f ms\n", ms);
			return 1;
		}
		asked++;
		slowest_any = ms > slowest_any ? ms : slowest_any;
		if (field(line, "rotating") != 1)
			continue;
		got++;
		slowest = ms > slowest ? ms : slowest;
	}
	printf("answered %ld during rotations, slowest %.1f ms (%ld asked, %ld rotations, slowest "
	       "of all %.1f ms)\n", got, slowest, asked, rot - first_rot, slowest_any);
	return 0;
}
