/* precordd's loop. Continuous recording writes precord-SEQ-TIME.data.partial and, when the file
 * is finalized (rotation, reload, stop), renames it to precord-SEQ-TIME.data; SEQ orders the
 * files, oldest first, across restarts. The disk budget is an invariant, not a goal:
 *   - a file is opened only after older files were deleted so that the closed files plus
 *     rotate_size fit in max_total_size;
 *   - a file is rotated before it can outgrow rotate_size: at each 100 ms tick, when its size
 *     plus a headroom (twice the largest growth seen per tick, plus the size its feature
 *     sections took last time) reaches rotate_size;
 *   - before a rotation, older files are deleted so that the open file, its features and the
 *     next file's synthesized start fit too; and each tick deletes more if a burst got close.
 * Leftovers of an earlier run (closed files, and a .partial a crash left) count from start-up.
 * A kill -9 damages at most the .partial file: every other one was finalized and fsync'ed
 * before it got its final name (a file is born .starting, see starting_name()). */
#include "daemon/daemon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/cleanup.h"
#include "lib/human.h"
#include "lib/creds.h"
#include "daemon/config.h"
#include "daemon/ctl.h"
#include "record/record.h"
#include "daemon/sdnotify.h"

#define TICK_MS 100
#define STATUS_EVERY_MS 5000
#define MAX_JOBS 64
#define CTL_DIR ".control"
/* a longer rotation counts as this long in the headroom (see headroom()) */
#define MAX_ROT_MS 2000

struct dfile {
	uint32_t seq;
	char *name;      /* in the output directory */
	uint64_t bytes;  /* counted against the budget */
	time_t mtime;
};

/* A `precord ctl record` in progress. */
struct job {
	struct record *rec;
	struct ctl_client *client;
	int fd;            /* the finished file, read-only, already unlinked */
	int pidfd;         /* the pid target, to notice a pid reused after the check; -1 */
	struct creds *creds; /* the client's, which the recording runs with; NULL for root */
	uint64_t deadline_ms;
	pid_t *pids;
	size_t nr_pids;
	char path[PATH_MAX];
};

struct daemon {
	struct daemon_opts o;
	char *config_path;
	struct daemon_config cfg;
	int sig_fd;
	struct ctl_server *ctl;

	/* continuous recording */
	struct record *rec;
	pid_t *rec_pids;            /* pids of the session (config pids + cgroup members) */
	char cur_path[PATH_MAX];    /* the open .partial */
	uint32_t cur_seq;
	uint64_t cur_bytes;         /* size at the last tick */
	uint64_t file_started_ms;
	uint32_t next_seq;
	struct dfile *files;        /* closed, oldest first */
	size_t nr_files, cap_files;
	uint64_t closed_bytes;
	uint64_t max_growth;        /* largest growth of the open file in one tick (decays) */
	uint64_t rot_ms;            /* how long the last rotation (or the start) took */
	uint64_t rot_growth;        /* largest growth of a file during its rotation (the new
				     * file's synthesis runs while the old one takes ring data,
				     * then its features are written; decays) */
	uint64_t start_bytes;       /* size of the last file right after it was opened */
	uint64_t rotations, deleted, rotate_fail_until_ms;
	uint64_t past_samples, past_lost; /* of sessions that ended */

	/* status */
	uint64_t rate_bytes, rate_t_ms;
	double rate;                /* bytes per second written, last status interval */
	uint64_t next_status_ms;
	char state_msg[256];        /* why not recording, or the last error */

	uint64_t watchdog_usec, next_watchdog_ms;
	struct job jobs[MAX_JOBS];
	size_t nr_jobs;
	uint64_t ctl_count;
	char err[512];
};

