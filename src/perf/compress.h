/* zstd compression of raw perf records into PERF_RECORD_COMPRESSED records. Each output is one
 * whole zstd frame, ended in its last record, so outputs of several compressors (one per reader
 * thread) may interleave in one file and perf 6.1's single decompression stream still reads them.
 * Every emitted record decompresses to at least one byte and to at most COMPRESS_MAX_DECOMPRESSED
 * bytes. A frame is compressed in one call, or built from many feeds: long frames with
 * long-distance matching find the DWARF stack copies that repeat megabytes apart. */
#ifndef PRECORD_COMPRESS_H
#define PRECORD_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Upper bound of what one emitted record decompresses to; the COMPRESSED feature's mmap_len
 * must be at least this. */
#define COMPRESS_MAX_DECOMPRESSED (1024 * 1024 + 64 * 1024)

struct compress;

/* level: zstd level 1..22, with long-distance matching. Returns NULL with errno set (EINVAL
 * bad level, ENOMEM). */
struct compress *compress__new(int level);

/* Long-distance matching on or off (on by default). Off it
 * costs about a quarter of the CPU per MiB for ~15% larger output on DWARF recordings.
 * Takes effect from the next frame. Returns 0, -EBUSY while a streaming frame is open, -EIO if
 * zstd refuses. */
int compress__set_long_matching(struct compress *z, bool on);

/* Compress len bytes of whole records into COMPRESSED records (each a multiple of 8 bytes,
 * padded inside the zstd stream). *ret_out points into a buffer owned by z, valid until the next
 * call. The output must reach the file in one piece (between two calls' outputs, plain records
 * and other compressors' outputs may go). Returns the output length (0 for len 0), or -errno
 * (-ENOMEM, -EIO for a zstd failure; -EBUSY while a streaming frame is open); the caller may then
 * write the records uncompressed. */
ssize_t compress__compress(struct compress *z, const void *src, size_t len, const void **ret_out);

/* Streaming: add len bytes of whole records to the open frame (opening one if none is). zstd
 * keeps its own copy of the window, so src may be reused on return. The compressed bytes stay
 * inside z until compress__finish. Returns 0, or -ENOMEM (nothing was fed; the frame is as it was,
 * so the caller may finish it and write src uncompressed), or -EIO for a zstd failure (the open
 * frame is dropped with everything fed into it). */
int compress__feed(struct compress *z, const void *src, size_t len);

/* Bytes fed into the open frame (0 when none is open). */
size_t compress__fed(const struct compress *z);

/* End the open frame and cut it into COMPRESSED records, like compress__compress (same output
 * buffer, same rules for writing it). Returns the output length (0 when nothing was fed), or
 * -errno (-ENOMEM, -EIO); the frame is closed either way, so on failure what was fed is lost. */
ssize_t compress__finish(struct compress *z, const void **ret_out);

void compress__free(struct compress *z);

#endif
