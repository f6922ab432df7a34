/* Tests of the zstd record compressor, read back exactly the way perf 6.1 reads: one
 * ZSTD_DStream for the whole file, each COMPRESSED record's payload given to it in one call with
 * COMPRESS_MAX_DECOMPRESSED bytes of output space after the previous record's unparsed remainder,
 * whole records parsed out and the rest carried over. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "lib/cleanup.h"
#include "perf/compress.h"
#include "perf/abi.h"

/* ---- a growing byte buffer ---- */

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static void bytes_add(struct bytes *b, const void *src, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;

		while (cap < b->len + len)
			cap *= 2;
		b->p = realloc(b->p, cap);
		ck_assert_ptr_nonnull(b->p);
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, len);
	b->len += len;
}

static void bytes_free(struct bytes *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- the perf 6.1 reader, reduced to what concerns compression ---- */

struct preader {
	ZSTD_DStream *ds;
	int raw;              /* the input is not records: keep decompressed bytes as they come */
	uint8_t *buf;         /* remainder + COMPRESS_MAX_DECOMPRESSED, as perf sizes its buffer */
	size_t rem;           /* bytes of a split record carried over at buf[0] */
	size_t max_rem;
	size_t max_out;       /* most bytes one record decompressed to */
	unsigned int compressed, plain, frames_ended;
	struct bytes stream;  /* every record in file order, as the session would process them */
};

static void preader_init(struct preader *rd, int raw)
{
	memset(rd, 0, sizeof(*rd));
	rd->raw = raw;
	rd->ds = ZSTD_createDStream();
	ck_assert_ptr_nonnull(rd->ds);
	ck_assert(!ZSTD_isError(ZSTD_initDStream(rd->ds)));
	/* A remainder is less than one record (< 64 KiB). */
	rd->buf = malloc(65536 + COMPRESS_MAX_DECOMPRESSED);
	ck_assert_ptr_nonnull(rd->buf);
}

static void preader_fini(struct preader *rd)
{
	ZSTD_freeDStream(rd->ds);
	free(rd->buf);
	bytes_free(&rd->stream);
}

/* Returns 0, or -1 when zstd reports an error (the caller decides whether that is expected). */
static int preader_compressed(struct preader *rd, const struct perf_event_header *h)
{
	ZSTD_inBuffer in = { (const uint8_t *)h + 8, h->size - 8u, 0 };
	ZSTD_outBuffer out = { rd->buf + rd->rem, COMPRESS_MAX_DECOMPRESSED, 0 };
	size_t r, total, off = 0;

	rd->compressed++;
	r = ZSTD_decompressStream(rd->ds, &out, &in);
	if (ZSTD_isError(r))
		return -1;
	/* perf 6.1 loops while input is left but does not reset output.pos between calls, so a
	 * record is read correctly only if one call takes all of it. */
	ck_assert_uint_eq(in.pos, in.size);
	/* perf reports "Couldn't decompress data" for a record that yields nothing. */
	ck_assert_uint_ge(out.pos, 1);
	if (out.pos > rd->max_out)
		rd->max_out = out.pos;
	if (r == 0)
		rd->frames_ended++;
	if (rd->raw) {
		bytes_add(&rd->stream, rd->buf, out.pos);
		return 0;
	}
	total = rd->rem + out.pos;
	for (;;) {
		struct perf_event_header eh;

		if (off + sizeof(eh) > total)
			break;
		memcpy(&eh, rd->buf + off, sizeof(eh));
		ck_assert_uint_ge(eh.size, 8);
		if (off + eh.size > total)
			break;
		bytes_add(&rd->stream, rd->buf + off, eh.size);
		off += eh.size;
	}
	rd->rem = total - off;
	memmove(rd->buf, rd->buf + off, rd->rem);
	if (rd->rem > rd->max_rem)
		rd->max_rem = rd->rem;
	return 0;
}

/* Reads a data section; returns 0, or -1 at the first zstd error. */
static int preader_read(struct preader *rd, const uint8_t *p, size_t len)
{
	size_t off = 0;

	while (off < len) {
		struct perf_event_header h;

		ck_assert_uint_ge(len - off, 8);
		memcpy(&h, p + off, sizeof(h));
		ck_assert_uint_ge(h.size, 8);
		ck_assert_uint_le(off + h.size, len);
		if (h.type == PERF_RECORD_COMPRESSED) {
			/* What precord promises beyond perf's needs: misc 0, 8-byte sizes. */
			ck_assert_uint_eq(h.misc, 0);
			ck_assert_uint_eq(h.size % 8, 0);
			ck_assert_uint_gt(h.size, 8);
			if (preader_compressed(rd, (const void *)(p + off)) < 0)
				return -1;
		} else {
			/* Chunks hold whole records, so nothing is pending between them. */
			ck_assert_uint_eq(rd->rem, 0);
			rd->plain++;
			bytes_add(&rd->stream, p + off, h.size);
		}
		off += h.size;
	}
	return 0;
}

/* ---- input ---- */

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Sample-like records filling exactly len bytes (a multiple of 8): a few ips, a growing time, a
 * "stack" that is partly repetitive; now and then a record of the largest size. */
static void gen_records(struct bytes *b, size_t len, unsigned int max_size)
{
	static const uint64_t ips[] = { 0x401136, 0x401180, 0x7f12345678, 0xffffffff81000000 };
	static uint8_t rec[65536];
	static uint64_t time = 1000000;

	while (len) {
		size_t size = 24 + 8 * (rng() % ((max_size - 24) / 8 + 1));
		struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = 2 };

		if (max_size >= 65528 && rng() % 64 == 0)
			size = 65528;
		/* Leave either nothing or room for one more record. */
		if (len <= 65528 && (size >= len || len - size < 24))
			size = len;
		else if (size > len - 24)
			size = len - 24;
		h.size = (uint16_t)size;
		memcpy(rec, &h, 8);
		memcpy(rec + 8, &ips[rng() % 4], 8);
		time += rng() % 100000;
		memcpy(rec + 16, &time, 8);
		for (size_t i = 24; i < size; i += 8) {
			uint64_t v = (i / 8) % 5 ? 0x00007ffd00000000ULL + (i * 24) : rng();

			memcpy(rec + i, &v, size - i < 8 ? size - i : 8);
		}
		bytes_add(b, rec, size);
		len -= size;
	}
}

