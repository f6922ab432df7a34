/* The aggregation sink of a report session: one struct report per event of the file, fed with
 * the session's resolved samples (frames converted to report frames as perf names them). The
 * table, call graphs, folded stacks and the flame graph are printed from these reports. */
#ifndef PRECORD_REPORT_AGGREGATE_H
#define PRECORD_REPORT_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>

#include "report/report.h"
#include "report/session.h"

struct report_set;

/* One report per event of s with opts (NULL: perf's defaults); an event recorded without call
 * chains gets no graph and, unless children_set, no Children column, as perf does. Adds itself
 * to s as a sink. Returns NULL with errno set: EINVAL (bad opts), ENOMEM. */
struct report_set *report_set__new(struct report_session *s, const struct report_opts *opts,
				   bool children_set);

size_t report_set__nr(const struct report_set *rs);
/* The report of event idx, NULL when out of range. Owned by the set. */
struct report *report_set__report(struct report_set *rs, size_t idx);

void report_set__free(struct report_set *rs);

#endif
