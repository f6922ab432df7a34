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
#include "daemon/compact.h"
#include "daemon/daemon_int.h"
#include "daemon/export.h"
#include "daemon/handover.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>

#include "lib/clock.h"
#include "lib/cleanup.h"
#include "daemon/sdnotify.h"
#include "record/record.h"

void daemon__log(struct daemon *d, int prio, const char *fmt, ...)
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

void daemon__set_error(struct daemon *d, const char *fmt, ...)
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

static void on_request(void *ctx, struct ctl_client *c, const struct ctl_request *req)
{
	struct daemon *d = ctx;
	switch (req->verb) {
	case CTL_STATUS:
		status__update_rate(d);
		status__reply(d, c);
		break;
	case CTL_ROTATE:
		if (!d->rec) {
			ctl_client__finish(c, "ERR not recording", -1);
			break;
		}
		/* answered when the rotation ends; the loop goes on meanwhile */
		session__rotate(d, c);
		break;
	case CTL_RECORD:
		jobs__start(d, c, req);
		break;
	}
}

static void on_gone(void *ctx, struct ctl_client *c, bool orderly)
{
	session__client_gone(ctx, c);
	jobs__gone(ctx, c, orderly);
}

/* Refused connections are logged REFUSALS_LOGGED a second at most: a user connecting in a
 * loop would otherwise write thousands of lines a second to the journal. The rest are
 * counted, and said with the next line logged. */
#define REFUSALS_LOGGED 10
static void on_refused(void *ctx, const struct ctl_peer *peer, const char *why)
{
	struct daemon *d = ctx;
	uint64_t now = clock__ms();

	if (now - d->refusals_since_ms >= 1000) {
		d->refusals_since_ms = now;
		d->refusals_logged = 0;
	}
	if (d->refusals_logged >= REFUSALS_LOGGED) {
		d->refusals_unlogged++;
		return;
	}
	d->refusals_logged++;
	daemon__log(d, LOG_NOTICE, "control: pid %d uid %u: %s", (int)peer->pid, (unsigned int)peer->uid,
	      why);
	if (d->refusals_unlogged) {
		daemon__log(d, LOG_NOTICE, "control: %llu more refusals were not logged (at most %d "
			    "a second are)", (unsigned long long)d->refusals_unlogged, REFUSALS_LOGGED);
		d->refusals_unlogged = 0;
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
	int err;

	if (!d->cfg.socket_path)
		return 0;
	/* the parent, e.g. /run/precord, when no RuntimeDirectory= made it */
	snprintf(dir, sizeof(dir), "%s", d->cfg.socket_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			daemon__log(d, LOG_WARNING, "cannot create %s: %m, ignoring", dir);
	}
	d->ctl = ctl_server__new(&so);
	if (!d->ctl) {
		daemon__set_error(d, "cannot listen on %s: %s", d->cfg.socket_path, strerror(ENOMEM));
		return -ENOMEM;
	}
	err = ctl_server__listen(d->ctl);
	if (err) {
		daemon__set_error(d, "%s", ctl_server__error(d->ctl));
		ctl_server__free(d->ctl);
		d->ctl = NULL;
	}
	return err;
}

struct daemon *daemon__new(const struct daemon_opts *o)
{
	struct daemon *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->o = *o;
	d->sig_fd = -1;
	d->config_path = strdup(o->config_path ? o->config_path : CONFIG_DEFAULT_PATH);
	d->rot_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!d->config_path || d->rot_efd < 0) {
		int e = d->config_path ? errno : ENOMEM;

		if (d->rot_efd >= 0)
			close(d->rot_efd);
		free(d->config_path);
		free(d);
		errno = e;
		return NULL;
	}
	return d;
}

int daemon__setup(struct daemon *d)
{
	int err;

	if (d->setup) {
		daemon__set_error(d, "the daemon is already set up");
		return -EBUSY;
	}
	err = config__load(d->config_path, &d->cfg);
	if (err) {
		daemon__set_error(d, "%s", config__error(&d->cfg));
		return err;
	}
	d->setup = true;
	err = retention__prepare_dir(d);
	if (err)
		return err;
	/* whatever the configuration says now: a reload may turn unwinding on */
	d->compactor = compactor__new(d->cfg.compression, (unsigned int)d->cfg.convert_stall_ms);
	if (!d->compactor)
		daemon__log(d, LOG_WARNING, "cannot start the unwinding thread: %m; files keep "
			    "their stacks");
	/* export__start sets the daemon's error */
	return export__start(d);
}

