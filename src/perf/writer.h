/* Writes perf.data (PERFILE2) as perf 6.1 reads it: header, attrs with their ids, the data
 * section appended by many threads through one lock, then feature sections at finalize. The
 * header's data size is rewritten by perf_writer__sync() at a record boundary, so a recorder
 * killed at any moment leaves a file whose flushed part a reader can recover. */
#ifndef PRECORD_PERF_WRITER_H
#define PRECORD_PERF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <linux/perf_event.h>

#include "perf/abi.h"

/* The VERSION feature reads "precord " PRECORD_VERSION. */
struct perf_writer;
struct creds;

struct perf_writer_event {
	const char *name;                   /* "cpu-clock"; goes into EVENT_DESC */
	const struct perf_event_attr *attr; /* written with size PERF_FILE_ATTR_SIZE; bytes past it
					     * (newer kernel fields) are dropped */
	const uint64_t *ids;                /* kernel ids of this event's fds (PERF_EVENT_IOC_ID) */
	size_t nr_ids;
};

struct perf_writer_opts {
	const struct perf_writer_event *events;
	size_t nr_events;
	int argc;            /* CMDLINE feature, written as given (0: no CMDLINE) */
	char *const *argv;
	int comp_level;      /* 0: no compression; else the COMPRESSED feature is written */
	size_t comp_mmap_len;/* COMPRESSED feature's mmap_len: largest decompressed size per record
			      * (0: COMPRESS_MAX_DECOMPRESSED) */
	bool keep_old;       /* rename an existing file to FILE.old (perf's behaviour) */
	const void *tracing_data; /* TRACING_DATA feature payload (tracepoint formats), copied; */
	size_t tracing_len;       /* 0: none */
	/* Mapped files are read for their build ids with these credentials (creds__run); the
	 * caller keeps them while the writer lives. NULL: the caller's. */
	const struct creds *creds;
	/* A file rewritten from another (preport --repair): no feature describes this machine or
	 * reads its files. The features are those given with perf_writer__set_feature and
	 * perf_writer__add_build_id, EVENT_DESC (when every event has a name), SAMPLE_TIME (from
	 * perf_writer__note_time), TRACING_DATA and COMPRESSED as usual, and the private sections. */
	bool copy_only;
	/* The CLOCKID and CLOCK_DATA features (the events' use_clockid clock and the wall clock
	 * at one moment), copied; NULL: none. */
	const struct perf_clock_ref *clock;
	/* The most data (bytes after the attrs, as perf_writer__data_size counts them) appends
	 * may bring: one that would go past it fails with -EFBIG and nothing written, and
	 * perf_writer__limit_hit() says so from then on. The closing records still fit. 0: none. */
	uint64_t max_data_size;
	/* perf's build-id cache (perf/buildid_cache.h) to add each file with a build id to, at
	 * finalize, as perf record does; NULL: none. */
	const char *buildid_cache;
};

/* Create path (O_CLOEXEC, 0600 like perf), write the header and attrs and allocate the space
 * the file's end needs (see perf_writer__append_closing). Returns NULL with errno set: EINVAL for bad opts (no event, a NULL attr, several events without
 * PERF_SAMPLE_IDENTIFIER/ID or disagreeing on sample_id_all/read_format), or the errno of
 * creating the file (ESPIPE, or EISDIR, when path is there and not a regular file: it is left
 * alone). A non-empty existing file is renamed to path.old first when keep_old is set,
 * otherwise truncated. When the header or the space for the end cannot be written (a full
 * disk), the new file is removed and the old one renamed back. */
struct perf_writer *perf_writer__open(const char *path, const struct perf_writer_opts *opts);

/* Append whole records (iov[i] may hold many) atomically with respect to other appenders.
 * Thread-safe: one lock around one pwritev. The space for the records and for the end of the
 * file is allocated first, so a full disk fails here, with nothing written. Returns 0 or -errno
 * (the file then stays as it was before the call: a short write is rolled back); -EINVAL after
 * finalize. Note that a file
 * size limit (RLIMIT_FSIZE) also raises SIGXFSZ, which the program must ignore to see -EFBIG. */
int perf_writer__append(struct perf_writer *w, const struct iovec *iov, int iovcnt);

/* An append was refused for max_data_size (it stays refused: the limit was reached). */
bool perf_writer__limit_hit(const struct perf_writer *w);

/* The same for the records that close a recording (lost counts, ...), which may use the space
 * every append keeps free past the data (256 KiB, also for the feature sections): on a full disk
 * perf_writer__append fails with -ENOSPC (or -EDQUOT, -EFBIG) and nothing written, while these
 * still fit. */
int perf_writer__append_closing(struct perf_writer *w, const struct iovec *iov, int iovcnt);

