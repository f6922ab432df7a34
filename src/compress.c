/* zstd compression of raw perf records into PERF_RECORD_COMPRESSED records, the way perf 6.1's
 * reader takes them: one decompression stream for the whole file, each record's payload fed to
 * it in a single call whose output space is the COMPRESSED feature's mmap_len.
 *
 * Each call is one zstd frame, fed in slices of at most ZCOMP_SLICE input bytes; each slice is
 * flushed (ZSTD_e_flush) into its own record, so a record holds whole blocks and decompresses to
 * exactly its slice (>= 1 byte, <= ZCOMP_MAX_DECOMPRESSED). The chunk's last record also ends the
 * frame, so chunks of several compressors can follow each other in one file as long as each
 * chunk's records stay together. Records are padded to a multiple of 8 bytes inside the zstd
 * stream (empty raw blocks), so the file keeps the kernel's 8-byte record alignment while every
 * payload byte is still valid zstd that perf's decoder consumes. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "compress.h"
#include "perf_abi.h"

/* Input bytes per record. Even incompressible input must fit one record after zstd's worst-case
 * expansion (ZSTD_compressBound: +~300 bytes here), the frame header (<= 18), our padding
 * (<= 21) and the frame end (3): 61440 + ~350 is well below PERF_COMPRESSED_MAX_PAYLOAD. It is
 * also below ZCOMP_MAX_DECOMPRESSED, which the reader's buffer must hold. */
#define ZCOMP_SLICE (60 * 1024)
/* Chunks up to this size take the whole-chunk path (see compress_whole). A record then holds
 * whole blocks of one frame, so it decompresses to at most the chunk. */
#define ZCOMP_WHOLE_MAX (1024 * 1024)
_Static_assert(ZCOMP_WHOLE_MAX <= ZCOMP_MAX_DECOMPRESSED, "a record must fit the reader's buffer");
/* Worst-case padding: up to seven 3-byte empty blocks. */
#define ZCOMP_MAX_PAD 21
/* Room kept for the frame end: a 3-byte last empty block (no checksum is written). */
#define ZCOMP_END_ROOM 16
/* Slack over ZSTD_compressBound for the frame and block headers of a flushed slice. */
#define ZCOMP_SLACK 64

_Static_assert(ZCOMP_SLICE <= ZCOMP_MAX_DECOMPRESSED, "a record must fit the reader's buffer");
_Static_assert(ZSTD_COMPRESSBOUND(ZCOMP_SLICE) + ZCOMP_SLACK + ZCOMP_MAX_PAD + ZCOMP_END_ROOM <=
		       PERF_COMPRESSED_MAX_PAYLOAD,
	       "a slice must fit one record");

struct zcomp {
	ZSTD_CCtx *cctx;
	uint8_t *out; /* grows to the largest chunk seen, then is reused */
	size_t cap;
	uint8_t *frame; /* whole-chunk path: the frame before it is cut into records */
	size_t frame_cap;
};

struct zcomp *zcomp__new(int level)
{
	struct zcomp *z;