static void add_finished_round(struct bytes *file, struct bytes *expect)
{
	struct perf_event_header h = { .type = PERF_RECORD_FINISHED_ROUND, .size = 8 };

	bytes_add(file, &h, 8);
	bytes_add(expect, &h, 8);
}

static void compress_into(struct compress *z, const void *src, size_t len, struct bytes *file)
{
	const void *out = NULL;
	ssize_t n = compress__compress(z, src, len, &out);

	ck_assert_int_gt(n, 0);
	ck_assert_ptr_nonnull(out);
	bytes_add(file, out, (size_t)n);
}

/* Records of the output, counted. */
static unsigned int count_records(const uint8_t *p, size_t len)
{
	unsigned int n = 0;

	for (size_t off = 0; off < len; n++) {
		struct perf_event_header h;

		memcpy(&h, p + off, sizeof(h));
		ck_assert_uint_eq(h.type, PERF_RECORD_COMPRESSED);
		ck_assert_uint_ge(h.size, 16);
		off += h.size;
		ck_assert_uint_le(off, len);
	}
	return n;
}

/* ---- roundtrip ---- */

/* Chunks from two compressors alternate in one file, with plain records between them; one
 * decompression stream reads it all back, and every chunk ends its frame exactly once. */
START_TEST(test_roundtrip_two_compressors)
{
	static const size_t sizes[] = { 8,     24,    4096,  61440, 61448, 65528, 70000, 122880,
					200000, 8,    1048576, 30000, 65536, 131072, 999992, 64 };
	struct compress *z[2] = { compress__new(1), compress__new(5) };
	struct bytes file = { 0 }, expect = { 0 };
	struct preader rd;
	unsigned int chunks = 0;

	ck_assert_ptr_nonnull(z[0]);
	ck_assert_ptr_nonnull(z[1]);
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			struct bytes chunk = { 0 };

			gen_records(&chunk, sizes[i], i % 3 ? 2048 : 65528);
			compress_into(z[chunks % 2], chunk.p, chunk.len, &file);
			bytes_add(&expect, chunk.p, chunk.len);
			bytes_free(&chunk);
			chunks++;
			if (i % 4 == 3)
				add_finished_round(&file, &expect);
		}
	}

	preader_init(&rd, 0);
	ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
	ck_assert_uint_eq(rd.rem, 0);
	ck_assert_uint_eq(rd.frames_ended, chunks);
	ck_assert_uint_eq(rd.stream.len, expect.len);
	ck_assert(memcmp(rd.stream.p, expect.p, expect.len) == 0);
	ck_assert_uint_gt(rd.compressed, chunks);
	preader_fini(&rd);
	bytes_free(&file);
	bytes_free(&expect);
	compress__free(z[0]);
	compress__free(z[1]);
}
END_TEST

/* Records of two open frames must not interleave: this is why a writer keeps each call's output
 * together. Checked so that the contract stays true of the library we link. */
