/* precordd's service loop: continuous recording into a series of files rotated by size and
 * time and pruned oldest-first to a disk budget, the control socket with its own record
 * sessions, and the service manager's notify protocol. One thread runs it all (the record
 * sessions' readers run on their own threads); signals arrive through a signalfd:
 * SIGTERM/SIGINT end it with every file finalized, SIGHUP reloads the configuration. */
#ifndef PRECORD_DAEMON_H
#define PRECORD_DAEMON_H

struct daemon;

struct daemon_opts {
	const char *config_path;
	/* Messages for the log (priority as in syslog.h), from the daemon's thread. */
	void (*log)(void *ctx, int priority, const char *msg);
	void *log_ctx;
};

/* Errors: every function that fails returns -errno and leaves the reason in daemon__error()
 * (see README, "How it works"). */

/* A daemon that will read opts->config_path (NULL: CONFIG_DEFAULT_PATH). Returns NULL with
 * errno ENOMEM (the only failure: nothing to explain). */
struct daemon *daemon__new(const struct daemon_opts *opts);

/* Load and check the configuration, prepare the output directory (counting the files already
 * there against the budget). Nothing is recorded yet. Returns 0, -EINVAL for a bad
 * configuration (the reason names the file and line), -EBUSY when called twice, or another
 * -errno of reading the file or preparing the directory. */
int daemon__setup(struct daemon *d);

/* Block SIGTERM, SIGINT and SIGHUP (call before any other thread exists), start recording and
 * the control socket, tell the manager READY=1, and serve until SIGTERM or SIGINT. Returns 0
 * after a clean stop (every file finalized), -EINVAL before daemon__setup, or -errno when
 * recording could not start or the loop failed. */
int daemon__run(struct daemon *d);

struct daemon_config;

/* Whether the continuous session of c could be set up (its events exist, its rate and CPUs are
 * accepted); nothing is opened or created. Returns 0, or -errno with the reason in
 * config__error(c). For --check, and for a reload before the running session is stopped. */
int daemon__check_recording(struct daemon_config *c);

/* The reason of the last failure, "" if none. */
const char *daemon__error(const struct daemon *d);

/* Stops what still runs (files are finalized) and frees. NULL is a no-op. */
void daemon__free(struct daemon *d);

#endif
