/* Tests for unwind/unwinder: (1) synthetic stacks captured in this process (registers and a
 * stack copy taken by a small assembly helper, the maps from /proc/self/maps) must unwind to
 * exactly the return addresses glibc's backtrace() finds; (2) a real recording of
 * build/workloads/unw_chain (-fomit-frame-pointer, crossing a shared library) made by
 * `perf record --call-graph dwarf` must give the same symbol chains as `perf script` for at
 * least 95% of samples. The test reads perf.data with its own minimal walker so that it depends
 * on nothing but the unwind modules. */
#include <check.h>
#include <errno.h>
#include <execinfo.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "unwind/machine.h"
#include "perf/abi.h"
#include "perf/sample.h"
#include "unwind/symbols.h"
#include "unwind/unwinder.h"

/* ---------- in-process capture ---------- */

#define STACK_COPY 8192

/* Saves the registers as they are just after this helper returns (IP = its return address,
 * SP = the caller's SP) into regs[] in perf's PERF_X86_* order. Callee-saved registers are
 * untouched by the call, so the state is one the CFI of the caller describes exactly. */
void unw_test_capture(uint64_t *regs);
__asm__(".text\n"
	".globl unw_test_capture\n"
	".type unw_test_capture,@function\n"
	"unw_test_capture:\n"
	".cfi_startproc\n"
	"	movq %rax, 0(%rdi)\n"
	"	movq %rbx, 8(%rdi)\n"
	"	movq %rcx, 16(%rdi)\n"
	"	movq %rdx, 24(%rdi)\n"
	"	movq %rsi, 32(%rdi)\n"
	"	movq %rdi, 40(%rdi)\n"
	"	movq %rbp, 48(%rdi)\n"
	"	leaq 8(%rsp), %rax\n"
	"	movq %rax, 56(%rdi)\n"
	"	movq (%rsp), %rax\n"
	"	movq %rax, 64(%rdi)\n"
	"	movq %r8, 128(%rdi)\n"
	"	movq %r9, 136(%rdi)\n"
	"	movq %r10, 144(%rdi)\n"
	"	movq %r11, 152(%rdi)\n"
	"	movq %r12, 160(%rdi)\n"
	"	movq %r13, 168(%rdi)\n"
	"	movq %r14, 176(%rdi)\n"
	"	movq %r15, 184(%rdi)\n"
	"	movq 0(%rdi), %rax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size unw_test_capture, .-unw_test_capture\n");

struct capture {
	uint64_t all[24];	/* PERF_X86_* order, all 24 */
	uint64_t regs[24];	/* packed for mask PERF_X86_REGS_USER_MASK */
	uint8_t stack[STACK_COPY];
	uint64_t dyn_size;
	void *bt[64];
	int bt_n;
};

static uint64_t stack_top(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &a))
		return 0;
	pthread_attr_getstack(&a, &addr, &size);
	pthread_attr_destroy(&a);
	return (uint64_t)(uintptr_t)addr + size;
}

/* Copies the raw stack, redzones of instrumented frames included: not for ASan's eyes. */
static __attribute__((no_sanitize_address)) void copy_stack(uint8_t *dst, uint64_t src, size_t n)
{
	const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)src;

	for (size_t i = 0; i < n; i++)
		dst[i] = p[i];
}

static __attribute__((noinline, noclone)) void capture_now(struct capture *c)
{
	uint64_t sp, top = stack_top();

	unw_test_capture(c->all);
	/* backtrace() right here: frame 0 is in this function, then the same return addresses
	 * the unwinder must find from the capture. */
	c->bt_n = backtrace(c->bt, 64);
	/* Under ASan, backtrace() is an interceptor whose own frame comes first: line up so that
	 * bt[1] is the return address into syn_c, as without it. */
	for (int k = 2; k < c->bt_n; k++) {
		if (c->bt[k] == __builtin_return_address(0)) {
			memmove(c->bt + 1, c->bt + k, (c->bt_n - k) * sizeof(c->bt[0]));
			c->bt_n -= k - 1;
			break;
		}
	}
	sp = c->all[PERF_X86_SP];
	c->dyn_size = top - sp < STACK_COPY ? top - sp : STACK_COPY;
	copy_stack(c->stack, sp, c->dyn_size);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline, noclone)) int syn_c(struct capture *c, int depth)
{
	capture_now(c);
	__asm__ volatile("" ::: "memory");
	return depth + 1;
}

