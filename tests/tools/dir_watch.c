/* dir_watch: watches precordd's output directory for the budget tests. Every 10 ms for SECS
 * seconds, or until SIGTERM (the test stops it once what it waits for has happened), it sums
 * the sizes of the precord-*.data* files (each inode once: a file being renamed may be listed
 * under both names) and hard-links each finalized .data file into KEEP, so the test can check
 * files the daemon has deleted since. A sum over BUDGET counts only when a second look confirms
 * it (see confirmed()); else the look is taken again. Prints "max BYTES samples N over N kept N"
 * and exits 1 if the sum ever exceeded BUDGET.
 *
 * usage: dir_watch DIR BUDGET SECS KEEP */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

#define MAX_FILES 4096

struct pass {
	ino_t ino[MAX_FILES];
	uint64_t size[MAX_FILES];
	size_t n;
	uint64_t sum;
};

/* One look at the directory: each recording's inode and size (once per inode), and their sum.
 * With keep_fd >= 0, finalized files are hard-linked there (counted in *kept). Returns -1 if
 * the directory cannot be read. */
static int scan(const char *dir, struct pass *p, int keep_fd, uint64_t *kept)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return -1;
	p->n = 0;
	p->sum = 0;
	while ((de = readdir(d))) {
		struct stat st;
		size_t l = strlen(de->d_name), i;

		if (strncmp(de->d_name, "precord-", 8) || !strstr(de->d_name, ".data"))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* deleted meanwhile */
		for (i = 0; i < p->n && p->ino[i] != st.st_ino; i++)
			;
		if (i < p->n)
			continue;
		if (p->n < MAX_FILES) {
			p->ino[p->n] = st.st_ino;
			p->size[p->n++] = (uint64_t)st.st_size;
		}
		p->sum += (uint64_t)st.st_size;
		if (keep_fd >= 0 && l > 5 && !strcmp(de->d_name + l - 5, ".data") &&
		    faccessat(keep_fd, de->d_name, F_OK, 0) < 0 &&
		    linkat(dirfd(d), de->d_name, keep_fd, de->d_name, 0) == 0)
			(*kept)++;
	}
	closedir(d);
	return 0;
}

/* Whether a look's sum was really on disk at once. A look stats the files one after the other:
 * preempted in between, it may add a file the daemon deleted since to one that grew since. A
 * file only grows while it exists, so when every file of the first look is still there in a
 * second one, at least as large, all of them were there, that large, when the first ended. */
static int confirmed(const struct pass *first, const struct pass *second)
{
	for (size_t i = 0; i < first->n; i++) {
		size_t j;

		for (j = 0; j < second->n && second->ino[j] != first->ino[i]; j++)
			;
		if (j == second->n || second->size[j] < first->size[i])
			return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	static struct pass look, again;
	uint64_t budget, max = 0, samples = 0, over = 0, kept = 0, unsure = 0;
	double end;
	int keep_fd;

	if (argc != 5) {
		fprintf(stderr, "usage: dir_watch DIR BUDGET SECS KEEP\n");
		return 2;
	}
	budget = strtoull(argv[2], NULL, 10);
	end = now() + atof(argv[3]);
	keep_fd = open(argv[4], O_DIRECTORY | O_RDONLY);
	if (keep_fd < 0) {
		perror(argv[4]);
		return 2;
	}
	signal(SIGTERM, on_term);
	while (!stop && now() < end) {
		if (scan(argv[1], &look, keep_fd, &kept) < 0) {
			perror(argv[1]);
			return 2;
		}
		samples++;
		if (look.sum > budget) {
			if (scan(argv[1], &again, -1, NULL) < 0) {
				perror(argv[1]);
				return 2;
			}
			if (!confirmed(&look, &again)) {
				unsure++;
				continue;
			}
			over++;
			fprintf(stderr, "dir_watch: %llu bytes > budget %llu\n",
				(unsigned long long)look.sum, (unsigned long long)budget);
		}
		if (look.sum > max)
			max = look.sum;
		usleep(10000);
	}
	printf("max %llu samples %llu over %llu kept %llu\n", (unsigned long long)max,
	       (unsigned long long)samples, (unsigned long long)over, (unsigned long long)kept);
	if (unsure)
		fprintf(stderr, "dir_watch: %llu looks over the budget not confirmed by a second\n",
			(unsigned long long)unsure);
	return over ? 1 : 0;
}
