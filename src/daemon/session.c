/* precordd's continuous session: started from the configuration (targets resolved, the
 * file born .starting), rotated by size and time with a headroom estimated from the growth
 * seen, stopped with its file finalized; a reload may take the previous one back. */
#include "daemon/daemon_int.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "lib/cleanup.h"
#include "record/record.h"

void session__notice(void *ctx, const char *msg)
{
	struct daemon *d = ctx;

	daemon__log(d, LOG_NOTICE, "%s", msg);
}

/* The open file's length. Not its blocks: while it is written, the writer keeps space
 * allocated past its end for the file's end on a full disk (perf/writer.c, END_RESERVE,
 * 256 KiB), which finalizing gives back. Counted, that space made every file of a small
 * rotate_size look full (and rotate) once it held an eighth of rotate_size. */
static uint64_t length_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
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
			daemon__set_error(d, "cannot list the processes of cgroup %s: %s", c->cgroups[i],
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
		daemon__set_error(d, "the cgroups to record hold no process");
		return -ESRCH;
	}
	*ret = TAKE_PTR(all);
	*nr = n;
	return 0;
}

void session__opts(const struct daemon_config *c, void *notice_ctx, struct record_opts *ro)
{
	long page = sysconf(_SC_PAGESIZE);

	*ro = (struct record_opts){
		.events = c->event,
		.freq = c->frequency,
		.callgraph = c->callgraph,
		.stack_size = c->stack_size,
		.mmap_pages = c->buffer_size / (uint64_t)page,
		.comp_level = c->compression,
		/* the file is unwound once closed, and the copy compressed anew: the stack copies
		 * need not be packed tight for long, and long-distance matching, with each reader
		 * ending a frame every 200 ms at this rate, was half the daemon's own CPU time */
		.fast_compress = c->callgraph == CALLGRAPH_DWARF && c->unwind,
		.all_cgroups = c->all_cgroups,
		.affinity = TOPO_SCOPE_CPU,
		.keep_old = false,
		.notice = notice_ctx ? session__notice : NULL,
		.notice_ctx = notice_ctx,
	};
	if (c->all) {
		ro->system_wide = true;
		ro->cpu_list = c->cpus;
	}
}

int session__start(struct daemon *d)
{
	size_t nr_pids = 0;
	struct record_opts ro;
	char starting[PATH_MAX];
	uint64_t t0;
	int err;

	session__opts(&d->cfg, d, &ro);
	free(d->rec_pids);
	d->rec_pids = NULL;
	if (!d->cfg.all) {
		err = resolve_pids(d, &d->cfg, &d->rec_pids, &nr_pids);
		if (err)
			return err;
		ro.pids = d->rec_pids;
		ro.nr_pids = nr_pids;
	}
	retention__enforce(d, d->cfg.rotate_size);
	d->cur_seq = d->next_seq++;
	retention__make_name(d, d->cur_seq, d->cur_path, sizeof(d->cur_path), true);
	retention__starting_name(d->cur_path, starting, sizeof(starting));
	ro.output = starting;
	d->rec = record__new();
	if (!d->rec) {
		daemon__set_error(d, "cannot start a recording: %s", strerror(errno));
		return -ENOMEM;
	}
	err = record__setup(d->rec, &ro);
	if (err) {
		daemon__set_error(d, "%s", record__error(d->rec));
		record__free(d->rec);
		d->rec = NULL;
		return err;
	}
	t0 = clock__ms();
	err = record__start(d->rec);
	d->rot_ms = clock__ms() - t0;
	if (err) {
		daemon__set_error(d, "%s", record__error(d->rec));
		record__free(d->rec);
		d->rec = NULL;
		unlink(starting);
		return err;
	}
	record__sync(d->rec);
	if (rename(starting, d->cur_path) < 0)
		snprintf(d->cur_path, sizeof(d->cur_path), "%s", starting);
	d->file_started_ms = clock__ms();
	d->cur_bytes = d->start_bytes = length_of(d->cur_path);
	d->max_growth = 0;
	d->rate_bytes = 0;
	d->rate_t_ms = d->file_started_ms;
	d->state_msg[0] = 0;
	daemon__log(d, LOG_INFO, "recording %s at %llu Hz into %s", d->cfg.event,
	      (unsigned long long)d->cfg.frequency, d->cfg.output_dir);
	return 0;
}

static void finish_rotation(struct daemon *d);

