/* Symbol tables: function symbols of one ELF file (.symtab, else .dynsym) or of the running
 * kernel (/proc/kallsyms), sorted by address with perf's rules for aliases and sizes, and looked
 * up by address. A table is immutable once built and may be searched from any thread; the
 * demangled name of a symbol is computed on first use and published atomically. */
#ifndef PRECORD_SYMBOLS_H
#define PRECORD_SYMBOLS_H

#include <gelf.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symtab;

struct symbol {
	uint64_t start;	/* st_value (a file virtual address) or the kernel address */
	uint64_t end;	/* exclusive: start + st_size, or the next symbol's start when size is 0 */
	uint64_t size;	/* st_size as recorded; 0 when the table did not say */
	const char *name;	/* as in the table (mangled, version suffix kept) */
	_Atomic(const char *) pretty;	/* use symbol__name() */
	uint8_t binding;	/* STB_LOCAL / STB_GLOBAL / STB_WEAK */
};

/* Which section symtab__from_elf() takes symbols from. */
enum symtab_source {
	SYMTAB_SYMTAB = 1,	/* .symtab only */
	SYMTAB_DYNSYM = 2,	/* .dynsym only */
	SYMTAB_ANY = 3,	/* .symtab when present, else .dynsym (what perf does) */
};

/* Function symbols of elf as perf takes them: STT_FUNC, STT_GNU_IFUNC and untyped labels in
 * executable sections; defined and named. Names are copied, so elf may be closed afterwards.
 * Returns NULL with errno: ENOENT when the file has no such table (or no function in it),
 * ENOMEM, EIO for a damaged table. */
struct symtab *symtab__from_elf(Elf *elf, enum symtab_source source);

/* The same, with perf's PLT symbols ("cos@plt", one per .rela.plt entry, sized) taken from
 * runtime, the file that is mapped (elf may be its separate debug file, which has no PLT);
 * runtime NULL: none. symtab__from_elf(elf, s) is symtab__from_elf_plt(elf, s, elf). */
struct symtab *symtab__from_elf_plt(Elf *elf, enum symtab_source source, Elf *runtime);

/* Text symbols (t, T, w, W) of a kallsyms file; path NULL means /proc/kallsyms. Returns NULL
 * with errno: the open error, ENOENT when it lists nothing usable (kptr_restrict hides the
 * addresses as zero), ENOMEM. */
struct symtab *symtab__from_kallsyms(const char *path);

/* The symbol whose [start, end) holds addr, or NULL. O(log n), no locks. */
const struct symbol *symtab__find(const struct symtab *t, uint64_t addr);

/* The symbol named name (raw name, linear search: for tests and tools), or NULL. */
const struct symbol *symtab__find_name(const struct symtab *t, const char *name);

size_t symtab__nr(const struct symtab *t);
const struct symbol *symtab__symbol(const struct symtab *t, size_t i);

/* Frees t; NULL is a no-op. Pointers to its symbols and names die with it. */
void symtab__free(struct symtab *t);

/* The name to show: demangle__symbol() of the raw name when it is C++ (no parameters, no
 * @VERSION, no clone suffix, "@plt" kept), else the raw name.
 * Computed once per symbol, thread safe; never NULL (falls back to the raw name on ENOMEM). */
const char *symbol__name(const struct symbol *sym);

/* Whether /proc/kallsyms describes the kernel a recording was made on: the build id (from the
 * file's BUILD_ID feature for [kernel.kallsyms]) is compared with /sys/kernel/notes when given,
 * else osrelease (FEAT_OSRELEASE) with uname -r. False when neither is given. */
bool kallsyms__matches_running(const char *osrelease, const uint8_t *build_id, size_t build_id_len);

/* The running kernel's build id from /sys/kernel/notes, copied into buf (at most size bytes).
 * Returns its length or -errno (-ENOENT when the kernel has none). */
int kallsyms__running_build_id(uint8_t *buf, size_t size);

#endif
