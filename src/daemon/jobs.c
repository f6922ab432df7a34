/* precordd's control recordings (`precord ctl record`): each runs with the client's
 * credentials (see job_creds and precordd(8), SECURITY), into an unlinked file copied to the
 * client through a pipe when it ends (duration, target gone, the client's ^C, or shutdown;
 * see handover.h). */
#include "daemon/daemon_int.h"
#include "daemon/handover.h"

#include <fcntl.h>
#include <poll.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "lib/clock.h"
#include "lib/creds.h"
#include "record/record.h"

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

void jobs__remove(struct daemon *d, size_t i)
{
	job_free(&d->jobs[i]);
	d->jobs[i] = d->jobs[--d->nr_jobs];
}

/* End job i: the file is finalized and handed to the client with the totals. */
void jobs__finish(struct daemon *d, size_t i, const char *note)
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
		uint64_t bytes = retention__size_of_fd(j->fd);
		int rfd = handover__start(d, j->fd, uid);

		j->fd = -1; /* the handover's now */
		if (rfd < 0) {
			snprintf(line, sizeof(line), "ERR cannot hand the recording over: %s",
				 strerror(-rfd));
			ctl_client__finish(j->client, line, -1);
		} else {
			snprintf(line, sizeof(line), "OK samples=%llu lost=%llu bytes=%llu "
				 "elapsed_s=%.3f paused_s=%.3f%s%s", (unsigned long long)st.samples,
				 (unsigned long long)(st.lost_events + st.lost_samples),
				 (unsigned long long)bytes, st.elapsed, st.paused_total,
				 note ? " note=" : "", note ? note : "");
			ctl_client__finish(j->client, line, rfd);
			close(rfd);
		}
	}
	daemon__log(d, LOG_INFO, "control: recording for uid %u ended: %llu samples%s%s", uid,
	      (unsigned long long)st.samples, note ? ", " : "", note ? note : "");
	jobs__remove(d, i);
}

static bool pidfd_alive(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	/* a pidfd becomes readable when its process has exited */
	return poll(&p, 1, 0) == 0;
}

/* A job of a client other than root runs with the client's credentials: its uid, gid and
 * supplementary groups, and no capability (the client's cannot be known for sure at connect
 * time, see ctl.c). At perf_event_paranoid above 2 a plain user records nothing, as
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
	kernel = creds__may_record_kernel(peer->uid, paranoid);
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

/* A user other than root may hold half of the recordings at once (at least one), so that no
 * user can take all of them from the others; root is held only by the total. */
static size_t uid_max_jobs(const struct daemon *d)
{
	size_t n = (d->cfg.control_max_sessions + 1) / 2;

	return n ? n : 1;
}

/* Its recordings running or being handed over. */
static size_t jobs_of_uid(const struct daemon *d, uid_t uid)
{
	size_t n = handover__count(d, uid);

	for (size_t i = 0; i < d->nr_jobs; i++)
		if (ctl_client__peer(d->jobs[i].client)->uid == uid)
			n++;
	return n;
}

/* The processes of req, pinned: a pid by a pidfd (the one the client passed, which names its
 * process whatever the client's pid namespace; else one opened here, when the client shares
 * our pid namespace), or a cgroup's members. Returns 0, or -1 with the ERR line in line. */
static int job_target(struct job *j, struct ctl_client *c, const struct ctl_request *req,
		      char *line, size_t size)
{
	int passed = ctl_client__pidfd(c);
	pid_t pid = req->pid;

	if (!req->pid) {
		if (ctl__cgroup_pids(NULL, req->cgroup, &j->pids, &j->nr_pids) || !j->nr_pids) {
			snprintf(line, size, "ERR no process in cgroup %s", req->cgroup);
			return -1;
		}
		return 0;
	}
	if (passed >= 0) {
		pid = ctl__pidfd_pid(passed);
		j->pidfd = fcntl(passed, F_DUPFD_CLOEXEC, 3);
		if (pid <= 0 || j->pidfd < 0) {
			snprintf(line, size, "ERR the process passed (pidfd) has ended");
			return -1;
		}
	} else if (!ctl_client__same_pidns(c)) {
		snprintf(line, size, "ERR your pid namespace is not precordd's: pass the process as a "
			 "pidfd (precord ctl does)");
		return -1;
	} else {
		/* Hold the process by a pidfd across the event opening: if the pid were reused
		 * meanwhile, the pidfd tells. */
		j->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (j->pidfd < 0) {
			snprintf(line, size, "ERR no process %d", (int)pid);
			return -1;
		}
	}
	j->pids = malloc(sizeof(pid_t));
	if (!j->pids) {
		snprintf(line, size, "ERR out of memory");
		return -1;
	}
	j->pids[0] = pid;
	j->nr_pids = 1;
	return 0;
}

