/* Kernel tracepoints as perf events: where tracefs is (mounted on demand, as perf does), the id
 * of "subsystem:event", and the tracing-data blob (perf's HEADER_TRACING_DATA, version 0.6) that
 * lets perf script and perf report name the events and decode their raw fields. Names are
 * checked before they become paths: only [A-Za-z0-9_] is accepted. */
#ifndef PRECORD_TRACEFS_H
#define PRECORD_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The tracefs directory ("/sys/kernel/tracing"), mounting tracefs there when it is mounted
 * nowhere (falls back to debugfs's tracing/). Returns a static string, or NULL with errno set
 * (ENOENT: no tracefs in this kernel; EPERM: not allowed to mount it). Thread-safe. */
const char *tracefs__dir(void);

/* Split "sys:name" into its parts (each of [A-Za-z0-9_], at most 63 bytes). Returns 0, or
 * -EINVAL when the text is not of that shape. */
int tracefs__split(const char *spec, char sys[64], char name[64]);

/* The perf config (tracepoint id) of sys:name. Returns 0; -ENOENT when there is no such
 * tracepoint; -EINVAL for a bad name; -errno of finding tracefs or reading the id. */
int tracefs__event_id(const char *sys, const char *name, uint64_t *ret_id);

/* Whether tracefs has the subsystem sys (a directory events/sys): false for a bad name or when
 * tracefs cannot be found. */
bool tracefs__has_system(const char *sys);

/* perf's tracing data for the given "sys:name" tracepoints: header_page, header_event, the
 * format of each event grouped by subsystem, and printk_formats. *ret is malloc'd (free it).
 * Returns 0 or -errno (-EINVAL for a bad name, -errno of reading tracefs, -ENOMEM). */
int tracefs__tracing_data(const char *const *specs, size_t n, void **ret, size_t *ret_len);

#endif
