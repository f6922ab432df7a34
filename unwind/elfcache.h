/* ELF files opened once and shared: each file is mapped read-only (libelf ELF_C_READ_MMAP) and
 * kept with what the unwinder and the symbolizer need from it: its build id, PT_LOAD segments
 * (for load bias and address-to-offset), the parsed .eh_frame_hdr, and symbols loaded lazily
 * from its separate debug file (.gnu_debuglink, then /usr/lib/debug/.build-id) or from the file
 * itself. Files are refcounted and immutable after opening except for the lazy symbol
 * table, which is built under a per-file lock: any thread may use a file it holds. */
#ifndef PRECORD_ELFCACHE_H
#define PRECORD_ELFCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfcache;
struct elf_file;
struct symtab;
struct symbol;
struct inline_frame;

struct elfcache_opts {
	const char *debug_dir;	/* NULL: /usr/lib/debug (under symfs, with one) */
	/* perf's --symfs: every file is looked for under this directory (/usr/lib/libc.so.6 as
	 * symfs/usr/lib/libc.so.6), and only there; NULL: none. */
	const char *symfs;
	const char *buildid_dir;	/* perf's build-id cache; NULL: ~/.debug of the effective user
					 * ($HOME when it is theirs); "": none */
};

/* The .eh_frame_hdr of a file, in file virtual addresses. */
struct eh_frame_hdr_info {
	uint64_t hdr_vaddr;	/* start of .eh_frame_hdr */
	uint64_t table_vaddr;	/* its sorted {initial location, FDE} table (datarel sdata4 pairs) */
	uint64_t fde_count;
};

/* Returns NULL with errno ENOMEM. opts may be NULL. */
struct elfcache *elfcache__new(const struct elfcache_opts *opts);

/* A new reference to the file at path, opened on first request. When build_id is given the file
 * must carry the same id (perf pads ids to 20 bytes with zeros: trailing zeros are ignored);
 * when it does not, perf's build-id cache (buildid_dir/.build-id/xx/rest/elf) is tried. Failures
 * are cached too. Thread safe. Returns NULL with errno: ENOENT (no such file), ENOEXEC (not
 * ELF), ESTALE (build id differs: the file on disk is not the one recorded), ENOMEM, EIO. */
struct elf_file *elfcache__get(struct elfcache *c, const char *path, const uint8_t *build_id,
			       size_t build_id_len);

/* Drops the cache's references; files still held elsewhere stay valid. NULL is a no-op. */
void elfcache__free(struct elfcache *c);

/* Open a file outside any cache (same errors as elfcache__get, without the build-id cache).
 * debug_dir NULL: /usr/lib/debug. */
struct elf_file *elf_file__open(const char *path, const uint8_t *build_id, size_t build_id_len,
				const char *debug_dir);

/* A file from an in-memory image (copied), e.g. this process's vDSO; name is what
 * elf_file__path() returns. No debug-file lookup. Returns NULL with errno ENOEXEC or ENOMEM. */
struct elf_file *elf_file__from_memory(const char *name, const void *image, size_t size);

struct elf_file *elf_file__get(struct elf_file *f);
/* Drop a reference; the last one unmaps and closes. NULL is a no-op. */
void elf_file__put(struct elf_file *f);

const char *elf_file__path(const struct elf_file *f);

/* The file's build id (pointer into the file, valid while held) and its length; 0: none. */
size_t elf_file__build_id(const struct elf_file *f, const uint8_t **ret_id);

/* The whole file as mapped; reads at file offsets come from here. */
const uint8_t *elf_file__image(const struct elf_file *f, size_t *ret_size);

/* Load bias of a mapping of this file at start with file offset pgoff: runtime address =
 * file vaddr + bias. Returns 0, or -ENOENT when no PT_LOAD holds pgoff (then start - pgoff is
 * the best guess, and is stored). */
int elf_file__bias(const struct elf_file *f, uint64_t start, uint64_t pgoff, uint64_t *ret_bias);

/* File offset of file vaddr and how many bytes from there are file-backed in its PT_LOAD.
 * Returns 0 or -ENOENT (not in a PT_LOAD, or in its zero-filled tail). */
int elf_file__vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, uint64_t *ret_off,
			      uint64_t *ret_avail);

/* Returns 0 or -ENOENT (no PT_GNU_EH_FRAME, or a header this unwinder cannot use). */
int elf_file__eh_frame_hdr(const struct elf_file *f, struct eh_frame_hdr_info *ret);

/* Function symbols, where perf takes them: the .symtab of its separate debug file
 * (.gnu_debuglink beside it, in .debug/, under debug_dir; then perf's build-id cache entries elf
 * and debug, for a file opened through an elfcache; then debug_dir/.build-id); else the
 * file's .symtab; else its .dynsym; plus the file's PLT entries ("cos@plt"). Loaded on first
 * call (which may take milliseconds), thread safe. NULL when there are none. */
const struct symtab *elf_file__symtab(struct elf_file *f);

/* perf's frames at file vaddr (addr2line -i records, innermost first, see unwind/inlines.h) from
 * the DWARF of the debug file or of the file itself, opened on first call. sym: the symbol
 * holding vaddr. Thread safe (one lock per file), but the answers depend on the order of the
 * questions as addr2line's do: ask in sample order from one thread. *ret is valid until the next
 * call for f. Returns the number of frames, 0 when there is no DWARF for vaddr, or -ENOMEM. */
int elf_file__inlines(struct elf_file *f, uint64_t vaddr, const struct symbol *sym,
		      const struct inline_frame **ret);

/* Whether f has DWARF (of its own or in its debug file) that elf_file__inlines reads. */
bool elf_file__has_dwarf(struct elf_file *f);

/* Path of the file the symbols came from (f's own path or the debug file's); NULL before
 * elf_file__symtab() or when there are none. */
const char *elf_file__symtab_path(struct elf_file *f);

#endif
