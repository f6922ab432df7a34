/* zstd compression of raw perf records into PERF_RECORD_COMPRESSED records, the way perf 6.1's
 * reader takes them: one decompression stream for the whole file, each record's payload fed to
 * it in a single call whose output space is the COMPRESSED feature's mmap_len.
 *
 * A frame is compressed whole (compress__compress, or fed slice by slice and finished), then cut
 * into records at zstd block boundaries, at most COMPRESS_RECORD_BLOCKS blocks (of <= 128 KiB) per
 * record, so each record decodes in one call to >= 1 byte and <= COMPRESS_MAX_DECOMPRESSED. When a
 * block is too large for a record the frame is re-encoded in slices of at most COMPRESS_SLICE bytes,
 * each flushed into its own record. A frame's last record ends it, so frames of several
 * compressors can follow each other in one file as long as each frame's records stay together.
 * Records are padded to a multiple of 8 bytes inside the zstd stream (empty raw blocks), so the
 * file keeps the kernel's 8-byte record alignment while every payload byte is still valid zstd
 * that perf's decoder consumes. Frames use long-distance matching over a window that decoders
 * accept by default (<= 2^27: perf keeps zstd's default windowLogMax). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "perf/compress.h"
#include "perf/abi.h"

/* Input bytes per record on the flushed-slice path. Even incompressible input must fit one record
 * after zstd's worst-case expansion (ZSTD_compressBound: +~300 bytes here), the frame header
 * (<= 18), our padding (<= 21) and the frame end (3): 61440 + ~350 is well below
 * PERF_COMPRESSED_MAX_PAYLOAD. It is also below COMPRESS_MAX_DECOMPRESSED, which the reader's buffer
 * must hold. */
#define COMPRESS_SLICE (60 * 1024)
/* Blocks per record on the whole-frame path: a block decodes to at most ZSTD_BLOCKSIZE_MAX. */
#define COMPRESS_RECORD_BLOCKS 8
_Static_assert(COMPRESS_RECORD_BLOCKS * ZSTD_BLOCKSIZE_MAX <= COMPRESS_MAX_DECOMPRESSED,
	       "a record must fit the reader's buffer");
/* A raw block too large for a record is re-cut into raw blocks of this size. */
#define COMPRESS_RAW_PIECE (60 * 1024)
/* Worst-case padding: up to seven 3-byte empty blocks. */
#define COMPRESS_MAX_PAD 21
/* Room kept for the frame end: a 3-byte last empty block (no checksum is written). */
#define COMPRESS_END_ROOM 16
/* Slack over ZSTD_compressBound for the frame and block headers of a flushed slice. */
#define COMPRESS_SLACK 64
/* The window of long-distance matching. Frames are appended at up to 4 MiB of input (see
 * readers.c; 8 MiB before 2026-12-03, when a 4 MiB window compressed them within 0.3% of an
 * 8 or 16 MiB one), and it costs 4 MiB per compressor (plus ~0.5 MiB of LDM table) and as much
 * once per file in the decoder. */
#ifndef COMPRESS_WINDOW_LOG
#define COMPRESS_WINDOW_LOG 22
#endif
/* LDM candidates per hash bucket, log2: 4 instead of zstd's 8 made LDM ~25% cheaper (~1.2 ms
 * instead of ~1.6 per MiB at level 1 here, against ~0.3 without LDM) for ~1.5% larger output. */
#define COMPRESS_LDM_BUCKET_LOG 2
/* zstd's ZSTD_WINDOWLOG_LIMIT_DEFAULT, declared only for static linking */
_Static_assert(COMPRESS_WINDOW_LOG <= 27, "default decoders (perf's) must accept the window");

_Static_assert(COMPRESS_SLICE <= COMPRESS_MAX_DECOMPRESSED, "a record must fit the reader's buffer");
_Static_assert(COMPRESS_RAW_PIECE + 3 + 18 + COMPRESS_MAX_PAD + 3 <= PERF_COMPRESSED_MAX_PAYLOAD,
	       "a raw piece must fit one record");
_Static_assert(ZSTD_COMPRESSBOUND(COMPRESS_SLICE) + COMPRESS_SLACK + COMPRESS_MAX_PAD + COMPRESS_END_ROOM <=
		       PERF_COMPRESSED_MAX_PAYLOAD,
	       "a slice must fit one record");

struct compress {
	ZSTD_CCtx *cctx;
	uint8_t *out;   /* the records; grows to the largest output seen, then is reused */
	size_t cap;
	uint8_t *frame; /* the compressed frame before it is cut into records */
	size_t frame_cap;
	size_t frame_len;
	bool open;      /* a streaming frame is open */
	size_t fed;     /* bytes fed into it */
	ZSTD_DCtx *dctx; /* re-encoding only: the frame decoded again */
	uint8_t *raw;
	size_t raw_cap;
};

