/* A process tree for the pause tests: the root (two threads), NWORKERS forked workers of which
 * every other one exec's this program again, and optionally a new worker every RESPAWN_MS. Each
 * counts in its own slot of a shared file about once a millisecond, so a pause shows as counters
 * that stop. Everything ends when the file's stop word is set, or after 120 s as a safety net
 * (a test that died; a test that takes longer on a busy machine must not see it). With
 * PAUSE_TREE_READY=PATH (a FIFO) in the environment, the root writes "ready" to PATH once every
 * first worker has counted once, so that a script can wait for the tree instead of for a time.
 *
 *   pause_tree FILE NWORKERS [RESPAWN_MS]     root
 *   pause_tree --worker FILE SLOT             a worker (exec'd form)
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#define MAX_SLOTS 64

/* Keep in sync with tests/check_pause.c. */
struct shm {
	volatile uint64_t stop;
	volatile uint64_t nr_slots;
	volatile uint64_t counters[MAX_SLOTS];
	volatile int32_t pids[MAX_SLOTS];
};

static struct shm *shm;
static time_t t_end;

static struct shm *map(const char *path)
{
	int fd = open(path, O_RDWR);
	void *m;

	if (fd < 0) {
		perror(path);
		exit(2);
	}
	m = mmap(NULL, sizeof(struct shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	close(fd);
	return m;
}

static int running(void)
{
	return !shm->stop && time(NULL) < t_end;
}

static void tick(int slot)
{
	struct timespec ts = { 0, 1000000 };

	__atomic_fetch_add(&shm->counters[slot], 1, __ATOMIC_RELAXED);
	nanosleep(&ts, NULL);
}

static void worker_loop(int slot)
{
	/* Do not outlive the root if a test dies. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	shm->pids[slot] = getpid();
	while (running())
		tick(slot);
	exit(0);
}

static void *second_thread(void *arg)
{
	while (running())
		tick(1);
	return NULL;
}

/* Every slot has counted once: the first workers all run (a worker that exec's takes longest). */
static int all_started(void)
{
	uint64_t n = shm->nr_slots;

	for (uint64_t i = 0; i < n; i++)
		if (!shm->counters[i])
			return 0;
	return 1;
}

static void say_ready(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(2);
	}
	fputs("ready\n", f);
	fclose(f);
}

static void spawn(const char *self, const char *file)
{
	int slot = (int)__atomic_fetch_add(&shm->nr_slots, 1, __ATOMIC_RELAXED);
	pid_t pid;

	if (slot >= MAX_SLOTS) {
		__atomic_fetch_sub(&shm->nr_slots, 1, __ATOMIC_RELAXED);
		return;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid)
		return;
	if (slot & 1) {
		char s[16];

		snprintf(s, sizeof(s), "%d", slot);
		execl(self, self, "--worker", file, s, (char *)NULL);
		perror("exec");
		_exit(2);
	}
	worker_loop(slot);
}

int main(int argc, char **argv)
{
	pthread_t t;
	int nworkers, respawn_ms;
	uint64_t last_spawn = 0;
	const char *ready = getenv("PAUSE_TREE_READY");

	t_end = time(NULL) + 120;
	if (argc == 4 && !strcmp(argv[1], "--worker")) {
		shm = map(argv[2]);
		worker_loop(atoi(argv[3]));
	}
	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE NWORKERS [RESPAWN_MS]\n", argv[0]);
		return 2;
	}
	shm = map(argv[1]);
	nworkers = atoi(argv[2]);
	respawn_ms = argc > 3 ? atoi(argv[3]) : 0;

	shm->pids[0] = getpid();
	shm->pids[1] = getpid();
	shm->nr_slots = 2;
	pthread_create(&t, NULL, second_thread, NULL);
	for (int i = 0; i < nworkers; i++)
		spawn(argv[0], argv[1]);
	while (running()) {
		tick(0);
		if (ready && *ready && all_started()) {
			say_ready(ready);
			ready = NULL;
		}
		if (respawn_ms > 0 && shm->counters[0] - last_spawn >= (uint64_t)respawn_ms) {
			last_spawn = shm->counters[0];
			spawn(argv[0], argv[1]);
		}
	}
	pthread_join(t, NULL);
	while (wait(NULL) > 0)
		;
	return shm->stop ? 0 : 1;
}