int daemon__check_recording(struct daemon_config *c)
{
	struct record_opts ro;
	struct record *rec;
	pid_t self = getpid();
	int err;

	c->err[0] = 0;
	session__opts(c, NULL, &ro);
	if (!c->all) {
		/* the targets are looked up when recording starts; the rest is checked here */
		ro.pids = &self;
		ro.nr_pids = 1;
	}
	ro.output = "/nonexistent/precordd-check.data"; /* never created: nothing starts */
	rec = record__new();
	if (!rec) {
		snprintf(c->err, sizeof(c->err), "cannot check the recording: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = record__setup(rec, &ro);
	if (err)
		snprintf(c->err, sizeof(c->err), "%s", record__error(rec));
	record__free(rec);
	return err;
}

static void reload_failed(struct daemon *d, const char *what, const char *why)
{
	daemon__log(d, LOG_ERR, "reload failed, keeping the running configuration: %s%s", what, why);
	snprintf(d->state_msg, sizeof(d->state_msg), "reload failed");
	sdnotify__ready("reload failed: the configuration has errors (see the log)");
}

/* SIGHUP. The running session is kept until the new configuration is known to be valid, its
 * recording set up (daemon__check_recording) and, failing to start, it is taken back. */
static void reload(struct daemon *d)
{
	struct daemon_config nc, old;
	bool restart, new_socket, new_dir;
	int err;

	sdnotify__reloading();
	daemon__log(d, LOG_INFO, "reloading %s", d->config_path);
	err = config__load(d->config_path, &nc);
	if (!err && nc.continuous && !config__same_recording(&d->cfg, &nc))
		err = daemon__check_recording(&nc);
	if (err) {
		reload_failed(d, "", config__error(&nc));
		config__free(&nc);
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
		session__stop(d);
	old = d->cfg;
	d->cfg = nc;
	if (new_dir && retention__prepare_dir(d) < 0) {
		daemon__log(d, LOG_ERR, "%s", d->err);
		snprintf(d->state_msg, sizeof(d->state_msg), "idle: %.200s", d->err);
		restart = false;
		d->cfg.continuous = false;
	}
	if (d->ctl)
		ctl_server__set_group(d->ctl, d->cfg.socket_gid);
	else if (new_socket && open_ctl(d) < 0)
		daemon__log(d, LOG_ERR, "%s", d->err);
	if (restart)
		session__restart(d, &old, !new_dir && !new_socket);
	config__free(&old);
	if (d->compactor)
		compactor__configure(d->compactor, d->cfg.compression,
				     (unsigned int)d->cfg.convert_stall_ms);
	export__reconfigure(d);
	retention__enforce(d, d->rec ? d->cur_bytes + session__headroom(d) : 0);
	{
		char line[512];

		status__line(d, line, sizeof(line));
		sdnotify__ready(line);
	}
	daemon__log(d, LOG_INFO, "reloaded%s", restart ? ", recording anew" : "");
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

/* The start of daemon__run: signals, the socket, the continuous session, READY=1. Returns 0 or
 * -errno with the reason set. */
static int start(struct daemon *d)
{
	int err;

	if (!d->setup) {
		daemon__set_error(d, "the daemon is not set up (daemon__setup)");
		return -EINVAL;
	}
	err = block_signals(d);
	if (err) {
		daemon__set_error(d, "cannot set up signal handling: %s", strerror(-err));
		return err;
	}
	err = open_ctl(d);
	if (err)
		return err;
	if (d->cfg.continuous) {
		err = session__start(d);
		if (err)
			return err;
	}
	d->watchdog_usec = sdnotify__watchdog_usec();
	d->next_watchdog_ms = clock__ms();
	d->next_status_ms = clock__ms() + STATUS_EVERY_MS;
	{
		char line[512];

		status__line(d, line, sizeof(line));
		sdnotify__ready(line);
	}
	daemon__log(d, LOG_INFO, "ready%s%s", d->ctl ? "; control socket " : "",
	      d->ctl ? d->cfg.socket_path : "");
	if (d->ctl && d->cfg.socket_group && d->cfg.socket_gid == (gid_t)-1)
		daemon__log(d, LOG_NOTICE, "group %s does not exist: only root may use the control "
				     "socket", d->cfg.socket_group);
	return 0;
}

/* The signals pending on the signalfd: SIGHUP reloads (after a rotation in progress, which a
 * reload may stop), SIGTERM and SIGINT stop. Returns false to stop. */
static bool take_signals(struct daemon *d)
{
	struct signalfd_siginfo si;
	bool running = true;

	while (read(d->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP && d->rotating) {
			d->reload_pending = true;
		} else if (si.ssi_signo == SIGHUP) {
			reload(d);
		} else {
			daemon__log(d, LOG_INFO, "%s: stopping",
				    si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
			running = false;
		}
	}
	return running;
}

int daemon__run(struct daemon *d)
{
	struct pollfd pfds[2 + 64 + MAX_JOBS];
	bool running = true;
	int err;

	err = start(d);
	if (err)
		return err;
	while (running) {
		size_t n = 2, nc;
		int timeout = TICK_MS, r;
		uint64_t now;

		pfds[0] = (struct pollfd){ .fd = d->sig_fd, .events = POLLIN };
		pfds[1] = (struct pollfd){ .fd = d->rot_efd, .events = POLLIN };
		if (d->ctl) {
			int t = ctl_server__timeout(d->ctl);

			n += ctl_server__pollfds(d->ctl, pfds + 2, 64);
			if (t >= 0 && t < timeout)
				timeout = t;
		}
		nc = n;
		/* the copies of finished control recordings: the loop turns as their pipes drain */
		n += handover__pollfds(d, pfds + n, ARRAY_SIZE(pfds) - n);
		r = poll(pfds, n, timeout);
		if (r < 0 && errno != EINTR) {
			err = -errno;
			daemon__set_error(d, "poll failed: %s", strerror(errno));
			break;
		}
		if (r > 0 && (pfds[0].revents & POLLIN)) {
			running = take_signals(d);
			if (!running)
				break;
			/* a reload may have replaced the socket: its pollfds are stale */
			continue;
		}
		if (r > 0 && (pfds[1].revents & POLLIN))
			session__rotation_done(d);
		if (d->reload_pending && !d->rotating) {
			d->reload_pending = false;
			reload(d);
			continue;
		}
		if (d->ctl && r > 0)
			ctl_server__handle(d->ctl, pfds + 2, nc - 2);
		else if (d->ctl)
			ctl_server__handle(d->ctl, pfds + 2, 0); /* deadlines */
		session__tick(d);
		retention__take_unwound(d);
		export__tick(d);
		jobs__tick(d);
		now = clock__ms();
		if (d->watchdog_usec && now >= d->next_watchdog_ms) {
			sdnotify__watchdog();
			d->next_watchdog_ms = now + d->watchdog_usec / 2000;
		}
		if (now >= d->next_status_ms) {
			status__notify(d);
			d->next_status_ms = now + STATUS_EVERY_MS;
		}
	}
	sdnotify__stopping();
	/* Recordings in progress end now, and their callers get what was recorded. */
	while (d->nr_jobs)
		jobs__finish(d, 0, "precordd-stopped");
	handover__drain(d, SHUTDOWN_HANDOVER_MS);
	session__stop(d);
	ctl_server__free(d->ctl);
	d->ctl = NULL;
	daemon__log(d, LOG_INFO, "stopped: %zu files, %llu rotations", d->nr_files,
	      (unsigned long long)d->rotations);
	return err;
}

void daemon__free(struct daemon *d)
{
	if (!d)
		return;
	while (d->nr_jobs)
		jobs__remove(d, 0);
	handover__clear(d);
	if (d->rec)
		session__stop(d);
	compactor__free(d->compactor); /* finishes the file in hand: a few seconds at most */
	export__stop(d);
	retention__clear_unwinding(d);
	ctl_server__free(d->ctl);
	retention__clear(d);
	free(d->files);
	free(d->rec_pids);
	config__free(&d->cfg);
	free(d->config_path);
	if (d->sig_fd >= 0)
		close(d->sig_fd);
	if (d->rot_efd >= 0)
		close(d->rot_efd);
	free(d);
}
