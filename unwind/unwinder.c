/* DWARF unwinding of sampled user stacks through libunwind's remote API. The registers and the
 * stack copy of one sample, plus the process's map snapshot, form the "remote" target: memory
 * reads are served from the stack copy when they fall in [SP, SP + dyn_size), else from the
 * mapped ELF file behind the address. libunwind's cache is keyed by IP only, so each process has
 * its own address space per unwinder, flushed when the snapshot's generation moves on. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <libunwind.h>

#include "unwind/elfcache.h"
#include "unwind/dso.h"
#include "unwind/map_snapshot.h"
#include "perf/abi.h"
#include "unwind/symbols.h"
#include "unwind/unwinder.h"

/* Exported by libunwind but not declared in its headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

#define KERNEL_SPACE_START 0xffff800000000000ULL
#define NR_UNW_REGS 17	/* RAX..R15 and RIP in DWARF numbering */
#define MAX_ADDRESS_SPACES 1024

/*
 * Debian builds libunwind with --enable-block-signals: every lock of an address-space cache or
 * memory pool is wrapped in two sigprocmask() calls, about 75% of the time of a cached unwind.
 * The blocking exists so that a signal handler unwinding the *local* process cannot deadlock on
 * a lock its own thread holds; preport only unwinds remote address spaces and never from a
 * signal handler. libunwind calls sigprocmask through its PLT, so this definition (in the
 * executable) receives those calls: while this thread is inside unwinder__unwind they are
 * skipped; any other caller gets the real thing through pthread_sigmask, which has the same
 * semantics in a multithreaded process.
 */
static __thread bool tls_in_unwind;
static __thread uint64_t tls_skipped;

int sigprocmask(int how, const sigset_t *set, sigset_t *oldset)
{
	int r;

	if (tls_in_unwind) {
		tls_skipped++;
		if (oldset)
			sigemptyset(oldset);
		return 0;
	}
	r = pthread_sigmask(how, set, oldset);
	if (r) {
		errno = r;
		return -1;
	}
	return 0;
}

struct uctx {
	const struct map_snapshot *maps;
	unw_word_t regs[NR_UNW_REGS];
	uint32_t reg_valid;	/* bit per libunwind register */
	uint64_t sp;
	const uint8_t *stack;
	uint64_t stack_len;
	const struct map *last_map;	/* access_mem's one-entry cache */
	/* The file find_proc_info last used, to reach its .eh_frame_hdr/.eh_frame by file vaddr
	 * when the segment holding them was never recorded as a map. */
	const struct elf_file *last_elf;
	uint64_t last_bias;
};

struct as_entry {
	struct as_entry *next;
	int32_t pid;
	uint64_t gen;
	unw_addr_space_t as;
};

/* Resolved frames by (map generation, ip, exact): samples repeat the same few thousand
 * addresses, and a map generation is one process's maps at one time, never reused. */
#define RESOLVE_CACHE 4096

struct resolved {
	uint64_t gen, ip;
	bool exact, valid;
	struct unwind_frame f;
};

struct unwinder {
	struct as_entry *buckets[256];
	size_t nr_as;
	struct unwinder_stats stats;
	bool addresses_only;            /* frames without dso and symbol (unwinder__set_...) */
	struct resolved cache[RESOLVE_CACHE];
};

/* perf register index for each libunwind (DWARF) register number. */
static const int8_t perf_reg_of[NR_UNW_REGS] = {
	[UNW_X86_64_RAX] = PERF_X86_AX, [UNW_X86_64_RDX] = PERF_X86_DX,
	[UNW_X86_64_RCX] = PERF_X86_CX, [UNW_X86_64_RBX] = PERF_X86_BX,
	[UNW_X86_64_RSI] = PERF_X86_SI, [UNW_X86_64_RDI] = PERF_X86_DI,
	[UNW_X86_64_RBP] = PERF_X86_BP, [UNW_X86_64_RSP] = PERF_X86_SP,
	[UNW_X86_64_R8] = PERF_X86_R8, [UNW_X86_64_R9] = PERF_X86_R9,
	[UNW_X86_64_R10] = PERF_X86_R10, [UNW_X86_64_R11] = PERF_X86_R11,
	[UNW_X86_64_R12] = PERF_X86_R12, [UNW_X86_64_R13] = PERF_X86_R13,
	[UNW_X86_64_R14] = PERF_X86_R14, [UNW_X86_64_R15] = PERF_X86_R15,
	[UNW_X86_64_RIP] = PERF_X86_IP,
};