START_TEST(test_roundtrip_record_interleave_breaks)
{
	struct compress *a = compress__new(1), *b = compress__new(1);
	struct bytes ca = { 0 }, cb = { 0 }, fa = { 0 }, fb = { 0 }, file = { 0 }, expect = { 0 };
	struct preader rd;
	size_t la, lb;
	int err;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	gen_records(&ca, 1000000, 2048);
	gen_records(&cb, 1000000, 2048);
	compress_into(a, ca.p, ca.len, &fa);
	compress_into(b, cb.p, cb.len, &fb);
	ck_assert_uint_ge(count_records(fa.p, fa.len), 2);
	/* A's first record, then all of B, then the rest of A. */
	la = ((const struct perf_event_header *)fa.p)->size;
	lb = fb.len;
	bytes_add(&file, fa.p, la);
	bytes_add(&file, fb.p, lb);
	bytes_add(&file, fa.p + la, fa.len - la);
	bytes_add(&expect, ca.p, ca.len);
	bytes_add(&expect, cb.p, cb.len);

	preader_init(&rd, 0);
	err = preader_read(&rd, file.p, file.len);
	ck_assert(err < 0 || rd.stream.len != expect.len ||
		  memcmp(rd.stream.p, expect.p, expect.len) != 0);
	preader_fini(&rd);
	bytes_free(&ca);
	bytes_free(&cb);
	bytes_free(&fa);
	bytes_free(&fb);
	bytes_free(&file);
	bytes_free(&expect);
	compress__free(a);
	compress__free(b);
}
END_TEST

/* ---- edge inputs ---- */

START_TEST(test_edge_incompressible)
{
	struct compress *z = compress__new(3);
	struct bytes src = { 0 }, file = { 0 };
	struct preader rd;
	unsigned int n;

	ck_assert_ptr_nonnull(z);
	for (size_t i = 0; i < (1 << 20) / 8; i++) {
		uint64_t v = rng();

		bytes_add(&src, &v, 8);
	}
	compress_into(z, src.p, src.len, &file);
	n = count_records(file.p, file.len);
	ck_assert_uint_ge(n, (1 << 20) / COMPRESS_MAX_DECOMPRESSED + 1);
	/* Bounded expansion: per record a header, padding and a few block headers. */
	ck_assert_uint_le(file.len, src.len + n * 64 + 64);

	preader_init(&rd, 1);
	ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
	ck_assert_uint_eq(rd.frames_ended, 1);
	ck_assert_uint_eq(rd.stream.len, src.len);
	ck_assert(memcmp(rd.stream.p, src.p, src.len) == 0);
	preader_fini(&rd);
	bytes_free(&src);
	bytes_free(&file);
	compress__free(z);
}
END_TEST

START_TEST(test_edge_one_byte)
{
	struct compress *z = compress__new(1);
	struct bytes file = { 0 };
	struct preader rd;
	const void *out = NULL;
	uint8_t c = 0x5a;

	ck_assert_ptr_nonnull(z);
	ck_assert_int_eq(compress__compress(z, &c, 0, &out), 0);
	compress_into(z, &c, 1, &file);
	ck_assert_uint_eq(count_records(file.p, file.len), 1);
	ck_assert_uint_eq(file.len % 8, 0);
	preader_init(&rd, 1);
	ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
	ck_assert_uint_eq(rd.frames_ended, 1);
	ck_assert_uint_eq(rd.stream.len, 1);
	ck_assert_uint_eq(rd.stream.p[0], 0x5a);
	preader_fini(&rd);
	bytes_free(&file);
	compress__free(z);
}
END_TEST

/* Every padding length (0..21 bytes) occurs across these sizes; each must still decode. */
START_TEST(test_edge_all_paddings)
{
	struct compress *z = compress__new(1);
	struct bytes src = { 0 }, file = { 0 };
	struct preader rd;

	ck_assert_ptr_nonnull(z);
	for (size_t i = 0; i < 4096 / 8; i++) {
		uint64_t v = rng();

		bytes_add(&src, &v, 8);
	}
	preader_init(&rd, 1);
	for (size_t len = 1; len <= 200; len++) {
		file.len = 0;
		compress_into(z, src.p, len, &file);
		ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
	}
	ck_assert_uint_eq(rd.frames_ended, 200);
	ck_assert_uint_eq(rd.stream.len, 200 * 201 / 2);
	for (size_t len = 1, off = 0; len <= 200; off += len, len++)
		ck_assert(memcmp(rd.stream.p + off, src.p, len) == 0);
	preader_fini(&rd);
	bytes_free(&src);
	bytes_free(&file);
	compress__free(z);
}
END_TEST

START_TEST(test_edge_large_chunk)
{
	struct compress *z = compress__new(1);
	struct bytes src = { 0 }, file = { 0 };
	struct preader rd;
	const size_t len = 4 << 20;

	ck_assert_ptr_nonnull(z);
	gen_records(&src, len, 2048);
	compress_into(z, src.p, src.len, &file);
	ck_assert_uint_ge(count_records(file.p, file.len), len / COMPRESS_MAX_DECOMPRESSED);
	ck_assert_uint_lt(file.len, len / 2);

	preader_init(&rd, 0);
	ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
	ck_assert_uint_eq(rd.frames_ended, 1);
	ck_assert_uint_eq(rd.stream.len, len);
	ck_assert(memcmp(rd.stream.p, src.p, len) == 0);
	/* A split record is carried over (perf does the same); it is less than one record. */
	ck_assert_uint_lt(rd.max_rem, 65536);
	ck_assert_uint_le(rd.max_out, 8 * 128 * 1024);
	preader_fini(&rd);

	/* The same object again, from its reused buffer. */
	file.len = 0;
	compress_into(z, src.p, 100000, &file);
	preader_init(&rd, 1);
	ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
	ck_assert_uint_eq(rd.stream.len, 100000);
	ck_assert(memcmp(rd.stream.p, src.p, 100000) == 0);
	preader_fini(&rd);
	bytes_free(&src);
	bytes_free(&file);
	compress__free(z);
}
END_TEST

