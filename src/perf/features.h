/* Building blocks of perf.data sections, for the writer and record/tracefs (and tests): a
 * growable byte buffer with perf's encodings (strings are a u32 length padded to 64, then the
 * NUL-padded bytes), the host facts perf records (CPUID, CPUDESC, NRCPUS, TOTAL_MEM) computed
 * the way perf 6.1 computes them, and build-id readers that return an id only when it was read
 * from a well-formed GNU build-id note: a wrong id would make perf ignore the file on disk. */
#ifndef PRECORD_PERF_FEATURES_H
#define PRECORD_PERF_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* perf's NAME_ALIGN: strings and BUILD_ID file names are padded to this. */
#define FEAT_NAME_ALIGN 64
/* perf's BUILD_ID_SIZE: longest id a BUILD_ID entry holds. */
#define FEAT_BUILD_ID_MAX 20

/* An append-only buffer; the first allocation failure sets oom and later puts do nothing, so a
 * builder checks once at the end. */
struct fbuf {
	uint8_t *data;
	size_t len;
	size_t cap;
	bool oom;
};

void fbuf__put(struct fbuf *b, const void *src, size_t len);
void fbuf__put_zero(struct fbuf *b, size_t len);
void fbuf__put_u32(struct fbuf *b, uint32_t v);
void fbuf__put_u64(struct fbuf *b, uint64_t v);
/* perf's do_write_string: u32 len = strlen + 1 rounded up to 64, then the string, NUL-padded. */
void fbuf__put_string(struct fbuf *b, const char *s);
void fbuf__free(struct fbuf *b);

/* "GenuineIntel,6,85,4" as perf formats CPUID on x86 (from the cpuid instruction). Returns 0,
 * -ENOTSUP off x86, -ENOSPC if len is too small. */
int feat__cpuid(char *buf, size_t len);
/* The CPU's model name from /proc/cpuinfo, runs of blanks squashed to one space as perf does.
 * Returns 0, -ENOENT when no line names the model, or -errno of reading the file. */
int feat__cpudesc(char *buf, size_t len);
/* NRCPUS: avail = highest present CPU + 1 (perf's cpu__max_present_cpu), online = online now. */
void feat__nrcpus(uint32_t *ret_avail, uint32_t *ret_online);
/* TOTAL_MEM in kB (physical pages x page size). Returns 0 when it cannot be known. */
uint64_t feat__total_mem_kb(void);

/* Find the GNU build-id note (name "GNU", type NT_GNU_BUILD_ID) in a raw array of ELF notes of
 * 4-byte alignment, as /sys/kernel/notes holds. Returns the id length (1..20), -ENOENT when
 * there is none, -EINVAL when the notes are malformed or the id is longer than 20 bytes. */
int feat__build_id_from_notes(const void *notes, size_t len, uint8_t id[FEAT_BUILD_ID_MAX]);
/* Files larger than this, and note segments or sections larger than that, are not looked
 * into; only the first FEAT_BUILD_ID_NOTE_SCNS of a file are. */
#define FEAT_BUILD_ID_FILE_MAX (4LL << 30)
#define FEAT_BUILD_ID_NOTES_MAX (64 << 10)
#define FEAT_BUILD_ID_NOTE_SCNS 16

/* The build id of an ELF file (either class and byte order), from the notes of its PT_NOTE
 * segments, or of its SHT_NOTE sections when it has none (where perf looks), read with
 * bounded preads after lib/elfhdr checked its header. The path may be hostile: it is resolved
 * without following any symlink (openat2) and only a regular file is opened. Returns the id
 * length, -ENOENT (no note), -ENOEXEC (not ELF, tables out of bounds, or not a regular file),
 * -EFBIG (over FEAT_BUILD_ID_FILE_MAX), -ELOOP (a symlink on the way) or -errno of opening it. */
int feat__build_id_file(const char *path, uint8_t id[FEAT_BUILD_ID_MAX]);
/* The running kernel's build id, from /sys/kernel/notes. Same returns. */
int feat__build_id_kernel(uint8_t id[FEAT_BUILD_ID_MAX]);
/* The vDSO's build id, read from this process's own vDSO (the kernel maps the same one into
 * every 64-bit process), as perf reads it. Same returns. */
int feat__build_id_vdso(uint8_t id[FEAT_BUILD_ID_MAX]);

#endif
