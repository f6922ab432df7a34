/* Maps a file executable and keeps it mapped, so that recordings list its path; the test then
 * replaces the path with a FIFO, as a hostile user would to stall whoever opens it.
 * With COPIES, FILE is mapped that many times (a process with that many executable mappings).
 *   map_then_fifo FILE SECS [COPIES]   map FILE (PROT_EXEC), print "mapped", sleep up to SECS s */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;
	void *p;
	int copies = argc > 3 ? atoi(argv[3]) : 1;

	if (argc < 3 || argc > 4 || copies < 1) {
		fprintf(stderr, "usage: map_then_fifo FILE SECS [COPIES]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	/* each at offset 0: no two can merge into one mapping */
	for (int i = 0; i < copies; i++) {
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	}
	close(fd);
	printf("mapped\n");
	fflush(stdout);
	sleep((unsigned int)atoi(argv[2]));
	return 0;
}