/* ---- stream: frames fed slice by slice ---- */

/* Feed len bytes at src in slices of about `slice` bytes (varied), so a frame is built from many
 * calls. */
static void feed_all(struct compress *z, const uint8_t *src, size_t len, size_t slice)
{
	size_t before = compress__fed(z);

	for (size_t pos = 0, i = 0; pos < len; i++) {
		size_t n = slice - (i % 3) * (slice / 4);

		if (n > len - pos)
			n = len - pos;
		ck_assert_int_eq(compress__feed(z, src + pos, n), 0);
		pos += n;
	}
	ck_assert_uint_eq(compress__fed(z), before + len);
}

static void finish_into(struct compress *z, struct bytes *file)
{
	const void *out = NULL;
	ssize_t n = compress__finish(z, &out);

	ck_assert_int_gt(n, 0);
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(n % 8, 0);
	bytes_add(file, out, (size_t)n);
	ck_assert_uint_eq(compress__fed(z), 0);
}

/* Two readers, each feeding its own compressor one drained slice per pass and appending its
 * frame when it holds its target (1 record to 16 MiB), with plain FINISHED_ROUND records between:
 * perf's one stream reads it all back, each record in one call of >= 1 and
 * <= COMPRESS_MAX_DECOMPRESSED bytes. */
START_TEST(test_stream_two_compressors)
{
	static const size_t targets[] = { 24,	   4096,    65528,   65536,	131072, 200000,
					  1 << 20, 4 << 20, 16 << 20, 999992, 8 << 20, 30000 };
	struct compress *z[2] = { compress__new(1), compress__new(3) };
	struct bytes file = { 0 }, expect = { 0 }, pending[2] = { 0 };
	size_t next[2] = { 0, 1 };
	unsigned int frames = 0;
	struct preader rd;

	ck_assert_ptr_nonnull(z[0]);
	ck_assert_ptr_nonnull(z[1]);
	for (unsigned int pass = 0; next[0] < ARRAY_SIZE(targets) || next[1] < ARRAY_SIZE(targets);
	     pass++) {
		unsigned int r = pass % 2;
		size_t target, want;
		struct bytes slice = { 0 };

		if (next[r] >= ARRAY_SIZE(targets))
			continue;
		target = targets[next[r]];
		/* a slice of up to ~1 MiB, as one drain of the staging buffer */
		want = 24 + 8 * (rng() % (1 << 17));
		if (want > target - pending[r].len)
			want = target - pending[r].len;
		if (target - pending[r].len - want < 24)
			want = target - pending[r].len;
		gen_records(&slice, want, pass % 3 ? 2048 : 65528);
		ck_assert_int_eq(compress__feed(z[r], slice.p, slice.len), 0);
		bytes_add(&pending[r], slice.p, slice.len);
		bytes_free(&slice);
		ck_assert_uint_eq(compress__fed(z[r]), pending[r].len);
		if (pending[r].len == target) {
			finish_into(z[r], &file);
			bytes_add(&expect, pending[r].p, pending[r].len);
			pending[r].len = 0;
			next[r] += 2;
			frames++;
		}
		if (pass % 5 == 4)
			add_finished_round(&file, &expect);
	}

	preader_init(&rd, 0);
	ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
	ck_assert_uint_eq(rd.rem, 0);
	ck_assert_uint_eq(rd.frames_ended, frames);
	ck_assert_uint_eq(rd.stream.len, expect.len);
	ck_assert(memcmp(rd.stream.p, expect.p, expect.len) == 0);
	ck_assert_uint_le(rd.max_out, COMPRESS_MAX_DECOMPRESSED);
	ck_assert_uint_gt(rd.plain, 0);
	preader_fini(&rd);
	bytes_free(&file);
	bytes_free(&expect);
	bytes_free(&pending[0]);
	bytes_free(&pending[1]);
	compress__free(z[0]);
	compress__free(z[1]);
}
END_TEST

/* Frames of any length, fed in many small pieces, read back byte for byte (not records). */
START_TEST(test_stream_sizes)
{
	static const size_t sizes[] = { 1,	 2,	 7,	   8,	    9,	     100,
					4096,	 65535,	 65536,	   131071,  131072,  131073,
					1 << 20, 3 << 20, 16 << 20 };
	struct compress *z = compress__new(1);
	struct bytes src = { 0 }, file = { 0 };
	struct preader rd;
	size_t total = 0;

	ck_assert_ptr_nonnull(z);
	gen_records(&src, 16 << 20, 4096);
	preader_init(&rd, 1);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		file.len = 0;
		feed_all(z, src.p, sizes[i], sizes[i] < 1000 ? 1 : 4099 + i * 50000);
		finish_into(z, &file);
		ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
		ck_assert_uint_eq(rd.stream.len, total + sizes[i]);
		ck_assert(memcmp(rd.stream.p + total, src.p, sizes[i]) == 0);
		total += sizes[i];
	}
	ck_assert_uint_eq(rd.frames_ended, ARRAY_SIZE(sizes));
	ck_assert_uint_le(rd.max_out, 8 * 128 * 1024);
	preader_fini(&rd);
	bytes_free(&src);
	bytes_free(&file);
	compress__free(z);
}
END_TEST

