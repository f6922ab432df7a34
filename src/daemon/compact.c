/* The compactor's thread takes paths from a small ring queue under one mutex and puts results
 * on another; the loop only ever takes results, so neither side waits on the other for long.
 * A copy is written as PATH.unwinding by a child process (crash isolation: the unwinder reads
 * files the profiled programs control); retention removes leftovers of a crash at start.
 * For the disk budget (retention.c): one copy exists at a time (the next is begun once the
 * loop took the last one), and no copy is larger than its file (RLIMIT_FSIZE). */
#include "daemon/compact.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/isolate.h"

#define QUEUE 16

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

struct compactor {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	int comp_level;
	unsigned int stall_ms;
	char todo[QUEUE][PATH_MAX];
	unsigned int todo_head, nr_todo;
	struct compact_done done[QUEUE];
	unsigned int done_head, nr_done;
	bool busy;
};

/* Longest a conversion may take, in CPU seconds: a file made to unwind forever is given up. */
#define UNWIND_CPU_LIMIT 300

/* The child (precordd ISOLATE_ARG unwind PATH TMP LEVEL): inject__unwind of PATH into TMP. */
int compactor__child_main(int argc, char **argv)
{
	struct inject_opts io = { .jobs = 1 };
	struct inject *in;
	int e;

	if (argc != 3 || sscanf(argv[2], "%d", &io.comp_level) != 1)
		return EINVAL;
	/* past RLIMIT_FSIZE a write fails with EFBIG, and inject__unwind removes its copy */
	signal(SIGXFSZ, SIG_IGN);
	in = inject__new();
	e = in ? -inject__unwind(in, argv[0], argv[1], &io, NULL) : ENOMEM;
	/* (when the reason cannot be written, the parent says strerror instead) */
	if (e && in && write(ISOLATE_WHY_FD, inject__error(in),
			     strnlen(inject__error(in), sizeof(((struct compact_done *)0)->why) - 1)) < 0)
		e = e & 0xff;
	inject__free(in);
	return e & 0xff;
}

/* inject__unwind in a child process: the files it reads belong to the profiled programs, which
 * may truncate a mapped file (SIGBUS) or craft its ELF; whatever happens costs only this copy.
 * Returns 0 or -errno with r->why set (-ECHILD when the child died of a signal, -ETIMEDOUT when
 * it stalled: r->why says which). */
static int unwind_isolated(struct compact_done *r, int comp_level, unsigned int stall_ms)
{
	char level[16];
	const char *args[] = { "unwind", r->path, r->tmp, level, NULL };
	struct isolate_job j = {
		.what = "unwinding", .args = args, .cpu_s = UNWIND_CPU_LIMIT,
		/* the copy may not outgrow its file: the budget keeps room for that much
		 * (retention.c); at least a byte, as 0 would be no limit */
		.fsize = (rlim_t)file_size(r->path) ? (rlim_t)file_size(r->path) : 1,
		.umask = 077, .stall_ms = stall_ms,
		/* not stopped with the compactor: the file in hand is finished (a few seconds) */
	};
	int err;

	snprintf(level, sizeof(level), "%d", comp_level);
	err = isolate__run(&j, r->why, sizeof(r->why));
	if (err == -EFBIG) {
		unlink(r->tmp);
		snprintf(r->why, sizeof(r->why), "its call-chain copy would be larger than the file");
	} else if (err == -ECHILD || err == -ETIMEDOUT) {
		unlink(r->tmp);
	}
	if (err)
		return err;
	r->st.bytes_in = file_size(r->path);
	r->st.bytes_out = file_size(r->tmp);
	return 0;
}

static void *run(void *arg)
{
	struct compactor *c = arg;

	/* the service's recording comes first: this thread runs only when nothing else wants the CPU */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct compact_done r = { 0 };

		/* one copy at a time on disk: the next once the loop took the last */
		while (!c->stop && (!c->nr_todo || c->nr_done))
			pthread_cond_wait(&c->cond, &c->lock);
		if (c->stop)
			break;
		snprintf(r.path, sizeof(r.path), "%s", c->todo[c->todo_head]);
		c->todo_head = (c->todo_head + 1) % QUEUE;
		c->nr_todo--;
		c->busy = true;
		int comp_level = c->comp_level;
		unsigned int stall_ms = c->stall_ms;
		pthread_mutex_unlock(&c->lock);

		memcpy(r.tmp, r.path, strlen(r.path));           /* fits: checked by submit */
		memcpy(r.tmp + strlen(r.path), ".unwinding", sizeof(".unwinding"));
		r.err = unwind_isolated(&r, comp_level, stall_ms);
		if (r.err && !r.why[0])
			snprintf(r.why, sizeof(r.why), "%s", strerror(-r.err));

		pthread_mutex_lock(&c->lock);
		c->busy = false;
		if (c->stop) {
			if (!r.err)
				unlink(r.tmp);
			break;
		}
		c->done[(c->done_head + c->nr_done) % QUEUE] = r;
		c->nr_done++;
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

struct compactor *compactor__new(int comp_level, unsigned int stall_ms)
{
	struct compactor *c = calloc(1, sizeof(*c));
	sigset_t all, old;
	int e;

	if (!c)
		return NULL;
	c->comp_level = comp_level;
	c->stall_ms = stall_ms;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	/* no signal for this thread: the loop takes them from a signalfd, which sees only signals
	 * that every thread blocks */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	e = pthread_create(&c->thread, NULL, run, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		pthread_mutex_destroy(&c->lock);
		pthread_cond_destroy(&c->cond);
		free(c);
		errno = e;
		return NULL;
	}
	return c;
}

void compactor__configure(struct compactor *c, int comp_level, unsigned int stall_ms)
{
	pthread_mutex_lock(&c->lock);
	c->comp_level = comp_level;
	c->stall_ms = stall_ms;
	pthread_mutex_unlock(&c->lock);
}

int compactor__submit(struct compactor *c, const char *path)
{
	int r = 0;

	if (strlen(path) + sizeof(".unwinding") > PATH_MAX)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&c->lock);
	if (c->nr_todo == QUEUE) {
		r = -EAGAIN;
	} else {
		snprintf(c->todo[(c->todo_head + c->nr_todo) % QUEUE], PATH_MAX, "%s", path);
		c->nr_todo++;
		pthread_cond_signal(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

int compactor__take(struct compactor *c, struct compact_done *ret)
{
	int got = 0;

	pthread_mutex_lock(&c->lock);
	if (c->nr_done) {
		*ret = c->done[c->done_head];
		c->done_head = (c->done_head + 1) % QUEUE;
		c->nr_done--;
		got = 1;
		pthread_cond_signal(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return got;
}

unsigned int compactor__pending(struct compactor *c)
{
	unsigned int n;

	pthread_mutex_lock(&c->lock);
	n = c->nr_todo + (c->busy ? 1 : 0);
	pthread_mutex_unlock(&c->lock);
	return n;
}

void compactor__free(struct compactor *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	for (unsigned int i = 0; i < c->nr_done; i++) {
		struct compact_done *r = &c->done[(c->done_head + i) % QUEUE];

		if (!r->err)
			unlink(r->tmp);
	}
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c);
}