struct compress *compress__new(int level)
{
	struct compress *z;

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
	 * used the data, and perf record does not write one either. Long-distance matching finds
	 * the stack copies of DWARF samples, which repeat far beyond level 1's own window. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_enableLongDistanceMatching, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_windowLog, COMPRESS_WINDOW_LOG)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_ldmBucketSizeLog,
						COMPRESS_LDM_BUCKET_LOG))) {
		compress__free(z);
		errno = EINVAL;
		return NULL;
	}
	return z;

nomem:
	compress__free(z);
	errno = ENOMEM;
	return NULL;
}

/* Off: ZSTD_ps_disable (a static-only name) since zstd 1.5.1, where 0 means "auto" (off at
 * level 1 with our window, but not a promise); before, the parameter was a plain flag and 2
 * would turn it on. */
#if ZSTD_VERSION_NUMBER >= 10501
#define LDM_OFF 2
#else
#define LDM_OFF 0
#endif

int compress__set_long_matching(struct compress *z, bool on)
{
	if (z->open)
		return -EBUSY;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_enableLongDistanceMatching,
						on ? 1 : LDM_OFF)))
		return -EIO;
	return 0;
}

static int reserve(struct compress *z, size_t need)
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

	if (remain <= COMPRESS_SLICE)
		return remain;
	while (cut + 8 <= COMPRESS_SLICE) {
		memcpy(&sz, p + cut + 6, sizeof(sz)); /* perf_event_header.size */
		if (sz < 8 || cut + sz > COMPRESS_SLICE)
			break;
		cut += sz;
	}
	return cut >= COMPRESS_SLICE / 2 ? cut : COMPRESS_SLICE;
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

/* Appends frame blocks to z->out as COMPRESSED records. */
struct cutter {
	size_t o;       /* end of the finished records */
	size_t body;    /* payload bytes of the open record (after its 8-byte header at o) */
	unsigned int blocks; /* blocks in it that yield data */
};

/* Close the open record: padding after its last block, then its header. */
static void close_record(struct compress *z, struct cutter *c)
{
	size_t pad = pad_len(c->body);
	struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, (uint16_t)(8 + c->body + pad) };

	memset(z->out + c->o + 8 + c->body, 0, pad);
	memcpy(z->out + c->o, &h, sizeof(h));
	c->o += 8 + c->body + pad;
	c->body = 0;
	c->blocks = 0;
}

/* Add one block (3-byte header hdr, then dlen bytes at data) to the open record, first closing
 * it when the block would not fit or the record has its COMPRESS_RECORD_BLOCKS already. A block
 * that yields no data (the frame's empty last block) never starts a record: it would decompress
 * to nothing. The padding of the frame's last record goes before its last block, where the
 * decoder still expects blocks. */
static int put_block(struct compress *z, struct cutter *c, uint32_t hdr, const uint8_t *data,
		     size_t dlen)
{
	const bool last = hdr & 1, yields = ((hdr >> 1) & 3) == 2 || (hdr >> 3);
	const size_t blen = 3 + dlen;

	if (yields && c->blocks &&
	    (c->blocks == COMPRESS_RECORD_BLOCKS ||
	     c->body + blen + COMPRESS_MAX_PAD + 3 > PERF_COMPRESSED_MAX_PAYLOAD))
		close_record(z, c);
	/* the frame header (<= 18 bytes) and this block, padding, and the next record's header */
	if (reserve(z, c->o + 8 + c->body + blen + COMPRESS_MAX_PAD + 8 + 18))
		return -ENOMEM;
	if (last) {
		size_t pad = pad_len(c->body + blen);

		memset(z->out + c->o + 8 + c->body, 0, pad);
		c->body += pad;
	}
	z->out[c->o + 8 + c->body] = hdr & 0xff;
	z->out[c->o + 8 + c->body + 1] = (hdr >> 8) & 0xff;
	z->out[c->o + 8 + c->body + 2] = hdr >> 16;
	memcpy(z->out + c->o + 8 + c->body + 3, data, dlen);
	c->body += blen;
	if (yields)
		c->blocks++;
	return 0;
}

/* Cut a finished frame of n bytes at z->frame into records at z->out, each holding whole blocks:
 * perf decodes each record in one call, and each decompresses to at most COMPRESS_RECORD_BLOCKS
 * blocks of 128 KiB. A raw block too large for a record is re-cut into smaller raw blocks, which
 * decode to the same bytes and leave the decoder's state (repeat offsets, entropy tables) as it
 * was. Returns the output length, or -E2BIG when a compressed block does not fit a record (the
 * caller re-encodes in flushed slices), -ENOMEM, -EIO. */
