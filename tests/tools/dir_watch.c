/* dir_watch: watches precordd's output directory for the budget tests. Every 10 ms for SECS
 * seconds it sums the sizes of the precord-*.data* files (each inode once: a file being
 * renamed may be listed under both names) and hard-links each finalized .data file into KEEP,
 * so the test can check files the daemon has deleted since. Prints "max BYTES samples N
 * over N kept N" and exits 1 if the sum ever exceeded BUDGET.
 *
 * usage: dir_watch DIR BUDGET SECS KEEP */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t budget, max = 0, samples = 0, over = 0, kept = 0;
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
	while (now() < end) {
		DIR *d = opendir(argv[1]);
		struct dirent *de;
		ino_t seen[4096];
		size_t nseen = 0;
		uint64_t sum = 0;

		if (!d) {
			perror(argv[1]);
			return 2;
		}
		while ((de = readdir(d))) {
			struct stat st;
			size_t l = strlen(de->d_name), i;

			if (strncmp(de->d_name, "precord-", 8) || !strstr(de->d_name, ".data"))
				continue;
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue; /* deleted meanwhile */
			for (i = 0; i < nseen && seen[i] != st.st_ino; i++)
				;
			if (i < nseen)
				continue;
			if (nseen < 4096)
				seen[nseen++] = st.st_ino;
			sum += (uint64_t)st.st_size;
			if (l > 5 && !strcmp(de->d_name + l - 5, ".data") &&
			    faccessat(keep_fd, de->d_name, F_OK, 0) < 0 &&
			    linkat(dirfd(d), de->d_name, keep_fd, de->d_name, 0) == 0)
				kept++;
		}
		closedir(d);
		samples++;
		if (sum > max)
			max = sum;
		if (sum > budget) {
			over++;
			fprintf(stderr, "dir_watch: %llu bytes > budget %llu\n",
				(unsigned long long)sum, (unsigned long long)budget);
		}
		usleep(10000);
	}
	printf("max %llu samples %llu over %llu kept %llu\n", (unsigned long long)max,
	       (unsigned long long)samples, (unsigned long long)over, (unsigned long long)kept);
	return over ? 1 : 0;
}
