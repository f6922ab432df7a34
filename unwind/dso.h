/* DSOs: one per name (per machine), shared by all maps that name it: a file on disk, the kernel
 * (symbols from kallsyms), the vDSO, or an anonymous mapping with nothing to read. A dso lives as
 * long as its machine; its ELF file and symbols are opened on first use, from any thread. */
#ifndef PRECORD_DSO_H
#define PRECORD_DSO_H

#include <stddef.h>
#include <stdint.h>

struct dso;
struct elf_file;
struct symtab;

enum dso_kind {
	DSO_FILE,	/* a path: ELF on disk */
	DSO_KERNEL,	/* [kernel.kallsyms] and modules: symbols from kallsyms */
	DSO_VDSO,	/* [vdso] */
	DSO_ANON,	/* //anon, [heap], [stack], memfd...: no file to read */
};

/* Errors: none of these fails; what cannot be opened or read is NULL (a missing file, another
 * build id, no symbols): the caller shows the frame unsymbolized, as perf does. */

/* The name perf shows: the path, "[kernel.kallsyms]", "[vdso]", ... */
const char *dso__name(const struct dso *d);
enum dso_kind dso__kind(const struct dso *d);
/* The build id known for the dso (BUILD_ID feature or MMAP2), its length (0: none) and the bytes
 * in *ret_id, valid until machine__free. */
size_t dso__build_id(const struct dso *d, const uint8_t **ret_id);

/* The order the machine made its dsos in, from 1: the kernel's first, then in the order the
 * file's MMAP records named them (perf's dso pointers mostly grow in that order). */
uint32_t dso__seq(const struct dso *d);

/* The dso's ELF file, opened on first call (through the machine's cache, checked against the
 * build id when known). Thread safe. NULL when there is none or it cannot be used. Borrowed:
 * valid until machine__free. */
struct elf_file *dso__elf(struct dso *d);
/* Why dso__elf(d) is NULL: elfcache__get's errno (ESTALE: the file there now is another
 * build), 0 when it is not or when d has no file. */
int dso__elf_error(struct dso *d);

/* perf's map_ip of dso address addr (a file's ELF vaddr, as unwind_frame.addr has it): the file
 * offset, ip - map start + pgoff, which perf shows for an unresolved user address. addr itself
 * for the kernel, a dso without ELF (its addr is an offset already) or an address outside the
 * file's PT_LOADs. Never fails. */
uint64_t dso__file_offset(struct dso *d, uint64_t addr);

/* Its symbols (ELF, debug file or kallsyms), loaded on first call; thread safe; NULL if none. */
const struct symtab *dso__symtab(struct dso *d);

/* Load its symbols, and with dwarf its DWARF for inlined frames and source lines, now (on a
 * thread of its own, ahead of the lookups, which then wait for a load in progress). */
void dso__preload(struct dso *d, bool dwarf);

#endif
