/* What precord knows of its file's record order, as it travels in perf.data: a private section
 * (tag RING_ORDER_TAG of the file's trailer, which perf never reads) that lets a reader deliver
 * records in time order while holding far fewer of them than perf's rounds do.
 *
 * The claim: each CPU in cpus[] had one ring, whose records (all with that CPU in their
 * sample_id) are in the data section in the ring's order; in that order a record's time is
 * never more than max_back_ns below the largest time before it in the same ring. The kernel
 * takes a record's time before it reserves the record's space, so an interrupt in between
 * writes a later record first: the step back is small but not zero. Records of time 0 (those
 * precord makes from /proc and at the end) are not ring records and are not covered; every
 * other record of the file must carry a CPU of cpus[]. A reader that meets one that does not
 * stops using the claim, but records it delivered early by then may be newer than that one:
 * a claim that is wrong costs order (records out of order, counted as perf counts them),
 * never a record. */
#ifndef PRECORD_RING_ORDER_H
#define PRECORD_RING_ORDER_H

#include <stddef.h>
#include <stdint.h>

#define RING_ORDER_TAG 251

struct perf_writer;
struct perf_reader;

/* Payload layout, little-endian: u32 version (1), u32 nr_cpus, u64 max_back_ns,
 * u32 cpus[nr_cpus]. */
struct ring_order {
	uint64_t max_back_ns;
	uint32_t nr_cpus;
	const uint32_t *cpus; /* write: the caller's; read: NULL (ring_order__cpu gives them) */
	const void *raw;      /* read: the payload, in the file */
};

/* Hand the claim to the writer for finalize. Returns 0 or -errno. */
int ring_order__write(struct perf_writer *w, const struct ring_order *o);

/* Read the file's section into ret. Returns 1 when present, 0 when the file has none,
 * -EBADMSG when it is malformed (a reader then ignores it). */
int ring_order__read(const struct perf_reader *r, struct ring_order *ret);

/* The i-th CPU of a claim that ring_order__read returned (i < nr_cpus). */
uint32_t ring_order__cpu(const struct ring_order *o, uint32_t i);

#endif
