/* The service manager's notify protocol, implemented directly so precordd needs no libsystemd:
 * one datagram of "KEY=VALUE" lines to the AF_UNIX socket named by $NOTIFY_SOCKET (a path, or
 * an abstract name written with a leading '@'). Without $NOTIFY_SOCKET every call does nothing
 * and succeeds, so the daemon runs the same with or without systemd. */
#ifndef PRECORD_SDNOTIFY_H
#define PRECORD_SDNOTIFY_H

#include <stdbool.h>
#include <stdint.h>

/* Send state (e.g. "READY=1\nSTATUS=recording") to socket, a $NOTIFY_SOCKET-style name.
 * Returns 1 when sent, -EINVAL for a name that is neither absolute nor '@'-abstract (or too
 * long), -errno of sending. */
int sdnotify__send_to(const char *socket, const char *state);

/* The same to $NOTIFY_SOCKET; returns 0 (nothing sent) when it is unset or empty. */
int sdnotify__send(const char *state);

/* printf-style sdnotify__send; a state longer than 4 KiB is cut at a line end. */
int sdnotify__sendf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "READY=1" plus a STATUS= line when status is not NULL. */
int sdnotify__ready(const char *status);

/* "STATUS=..." with newlines in status replaced by spaces (it must stay one line). */
int sdnotify__status(const char *status);

/* "RELOADING=1" and "MONOTONIC_USEC=" the CLOCK_MONOTONIC time now, as a reload begins. */
int sdnotify__reloading(void);

/* "STOPPING=1". */
int sdnotify__stopping(void);

/* "WATCHDOG=1". */
int sdnotify__watchdog(void);

/* The watchdog interval the manager asked for ($WATCHDOG_USEC, for this process when
 * $WATCHDOG_PID is set): >0 microseconds, 0 when none is asked (or the variables are bad).
 * Ping at half of it. */
uint64_t sdnotify__watchdog_usec(void);

#endif