/* 16 MiB of zeros: each 128 KiB block is a 4-byte RLE block, so only the blocks-per-record limit
 * keeps a record's output within the reader's buffer. */
START_TEST(test_stream_block_limit)
{
	struct compress *z = compress__new(1);
	struct bytes file = { 0 };
	struct preader rd;
	uint8_t *zeros = calloc(1, 1 << 20);
	unsigned int n;

	ck_assert_ptr_nonnull(z);
	ck_assert_ptr_nonnull(zeros);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(compress__feed(z, zeros, 1 << 20), 0);
	finish_into(z, &file);
	n = count_records(file.p, file.len);
	ck_assert_uint_ge(n, 16);
	ck_assert_uint_lt(file.len, 16 * 1024);
	preader_init(&rd, 1);
	ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
	ck_assert_uint_eq(rd.frames_ended, 1);
	ck_assert_uint_eq(rd.stream.len, 16 << 20);
	ck_assert_uint_le(rd.max_out, 8 * 128 * 1024);
	for (size_t i = 0; i < rd.stream.len; i += 1 << 20)
		ck_assert(memcmp(rd.stream.p + i, zeros, 1 << 20) == 0);
	preader_fini(&rd);
	bytes_free(&file);
	free(zeros);
	compress__free(z);
}
END_TEST

/* Random bytes: zstd stores them in raw blocks of 128 KiB, which are re-cut to fit records. */
START_TEST(test_stream_incompressible)
{
	struct compress *z = compress__new(1);
	struct bytes src = { 0 }, file = { 0 };
	struct preader rd;
	unsigned int n;

	ck_assert_ptr_nonnull(z);
	for (size_t i = 0; i < (9 << 20) / 8; i++) {
		uint64_t v = rng();

		bytes_add(&src, &v, 8);
	}
	feed_all(z, src.p, src.len, 1 << 20);
	finish_into(z, &file);
	n = count_records(file.p, file.len);
	ck_assert_uint_ge(n, src.len / PERF_COMPRESSED_MAX_PAYLOAD);
	/* Bounded expansion: per record a header, padding and a few block headers. */
	ck_assert_uint_le(file.len, src.len + n * 64 + 64);
	preader_init(&rd, 1);
	ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
	ck_assert_uint_eq(rd.frames_ended, 1);
	ck_assert_uint_eq(rd.stream.len, src.len);
	ck_assert(memcmp(rd.stream.p, src.p, src.len) == 0);
	preader_fini(&rd);
	bytes_free(&src);
	bytes_free(&file);
	compress__free(z);
}
END_TEST

/* DWARF samples carry copies of a few stacks, megabytes apart: 8 MiB drawn 4 KiB at a time from a
 * pool of 256 random blocks. Long-distance matching finds most copies, level 1's own matcher
 * far fewer; switched off it is off from the next frame, and never mid-frame. */
START_TEST(test_stream_long_matching_switch)
{
	struct compress *z = compress__new(1);
	struct bytes pool = { 0 }, src = { 0 }, with = { 0 }, without = { 0 };
	struct preader rd;

	ck_assert_ptr_nonnull(z);
	for (size_t i = 0; i < 256 * 4096 / 8; i++) {
		uint64_t v = rng();

		bytes_add(&pool, &v, 8);
	}
	while (src.len < (8 << 20))
		bytes_add(&src, pool.p + 4096 * (rng() % 256), 4096);
	feed_all(z, src.p, src.len, 256 << 10);
	ck_assert_int_eq(compress__set_long_matching(z, false), -EBUSY);
	finish_into(z, &with);
	ck_assert_int_eq(compress__set_long_matching(z, false), 0);
	feed_all(z, src.p, src.len, 256 << 10);
	finish_into(z, &without);
	ck_assert_uint_lt(with.len, without.len * 6 / 10); /* 1.1 MB against 2.8 MB here */
	for (int i = 0; i < 2; i++) {
		struct bytes *f = i ? &without : &with;

		preader_init(&rd, 1);
		ck_assert_int_eq(preader_read(&rd, f->p, f->len), 0);
		ck_assert_uint_eq(rd.stream.len, src.len);
		ck_assert(memcmp(rd.stream.p, src.p, src.len) == 0);
		preader_fini(&rd);
	}
	bytes_free(&pool);
	bytes_free(&src);
	bytes_free(&with);
	bytes_free(&without);
	compress__free(z);
}
END_TEST

