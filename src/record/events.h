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

/* Parse one event name: perf's generic names with perf's modifiers (:u :k :h :G :H :p.. :D),
 * raw "r1a8", "pmu/config=0x..,term=../" (terms from sysfs format/), else libpfm4 with its own
 * modifiers ("INST_RETIRED:ANY_P:u:c=2"; a trailing perf modifier such as ":pp" also works).
 * Initialises libpfm4 itself. Returns 0, -ENOENT for an unknown event or PMU, -EINVAL for a
 * bad modifier or a name longer than evdesc.name; *ret is untouched on failure. Does not open
 * anything. */
int event__parse(const char *name, struct evdesc *ret);

/* Split a comma-separated list ("cycles,cpu-clock:u") into up to max events, honouring commas
 * inside "pmu/a=1,b=2/" terms. Returns the number parsed or -errno (-EINVAL also for an empty
 * item, -E2BIG for more than max); on error *ret_bad_index says which item was bad. */
int events__parse_list(const char *list, struct evdesc *ret, size_t max, size_t *ret_bad_index);

/* Up to n known names closest to an unknown one (edit distance over perf's generic names and the
 * events of the PMUs libpfm4 detected; modifiers after ':' ignored), best first, written into
 * ret[i]. Returns how many were written (0 when nothing is close). */
size_t event__suggest(const char *name, char (*ret)[64], size_t n);

/* True for events of the hardware PMU (PERF_TYPE_HARDWARE, HW_CACHE, RAW and the cpu PMU)
 * which a machine without a PMU refuses with ENOENT/ENODEV/ENXIO/EOPNOTSUPP. */
bool event__is_hardware(const struct evdesc *ev);

/* perf's fallback for an unavailable hardware cycles-like event (cycles, cpu-cycles, ref-cycles):
 * cpu-clock with the same exclude_* bits, precise_ip cleared, named "cpu-clock:u" etc.
 * Returns 0, or -ENOENT when ev has no fallback. */
int event__fallback(const struct evdesc *ev, struct evdesc *ret);

/* Explain why perf_event_open(ev) failed with errno err, naming the event, the reason and the
 * remedy (perf_event_paranoid, CAP_PERFMON, ulimit -n, perf_event_mlock_kb, ...), into buf.
 * Returns buf. */
const char *event__explain_open_error(const struct evdesc *ev, int err, char *buf, size_t len);

/* Explain why mmap of a ring buffer of `pages` data pages failed with errno err (EPERM: over
 * kernel.perf_event_mlock_kb, ENOMEM, EINVAL...), naming the limit and -m. Returns buf. */
const char *events__explain_mmap_error(int err, size_t pages, char *buf, size_t len);

#endif