static __attribute__((noinline, noclone)) int syn_b(struct capture *c, int depth)
{
	int r = syn_c(c, depth + 1);

	__asm__ volatile("" : "+r"(r));
	return r * 2;
}

static __attribute__((noinline, noclone)) int syn_a(struct capture *c, int depth)
{
	volatile char pad[600];	/* a large frame, so the copy must hold more than a few words */
	int r;

	pad[0] = (char)depth;
	r = syn_b(c, depth + pad[0]);
	__asm__ volatile("" : "+r"(r));
	return r + 3;
}

static void pack_regs(struct capture *c)
{
	int i = 0;

	for (int bit = 0; bit < 24; bit++) {
		if (PERF_X86_REGS_USER_MASK & (1ULL << bit))
			c->regs[i++] = c->all[bit];
	}
}

/* A machine with this process's maps: all of them, or with code_only its executable ones (a
 * recording without data maps). */
static struct machine *machine_from_maps(bool code_only)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
	struct machine *m = machine__new(NULL);
	char line[4096];

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(m);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8], path[4096] = "//anon";
		uint32_t prot = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start, &end, perms, &off,
			   path) < 4)
			continue;
		prot |= perms[0] == 'r' ? PROT_READ : 0;
		prot |= perms[1] == 'w' ? PROT_WRITE : 0;
		prot |= perms[2] == 'x' ? PROT_EXEC : 0;
		if (code_only && !(prot & PROT_EXEC))
			continue;
		ck_assert_int_eq(machine__mmap(m, getpid(), start, end - start, off, prot, path,
					       NULL, 0), 0);
	}
	return m;
}

static struct machine *machine_from_self(void)
{
	return machine_from_maps(false);
}

static struct machine *machine_from_self_code(void)
{
	return machine_from_maps(true);
}

static void sample_from_capture(struct capture *c, struct perf_sample *s)
{
	memset(s, 0, sizeof(*s));
	pack_regs(c);
	s->ip = c->all[PERF_X86_IP];
	s->pid = s->tid = getpid();
	s->regs_abi = PERF_SAMPLE_REGS_ABI_64;
	s->regs_mask = PERF_X86_REGS_USER_MASK;
	s->regs = c->regs;
	s->stack = c->stack;
	s->stack_size = STACK_COPY;
	s->stack_dyn_size = c->dyn_size;
}

START_TEST(test_synthetic_matches_backtrace)
{
	static struct capture c;
	struct machine *m;
	struct map_snapshot *snap;
	struct unwinder *u = unwinder__new();
	struct unwind_frame fr[64];
	struct perf_sample s;
	struct unwinder_stats st;
	int n, i;

	syn_a(&c, 1);
	m = machine_from_self();
	snap = machine__snapshot(m, getpid());
	sample_from_capture(&c, &s);
	n = unwinder__unwind(u, snap, &s, fr, 64);
	ck_assert_int_ge(n, 5);
	/* Frame 0 is capture_now at the capture's return address. */
	ck_assert_str_eq(unwind_frame__name(&fr[0]), "capture_now");
	ck_assert_str_eq(unwind_frame__name(&fr[1]), "syn_c");
	ck_assert_str_eq(unwind_frame__name(&fr[2]), "syn_b");
	ck_assert_str_eq(unwind_frame__name(&fr[3]), "syn_a");
	ck_assert_str_eq(unwind_frame__name(&fr[4]), "test_synthetic_matches_backtrace_fn");
	/* backtrace()[1..] are the return addresses above capture_now: ours must be the same,
	 * as far as our stack copy reaches. */
	ck_assert_int_ge(c.bt_n, 6);
	for (i = 1; i < c.bt_n && i < n; i++)
		ck_assert_msg(fr[i].ip == (uint64_t)(uintptr_t)c.bt[i],
			      "frame %d: unwound %#" PRIx64 " (%s), backtrace %p", i, fr[i].ip,
			      unwind_frame__name(&fr[i]) ?: "?", c.bt[i]);
	ck_assert_int_ge(i, 6);
	ck_assert_ptr_nonnull(fr[1].dso);
	ck_assert_int_eq(fr[1].kernel, false);
	/* A return address is looked up at ip - 1 but reported with its own offset. */
	ck_assert_uint_eq(fr[1].sym_off, fr[1].addr - fr[1].sym->start);

	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.dwarf_samples, 1);
	ck_assert_uint_eq(st.address_spaces, 1);
	/* The sigprocmask interposer must have seen libunwind's calls (else it is not linked in
	 * the way unwinder.c assumes, and every unwind pays two syscalls per lock). */
	ck_assert_uint_gt(st.sigprocmask_skipped, 0);

	/* Cached unwinds give the same frames; time them for the log. */
	{
		struct timespec t0, t1;
		const int reps = 2000;
		struct unwind_frame fr2[64];
		double us;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int r = 0; r < reps; r++)
			ck_assert_int_eq(unwinder__unwind(u, snap, &s, fr2, 64), n);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		for (i = 0; i < n; i++)
			ck_assert_uint_eq(fr2[i].ip, fr[i].ip);
		us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / reps;
		fprintf(stderr, "unwind: synthetic %d-frame stack, cached: %.2f us/stack\n", n, us);
	}
	map_snapshot__put(snap);
	unwinder__free(u);
	machine__free(m);
}
END_TEST

