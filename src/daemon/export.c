/* The export thread and its spool. One thread, at nice 19, does everything slow: it takes jobs
 * from a small queue under one mutex, converts each file in a child process (the files hold what
 * the profiled programs mapped, so a crafted or truncated one costs only that child), moves the
 * profile into place and the spool, and pushes the spool oldest first whenever its back-off
 * allows. The service loop only queues jobs, reads counters and drains the thread's log lines;
 * the thread alone creates, pushes and drops spool entries, and the loop alone deletes kept
 * profiles (with their files). */
#include "daemon/export.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon_int.h"
#include "daemon/isolate.h"
#include "daemon/push.h"
#include "lib/clock.h"
#include "report/pprof.h"
#include "report/session.h"

#define QUEUE 16
#define LOG_QUEUE 32
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS (60 * 1000)
/* Longest a conversion may take, in CPU seconds (as the unwinding's). */
#define EXPORT_CPU_LIMIT 300
#define SPOOL_DIR ".push"
#define SPOOL_NAME_MAX 224
/* The sequence number of the last file exported, so that a start exports what the previous
 * run finished at its stop (or could not get to); absent while export is off. */
#define SEQ_FILE ".export-seq"

struct export_job {
	char data[PATH_MAX];
	char base[SPOOL_NAME_MAX];   /* the file's name without .data */
	long long from, until;
	bool keep, spool;
};

/* What the thread needs of the configuration, copied so that a reload never races it. */
struct export_cfg {
	char dir[PATH_MAX];
	bool push;
	char url[1100], name[160], labels[4096];
	uint64_t timeout_ms, spool_size, rate;
	unsigned int stall_ms;
};

struct log_line {
	int prio;
	char msg[600];
};

struct exporter {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	volatile bool stop;          /* also read by curl's progress callback, unlocked */
	struct export_cfg cfg;
	bool rescan;                 /* the spool directory may have changed */
	struct export_job todo[QUEUE];
	unsigned int todo_head, nr_todo;
	bool busy;                   /* a job is being exported */
	char host[256];

	uint64_t exported, export_failed, pushed, push_failed, rejected, dropped;
	uint64_t spool_files, spool_bytes;
	uint64_t disk_bytes;         /* kept profiles + spool entries not also kept */
	uint64_t next_try_ms, backoff_ms;

	struct log_line log[LOG_QUEUE];
	unsigned int log_head, nr_log;
	uint64_t log_lost;
};

