/* Inlined frames and source lines of one ELF file's DWARF (libdw), as perf 6.1 shows them. perf
 * asks binutils' `addr2line -i -f` once per address and makes every record of the answer a frame,
 * innermost first: the record's function name (demangled without parameters) becomes
 * "NAME (inlined)" unless it is the symbol's own name. This module computes the same records from
 * a table of the functions and inlined calls of each compilation unit (built on first use), and
 * keeps addr2line's one piece of state: the first answer naming a C++ function that has no
 * linkage name uses the ELF symbol's name instead, and remembers that it did. Answers are cached
 * per address. Not thread safe: one thread asks, in sample order (the order perf asks in). */
#ifndef PRECORD_INLINES_H
#define PRECORD_INLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwarf_inlines;
struct symbol;

/* One record of addr2line's answer. Strings live as long as the dwarf_inlines. */
struct inline_frame {
	const char *name;	/* as perf names it: demangled, no parameters */
	const char *raw;	/* as the DWARF spells it (a linkage name stays mangled) */
	const char *file;	/* source file (full path as DWARF gives it); NULL: unknown */
	const char *dir;	/* the compilation's directory, which file is relative to;
				 * NULL: file is absolute (or there is none) */
	uint32_t line;		/* 0: unknown */
	bool inlined;		/* name is not the symbol's: perf's "NAME (inlined)" */
};

/* The DWARF of path (an ELF file with .debug_info: the separate debug file or the file itself).
 * Returns NULL with errno: the open error, ENODATA (no DWARF), ENOMEM. */
struct dwarf_inlines *dwarf_inlines__open(const char *path);

/* The frames at file vaddr addr, innermost first, into *ret (valid until free). sym is the
 * symbol holding addr (its name decides "inlined"; addr2line's names come from the same table).
 * Returns the number of frames, 0 when the DWARF does not cover addr (perf keeps the frame as it
 * is), or -ENOMEM. */
int dwarf_inlines__lookup(struct dwarf_inlines *d, uint64_t addr, const struct symbol *sym,
			  const struct inline_frame **ret);

void dwarf_inlines__free(struct dwarf_inlines *d);

#endif