static bool read_file_word(const struct elf_file *f, uint64_t off, unw_word_t *valp)
{
	size_t size;
	const uint8_t *img = elf_file__image(f, &size);

	if (off > size || size - off < sizeof(*valp))
		return false;
	memcpy(valp, img + off, sizeof(*valp));
	return true;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
		      void *arg)
{
	struct uctx *c = arg;
	uint64_t off = addr - c->sp, avail;
	const struct map *mp;
	struct elf_file *f;

	if (write)
		return -UNW_EINVAL;
	/* Hot path first: ~90% of reads are the stack copy (one unsigned compare). perf 6.1 reads
	 * a word there only when it ends before the copy's last byte (addr + 8 < end): its last
	 * word is read as any address past the copy (below). */
	if (off < c->stack_len && c->stack_len - off > sizeof(*valp)) {
		memcpy(valp, c->stack + off, sizeof(*valp));
		return 0;
	}
	mp = c->last_map;
	if (!mp || addr < mp->start || addr >= mp->end) {
		mp = map_snapshot__find(c->maps, addr);
		if (mp)
			c->last_map = mp;
	}
	if (mp && (f = dso__elf(mp->dso)) && read_file_word(f, addr - mp->start + mp->pgoff, valp))
		return 0;
	if (c->last_elf && !elf_file__vaddr_to_offset(c->last_elf, addr - c->last_bias, &off,
						      &avail) &&
	    avail >= sizeof(*valp) && read_file_word(c->last_elf, off, valp))
		return 0;
	/* An address in a map of no file (the [stack] past the copy, which DWARF recordings
	 * map): perf reads 0 there without an error, and so its unwind goes on to a return
	 * address of 0, a last frame it shows as [unknown] 0xffffffffffffffff (see
	 * unwind_dwarf). Do the same. */
	if (mp && dso__kind(mp->dso) == DSO_ANON) {
		*valp = 0;
		return 0;
	}
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write,
		      void *arg)
{
	struct uctx *c = arg;

	if (write || reg < 0 || reg >= NR_UNW_REGS || !(c->reg_valid & (1U << reg)))
		return -UNW_EBADREG;
	*valp = c->regs[reg];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	return -UNW_EINVAL;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

/* Called on every cache miss: there is no dynamic (JIT-registered) unwind info remotely. */
static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	return -UNW_ENOINFO;
}

/* Whether d is a file that cannot be read: gone, not under --symfs. (One that another build
 * has replaced since is not: libunwind's guess through %rbp then goes on, as perf goes on with
 * the unwind tables of the file there now.) */
static bool no_file(struct dso *d)
{
	int err;

	if (dso__kind(d) != DSO_FILE)
		return false;
	err = dso__elf_error(d);
	return err && err != ESTALE;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct uctx *c = arg;
	const struct map *mp = map_snapshot__find(c->maps, ip);
	struct eh_frame_hdr_info eh;
	unw_dyn_info_t di;
	struct elf_file *f;
	uint64_t bias;

	/* No call frame information for ip: libunwind then guesses through %rbp (-UNW_ENOINFO),
	 * but not in a file that cannot be read, where code built without frame pointers holds
	 * anything in %rbp: perf's chain stops there, and so does this one (another error). */
	if (!mp || !(f = dso__elf(mp->dso)) || elf_file__eh_frame_hdr(f, &eh) < 0)
		return mp && no_file(mp->dso) ? -UNW_EINVAL : -UNW_ENOINFO;
	elf_file__bias(f, mp->start, mp->pgoff, &bias);
	c->last_elf = f;
	c->last_bias = bias;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = mp->start;
	di.end_ip = mp->end;
	di.u.rti.segbase = bias + eh.hdr_vaddr;
	di.u.rti.table_data = bias + eh.table_vaddr;
	/* In words, not bytes: each entry is two 4-byte fields. */
	di.u.rti.table_len = eh.fde_count * 8 / sizeof(unw_word_t);
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = NULL,
};

