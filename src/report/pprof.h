/* The pprof sink of a report session: gathers resolved samples into pprof's profile.proto
 * (samples with their values and units, locations, functions, mappings with build ids, labels
 * pid, tid, comm and, when the samples carry their cgroup, unit: the systemd unit of the
 * cgroup, or its path when systemd made none, as preport's unit key) and writes it gzip'd, as
 * `go tool pprof` reads it. Identical (stack, pid, tid, comm, unit) samples are merged into one
 * Sample whose values are summed. */
#ifndef PRECORD_REPORT_PPROF_H
#define PRECORD_REPORT_PPROF_H

#include <stdbool.h>

#include "report/session.h"

struct pprof_writer;

/* A writer fed by session s (it adds itself as a sink; s must outlive it until written).
 * Sample values: "samples"/"count", then per event its period ("cpu"/"nanoseconds" for
 * cpu-clock and task-clock, the event's name/"count" otherwise). Filtered samples are left
 * out. Returns NULL with errno ENOMEM. */
struct pprof_writer *pprof_writer__new(struct report_session *s);

/* Event attr's values are times in ns named type (an off-CPU or wall-clock view: "offcpu-time",
 * "wall-time"), and the profile's default sample type. Returns 0 or -ENOMEM. */
int pprof_writer__set_time_view(struct pprof_writer *w, size_t attr, const char *type);

/* Whether locations get the functions inlined at their address as extra lines (the default, as
 * perf's frames) or only their symbol (--no-inline); whether functions are named demangled (the
 * default; their system_name is the file's) or as the file spells them (--no-demangle). Call
 * before the session runs. */
void pprof_writer__set_frames(struct pprof_writer *w, bool inline_frames, bool demangle);

/* A string label key=value on every sample (precordd's host). At most 8; call before writing.
 * Returns 0, -E2BIG or -ENOMEM. */
int pprof_writer__add_label(struct pprof_writer *w, const char *key, const char *value);

/* The profile's time_nanos (wall clock, ns since the epoch) and duration_nanos (-1: the span of
 * the samples' times, the default). */
void pprof_writer__set_time(struct pprof_writer *w, int64_t time_nanos, int64_t duration_nanos);

/* Write the profile gathered so far to path (created or truncated, gzip'd). Returns 0 or
 * -errno (-ENOMEM, or that of creating or writing path). */
int pprof_writer__write(struct pprof_writer *w, const char *path);

/* Number of distinct samples gathered (for tests). */
size_t pprof_writer__nr_samples(const struct pprof_writer *w);

void pprof_writer__free(struct pprof_writer *w);

#endif
