/* perf's --time: which samples a report covers, as time ranges. The argument is either ranges
 * of absolute times in seconds ("start,stop", either side may be empty, several separated by
 * spaces: "1234.5,1234.6 1240,") or shares of the recording ("10%/2": the second tenth;
 * "0%-10%,30%-40%"), the latter relative to the recording's first and last sample times. */
#ifndef PRECORD_REPORT_TIMERANGE_H
#define PRECORD_REPORT_TIMERANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct time_range {
	uint64_t start, end;    /* ns, both inclusive; end UINT64_MAX: open */
};

/* Parse arg into *ret_ranges (malloc'd, sorted as given) and *ret_nr. first and last are the
 * recording's first and last sample times, needed for percentages (0, 0: unknown). Returns 0,
 * -EINVAL (malformed, start after stop, a percent outside 0..100), -ENODATA (percentages but
 * first/last unknown) or -ENOMEM; nothing is stored on failure. */
int time_ranges__parse(const char *arg, uint64_t first, uint64_t last,
		       struct time_range **ret_ranges, size_t *ret_nr);

/* Whether t falls in one of the ranges (nr 0: every time does). */
bool time_ranges__contains(const struct time_range *r, size_t nr, uint64_t t);

#endif
