/* Reads any perf.data file (perf record's, with or without -z, or precord's, whose compressed
 * chunks are zstd frames of several threads interleaved): header, attrs and their ids, the
 * features preport needs, and every record in file order or in perf's time order. A damaged or
 * truncated file yields every complete record before the damage, then one {offset, reason};
 * a file left by a killed recorder is recovered by scanning its records. Pipe-mode files are
 * refused. Little-endian files only. */
#ifndef PRECORD_PERF_READER_H
#define PRECORD_PERF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "perf/abi.h"

struct perf_reader;

struct perf_reader_opts {
	/* Memory the time-ordered mode may queue before it delivers the oldest half early
	 * (0: 256 MiB). */
	size_t ordered_max_bytes;
};

/* One attr of the file, copied into a zeroed struct whatever its on-disk size. */
struct perf_reader_attr {
	struct perf_event_attr attr;
	const char *name;     /* from EVENT_DESC, or NULL */
	const uint64_t *ids;  /* kernel ids of this event (may be empty with one attr) */
	size_t nr_ids;
};

struct perf_reader_build_id {
	const char *path;
	uint8_t id[20];
	uint8_t id_len;       /* bytes of id used (20 for SHA-1) */
	uint16_t misc;        /* cpumode and PERF_RECORD_MISC_BUILD_ID_SIZE */
	int32_t pid;
};

/* What the features gave; a feature absent or unreadable leaves its fields NULL / zero and its
 * bit clear in perf_reader__has_feature(). */
struct perf_reader_info {
	const char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;             /* TOTAL_MEM */
	uint64_t clockid_res_ns;           /* CLOCKID: the resolution of the events' clock */
	int cmdline_argc;
	const char *const *cmdline_argv;
	uint64_t first_sample_time, last_sample_time;
	/* a pipe-mode stream's SAMPLE_TIME, written before any sample, was all zeros: left out of
	 * the two above (and of perf_reader__has_feature), as no time at all */
	bool pipe_zero_sample_time;
	bool has_clock;                    /* CLOCK_DATA: sample times convert to wall-clock time */
	struct perf_clock_ref clock;
	uint32_t comp_version, comp_type, comp_level, comp_ratio, comp_mmap_len;
	size_t nr_build_ids;
	const struct perf_reader_build_id *build_ids;
};

/* Where reading stopped short: the file offset of the first record (or feature section) that
 * could not be read, and why. */
struct perf_reader_damage {
	uint64_t offset;
	const char *reason;
};

/* perf_reader__warnings() bits: not damage, but the caller should say so. */
enum {
	/* data.size was 0 or stale (recorder killed): records were found by scanning. */
	PERF_READER_W_RECOVERED = 1 << 0,
	/* The feature index was unusable (recovered file): no feature was read. */
	PERF_READER_W_NO_FEATURES = 1 << 1,
	/* COMPRESSED records without the COMPRESSED feature (perf 6.1 refuses such a file). */
	PERF_READER_W_NO_COMP_FEATURE = 1 << 2,
	/* A pipe-mode stream (perf record -o -), read to its end into memory and rewritten as a
	 * file there: offsets of damage are the stream's. */
	PERF_READER_W_PIPE = 1 << 3,
};

#define PERF_READER_NO_TIME UINT64_MAX

/* A record handed to the callback. */
struct perf_reader_record {
	const struct perf_event_header *hdr; /* 8-byte aligned; valid during the callback only */
	uint64_t offset;   /* file offset of the record, or of the COMPRESSED record that completed it */
	uint64_t time;     /* PERF_READER_NO_TIME when the record carries none */
	struct perf_reader_ref *ref; /* the block holding hdr (decompressed data, or an aligned
				      * copy), NULL when hdr is in the file's mapping */
	int attr_index;    /* attr it belongs to, -1 for perf's own records (type >= 64) or unknown id */
	bool compressed;   /* came out of a COMPRESSED record */
	/* (in this order 40 bytes: a queued record of the time order fills one cache line) */
};

/* Keep rec->hdr valid after the callback returns, without a copy: a reference to the
 * decompressed block that holds it, to give back with perf_reader__release before the reader
 * is freed. Returns NULL when nothing needs holding (rec->ref is NULL: the record lies in the
 * file's mapping, valid until free). Either may be called from any thread (the count is
 * atomic). */
struct perf_reader_ref *perf_reader__hold(const struct perf_reader_record *rec);
/* Give back a reference from perf_reader__hold. NULL is a no-op. */
void perf_reader__release(struct perf_reader_ref *ref);

/* Return 0 to continue; anything else stops the iteration and is returned by it. */
typedef int (*perf_reader_fn)(const struct perf_reader_record *rec, void *ctx);

/* Counts as `perf report --stats` shows them: records by type (COMPRESSED containers and their
 * decompressed content both counted), lost totals. */
