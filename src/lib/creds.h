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
};

/* Run fn(arg) on a new thread that holds exactly c's credentials: every uid c->uid, every
 * gid c->gid, c->groups, and no capability. Waits for it.
 * Returns fn's result, or -errno when the thread could not be made or could not take c's
 * credentials (fn is then not called: nothing runs with more than c allows). A NULL c runs
 * fn on the calling thread. fn must not start threads that outlive it. */
int creds__run(const struct creds *c, int (*fn)(void *arg), void *arg);

/* Whether work run as uid with no capability (creds__run) may record the kernel under
 * perf_event_paranoid paranoid (read by the caller): root may, others at 1 or below. */
bool creds__may_record_kernel(uid_t uid, long paranoid);

/* The current perf_event_paranoid (2 when it cannot be read, the kernel's default). */
long creds__paranoid(void);

#endif