static ssize_t cut_frame(struct compress *z, size_t n)
{
	const uint8_t *f = z->frame;
	struct cutter c = { 0, 0, 0 };
	size_t p = frame_header_size(f, n);

	if (!p || p > n)
		return -EIO;
	/* the frame header opens the first record */
	if (reserve(z, 8 + p))
		return -ENOMEM;
	memcpy(z->out + 8, f, p);
	c.body = p;
	for (;;) {
		uint32_t bh, type, bsize, blen;
		int err;

		if (p + 3 > n)
			return -EIO;
		bh = f[p] | (uint32_t)f[p + 1] << 8 | (uint32_t)f[p + 2] << 16;
		type = (bh >> 1) & 3;
		bsize = bh >> 3;
		if (type == 3)
			return -EIO;
		blen = 3 + (type == 1 ? 1 : bsize);
		if (p + blen > n)
			return -EIO;
		if (8 + blen + COMPRESS_MAX_PAD + 18 <= PERF_COMPRESSED_MAX_PAYLOAD) {
			err = put_block(z, &c, bh, f + p + 3, blen - 3);
		} else if (type == 0) {
			for (uint32_t off = 0; off < bsize; off += COMPRESS_RAW_PIECE) {
				uint32_t len = bsize - off < COMPRESS_RAW_PIECE ? bsize - off :
										COMPRESS_RAW_PIECE;
				bool end = (bh & 1) && off + len == bsize;

				err = put_block(z, &c, len << 3 | end, f + p + 3 + off, len);
				if (err)
					break;
			}
		} else {
			return -E2BIG;
		}
		if (err)
			return err;
		p += blen;
		if (bh & 1)
			break;
	}
	if (p != n)
		return -EIO; /* trailing bytes (a checksum we did not ask for) */
	{
		struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, (uint16_t)(8 + c.body) };

		memcpy(z->out + c.o, &h, sizeof(h));
		c.o += 8 + c.body;
	}
	return (ssize_t)c.o;
}

/* Make room for n bytes of compressed frame. */
static int reserve_frame(struct compress *z, size_t n)
{
	size_t cap;
	uint8_t *f;

	if (n <= z->frame_cap)
		return 0;
	cap = z->frame_cap ? z->frame_cap : 64 * 1024;
	while (cap < n)
		cap *= 2;
	f = realloc(z->frame, cap);
	if (!f)
		return -ENOMEM;
	z->frame = f;
	z->frame_cap = cap;
	return 0;
}

/* The whole-chunk path: one frame compressed in one call (zstd's own 128 KiB blocks, no
 * flushes, so the ratio is what one stream gets), then cut into records at block boundaries.
 * Returns the output length, or -E2BIG (see cut_frame), -ENOMEM, -EIO. */
static ssize_t compress_whole(struct compress *z, const uint8_t *in, size_t len)
{
	size_t n;

	if (reserve_frame(z, ZSTD_compressBound(len)))
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_only)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(z->cctx, len)))
		return -EIO;
	n = ZSTD_compress2(z->cctx, z->frame, z->frame_cap, in, len);
	if (ZSTD_isError(n))
		return -EIO;
	return cut_frame(z, n);
}

/* The fallback: one frame fed in slices of at most COMPRESS_SLICE bytes, each flushed into a
 * record of its own, which always fits (see COMPRESS_SLICE). Returns the output length, -ENOMEM or
 * -EIO. */
static ssize_t compress_slices(struct compress *z, const uint8_t *in, size_t len)
{
	size_t pos = 0, o = 0;

	/* A frame left open by a failed call is abandoned: its records were never written. */
	if (ZSTD_isError(ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_only)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(z->cctx, len)))
		return -EIO;
	/* Size for the whole chunk up front: slices are >= COMPRESS_SLICE / 2 but the last. */
	if (reserve(z, ZSTD_compressBound(len) +
			       (2 * (len / COMPRESS_SLICE) + 1) *
				       (8 + COMPRESS_SLACK + COMPRESS_MAX_PAD + COMPRESS_END_ROOM)))
		return -ENOMEM;

	while (pos < len) {
		const size_t n = slice_len(in + pos, len - pos);
		const bool last = pos + n == len;
		const size_t rec = o;
		struct perf_event_header hdr;
		ZSTD_inBuffer ib = { in + pos, n, 0 };
		ZSTD_outBuffer ob;
		size_t r, room, body, end = 0, pad, payload;

		if (reserve(z, o + 8 + ZSTD_compressBound(n) + COMPRESS_SLACK + COMPRESS_MAX_PAD +
				       COMPRESS_END_ROOM))
			return -ENOMEM;
		o += 8;
		room = z->cap - o - COMPRESS_MAX_PAD - COMPRESS_END_ROOM;
		if (room > PERF_COMPRESSED_MAX_PAYLOAD - COMPRESS_MAX_PAD - COMPRESS_END_ROOM)
			room = PERF_COMPRESSED_MAX_PAYLOAD - COMPRESS_MAX_PAD - COMPRESS_END_ROOM;
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

			ob = (ZSTD_outBuffer){ z->out + o + body, COMPRESS_END_ROOM, 0 };
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
	return (ssize_t)o;
}


