/* precordd's conversions in processes of their own. The files a conversion reads belong to the
 * profiled programs (a mapped file truncated under it, an ELF file crafted to unwind forever),
 * so each runs as a fresh precordd, executed again with a hidden first argument: a copy of no
 * thread and no lock of the service (a fork() of the multithreaded service that went on without
 * exec could block forever on a lock another thread held), with its own limits, killed when it
 * stops making progress or the service stops. The child writes why it failed to fd 3. */
#ifndef PRECORD_DAEMON_ISOLATE_H
#define PRECORD_DAEMON_ISOLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

/* argv[1] of a child; precordd's main hands such a command line to isolate__child_main. */
#define ISOLATE_ARG "--isolated-child"
/* The child's fd for its reason (shorter than PIPE_BUF: one write). */
#define ISOLATE_WHY_FD 3

struct isolate_job {
	const char *what;            /* "converting", "unwinding": "the WHAT process died ..." */
	const char *const *args;     /* the kind, then its arguments; NULL-terminated */
	rlim_t cpu_s;                /* RLIMIT_CPU (0: none) */
	rlim_t fsize;                /* RLIMIT_FSIZE (0: none) */
	mode_t umask;
	unsigned int stall_ms;       /* kill it after this long without CPU time */
	const bool *stop;            /* read atomically: when it turns true, kill the child */
};

/* The program run as a child: /proc/self/exe unless set (the unit tests, whose own binary is
 * not precordd, name the one they built). path is not copied. */
void isolate__set_program(const char *path);

/* Run the job and wait for it. Returns 0 when it exited 0; -STATUS when it exited STATUS, with
 * its reason (if it wrote one) in why; -ECHILD when it died of a signal, -ETIMEDOUT when it was
 * killed for making no progress, -ECANCELED when stopped, -errno when it could not start: in
 * those, why says what happened. */
int isolate__run(const struct isolate_job *j, char *why, size_t why_size);

/* A child's side: one kind and the function that does it, with the arguments after the kind
 * (argc counts them). It returns an exit status (0 or an errno) and may write its reason to
 * ISOLATE_WHY_FD. */
struct isolate_kind {
	const char *name;
	int (*main)(int argc, char **argv);
};

/* argv is "precordd ISOLATE_ARG KIND ARGS...": run KIND from kinds (NULL-terminated by name)
 * and return its exit status; 2 with a message on stderr for an unknown kind. */
int isolate__child_main(int argc, char **argv, const struct isolate_kind *kinds);

#endif
