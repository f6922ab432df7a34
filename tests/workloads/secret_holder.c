/* A process that holds a secret on its stack while it runs, for precordd's attack tests: a
 * recording that may not see it must not contain it. The secret is the first line of a file
 * only the privileged side can read.
 *   secret_holder spin FILE MS         read FILE, spin MS ms with it on the stack (run set-uid
 *                                      or set-gid: the secret is what the privilege reads)
 *   secret_holder execafter US PROG FILE MS
 *                                      sleep US microseconds, then exec PROG spin FILE MS
 *   secret_holder drop UID FILE SECS   as root: read FILE, become UID (every thread, no exec),
 *                                      print "ready PID", spin SECS s with the secret
 *   secret_holder thread UID FILE SECS as root: a worker thread keeps root and spins SECS s with
 *                                      the secret; the main thread alone becomes UID (raw
 *                                      setresuid), prints "ready PID" and sleeps
 *   secret_holder threads N SECS       N threads that sleep SECS s; prints "ready PID" */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static char secret[256] = "no-secret";
static double spin_secs;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void read_secret(const char *path)
{
	FILE *f = fopen(path, "re");

	if (f) {
		if (!fgets(secret, sizeof(secret), f))
			strcpy(secret, "no-secret");
		secret[strcspn(secret, "\n")] = 0;
		fclose(f);
	}
}

/* The secret, copied all over this frame, which every sample's stack copy starts near. */
__attribute__((noinline)) static void spin_with_secret(double secs)
{
	volatile char frame[2048];
	size_t l = strlen(secret) + 1;
	double end = now() + secs;

	for (size_t o = 0; o + l <= sizeof(frame); o += l)
		memcpy((char *)frame + o, secret, l);
	while (now() < end)
		for (int i = 0; i < 20000; i++)
			sink += (unsigned long)frame[i % sizeof(frame)];
	secret[0] = 0;
}

static void *sleeper(void *arg)
{
	sleep((unsigned int)spin_secs);
	return arg;
}

static void *worker(void *arg)
{
	spin_with_secret(spin_secs);
	return arg;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "spin")) {
		read_secret(argv[2]);
		spin_with_secret(atof(argv[3]) / 1000);
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "execafter")) {
		usleep((useconds_t)atoi(argv[2]));
		execl(argv[3], argv[3], "spin", argv[4], argv[5], (char *)NULL);
		perror("exec");
		return 127;
	}
	if (argc == 5 && !strcmp(argv[1], "drop")) {
		uid_t u = (uid_t)atoi(argv[2]);

		read_secret(argv[3]);
		if (setresuid(u, u, u) < 0) {
			perror("setresuid");
			return 1;
		}
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		spin_with_secret(atof(argv[4]));
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "thread")) {
		uid_t u = (uid_t)atoi(argv[2]);
		pthread_t t;

		read_secret(argv[3]);
		spin_secs = atof(argv[4]);
		if (pthread_create(&t, NULL, worker, NULL))
			return 1;
		/* this thread only: glibc's setresuid would change the worker too */
		if (syscall(SYS_setresuid, u, u, u) < 0) {
			perror("setresuid");
			return 1;
		}
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		pthread_join(t, NULL);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "threads")) {
		int n = atoi(argv[2]);
		pthread_attr_t a;
		pthread_t t;

		spin_secs = atof(argv[3]);
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 65536);
		for (int i = 0; i < n; i++)
			if (pthread_create(&t, &a, sleeper, NULL))
				return 1;
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		sleep((unsigned int)spin_secs);
		return 0;
	}
	fprintf(stderr, "usage: see the comment at the top of secret_holder.c\n");
	return 2;
}
