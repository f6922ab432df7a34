/* precord --lossless's pause accounting as it travels in perf.data: a private section (tag
 * PAUSE_STATS_TAG of the file's trailer, which perf never reads; earlier files carry it as
 * feature bit 250, which perf inject cannot copy) written by the recorder and read back by
 * preport --stats. */
#ifndef PRECORD_PAUSE_STATS_H
#define PRECORD_PAUSE_STATS_H

#include <stddef.h>
#include <stdint.h>

#define PAUSE_STATS_TAG 250
#define PAUSE_STATS_MECH_LEN 32

struct perf_writer;
struct perf_reader;

/* Payload layout, little-endian: u32 version (1), u32 nr_rings, u64 pauses, u64 paused_ns,
 * u64 longest_ns, u64 recording_ns, char mechanism[32], then u64 pauses_by_ring[nr_rings]. */
struct pause_stats {
	uint64_t pauses, paused_ns, longest_ns, recording_ns;
	char mechanism[PAUSE_STATS_MECH_LEN];
	const uint64_t *by_ring;
	uint32_t nr_rings;
};

/* Hand the stats to the writer for finalize. Returns 0 or -errno. */
int pause_stats__write(struct perf_writer *w, const struct pause_stats *ps);

/* Read the file's section into ret (by_ring points into the file). Returns 1 when present, 0
 * when the file has none, -EBADMSG when it is malformed. */
int pause_stats__read(const struct perf_reader *r, struct pause_stats *ret);

#endif
