/* zstd compression of raw perf records into PERF_RECORD_COMPRESSED records. Each call compresses
 * one chunk into one zstd frame that is ended in the chunk's last record, so chunks from several
 * compressors (one per reader thread) may interleave in one file and perf 6.1's single
 * decompression stream still reads them. Every emitted record decompresses to at least one byte
 * and to at most ZCOMP_MAX_DECOMPRESSED bytes. */
#ifndef PRECORD_COMPRESS_H
#define PRECORD_COMPRESS_H

#include <stddef.h>
#include <sys/types.h>

/* Upper bound of what one emitted record decompresses to; the COMPRESSED feature's mmap_len
 * must be at least this. */
#define ZCOMP_MAX_DECOMPRESSED (1024 * 1024 + 64 * 1024)

struct zcomp;

/* level: zstd level 1..22. Returns NULL with errno set (EINVAL bad level, ENOMEM). */
struct zcomp *zcomp__new(int level);

/* Compress len bytes of whole records into COMPRESSED records (each a multiple of 8 bytes,
 * padded inside the zstd stream). *ret_out points into a buffer owned by z, valid until the next
 * call. The output must reach the file in one piece (between two calls' outputs, plain records
 * and other compressors' outputs may go). Returns the output length (0 for len 0), or -errno
 * (-ENOMEM, -EIO for a zstd failure); the caller may then write the records uncompressed. */
ssize_t zcomp__compress(struct zcomp *z, const void *src, size_t len, const void **ret_out);

void zcomp__free(struct zcomp *z);

#endif
