/* precordd's export of finished files: each one, once it is in its final form (unwound into call
 * chains when unwind = yes), becomes a pprof profile (report session + pprof writer, with the
 * labels host, unit, comm and pid) written by a child process at the lowest priority, never on
 * the service loop. pprof = yes keeps it beside its file as NAME.pb.gz (deleted with the file);
 * push_url queues it in the spool, OUTPUT_DIR/.push/FROM-UNTIL-NAME.pb.gz (a hard link when it
 * is kept too), from which the same thread pushes to Pyroscope (push.h), oldest first, and
 * retries what failed with a growing delay (1 s doubling to 1 min; a reload retries at once). The spool is bounded by
 * push_spool_size (the oldest profiles are dropped beyond it, and counted) and, with the kept
 * profiles, counted in the disk budget by retention. Recording never waits for any of this. */
#ifndef PRECORD_DAEMON_EXPORT_H
#define PRECORD_DAEMON_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct daemon;
struct dfile;

/* Start the export thread (whatever the configuration says now: a reload may turn export on),
 * clean what a crash left (*.pb.gz.tmp, profiles whose file is gone) and queue the files the
 * previous run finished after its last export (the one closed at its stop). Call once the
 * closed files are counted. Returns 0 or -errno; daemon__error says why. */
int export__start(struct daemon *d);

/* The configuration changed (SIGHUP): the thread takes the new keys before its next job. */
void export__reconfigure(struct daemon *d);

/* Hook at "rotation finished": f (closed, in its final form) is exported when pprof or
 * push_url asks for it. Never blocks: the job is queued (a full queue skips the file, logged). */
void export__file_ready(struct daemon *d, const struct dfile *f);

/* Bytes of the kept profiles and the spool on disk (each file once), for the budget. */
uint64_t export__disk_bytes(struct daemon *d);

/* The file named name (of the output directory) is being deleted: its kept profile goes too.
 * Returns the bytes that freed (0 when the spool still holds the profile). */
uint64_t export__forget(struct daemon *d, const char *name);

/* On the loop's tick: log what the thread has to say. */
void export__tick(struct daemon *d);

/* " exported=N export_failed=N exporting=N export_bytes=N pushed=N push_failed=N
 * push_rejected=N spooled=N spool_bytes=N spool_dropped=N" for the status reply (export_bytes:
 * what the kept profiles and the spool count in the budget). */
void export__status(struct daemon *d, char *buf, size_t size);

/* Stop the thread: a transfer in progress is aborted (its profile stays in the spool), an export
 * in progress is killed (that file is not exported), queued ones are dropped. */
void export__stop(struct daemon *d);

/* The conversion's process (precordd ISOLATE_ARG export DATA TMP HOST FROM UNTIL, see
 * isolate.h): returns its exit status. */
int export__child_main(int argc, char **argv);

#endif