void session__stop(struct daemon *d)
{
	struct record_stats st;
	int err;

	if (!d->rec)
		return;
	finish_rotation(d);
	err = record__stop(d->rec);
	record__stats(d->rec, &st);
	d->past_samples += st.samples;
	d->past_lost += st.lost_events + st.lost_samples;
	if (err)
		daemon__log(d, LOG_ERR, "%s", record__error(d->rec));
	record__free(d->rec);
	d->rec = NULL;
	retention__close_file(d, d->cur_path, d->cur_seq);
	d->cur_path[0] = 0;
	d->cur_bytes = 0;
	retention__enforce(d, 0);
}

/* What the open file may still grow by before the next tick or rotation. Capped at
 * rotate_size: one slow rotation (a stalled disk, a hostile mapped file) must not make the
 * budget delete history it will never need. */
uint64_t session__headroom(const struct daemon *d)
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

/* Rotation. The slow part, record__rotate (describing every running process into the new
 * file from /proc, then finishing the old one: build ids, features, header), runs on a thread
 * of its own, so that the loop keeps serving the control socket, the jobs and the budget. The
 * readers keep writing the old file until record__rotate swaps in the new one, and the new one
 * from then on. While d->rotating, the loop does not touch d->rec (no poll, sync or stats: a
 * status shows the statistics of before the rotation); what it does is keep the budget, with
 * both files counted. The names, the closed list and the hook run on the loop, at the end. */