	if (level < 1 || level > ZSTD_maxCLevel()) {
		errno = EINVAL;
		return NULL;
	}
	z = calloc(1, sizeof(*z));
	if (!z)
		return NULL;
	z->cctx = ZSTD_createCCtx();
	if (!z->cctx)
		goto nomem;
	/* No checksum: it would only be verified at the frame's end, after the reader has already
	 * used the data, and perf record does not write one either. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_contentSizeFlag, 1))) {
		zcomp__free(z);
		errno = EINVAL;
		return NULL;
	}
	return z;

nomem:
	zcomp__free(z);
	errno = ENOMEM;
	return NULL;
}

static int reserve(struct zcomp *z, size_t need)
{
	size_t cap;
	uint8_t *p;

	if (need <= z->cap)
		return 0;
	cap = z->cap ? z->cap : 64 * 1024;
	while (cap < need)
		cap *= 2;
	p = realloc(z->out, cap);
	if (!p)
		return -ENOMEM;
	z->out = p;
	z->cap = cap;
	return 0;
}

/* How much of the remaining input goes into the next record: everything when it fits, else the
 * longest run of whole records that fits, so that a reader without perf's carry-over of split
 * records still sees whole records; a cut inside a record when that run would be short (a huge
 * record, or bytes that are not records at all). */
static size_t slice_len(const uint8_t *p, size_t remain)
{
	size_t cut = 0;
	uint16_t sz;

	if (remain <= ZCOMP_SLICE)
		return remain;
	while (cut + 8 <= ZCOMP_SLICE) {
		memcpy(&sz, p + cut + 6, sizeof(sz)); /* perf_event_header.size */
		if (sz < 8 || cut + sz > ZCOMP_SLICE)
			break;
		cut += sz;
	}
	return cut >= ZCOMP_SLICE / 2 ? cut : ZCOMP_SLICE;
}

/* Padding that brings n payload bytes (after the 8-byte header) to a multiple of 8, made of k
 * empty non-last raw blocks (3 zero bytes each): 3k = -n (mod 8), and 3 * 5 = 15 = -1 (mod 8),
 * so k = 5n mod 8. */
static size_t pad_len(size_t n)
{
	return 3 * ((5 * (n & 7)) & 7);
}

/* Size of the zstd frame header at f (RFC 8878 3.1.1.1), or 0 when it is not one. */
static size_t frame_header_size(const uint8_t *f, size_t n)
{
	static const uint8_t did[4] = { 0, 1, 2, 4 };
	uint8_t fhd;
	size_t fcs;

	if (n < 5 || f[0] != 0x28 || f[1] != 0xb5 || f[2] != 0x2f || f[3] != 0xfd)
		return 0;
	fhd = f[4];
	switch (fhd >> 6) {
	case 0: fcs = (fhd & 0x20) ? 1 : 0; break;
	case 1: fcs = 2; break;
	case 2: fcs = 4; break;
	default: fcs = 8; break;
	}
	n = 5 + ((fhd & 0x20) ? 0 : 1) + did[fhd & 3] + fcs;
	return n;
}

/* The whole-chunk path: one frame compressed in one call (zstd's own 128 KiB blocks, no
 * flushes, so the ratio is what one stream gets), then cut into records at block boundaries.
 * Every record holds whole blocks, so perf decodes each in one call; the padding (empty raw
 * blocks) goes at a record's end, or before the last block in the frame's last record. Returns
 * the output length, or -E2BIG when a single block does not fit a record (incompressible data:
 * the caller falls back to flushed slices), -ENOMEM, -EIO. */
static ssize_t compress_whole(struct zcomp *z, const uint8_t *in, size_t len)
{
	size_t bound = ZSTD_compressBound(len), n, p, o = 0, rec = 0, body = 0;
	bool open = false;

	if (z->frame_cap < bound) {
		uint8_t *f = realloc(z->frame, bound);

		if (!f)
			return -ENOMEM;
		z->frame = f;
		z->frame_cap = bound;
	}
	/* the records: at most the frame, plus a header and padding per started 64 KiB */
	if (reserve(z, bound + (bound / (PERF_COMPRESSED_MAX_PAYLOAD / 2) + 2) * (8 + ZCOMP_MAX_PAD)))
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_only)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(z->cctx, len)))
		return -EIO;
	n = ZSTD_compress2(z->cctx, z->frame, z->frame_cap, in, len);
	if (ZSTD_isError(n))
		return -EIO;
	p = frame_header_size(z->frame, n);
	if (!p || p > n)
		return -EIO;
	/* the frame header opens the first record */
	rec = o;
	o += 8;
	memcpy(z->out + o, z->frame, p);
	body = p;
	open = true;
	while (p < n) {
		uint32_t bh, type, bsize, blen;
		bool last;

		if (p + 3 > n)
			return -EIO;
		bh = z->frame[p] | (uint32_t)z->frame[p + 1] << 8 | (uint32_t)z->frame[p + 2] << 16;
		last = bh & 1;
		type = (bh >> 1) & 3;
		bsize = bh >> 3;
		if (type == 3)
			return -EIO;
		blen = 3 + (type == 1 ? 1 : bsize);
		if (p + blen > n)
			return -EIO;
		if (8 + blen + ZCOMP_MAX_PAD + 18 > PERF_COMPRESSED_MAX_PAYLOAD)
			return -E2BIG;
		/* keep 3 bytes for a trailing empty last block, which must not start a record of
		 * its own (it would decompress to nothing) */
		if (open && body && !(last && bsize == 0) &&
		    body + blen + ZCOMP_MAX_PAD + 3 > PERF_COMPRESSED_MAX_PAYLOAD) {
			/* close this record: pad after its last block, the next block starts anew */
			size_t pad = pad_len(body);
			struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, (uint16_t)(8 + body + pad) };

			memset(z->out + o + body, 0, pad);
			memcpy(z->out + rec, &h, sizeof(h));
			o += body + pad;
			rec = o;
			o += 8;
			body = 0;
		}
		if (last) {
			/* padding goes before the last block, where the decoder still expects blocks */
			size_t pad = pad_len(body + blen);

			memset(z->out + o + body, 0, pad);
			body += pad;
		}
		memcpy(z->out + o + body, z->frame + p, blen);
		body += blen;
		p += blen;
		if (last)
			break;
	}
	if (p != n)
		return -EIO; /* trailing bytes (a checksum we did not ask for) */
	{
		struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, (uint16_t)(8 + body) };

		memcpy(z->out + rec, &h, sizeof(h));
		o += body;
	}
	return (ssize_t)o;
}

