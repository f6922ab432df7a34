/* Call stacks of samples: the kernel's callchain (PERF_CONTEXT_KERNEL / USER sections) and, when
 * the sample carries user registers and a stack copy, a DWARF unwind of the user stack through
 * libunwind's remote API (.eh_frame_hdr/.eh_frame read from the mapped ELF files; libunwind's own
 * frame-pointer heuristics take over where a function has no CFI). Frames come out leaf first,
 * symbolized against the sample's map snapshot.
 *
 * An unwinder belongs to one thread (a preport worker): it keeps one libunwind address space per
 * process, with libunwind's global cache, flushed when the snapshot's generation changes. Since
 * nothing is shared between workers, the address spaces' locks are never contended; and while an
 * unwinder runs, the sigprocmask() calls that Debian's libunwind (--enable-block-signals) makes
 * around every cache lock are skipped (see unwinder.c), which is most of the cached cost. */
#ifndef PRECORD_UNWINDER_H
#define PRECORD_UNWINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/sample.h"

struct unwinder;
struct map_snapshot;
struct dso;
struct symbol;

struct unwind_frame {
	uint64_t ip;	/* as recorded or unwound: callers' frames hold return addresses */
	uint64_t addr;	/* ip inside the dso (file vaddr, kernel address); ip when no map */
	struct dso *dso;	/* NULL: no map holds ip */
	const struct symbol *sym;	/* NULL: unknown (perf shows "[unknown]") */
	uint64_t sym_off;	/* addr - sym->start */
	bool kernel;
	bool caller;	/* ip is a return address, looked up at ip - 1 (DWARF-unwound callers) */
	bool unwound;	/* from the DWARF unwind of the user stack (perf 6.1 shows the functions
			 * inlined at a frame there only, not in a recorded call chain) */
	bool off_chain;	/* frame 0 only: the sampled ip, which the recorded call chain does not
			 * hold (perf record --user-callchains: a kernel sample with only its
			 * user chain): the Self row's frame, not one of the chain's */
};

struct unwinder_stats {
	uint64_t samples;	/* unwinder__unwind calls */
	uint64_t dwarf_samples;	/* of which had registers and a stack to unwind */
	uint64_t frames;	/* frames returned */
	uint64_t dwarf_errors;	/* DWARF unwinds that stopped on an error, not at the outermost frame */
	uint64_t truncated;	/* unwinds cut at max frames */
	uint64_t flushes;	/* address-space caches flushed for a new map generation */
	uint64_t address_spaces;	/* address spaces created */
	uint64_t sigprocmask_skipped;	/* libunwind's signal-mask calls avoided */
};

/* Returns NULL with errno ENOMEM. */
struct unwinder *unwinder__new(void);

/* With on, frames carry ip, caller and kernel only: no map's dso, no symbol is looked up (and
 * no symbol table loaded), for callers that keep addresses (preport --unwind-to). */
void unwinder__set_addresses_only(struct unwinder *u, bool on);

/* Unwind sample s of the process whose maps are `maps` (taken when s was reached in time order)
 * into frames[0..max), leaf first, symbolized. Kernel callchain frames come first; user frames
 * come from DWARF when s has registers and a stack, else from the callchain, else s->ip alone.
 * Returns the number of frames (>= 1 when max >= 1), or -EINVAL (max 0, s NULL) or -ENOMEM.
 * Not thread safe: one unwinder per thread. */
int unwinder__unwind(struct unwinder *u, const struct map_snapshot *maps,
		     const struct perf_sample *s, struct unwind_frame *frames, size_t max);

/* The same with perf report's --max-stack: at most max frames of the recorded call chain (its
 * innermost, or with outermost its outermost: perf's caller order walks the chain from its
 * root, and the sampled ip then comes first, off_chain, as perf's Self), and at most max more
 * unwound from the user stack, into frames[0..2 * max + 1). */
int unwinder__unwind_perf(struct unwinder *u, const struct map_snapshot *maps,
			  const struct perf_sample *s, struct unwind_frame *frames, size_t max,
			  bool outermost);

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *ret);

/* Frees u and its address spaces. NULL is a no-op. */
void unwinder__free(struct unwinder *u);

/* Symbolize one address of maps into ret. exact: ip is where the CPU was (a leaf, or a frame
 * interrupted by a signal); otherwise it is a return address and ip - 1 is looked up, so a call
 * at the very end of a function is not blamed on the next one. Thread safe. */
void unwind_frame__resolve(const struct map_snapshot *maps, uint64_t ip, bool exact,
			   struct unwind_frame *ret);

/* The name to show for a frame: the (demangled) symbol, or NULL when unknown. */
const char *unwind_frame__name(const struct unwind_frame *f);

struct inline_frame;

/* addr2line's records for frame f at file address addr (see unwind/inlines.h), as perf expands
 * them: user-space symbols of ELF files only. Same order rules and lifetime of *ret as
 * elf_file__inlines. Returns the number of frames, 0 when there are none, or -ENOMEM. */
int unwind_frame__inlines(const struct unwind_frame *f, uint64_t addr,
			  const struct inline_frame **ret);
/* The same records for any frame of a user-space symbol, a recorded chain's too (perf expands
 * none there, but its srclines are addr2line's all the same). */
int unwind_frame__lines(const struct unwind_frame *f, uint64_t addr,
			const struct inline_frame **ret);

#endif