START_TEST(test_truncated_stack_and_limits)
{
	static struct capture c;
	struct machine *m;
	struct map_snapshot *snap;
	struct unwinder *u = unwinder__new();
	struct unwind_frame fr[64];
	struct perf_sample s;
	struct unwinder_stats st;
	int n;

	syn_a(&c, 1);
	m = machine_from_self();
	snap = machine__snapshot(m, getpid());
	sample_from_capture(&c, &s);

	/* max frames */
	ck_assert_int_eq(unwinder__unwind(u, snap, &s, fr, 3), 3);
	ck_assert_str_eq(unwind_frame__name(&fr[2]), "syn_b");
	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.truncated, 1);
	ck_assert_int_eq(unwinder__unwind(u, snap, &s, fr, 0), -EINVAL);

	/* A stack copy that ends inside syn_a's 600-byte frame: what the unwind found is right,
	 * and past the copy the [stack] map reads as 0, as in perf, whose chain then ends with a
	 * caller at 0 (shown as 0xffffffffffffffff, in no map), not with an error. */
	s.stack_dyn_size = 64;
	n = unwinder__unwind(u, snap, &s, fr, 64);
	ck_assert_int_ge(n, 2);
	ck_assert_int_le(n, 5);
	ck_assert_str_eq(unwind_frame__name(&fr[0]), "capture_now");
	ck_assert_uint_eq(fr[n - 1].ip, 0);
	ck_assert(fr[n - 1].caller);
	ck_assert_ptr_null(fr[n - 1].dso);
	for (int i = 0; i < n - 1; i++)
		ck_assert_uint_ne(fr[i].ip, 0);
	/* without the [stack] map, the read past the copy fails: the unwind stops with an
	 * error there */
	{
		struct machine *m2 = machine_from_self_code();
		struct map_snapshot *code = machine__snapshot(m2, getpid());

		n = unwinder__unwind(u, code, &s, fr, 64);
		ck_assert_int_ge(n, 1);
		ck_assert_int_le(n, 4);
		ck_assert_uint_ne(fr[n - 1].ip, 0);
		unwinder__stats(u, &st);
		ck_assert_uint_ge(st.dwarf_errors, 1);
		map_snapshot__put(code);
		machine__free(m2);
	}

	/* Nothing of the stack copied (its page absent when sampled): perf unwinds nothing, not
	 * even the ip, so the ip comes alone, for the Self row, off the (empty) chain. */
	s.stack_dyn_size = 0;
	ck_assert_int_eq(unwinder__unwind(u, snap, &s, fr, 64), 1);
	ck_assert_str_eq(unwind_frame__name(&fr[0]), "capture_now");
	ck_assert(fr[0].off_chain);

	/* No registers, no callchain: the sample's ip alone, which is its chain. */
	s.regs_abi = 0;
	ck_assert_int_eq(unwinder__unwind(u, snap, &s, fr, 64), 1);
	ck_assert_str_eq(unwind_frame__name(&fr[0]), "capture_now");
	ck_assert(!fr[0].off_chain);

	/* Map generation change flushes the address space's cache, results stay right. */
	s.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	s.stack_dyn_size = c.dyn_size;
	ck_assert_int_eq(machine__mmap(m, getpid(), 0x1000, 0x1000, 0, PROT_READ, "//anon", NULL,
				       0), 0);
	ck_assert_int_eq(machine__munmap(m, getpid(), 0x1000, 0x1000), 0);
	map_snapshot__put(snap);
	snap = machine__snapshot(m, getpid());
	n = unwinder__unwind(u, snap, &s, fr, 64);
	ck_assert_int_ge(n, 5);
	ck_assert_str_eq(unwind_frame__name(&fr[3]), "syn_a");
	unwinder__stats(u, &st);
	ck_assert_uint_eq(st.flushes, 1);

	map_snapshot__put(snap);
	unwinder__free(u);
	machine__free(m);
}
END_TEST