static void *rotation_thread(void *arg)
{
	struct daemon *d = arg;
	uint64_t t0 = clock__ms(), one = 1;
	int err = record__rotate(d->rec, d->rot_starting);

	d->rot_took_ms = clock__ms() - t0;
	d->rot_err = err;
	d->rot_new_exists = !err || access(d->rot_starting, F_OK) == 0;
	if (err)
		snprintf(d->rot_why, sizeof(d->rot_why), "%s", record__error(d->rec));
	/* the loop joins the thread before it reads any of the above */
	while (write(d->rot_efd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	return NULL;
}

/* Start the thread (no signal for it: the loop takes them from a signalfd, which sees only
 * signals that every thread blocks). Without a thread, the rotation runs here. */
static void start_rotation_thread(struct daemon *d)
{
	sigset_t all, old;
	int e;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	e = pthread_create(&d->rot_thread, NULL, rotation_thread, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	d->rot_threaded = e == 0;
	if (e) {
		daemon__log(d, LOG_WARNING, "cannot start a rotation thread: %s; rotating on the loop",
			    strerror(e));
		rotation_thread(d);
	}
}

static bool begin_rotation(struct daemon *d)
{
	uint32_t seq = d->next_seq;

	if (!d->rec || d->rotating)
		return false;
	session__stats(d, &d->rec_stats);
	/* room for the open file, its features and the next file's start */
	retention__enforce(d, d->cur_bytes + session__headroom(d) + 2 * d->start_bytes);
	retention__make_name(d, seq, d->rot_next, sizeof(d->rot_next), true);
	retention__starting_name(d->rot_next, d->rot_starting, sizeof(d->rot_starting));
	snprintf(d->rot_old, sizeof(d->rot_old), "%s", d->cur_path);
	d->rot_seq = seq;
	d->rot_old_seq = d->cur_seq;
	d->rot_before = length_of(d->rot_old);
	d->rot_new_bytes = 0;
	d->rot_err = 0;
	d->rot_why[0] = 0;
	d->rotating = true;
	start_rotation_thread(d);
	return true;
}

/* Answer the waiters of the rotation that ended (closed: the file's name, or NULL when it
 * failed); those that came during it wait for the next one, which begins now. */
static void answer_waiters(struct daemon *d, const char *closed)
{
	char line[CTL_MAX_LINE];
	size_t keep = 0;

	if (closed)
		snprintf(line, sizeof(line), "OK closed=%s", closed);
	else
		snprintf(line, sizeof(line), "ERR %s", d->state_msg[0] ? d->state_msg :
			 "not recording");
	for (size_t i = 0; i < d->nr_rot_waiters; i++) {
		struct rot_waiter *w = &d->rot_waiters[i];

		if (!w->next) {
			if (closed)
				daemon__log(d, LOG_INFO, "control: rotated, closed %s", closed);
			ctl_client__finish(w->c, line, -1);
			continue;
		}
		d->rot_waiters[keep++] = (struct rot_waiter){ w->c, false };
	}
	d->nr_rot_waiters = keep;
	if (keep && !begin_rotation(d)) {
		snprintf(line, sizeof(line), "ERR %s", d->state_msg[0] ? d->state_msg :
			 "not recording");
		for (size_t i = 0; i < keep; i++)
			ctl_client__finish(d->rot_waiters[i].c, line, -1);
		d->nr_rot_waiters = 0;
	}
}

/* Hook point: the file at path was finished, has its final name and counts in the closed
 * list (on the loop). Whatever is done with a finished file starts here. */
static void rotation_finished(struct daemon *d, const char *path)
{
	retention__unwind_last(d);
}

/* The rotation ended: join its thread and take the result. When a failure left recording in
 * the old file, it is tried again in 5 s. Returns the closed file's name (in closed), or
 * NULL. */
static const char *end_rotation(struct daemon *d, char *closed, size_t size)
{
	const char *b;
	size_t l;

	if (d->rot_threaded)
		pthread_join(d->rot_thread, NULL);
	d->rotating = false;
	d->rot_threaded = false;
	d->rot_new_bytes = 0;
	d->rot_ms = d->rot_took_ms;
	if (!d->rot_new_exists) {
		/* the new file could not be started: recording goes on in the old one */
		daemon__log(d, LOG_ERR, "cannot rotate: %s; trying again in 5 s", d->rot_why);
		snprintf(d->state_msg, sizeof(d->state_msg), "rotation failed: %.200s", d->rot_why);
		d->rotate_fail_until_ms = clock__ms() + 5000;
		return NULL;
	}
	if (d->rot_err)
		daemon__log(d, LOG_ERR, "%s", d->rot_why);
	d->next_seq = d->rot_seq + 1;
	d->cur_seq = d->rot_seq;
	if (rename(d->rot_starting, d->rot_next) < 0)
		snprintf(d->rot_next, sizeof(d->rot_next), "%s", d->rot_starting);
	snprintf(d->cur_path, sizeof(d->cur_path), "%s", d->rot_next);
	{
		uint64_t after = length_of(d->rot_old);
		uint64_t g = after > d->rot_before ? after - d->rot_before : 0;

		d->rot_growth = g > d->rot_growth ? g : d->rot_growth - d->rot_growth / 8;
		daemon__log(d, LOG_DEBUG, "rotated in %llu ms at %llu bytes (headroom %llu), closed at "
		      "%llu", (unsigned long long)d->rot_ms, (unsigned long long)d->rot_before,
		      (unsigned long long)session__headroom(d), (unsigned long long)after);
	}
	retention__close_file(d, d->rot_old, d->rot_old_seq);
	d->rotations++;
	if (d->nr_files && d->files[d->nr_files - 1].seq == d->rot_old_seq) {
		char final[PATH_MAX];

		snprintf(final, sizeof(final), "%s/%s", d->cfg.output_dir,
			 d->files[d->nr_files - 1].name);
		rotation_finished(d, final);
	}
	d->file_started_ms = clock__ms();
	d->cur_bytes = d->start_bytes = length_of(d->cur_path);
	d->state_msg[0] = 0;
	session__stats(d, &d->rec_stats);
	b = strrchr(d->rot_old, '/') + 1;
	l = strlen(b);
	if (l > 8 && !strcmp(b + l - 8, ".partial"))
		l -= 8;
	snprintf(closed, size, "%.*s", (int)l, b);
	retention__enforce(d, d->cfg.rotate_size);
	return closed;
}

void session__rotation_done(struct daemon *d)
{
	char closed[256];
	uint64_t n;

	if (!d->rotating || read(d->rot_efd, &n, sizeof(n)) != sizeof(n))
		return;
	answer_waiters(d, end_rotation(d, closed, sizeof(closed)));
}

/* Wait for a rotation in progress (stop, reload): its waiters are answered, none begins. */
static void finish_rotation(struct daemon *d)
{
	char closed[256], line[CTL_MAX_LINE];
	const char *c;
	uint64_t n;

	if (!d->rotating)
		return;
	c = end_rotation(d, closed, sizeof(closed));
	/* joined: its write is there (or the rotation ran on the loop); take it */
	while (read(d->rot_efd, &n, sizeof(n)) < 0 && errno == EINTR)
		;
	snprintf(line, sizeof(line), c ? "OK closed=%s" : "ERR %s", c ? c : d->state_msg);
	for (size_t i = 0; i < d->nr_rot_waiters; i++)
		ctl_client__finish(d->rot_waiters[i].c, d->rot_waiters[i].next ?
				   "ERR recording stopped" : line, -1);
	d->nr_rot_waiters = 0;
}

void session__rotate(struct daemon *d, struct ctl_client *waiter)
{
	if (waiter && d->nr_rot_waiters == MAX_ROT_WAITERS) {
		ctl_client__finish(waiter, "ERR busy: rotations are already asked for; try again", -1);
		return;
	}
	if (waiter)
		d->rot_waiters[d->nr_rot_waiters++] = (struct rot_waiter){ waiter, d->rotating };
	if (d->rotating)
		return;
	if (!begin_rotation(d))
		answer_waiters(d, NULL);
}

void session__client_gone(struct daemon *d, struct ctl_client *c)
{
	for (size_t i = 0; i < d->nr_rot_waiters; i++) {
		if (d->rot_waiters[i].c != c)
			continue;
		memmove(d->rot_waiters + i, d->rot_waiters + i + 1,
			(d->nr_rot_waiters - i - 1) * sizeof(*d->rot_waiters));
		d->nr_rot_waiters--;
		return;
	}
}

void session__stats(struct daemon *d, struct record_stats *ret)
{
	if (!d->rec) {
		memset(ret, 0, sizeof(*ret));
		return;
	}
	if (d->rotating) {
		*ret = d->rec_stats;
		return;
	}
	record__stats(d->rec, ret);
	d->rec_stats = *ret;
}

void session__tick(struct daemon *d)
{
	uint64_t now = clock__ms(), size, grow;
	int r;

	if (!d->rec)
		return;
	if (d->rotating) {
		/* the old file takes ring data until the swap, then its features; the new one its
		 * start: both count until the rotation ends */
		d->cur_bytes = length_of(d->cur_path);
		d->rot_new_bytes = length_of(d->rot_starting);
		retention__enforce(d, d->cur_bytes + d->rot_new_bytes + session__headroom(d));
		return;
	}
	r = record__poll(d->rec, 0);
	/* the header's data size at every tick: a kill -9 loses at most a tick of data */
	record__sync(d->rec);
	if (r == 1) {
		daemon__log(d, LOG_NOTICE, "every process recorded has ended; continuous recording "
				     "stops until a reload");
		snprintf(d->state_msg, sizeof(d->state_msg), "idle: the recorded processes ended");
		session__stop(d);
		return;
	}
	size = length_of(d->cur_path);
	grow = size > d->cur_bytes ? size - d->cur_bytes : 0;
	/* the largest recent growth per tick, forgotten slowly */
	d->max_growth = grow > d->max_growth ? grow : d->max_growth - d->max_growth / 64;
	d->cur_bytes = size;
	/* By size once the file would outgrow rotate_size by the next tick; but a file must
	 * first carry some data of its own (an eighth of rotate_size) beyond its synthesized
	 * start, or a rotate_size too small for that start would rotate at every tick. */
	if (now >= d->rotate_fail_until_ms &&
	    ((size + session__headroom(d) >= d->cfg.rotate_size &&
	      (size >= d->cfg.rotate_size ||
	       (size > d->start_bytes && size - d->start_bytes >= d->cfg.rotate_size / 8))) ||
	     (d->cfg.rotate_interval_ms && now - d->file_started_ms >= d->cfg.rotate_interval_ms)))
		session__rotate(d, NULL);
	/* a burst may have outrun the estimate: keep the whole within the budget */
	retention__enforce(d, d->cur_bytes + session__headroom(d));
}

/* Stop the running session and start the one of d->cfg. When that fails and old (the previous
 * configuration, which recorded) may be taken back, recording goes on as before. Returns true
 * when the new session runs. */
bool session__restart(struct daemon *d, struct daemon_config *old, bool may_revert)
{
	bool was_recording = d->rec != NULL;
	struct daemon_config tmp;

	session__stop(d);
	if (!d->cfg.continuous)
		return false;
	if (session__start(d) == 0)
		return true;
	daemon__log(d, LOG_ERR, "cannot record with the new configuration: %s", d->err);
	snprintf(d->state_msg, sizeof(d->state_msg), "idle: cannot record");
	if (!was_recording || !may_revert)
		return false;
	/* the old session's configuration comes back, so recording goes on */
	tmp = d->cfg;
	d->cfg = *old;
	*old = tmp;
	if (session__start(d) == 0) {
		daemon__log(d, LOG_NOTICE, "recording goes on with the previous configuration");
		snprintf(d->state_msg, sizeof(d->state_msg), "reload failed: cannot record");
	} else {
		daemon__log(d, LOG_ERR, "cannot record with the previous configuration either: %s",
		      d->err);
	}
	return false;
}