struct unwinder *unwinder__new(void)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		errno = ENOMEM;
	return u;
}

static void drop_address_spaces(struct unwinder *u)
{
	for (size_t i = 0; i < 256; i++) {
		struct as_entry *e = u->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			unw_destroy_addr_space(e->as);
			free(e);
		}
		u->buckets[i] = NULL;
	}
	u->nr_as = 0;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	drop_address_spaces(u);
	free(u);
}

void unwinder__set_addresses_only(struct unwinder *u, bool on)
{
	u->addresses_only = on;
}

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *ret)
{
	*ret = u->stats;
}

static unw_addr_space_t address_space(struct unwinder *u, const struct map_snapshot *maps)
{
	int32_t pid = map_snapshot__pid(maps);
	uint64_t gen = map_snapshot__gen(maps);
	size_t h = ((uint32_t)pid * 2654435761U) >> 24;
	struct as_entry *e;

	for (e = u->buckets[h]; e; e = e->next) {
		if (e->pid == pid)
			break;
	}
	if (e) {
		if (e->gen != gen) {
			unw_flush_cache(e->as, 0, 0);
			e->gen = gen;
			u->stats.flushes++;
		}
		return e->as;
	}
	if (u->nr_as >= MAX_ADDRESS_SPACES) {
		/* System-wide reports with many short-lived processes: start over rather than
		 * grow without bound. */
		drop_address_spaces(u);
		h = ((uint32_t)pid * 2654435761U) >> 24;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->as = unw_create_addr_space(&accessors, 0);
	if (!e->as) {
		free(e);
		return NULL;
	}
	unw_set_caching_policy(e->as, UNW_CACHE_GLOBAL);
	e->pid = pid;
	e->gen = gen;
	e->next = u->buckets[h];
	u->buckets[h] = e;
	u->nr_as++;
	u->stats.address_spaces++;
	return e->as;
}

void unwind_frame__resolve(const struct map_snapshot *maps, uint64_t ip, bool exact,
			   struct unwind_frame *ret)
{
	uint64_t look = exact || !ip ? ip : ip - 1, addr = look, bias;
	const struct map *mp = map_snapshot__find(maps, look);
	const struct symtab *t;
	struct dso *dso = NULL;
	struct elf_file *f;

	memset(ret, 0, sizeof(*ret));
	ret->ip = ip;
	ret->caller = look != ip;
	ret->kernel = look >= KERNEL_SPACE_START;
	/* Code runs only from executable mappings: an address in a mapping of data (where a DWARF
	 * unwind ran off at the end of a stack, libc's data after exit's handlers) names no file,
	 * as in perf's own recordings, which have no data mappings, and in preport's unwound
	 * copies, which drop them. */
	if (mp && !ret->kernel && mp->prot && !(mp->prot & PROT_EXEC))
		mp = NULL;
	if (mp) {
		dso = mp->dso;
		if (dso__kind(dso) == DSO_KERNEL)
			addr = look;
		else if ((f = dso__elf(dso))) {
			elf_file__bias(f, mp->start, mp->pgoff, &bias);
			addr = look - bias;
		} else {
			addr = look - mp->start + mp->pgoff;
		}
	} else if (ret->kernel) {
		dso = map_snapshot__kernel_dso(maps);
	}
	ret->dso = dso;
	ret->addr = addr + (look != ip);
	if (!dso || !(t = dso__symtab(dso)))
		return;
	ret->sym = symtab__find(t, addr);
	if (ret->sym)
		ret->sym_off = ret->addr - ret->sym->start;
}

/* unwind_frame__resolve through the unwinder's cache. */
static void resolve(struct unwinder *u, const struct map_snapshot *maps, uint64_t ip, bool exact,
		    struct unwind_frame *ret)
{
	uint64_t gen = map_snapshot__gen(maps);
	uint64_t h = (ip ^ (ip >> 13) ^ (gen * 0x9e3779b97f4a7c15ULL) ^ exact) * 0xff51afd7ed558ccdULL;
	struct resolved *c = &u->cache[(h >> 40) % RESOLVE_CACHE];

	if (u->addresses_only) {
		uint64_t look = exact || !ip ? ip : ip - 1;

		*ret = (struct unwind_frame){ .ip = ip, .addr = ip, .caller = look != ip,
					      .kernel = look >= KERNEL_SPACE_START };
		return;
	}
	if (c->valid && c->ip == ip && c->gen == gen && c->exact == exact) {
		*ret = c->f;
		return;
	}
	unwind_frame__resolve(maps, ip, exact, ret);
	*c = (struct resolved){ .gen = gen, .ip = ip, .exact = exact, .valid = true, .f = *ret };
}

const char *unwind_frame__name(const struct unwind_frame *f)
{
	return f->sym ? symbol__name(f->sym) : NULL;
}

int unwind_frame__inlines(const struct unwind_frame *f, uint64_t addr,
			  const struct inline_frame **ret)
{
	return f->unwound ? unwind_frame__lines(f, addr, ret) : 0;
}

int unwind_frame__lines(const struct unwind_frame *f, uint64_t addr,
			const struct inline_frame **ret)
{
	struct elf_file *ef;

	if (!f->sym || !f->dso || f->kernel || dso__kind(f->dso) != DSO_FILE)
		return 0;
	ef = dso__elf(f->dso);
	return ef ? elf_file__inlines(ef, addr, f->sym, ret) : 0;
}

static void load_regs(struct uctx *c, const struct perf_sample *s)
{
	uint64_t perf_regs[64];
	uint64_t mask = s->regs_mask;
	size_t i = 0;

	/* the sample packs the registers of the mask's set bits, lowest first */
	for (uint64_t m = mask; m; m &= m - 1)
		perf_regs[__builtin_ctzll(m)] = s->regs[i++];
	for (int r = 0; r < NR_UNW_REGS; r++) {
		if (mask & (1ULL << perf_reg_of[r])) {
			c->regs[r] = perf_regs[perf_reg_of[r]];
			c->reg_valid |= 1U << r;
		}
	}
}

/* DWARF-unwind the user stack of s into frames; returns the number added. */
static size_t unwind_dwarf(struct unwinder *u, const struct map_snapshot *maps,
			   const struct perf_sample *s, struct unwind_frame *frames, size_t max)
{
	struct uctx c = { .maps = maps };
	unw_addr_space_t as;
	unw_cursor_t cur;
	bool exact = true;
	size_t n = 0;
	int r = 0;

	load_regs(&c, s);
	if (!(c.reg_valid & (1U << UNW_X86_64_RIP)) || !(c.reg_valid & (1U << UNW_X86_64_RSP)))
		return 0;
	/* Like perf: no user frames when the leaf is in no map (a sample inside exec). */
	if (!map_snapshot__find(maps, c.regs[UNW_X86_64_RIP]))
		return 0;
	c.sp = c.regs[UNW_X86_64_RSP];
	c.stack = s->stack;
	c.stack_len = s->stack_dyn_size < s->stack_size ? s->stack_dyn_size : s->stack_size;
	as = address_space(u, maps);
	if (!as || unw_init_remote(&cur, as, &c) < 0) {
		unwind_frame__resolve(maps, c.regs[UNW_X86_64_RIP], true, &frames[0]);
		frames[0].unwound = true;
		u->stats.dwarf_errors++;
		return 1;
	}
	do {
		unw_word_t ip;

		if (n == max) {
			u->stats.truncated++;
			break;
		}
		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0)
			break;
		/* A return address of 0 (read past the stack copy, see access_mem): perf keeps it,
		 * as a caller at 0 - 1 in no map, unless a signal frame made it exact (then it
		 * drops the 0); its next step then fails. */
		if (!ip) {
			if (n && !exact)
				frames[n++] = (struct unwind_frame){ .caller = true, .unwound = true };
			r = -UNW_EINVAL;        /* stopped early: counted as such */
			break;
		}
		resolve(u, maps, ip, exact, &frames[n]);
		frames[n++].unwound = true;
		/* The frame a signal handler returns to was interrupted, not calling. */
		exact = unw_is_signal_frame(&cur) > 0;
		r = unw_step(&cur);
	} while (r > 0);
	if (n < max && r < 0)
		u->stats.dwarf_errors++;
	return n;
}

