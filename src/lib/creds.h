/* Work done with another user's credentials: precordd opens a client's perf events and reads
 * its processes' /proc files and mapped files as that client, so that the kernel, not
 * precordd, decides what the client may see. The switch is made on a short-lived thread by
 * raw syscalls, which change only that thread (glibc's setuid() would change every thread);
 * the daemon's other threads keep their privileges, and the thread ends with the work. */
#ifndef PRECORD_CREDS_H
#define PRECORD_CREDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CREDS_MAX_GROUPS 256

struct creds {
	uid_t uid;                        /* real, effective, saved and filesystem uid */
	gid_t gid;                        /* the same for the gids */
	gid_t groups[CREDS_MAX_GROUPS];   /* supplementary groups */
	size_t nr_groups;
	bool perfmon;                     /* keep CAP_PERFMON (and nothing else): only for a
					   * client that holds it itself, since perf_event_open
					   * skips its ptrace check for a CAP_PERFMON caller */
};

/* Run fn(arg) on a new thread that holds exactly c's credentials: every uid c->uid, every
 * gid c->gid, c->groups, and no capability but CAP_PERFMON when c->perfmon. Waits for it.
 * Returns fn's result, or -errno when the thread could not be made or could not take c's
 * credentials (fn is then not called: nothing runs with more than c allows). A NULL c runs
 * fn on the calling thread. fn must not start threads that outlive it. */
int creds__run(const struct creds *c, int (*fn)(void *arg), void *arg);

/* Whether a process with c's credentials may record the kernel under perf_event_paranoid
 * paranoid (read by the caller): it may at 1 or below, or when it holds CAP_PERFMON or
 * CAP_SYS_ADMIN (cap_eff, the CapEff mask of /proc/PID/status), or is root. */
bool creds__may_record_kernel(uid_t uid, unsigned long long cap_eff, long paranoid);

/* Whether a client with effective capabilities cap_eff holds CAP_PERFMON or CAP_SYS_ADMIN, so
 * that its work may keep CAP_PERFMON. */
bool creds__has_perfmon(unsigned long long cap_eff);

/* The current perf_event_paranoid (2 when it cannot be read, the kernel's default). */
long creds__paranoid(void);

#endif
