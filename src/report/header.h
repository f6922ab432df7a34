/* The recording's header as perf 6.1's `perf report --header-only` prints it (without -I): the
 * file header's numbers, then each feature the file has, in feature-bit order, in perf's words
 * (the topologies and caches abbreviated as perf abbreviates them), then the features missing. */
#ifndef PRECORD_REPORT_HEADER_H
#define PRECORD_REPORT_HEADER_H

#include <stdio.h>

struct perf_reader;

/* Print the header of the file r has open to f, from "# ========" to the closing "#". A feature
 * section that cannot be decoded is left out (EVENT_DESC's says so, as perf does). A pipe-mode
 * stream prints as perf prints one: the header's numbers as zeros, the closing lines, then the
 * features it carried. Returns 0, or -EIO when writing to f failed. */
int report__fprintf_header(FILE *f, const struct perf_reader *r);

#endif
