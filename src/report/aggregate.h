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

/* Convert a session sample's frames (at most max) into out, as the report names them: callers
 * at their return address - 1, dsos by their short name. Strings point into the machine's
 * dsos and symbols. Returns the number written. */
size_t report_frames__from_unwind(const struct report_session_sample *s, struct report_frame *out,
				  size_t max);

enum report_inline {
	REPORT_INLINE_NONE,       /* --no-inline */
	REPORT_INLINE_LEAF_FIRST, /* perf resolving a callee-ordered chain */
	REPORT_INLINE_ROOT_FIRST, /* a caller-ordered one (-g caller, --children by default) */
};

/* The same with perf's inlined frames: each frame of a user-space symbol whose DWARF covers it
 * becomes the frames perf makes of its address (addr2line's records, innermost first, each
 * "expanded", the ones not named like the symbol "inlined"). *ret_self (may be NULL) gets the
 * leaf as it is: perf's sample symbol, the Self row. Must be called in sample order from one
 * thread, with the order the chain is shown in: addr2line's names depend on the order it is
 * asked in, and perf asks in that order. */
size_t report_frames__from_unwind_inline(const struct report_session_sample *s,
					 enum report_inline inlines, struct report_frame *out,
					 size_t max, struct report_frame *ret_self);

void report_set__free(struct report_set *rs);

#endif
