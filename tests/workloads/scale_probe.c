/* How much more two threads get done than one on this machine: the ceiling for any program's
 * speed-up from a second thread (bench/report.sh prints it beside preport's -j 2 against -j 1).
 * Usage: scale_probe alu|mem THREADS ROUNDS. Each thread does the same work: alu, ROUNDS x 10^7
 * steps of a dependent integer recurrence; mem, ROUNDS passes reading one word per 64-byte line
 * of a 64 MiB buffer of its own (more than any cache here). The caller times it with 1 and with 2
 * threads; 2 x the one-thread time over the two-thread time is the speed-up. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_BYTES ((size_t)64 << 20)

static int mem;
static unsigned long rounds;
static volatile uint64_t sink;

static void *work(void *arg)
{
	uint64_t x = (uintptr_t)arg + 1;

	if (mem) {
		uint8_t *b = malloc(MEM_BYTES);

		if (!b)
			return NULL;
		memset(b, 1, MEM_BYTES);
		for (unsigned long r = 0; r < rounds; r++)
			for (size_t i = 0; i < MEM_BYTES; i += 64)
				x += b[i];
		free(b);
	} else {
		for (unsigned long i = 0; i < rounds * 10000000UL; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	sink = x;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	int n;

	if (argc != 4 || (strcmp(argv[1], "alu") && strcmp(argv[1], "mem")) ||
	    (n = atoi(argv[2])) < 1 || n > 64 || !(rounds = strtoul(argv[3], NULL, 10))) {
		fprintf(stderr, "usage: scale_probe alu|mem THREADS ROUNDS\n");
		return 2;
	}
	mem = !strcmp(argv[1], "mem");
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, work, (void *)(uintptr_t)i)) {
			perror("scale_probe: pthread_create");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