/* Reader-pass bookkeeping for PERF_RECORD_FINISHED_ROUND: reader `slot` (0..nr_slots-1, set by
 * perf_writer__set_round_slots) tells that a drain pass it began when perf_writer__round()
 * returned `started` has been appended. Once every slot has completed a pass begun after the
 * last round marker, a marker is appended (skipped, but the round still advances, when nothing
 * was appended since the last marker). A reader calls round() before it looks at its rings and
 * pass_done() after its appends. Thread-safe; returns 0 or -errno (-EINVAL for a bad slot, no
 * slots set, or after finalize; -errno of writing the marker, retried at the next pass_done).
 * set_round_slots may be called again to change the number of readers; it restarts the round. */
int perf_writer__set_round_slots(struct perf_writer *w, unsigned int nr_slots);
uint64_t perf_writer__round(struct perf_writer *w);
int perf_writer__pass_done(struct perf_writer *w, unsigned int slot, uint64_t started);

/* Note a sample time for SAMPLE_TIME (first/last); thread-safe, cheap. */
void perf_writer__note_time(struct perf_writer *w, uint64_t first, uint64_t last);
/* Record compression totals for the COMPRESSED feature's ratio and the summary. */
void perf_writer__note_compression(struct perf_writer *w, uint64_t raw, uint64_t compressed);
/* Register a DSO seen in an MMAP2 record so BUILD_ID can be written at finalize (only ids that
 * can be read correctly from the file on disk are written; the file is read at finalize).
 * kernel with a path starting "[kernel.kallsyms]" stands for the running kernel (id from
 * /sys/kernel/notes); other kernel paths (modules) are skipped. Duplicates are ignored, and so
 * is every new path once 16384 or 8 MiB of paths are registered (a process may map files under
 * endless new paths). Returns 0 or -ENOMEM. */
int perf_writer__add_dso(struct perf_writer *w, const char *path, bool kernel);
/* Register the DSO that an MMAP or MMAP2 record maps, when BUILD_ID may name it: an executable
 * mapping of a file, "[vdso]" (id read from the recorder's own vDSO) or the kernel's
 * "[kernel.kallsyms]" map. Other records are ignored. Returns 0 or -ENOMEM. */
int perf_writer__note_mmap(struct perf_writer *w, const struct perf_event_header *h);

/* copy_only: the payload of perf feature `bit` (not EVENT_DESC, SAMPLE_TIME, COMPRESSED,
 * TRACING_DATA or BUILD_ID, which the writer makes), copied, written at finalize in its place
 * among the others. The caller vouches for its encoding. Returns 0, -EINVAL (bad bit, or not
 * copy_only) or -ENOMEM. */
int perf_writer__set_feature(struct perf_writer *w, int bit, const void *data, size_t len);

/* copy_only: a BUILD_ID entry, written as given (kernel: cpumode KERNEL, else USER). Returns 0,
 * -EINVAL (not copy_only, id_len above 20) or -ENOMEM. */
int perf_writer__add_build_id(struct perf_writer *w, const char *path, bool kernel,
			      const uint8_t *id, size_t id_len);

/* Private sections a writer holds at most. */
#define PRIVATE_MAX 4

/* Set the payload of private section `tag` (non-zero), the iovcnt pieces of iov one after the
 * other (copied), written at finalize in the file's trailer after perf's features (see
 * PERF_TRAILER_MAGIC; perf never reads it), by ascending tag. A later call for the same tag
 * replaces its payload. Returns 0, -EINVAL (tag 0, no payload, or PRIVATE_MAX others set) or
 * -ENOMEM. */
int perf_writer__set_private(struct perf_writer *w, uint32_t tag, const struct iovec *iov,
			     int iovcnt);

/* Bring the header's data size up to date (call at least once a second): one pwrite of the
 * header, under the append lock so the size ends on a record boundary; no fsync. A no-op after
 * finalize, and when the size is the one it last wrote. Returns 0 or -errno. */
int perf_writer__sync(struct perf_writer *w);

/* Bytes of data appended so far. */
uint64_t perf_writer__data_size(const struct perf_writer *w);

/* Write the feature sections and the final header, fsync. The writer stays valid (for
 * data_size) but accepts no more appends. Returns 0 or -errno (the same on every later call);
 * if the features cannot be written (a disk fuller than the reserve) the header still gets the
 * data size, with COMPRESSED alone when that fits, else without features. */
int perf_writer__finalize(struct perf_writer *w);

/* A start that failed after the file was opened: the file is removed, unfinished (it holds no
 * recording), the one moved to path.old comes back, and w is freed. */
void perf_writer__discard(struct perf_writer *w);
/* Close (finalizing first if that has not been done), free. NULL is a no-op. */
void perf_writer__free(struct perf_writer *w);

#endif