/* The type and compressed size of the first block zstd level 1 makes of src. */
static void first_block(const void *src, size_t len, uint32_t *ret_type, uint32_t *ret_size)
{
	size_t cap = ZSTD_compressBound(len), n, p;
	uint8_t *f = malloc(cap);
	uint32_t bh;

	ck_assert_ptr_nonnull(f);
	n = ZSTD_compress(f, cap, src, len, 1);
	ck_assert(!ZSTD_isError(n));
	/* RFC 8878 3.1.1.1: magic, descriptor, window byte unless single-segment, dictionary id,
	 * content size */
	ck_assert_uint_ge(n, 6);
	{
		static const size_t did[4] = { 0, 1, 2, 4 }, fcs[4] = { 0, 2, 4, 8 };
		uint8_t fhd = f[4];

		p = 5 + !(fhd & 0x20) + did[fhd & 3] + ((fhd >> 6) ? fcs[fhd >> 6] : (fhd & 0x20) != 0);
	}
	ck_assert_uint_le(p + 3, n);
	bh = f[p] | (uint32_t)f[p + 1] << 8 | (uint32_t)f[p + 2] << 16;
	*ret_type = (bh >> 1) & 3;
	*ret_size = bh >> 3;
	free(f);
}

/* Bytes of 5 random bits each compress by a third: zstd keeps the blocks compressed, ~80 KiB
 * each, too large for a record. The frame is then re-encoded in flushed slices. */
START_TEST(test_stream_fallback)
{
	struct compress *z = compress__new(1);
	struct bytes file = { 0 };
	struct preader rd;
	const size_t len = 3 << 20;
	uint8_t *src = malloc(len);
	uint32_t type, size;
	const void *out;

	ck_assert_ptr_nonnull(z);
	ck_assert_ptr_nonnull(src);
	for (size_t i = 0; i < len; i++)
		src[i] = 'A' + rng() % 32;
	first_block(src, 128 * 1024, &type, &size);
	ck_assert_uint_eq(type, 2);
	ck_assert_uint_gt(size, PERF_COMPRESSED_MAX_PAYLOAD);

	/* twice: the object is reusable after a fallback */
	for (int round = 0; round < 2; round++) {
		file.len = 0;
		feed_all(z, src, len, 300000);
		finish_into(z, &file);
		ck_assert_uint_lt(file.len, len);
		preader_init(&rd, 1);
		ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
		ck_assert_uint_eq(rd.frames_ended, 1);
		ck_assert_uint_eq(rd.stream.len, len);
		ck_assert(memcmp(rd.stream.p, src, len) == 0);
		/* flushed slices of at most 60 KiB each */
		ck_assert_uint_le(rd.max_out, 60 * 1024);
		preader_fini(&rd);
	}
	/* and the same object compresses well-behaved data as one frame again */
	file.len = 0;
	memset(src, 'x', len);
	feed_all(z, src, len, 1 << 20);
	finish_into(z, &file);
	ck_assert_uint_lt(file.len, 4096);
	ck_assert_int_gt(compress__compress(z, src, 1000, &out), 0);
	bytes_free(&file);
	free(src);
	compress__free(z);
}
END_TEST

/* The contract around an open frame. */
START_TEST(test_stream_api)
{
	struct compress *z = compress__new(1);
	struct bytes file = { 0 };
	struct preader rd;
	const void *out = NULL;
	uint8_t c[16] = "0123456789abcdef";
	ssize_t n;

	ck_assert_ptr_nonnull(z);
	ck_assert_uint_eq(compress__fed(z), 0);
	ck_assert_int_eq(compress__finish(z, &out), 0);
	ck_assert_int_eq(compress__feed(z, c, 0), 0);
	ck_assert_uint_eq(compress__fed(z), 0);
	ck_assert_int_eq(compress__finish(z, &out), 0);
	ck_assert_int_eq(compress__feed(z, c, 5), 0);
	ck_assert_uint_eq(compress__fed(z), 5);
	/* one-shot calls would start another frame inside the open one */
	ck_assert_int_eq(compress__compress(z, c, 16, &out), -EBUSY);
	/* the caller's buffer is free once fed */
	memset(c, 0, 5);
	ck_assert_int_eq(compress__feed(z, c + 5, 11), 0);
	finish_into(z, &file);
	ck_assert_int_eq(compress__finish(z, &out), 0);
	/* one-shot again once the frame is finished */
	n = compress__compress(z, c + 5, 11, &out);
	ck_assert_int_gt(n, 0);
	bytes_add(&file, out, (size_t)n);
	preader_init(&rd, 1);
	ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
	ck_assert_uint_eq(rd.frames_ended, 2);
	ck_assert_uint_eq(rd.stream.len, 27);
	ck_assert(memcmp(rd.stream.p, "0123456789abcdef", 16) == 0);
	ck_assert(memcmp(rd.stream.p + 16, "56789abcdef", 11) == 0);
	preader_fini(&rd);
	bytes_free(&file);
	compress__free(z);
}
END_TEST

