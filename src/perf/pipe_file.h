/* perf's pipe mode (perf record -o -): a stream that a reader cannot seek, so its header is
 * 16 bytes and everything a file keeps in sections comes as records: the attrs as HEADER_ATTR
 * (with their ids), the features as HEADER_FEATURE (ending with one of FEAT_LAST), tracepoint
 * formats as HEADER_TRACING_DATA (its payload after the record, outside its size), build ids as
 * HEADER_BUILD_ID. Those records need not keep 8-byte alignment. pipe_file rewrites such a
 * stream, from a pipe or a file, as a file-mode perf.data in an unnamed temporary file ($TMPDIR,
 * else /tmp, else a memfd) that the reader then maps like any file; any other stream from a
 * pipe (a file-mode perf.data piped through cat) is copied there as it is. */
#ifndef PRECORD_PERF_PIPE_FILE_H
#define PRECORD_PERF_PIPE_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include "perf/abi.h"

struct pipe_file_result {
	int fd;                 /* the temporary file (O_CLOEXEC), the caller's */
	bool converted;         /* was pipe mode (else copied as it is) */
	const char *damage;     /* the stream ended inside a record or its sizes were wrong
				 * (what came before is kept), NULL when it ended cleanly */
	uint64_t damage_off;    /* where, in the stream */
	uint64_t dropped;       /* records left out: pipe-only ones a file has no place for */
	bool zero_sample_time;  /* a SAMPLE_TIME of zeros (perf's, written before any sample) was
				 * left out */
	/* the pipe-mode records taken out of the stream (HEADER_ATTR, HEADER_FEATURE, ...), by
	 * type, for the counts perf report --stats gives */
	uint64_t nr_header[PERF_RECORD_HEADER_MAX - PERF_RECORD_USER_TYPE_START];
};

/* Read fd (positioned at the stream's start) to its end. Returns 0 with *ret filled, or -errno
 * with *reason set where strerror would not say enough (not a perf.data stream, no attr, or a
 * memory file that cannot be made). */
int pipe_file__load(int fd, struct pipe_file_result *ret, const char **reason);

#endif