/* Called with the lock held. */
static void elog(struct exporter *e, int prio, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void elog(struct exporter *e, int prio, const char *fmt, ...)
{
	va_list ap;
	struct log_line *l;

	if (e->nr_log == LOG_QUEUE) {
		e->log_lost++;
		return;
	}
	l = &e->log[(e->log_head + e->nr_log++) % LOG_QUEUE];
	l->prio = prio;
	va_start(ap, fmt);
	vsnprintf(l->msg, sizeof(l->msg), fmt, ap);
	va_end(ap);
}

static uint64_t disk_bytes(const struct stat *st)
{
	uint64_t b = (uint64_t)st->st_blocks * 512;

	return b > (uint64_t)st->st_size ? b : (uint64_t)st->st_size;
}

/* path = fmt's expansion; false when longer than PATH_MAX (the caller skips that file). */
static bool path_of(char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool path_of(char *path, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(path, PATH_MAX, fmt, ap);
	va_end(ap);
	return n >= 0 && n < PATH_MAX;
}

/* ---- the spool: SPOOL_DIR/FROM-UNTIL-NAME.pb.gz, FROM and UNTIL zero-padded unix seconds ---- */

static bool spool_parse(const char *name, long long *from, long long *until)
{
	int n = 0;
	size_t l = strlen(name);

	if (sscanf(name, "%12lld-%12lld-%n", from, until, &n) != 2 || n != 26)
		return false;
	return l > 26 + 6 && !strcmp(name + l - 6, ".pb.gz");
}

static int spool_filter(const struct dirent *de)
{
	long long f, u;

	return spool_parse(de->d_name, &f, &u);
}

/* The entries, oldest first (the names sort by FROM). Returns the count or -errno. */
static int spool_list(const char *dir, struct dirent ***ret)
{
	char path[PATH_MAX];
	int n;

	if (!path_of(path, "%s/" SPOOL_DIR, dir))
		return -ENAMETOOLONG;
	n = scandir(path, ret, spool_filter, alphasort);
	if (n < 0 && errno == ENOENT) {
		*ret = NULL;
		return 0;
	}
	return n < 0 ? -errno : n;
}

static void free_list(struct dirent **list, int n)
{
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* Bytes of the kept profiles in dir. */
static uint64_t kept_bytes(const char *dir)
{
	DIR *dd = opendir(dir);
	struct dirent *de;
	uint64_t total = 0;

	while (dd && (de = readdir(dd))) {
		size_t l = strlen(de->d_name);
		struct stat st;

		if (l > 6 && !strcmp(de->d_name + l - 6, ".pb.gz") &&
		    fstatat(dirfd(dd), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			total += disk_bytes(&st);
	}
	if (dd)
		closedir(dd);
	return total;
}

/* Count the spool and the kept profiles, and drop the spool's oldest entries beyond
 * spool_size (all of them when pushing is off). Called without the lock. */
static void recount(struct exporter *e, const struct export_cfg *cfg)
{
	struct dirent **list = NULL;
	int n = spool_list(cfg->dir, &list);
	uint64_t *sizes, total = 0, files = 0, dropped = 0, only = 0, limit;
	bool *linked;
	char path[PATH_MAX];

	if (n < 0)
		return;
	limit = cfg->push ? cfg->spool_size : 0;
	sizes = calloc(n ? n : 1, sizeof(*sizes));
	linked = calloc(n ? n : 1, sizeof(*linked));
	for (int i = 0; sizes && linked && i < n; i++) {
		struct stat st;

		if (path_of(path, "%s/" SPOOL_DIR "/%s", cfg->dir, list[i]->d_name) &&
		    stat(path, &st) == 0) {
			sizes[i] = disk_bytes(&st);
			linked[i] = st.st_nlink > 1; /* also kept beside its file */
		}
		total += sizes[i];
	}
	for (int i = 0; sizes && linked && i < n; i++) {
		if (total > limit &&
		    path_of(path, "%s/" SPOOL_DIR "/%s", cfg->dir, list[i]->d_name) &&
		    unlink(path) == 0) {
			total -= sizes[i];
			dropped++;
			pthread_mutex_lock(&e->lock);
			if (cfg->push)
				elog(e, LOG_WARNING, "dropped %s: the spool is over push_spool_size "
				     "(%llu bytes)", list[i]->d_name, (unsigned long long)limit);
			else
				elog(e, LOG_NOTICE, "dropped %s from the spool: push_url is not set",
				     list[i]->d_name);
			pthread_mutex_unlock(&e->lock);
			continue;
		}
		files++;
		only += linked[i] ? 0 : sizes[i];
	}
	only += kept_bytes(cfg->dir);
	pthread_mutex_lock(&e->lock);
	if (sizes && linked) {
		e->spool_files = files;
		e->spool_bytes = total;
		e->disk_bytes = only;
	}
	e->dropped += dropped;
	pthread_mutex_unlock(&e->lock);
	free(sizes);
	free(linked);
	free_list(list, n);
}

/* ---- the last file exported ---- */

static bool read_seq(const char *dir, uint32_t *ret)
{
	char path[PATH_MAX];
	unsigned int seq;
	FILE *f;
	bool ok;

	if (!path_of(path, "%s/" SEQ_FILE, dir) || !(f = fopen(path, "re")))
		return false;
	ok = fscanf(f, "%u", &seq) == 1;
	fclose(f);
	if (ok)
		*ret = seq;
	return ok;
}

static void write_seq(const char *dir, uint32_t seq)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;

	if (!path_of(path, "%s/" SEQ_FILE, dir) || !path_of(tmp, "%s.tmp", path) ||
	    !(f = fopen(tmp, "we")))
		return;
	if (fprintf(f, "%u\n", seq) < 0 || fclose(f) != 0 || rename(tmp, path) < 0)
		unlink(tmp);
}

/* After a file is exported (or given up): remember its number if it is the newest. */
static void note_seq(const char *dir, const char *base)
{
	unsigned int seq;
	uint32_t last;

	if (sscanf(base, "precord-%8u-", &seq) == 1 && (!read_seq(dir, &last) || seq > last))
		write_seq(dir, seq);
}

/* ---- conversion ---- */

/* The child (precordd ISOLATE_ARG export DATA TMP HOST FROM UNTIL): DATA's pprof profile to
 * TMP, labelled with HOST, for FROM to UNTIL (unix seconds). Returns an exit status, 0 or an
 * errno, with the reason written to ISOLATE_WHY_FD when there is more to say than the errno. */
int export__child_main(int argc, char **argv)
{
	struct report_session_opts o = { .jobs = 1 };
	struct report_session *s;
	struct pprof_writer *w = NULL;
	long long from, until;
	int err;

	if (argc != 5 || sscanf(argv[3], "%lld", &from) != 1 || sscanf(argv[4], "%lld", &until) != 1)
		return EINVAL;
	umask(077); /* as the recordings: profiles show what runs on the machine */
	s = report_session__new(&o);
	err = s ? report_session__open(s, argv[0]) : -ENOMEM;
	if (err && s && report_session__error(s)[0] &&
	    write(ISOLATE_WHY_FD, report_session__error(s), strlen(report_session__error(s))) < 0)
		err = -EIO;
	if (!err && !(w = pprof_writer__new(s)))
		err = -ENOMEM;
	if (!err)
		err = pprof_writer__add_label(w, "host", argv[2]);
	if (!err) {
		pprof_writer__set_time(w, (int64_t)from * 1000000000LL,
				       (int64_t)(until - from) * 1000000000LL);
		err = report_session__run(s);
	}
	if (!err)
		err = pprof_writer__write(w, argv[1]);
	pprof_writer__free(w);
	report_session__free(s);
	return err < 0 ? (-err) & 0xff : err ? EIO : 0;
}

/* Run the conversion in a child process. Returns 0 or -errno, with the reason in why. */
static int convert_isolated(struct exporter *e, const struct export_job *j, const char *tmp,
			    const struct export_cfg *cfg, char *why, size_t why_size)
{
	char from[24], until[24];
	const char *args[] = { "export", j->data, tmp, e->host, from, until, NULL };
	struct isolate_job ij = {
		.what = "converting", .args = args, .cpu_s = EXPORT_CPU_LIMIT,
		.umask = 077, .stall_ms = cfg->stall_ms, .stop = (const bool *)&e->stop,
	};
	int err;

	snprintf(from, sizeof(from), "%lld", j->from);
	snprintf(until, sizeof(until), "%lld", j->until);
	err = isolate__run(&ij, why, why_size);
	if (err)
		unlink(tmp);
	return err;
}

/* Convert, then move the profile where it is kept and/or spooled. */
static void export_one(struct exporter *e, const struct export_job *j, const struct export_cfg *cfg)
{
	char tmp[PATH_MAX], kept[PATH_MAX], spooled[PATH_MAX], dir[PATH_MAX], why[256] = "";
	int err = 0;

	if (!path_of(tmp, "%s/%s.pb.gz.tmp", cfg->dir, j->base) ||
	    !path_of(kept, "%s/%s.pb.gz", cfg->dir, j->base) ||
	    !path_of(dir, "%s/" SPOOL_DIR, cfg->dir) ||
	    !path_of(spooled, "%s/%012lld-%012lld-%s.pb.gz", dir, j->from, j->until, j->base)) {
		err = -ENAMETOOLONG;
		snprintf(why, sizeof(why), "the profile's path is too long");
	}
	if (!err)
		err = convert_isolated(e, j, tmp, cfg, why, sizeof(why));
	if (!err && j->keep && rename(tmp, kept) < 0) {
		err = -errno;
		snprintf(why, sizeof(why), "cannot rename it into place: %s", strerror(errno));
	}
	if (!err && j->spool) {
		if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
			err = -errno;
			snprintf(why, sizeof(why), "cannot create the spool " SPOOL_DIR ": %s",
				 strerror(errno));
		} else if ((j->keep ? link(kept, spooled) : rename(tmp, spooled)) < 0) {
			err = -errno;
			snprintf(why, sizeof(why), "cannot put the profile into the spool: %s",
				 strerror(errno));
		}
	}
	if (err)
		unlink(tmp);
	recount(e, cfg); /* before the counters: an exported profile is counted on disk */
	note_seq(cfg->dir, j->base);
	pthread_mutex_lock(&e->lock);
	e->busy = false;
	if (err) {
		e->export_failed++;
		elog(e, LOG_WARNING, "cannot export %s as a pprof profile: %s", j->data, why);
	} else {
		e->exported++;
		elog(e, LOG_DEBUG, "exported %s%s%s", j->base, j->keep ? " (kept)" : "",
		     j->spool ? " (spooled)" : "");
	}
	pthread_mutex_unlock(&e->lock);
}

/* ---- pushing ---- */

/* One entry pushed; returns true to go on with the next. */
static bool push_entry(struct exporter *e, const struct export_cfg *cfg, const char *name)
{
	struct push_target t = {
		.url = cfg->url, .name = cfg->name, .labels = cfg->labels[0] ? cfg->labels : NULL,
		.host = e->host, .sample_rate = cfg->rate, .timeout_ms = cfg->timeout_ms,
		.stop = &e->stop,
	};
	char path[PATH_MAX];
	const char *why = push__error(&t);
	long long from, until;
	enum push_result r;
	struct stat st;
	bool sized, gone;

	if (!path_of(path, "%s/" SPOOL_DIR "/%s", cfg->dir, name))
		return true;
	spool_parse(name, &from, &until);
	sized = stat(path, &st) == 0;
	r = push__profile(&t, path, (time_t)from, (time_t)until);
	gone = r != PUSH_RETRY && unlink(path) == 0;
	pthread_mutex_lock(&e->lock);
	/* the spool's counts change with the push's, in one step of the status: the recount
	 * after the round comes later (a client that saw pushed=2 must not see spooled=2) */
	if (gone && sized) {
		uint64_t b = disk_bytes(&st);

		e->spool_files -= e->spool_files ? 1 : 0;
		e->spool_bytes -= b < e->spool_bytes ? b : e->spool_bytes;
		if (st.st_nlink <= 1)	/* not also kept beside its file */
			e->disk_bytes -= b < e->disk_bytes ? b : e->disk_bytes;
	}
	switch (r) {
	case PUSH_OK:
		e->pushed++;
		if (e->backoff_ms)
			elog(e, LOG_NOTICE, "pushing to %s again", cfg->url);
		e->backoff_ms = 0;
		e->next_try_ms = 0;
		elog(e, LOG_DEBUG, "pushed %s", name);
		break;
	case PUSH_REJECTED:
	case PUSH_BAD_FILE:
		e->rejected++;
		elog(e, LOG_ERR, "dropped %s: %s", name, why);
		break;
	case PUSH_RETRY:
		e->push_failed++;
		if (!e->stop)
			elog(e, e->backoff_ms ? LOG_DEBUG : LOG_WARNING, "cannot push %s to %s: %s; it "
			     "stays in the spool", name, cfg->url, why);
		e->backoff_ms = e->backoff_ms ? e->backoff_ms * 2 : BACKOFF_MIN_MS;
		if (e->backoff_ms > BACKOFF_MAX_MS)
			e->backoff_ms = BACKOFF_MAX_MS;
		e->next_try_ms = clock__ms() + e->backoff_ms;
		break;
	}
	pthread_mutex_unlock(&e->lock);
	return r != PUSH_RETRY && !e->stop;
}

static void push_round(struct exporter *e, const struct export_cfg *cfg)
{
	struct dirent **list = NULL;
	int n = spool_list(cfg->dir, &list);

	for (int i = 0; i < n && push_entry(e, cfg, list[i]->d_name); i++)
		;
	free_list(list, n);
	recount(e, cfg);
}

/* ---- the thread ---- */

static void wait_work(struct exporter *e)
{
	uint64_t now = clock__ms();
	struct timespec ts;

	if (!(e->cfg.push && e->spool_files)) {
		pthread_cond_wait(&e->cond, &e->lock);
		return;
	}
	if (e->next_try_ms <= now)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)((e->next_try_ms - now) / 1000);
	ts.tv_nsec += (long)((e->next_try_ms - now) % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&e->cond, &e->lock, &ts);
}

static void *run(void *arg)
{
	struct exporter *e = arg;
	struct export_cfg *cfg = malloc(sizeof(*cfg));
	struct export_job j;

	/* the service's recording comes first: this thread runs only when nothing else wants the CPU */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_mutex_lock(&e->lock);
	while (cfg && !e->stop) {
		*cfg = e->cfg;
		if (e->rescan) {
			e->rescan = false;
			pthread_mutex_unlock(&e->lock);
			recount(e, cfg);
		} else if (e->nr_todo) {
			j = e->todo[e->todo_head];
			e->todo_head = (e->todo_head + 1) % QUEUE;
			e->nr_todo--;
			e->busy = true;
			pthread_mutex_unlock(&e->lock);
			export_one(e, &j, cfg);
		} else if (cfg->push && e->spool_files && clock__ms() >= e->next_try_ms) {
			pthread_mutex_unlock(&e->lock);
			push_round(e, cfg);
		} else {
			wait_work(e);
			continue;
		}
		pthread_mutex_lock(&e->lock);
	}
	pthread_mutex_unlock(&e->lock);
	free(cfg);
	return NULL;
}

static void copy_cfg(struct export_cfg *ec, const struct daemon_config *c)
{
	snprintf(ec->dir, sizeof(ec->dir), "%s", c->output_dir);
	ec->push = c->push_url != NULL;
	snprintf(ec->url, sizeof(ec->url), "%s", c->push_url ? c->push_url : "");
	snprintf(ec->name, sizeof(ec->name), "%s", c->push_name ? c->push_name : "precordd");
	snprintf(ec->labels, sizeof(ec->labels), "%s", c->push_labels ? c->push_labels : "");
	ec->timeout_ms = c->push_timeout_ms;
	ec->spool_size = c->push_spool_size;
	ec->rate = c->frequency;
	ec->stall_ms = (unsigned int)c->convert_stall_ms;
}

/* ---- the service loop's side ---- */

/* Profiles a crash left half-written, and kept ones whose file is gone. */
static void clean_dir(const char *dir)
{
	DIR *dd = opendir(dir);
	struct dirent *de;

	while (dd && (de = readdir(dd))) {
		size_t l = strlen(de->d_name);
		char data[NAME_MAX + 8];

		if (strncmp(de->d_name, "precord-", 8))
			continue;
		if (l > 10 && !strcmp(de->d_name + l - 10, ".pb.gz.tmp")) {
			unlinkat(dirfd(dd), de->d_name, 0);
		} else if (l > 6 && !strcmp(de->d_name + l - 6, ".pb.gz")) {
			snprintf(data, sizeof(data), "%.*s.data", (int)(l - 6), de->d_name);
			if (faccessat(dirfd(dd), data, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
				unlinkat(dirfd(dd), de->d_name, 0);
		}
	}
	if (dd)
		closedir(dd);
}

/* Whether this process may open IP sockets at all (a unit's RestrictAddressFamilies may forbid
 * it): pushing without would only fill the spool. Sets the daemon's error when not. */
static bool ip_sockets(struct daemon *d)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), e = errno;

	if (fd < 0)
		fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	daemon__set_error(d, "push_url is set, but precordd may not open IP sockets: %s (under "
			  "systemd, allow them with 'systemctl edit precordd': [Service] "
			  "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6)", strerror(e));
	return false;
}

/* At start: the files a previous run finished after its last export (the one closed at its
 * stop, those still queued) are exported now. Without SEQ_FILE (export was off) nothing of
 * the past is. */
static void catch_up(struct daemon *d)
{
	uint32_t last, max = 0;
	unsigned int n = 0;

	if (!d->cfg.pprof && !d->cfg.push_url) {
		char path[PATH_MAX];

		if (path_of(path, "%s/" SEQ_FILE, d->cfg.output_dir))
			unlink(path);
		return;
	}
	for (size_t i = 0; i < d->nr_files; i++)
		max = d->files[i].seq > max ? d->files[i].seq : max;
	if (!read_seq(d->cfg.output_dir, &last)) {
		write_seq(d->cfg.output_dir, max);
		return;
	}
	for (size_t i = 0; i < d->nr_files; i++) {
		if (d->files[i].seq > last) {
			export__file_ready(d, &d->files[i]);
			n++;
		}
	}
	if (n)
		daemon__log(d, LOG_INFO, "exporting %u file%s the previous run finished after its last "
			    "export", n, n == 1 ? "" : "s");
}

int export__start(struct daemon *d)
{
	struct exporter *e;
	sigset_t all, old;
	int err;

	if (push__init() < 0) {
		daemon__set_error(d, "cannot set up libcurl: out of memory");
		return -ENOMEM;
	}
	if (d->cfg.push_url && !ip_sockets(d))
		return -EPERM;
	e = calloc(1, sizeof(*e));
	if (!e) {
		daemon__set_error(d, "cannot start the export thread: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	if (gethostname(e->host, sizeof(e->host) - 1) < 0 || !e->host[0])
		snprintf(e->host, sizeof(e->host), "unknown");
	copy_cfg(&e->cfg, &d->cfg);
	e->rescan = true;
	clean_dir(d->cfg.output_dir);
	pthread_mutex_init(&e->lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&e->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	/* no signal for this thread: the loop takes them from a signalfd */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&e->thread, NULL, run, e);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_mutex_destroy(&e->lock);
		pthread_cond_destroy(&e->cond);
		free(e);
		daemon__set_error(d, "cannot start the export thread: %s", strerror(err));
		return -err;
	}
	d->exporter = e;
	catch_up(d);
	return 0;
}

void export__reconfigure(struct daemon *d)
{
	struct exporter *e = d->exporter;

	if (!e)
		return;
	clean_dir(d->cfg.output_dir);
	if (!d->cfg.pprof && !d->cfg.push_url) {
		char path[PATH_MAX];

		/* off: the next start with export on does not export what was recorded meanwhile */
		if (path_of(path, "%s/" SEQ_FILE, d->cfg.output_dir))
			unlink(path);
	}
	if (d->cfg.push_url && !ip_sockets(d))
		daemon__log(d, LOG_ERR, "%s; profiles wait in the spool", d->err);
	pthread_mutex_lock(&e->lock);
	copy_cfg(&e->cfg, &d->cfg);
	e->rescan = true;
	e->backoff_ms = 0;
	e->next_try_ms = 0;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

/* When the file was started: the UTC time in its name, precord-SEQ-YYYYmmddTHHMMSSZ.data. */
static bool name_time(const char *name, long long *ret)
{
	struct tm tm = { 0 };
	const char *p = strlen(name) > 17 ? name + 17 : NULL;
	const char *end = p ? strptime(p, "%Y%m%dT%H%M%SZ", &tm) : NULL;

	if (!end || strncmp(end, ".data", 5))
		return false;
	*ret = (long long)timegm(&tm);
	return true;
}

void export__file_ready(struct daemon *d, const struct dfile *f)
{
	struct exporter *e = d->exporter;
	struct export_job *j;
	size_t l = strlen(f->name);

	if (!e || (!d->cfg.pprof && !d->cfg.push_url))
		return;
	if (l <= 5 || l - 5 >= SPOOL_NAME_MAX || strcmp(f->name + l - 5, ".data")) {
		daemon__log(d, LOG_WARNING, "%s is not exported: not a finished file's name", f->name);
		return;
	}
	pthread_mutex_lock(&e->lock);
	if (e->nr_todo == QUEUE) {
		pthread_mutex_unlock(&e->lock);
		daemon__log(d, LOG_WARNING, "%s is not exported: the export queue is full", f->name);
		return;
	}
	j = &e->todo[(e->todo_head + e->nr_todo) % QUEUE];
	if (!path_of(j->data, "%s/%s", d->cfg.output_dir, f->name)) {
		pthread_mutex_unlock(&e->lock);
		return;
	}
	snprintf(j->base, sizeof(j->base), "%.*s", (int)(l - 5), f->name);
	if (!name_time(f->name, &j->from))
		j->from = (long long)f->mtime;
	j->until = (long long)f->mtime > j->from ? (long long)f->mtime : j->from;
	j->keep = d->cfg.pprof;
	j->spool = d->cfg.push_url != NULL;
	e->nr_todo++;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

uint64_t export__disk_bytes(struct daemon *d)
{
	struct exporter *e = d->exporter;
	uint64_t b;

	if (!e)
		return 0;
	pthread_mutex_lock(&e->lock);
	b = e->disk_bytes;
	pthread_mutex_unlock(&e->lock);
	return b;
}

uint64_t export__forget(struct daemon *d, const char *name)
{
	char path[PATH_MAX];
	size_t l = strlen(name);
	struct stat st;

	if (!d->exporter || l <= 5 || strcmp(name + l - 5, ".data"))
		return 0;
	if (!path_of(path, "%s/%.*s.pb.gz", d->cfg.output_dir, (int)(l - 5), name))
		return 0;
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || unlink(path) < 0)
		return 0;
	if (st.st_nlink > 1)
		return 0; /* still in the spool, where it now counts */
	pthread_mutex_lock(&d->exporter->lock);
	d->exporter->disk_bytes -= d->exporter->disk_bytes < disk_bytes(&st) ? d->exporter->disk_bytes :
				   disk_bytes(&st);
	pthread_mutex_unlock(&d->exporter->lock);
	return disk_bytes(&st);
}

void export__tick(struct daemon *d)
{
	struct exporter *e = d->exporter;
	struct log_line l;

	for (;;) {
		if (!e)
			return;
		pthread_mutex_lock(&e->lock);
		if (!e->nr_log) {
			if (e->log_lost)
				daemon__log(d, LOG_WARNING, "%llu export messages were not logged",
					    (unsigned long long)e->log_lost);
			e->log_lost = 0;
			pthread_mutex_unlock(&e->lock);
			return;
		}
		l = e->log[e->log_head];
		e->log_head = (e->log_head + 1) % LOG_QUEUE;
		e->nr_log--;
		pthread_mutex_unlock(&e->lock);
		daemon__log(d, l.prio, "%s", l.msg);
	}
}

void export__status(struct daemon *d, char *buf, size_t size)
{
	struct exporter *e = d->exporter;

	if (!e) {
		snprintf(buf, size, "%s", "");
		return;
	}
	pthread_mutex_lock(&e->lock);
	snprintf(buf, size, " exported=%llu export_failed=%llu exporting=%u export_bytes=%llu "
		 "pushed=%llu push_failed=%llu push_rejected=%llu spooled=%llu spool_bytes=%llu "
		 "spool_dropped=%llu", (unsigned long long)e->exported,
		 (unsigned long long)e->export_failed, e->nr_todo + (e->busy ? 1 : 0),
		 (unsigned long long)e->disk_bytes, (unsigned long long)e->pushed,
		 (unsigned long long)e->push_failed, (unsigned long long)e->rejected,
		 (unsigned long long)e->spool_files, (unsigned long long)e->spool_bytes,
		 (unsigned long long)e->dropped);
	pthread_mutex_unlock(&e->lock);
}

void export__stop(struct daemon *d)
{
	struct exporter *e = d->exporter;

	if (!e)
		return;
	export__tick(d);
	pthread_mutex_lock(&e->lock);
	e->stop = true; /* isolate__run kills the conversion in progress */
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	export__tick(d);
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->cond);
	free(e);
	d->exporter = NULL;
}
