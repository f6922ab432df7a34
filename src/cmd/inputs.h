/* preport's inputs: -i given once or more, each a perf.data file or a directory whose
 * precord-*.data files (precordd's output: finished files only) are read as one recording. */
#ifndef PRECORD_CMD_INPUTS_H
#define PRECORD_CMD_INPUTS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct inputs {
	char **paths;           /* in the order to read them */
	size_t nr;
	char err[PATH_MAX + 256]; /* inputs__error() */
};

/* Errors: inputs__add returns -errno and leaves the reason, naming the file or directory, in
 * inputs__error() (see README, "How it works"). */

/* Add arg: a file as given, or a directory's precord-*.data files in name order (precordd
 * names them by sequence number). Returns 0; -ENOENT for a directory without any, -errno of
 * reading it, or -ENOMEM. */
int inputs__add(struct inputs *in, const char *arg);

/* The last failure of inputs__add; "" if none. */
const char *inputs__error(const struct inputs *in);

/* Order the files by their first sample's time of day (SAMPLE_TIME and CLOCK_DATA features,
 * which hold across reboots) or, when some file lacks CLOCK_DATA, its sample time; when some
 * file lacks SAMPLE_TIME, keep the given order (and among equals). *ret_first and *ret_last: the earliest
 * first and the latest last sample time (0, 0 when some file lacks them). Files that cannot be
 * opened are left where they are, for the session to name. */
void inputs__sort(struct inputs *in, uint64_t *ret_first, uint64_t *ret_last);

void inputs__free(struct inputs *in);

#endif
