/* Consumer side of the perf mmap ring buffer. The kernel publishes data_head after writing
 * records; we publish data_tail after reading them. The head load is an acquire that pairs with
 * the kernel's write barrier before its head store, and every tail store is a release that pairs
 * with the barrier the kernel places between loading data_tail and overwriting the space.
 *
 * The drain is the recorder's hot path: it makes no allocation and no system call, reads the
 * head once per call and stores the tail at most once per call. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ringbuf/ringbuf.h"

/* Largest record the u16 size field allows, rounded down to the 8-byte record granularity:
 * the bounce buffer holds any record that can exist. */
#define RINGBUF_BOUNCE_SIZE (64 * 1024)

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

struct ringbuf {
	/* Hot: read on every drain. */
	struct perf_event_mmap_page *meta;
	const uint8_t *data;
	uint64_t mask;        /* data size - 1 (the size is a power of two) */
	uint64_t discarded;   /* bytes thrown away by resynchronisation */
	/* Cold. */
	void *map;            /* mmap base when ringbuf__mmap made it, else NULL */
	size_t map_len;
	/* A record that straddles the end of the data area is copied here whole. */
	uint8_t bounce[RINGBUF_BOUNCE_SIZE] __attribute__((aligned(8)));
};

/* The kernel orders its record stores before the data_head store (smp_wmb() in
 * perf_output_put_handle()); this acquire keeps our record loads after the head load, so a
 * record below the head we read is complete in our view. */
static inline uint64_t load_head(const struct perf_event_mmap_page *meta)
{
	return __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
}

/* We are the only writer of data_tail, so a relaxed load sees our own last store. */
static inline uint64_t load_tail(const struct perf_event_mmap_page *meta)
{
	return __atomic_load_n(&meta->data_tail, __ATOMIC_RELAXED);
}

/* The release keeps every load of the records we hand out before the tail store. It pairs with
 * the kernel's ordering between its data_tail load and its first store into the freed space
 * (the control dependency / smp_mb() at the top of perf_output_begin()): the kernel cannot
 * overwrite a record we are still reading. */
static inline void store_tail(struct perf_event_mmap_page *meta, uint64_t tail)
{
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static bool is_pow2(size_t n)
{
	return n && !(n & (n - 1));
}

static struct ringbuf *ringbuf_alloc(void *base, size_t page_size, size_t data_size)
{
	struct ringbuf *rb;

	/* Records are multiples of 8 bytes, so with a data area of at least 8 bytes a header
	 * (8 bytes, at an 8-aligned tail) never straddles the end. */
	if (!base || !is_pow2(data_size) || data_size < 8 || !page_size) {
		errno = EINVAL;
		return NULL;
	}
	rb = calloc(1, sizeof(*rb));
	if (!rb)
		return NULL;
	rb->meta = base;
	rb->data = (const uint8_t *)base + page_size;
	rb->mask = data_size - 1;
	return rb;
}

struct ringbuf *ringbuf__wrap(void *base, size_t page_size, size_t data_size)
{
	return ringbuf_alloc(base, page_size, data_size);
}

struct ringbuf *ringbuf__mmap(int fd, size_t data_pages)
{
	long page = sysconf(_SC_PAGESIZE);
	struct ringbuf *rb;
	size_t len;
	void *base;
	int saved;

	if (page <= 0 || !is_pow2(data_pages) || data_pages > (SIZE_MAX / (size_t)page) - 1) {
		errno = EINVAL;
		return NULL;
	}
	len = (data_pages + 1) * (size_t)page;
	/* Writable so that we can publish data_tail: the kernel then never overwrites unread
	 * records (a read-only mapping would put the ring in overwrite mode). */
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return NULL;
	rb = ringbuf_alloc(base, (size_t)page, data_pages * (size_t)page);
	if (!rb) {
		saved = errno;
		munmap(base, len);
		errno = saved;
		return NULL;
	}
	rb->map = base;
	rb->map_len = len;
	return rb;
}

/* Throw away everything published so far: after an impossible header we cannot find the next
 * record boundary, and the only boundary we know is the head. */
static ssize_t resync(struct ringbuf *rb, uint64_t head, uint64_t tail)
{
	rb->discarded += head - tail;
	store_tail(rb->meta, head);
	return -EBADMSG;
}

ssize_t ringbuf__drain(struct ringbuf *rb, ringbuf_fn fn, void *ctx, size_t max_bytes)
{
	const uint64_t head = load_head(rb->meta);
	const uint64_t start = load_tail(rb->meta);
	const uint64_t size = rb->mask + 1;
	/* No limit is a limit nothing reaches: one comparison in the loop either way. */
	const uint64_t limit = max_bytes ? max_bytes : UINT64_MAX;
	uint64_t tail = start;
	int ret = 0;

	/* The kernel never publishes more than the ring holds. */
	if (unlikely(head - tail > size))
		return resync(rb, head, tail);

	while (tail != head) {
		const uint64_t off = tail & rb->mask;
		const struct perf_event_header *rec = (const void *)(rb->data + off);
		const uint64_t len = rec->size;

		/* One test for size 0 (wraps to huge), larger than the ring, not a multiple of 8. */
		if (unlikely((len - 1 >= size) | (len & 7)))
			goto corrupt;
		/* Head inside this record: the rest is not published yet. A kernel publishes whole
		 * records only, but nothing is lost by waiting for the rest. */
		if (unlikely(len > head - tail))
			break;
		/* Always hand out the first record, so that a limit below one record cannot stall
		 * the ring. */
		if (unlikely(tail - start + len > limit) && tail != start)
			break;
		if (unlikely(off + len > size)) {
			const uint64_t first = size - off;

			memcpy(rb->bounce, rec, first);
			memcpy(rb->bounce + first, rb->data, len - first);
			rec = (const void *)rb->bounce;
		}
		ret = fn(ctx, rec);
		if (unlikely(ret < 0))
			break;
		tail += len;
	}
	if (tail != start)
		store_tail(rb->meta, tail);
	return ret < 0 ? ret : (ssize_t)(tail - start);

corrupt:
	return resync(rb, head, tail);
}

size_t ringbuf__used(const struct ringbuf *rb)
{
	/* The tail first: read after the head, a tail that a reader moved meanwhile could be
	 * ahead of the head read, and the difference would wrap. The consumer's own calls
	 * (its tail does not move under it) are exact; another thread's may be a little low. */
	const uint64_t tail = __atomic_load_n(&rb->meta->data_tail, __ATOMIC_ACQUIRE);
	const uint64_t head = load_head(rb->meta);

	return head > tail ? head - tail : 0;
}

uint64_t ringbuf__head(const struct ringbuf *rb)
{
	return load_head(rb->meta);
}

size_t ringbuf__size(const struct ringbuf *rb)
{
	return rb->mask + 1;
}

unsigned int ringbuf__fill_permille(const struct ringbuf *rb)
{
	uint64_t used = ringbuf__used(rb);
	uint64_t size = rb->mask + 1;

	/* A corrupt head may claim more than the ring holds. */
	if (used >= size)
		return 1000;
	return (unsigned int)(used * 1000 / size);
}

uint64_t ringbuf__discarded(const struct ringbuf *rb)
{
	return rb->discarded;
}

void ringbuf__free(struct ringbuf *rb)
{
	if (!rb)
		return;
	if (rb->map)
		munmap(rb->map, rb->map_len);
	free(rb);
}
