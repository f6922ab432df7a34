/* What the parts of precordd's loop share: the daemon's state and each part's entry points.
 * Private to src/daemon (daemon.c: lifecycle, signals and the loop; retention.c: the files and
 * the disk budget; session.c: continuous recording and rotation; status.c: status lines;
 * jobs.c: the recordings asked over the control socket; handover.c: their files copied to the
 * clients). Everything runs on the daemon's loop
 * thread, except a rotation's record__rotate (see session.c: while d->rotating the loop does not
 * touch d->rec) and the compactor's unwinding (compact.c). */
#ifndef PRECORD_DAEMON_INT_H
#define PRECORD_DAEMON_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "daemon/config.h"
#include "daemon/ctl.h"
#include "daemon/daemon.h"
#include "record/record.h"

struct creds;
struct exporter;
struct record;
struct record_opts;

#define TICK_MS 100
#define STATUS_EVERY_MS 5000
/* at shutdown, finished control recordings are copied to their clients for this long at most */
#define SHUTDOWN_HANDOVER_MS 10000
#define MAX_JOBS 64
#define CTL_DIR ".control"
/* a longer rotation counts as this long in the headroom (see session__headroom()) */
#define MAX_ROT_MS 2000
/* `precord ctl rotate` callers waiting for a rotation at once; more are told to try again */
#define MAX_ROT_WAITERS 8
/* files handed to the compactor and not yet taken back (its queue holds 16) */
#define MAX_UNWINDING 32

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
	struct compactor *compactor; /* unwinds closed files into call chains (unwind = yes) */
	uint64_t unwound, unwound_saved; /* files swapped for their call-chain copy; bytes saved */
	struct exporter *exporter;  /* pprof profiles of finished files, pushed (export.h) */
	/* Files handed to the compactor and not taken back, oldest first. It writes one copy at a
	 * time, in that order, never larger than its file (compact.c): the budget keeps room for
	 * the size of the first, which is the copy in progress or the next one. */
	struct unwinding {
		char *path;
		uint64_t bytes;
	} unwinding[MAX_UNWINDING];
	size_t nr_unwinding;
	uint64_t unwinding_disk;    /* the copy's size on disk, at the last look */

	/* A rotation in progress: record__rotate runs on rot_thread, which says it is done on
	 * rot_efd; meanwhile the loop leaves d->rec alone and status shows rec_stats, taken
	 * before it began. The loop only reads rot_err/rot_why/rot_took after joining. */
	bool rotating, rot_threaded, reload_pending;
	pthread_t rot_thread;
	int rot_efd;
	int rot_err;                /* record__rotate's */
	bool rot_new_exists;        /* the new file was started (recording goes on there) */
	uint64_t rot_took_ms;
	char rot_why[512];
	char rot_old[PATH_MAX], rot_next[PATH_MAX], rot_starting[PATH_MAX];
	uint32_t rot_seq, rot_old_seq;
	uint64_t rot_before;        /* size of the old file when the rotation began */
	uint64_t rot_new_bytes;     /* the new file's size, at the last tick of the rotation */
	struct record_stats rec_stats; /* of d->rec, at the last look outside a rotation */
	struct rot_waiter {
		struct ctl_client *c;
		bool next;          /* came during a rotation: waits for the one after it */
	} rot_waiters[MAX_ROT_WAITERS];
	size_t nr_rot_waiters;

	/* status */
	uint64_t rate_bytes, rate_t_ms;
	double rate;                /* bytes per second written, last status interval */
	uint64_t next_status_ms;
	char state_msg[256];        /* why not recording, or the last error */

	uint64_t watchdog_usec, next_watchdog_ms;
	struct job jobs[MAX_JOBS];
	size_t nr_jobs;
	struct handover_slot {      /* handover.c: finished recordings being copied to clients */
		int file, pipe;
		uid_t uid;
		off_t off, size;
		uint64_t idle_deadline_ms, end_ms;
	} handovers[MAX_JOBS];
	size_t nr_handovers;
	uint64_t ctl_count;
	uint64_t refusals_since_ms, refusals_unlogged; /* on_refused's rate of log lines */
	unsigned int refusals_logged;
	bool setup;                 /* daemon__setup loaded the configuration */
	char err[512];
};

/* daemon.c: a message for the log; the reason of a failure for daemon__error(). */
void daemon__log(struct daemon *d, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void daemon__set_error(struct daemon *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* retention.c: the closed files, oldest first, and the disk budget. */
void retention__clear(struct daemon *d);
/* Delete oldest files until the closed ones plus reserve fit in the budget, and those older
 * than max_age. */
void retention__enforce(struct daemon *d, uint64_t reserve);
void retention__make_name(struct daemon *d, uint32_t seq, char *buf, size_t size, bool partial);
uint64_t retention__size_of(const char *path);
uint64_t retention__size_of_fd(int fd);
void retention__starting_name(const char *partial, char *buf, size_t size);
void retention__close_file(struct daemon *d, const char *path, uint32_t seq);
/* mkdir -p the output directory, check that only root can change it (run as root), count
 * what is there; 0 or -errno (daemon__error says). */
int retention__prepare_dir(struct daemon *d);
/* The control recordings' directory (CTL_DIR in output_dir) into buf, made if missing: 0, or
 * -1 with why in err when it cannot be made or is not a directory of root's, closed to others. */
int retention__control_dir(struct daemon *d, char *buf, size_t size, char *err, size_t err_size);
/* unwind = yes with DWARF call graphs: hand the file closed last to the compactor. */
void retention__unwind_last(struct daemon *d);
/* Swap in the call-chain copies the compactor finished, for files still kept. */
void retention__take_unwound(struct daemon *d);
/* Forget the files handed to the compactor (it is stopped). */
void retention__clear_unwinding(struct daemon *d);

/* session.c: continuous recording. */
void session__notice(void *ctx, const char *msg);
/* How the continuous session of configuration c records (no output, no targets yet). */
void session__opts(const struct daemon_config *c, void *notice_ctx, struct record_opts *ro);
int session__start(struct daemon *d);
void session__stop(struct daemon *d);
uint64_t session__headroom(const struct daemon *d);
/* Begin a rotation on its thread, unless one is in progress. waiter (may be NULL) is answered
 * when a rotation that began after its request ends: "OK closed=NAME" or "ERR why". */
void session__rotate(struct daemon *d, struct ctl_client *waiter);
/* The rotation thread said it is done: take its result (the loop polls rot_efd). */
void session__rotation_done(struct daemon *d);
/* A control client went away: forget it if it waits for a rotation. */
void session__client_gone(struct daemon *d, struct ctl_client *c);
/* d->rec's statistics, live, or as they were before a rotation in progress. */
void session__stats(struct daemon *d, struct record_stats *ret);
void session__tick(struct daemon *d);
bool session__restart(struct daemon *d, struct daemon_config *old, bool may_revert);

/* status.c */
void status__line(struct daemon *d, char *buf, size_t size);
void status__update_rate(struct daemon *d);
void status__notify(struct daemon *d);
void status__reply(struct daemon *d, struct ctl_client *c);

/* jobs.c: `precord ctl record`. */
void jobs__start(struct daemon *d, struct ctl_client *c, const struct ctl_request *req);
void jobs__remove(struct daemon *d, size_t i);
void jobs__finish(struct daemon *d, size_t i, const char *note);
void jobs__gone(void *ctx, struct ctl_client *c, bool orderly);
void jobs__tick(struct daemon *d);
/* What the control recordings hold on disk now: running ones and those being handed over. */
uint64_t jobs__bytes(const struct daemon *d);

#endif
