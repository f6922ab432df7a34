/* Encoding and decoding of the pause-statistics feature section; see pause_stats.h. */
#include "perf/pause_stats.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "perf/reader.h"
#include "perf/writer.h"

#define HDR_SIZE (4 + 4 + 4 * 8 + PAUSE_STATS_MECH_LEN)

int pause_stats__write(struct perf_writer *w, const struct pause_stats *ps)
{
	uint8_t hdr[HDR_SIZE] = { 0 };
	uint32_t v32[2] = { 1, ps->nr_rings };
	uint64_t v64[4] = { ps->pauses, ps->paused_ns, ps->longest_ns, ps->recording_ns };
	struct iovec iov[2] = { { hdr, HDR_SIZE }, { (void *)ps->by_ring, (size_t)ps->nr_rings * 8 } };

	memcpy(hdr, v32, 8);
	memcpy(hdr + 8, v64, 32);
	memcpy(hdr + 40, ps->mechanism, strnlen(ps->mechanism, PAUSE_STATS_MECH_LEN - 1));
	return perf_writer__set_private(w, PAUSE_STATS_TAG, iov, 2);
}

int pause_stats__read(const struct perf_reader *r, struct pause_stats *ret)
{
	size_t len = 0;
	const uint8_t *p = perf_reader__private(r, PAUSE_STATS_TAG, &len);
	uint32_t v32[2];
	uint64_t v64[4];

	memset(ret, 0, sizeof(*ret));
	if (!p)
		return 0;
	if (len < HDR_SIZE)
		return -EBADMSG;
	memcpy(v32, p, 8);
	if (v32[0] != 1 || (len - HDR_SIZE) / 8 < v32[1])
		return -EBADMSG;
	memcpy(v64, p + 8, 32);
	ret->pauses = v64[0];
	ret->paused_ns = v64[1];
	ret->longest_ns = v64[2];
	ret->recording_ns = v64[3];
	memcpy(ret->mechanism, p + 40, PAUSE_STATS_MECH_LEN);
	ret->mechanism[PAUSE_STATS_MECH_LEN - 1] = 0;
	ret->nr_rings = v32[1];
	ret->by_ring = (const uint64_t *)(const void *)(p + HDR_SIZE);
	return 1;
}