ssize_t compress__compress(struct compress *z, const void *src, size_t len, const void **ret_out)
{
	ssize_t r;

	if (z->open)
		return -EBUSY;
	if (!len) {
		*ret_out = z->out;
		return 0;
	}
	r = compress_whole(z, src, len);
	if (r == -E2BIG || r == -EIO)
		r = compress_slices(z, src, len);
	*ret_out = z->out;
	return r;
}

int compress__feed(struct compress *z, const void *src, size_t len)
{
	ZSTD_inBuffer ib = { src, len, 0 };
	ZSTD_outBuffer ob;

	if (!len)
		return 0;
	/* Room for all this call can emit (blocks of what zstd buffered before, and of src), so
	 * zstd compresses straight into the frame buffer and never stops for lack of space. */
	if (reserve_frame(z, z->frame_len + ZSTD_compressBound(len + ZSTD_BLOCKSIZE_MAX) +
				     COMPRESS_SLACK))
		return -ENOMEM;
	if (!z->open) {
		if (ZSTD_isError(ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_only)))
			return -EIO;
		z->open = true;
		z->frame_len = 0;
		z->fed = 0;
	}
	ob = (ZSTD_outBuffer){ z->frame, z->frame_cap, z->frame_len };
	while (ib.pos < ib.size) {
		size_t r = ZSTD_compressStream2(z->cctx, &ob, &ib, ZSTD_e_continue);

		if (ZSTD_isError(r)) {
			bool untouched = !z->fed && !ib.pos;

			z->open = false;
			z->fed = 0;
			/* zstd allocates its workspace at a frame's first call */
			return untouched && ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ?
				       -ENOMEM : -EIO;
		}
		if (ob.pos == ob.size) {
			/* cannot happen with the room reserved above; abandon rather than loop */
			z->open = false;
			z->fed = 0;
			return -EIO;
		}
	}
	z->frame_len = ob.pos;
	z->fed += len;
	return 0;
}

size_t compress__fed(const struct compress *z)
{
	return z->open ? z->fed : 0;
}

/* Decompress the finished frame (whose content is the fed bytes) into z->raw. */
static int unpack_frame(struct compress *z, size_t fed)
{
	size_t n;

	if (!z->dctx && !(z->dctx = ZSTD_createDCtx()))
		return -ENOMEM;
	if (z->raw_cap < fed) {
		uint8_t *p = realloc(z->raw, fed);

		if (!p)
			return -ENOMEM;
		z->raw = p;
		z->raw_cap = fed;
	}
	n = ZSTD_decompressDCtx(z->dctx, z->raw, fed, z->frame, z->frame_len);
	return ZSTD_isError(n) || n != fed ? -EIO : 0;
}

ssize_t compress__finish(struct compress *z, const void **ret_out)
{
	ZSTD_inBuffer none = { NULL, 0, 0 };
	ZSTD_outBuffer ob;
	size_t fed = z->fed, r;
	ssize_t n;

	if (!z->open) {
		*ret_out = z->out;
		return 0;
	}
	z->open = false;
	z->fed = 0;
	/* what zstd still buffers is less than a block (plus its own output buffer) */
	if (reserve_frame(z, z->frame_len + 2 * ZSTD_compressBound(ZSTD_BLOCKSIZE_MAX) + COMPRESS_SLACK))
		return -ENOMEM;
	ob = (ZSTD_outBuffer){ z->frame, z->frame_cap, z->frame_len };
	do {
		r = ZSTD_compressStream2(z->cctx, &ob, &none, ZSTD_e_end);
		if (ZSTD_isError(r))
			return -EIO;
	} while (r && ob.pos < ob.size);
	if (r)
		return -EIO;
	z->frame_len = ob.pos;
	n = cut_frame(z, z->frame_len);
	if (n == -E2BIG) {
		/* A compressed block larger than a record: rare (input that compresses by less
		 * than half, yet enough for zstd to keep it compressed), so the frame is decoded
		 * again and re-encoded in flushed slices rather than kept whole to begin with. */
		int err = unpack_frame(z, fed);

		n = err ? err : compress_slices(z, z->raw, fed);
		/* the slices are rare: do not keep a frame's worth of memory for them */
		free(z->raw);
		z->raw = NULL;
		z->raw_cap = 0;
	}
	*ret_out = z->out;
	return n;
}

void compress__free(struct compress *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->cctx);
	ZSTD_freeDCtx(z->dctx);
	free(z->raw);
	free(z->frame);
	free(z->out);
	free(z);
}