/* ---- levels ---- */

START_TEST(test_level_bad)
{
	static const int bad[] = { 0, -1, -5, 23, 100, INT_MAX, INT_MIN };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		ck_assert_ptr_null(compress__new(bad[i]));
		ck_assert_int_eq(errno, EINVAL);
	}
	compress__free(NULL);
}
END_TEST

START_TEST(test_level_extremes)
{
	static const int levels[] = { 1, 22 };
	struct bytes src = { 0 };

	gen_records(&src, 150000, 65528);
	for (size_t i = 0; i < 2; i++) {
		struct compress *z = compress__new(levels[i]);
		struct bytes file = { 0 };
		struct preader rd;

		ck_assert_ptr_nonnull(z);
		compress_into(z, src.p, src.len, &file);
		preader_init(&rd, 0);
		ck_assert_int_eq(preader_read(&rd, file.p, file.len), 0);
		ck_assert_uint_eq(rd.stream.len, src.len);
		ck_assert(memcmp(rd.stream.p, src.p, src.len) == 0);
		preader_fini(&rd);
		bytes_free(&file);
		compress__free(z);
	}
	bytes_free(&src);
}
END_TEST

/* ---- perf: perf 6.1 itself reads what we write ---- */

static void read_file(const char *path, struct bytes *b)
{
	_cleanup_fclose_ FILE *f = fopen(path, "rb");
	uint8_t buf[65536];
	size_t n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		bytes_add(b, buf, n);
}

static void write_file(const char *path, const struct bytes *b)
{
	_cleanup_fclose_ FILE *f = fopen(path, "wb");

	ck_assert_msg(f != NULL, "cannot create %s", path);
	ck_assert_uint_eq(fwrite(b->p, 1, b->len, f), b->len);
}

/* A report without perf's random "Tip" line, which differs from run to run. */
static void read_report(const char *path, struct bytes *b)
{
	_cleanup_fclose_ FILE *f = fopen(path, "r");
	char line[4096];

	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "# (Tip", 6))
			bytes_add(b, line, strlen(line));
}

/* Rewrite perf's uncompressed file with its data section as chunks from two compressors, with
 * FINISHED_ROUND left plain between them, and the COMPRESSED feature added. */
static void compress_perf_file(const struct bytes *in, struct bytes *out)
{
	static const size_t targets[] = { 8, 20000, 4096, 70000, 1, 30000, 200000, SIZE_MAX };
	struct perf_file_header h, nh;
	const struct perf_file_section *idx;
	struct perf_file_section sec[FEAT_BITS];
	const uint8_t *payload[FEAT_BITS];
	struct compress *z[2] = { compress__new(1), compress__new(3) };
	struct bytes data = { 0 };
	uint64_t raw = 0, pos;
	unsigned int nsec = 0, nin = 0, chunks = 0;
	uint32_t feat[5];
	const uint8_t *p, *end;

	ck_assert_ptr_nonnull(z[0]);
	ck_assert_ptr_nonnull(z[1]);
	memcpy(&h, in->p, sizeof(h));
	ck_assert_uint_eq(h.magic, PERF_MAGIC2);
	ck_assert(!(h.features[FEAT_COMPRESSED / 64] & (1ULL << (FEAT_COMPRESSED % 64))));
	ck_assert_uint_le(h.data.offset + h.data.size, in->len);

	p = in->p + h.data.offset;
	end = p + h.data.size;
	while (p < end) {
		const struct perf_event_header *e = (const void *)p;
		size_t target = targets[chunks % ARRAY_SIZE(targets)];
		const uint8_t *q = p;

		if (e->type == PERF_RECORD_FINISHED_ROUND) {
			bytes_add(&data, p, e->size);
			p += e->size;
			continue;
		}
		while (q < end && (size_t)(q - p) < target) {
			const struct perf_event_header *r = (const void *)q;

			if (r->type == PERF_RECORD_FINISHED_ROUND)
				break;
			ck_assert_uint_ge(r->size, 8);
			q += r->size;
		}
		compress_into(z[chunks % 2], p, q - p, &data);
		raw += q - p;
		chunks++;
		p = q;
	}
	ck_assert_uint_ge(chunks, 4);

	/* Feature sections, with COMPRESSED inserted in bit order. */
	feat[0] = 1;                 /* version */
	feat[1] = 1;                 /* zstd */
	feat[2] = 1;                 /* level */
	feat[3] = (uint32_t)(raw / data.len);
	feat[4] = COMPRESS_MAX_DECOMPRESSED;
	idx = (const void *)(in->p + h.data.offset + h.data.size);
	for (unsigned int bit = 0; bit < FEAT_BITS; bit++) {
		if (bit == FEAT_COMPRESSED) {
			sec[nsec] = (struct perf_file_section){ 0, sizeof(feat) };
			payload[nsec++] = (const uint8_t *)feat;
		} else if (h.features[bit / 64] & (1ULL << (bit % 64))) {
			sec[nsec] = idx[nin++];
			ck_assert_uint_le(sec[nsec].offset + sec[nsec].size, in->len);
			payload[nsec] = in->p + sec[nsec].offset;
			nsec++;
		}
	}
	nh = h;
	nh.data.size = data.len;
	nh.features[FEAT_COMPRESSED / 64] |= 1ULL << (FEAT_COMPRESSED % 64);
	bytes_add(out, &nh, sizeof(nh));
	bytes_add(out, in->p + sizeof(h), h.data.offset - sizeof(h));
	bytes_add(out, data.p, data.len);
	pos = out->len + nsec * sizeof(struct perf_file_section);
	for (unsigned int i = 0; i < nsec; i++) {
		struct perf_file_section s = { pos, sec[i].size };

		bytes_add(out, &s, sizeof(s));
		pos += sec[i].size;
	}
	for (unsigned int i = 0; i < nsec; i++)
		bytes_add(out, payload[i], sec[i].size);
	bytes_free(&data);
	compress__free(z[0]);
	compress__free(z[1]);
}