struct perf_reader_stats {
	uint64_t total;
	uint64_t nr_by_type[PERF_RECORD_HEADER_MAX];
	uint64_t nr_other;         /* types >= PERF_RECORD_HEADER_MAX */
	uint64_t total_lost;       /* sum of PERF_RECORD_LOST.lost */
	uint64_t total_lost_samples; /* sum of PERF_RECORD_LOST_SAMPLES.lost */
};

/* Errors: every function that fails returns -errno and, where a reason helps, leaves it, naming
 * the file, in perf_reader__error() (see README, "How it works"). */

/* An empty reader with opts (copied; may be NULL). Returns NULL with errno ENOMEM (the only
 * failure: nothing to explain). */
struct perf_reader *perf_reader__new(const struct perf_reader_opts *opts);

/* mmap path ("-": standard input, which must be a regular file) and read its header, attrs,
 * ids and features, and find where its records end. A FIFO or other non-regular file is refused
 * without waiting for a writer. Returns 0 or -errno, perf_reader__error() saying why: -ENOENT
 * etc. from open, -EISDIR, -EINVAL not a perf.data file, -EPROTONOSUPPORT pipe-mode (a pipe or
 * FIFO, or pipe-mode data in a file), non-regular or big-endian file, -EBADMSG header or attrs
 * damaged, -ENOMEM; -EBUSY on a second open (a reader opens one file, once, even when that
 * failed). */
int perf_reader__open(struct perf_reader *r, const char *path);

/* The last failure of open or repair, naming the file ("cannot read PATH: not a perf.data file
 * (bad magic)"); "" if none. Valid until the next call on r. */
const char *perf_reader__error(const struct perf_reader *r);

const struct perf_file_header *perf_reader__header(const struct perf_reader *r);

/* Bytes of the file read: its size, or for a pipe the file it was rewritten as. */
uint64_t perf_reader__size(const struct perf_reader *r);
size_t perf_reader__nr_attrs(const struct perf_reader *r);
/* NULL when idx is out of range. */
const struct perf_reader_attr *perf_reader__attr(const struct perf_reader *r, size_t idx);
/* Index of the attr whose ids include id, or -ENOENT; with one attr always 0. */
int perf_reader__attr_of_id(const struct perf_reader *r, uint64_t id);
/* Index of the attr a record belongs to (by PERF_SAMPLE_IDENTIFIER / ID), -ENOENT when unknown
 * or for perf's own records. rec must be whole (rec->size bytes readable). */
int perf_reader__attr_index(const struct perf_reader *r, const struct perf_event_header *rec);

const struct perf_reader_info *perf_reader__info(const struct perf_reader *r);
/* Whether feature bit (FEAT_*) was present and parsed (or, for features not parsed here, present
 * with a section inside the file). */
bool perf_reader__has_feature(const struct perf_reader *r, int bit);

/* The raw payload of feature section bit (bounds-checked against the file), or NULL when the
 * file has none. Valid until perf_reader__free. */
const void *perf_reader__feature(const struct perf_reader *r, int bit, size_t *ret_len);
/* The payload of precord's private section `tag` (the file's trailer, PERF_TRAILER_MAGIC; or,
 * as earlier precord versions wrote it, feature bit `tag` above perf's), or NULL. Valid until
 * perf_reader__free. */
const void *perf_reader__private(const struct perf_reader *r, uint32_t tag, size_t *ret_len);
unsigned int perf_reader__warnings(const struct perf_reader *r);
/* The file's modification time (what perf report --header shows as "captured on"); for a pipe,
 * the pipe's when it was opened. 0 before open. */
int64_t perf_reader__mtime(const struct perf_reader *r);
/* The earliest damage found so far (by open, or by an iteration that reached it), or NULL. */
const struct perf_reader_damage *perf_reader__damage(const struct perf_reader *r);
/* The damage found in the feature section alone (the header's), or NULL. */
const struct perf_reader_damage *perf_reader__feat_damage(const struct perf_reader *r);

/* Call fn for every record in file order, COMPRESSED records replaced by their content (one
 * zstd stream across them, as perf reads). Stops at damage (see perf_reader__damage()).
 * Returns 0, fn's non-zero value, or -ENOMEM. */
int perf_reader__for_each(struct perf_reader *r, perf_reader_fn fn, void *ctx);

/* The same records in the order perf 6.1 delivers them: records with a time are queued and, at
 * each FINISHED_ROUND, those not later than the largest time seen at the previous round are
 * delivered sorted (ties in file order); the rest at the end. Records without time (or of time
 * 0, which perf takes for none) and perf's own records are delivered when read, FINISHED_ROUND
 * after its flush. Memory holds one round's records (the whole file when it has no rounds),
 * capped by opts.ordered_max_bytes. A file with precord's ring-order claim (perf/ring_order.h)
 * has records delivered earlier too, once no CPU's records to come can be older: the same
 * order, fewer held. Returns like perf_reader__for_each. */