/* Set up and start j's recording with ro (targets set), into an unlinked file. Returns 0, or
 * -1 with the ERR line in line. */
static int job_record(struct daemon *d, struct job *j, const struct ctl_peer *peer,
		      struct record_opts *ro, char *line, size_t size)
{
	char dir[PATH_MAX], why[PATH_MAX + 200];
	int err;

	ro->max_fds = job_max_fds(d);
	/* the data of one may not pass the control recordings' share (enforce_budget) */
	ro->max_size = d->cfg.max_total_size / 4;
	ro->max_size_remedy = "a recording may hold a quarter of max_total_size in precordd.conf, "
			      "which its administrator can raise";
	if (job_creds(j, peer, ro) < 0) {
		snprintf(line, size, "ERR out of memory");
		return -1;
	}
	if (retention__control_dir(d, dir, sizeof(dir), why, sizeof(why)) < 0) {
		daemon__log(d, LOG_ERR, "control: %s", why);
		snprintf(line, size, "ERR precordd cannot record now: its directory for control "
			 "recordings is unsafe (its log says why)");
		return -1;
	}
	snprintf(j->path, sizeof(j->path), "%.3900s/ctl-%u-%llu.data", dir, (unsigned int)peer->uid,
		 (unsigned long long)++d->ctl_count);
	ro->output = j->path;
	j->rec = record__new();
	if (!j->rec) {
		snprintf(line, size, "ERR cannot start a recording: %s", strerror(errno));
		return -1;
	}
	err = record__setup(j->rec, ro);
	if (!err)
		err = record__start(j->rec);
	if (err && j->creds && (err == -EACCES || err == -EPERM)) {
		/* not record__error's advice, which is for whoever runs precord (the daemon is
		 * root: "even as root", "grant CAP_PERFMON") */
		snprintf(line, size, "ERR the kernel refused: a user may record only processes it "
			 "could ptrace (its own, not set-uid or set-gid ones, nor ones that changed "
			 "user), and kernel.perf_event_paranoid is %ld (above 2, users record "
			 "nothing)", creds__paranoid());
		return -1;
	}
	if (err) {
		snprintf(line, size, "ERR %s", record__error(j->rec));
		return -1;
	}
	if (j->pidfd >= 0 && !pidfd_alive(j->pidfd)) {
		snprintf(line, size, "ERR process %d ended before recording began", (int)j->pids[0]);
		return -1;
	}
	/* The file is passed by fd: unlink it now, nothing else will ever see it. */
	j->fd = open(j->path, O_RDONLY | O_CLOEXEC);
	if (j->fd < 0) {
		snprintf(line, size, "ERR cannot open %s: %s", j->path, strerror(errno));
		return -1;
	}
	unlink(j->path);
	j->path[0] = 0;
	return 0;
}

