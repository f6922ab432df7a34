/* What the perf.data reader's two files share: reader.c (open, header, attrs, ids, features,
 * repair) and walk.c (the record walk: COMPRESSED records decoded as one stream or frame by
 * frame, on the calling thread or a decoding thread of their own, delivered in file or time
 * order). Private to src/perf. */
#ifndef PRECORD_PERF_READER_INT_H
#define PRECORD_PERF_READER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
/* zstd's buffer-less decoding API (exported by libzstd.so, declared only with this) */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "perf/features.h"
#include "perf/reader.h"
#include "perf/sample.h"

/* Time-ordered mode queues at most this much (entries and copied records); past it the oldest
 * half is delivered early, as perf does when its ordered-events memory runs out. Bounds memory
 * for files without rounds and for compressed data that decompresses to far more than it takes. */
#define ORDERED_MAX_BYTES ((size_t)256 << 20)
/* Decompressed data goes into blocks of this size; records are delivered pointing into them and
 * a block lives while any record in it is queued or held (perf_reader__hold). A record cut by
 * the end of a block is carried (copied) to the start of the next: at most one per block. */
#define BLOCK_CAP ((size_t)2 << 20)
/* A new block is started when less than this and a zstd block are left: a record is at most
 * 64 KiB. */
#define BLOCK_MIN_ROOM ((size_t)65536)
/* The largest zstd window decoded (zstd's and perf's default limit, ZSTD_WINDOWLOG_LIMIT_DEFAULT). */
#define ZSTD_WINDOW_MAX ((uint64_t)1 << 27)
/* Free blocks kept for reuse (fresh memory costs a page fault per page). Blocks are mapped
 * and unmapped directly, so one not kept is given back at once (from malloc, glibc kept the
 * memory of freed blocks anyway, and a smaller cache cost more). On a perf -z file, whose rounds
 * free blocks in bursts, 4 took 2.5x the page faults of 8; with the decoder up to
 * PIPE_AHEAD_BLOCKS ahead, 6 faulted in 36k-47k pages of a 330k-sample file at -j 2 (0.18 s of
 * system time), 16 21k-23k (0.12-0.16 s) for 2-5 MB more peak memory. */
#define BLOCK_CACHE 16

struct perf_reader_ref {
	struct perf_reader *r;
	atomic_size_t refs;     /* the walk's, queued records', held records' */
	size_t cap;             /* bytes of data */
	bool small;             /* a block of its own size (a misaligned record's copy, a small
				 * frame's): freed, not cached */
	_Alignas(8) uint8_t data[]; /* records are 8-byte aligned */
};

struct id_entry {
	uint64_t id;
	int idx;
};

struct feat_section {
	uint64_t offset, size;
};

struct walk;

struct perf_reader {
	const uint8_t *map;
	size_t len;
	struct perf_file_header hdr;

	struct perf_reader_attr *attrs;
	size_t nr_attrs;
	/* per attr: where its records carry their time and CPU (perf_sample__place) */
	struct attr_places {
		struct perf_sample_place time, cpu;
	} *places;
	uint64_t *ids;
	struct id_entry *id_index;
	size_t nr_id_index;

	/* Records lie in [data_start, data_end); data_end is after the last complete record. */
	uint64_t data_start, data_end;

	struct perf_reader_info info;
	uint64_t feat_ok[4];
	struct feat_section feat[FEAT_BITS];
	/* precord's trailer (PERF_TRAILER_MAGIC): its private sections, the first of each tag */
	struct priv_section {
		uint32_t tag;
		uint64_t offset, size;
	} priv[8];
	size_t nr_priv;
	uint32_t event_desc_attr_size;
	unsigned int warnings;
	int64_t mtime;          /* of the file as opened (a pipe's, not its rewritten file's) */
	/* read from a pipe-mode stream (pipe_file): its header records by type, counted in every
	 * walk's stats as perf counts them, and where it ended inside a record (NULL: cleanly) */
	uint64_t pipe_header[PERF_RECORD_HEADER_MAX - PERF_RECORD_USER_TYPE_START];
	const char *pipe_damage;
	uint64_t pipe_damage_off;

	bool has_data_damage, has_feat_damage;
	struct perf_reader_damage data_damage, feat_damage;
	char reason_buf[128];
	char *path;             /* as given to open, for the reasons (owned) */
	char err[512];          /* perf_reader__error() */

	uint64_t nr_unordered;
	size_t peak_queued;     /* the most bytes the last ordered iteration queued */
	size_t ordered_max_bytes;
	struct perf_reader_stats walk_stats; /* counts of the last iteration */
	uint64_t frame_jobs;    /* zstd frames the last iteration decoded apart */

	/* Kept across walks (a zstd window costs up to megabytes to set up); reset per walk. */
	ZSTD_DStream *ds;
	ZSTD_DCtx *job_ds[3];   /* frame jobs': the decoding, the delivering, a helper thread's */
	pthread_mutex_t block_lock; /* the free blocks and block_cap */
	struct perf_reader_ref *free_blocks[BLOCK_CACHE];
	size_t block_cap;       /* of new blocks: BLOCK_CAP, or more for a larger zstd window */
	size_t nr_free_blocks;
	bool decode_thread;     /* decode COMPRESSED records on a thread of their own */
	bool frame_helper;      /* perf_reader__decode_ahead decodes the frames ahead, not it */
	bool (*idle_fn)(void *ctx); /* perf_reader__set_idle_work */
	void *idle_ctx;
	/* the threaded walk a helper may decode frames for (NULL: none), and whether one is in
	 * it: the walk ends only once no helper is */
	pthread_mutex_t help_lock;
	pthread_cond_t help_cond;
	struct walk *help_walk;
	bool helping;

	/* Everything the features allocated, freed at close. */
	void **allocs;
	size_t nr_allocs, cap_allocs;
};

/* Give back the mapping's whole pages within file bytes [lo, hi) (MADV_DONTNEED on the read-only
 * private mapping: a later read faults the same bytes in again from the page cache). Returns
 * the file offset up to which pages were given back, or lo when none were. */
uint64_t reader__release_pages(const struct perf_reader *r, uint64_t lo, uint64_t hi);

/* The cache of free blocks, unmapped (walk.c). */
void walk_free_blocks(struct perf_reader *r);

static inline uint64_t rd64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t rd32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* *s zeroed, with the records a pipe-mode stream's conversion took out (see pipe_header). */
void reader__stats_init(const struct perf_reader *r, struct perf_reader_stats *s);

/* Damage of the data section at off (the earliest is kept). */
void reader__data_damage(struct perf_reader *r, uint64_t off, const char *reason);

#endif
