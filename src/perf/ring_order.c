/* Encoding and decoding of the ring-order section of the trailer; see ring_order.h. */
#include "perf/ring_order.h"

#include <errno.h>
#include <string.h>

#include "perf/reader.h"
#include "perf/writer.h"

#define HDR_SIZE 16

int ring_order__write(struct perf_writer *w, const struct ring_order *o)
{
	uint8_t hdr[HDR_SIZE];
	uint32_t v32[2] = { 1, o->nr_cpus };
	struct iovec iov[2] = { { hdr, HDR_SIZE }, { (void *)o->cpus, (size_t)o->nr_cpus * 4 } };

	memcpy(hdr, v32, 8);
	memcpy(hdr + 8, &o->max_back_ns, 8);
	return perf_writer__set_private(w, RING_ORDER_TAG, iov, 2);
}

int ring_order__read(const struct perf_reader *r, struct ring_order *ret)
{
	size_t len = 0;
	const uint8_t *p = perf_reader__private(r, RING_ORDER_TAG, &len);
	uint32_t v32[2];

	memset(ret, 0, sizeof(*ret));
	if (!p)
		return 0;
	if (len < HDR_SIZE)
		return -EBADMSG;
	memcpy(v32, p, 8);
	if (v32[0] != 1 || (len - HDR_SIZE) / 4 < v32[1])
		return -EBADMSG;
	memcpy(&ret->max_back_ns, p + 8, 8);
	ret->nr_cpus = v32[1];
	ret->raw = p;
	return 1;
}

uint32_t ring_order__cpu(const struct ring_order *o, uint32_t i)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)o->raw + HDR_SIZE + (size_t)i * 4, 4);
	return v;
}