/* An address in a mapping of data names no file: code runs only from executable mappings (a
 * DWARF unwind that runs off a stack's end lands in libc's data); a mapping of unknown
 * protection (prot 0: old MMAP records) still does. */
START_TEST(test_data_mapping_names_no_file)
{
	struct machine *m = machine__new(NULL);
	struct map_snapshot *snap;
	struct unwind_frame f;

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(machine__mmap(m, 7, 0x10000, 0x1000, 0, PROT_READ | PROT_EXEC, "/x/code",
				       NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, 7, 0x11000, 0x1000, 0x1000, PROT_READ | PROT_WRITE,
				       "/x/code", NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, 7, 0x12000, 0x1000, 0, 0, "/x/old", NULL, 0), 0);
	snap = machine__snapshot(m, 7);
	ck_assert_ptr_nonnull(snap);
	unwind_frame__resolve(snap, 0x10010, true, &f);
	ck_assert_ptr_nonnull(f.dso);
	ck_assert_str_eq(dso__name(f.dso), "/x/code");
	unwind_frame__resolve(snap, 0x11010, false, &f);
	ck_assert_ptr_null(f.dso);
	ck_assert_uint_eq(f.addr, 0x11010);	/* the address itself, as for no mapping */
	unwind_frame__resolve(snap, 0x12010, true, &f);
	ck_assert_ptr_nonnull(f.dso);
	map_snapshot__put(snap);
	machine__free(m);
}
END_TEST

START_TEST(test_kernel_callchain)
{
	/* fp-mode callchains: kernel part then user part, markers skipped; the user part is used
	 * only without DWARF data. */
	static struct capture c;
	struct machine *m;
	struct map_snapshot *snap;
	struct unwinder *u = unwinder__new();
	struct unwind_frame fr[16];
	struct perf_sample s;
	uint64_t chain[8];
	int n;

	syn_a(&c, 1);
	m = machine_from_self();
	ck_assert_int_eq(machine__mmap(m, -1, 0xffffffff81000000ULL, 0x1000000,
				       0xffffffff81000000ULL, PROT_READ | PROT_EXEC,
				       "[kernel.kallsyms]_text", NULL, 0), 0);
	snap = machine__snapshot(m, getpid());
	chain[0] = PERF_CONTEXT_KERNEL;
	chain[1] = 0xffffffff81000100ULL;
	chain[2] = 0xffffffff81000200ULL;
	chain[3] = PERF_CONTEXT_USER;
	chain[4] = (uint64_t)(uintptr_t)c.bt[1];	/* return address in syn_c */
	chain[5] = (uint64_t)(uintptr_t)c.bt[2];	/* ... in syn_b */
	memset(&s, 0, sizeof(s));
	s.callchain = chain;
	s.callchain_nr = 6;
	s.ip = chain[1];
	n = unwinder__unwind(u, snap, &s, fr, 16);
	ck_assert_int_eq(n, 4);
	ck_assert(fr[0].kernel && fr[1].kernel && !fr[2].kernel);
	ck_assert_str_eq(dso__name(fr[0].dso), "[kernel.kallsyms]");
	ck_assert_uint_eq(fr[0].addr, 0xffffffff81000100ULL);
	ck_assert_str_eq(unwind_frame__name(&fr[2]), "syn_c");
	ck_assert_str_eq(unwind_frame__name(&fr[3]), "syn_b");
	/* max honoured inside the callchain too */
	ck_assert_int_eq(unwinder__unwind(u, snap, &s, fr, 1), 1);

	/* With DWARF data the user part of the callchain is replaced by the DWARF unwind. */
	sample_from_capture(&c, &s);
	s.callchain = chain;
	s.callchain_nr = 6;
	n = unwinder__unwind(u, snap, &s, fr, 16);
	ck_assert_int_ge(n, 7);
	ck_assert(fr[1].kernel && !fr[2].kernel);
	ck_assert_str_eq(unwind_frame__name(&fr[2]), "capture_now");
	ck_assert_str_eq(unwind_frame__name(&fr[3]), "syn_c");

	map_snapshot__put(snap);
	unwinder__free(u);
	machine__free(m);
}
END_TEST

