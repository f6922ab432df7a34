/* Unwinding once, into the file: a copy of a perf.data whose DWARF samples (user registers and a
 * stack copy) become samples with whole call chains (kernel part as recorded, then the user
 * frames unwound here), as frame-pointer recordings carry them. perf report, hotspot and preport
 * read the copy without unwinding; it is a fraction of the size (no stack copies) and stays
 * readable when the recorded programs' unwind tables are gone. Side-band records no sample needs
 * are left out: mappings of data (no call chain points into them), and the mappings, names,
 * forks and exits of tasks that were never sampled and that no sampled task inherited from. Records
 * come out in time order, in zstd frames (COMPRESSED records) when asked, with FINISHED_ROUND
 * after each. Like perf inject, for precordd's rotations and `preport --unwind-to`. */
#ifndef PRECORD_REPORT_INJECT_H
#define PRECORD_REPORT_INJECT_H

#include <stdint.h>

struct inject_opts {
	int comp_level;             /* zstd level of the copy, 0: records uncompressed */
	unsigned int jobs;          /* unwinding threads; 0: online CPUs */
};

struct inject_stats {
	uint64_t samples;           /* samples written */
	uint64_t unwound;           /* of them, turned from stacks into call chains */
	uint64_t records;           /* other records written */
	uint64_t dropped;           /* records left out: data mappings, unsampled tasks' records */
	uint64_t bytes_in, bytes_out; /* file sizes */
};

struct inject;

/* Errors: every function that fails returns -errno and leaves the reason, naming the file, in
 * inject__error() (see README, "How it works"). */

/* An injector. Returns NULL with errno ENOMEM (the only failure: nothing to explain). */
struct inject *inject__new(void);

/* Write out_path (created 0600, replaced) from in_path. opts and ret_stats may be NULL.
 * Returns 0; -EINVAL when in_path has no attr with a stack copy (nothing to unwind: the copy
 * would be the same) or is not a perf.data file; -EBADMSG when it is damaged (out_path is not
 * left behind); or -errno of reading, writing or memory. */
int inject__unwind(struct inject *in, const char *in_path, const char *out_path,
		   const struct inject_opts *opts, struct inject_stats *ret_stats);

/* The last failure of inject__unwind, naming the file; "" if none. */
const char *inject__error(const struct inject *in);

/* NULL is a no-op. */
void inject__free(struct inject *in);

#endif