static void logf_(struct daemon *d, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void logf_(struct daemon *d, int prio, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!d->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	d->o.log(d->o.log_ctx, prio, buf);
}

static void seterr(struct daemon *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void seterr(struct daemon *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
}

const char *daemon__error(const struct daemon *d)
{
	return d->err;
}

/* ---- files and the budget ---- */

/* What a file costs: its length, or its blocks when more (a sparse file never is). */
static uint64_t file_bytes(const struct stat *st)
{
	uint64_t b = (uint64_t)st->st_blocks * 512;

	return b > (uint64_t)st->st_size ? b : (uint64_t)st->st_size;
}

static bool parse_name(const char *name, uint32_t *ret_seq)
{
	unsigned int seq;
	int n = 0;
	size_t l = strlen(name);

	if (sscanf(name, "precord-%8u-%n", &seq, &n) != 1 || n != 17)
		return false;
	if (!(l > 5 && !strcmp(name + l - 5, ".data")) &&
	    !(l > 13 && !strcmp(name + l - 13, ".data.partial")))
		return false;
	*ret_seq = seq;
	return true;
}

static int cmp_files(const void *a, const void *b)
{
	const struct dfile *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void files_clear(struct daemon *d)
{
	for (size_t i = 0; i < d->nr_files; i++)
		free(d->files[i].name);
	d->nr_files = 0;
	d->closed_bytes = 0;
}

static int files_add(struct daemon *d, uint32_t seq, const char *name, const struct stat *st)
{
	struct dfile *f;

	if (d->nr_files == d->cap_files) {
		size_t nc = d->cap_files ? d->cap_files * 2 : 32;
		struct dfile *nf = realloc(d->files, nc * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		d->files = nf;
		d->cap_files = nc;
	}
	f = &d->files[d->nr_files];
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	f->seq = seq;
	f->bytes = file_bytes(st);
	f->mtime = st->st_mtime;
	d->nr_files++;
	d->closed_bytes += f->bytes;
	if (seq >= d->next_seq)
		d->next_seq = seq + 1;
	return 0;
}

/* Everything an earlier run left, counted against the budget from the start. */
static int scan_dir(struct daemon *d)
{
	DIR *dir;
	struct dirent *de;
	int err = 0;

	files_clear(d);
	d->next_seq = 1;
	dir = opendir(d->cfg.output_dir);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		struct stat st;
		uint32_t seq;

		if (!strncmp(de->d_name, "precord-", 8) && strlen(de->d_name) > 14 &&
		    !strcmp(de->d_name + strlen(de->d_name) - 14, ".data.starting")) {
			/* a file a crash caught before its first sample: nothing to keep */
			unlinkat(dirfd(dir), de->d_name, 0);
			continue;
		}
		if (!parse_name(de->d_name, &seq))
			continue;
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		err = files_add(d, seq, de->d_name, &st);
		if (err)
			break;
	}
	closedir(dir);
	if (d->nr_files)
		qsort(d->files, d->nr_files, sizeof(*d->files), cmp_files);
	return err;
}

static void delete_oldest(struct daemon *d, const char *why)
{
	struct dfile *f = &d->files[0];
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", d->cfg.output_dir, f->name);
	if (unlink(path) < 0 && errno != ENOENT)
		logf_(d, LOG_WARNING, "cannot delete %s: %m, ignoring", path);
	else
		logf_(d, LOG_DEBUG, "deleted %s (%s)", f->name, why);
	d->closed_bytes -= f->bytes;
	free(f->name);
	memmove(d->files, d->files + 1, (d->nr_files - 1) * sizeof(*d->files));
	d->nr_files--;
	d->deleted++;
}

/* Delete oldest files until the closed ones plus reserve fit in the budget, and those older
 * than max_age. */
static void enforce(struct daemon *d, uint64_t reserve)
{
	uint64_t budget = d->cfg.max_total_size;

	while (d->nr_files && d->closed_bytes + reserve > budget)
		delete_oldest(d, "over the disk budget");
	if (d->cfg.max_age_ms) {
		time_t limit = time(NULL) - (time_t)(d->cfg.max_age_ms / 1000);

		while (d->nr_files && d->files[0].mtime < limit)
			delete_oldest(d, "older than max_age");
	}
}

static void make_name(struct daemon *d, uint32_t seq, char *buf, size_t size, bool partial)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(buf, size, "%s/precord-%08u-%s.data%s", d->cfg.output_dir, seq, ts,
		 partial ? ".partial" : "");
}

static uint64_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? file_bytes(&st) : 0;
}

static uint64_t size_of_fd(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* A new file is created as .data.starting and becomes .data.partial once its synthesized
 * start is written and its header says so: a kill meanwhile leaves a .starting file, which
 * holds no samples and is deleted at the next start, so only the one .partial file can be
 * damaged. */
static void starting_name(const char *partial, char *buf, size_t size)
{
	size_t l = strlen(partial) - strlen(".partial");

	snprintf(buf, size, "%.*s.starting", (int)l, partial);
}

/* The finalized file at path (a .partial) gets its final name and joins the closed list. */
static void close_file(struct daemon *d, const char *path, uint32_t seq)
{
	char final[PATH_MAX];
	size_t l = strlen(path);
	struct stat st;
	const char *base;

	snprintf(final, sizeof(final), "%.*s", (int)(l - strlen(".partial")), path);
	if (rename(path, final) < 0) {
		logf_(d, LOG_WARNING, "cannot rename %s: %m, keeping the name", path);
		snprintf(final, sizeof(final), "%s", path);
	}
	if (stat(final, &st) < 0)
		return;
	base = strrchr(final, '/') + 1;
	if (files_add(d, seq, base, &st) < 0)
		logf_(d, LOG_WARNING, "out of memory: %s is not counted, ignoring", base);
}

/* ---- the continuous session ---- */

static void on_notice(void *ctx, const char *msg)
{
	struct daemon *d = ctx;

	logf_(d, LOG_NOTICE, "%s", msg);
}

static int resolve_pids(struct daemon *d, const struct daemon_config *c, pid_t **ret, size_t *nr)
{
	_cleanup_free_ pid_t *all = NULL;
	size_t n = 0;

	if (c->nr_pids) {
		all = malloc(c->nr_pids * sizeof(pid_t));
		if (!all)
			return -ENOMEM;
		memcpy(all, c->pids, c->nr_pids * sizeof(pid_t));
		n = c->nr_pids;
	}
	for (size_t i = 0; i < c->nr_cgroups; i++) {
		_cleanup_free_ pid_t *cp = NULL;
		size_t cn = 0;
		pid_t *na;
		int err = ctl__cgroup_pids(NULL, c->cgroups[i], &cp, &cn);

		if (err) {
			seterr(d, "cannot list the processes of cgroup %s: %s", c->cgroups[i],
			       strerror(-err));
			return err;
		}
		na = realloc(all, (n + cn + 1) * sizeof(pid_t));
		if (!na)
			return -ENOMEM;
		all = na;
		memcpy(all + n, cp, cn * sizeof(pid_t));
		n += cn;
	}
	if (!n) {
		seterr(d, "the cgroups to record hold no process");
		return -ESRCH;
	}
	*ret = TAKE_PTR(all);
	*nr = n;
	return 0;
}

/* How the continuous session of configuration c records (no output, no targets yet). */
static void session_opts(const struct daemon_config *c, void *notice_ctx, struct record_opts *ro)
{
	long page = sysconf(_SC_PAGESIZE);

	*ro = (struct record_opts){
		.events = c->event,
		.freq = c->frequency,
		.callgraph = c->callgraph,
		.stack_size = c->stack_size,
		.mmap_pages = c->buffer_size / (uint64_t)page,
		.comp_level = c->compression,
		.affinity = TOPO_SCOPE_CPU,
		.keep_old = false,
		.notice = notice_ctx ? on_notice : NULL,
		.notice_ctx = notice_ctx,
	};
	if (c->all) {
		ro->system_wide = true;
		ro->cpu_list = c->cpus;
	}
}

int daemon__check_recording(const struct daemon_config *c, char **ret_msg)
{
	struct record_opts ro;
	struct record *rec;
	pid_t self = getpid();
	int err;

	*ret_msg = NULL;
	session_opts(c, NULL, &ro);
	if (!c->all) {
		/* the targets are looked up when recording starts; the rest is checked here */
		ro.pids = &self;
		ro.nr_pids = 1;
	}
	ro.output = "/nonexistent/precordd-check.data"; /* never created: nothing starts */
	rec = record__new();
	if (!rec) {
		*ret_msg = strdup(strerror(ENOMEM));
		return -ENOMEM;
	}
	err = record__setup(rec, &ro);
	if (err)
		*ret_msg = strdup(record__error(rec));
	record__free(rec);
	return err;
}

static int start_session(struct daemon *d)
{
	size_t nr_pids = 0;
	struct record_opts ro;
	char starting[PATH_MAX];
	uint64_t t0;
	int err;

	session_opts(&d->cfg, d, &ro);
	free(d->rec_pids);
	d->rec_pids = NULL;
	if (!d->cfg.all) {
		err = resolve_pids(d, &d->cfg, &d->rec_pids, &nr_pids);
		if (err)
			return err;
		ro.pids = d->rec_pids;
		ro.nr_pids = nr_pids;
	}
	enforce(d, d->cfg.rotate_size);
	d->cur_seq = d->next_seq++;
	make_name(d, d->cur_seq, d->cur_path, sizeof(d->cur_path), true);
	starting_name(d->cur_path, starting, sizeof(starting));
	ro.output = starting;
	d->rec = record__new();
	if (!d->rec) {
		seterr(d, "cannot start a recording: %s", strerror(errno));
		return -ENOMEM;
	}
	err = record__setup(d->rec, &ro);
	if (err) {
		seterr(d, "%s", record__error(d->rec));
		record__free(d->rec);
		d->rec = NULL;
		return err;
	}
	t0 = clock__ms();
	err = record__start(d->rec);
	d->rot_ms = clock__ms() - t0;
	if (err) {
		seterr(d, "%s", record__error(d->rec));
		record__free(d->rec);
		d->rec = NULL;
		unlink(starting);
		return err;
	}
	record__sync(d->rec);
	if (rename(starting, d->cur_path) < 0)
		snprintf(d->cur_path, sizeof(d->cur_path), "%s", starting);
	d->file_started_ms = clock__ms();
	d->cur_bytes = d->start_bytes = size_of(d->cur_path);
	d->max_growth = 0;
	d->rate_bytes = 0;
	d->rate_t_ms = d->file_started_ms;
	d->state_msg[0] = 0;
	logf_(d, LOG_INFO, "recording %s at %llu Hz into %s", d->cfg.event,
	      (unsigned long long)d->cfg.frequency, d->cfg.output_dir);
	return 0;
}

static void stop_session(struct daemon *d)
{
	struct record_stats st;
	int err;

	if (!d->rec)
		return;
	err = record__stop(d->rec);
	record__stats(d->rec, &st);
	d->past_samples += st.samples;
	d->past_lost += st.lost_events + st.lost_samples;
	if (err)
		logf_(d, LOG_ERR, "%s", record__error(d->rec));
	record__free(d->rec);
	d->rec = NULL;
	close_file(d, d->cur_path, d->cur_seq);
	d->cur_path[0] = 0;
	d->cur_bytes = 0;
	enforce(d, 0);
}

/* What the open file may still grow by before the next tick or rotation. Capped at
 * rotate_size: one slow rotation (a stalled disk, a hostile mapped file) must not make the
 * budget delete history it will never need. */
static uint64_t headroom(const struct daemon *d)
{
	uint64_t rot_ms = d->rot_ms < MAX_ROT_MS ? d->rot_ms : MAX_ROT_MS;
	/* what a rotation adds: seen last time, or the rate times how long the last one took */
	uint64_t rot = d->max_growth * (rot_ms + TICK_MS) / TICK_MS, h;

	if (rot < d->rot_growth)
		rot = d->rot_growth;
	/* twice that: a loaded machine makes the next rotation slower */
	h = 2 * d->max_growth + 2 * rot + 8192;
	return h < d->cfg.rotate_size ? h : d->cfg.rotate_size;
}

/* Returns the name of the file that was closed, or NULL. */
static const char *rotate(struct daemon *d, char *closed, size_t size)
{
	char next[PATH_MAX], old[PATH_MAX], starting[PATH_MAX];
	uint32_t seq = d->next_seq, old_seq = d->cur_seq;
	uint64_t before, t0;
	int err;

	/* room for the open file, its features and the next file's start */
	enforce(d, d->cur_bytes + headroom(d) + 2 * d->start_bytes);
	make_name(d, seq, next, sizeof(next), true);
	starting_name(next, starting, sizeof(starting));
	snprintf(old, sizeof(old), "%s", d->cur_path);
	before = size_of(old);
	t0 = clock__ms();
	err = record__rotate(d->rec, starting);
	d->rot_ms = clock__ms() - t0;
	if (err && access(starting, F_OK) != 0) {
		/* the new file could not be started: recording goes on in the old one */
		logf_(d, LOG_ERR, "cannot rotate: %s; trying again in 5 s", record__error(d->rec));
		snprintf(d->state_msg, sizeof(d->state_msg), "rotation failed: %s",
			 record__error(d->rec));
		d->rotate_fail_until_ms = clock__ms() + 5000;
		return NULL;
	}
	if (err)
		logf_(d, LOG_ERR, "%s", record__error(d->rec));
	d->next_seq = seq + 1;
	d->cur_seq = seq;
	if (rename(starting, next) < 0)
		snprintf(next, sizeof(next), "%s", starting);
	snprintf(d->cur_path, sizeof(d->cur_path), "%s", next);
	{
		uint64_t after = size_of(old), g = after > before ? after - before : 0;

		d->rot_growth = g > d->rot_growth ? g : d->rot_growth - d->rot_growth / 8;
		logf_(d, LOG_DEBUG, "rotated in %llu ms at %llu bytes (headroom %llu), closed at "
		      "%llu", (unsigned long long)d->rot_ms, (unsigned long long)before,
		      (unsigned long long)headroom(d), (unsigned long long)after);
	}
	close_file(d, old, old_seq);
	d->rotations++;
	d->file_started_ms = clock__ms();
	d->cur_bytes = d->start_bytes = size_of(next);
	d->state_msg[0] = 0;
	enforce(d, d->cfg.rotate_size);
	if (closed) {
		const char *b = strrchr(old, '/') + 1;
		size_t l = strlen(b);

		if (l > 8 && !strcmp(b + l - 8, ".partial"))
			l -= 8;
		snprintf(closed, size, "%.*s", (int)l, b);
	}
	return closed;
}

static void tick_session(struct daemon *d)
{
	uint64_t now = clock__ms(), size, grow;
	int r;

	if (!d->rec)
		return;
	r = record__poll(d->rec, 0);
	/* the header's data size at every tick: a kill -9 loses at most a tick of data */
	record__sync(d->rec);
	if (r == 1) {
		logf_(d, LOG_NOTICE, "every process recorded has ended; continuous recording "
				     "stops until a reload");
		snprintf(d->state_msg, sizeof(d->state_msg), "idle: the recorded processes ended");
		stop_session(d);
		return;
	}
	size = size_of(d->cur_path);
	grow = size > d->cur_bytes ? size - d->cur_bytes : 0;
	/* the largest recent growth per tick, forgotten slowly */
	d->max_growth = grow > d->max_growth ? grow : d->max_growth - d->max_growth / 64;
	d->cur_bytes = size;
	/* By size once the file would outgrow rotate_size by the next tick; but a file must
	 * first carry some data of its own (an eighth of rotate_size) beyond its synthesized
	 * start, or a rotate_size too small for that start would rotate at every tick. */
	if (now >= d->rotate_fail_until_ms &&
	    ((size + headroom(d) >= d->cfg.rotate_size &&
	      (size >= d->cfg.rotate_size ||
	       (size > d->start_bytes && size - d->start_bytes >= d->cfg.rotate_size / 8))) ||
	     (d->cfg.rotate_interval_ms && now - d->file_started_ms >= d->cfg.rotate_interval_ms)))
		rotate(d, NULL, 0);
	/* a burst may have outrun the estimate: keep the whole within the budget */
	enforce(d, d->cur_bytes + headroom(d));
}

/* ---- status ---- */

struct totals {
	uint64_t samples, lost, written;
	double paused;
};

static void totals(struct daemon *d, struct totals *t)
{
	struct record_stats st;

	memset(t, 0, sizeof(*t));
	t->samples = d->past_samples;
	t->lost = d->past_lost;
	if (d->rec) {
		record__stats(d->rec, &st);
		t->samples += st.samples;
		t->lost += st.lost_events + st.lost_samples;
		t->written = st.bytes_written;
	}
	for (size_t i = 0; i < d->nr_jobs; i++) {
		record__stats(d->jobs[i].rec, &st);
		t->paused += st.paused_total;
	}
}

static void status_line(struct daemon *d, char *buf, size_t size)
{
	struct totals t;
	char disk[32], budget[32], rate[32];

	totals(d, &t);
	human__bytes(d->closed_bytes + d->cur_bytes, disk, sizeof(disk));
	human__bytes(d->cfg.max_total_size, budget, sizeof(budget));
	human__bytes((uint64_t)d->rate, rate, sizeof(rate));
	if (d->rec)
		snprintf(buf, size, "recording %s at %llu Hz: %zu files, %s of %s, %s/s, %llu lost, "
			 "%.1f s paused, %zu control sessions", d->cfg.event,
			 (unsigned long long)d->cfg.frequency, d->nr_files + 1, disk, budget, rate,
			 (unsigned long long)t.lost, t.paused, d->nr_jobs);
	else
		snprintf(buf, size, "%s: %zu files, %s of %s, %zu control sessions",
			 d->state_msg[0] ? d->state_msg :
			 d->cfg.continuous ? "idle" : "idle (continuous = no)",
			 d->nr_files, disk, budget, d->nr_jobs);
}

static void update_rate(struct daemon *d)
{
	uint64_t now = clock__ms();
	struct record_stats st;

	if (!d->rec || now <= d->rate_t_ms)
		return;
	record__stats(d->rec, &st);
	/* bytes_written restarts with each file: count the read side, which does not */
	d->rate = (double)(st.bytes_read - d->rate_bytes) * 1000.0 / (double)(now - d->rate_t_ms);
	if (st.bytes_read < d->rate_bytes)
		d->rate = 0;
	d->rate_bytes = st.bytes_read;
	d->rate_t_ms = now;
}

static void notify_status(struct daemon *d)
{
	char line[512];

	update_rate(d);
	status_line(d, line, sizeof(line));
	sdnotify__status(line);
}

/* ---- control requests ---- */

static void reply_status(struct daemon *d, struct ctl_client *c)
{
	struct totals t;
	char line[CTL_MAX_LINE];
	const char *cur = d->rec ? strrchr(d->cur_path, '/') + 1 : "-";

	totals(d, &t);
	snprintf(line, sizeof(line), "OK state=%s files=%zu disk_bytes=%llu budget_bytes=%llu "
		 "current=%s rotations=%llu deleted=%llu samples=%llu lost=%llu rate_bps=%.0f "
		 "paused_s=%.3f sessions=%zu", d->rec ? "recording" : "idle",
		 d->nr_files + (d->rec ? 1 : 0),
		 (unsigned long long)(d->closed_bytes + d->cur_bytes),
		 (unsigned long long)d->cfg.max_total_size, cur, (unsigned long long)d->rotations,
		 (unsigned long long)d->deleted, (unsigned long long)t.samples,
		 (unsigned long long)t.lost, d->rate, t.paused, d->nr_jobs);
	ctl_client__finish(c, line, -1);
}

static void job_free(struct job *j)
{
	record__free(j->rec);
	if (j->fd >= 0)
		close(j->fd);
	if (j->pidfd >= 0)
		close(j->pidfd);
	free(j->pids);
	free(j->creds);
	if (j->path[0])
		unlink(j->path);
}

static void job_remove(struct daemon *d, size_t i)
{
	job_free(&d->jobs[i]);
	d->jobs[i] = d->jobs[--d->nr_jobs];
}

/* End job i: the file is finalized and handed to the client with the totals. */
static void job_finish(struct daemon *d, size_t i, const char *note)
{
	struct job *j = &d->jobs[i];
	struct record_stats st;
	char line[CTL_MAX_LINE];
	unsigned int uid = (unsigned int)ctl_client__peer(j->client)->uid;
	int err = record__stop(j->rec);

	record__stats(j->rec, &st);
	if (err) {
		snprintf(line, sizeof(line), "ERR %s", record__error(j->rec));
		ctl_client__finish(j->client, line, -1);
	} else {
		snprintf(line, sizeof(line), "OK samples=%llu lost=%llu bytes=%llu elapsed_s=%.3f "
			 "paused_s=%.3f%s%s", (unsigned long long)st.samples,
			 (unsigned long long)(st.lost_events + st.lost_samples),
			 (unsigned long long)size_of_fd(j->fd), st.elapsed, st.paused_total,
			 note ? " note=" : "", note ? note : "");
		ctl_client__finish(j->client, line, j->fd);
	}
	logf_(d, LOG_INFO, "control: recording for uid %u ended: %llu samples%s%s", uid,
	      (unsigned long long)st.samples, note ? ", " : "", note ? note : "");
	job_remove(d, i);
}

static bool pidfd_alive(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	/* a pidfd becomes readable when its process has exited */
	return poll(&p, 1, 0) == 0;
}

/* A job of a client other than root runs with the client's credentials: its uid, gid and
 * supplementary groups, and CAP_PERFMON only if the client holds it (it would bypass the
 * kernel's ptrace check). At perf_event_paranoid above 2 a plain user records nothing, as
 * with perf. The kernel then applies its
 * own rules (ptrace access to each thread, perf_event_paranoid) when the events are opened and
 * /proc/PID/maps and the mapped files are read. The kernel is left out unless the client could
 * record it itself. Returns 0 or -ENOMEM. */
static int job_creds(struct job *j, const struct ctl_peer *peer, struct record_opts *ro)
{
	long paranoid = creds__paranoid();
	bool kernel;

	if (peer->uid == 0)
		return 0;
	j->creds = calloc(1, sizeof(*j->creds));
	if (!j->creds)
		return -ENOMEM;
	j->creds->uid = peer->uid;
	j->creds->gid = peer->gid;
	memcpy(j->creds->groups, peer->groups, peer->nr_groups * sizeof(gid_t));
	j->creds->nr_groups = peer->nr_groups;
	kernel = creds__may_record_kernel(peer->uid, peer->cap_eff, paranoid);
	j->creds->perfmon = creds__has_perfmon(peer->cap_eff);
	ro->creds = j->creds;
	ro->user_only = !kernel;
	return 0;
}

/* The fds one job may hold: its share of the daemon's limit, so that one client's many
 * threads cannot starve the others. */
static size_t job_max_fds(const struct daemon *d)
{
	struct rlimit rl;
	rlim_t n = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		n = rl.rlim_max > rl.rlim_cur ? rl.rlim_max : rl.rlim_cur;
	if (n == RLIM_INFINITY || n > (1 << 20))
		n = 1 << 20;
	n = n > 1024 ? (n - 512) / (2 * (d->cfg.control_max_sessions + 1)) : 64;
	return n < 64 ? 64 : (size_t)n;
}

static void start_job(struct daemon *d, struct ctl_client *c, const struct ctl_request *req)
{
	const struct ctl_peer *peer = ctl_client__peer(c);
	struct job *j;
	struct record_opts ro = {
		.events = d->cfg.event,
		.freq = req->frequency ? req->frequency : 4000,
		.callgraph = req->callgraph >= 0 ? (enum callgraph_mode)req->callgraph :
						   CALLGRAPH_DWARF,
		.stack_size = req->stack_size ? req->stack_size : PARSE_STACK_DEFAULT,
		.comp_level = d->cfg.compression,
		.affinity = TOPO_SCOPE_CPU,
		.lossless = req->lossless,
		.high_permille = 500,
		.low_permille = 250,
		.keep_old = false,
		.notice = on_notice,
		.notice_ctx = d,
	};
	char line[CTL_MAX_LINE], dir[PATH_MAX], why[256];
	uint64_t duration = req->duration_ms ? req->duration_ms : d->cfg.control_max_duration_ms;
	int err;

	if (d->nr_jobs >= d->cfg.control_max_sessions || d->nr_jobs >= MAX_JOBS) {
		ctl_client__finish(c, "ERR busy: too many recordings at once, try again later", -1);
		return;
	}
	if (duration > d->cfg.control_max_duration_ms) {
		snprintf(line, sizeof(line), "ERR duration above the limit of %llu ms "
			 "(control_max_duration)", (unsigned long long)d->cfg.control_max_duration_ms);
		ctl_client__finish(c, line, -1);
		return;
	}
	j = &d->jobs[d->nr_jobs];
	memset(j, 0, sizeof(*j));
	j->fd = j->pidfd = -1;
	j->client = c;
	if (req->pid) {
		/* Hold the process by a pidfd across the check and the event opening: if the pid
		 * were reused meanwhile, the pidfd tells. */
		j->pidfd = (int)syscall(SYS_pidfd_open, req->pid, 0);
		if (j->pidfd < 0) {
			snprintf(line, sizeof(line), "ERR no process %d", (int)req->pid);
			goto refuse;
		}
		j->pids = malloc(sizeof(pid_t));
		if (!j->pids)
			goto oom;
		j->pids[0] = req->pid;
		j->nr_pids = 1;
	} else {
		err = ctl__cgroup_pids(NULL, req->cgroup, &j->pids, &j->nr_pids);
		if (err || !j->nr_pids) {
			snprintf(line, sizeof(line), "ERR no process in cgroup %s", req->cgroup);
			goto refuse;
		}
	}
	/* the server checked before; check again now that the target is pinned */
	if (ctl__authorize(peer, d->cfg.socket_gid, req, NULL, NULL, why, sizeof(why))) {
		snprintf(line, sizeof(line), "ERR %s", why);
		goto refuse;
	}
	ro.pids = j->pids;
	ro.nr_pids = j->nr_pids;
	ro.max_fds = job_max_fds(d);
	if (job_creds(j, peer, &ro) < 0)
		goto oom;
	snprintf(dir, sizeof(dir), "%s/" CTL_DIR, d->cfg.output_dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(line, sizeof(line), "ERR cannot create %.900s: %s", dir,
			 strerror(errno));
		goto refuse;
	}
	snprintf(j->path, sizeof(j->path), "%.3900s/ctl-%u-%llu.data", dir, (unsigned int)peer->uid,
		 (unsigned long long)++d->ctl_count);
	ro.output = j->path;
	j->rec = record__new();
	if (!j->rec) {
		snprintf(line, sizeof(line), "ERR cannot start a recording: %s", strerror(errno));
		goto refuse;
	}
	err = record__setup(j->rec, &ro);
	if (err) {
		snprintf(line, sizeof(line), "ERR %s", record__error(j->rec));
		goto refuse;
	}
	err = record__start(j->rec);
	if (err) {
		snprintf(line, sizeof(line), "ERR %s%s", j->creds && (err == -EACCES || err == -EPERM) ?
			 "the kernel refused (a user may record only processes it could ptrace: "
			 "its own, not set-uid or set-gid ones, nor ones that changed user): " : "",
			 record__error(j->rec));
		goto refuse;
	}
	if (j->pidfd >= 0 && !pidfd_alive(j->pidfd)) {
		snprintf(line, sizeof(line), "ERR process %d ended before recording began",
			 (int)req->pid);
		goto refuse;
	}
	/* The file is passed by fd: unlink it now, nothing else will ever see it. */
	j->fd = open(j->path, O_RDONLY | O_CLOEXEC);
	if (j->fd < 0) {
		snprintf(line, sizeof(line), "ERR cannot open %s: %s", j->path, strerror(errno));
		goto refuse;
	}
	unlink(j->path);
	j->path[0] = 0;
	j->deadline_ms = clock__ms() + duration;
	d->nr_jobs++;
	snprintf(line, sizeof(line), "STARTED pid=%d processes=%zu duration_ms=%llu",
		 (int)j->pids[0], j->nr_pids, (unsigned long long)duration);
	if (ctl_client__send(c, line) < 0) {
		/* it will not read the result either */
		job_finish(d, d->nr_jobs - 1, "client-gone");
		return;
	}
	logf_(d, LOG_INFO, "control: recording %s%d for uid %u, %llu ms%s",
	      req->pid ? "pid " : "cgroup with pid ", (int)j->pids[0], (unsigned int)peer->uid,
	      (unsigned long long)duration, req->lossless ? ", lossless" : "");
	return;
oom:
	snprintf(line, sizeof(line), "ERR out of memory");
refuse:
	logf_(d, LOG_NOTICE, "control: refused a recording for uid %u: %s",
	      (unsigned int)peer->uid, line + 4);
	job_free(j);
	ctl_client__finish(c, line, -1);
}

static void on_request(void *ctx, struct ctl_client *c, const struct ctl_request *req)
{
	struct daemon *d = ctx;
	char line[CTL_MAX_LINE], closed[256];

	switch (req->verb) {
	case CTL_STATUS:
		update_rate(d);
		reply_status(d, c);
		break;
	case CTL_ROTATE:
		if (!d->rec) {
			ctl_client__finish(c, "ERR not recording", -1);
			break;
		}
		if (!rotate(d, closed, sizeof(closed))) {
			snprintf(line, sizeof(line), "ERR %s", d->state_msg);
			ctl_client__finish(c, line, -1);
			break;
		}
		logf_(d, LOG_INFO, "control: rotated, closed %s", closed);
		snprintf(line, sizeof(line), "OK closed=%s", closed);
		ctl_client__finish(c, line, -1);
		break;
	case CTL_RECORD:
		start_job(d, c, req);
		break;
	}
}

static void on_gone(void *ctx, struct ctl_client *c, bool orderly)
{
	struct daemon *d = ctx;

	for (size_t i = 0; i < d->nr_jobs; i++) {
		if (d->jobs[i].client != c)
			continue;
		if (orderly) {
			/* `precord ctl record` interrupted: stop early, hand over what there is */
			job_finish(d, i, "stopped-early-by-the-caller");
			return;
		}
		logf_(d, LOG_NOTICE, "control: client of uid %u misbehaved, its recording is "
				     "dropped", (unsigned int)ctl_client__peer(c)->uid);
		record__stop(d->jobs[i].rec);
		job_remove(d, i);
		return;
	}
}

static void on_refused(void *ctx, const struct ctl_peer *peer, const char *why)
{
	struct daemon *d = ctx;

	logf_(d, LOG_NOTICE, "control: pid %d uid %u: %s", (int)peer->pid, (unsigned int)peer->uid,
	      why);
}

static void tick_jobs(struct daemon *d)
{
	uint64_t now = clock__ms();

	for (size_t i = 0; i < d->nr_jobs;) {
		struct job *j = &d->jobs[i];
		int r = record__poll(j->rec, 0);

		if (r == 1) {
			job_finish(d, i, "target-ended");
			continue;
		}
		if (now >= j->deadline_ms) {
			job_finish(d, i, NULL);
			continue;
		}
		i++;
	}
}

static int open_ctl(struct daemon *d)
{
	struct ctl_server_opts so = {
		.path = d->cfg.socket_path,
		.group = d->cfg.socket_gid,
		.ctx = d,
		.request = on_request,
		.gone = on_gone,
		.refused = on_refused,
	};
	char dir[PATH_MAX], *slash;

	if (!d->cfg.socket_path)
		return 0;
	/* the parent, e.g. /run/precord, when no RuntimeDirectory= made it */
	snprintf(dir, sizeof(dir), "%s", d->cfg.socket_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			logf_(d, LOG_WARNING, "cannot create %s: %m, ignoring", dir);
	}
	d->ctl = ctl_server__new(&so);
	if (!d->ctl) {
		int e = errno;

		seterr(d, "cannot listen on %s: %s", d->cfg.socket_path, strerror(e));
		return -e;
	}
	return 0;
}

/* ---- lifecycle ---- */

static int prepare_dir(struct daemon *d)
{
	char path[PATH_MAX];
	char *p;
	int err;

	/* mkdir -p, 0750: the recordings show what runs on the machine */
	snprintf(path, sizeof(path), "%s", d->cfg.output_dir);
	for (p = path + 1; ; p++) {
		if (*p == '/' || !*p) {
			char c = *p;

			*p = 0;
			if (mkdir(path, 0750) < 0 && errno != EEXIST) {
				err = -errno;
				seterr(d, "cannot create %s: %s", path, strerror(errno));
				return err;
			}
			*p = c;
			if (!c)
				break;
		}
	}
	if (access(d->cfg.output_dir, W_OK | X_OK) < 0) {
		err = -errno;
		seterr(d, "cannot write into %s: %s", d->cfg.output_dir, strerror(errno));
		return err;
	}
	err = scan_dir(d);
	if (err) {
		seterr(d, "cannot list %s: %s", d->cfg.output_dir, strerror(-err));
		return err;
	}
	/* Recordings handed out by fd were unlinked; any left were cut short by a crash. */
	snprintf(path, sizeof(path), "%s/" CTL_DIR, d->cfg.output_dir);
	{
		DIR *dir = opendir(path);
		struct dirent *de;

		while (dir && (de = readdir(dir)))
			if (de->d_name[0] != '.')
				unlinkat(dirfd(dir), de->d_name, 0);
		if (dir)
			closedir(dir);
	}
	return 0;
}

struct daemon *daemon__new(const struct daemon_opts *o, char **ret_msg)
{
	struct daemon *d;
	int err;

	*ret_msg = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->o = *o;
	d->sig_fd = -1;
	d->config_path = strdup(o->config_path ? o->config_path : CONFIG_DEFAULT_PATH);
	if (!d->config_path) {
		err = -ENOMEM;
		goto fail;
	}
	err = config__load(d->config_path, &d->cfg, ret_msg);
	if (err)
		goto fail;
	err = prepare_dir(d);
	if (err) {
		*ret_msg = strdup(d->err);
		goto fail;
	}
	return d;
fail:
	daemon__free(d);
	errno = -err;
	return NULL;
}

static void reload_failed(struct daemon *d, const char *what, const char *why)
{
	logf_(d, LOG_ERR, "reload failed, keeping the running configuration: %s%s", what, why);
	snprintf(d->state_msg, sizeof(d->state_msg), "reload failed");
	sdnotify__ready("reload failed: the configuration has errors (see the log)");
}

/* Stop the running session and start the one of d->cfg. When that fails and old (the previous
 * configuration, which recorded) may be taken back, recording goes on as before. Returns true
 * when the new session runs. */
static bool restart_session(struct daemon *d, struct daemon_config *old, bool may_revert)
{
	bool was_recording = d->rec != NULL;
	struct daemon_config tmp;

	stop_session(d);
	if (!d->cfg.continuous)
		return false;
	if (start_session(d) == 0)
		return true;
	logf_(d, LOG_ERR, "cannot record with the new configuration: %s", d->err);
	snprintf(d->state_msg, sizeof(d->state_msg), "idle: cannot record");
	if (!was_recording || !may_revert)
		return false;
	/* the old session's configuration comes back, so recording goes on */
	tmp = d->cfg;
	d->cfg = *old;
	*old = tmp;
	if (start_session(d) == 0) {
		logf_(d, LOG_NOTICE, "recording goes on with the previous configuration");
		snprintf(d->state_msg, sizeof(d->state_msg), "reload failed: cannot record");
	} else {
		logf_(d, LOG_ERR, "cannot record with the previous configuration either: %s",
		      d->err);
	}
	return false;
}

/* SIGHUP. The running session is kept until the new configuration is known to be valid, its
 * recording set up (daemon__check_recording) and, failing to start, it is taken back. */
static void reload(struct daemon *d)
{
	struct daemon_config nc, old;
	char *msg = NULL;
	bool restart, new_socket, new_dir;
	int err;

	sdnotify__reloading();
	logf_(d, LOG_INFO, "reloading %s", d->config_path);
	err = config__load(d->config_path, &nc, &msg);
	if (!err && nc.continuous && !config__same_recording(&d->cfg, &nc)) {
		err = daemon__check_recording(&nc, &msg);
		if (err)
			config__free(&nc);
	}
	if (err) {
		reload_failed(d, "", msg ? msg : strerror(-err));
		free(msg);
		return;
	}
	restart = !config__same_recording(&d->cfg, &nc) || !d->rec;
	new_socket = (d->cfg.socket_path == NULL) != (nc.socket_path == NULL) ||
		     (nc.socket_path && strcmp(nc.socket_path, d->cfg.socket_path));
	new_dir = strcmp(nc.output_dir, d->cfg.output_dir) != 0;
	if (new_socket) {
		ctl_server__free(d->ctl);
		d->ctl = NULL;
	}
	if (new_dir)
		stop_session(d);
	old = d->cfg;
	d->cfg = nc;
	if (new_dir && prepare_dir(d) < 0) {
		logf_(d, LOG_ERR, "%s", d->err);
		snprintf(d->state_msg, sizeof(d->state_msg), "idle: %.200s", d->err);
		restart = false;
		d->cfg.continuous = false;
	}
	if (d->ctl)
		ctl_server__set_group(d->ctl, d->cfg.socket_gid);
	else if (new_socket && open_ctl(d) < 0)
		logf_(d, LOG_ERR, "%s", d->err);
	if (restart)
		restart_session(d, &old, !new_dir && !new_socket);
	config__free(&old);
	enforce(d, d->rec ? d->cur_bytes + headroom(d) : 0);
	{
		char line[512];

		status_line(d, line, sizeof(line));
		sdnotify__ready(line);
	}
	logf_(d, LOG_INFO, "reloaded%s", restart ? ", recording anew" : "");
}

static int block_signals(struct daemon *d)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -EINVAL;
	d->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sig_fd < 0)
		return -errno;
	/* a reply to a vanished client or a file size limit must not kill the service */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

int daemon__run(struct daemon *d)
{
	struct pollfd pfds[1 + 64];
	bool running = true;
	int err;

	err = block_signals(d);
	if (err) {
		seterr(d, "cannot set up signal handling: %s", strerror(-err));
		return err;
	}
	err = open_ctl(d);
	if (err)
		return err;
	if (d->cfg.continuous) {
		err = start_session(d);
		if (err)
			return err;
	}
	d->watchdog_usec = sdnotify__watchdog_usec();
	d->next_watchdog_ms = clock__ms();
	d->next_status_ms = clock__ms() + STATUS_EVERY_MS;
	{
		char line[512];

		status_line(d, line, sizeof(line));
		sdnotify__ready(line);
	}
	logf_(d, LOG_INFO, "ready%s%s", d->ctl ? "; control socket " : "",
	      d->ctl ? d->cfg.socket_path : "");
	if (d->ctl && d->cfg.socket_group && d->cfg.socket_gid == (gid_t)-1)
		logf_(d, LOG_NOTICE, "group %s does not exist: only root may use the control "
				     "socket", d->cfg.socket_group);

	while (running) {
		size_t n = 1;
		int timeout = TICK_MS, r;
		uint64_t now;

		pfds[0] = (struct pollfd){ .fd = d->sig_fd, .events = POLLIN };
		if (d->ctl) {
			int t = ctl_server__timeout(d->ctl);

			n += ctl_server__pollfds(d->ctl, pfds + 1, ARRAY_SIZE(pfds) - 1);
			if (t >= 0 && t < timeout)
				timeout = t;
		}
		r = poll(pfds, n, timeout);
		if (r < 0 && errno != EINTR) {
			err = -errno;
			seterr(d, "poll failed: %s", strerror(errno));
			break;
		}
		if (r > 0 && (pfds[0].revents & POLLIN)) {
			struct signalfd_siginfo si;

			while (read(d->sig_fd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					reload(d);
				} else {
					logf_(d, LOG_INFO, "%s: stopping",
					      si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
					running = false;
				}
			}
			if (!running)
				break;
			/* a reload may have replaced the socket: its pollfds are stale */
			continue;
		}
		if (d->ctl && r > 0)
			ctl_server__handle(d->ctl, pfds + 1, n - 1);
		else if (d->ctl)
			ctl_server__handle(d->ctl, pfds + 1, 0); /* deadlines */
		tick_session(d);
		tick_jobs(d);
		now = clock__ms();
		if (d->watchdog_usec && now >= d->next_watchdog_ms) {
			sdnotify__watchdog();
			d->next_watchdog_ms = now + d->watchdog_usec / 2000;
		}
		if (now >= d->next_status_ms) {
			notify_status(d);
			d->next_status_ms = now + STATUS_EVERY_MS;
		}
	}
	sdnotify__stopping();
	/* Recordings in progress end now, and their callers get what was recorded. */
	while (d->nr_jobs)
		job_finish(d, 0, "precordd-stopped");
	stop_session(d);
	ctl_server__free(d->ctl);
	d->ctl = NULL;
	logf_(d, LOG_INFO, "stopped: %zu files, %llu rotations", d->nr_files,
	      (unsigned long long)d->rotations);
	return err;
}

void daemon__free(struct daemon *d)
{
	if (!d)
		return;
	while (d->nr_jobs)
		job_remove(d, 0);
	if (d->rec)
		stop_session(d);
	ctl_server__free(d->ctl);
	files_clear(d);
	free(d->files);
	free(d->rec_pids);
	config__free(&d->cfg);
	free(d->config_path);
	if (d->sig_fd >= 0)
		close(d->sig_fd);
	free(d);
}