int perf_reader__for_each_ordered(struct perf_reader *r, perf_reader_fn fn, void *ctx);
/* With on, the iterations decode a file's COMPRESSED records on a thread of their own, ahead of
 * the calling thread that delivers them (the callback still runs on the calling thread, and
 * records come in the same order). Where the records carry independent zstd frames (precord's
 * files: one per reader flush), that thread only finds each frame's end and gathers its bytes,
 * and the frames are decoded by both threads: by the decoding one when it is two frames
 * ahead (unless a frame helper does, below), by the calling one when it would otherwise wait.
 * A frame interrupted by a plain record, longer than 16 MiB compressed (perf -z's one frame for
 * the whole file) or that may decode to more than 32 MiB is decoded as one stream, as is the
 * rest of its file. Off (the default), the calling thread does everything. */
void perf_reader__set_decode_thread(struct perf_reader *r, bool on);
/* With on (and a decoding thread; not to be changed during an iteration, which that thread
 * reads it in), that thread leaves the frames ahead of the calling thread to
 * perf_reader__decode_ahead: it only finds and gathers them, and the calling thread decodes any
 * it reaches first. For a caller with threads of its own that are idle at times (preport's
 * unwinding workers between batches): a decoding thread that decoded too was a third busy
 * thread on two CPUs, and -j 2 took 17% longer on precord's files. */
void perf_reader__set_frame_helper(struct perf_reader *r, bool on);
/* Any thread, during an iteration with a decoding thread and a frame helper: decode the next
 * frame nobody decodes yet. False when there was none (or another thread is helping). */
bool perf_reader__decode_ahead(struct perf_reader *r);
/* With fn (NULL: none; not to be changed during an iteration), a decoding thread that would wait
 * for the calling thread to take its records first calls fn(ctx), on itself, until fn returns
 * false: the caller's own work that takes microseconds and needs nothing from this reader (its
 * records already taken). For a caller whose calling thread is the one behind (preport unwinding
 * a perf -z file at -j 2). */
void perf_reader__set_idle_work(struct perf_reader *r, bool (*fn)(void *ctx), void *ctx);
/* True when the file's COMPRESSED records carry one zstd stream rather than independent frames
 * (perf record -z never ends its one frame; precord ends one per reader flush): its first frame
 * is interrupted by a plain record, passes 16 MiB (or 32 MiB decoded), or is not zstd's. Such a
 * file decodes on one thread alone, from start to end. False for a file without COMPRESSED
 * records (or without one in their first 16 MiB). A hint for placing threads: only record and
 * frame headers are read. */
bool perf_reader__one_stream(const struct perf_reader *r);
/* The zstd frames the last iteration decoded apart (0 without a decoding thread). */
uint64_t perf_reader__frame_jobs(const struct perf_reader *r);

/* Records the last ordered iteration queued with a time older than one already delivered
 * (perf's "N out of order events"). */
uint64_t perf_reader__nr_unordered(const struct perf_reader *r);
/* The most bytes of records (and their queue entries) the last ordered iteration held at once. */
size_t perf_reader__peak_queued(const struct perf_reader *r);

/* The counts perf_reader__stats would give, taken by the last for_each or for_each_ordered (or
 * repair, which walks through for_each) as it went (up to where it stopped): no second pass over
 * the file. */
const struct perf_reader_stats *perf_reader__walk_stats(const struct perf_reader *r);

/* Count records (a file-order pass). Returns 0 or -ENOMEM; damage stops the count. */
int perf_reader__stats(struct perf_reader *r, struct perf_reader_stats *ret);
/* perf's name of a record type ("SAMPLE", "FINISHED_ROUND"), or NULL when unknown. */
const char *perf_reader__type_name(uint32_t type);

/* Write out_path (created 0600, replaced if it exists) through the perf.data writer with only
 * what could be decoded and checked: the attrs whose sample_type a kernel defines, whose samples
 * decode and which perf can tell apart; the records before the damage of the types perf 6.1
 * reads, each whole (body, name, sample_id trailer; samples decoded), decompressed, in time
 * order; and the features that were parsed, encoded anew (strings, NRCPUS, CMDLINE, BUILD_ID,
 * EVENT_DESC, SAMPLE_TIME, precord's pause statistics). Returns 0 or -errno; -ENODATA (and no
 * out_path) when not one sample of the sort precedes the damage (perf refuses such a file);
 * -EINVAL when no file is open. perf_reader__error() says why. */
int perf_reader__repair(struct perf_reader *r, const char *out_path);

/* Unmap and free. NULL is a no-op; so is a reader that was never opened, or whose open failed. */
void perf_reader__free(struct perf_reader *r);

#endif
