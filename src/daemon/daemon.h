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

/* Load and check the configuration, prepare the output directory (counting the files already
 * there against the budget). Nothing is recorded yet. Returns NULL with errno set and the
 * reason in *ret_msg (malloc'd): a configuration error names the file and line. */
struct daemon *daemon__new(const struct daemon_opts *opts, char **ret_msg);

/* Block SIGTERM, SIGINT and SIGHUP (call before any other thread exists), start recording and
 * the control socket, tell the manager READY=1, and serve until SIGTERM or SIGINT. Returns 0
 * after a clean stop (every file finalized), or -errno when recording could not start or the
 * loop failed; daemon__error() says why. */
int daemon__run(struct daemon *d);

struct daemon_config;

/* Whether the continuous session of c could be set up (its events exist, its rate and CPUs are
 * accepted); nothing is opened or created. Returns 0, or -errno with the reason in *ret_msg
 * (malloc'd). For --check, and for a reload before the running session is stopped. */
int daemon__check_recording(const struct daemon_config *c, char **ret_msg);

/* The reason of the last failure, "" if none. */
const char *daemon__error(const struct daemon *d);

/* Stops what still runs (files are finalized) and frees. NULL is a no-op. */
void daemon__free(struct daemon *d);

#endif