ssize_t zcomp__compress(struct zcomp *z, const void *src, size_t len, const void **ret_out)
{
	const uint8_t *in = src;
	size_t pos = 0, o = 0;

	if (!len) {
		*ret_out = z->out;
		return 0;
	}
	if (len <= ZCOMP_WHOLE_MAX) {
		ssize_t r = compress_whole(z, in, len);

		if (r >= 0 || r == -ENOMEM) {
			*ret_out = z->out;
			return r;
		}
		/* -E2BIG / -EIO: flushed slices below always fit */
	}
	/* A frame left open by a failed call is abandoned: its records were never written. */
	if (ZSTD_isError(ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_only)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(z->cctx, len)))
		return -EIO;
	/* Size for the whole chunk up front: slices are >= ZCOMP_SLICE / 2 but the last. */
	if (reserve(z, ZSTD_compressBound(len) +
			       (2 * (len / ZCOMP_SLICE) + 1) *
				       (8 + ZCOMP_SLACK + ZCOMP_MAX_PAD + ZCOMP_END_ROOM)))
		return -ENOMEM;

	while (pos < len) {
		const size_t n = slice_len(in + pos, len - pos);
		const bool last = pos + n == len;
		const size_t rec = o;
		struct perf_event_header hdr;
		ZSTD_inBuffer ib = { in + pos, n, 0 };
		ZSTD_outBuffer ob;
		size_t r, room, body, end = 0, pad, payload;

		if (reserve(z, o + 8 + ZSTD_compressBound(n) + ZCOMP_SLACK + ZCOMP_MAX_PAD +
				       ZCOMP_END_ROOM))
			return -ENOMEM;
		o += 8;
		room = z->cap - o - ZCOMP_MAX_PAD - ZCOMP_END_ROOM;
		if (room > PERF_COMPRESSED_MAX_PAYLOAD - ZCOMP_MAX_PAD - ZCOMP_END_ROOM)
			room = PERF_COMPRESSED_MAX_PAYLOAD - ZCOMP_MAX_PAD - ZCOMP_END_ROOM;
		ob = (ZSTD_outBuffer){ z->out + o, room, 0 };
		do {
			r = ZSTD_compressStream2(z->cctx, &ob, &ib, ZSTD_e_flush);
			if (ZSTD_isError(r))
				return -EIO;
		} while (r && ob.pos < ob.size);
		/* Not all flushed into one record: cannot happen for a slice this size. */
		if (r || ib.pos != n)
			return -EIO;
		body = ob.pos;

		if (last) {
			/* Nothing is pending after the flush, so this writes only the 3-byte last
			 * empty block (plus the pledged-size check). */
			ZSTD_inBuffer none = { NULL, 0, 0 };

			ob = (ZSTD_outBuffer){ z->out + o + body, ZCOMP_END_ROOM, 0 };
			r = ZSTD_compressStream2(z->cctx, &ob, &none, ZSTD_e_end);
			if (ZSTD_isError(r) || r)
				return -EIO;
			end = ob.pos;
		}
		/* The padding goes before the frame end, where the decoder still expects blocks. */
		pad = pad_len(body + end);
		memmove(z->out + o + body + pad, z->out + o + body, end);
		memset(z->out + o + body, 0, pad);
		payload = body + pad + end;

		hdr = (struct perf_event_header){
			.type = PERF_RECORD_COMPRESSED,
			.misc = 0,
			.size = (uint16_t)(8 + payload),
		};
		memcpy(z->out + rec, &hdr, sizeof(hdr));
		o += payload;
		pos += n;
	}
	*ret_out = z->out;
	return (ssize_t)o;
}

void zcomp__free(struct zcomp *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->cctx);
	free(z->frame);
	free(z->out);
	free(z);
}
