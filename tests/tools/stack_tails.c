/* stack_tails: in an uncompressed perf.data whose samples carry user stacks (the layout precord
 * and perf record --call-graph dwarf write: IP TID TIME [ADDR] [ID] [STREAM_ID] CPU PERIOD
 * [IDENTIFIER first] CALLCHAIN REGS_USER STACK_USER), counts the samples whose stack dump has
 * bytes past dyn_size (the part the kernel skipped) and how many of those are not all zero; how
 * many dumps are shorter than the attr's sample_stack_user (cut down by the writer), and how
 * many are wider than dyn_size rounded up to 8 bytes (one word at least).
 *
 * usage: stack_tails FILE
 * prints "samples N with_tail T dirty D short S wide W"; exit 0, or 2 on a file it cannot
 * read. */
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			b = realloc(b, cap);
			if (!b)
				exit(2);
		}
		r = fread(b + n, 1, cap - n, f);
		n += r;
	} while (r);
	fclose(f);
	*len = n;
	return b;
}

static uint64_t u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

int main(int argc, char **argv)
{
	size_t len, off, end, fixed;
	uint64_t st, regs, samples = 0, tails = 0, dirty = 0, shorter = 0, wide = 0;
	struct perf_event_attr attr;
	uint8_t *f;

	if (argc != 2) {
		fprintf(stderr, "usage: stack_tails FILE\n");
		return 2;
	}
	f = slurp(argv[1], &len);
	if (!f || len < 104 || memcmp(f, "PERFILE2", 8)) {
		fprintf(stderr, "stack_tails: %s: not a perf.data file\n", argv[1]);
		return 2;
	}
	/* header: magic, size, attr_size, attrs {offset, size}, data {offset, size} */
	off = u64(f + 24);
	if (off + sizeof(attr) > len) {
		fprintf(stderr, "stack_tails: %s: attrs out of the file\n", argv[1]);
		return 2;
	}
	memcpy(&attr, f + off, sizeof(attr));
	st = attr.sample_type;
	regs = attr.sample_regs_user;
	if (!(st & PERF_SAMPLE_STACK_USER) || (st & (PERF_SAMPLE_READ | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK))) {
		fprintf(stderr, "stack_tails: %s: no user stacks, or a layout this tool does not know\n", argv[1]);
		return 2;
	}
	fixed = 8 * (size_t)__builtin_popcountll(st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
						      PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
						      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD));
	off = u64(f + 40);
	end = off + u64(f + 48);
	if (end > len)
		end = len;
	while (off + 8 <= end) {
		const struct perf_event_header *h = (const void *)(f + off);
		size_t p = 8 + fixed, size = h->size;
		const uint8_t *r = f + off;
		uint64_t sz, dyn;

		if (size < 8 || off + size > end)
			break;
		off += size;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		samples++;
		if (st & PERF_SAMPLE_CALLCHAIN) {
			if (p + 8 > size || u64(r + p) > (size - p - 8) / 8)
				continue;
			p += 8 + 8 * u64(r + p);
		}
		if (st & PERF_SAMPLE_REGS_USER) {
			if (p + 8 > size)
				continue;
			p += 8 + (u64(r + p) ? 8 * (size_t)__builtin_popcountll(regs) : 0);
		}
		if (p + 8 > size)
			continue;
		sz = u64(r + p);
		p += 8;
		if (!sz || sz > size - p || size - p - sz < 8)
			continue;
		dyn = u64(r + p + sz);
		shorter += sz < attr.sample_stack_user;
		wide += sz > (dyn ? (dyn + 7) / 8 * 8 : 8);
		if (dyn >= sz)
			continue;
		tails++;
		for (uint64_t i = dyn; i < sz; i++)
			if (r[p + i]) {
				dirty++;
				break;
			}
	}
	printf("samples %llu with_tail %llu dirty %llu short %llu wide %llu\n",
	       (unsigned long long)samples, (unsigned long long)tails, (unsigned long long)dirty,
	       (unsigned long long)shorter, (unsigned long long)wide);
	free(f);
	return 0;
}