struct par_arg {
	const struct map_snapshot *snap;
	const struct perf_sample *s;
	const struct unwind_frame *want;
	int n;
	int bad;
	pthread_barrier_t *go;
};

static void *par_worker(void *p)
{
	struct par_arg *a = p;
	struct unwinder *u = unwinder__new();
	struct unwind_frame fr[64];

	pthread_barrier_wait(a->go);
	for (int rep = 0; rep < 300; rep++) {
		int n = unwinder__unwind(u, a->snap, a->s, fr, 64);

		if (n != a->n)
			a->bad++;
		for (int i = 0; i < n && i < a->n; i++) {
			if (fr[i].ip != a->want[i].ip ||
			    strcmp(unwind_frame__name(&fr[i]) ?: "-",
				   unwind_frame__name(&a->want[i]) ?: "-"))
				a->bad++;
		}
	}
	unwinder__free(u);
	return NULL;
}

START_TEST(test_parallel_unwinders)
{
	/* One unwinder per thread over shared snapshots, files and symbol tables, which the
	 * threads load lazily all at once: everyone gets the frames a separate machine found. */
	static struct capture c;
	struct machine *ref = machine_from_self(), *m = machine_from_self();
	struct map_snapshot *ref_snap, *snap;
	struct unwinder *u = unwinder__new();
	struct unwind_frame want[64];
	struct perf_sample s;
	struct par_arg args[3];
	pthread_barrier_t go;
	pthread_t th[3];
	int n;

	syn_a(&c, 1);
	sample_from_capture(&c, &s);
	ref_snap = machine__snapshot(ref, getpid());
	n = unwinder__unwind(u, ref_snap, &s, want, 64);
	ck_assert_int_ge(n, 5);
	snap = machine__snapshot(m, getpid());
	pthread_barrier_init(&go, NULL, 3);
	for (int i = 0; i < 3; i++) {
		args[i] = (struct par_arg){ snap, &s, want, n, 0, &go };
		ck_assert_int_eq(pthread_create(&th[i], NULL, par_worker, &args[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(args[i].bad, 0);
	}
	pthread_barrier_destroy(&go);
	map_snapshot__put(snap);
	map_snapshot__put(ref_snap);
	unwinder__free(u);
	machine__free(m);
	machine__free(ref);
}
END_TEST

/* ---------- a real recording against perf script ---------- */

#define EXPECT_TYPE                                                                           \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |             \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER |                 \
	 PERF_SAMPLE_STACK_USER | PERF_SAMPLE_DATA_SRC)

struct rec {
	const struct perf_event_header *h;
	uint64_t time;
	size_t seq;
};

static int rec_cmp(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The sample layout perf record --call-graph dwarf produces, nothing else. */
static bool parse_sample(const struct perf_event_attr *attr, const struct perf_event_header *h,
			 struct perf_sample *s)
{
	const uint8_t *p = (const uint8_t *)(h + 1), *end = (const uint8_t *)h + h->size;
	uint64_t v;

#define TAKE(dst)                                   \
	do {                                        \
		if (end - p < 8)                    \
			return false;               \
		memcpy(&(dst), p, 8);               \
		p += 8;                             \
	} while (0)
	memset(s, 0, sizeof(*s));
	s->cpumode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	TAKE(s->ip);
	TAKE(v);
	s->pid = (uint32_t)v;
	s->tid = (uint32_t)(v >> 32);
	TAKE(s->time);
	TAKE(s->addr);
	TAKE(s->period);
	TAKE(s->callchain_nr);
	if ((uint64_t)(end - p) / 8 < s->callchain_nr)
		return false;
	s->callchain = (const uint64_t *)p;
	p += 8 * s->callchain_nr;
	TAKE(s->regs_abi);
	if (s->regs_abi) {
		size_t nr = __builtin_popcountll(attr->sample_regs_user);

		if ((size_t)(end - p) / 8 < nr)
			return false;
		s->regs_mask = attr->sample_regs_user;
		s->regs = (const uint64_t *)p;
		p += 8 * nr;
	}
	TAKE(s->stack_size);
	if (s->stack_size) {
		if ((uint64_t)(end - p) < s->stack_size)
			return false;
		s->stack = p;
		p += s->stack_size;
		TAKE(s->stack_dyn_size);
	}
	TAKE(v);	/* data_src */
#undef TAKE
	return true;
}

static char *slurp(const char *path, size_t *ret_len)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *buf;
	struct stat st;

	if (!f || fstat(fileno(f), &st) < 0)
		return NULL;
	buf = malloc(st.st_size + 1);
	if (!buf || fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		return NULL;
	}
	buf[st.st_size] = '\0';
	*ret_len = st.st_size;
	return buf;
}

/* perf script -F ip,sym --no-inline output: one block of "ip sym" lines per sample, blank-line
 * separated (inlined frames come from debug info, not unwinding: preport does not show them).
 * Returns the blocks as newline-joined symbol lists. */
static char **perf_script_chains(const char *text, size_t *ret_n)
{
	char **out = NULL, cur[8192] = "";
	size_t n = 0, cap = 0;
	const char *line = text;

	while (*line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char buf[1024], *sym;

		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		sym = buf + strspn(buf, " \t");
		if (!*sym) {
			if (*cur) {
				if (n == cap) {
					cap = cap ? cap * 2 : 256;
					out = realloc(out, cap * sizeof(*out));
				}
				out[n++] = strdup(cur);
				cur[0] = '\0';
			}
		} else {
			sym += strcspn(sym, " \t");	/* skip the ip */
			sym += strspn(sym, " \t");
			if (!strstr(sym, "(inlined)")) {
				strncat(cur, sym, sizeof(cur) - strlen(cur) - 2);
				strcat(cur, "\n");
			}
		}
		line = eol ? eol + 1 : line + len;
	}
	if (*cur) {
		out = realloc(out, (n + 1) * sizeof(*out));
		out[n++] = strdup(cur);
	}
	*ret_n = n;
	return out;
}

START_TEST(test_perf_record_matches_perf_script)
{
	const char *workload = "build/workloads/unw_chain";
	char dir[] = "/tmp/check_unwind.XXXXXX", cmd[1024], path[512];
	_cleanup_free_ char *data = NULL, *script = NULL;
	size_t data_len, script_len, nr_chains, nr_recs = 0, nr_samples = 0, match = 0, leaf = 0;
	const struct perf_file_header *fh;
	struct perf_event_attr attr;
	struct rec *recs;
	char **chains;
	struct machine *m;
	struct unwinder *u = unwinder__new();
	struct machine_opts mo = { .kallsyms = "/proc/kallsyms", .running_vdso = true };
	struct timespec t0, t1;
	double unwind_ns = 0, warm_ns = 0;
	size_t off;

	ck_assert_msg(access(workload, X_OK) == 0, "%s missing: run make test-bins", workload);
	ck_assert_msg(system("perf --version >/dev/null 2>&1") == 0, "perf is not installed");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "perf record -q -e cpu-clock -F 2000 --call-graph dwarf -o %s/x.data %s 300 "
		 ">/dev/null 2>&1; perf script -i %s/x.data -F ip,sym --no-inline > %s/x.txt "
		 "2>/dev/null", dir, workload, dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/x.data", dir);
	data = slurp(path, &data_len);
	snprintf(path, sizeof(path), "%s/x.txt", dir);
	script = slurp(path, &script_len);
	ck_assert_ptr_nonnull(data);
	ck_assert_ptr_nonnull(script);
	chains = perf_script_chains(script, &nr_chains);

	fh = (const struct perf_file_header *)data;
	ck_assert_uint_eq(fh->magic, PERF_MAGIC2);
	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, data + fh->attrs.offset, 
	       fh->attr_size - sizeof(struct perf_file_section) < sizeof(attr) ?
	       fh->attr_size - sizeof(struct perf_file_section) : sizeof(attr));
	ck_assert_uint_eq(attr.sample_type, EXPECT_TYPE);
	ck_assert_uint_eq(attr.sample_regs_user, PERF_X86_REGS_USER_MASK);
	ck_assert(attr.sample_id_all);

	recs = calloc(fh->data.size / 8 + 1, sizeof(*recs));
	for (off = fh->data.offset; off + 8 <= fh->data.offset + fh->data.size;) {
		const struct perf_event_header *h = (const void *)(data + off);
		uint64_t t = 0;

		ck_assert_uint_ge(h->size, 8);
		if (h->type == PERF_RECORD_SAMPLE) {
			memcpy(&t, (const char *)(h + 1) + 16, 8);
		} else if (h->type < PERF_RECORD_USER_TYPE_START) {
			/* sample_id trailer: pid/tid, time */
			memcpy(&t, (const char *)h + h->size - 8, 8);
		} else {
			off += h->size;
			continue;
		}
		recs[nr_recs] = (struct rec){ h, t, nr_recs };
		nr_recs++;
		off += h->size;
	}
	qsort(recs, nr_recs, sizeof(*recs), rec_cmp);

	m = machine__new(&mo);
	ck_assert_ptr_nonnull(m);
	for (size_t i = 0; i < nr_recs; i++) {
		struct unwind_frame fr[128];
		struct map_snapshot *snap;
		struct perf_sample s;
		char mine[8192] = "";
		int n;

		if (recs[i].h->type != PERF_RECORD_SAMPLE) {
			ck_assert_int_eq(machine__process(m, recs[i].h), 0);
			continue;
		}
		ck_assert(parse_sample(&attr, recs[i].h, &s));
		snap = machine__snapshot(m, s.pid);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		n = unwinder__unwind(u, snap, &s, fr, 128);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		unwind_ns += (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
		ck_assert_int_ge(n, 1);
		/* Again, now that files, symbols and libunwind's cache are warm. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ck_assert_int_eq(unwinder__unwind(u, snap, &s, fr, 128), n);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		warm_ns += (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
		for (int k = 0; k < n; k++) {
			strncat(mine, unwind_frame__name(&fr[k]) ?: "[unknown]",
				sizeof(mine) - strlen(mine) - 2);
			strcat(mine, "\n");
		}
		if (getenv("UNWIND_TEST_VERBOSE") && nr_samples < 8) {
			for (int k = 0; k < n; k++)
				fprintf(stderr, "  %#" PRIx64 " %#" PRIx64 " %s %s\n", fr[k].ip, fr[k].addr,
					unwind_frame__name(&fr[k]) ?: "?",
					fr[k].dso ? dso__name(fr[k].dso) : "-");
		}
		if (strstr(mine, "unw_leaf\nunw_c\nunw_b\nunw_a\nmain\n"))
			leaf++;
		if (nr_samples < nr_chains && !strcmp(mine, chains[nr_samples]))
			match++;
		else if (nr_samples < nr_chains && getenv("UNWIND_TEST_VERBOSE"))
			fprintf(stderr, "sample %zu differs:\n--- perf\n%s--- ours\n%s", nr_samples,
				chains[nr_samples], mine);
		nr_samples++;
		map_snapshot__put(snap);
	}
	fprintf(stderr, "unwind: %zu samples, %zu match perf script, %zu through the full chain, "
		"%.2f us/sample first time, %.2f warm\n", nr_samples, match, leaf,
		unwind_ns / 1e3 / (nr_samples ?: 1), warm_ns / 1e3 / (nr_samples ?: 1));
	ck_assert_uint_eq(nr_samples, nr_chains);
	ck_assert_uint_ge(nr_samples, 100);
	ck_assert_uint_ge(match * 100, nr_samples * 95);
	/* The workload spends nearly all its time in unw_leaf. */
	ck_assert_uint_ge(leaf * 100, nr_samples * 80);

	for (size_t i = 0; i < nr_chains; i++)
		free(chains[i]);
	free(chains);
	free(recs);
	unwinder__free(u);
	machine__free(m);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *unwind_suite(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("synthetic");

	tcase_add_test(tc, test_synthetic_matches_backtrace);
	tcase_add_test(tc, test_truncated_stack_and_limits);
	tcase_add_test(tc, test_kernel_callchain);
	tcase_add_test(tc, test_data_mapping_names_no_file);
	tcase_add_test(tc, test_parallel_unwinders);
	suite_add_tcase(s, tc);
	tc = tcase_create("perf");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_perf_record_matches_perf_script);
	suite_add_tcase(s, tc);
	return s;
}