/* The recorded chain's frames: kernel ones, and user ones unless the user stack is unwound. */
static bool chain_takes(uint64_t context, bool dwarf)
{
	return context == PERF_CONTEXT_KERNEL || (context == PERF_CONTEXT_USER && !dwarf);
}

/* The body of both: at most chain_max of the recorded chain (its innermost, or outermost with
 * outermost), at most user_max unwound, at most total_max in all. */
static int unwind_limited(struct unwinder *u, const struct map_snapshot *maps,
			  const struct perf_sample *s, struct unwind_frame *frames, size_t chain_max,
			  size_t user_max, bool outermost, size_t total_max)
{
	bool dwarf = s && s->regs_abi && s->regs && s->stack_size && s->stack;
	uint64_t context = PERF_CONTEXT_USER;
	size_t n = 0, skip = 0, max = chain_max < total_max ? chain_max : total_max;

	if (!s || !total_max)
		return -EINVAL;
	u->stats.samples++;
	if (outermost) {
		size_t taken = 0;

		for (uint64_t i = 0; i < s->callchain_nr; i++) {
			if (s->callchain[i] >= PERF_CONTEXT_MAX)
				context = s->callchain[i];
			else
				taken += chain_takes(context, dwarf);
		}
		skip = taken > max ? taken - max : 0;
		context = PERF_CONTEXT_USER;
		/* the chain's leaf is left out: the sampled ip stays, as the Self row's frame */
		if (skip && s->ip) {
			resolve(u, maps, s->ip, true, &frames[n]);
			frames[n++].off_chain = true;
		}
	}
	max += n;
	for (uint64_t i = 0; i < s->callchain_nr && n < max; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= PERF_CONTEXT_MAX) {
			context = ip;
			continue;
		}
		if (!chain_takes(context, dwarf))
			continue;
		if (skip) {
			skip--;
			continue;
		}
		/* perf looks the callchain's return addresses up as they are (only the frames it
		 * unwinds with DWARF itself are looked up at ip - 1): do the same, so that a call
		 * ending a function is blamed where perf blames it. */
		resolve(u, maps, ip, true, &frames[n++]);
	}
	/* perf unwinds nothing from a sample whose user stack the kernel could not copy (a thread's
	 * first instructions, its stack page not yet touched): no user frames, not even the ip. */
	if (dwarf && s->stack_dyn_size && n < total_max && user_max) {
		size_t room = total_max - n < user_max ? total_max - n : user_max;

		u->stats.dwarf_samples++;
		tls_in_unwind = true;
		n += unwind_dwarf(u, maps, s, frames + n, room);
		tls_in_unwind = false;
		u->stats.sigprocmask_skipped += tls_skipped;
		tls_skipped = 0;
	}
	/* Nothing found: the sampled ip, for the Self row. Where a user stack was to be unwound,
	 * perf's chain is then empty, and so the frame is off it. */
	if (!n) {
		unwind_frame__resolve(maps, s->ip, true, &frames[n]);
		frames[n++].off_chain = dwarf;
	}
	u->stats.frames += n;
	return n;
}

int unwinder__unwind(struct unwinder *u, const struct map_snapshot *maps,
		     const struct perf_sample *s, struct unwind_frame *frames, size_t max)
{
	return unwind_limited(u, maps, s, frames, max, max, false, max);
}

int unwinder__unwind_perf(struct unwinder *u, const struct map_snapshot *maps,
			  const struct perf_sample *s, struct unwind_frame *frames, size_t max,
			  bool outermost)
{
	return unwind_limited(u, maps, s, frames, max, max, outermost, 2 * max + 1);
}