START_TEST(test_perf_reads_our_records)
{
	char dir[] = "/tmp/precord-compress-XXXXXX";
	char cmd[1024], path[256];
	struct bytes plain = { 0 }, comp = { 0 }, rep[2] = { 0 }, script[2] = { 0 }, err = { 0 };
	int rc;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && perf record -q -e cpu-clock -F 20000 -g -o plain.data -- sh -c "
		 "'i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done' >record.log 2>&1",
		 dir);
	rc = system(cmd);
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/plain.data", dir);
		read_file(path, &plain);
		compress_perf_file(&plain, &comp);
		snprintf(path, sizeof(path), "%s/z.data", dir);
		write_file(path, &comp);
		snprintf(cmd, sizeof(cmd),
			 "cd %s && perf report -i plain.data --stdio >plain.rep 2>plain.err && "
			 "perf report -i z.data --stdio >z.rep 2>z.err && "
			 "perf script -i plain.data >plain.script 2>>plain.err && "
			 "perf script -i z.data >z.script 2>>z.err",
			 dir);
		rc = system(cmd);
		snprintf(path, sizeof(path), "%s/z.err", dir);
		read_file(path, &err);
	}
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/plain.rep", dir);
		read_report(path, &rep[0]);
		snprintf(path, sizeof(path), "%s/z.rep", dir);
		read_report(path, &rep[1]);
		snprintf(path, sizeof(path), "%s/plain.script", dir);
		read_file(path, &script[0]);
		snprintf(path, sizeof(path), "%s/z.script", dir);
		read_file(path, &script[1]);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);

	/* Nothing on stderr: perf reports decompression trouble there and may still exit 0. */
	ck_assert_msg(rc == 0 && err.len == 0, "perf record/report/script: exit status %d, stderr: %.*s",
		      rc, (int)err.len, err.len ? (char *)err.p : "");
	ck_assert_uint_gt(rep[0].len, 200);
	ck_assert_msg(rep[0].len == rep[1].len && !memcmp(rep[0].p, rep[1].p, rep[0].len),
		      "perf report differs");
	ck_assert_uint_gt(script[0].len, 1000);
	ck_assert_msg(script[0].len == script[1].len &&
			      !memcmp(script[0].p, script[1].p, script[0].len),
		      "perf script differs");
	bytes_free(&plain);
	bytes_free(&comp);
	for (int i = 0; i < 2; i++) {
		bytes_free(&rep[i]);
		bytes_free(&script[i]);
	}
	bytes_free(&err);
}
END_TEST

Suite *compress_suite(void)
{
	Suite *s = suite_create("compress");
	TCase *tc;

	tc = tcase_create("roundtrip");
	tcase_add_test(tc, test_roundtrip_two_compressors);
	tcase_add_test(tc, test_roundtrip_record_interleave_breaks);
	suite_add_tcase(s, tc);

	tc = tcase_create("edge");
	tcase_add_test(tc, test_edge_incompressible);
	tcase_add_test(tc, test_edge_one_byte);
	tcase_add_test(tc, test_edge_all_paddings);
	tcase_add_test(tc, test_edge_large_chunk);
	suite_add_tcase(s, tc);

	tc = tcase_create("stream");
	tcase_add_test(tc, test_stream_two_compressors);
	tcase_add_test(tc, test_stream_sizes);
	tcase_add_test(tc, test_stream_block_limit);
	tcase_add_test(tc, test_stream_incompressible);
	tcase_add_test(tc, test_stream_long_matching_switch);
	tcase_add_test(tc, test_stream_fallback);
	tcase_add_test(tc, test_stream_api);
	suite_add_tcase(s, tc);

	tc = tcase_create("level");
	tcase_add_test(tc, test_level_bad);
	tcase_add_test(tc, test_level_extremes);
	suite_add_tcase(s, tc);

	tc = tcase_create("perf");
	tcase_add_test(tc, test_perf_reads_our_records);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	return s;
}
