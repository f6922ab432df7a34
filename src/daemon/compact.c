/* The compactor's thread takes paths from a small ring queue under one mutex and puts results
 * on another; the loop only ever takes results, so neither side waits on the other for long.
 * A copy is written as PATH.unwinding by a child process (crash isolation: the unwinder reads
 * files the profiled programs control); retention removes leftovers of a crash at start.
 * For the disk budget (retention.c): one copy exists at a time (the next is begun once the
 * loop took the last one), and no copy is larger than its file (RLIMIT_FSIZE). */
#include "daemon/compact.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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
	char todo[QUEUE][PATH_MAX];
	unsigned int todo_head, nr_todo;
	struct compact_done done[QUEUE];
	unsigned int done_head, nr_done;
	bool busy;
};

/* Longest a conversion may take, in CPU seconds: a file made to unwind forever is given up. */
#define UNWIND_CPU_LIMIT 300

/* inject__unwind in a child process: the files it reads belong to the profiled programs, which
 * may truncate a mapped file (SIGBUS) or craft its ELF; whatever happens costs only this copy.
 * Returns 0 or -errno with r->why set (-ECHILD when the child died of a signal: r->why says
 * which). */
static int unwind_isolated(struct compact_done *r, const struct inject_opts *io)
{
	/* the copy may not outgrow its file: the budget keeps room for that much (retention.c) */
	rlim_t size = (rlim_t)file_size(r->path);
	int p[2], st;
	pid_t pid;
	ssize_t n;

	/* the child's reason comes back through p (shorter than PIPE_BUF: one write, no wait) */
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		struct rlimit cpu = { UNWIND_CPU_LIMIT, UNWIND_CPU_LIMIT }, fsize = { size, size };
		struct inject *in = inject__new();
		int e;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setrlimit(RLIMIT_CPU, &cpu);
		/* past it a write fails with EFBIG, and inject__unwind removes its copy */
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &fsize);
		e = in ? -inject__unwind(in, r->path, r->tmp, io, NULL) : ENOMEM;
		if (e && in && write(p[1], inject__error(in),
				     strnlen(inject__error(in), sizeof(r->why) - 1)) < 0)
			_exit(e & 0xff); /* the parent says strerror instead */
		_exit(e & 0xff);
	}
	close(p[1]);
	while ((n = read(p[0], r->why, sizeof(r->why) - 1)) < 0 && errno == EINTR)
		;
	r->why[n > 0 ? n : 0] = 0;
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(st)) {
		unlink(r->tmp);
		snprintf(r->why, sizeof(r->why), "the unwinding process died of signal %d%s", WTERMSIG(st),
			 WTERMSIG(st) == SIGBUS ? " (a mapped file shrank?)" :
			 WTERMSIG(st) == SIGXCPU ? " (over its CPU time limit)" : "");
		return -ECHILD;
	}
	if (WEXITSTATUS(st) == EFBIG) {
		unlink(r->tmp);
		snprintf(r->why, sizeof(r->why), "its call-chain copy would be larger than the file");
		return -EFBIG;
	}
	if (WEXITSTATUS(st))
		return -WEXITSTATUS(st);
	r->st.bytes_in = file_size(r->path);
	r->st.bytes_out = file_size(r->tmp);
	return 0;
}

static void *run(void *arg)
{
	struct compactor *c = arg;
	struct inject_opts io = { .comp_level = c->comp_level, .jobs = 1 };

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
		pthread_mutex_unlock(&c->lock);

		memcpy(r.tmp, r.path, strlen(r.path));           /* fits: checked by submit */
		memcpy(r.tmp + strlen(r.path), ".unwinding", sizeof(".unwinding"));
		r.err = unwind_isolated(&r, &io);
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

struct compactor *compactor__new(int comp_level)
{
	struct compactor *c = calloc(1, sizeof(*c));
	sigset_t all, old;
	int e;

	if (!c)
		return NULL;
	c->comp_level = comp_level;
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
