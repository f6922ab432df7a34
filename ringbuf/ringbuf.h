/* Consumer side of the perf mmap ring buffer. The kernel publishes data_head; we publish
 * data_tail. Readers of this header never see how the ring wraps: records come out whole and
 * contiguous (a record split by the end of the ring is copied into a bounce buffer). */
#ifndef PRECORD_RINGBUF_H
#define PRECORD_RINGBUF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ringbuf;
struct perf_event_header;

/* Called once per record, in ring order; rec is valid only during the call and is 8-byte
 * aligned. Return 0 to go on, a negative value to stop the drain (the record is then NOT
 * consumed and is handed out again by the next drain). */
typedef int (*ringbuf_fn)(void *ctx, const struct perf_event_header *rec);

/* Map the ring of perf event fd: one control page plus data_pages (a power of two) pages,
 * read-write so that data_tail can be published. Returns NULL with errno set (EPERM when the
 * locked-memory limit is hit, EINVAL for a bad page count). */
struct ringbuf *ringbuf__mmap(int fd, size_t data_pages);

/* Wrap memory laid out like a perf ring (a struct perf_event_mmap_page, then data_size bytes of
 * data at base + page_size) that the caller owns: used by tests with a simulated producer.
 * data_size must be a power of two. Returns NULL with errno set. */
struct ringbuf *ringbuf__wrap(void *base, size_t page_size, size_t data_size);

/* Hand every complete record published so far to fn, at most max_bytes of them (0: no limit;
 * the first record is always handed out, so a limit below one record cannot stall the ring),
 * then publish the new tail. Makes no allocation and no system call. Returns the number of bytes
 * consumed, or -EBADMSG when a record header is impossible (size 0, not a multiple of 8 or
 * larger than the ring) or the head is more than the ring ahead of the tail: the ring is then
 * resynchronised by discarding everything published, and that loss is counted (the records
 * before the bad one were handed out). Returns the callback's negative value if it stopped the
 * drain (the bytes before that record count as consumed and the tail is published up to them);
 * a callback should not use -EBADMSG. One thread drains a ring at a time. */
ssize_t ringbuf__drain(struct ringbuf *rb, ringbuf_fn fn, void *ctx, size_t max_bytes);

/* Bytes published by the kernel and not yet consumed (acquire load of data_head). */
size_t ringbuf__used(const struct ringbuf *rb);
/* Bytes the kernel has published since the ring was mapped (acquire load of data_head). */
uint64_t ringbuf__head(const struct ringbuf *rb);
/* Size of the data area in bytes. */
size_t ringbuf__size(const struct ringbuf *rb);
/* Fill level in per mille (0..1000) of the data area. */
unsigned int ringbuf__fill_permille(const struct ringbuf *rb);
/* Bytes discarded by resynchronisation after a corrupt header (normally 0). */
uint64_t ringbuf__discarded(const struct ringbuf *rb);

/* Unmap (if ringbuf__mmap made it) and free. NULL is a no-op. */
void ringbuf__free(struct ringbuf *rb);

#endif