void jobs__start(struct daemon *d, struct ctl_client *c, const struct ctl_request *req)
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
		.notice = session__notice,
		.notice_ctx = d,
	};
	char line[CTL_MAX_LINE];
	struct ctl_peer now = *peer;  /* authorized again below; the check keeps its reason here */
	uint64_t duration = req->duration_ms ? req->duration_ms : d->cfg.control_max_duration_ms;

	if (d->nr_jobs + d->nr_handovers >= d->cfg.control_max_sessions ||
	    d->nr_jobs >= MAX_JOBS) {
		ctl_client__finish(c, "ERR busy: too many recordings at once, try again later", -1);
		return;
	}
	if (peer->uid != 0 && jobs_of_uid(d, peer->uid) >= uid_max_jobs(d)) {
		snprintf(line, sizeof(line), "ERR busy: your uid already has %zu recordings, the most "
			 "one user may hold (half of control_max_sessions, which is %u, so that "
			 "others get theirs); try again when one has ended", uid_max_jobs(d),
			 (unsigned int)d->cfg.control_max_sessions);
		daemon__log(d, LOG_NOTICE, "control: refused a recording for uid %u: it holds its "
			    "share of recordings", (unsigned int)peer->uid);
		ctl_client__finish(c, line, -1);
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
	if (job_target(j, c, req, line, sizeof(line)) < 0)
		goto refuse;
	/* membership may have changed with a reload since the server checked */
	if (ctl__authorize(&now, d->cfg.socket_gid, req)) {
		snprintf(line, sizeof(line), "ERR %s", ctl__peer_error(&now));
		goto refuse;
	}
	ro.pids = j->pids;
	ro.nr_pids = j->nr_pids;
	if (job_record(d, j, peer, &ro, line, sizeof(line)) < 0)
		goto refuse;
	j->deadline_ms = clock__ms() + duration;
	d->nr_jobs++;
	snprintf(line, sizeof(line), "STARTED pid=%d processes=%zu duration_ms=%llu",
		 (int)j->pids[0], j->nr_pids, (unsigned long long)duration);
	if (ctl_client__send(c, line) < 0) {
		/* it will not read the result either */
		jobs__finish(d, d->nr_jobs - 1, "client-gone");
		return;
	}
	daemon__log(d, LOG_INFO, "control: recording %s%d for uid %u, %llu ms%s",
		    req->pid ? "pid " : "cgroup with pid ", (int)j->pids[0],
		    (unsigned int)peer->uid, (unsigned long long)duration,
		    req->lossless ? ", lossless" : "");
	return;
refuse:
	daemon__log(d, LOG_NOTICE, "control: refused a recording for uid %u: %s",
		    (unsigned int)peer->uid, line + 4);
	job_free(j);
	ctl_client__finish(c, line, -1);
}

void jobs__gone(void *ctx, struct ctl_client *c, bool orderly)
{
	struct daemon *d = ctx;

	for (size_t i = 0; i < d->nr_jobs; i++) {
		if (d->jobs[i].client != c)
			continue;
		if (orderly) {
			/* `precord ctl record` interrupted: stop early, hand over what there is */
			jobs__finish(d, i, "stopped-early-by-the-caller");
			return;
		}
		daemon__log(d, LOG_NOTICE, "control: client of uid %u misbehaved, its recording is "
				     "dropped", (unsigned int)ctl_client__peer(c)->uid);
		record__stop(d->jobs[i].rec);
		jobs__remove(d, i);
		return;
	}
}

/* The recordings asked over the socket together may hold a quarter of the disk budget (they
 * are written in the output directory until handed over, and held there until the copy to
 * the client ends): past that, the largest running one is stopped early and handed over, so
 * that no client can fill the disk or crowd out the history. One
 * alone cannot outgrow the quarter between two looks: its writer refuses what would (counted
 * lost, see job_record), and it is stopped at the next look. */
static void enforce_budget(struct daemon *d)
{
	uint64_t limit = d->cfg.max_total_size / 4, total = handover__bytes(d), largest = 0;
	size_t big = 0;

	for (size_t i = 0; i < d->nr_jobs;) {
		struct record_stats st;

		record__stats(d->jobs[i].rec, &st);
		if (!st.limit_hit) {
			i++;
			continue;
		}
		daemon__log(d, LOG_NOTICE, "control: a recording reached a quarter of "
			    "max_total_size: it stops early");
		jobs__finish(d, i, "stopped-at-the-control-budget");
	}
	for (size_t i = 0; i < d->nr_jobs; i++) {
		uint64_t b = retention__size_of_fd(d->jobs[i].fd);

		total += b;
		if (b >= largest) {
			largest = b;
			big = i;
		}
	}
	if (d->nr_jobs && total > limit) {
		daemon__log(d, LOG_NOTICE, "control: recordings hold %llu bytes, above a quarter of "
			    "max_total_size: the largest stops early",
			    (unsigned long long)total);
		jobs__finish(d, big, "stopped-at-the-control-budget");
	}
}

uint64_t jobs__bytes(const struct daemon *d)
{
	uint64_t total = handover__bytes(d);

	for (size_t i = 0; i < d->nr_jobs; i++)
		total += retention__size_of_fd(d->jobs[i].fd);
	return total;
}

void jobs__tick(struct daemon *d)
{
	uint64_t now = clock__ms();

	handover__pump(d);
	enforce_budget(d);
	for (size_t i = 0; i < d->nr_jobs;) {
		struct job *j = &d->jobs[i];
		int r = record__poll(j->rec, 0);

		if (r == 1) {
			jobs__finish(d, i, "target-ended");
			continue;
		}
		if (now >= j->deadline_ms) {
			jobs__finish(d, i, NULL);
			continue;
		}
		i++;
	}
}
