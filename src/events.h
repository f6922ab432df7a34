/* Event names to perf_event_attr: perf's generic names (cycles, cpu-clock, task-clock, ...) and
 * everything libpfm4 knows (PMU-specific events, modifiers such as :u :k), plus the explanations
 * a user needs when perf_event_open refuses one. */
#ifndef PRECORD_EVENTS_H
#define PRECORD_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>

struct evdesc {
	char name[128];               /* canonical name as the user wrote it, e.g. "cycles:u" */
	struct perf_event_attr attr;  /* type, config*, exclude_*; size = sizeof(attr); the
				       * caller sets sampling fields */
};

/* Initialise libpfm4 once (thread-safe; later calls are free). Returns 0 or -errno. */
int events__init(void);

/* Parse one event name. Returns 0, -ENOENT for an unknown event, -EINVAL for a bad modifier.
 * Does not open anything. */
int event__parse(const char *name, struct evdesc *ret);

/* Split a comma-separated list ("cycles,cpu-clock:u") into up to max events, honouring commas
 * inside libpfm4 modifiers. Returns the number parsed or -errno; on -ENOENT/-EINVAL,
 * *ret_bad_index says which item was bad. */
int events__parse_list(const char *list, struct evdesc *ret, size_t max, size_t *ret_bad_index);

/* Up to n known names closest to an unknown one (edit distance), best first, written into
 * ret[i] (each of size len). Returns how many were written. */
size_t event__suggest(const char *name, char (*ret)[64], size_t n);

/* True for events of the hardware PMU (PERF_TYPE_HARDWARE, HW_CACHE, RAW and the cpu PMU)
 * which a machine without a PMU refuses with ENOENT/ENODEV/ENXIO/EOPNOTSUPP. */
bool event__is_hardware(const struct evdesc *ev);

/* perf's fallback for an unavailable hardware cycles-like event: cpu-clock with the same
 * exclude_* modifiers. Returns 0, or -ENOENT when ev has no fallback. */
int event__fallback(const struct evdesc *ev, struct evdesc *ret);

/* Explain why perf_event_open(ev) failed with errno err, naming the event, the reason and the
 * remedy (perf_event_paranoid, CAP_PERFMON, ulimit -n, perf_event_mlock_kb, ...), into buf.
 * Returns buf. */
const char *event__explain_open_error(const struct evdesc *ev, int err, char *buf, size_t len);

#endif
