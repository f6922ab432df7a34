/* Tests for unwind/symbols, unwind/elfcache and unwind/demangle: perf's alias and size rules on
 * symbols defined in this very binary (by assembly, so bindings and sizes are exact), stripped
 * binaries finding their debug file (debuglink beside, in .debug/, under the debug dir, and by
 * build id), build-id checks, demangling, kallsyms parsing and the running kernel's symbols. */
#include <check.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "elf_fixture.h"
#include "lib/cleanup.h"
#include "unwind/demangle.h"
#include "unwind/elfcache.h"
#include "unwind/machine.h"
#include "unwind/symbols.h"

/* Groups of symbols sharing one address; the comment says which one perf keeps. */
__asm__(".text\n"
	".p2align 6\n"
	/* A: a local and a global, both sized: the global */
	".type symA_local,@function\n"
	".globl symA_global\n.type symA_global,@function\n"
	"symA_local:\nsymA_global:\n\tret\n\t.fill 15,1,0x90\n"
	".size symA_local,16\n.size symA_global,16\n"
	/* B: strong beats weak, even with the longer name */
	".globl symB_strong\n.type symB_strong,@function\n"
	".weak symB_weak_but_longer\n.type symB_weak_but_longer,@function\n"
	"symB_strong:\nsymB_weak_but_longer:\n\tret\n\t.fill 15,1,0x90\n"
	".size symB_strong,16\n.size symB_weak_but_longer,16\n"
	/* C: same length, fewer leading underscores wins */
	".globl __symC_x\n.type __symC_x,@function\n"
	".globl symC_xyz\n.type symC_xyz,@function\n"
	"__symC_x:\nsymC_xyz:\n\tret\n\t.fill 15,1,0x90\n"
	".size __symC_x,16\n.size symC_xyz,16\n"
	/* D: all else equal, the longer name */
	".globl symD_ab\n.type symD_ab,@function\n"
	".globl symD_abcd\n.type symD_abcd,@function\n"
	"symD_ab:\nsymD_abcd:\n\tret\n\t.fill 15,1,0x90\n"
	".size symD_ab,16\n.size symD_abcd,16\n"
	/* E: a sized local and an unsized global after it in .symtab (locals come first): perf
	 * extends the unsized one to the next symbol before choosing, so both count as sized and
	 * the global wins (perf 6.1 names this address symE_unsized_longer) */
	".globl symE_unsized_longer\n.type symE_unsized_longer,@function\n"
	".type symE_s,@function\n"
	"symE_unsized_longer:\nsymE_s:\n\tret\n\t.fill 15,1,0x90\n"
	".size symE_s,16\n"
	/* F: unsized, runs until G; H: an untyped label inside G, which ends G's reach
	 * only as far as perf would (G is sized: H starts a new symbol) */
	".globl symF_nosize\n.type symF_nosize,@function\n"
	"symF_nosize:\n\tret\n\t.fill 31,1,0x90\n"
	".globl symG_next\n.type symG_next,@function\n"
	"symG_next:\n\tret\n\t.fill 15,1,0x90\n"
	".size symG_next,16\n"
	"symH_label:\n\tret\n\t.fill 15,1,0x90\n"
	".globl symI_after\n.type symI_after,@function\n"
	"symI_after:\n\tret\n\t.fill 15,1,0x90\n"
	".size symI_after,16\n");

extern char symA_global[], symB_strong[], symC_xyz[], symD_abcd[], symE_s[], symF_nosize[],
	symG_next[], symI_after[];

/* Only in .symtab (static), for the stripped-binary tests. */
static __attribute__((noinline, used)) int sym_static_only(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 7;
}

static int first_object(struct dl_phdr_info *i, size_t size, void *data)
{
	*(uint64_t *)data = i->dlpi_addr;
	return 1;	/* the first object dl_iterate_phdr reports is the executable */
}

static uint64_t self_bias(void)
{
	uint64_t bias = 0;

	dl_iterate_phdr(first_object, &bias);
	return bias;
}

static char self_path[4096];

static const char *self_exe(void)
{
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	ck_assert_int_gt(n, 0);
	self_path[n] = '\0';
	return self_path;
}

static const char *name_at(const struct symtab *t, uint64_t addr)
{
	const struct symbol *s = symtab__find(t, addr);

	return s ? s->name : NULL;
}

START_TEST(test_aliases_and_sizes)
{
	struct elf_file *f = elf_file__open(self_exe(), NULL, 0, NULL);
	const struct symtab *t;
	uint64_t b = self_bias();
	const struct symbol *s;

	ck_assert_ptr_nonnull(f);
	t = elf_file__symtab(f);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(elf_file__symtab_path(f), self_path);
	ck_assert_uint_gt(symtab__nr(t), 100);

	ck_assert_str_eq(name_at(t, (uint64_t)symA_global - b), "symA_global");
	ck_assert_str_eq(name_at(t, (uint64_t)symA_global - b + 15), "symA_global");
	ck_assert_ptr_null(symtab__find_name(t, "symA_local"));	/* the alias is gone */
	ck_assert_str_eq(name_at(t, (uint64_t)symB_strong - b), "symB_strong");
	ck_assert_str_eq(name_at(t, (uint64_t)symC_xyz - b), "symC_xyz");
	ck_assert_str_eq(name_at(t, (uint64_t)symD_abcd - b), "symD_abcd");
	ck_assert_str_eq(name_at(t, (uint64_t)symE_s - b), "symE_unsized_longer");

	s = symtab__find(t, (uint64_t)symA_global - b);
	ck_assert_uint_eq(s->size, 16);
	ck_assert_uint_eq(s->end, s->start + 16);
	ck_assert_int_eq(s->binding, STB_GLOBAL);
	/* An unsized symbol reaches the next one. */
	s = symtab__find(t, (uint64_t)symF_nosize - b + 31);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "symF_nosize");
	ck_assert_uint_eq(s->size, 0);
	ck_assert_uint_eq(s->end, (uint64_t)symG_next - b);
	ck_assert_str_eq(name_at(t, (uint64_t)symG_next - b), "symG_next");
	/* The untyped label in .text is a symbol too (perf takes labels), local, unsized. */
	s = symtab__find_name(t, "symH_label");
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s->binding, STB_LOCAL);
	ck_assert_uint_eq(s->start, (uint64_t)symG_next - b + 16);
	ck_assert_uint_eq(s->end, (uint64_t)symI_after - b);
	ck_assert_str_eq(name_at(t, (uint64_t)symI_after - b + 8), "symI_after");
	/* Functions from C with their compiler-given sizes. */
	s = symtab__find(t, (uint64_t)sym_static_only - b);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "sym_static_only");
	ck_assert_uint_gt(s->size, 0);
	ck_assert_ptr_eq(symtab__find(t, s->start + s->size - 1), s);
	ck_assert_ptr_ne(symtab__find(t, s->start + s->size), s);
	/* Sorted, and every symbol finds itself. */
	for (size_t i = 0; i < symtab__nr(t); i++) {
		s = symtab__symbol(t, i);
		if (i)
			ck_assert_uint_gt(s->start, symtab__symbol(t, i - 1)->start);
		ck_assert_ptr_eq(symtab__find(t, s->start), s);
	}
	ck_assert_ptr_null(symtab__symbol(t, symtab__nr(t)));
	ck_assert_ptr_null(symtab__find(t, 0));
	elf_file__put(f);
}
END_TEST

START_TEST(test_elf_file_basics)
{
	struct elfcache *c = elfcache__new(NULL);
	struct elf_file *f, *g;
	struct eh_frame_hdr_info eh;
	const uint8_t *id;
	uint8_t want[24] = { 0 };
	size_t len, size;
	char line[4096];
	FILE *maps;
	int found = 0;

	ck_assert_ptr_nonnull(c);
	f = elfcache__get(c, self_exe(), NULL, 0);
	ck_assert_ptr_nonnull(f);
	g = elfcache__get(c, self_exe(), NULL, 0);
	ck_assert_ptr_eq(f, g);	/* opened once */
	elf_file__put(g);
	ck_assert_ptr_nonnull(elf_file__image(f, &size));
	ck_assert_uint_gt(size, 4096);
	ck_assert_int_eq(elf_file__eh_frame_hdr(f, &eh), 0);
	ck_assert_uint_gt(eh.fde_count, 10);
	ck_assert_uint_eq(eh.table_vaddr, eh.hdr_vaddr + 12);

	/* Load bias of the executable mapping, as the dynamic loader computed it. */
	maps = fopen("/proc/self/maps", "re");
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, off;
		char perms[8], path[4096];
		uint64_t bias;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start, &end, perms, &off,
			   path) == 5 && !strcmp(path, self_path) &&
		    /* not libelf's own mapping of the file */
		    start >= self_bias() && start < self_bias() + (1ULL << 32)) {
			ck_assert_int_eq(elf_file__bias(f, start, off, &bias), 0);
			ck_assert_uint_eq(bias, self_bias());
			found++;
		}
	}
	fclose(maps);
	ck_assert_int_ge(found, 2);

	/* Build ids: the right one (also zero-padded, as perf stores them) opens, a wrong one
	 * is refused. */
	len = elf_file__build_id(f, &id);
	ck_assert_uint_ge(len, 16);
	memcpy(want, id, len);
	g = elfcache__get(c, self_path, want, len + 4);
	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_ne(g, f);	/* another key, same file */
	elf_file__put(g);
	want[0] ^= 1;
	errno = 0;
	ck_assert_ptr_null(elfcache__get(c, self_path, want, len));
	ck_assert_int_eq(errno, ESTALE);
	want[0] ^= 1;
	want[len] = 1;	/* non-zero past the real id: not padding */
	ck_assert_ptr_null(elf_file__open(self_path, want, len + 4, NULL));
	ck_assert_int_eq(errno, ESTALE);

	/* Missing and non-ELF files, failures cached. */
	ck_assert_ptr_null(elfcache__get(c, "/nonexistent/x", NULL, 0));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(elfcache__get(c, "/nonexistent/x", NULL, 0));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(elfcache__get(c, "/proc/self/status", NULL, 0));
	ck_assert_int_eq(errno, ENOEXEC);
	ck_assert_ptr_null(elfcache__get(c, "/tmp", NULL, 0));
	ck_assert_int_eq(errno, ENOEXEC);

	/* Files outlive the cache while held. */
	elfcache__free(c);
	ck_assert_ptr_nonnull(elf_file__symtab(f));
	elf_file__put(f);
}
END_TEST

static void run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

/* Opens path, expects symbols from expect_path and whether the static function is known. */
static void expect_symbols(const char *path, const char *debug_dir, const char *expect_path,
			   bool has_static)
{
	struct elf_file *f = elf_file__open(path, NULL, 0, debug_dir);
	const struct symtab *t;

	ck_assert_msg(f != NULL, "open %s: %s", path, strerror(errno));
	t = elf_file__symtab(f);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(elf_file__symtab_path(f), expect_path);
	ck_assert_int_eq(symtab__find_name(t, "sym_static_only") != NULL, has_static);
	if (has_static)
		ck_assert_ptr_eq(symtab__find(t, (uint64_t)sym_static_only - self_bias()),
				 symtab__find_name(t, "sym_static_only"));
	elf_file__put(f);
}

START_TEST(test_stripped_debuglink_and_build_id)
{
	char dir[] = "/tmp/check_symbols.XXXXXX", p[4096], q[4096];
	struct elf_file *f;
	const uint8_t *id;
	size_t len;
	int n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	self_exe();
	run("objcopy --only-keep-debug %s %s/prog.debug", self_path, dir);
	run("objcopy --strip-all --add-gnu-debuglink=%s/prog.debug %s %s/prog", dir, self_path, dir);
	run("objcopy --strip-all %s %s/nolink", self_path, dir);

	/* The stripped file alone has only .dynsym. */
	snprintf(p, sizeof(p), "%s/nolink", dir);
	expect_symbols(p, "/nonexistent", p, false);

	/* debuglink beside the file */
	snprintf(p, sizeof(p), "%s/prog", dir);
	snprintf(q, sizeof(q), "%s/prog.debug", dir);
	expect_symbols(p, "/nonexistent", q, true);
	/* ... in .debug/ */
	run("mkdir %s/.debug && mv %s/prog.debug %s/.debug/", dir, dir, dir);
	snprintf(q, sizeof(q), "%s/.debug/prog.debug", dir);
	expect_symbols(p, "/nonexistent", q, true);
	/* ... under the debug directory, by the file's directory */
	run("mkdir -p %s/dbg%s && mv %s/.debug/prog.debug %s/dbg%s/", dir, dir, dir, dir, dir);
	snprintf(q, sizeof(q), "%s/dbg", dir);
	{
		char e[4096];

		snprintf(e, sizeof(e), "%s/dbg%s/prog.debug", dir, dir);
		expect_symbols(p, q, e, true);
	}

	/* By build id, with no debuglink at all. */
	f = elf_file__open(self_path, NULL, 0, NULL);
	len = elf_file__build_id(f, &id);
	ck_assert_uint_gt(len, 1);
	n = snprintf(q, sizeof(q), "%s/dbg/.build-id/%02x", dir, id[0]);
	run("mkdir -p %s", q);
	n += snprintf(q + n, sizeof(q) - n, "/");
	for (size_t i = 1; i < len; i++)
		n += snprintf(q + n, sizeof(q) - n, "%02x", id[i]);
	snprintf(q + n, sizeof(q) - n, ".debug");
	elf_file__put(f);
	run("cp %s/dbg%s/prog.debug %s", dir, dir, q);
	snprintf(p, sizeof(p), "%s/nolink", dir);
	{
		char d[4096];

		snprintf(d, sizeof(d), "%s/dbg", dir);
		expect_symbols(p, d, q, true);
	}

	/* A debug file of another program (different build id) is not trusted. */
	run("objcopy --only-keep-debug /bin/true %s/prog.debug && rm -rf %s/dbg", dir, dir);
	snprintf(p, sizeof(p), "%s/prog", dir);
	expect_symbols(p, "/nonexistent", p, false);

	run("rm -rf %s", dir);
}
END_TEST

/* A mapped file whose header claims 50 million sections (extended numbering) in a sparse file
 * of 2 GiB, 4 KiB on disk: refused from its header before libelf sizes a descriptor per
 * section (gigabytes before). */
START_TEST(test_elf_file_sparse_claims)
{
	char path[64];
	long before;

	/* this test's own process (Check forks one per test): the pid makes the name its own */
	snprintf(path, sizeof(path), "/tmp/check_symbols_sparse.%d", (int)getpid());
	elf_fixture__sparse_claims(path);
	before = elf_fixture__maxrss_kb();
	ck_assert_ptr_null(elf_file__open(path, NULL, 0, NULL));
	ck_assert_int_eq(errno, ENOEXEC);
	ck_assert_int_lt(elf_fixture__maxrss_kb() - before, 32 << 10);
	unlink(path);
}
END_TEST

START_TEST(test_demangle)
{
	char *d;

	d = demangle__name("_ZN3foo3barEv");
	ck_assert_str_eq(d, "foo::bar()");
	free(d);
	d = demangle__name("_ZN2ns3MapIiSt6vectorIdSaIdEEE6insertERKiRKS3_");
	ck_assert_str_eq(d, "ns::Map<int, std::vector<double, std::allocator<double> > >::insert("
			    "int const&, std::vector<double, std::allocator<double> > const&)");
	free(d);
	d = demangle__name("_Z3maxIiET_S0_S0_");
	ck_assert_str_eq(d, "int max<int>(int, int)");
	free(d);
	/* Version suffixes are stripped first. */
	d = demangle__name("_ZNSt9exceptionD2Ev@@GLIBCXX_3.4");
	ck_assert_str_eq(d, "std::exception::~exception()");
	free(d);
	d = demangle__name("_ZdlPv@GLIBCXX_3.4");
	ck_assert_str_eq(d, "operator delete(void*)");
	free(d);
	ck_assert_uint_eq(demangle__strip_version_len("memcpy@@GLIBC_2.14"), 6);
	ck_assert_uint_eq(demangle__strip_version_len("memcpy"), 6);
	/* Not C++: untouched. */
	errno = 0;
	ck_assert_ptr_null(demangle__name("main"));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(demangle__name("i"));	/* a valid type mangling, not a _Z name */
	ck_assert_ptr_null(demangle__name("_Zgarbage!"));
	ck_assert_ptr_null(demangle__name(NULL));
}
END_TEST

START_TEST(test_demangle_symbol)
{
	char *d;

	d = demangle__symbol("_ZL6scaledRK6paramsl.constprop.0");
	ck_assert_str_eq(d, "scaled");
	free(d);
	d = demangle__symbol("_Z3fooi@plt");
	ck_assert_str_eq(d, "foo@plt");
	free(d);
	d = demangle__symbol("_ZNSt9exceptionD2Ev@@GLIBCXX_3.4");
	ck_assert_str_eq(d, "std::exception::~exception");
	free(d);
	ck_assert_ptr_null(demangle__symbol("cos@plt"));	/* C: shown raw */
	ck_assert_ptr_null(demangle__symbol("finish_task_switch.isra.0"));
	ck_assert_ptr_null(demangle__symbol("@plt"));
}
END_TEST

/* The PLT symbols of this binary are the ones objdump names: "NAME@plt" at each .plt entry. */
START_TEST(test_plt_symbols)
{
	struct elf_file *f = elf_file__open(self_exe(), NULL, 0, "/nonexistent");
	const struct symtab *t;
	char cmd[8192], line[1024];
	FILE *p;
	int checked = 0;

	ck_assert_ptr_nonnull(f);
	t = elf_file__symtab(f);
	ck_assert_ptr_nonnull(t);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt '%s' 2>/dev/null", self_path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		char name[512];
		const struct symbol *s;

		size_t n;

		if (sscanf(line, "%llx <%511[^>]>:", &addr, name) != 2)
			continue;
		n = strlen(name);	/* the header shows as "first@plt-0x10": not a symbol */
		if (n < 4 || strcmp(name + n - 4, "@plt"))
			continue;
		s = symtab__find(t, addr + 4);
		ck_assert_msg(s != NULL, "no symbol at %llx (%s)", addr, name);
		ck_assert_str_eq(s->name, name);
		ck_assert_uint_eq(s->start, addr);
		ck_assert_uint_eq(s->size, 16);
		ck_assert_str_eq(symbol__name(s), name);
		checked++;
	}
	pclose(p);
	ck_assert_int_gt(checked, 10);
	elf_file__put(f);
}
END_TEST

/* A file without .symtab whose .dynsym defines only data objects (Debian's /usr/bin/dash:
 * environ, __environ): perf still synthesizes its PLT symbols (free@plt), since it loads the
 * objects too and so finds symbols of the file's own. */
START_TEST(test_plt_without_symtab)
{
	const char *path = "/usr/bin/dash";
	struct elf_file *f;
	const struct symtab *t;
	const struct symbol *s;
	char cmd[512];
	int has_symtab;

	snprintf(cmd, sizeof(cmd), "readelf -S %s 2>/dev/null | grep -q '\\.symtab'", path);
	has_symtab = system(cmd);
	if (access(path, R_OK) != 0 || has_symtab == 0)
		return;	/* not this distribution's dash: nothing to check */
	f = elf_file__open(path, NULL, 0, "/nonexistent");
	ck_assert_ptr_nonnull(f);
	t = elf_file__symtab(f);
	ck_assert_ptr_nonnull(t);
	s = symtab__find_name(t, "free@plt");
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->size, 16);
	ck_assert_ptr_eq(symtab__find(t, s->start + 8), s);
	elf_file__put(f);
}
END_TEST

/* demangle__strip_params against the names perf report prints for the same symbols. */
static void check_short(const char *full, const char *expect)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", full);
	demangle__strip_params(buf);
	ck_assert_str_eq(buf, expect);
}

START_TEST(test_demangle_short)
{
	check_short("foo::bar()", "foo::bar");
	check_short("int max<int>(int, int)", "max<int>");
	check_short("double poly_sum<double>(long)", "poly_sum<double>");
	check_short("unsigned long ns::f<unsigned long>(unsigned long)", "ns::f<unsigned long>");
	check_short("Mat<24>::mul_into(Mat<24> const&, Mat<24>&) const", "Mat<24>::mul_into");
	check_short("ns::Map<int, std::vector<double> >::insert(int const&) &&",
		    "ns::Map<int, std::vector<double> >::insert");
	check_short("(anonymous namespace)::helper(int)", "(anonymous namespace)::helper");
	check_short("main::{lambda(int)#1}::operator()(int) const",
		    "main::{lambda(int)#1}::operator()");
	check_short("operator delete(void*)", "operator delete");
	check_short("A::operator<<(int)", "A::operator<<");
	check_short("A::operator unsigned long() const", "A::operator unsigned long");
	/* perf (libiberty without DMGL_PARAMS) drops GCC's clone suffixes */
	check_short("f(int) [clone .cold]", "f");
	check_short("f(int) [clone .constprop.0] [clone .isra.0]", "f");
	check_short("int max<int>(int, int) [clone .isra.0]", "max<int>");
	/* Not functions: unchanged. */
	check_short("vtable for std::exception", "vtable for std::exception");
	check_short("guard variable for foo()::x", "guard variable for foo()::x");
	check_short("main", "main");
	check_short("", "");
}
END_TEST

START_TEST(test_symbol_name_demangles_once)
{
	/* libstdc++'s own table: mangled names come out demangled, C names as they are, and the
	 * same pointer every time. */
	struct elf_file *f = elf_file__open("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", NULL, 0,
					    "/nonexistent");
	const struct symtab *t;
	const struct symbol *s = NULL;
	const char *a;

	ck_assert_ptr_nonnull(f);
	t = elf_file__symtab(f);
	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < symtab__nr(t) && !s; i++) {
		if (!strncmp(symtab__symbol(t, i)->name, "_ZNSt", 5))
			s = symtab__symbol(t, i);
	}
	ck_assert_ptr_nonnull(s);
	a = symbol__name(s);
	ck_assert_str_ne(a, s->name);
	ck_assert_ptr_nonnull(strstr(a, "std::"));
	ck_assert_ptr_eq(symbol__name(s), a);
	s = symtab__find_name(t, "__cxa_demangle");
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_eq(symbol__name(s), s->name);
	elf_file__put(f);
}
END_TEST

START_TEST(test_kallsyms_file)
{
	char path[] = "/tmp/check_kallsyms.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct symtab *t;
	const struct symbol *s;

	ck_assert_ptr_nonnull(f);
	fputs("ffffffff81000000 T _text\n"
	      "ffffffff81000000 T _stext\n"
	      "ffffffff81000010 t local_fn\n"
	      "ffffffff81000020 D some_data\n"
	      "ffffffff81000030 W weak_fn\n"
	      "ffffffff81000030 T strong_fn\n"
	      "ffffffff81000040 T SyS_read\n"
	      "ffffffff81000040 T sys_read\n"
	      /* groups of a 6.18 kernel: perf extends unsized symbols to the next one before
	       * choosing (symbols__fixup_end, then symbols__fixup_duplicate), so the last of a
	       * group is the only one with a size and wins, whatever its name */
	      "ffffffff81000050 t __do_sys_sched_yield\n"
	      "ffffffff81000050 T __ia32_sys_sched_yield\n"
	      "ffffffff81000050 T __x64_sys_sched_yield\n"
	      "ffffffff81000060 T memcpy\n"
	      "ffffffff81000060 T __memcpy\n"
	      "ffffffff81000060 T __pi_memcpy\n"
	      "ffffffff81000070 T __pi___x86_indirect_thunk_rax\n"
	      "ffffffff81000070 T __x86_indirect_thunk_array\n"
	      "ffffffff81000070 T __x86_indirect_thunk_rax\n"
	      "ffffffff81000080 T strong_first\n"
	      "ffffffff81000080 W weak_last\n"
	      "ffffffffa0000000 t mod_fn\t[kvm]\n"
	      "garbage line\n"
	      "0000000000000000 T hidden\n", f);
	fclose(f);
	t = symtab__from_kallsyms(path);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(symtab__nr(t), 9);
	ck_assert_str_eq(name_at(t, 0xffffffff81000000ULL), "_stext");	/* longer */
	ck_assert_str_eq(name_at(t, 0xffffffff8100001fULL), "local_fn");	/* data skipped */
	ck_assert_str_eq(name_at(t, 0xffffffff81000030ULL), "strong_fn");
	ck_assert_str_eq(name_at(t, 0xffffffff81000041ULL), "sys_read");
	ck_assert_str_eq(name_at(t, 0xffffffff81000050ULL), "__x64_sys_sched_yield");
	ck_assert_str_eq(name_at(t, 0xffffffff81000060ULL), "__pi_memcpy");
	ck_assert_str_eq(name_at(t, 0xffffffff81000070ULL), "__x86_indirect_thunk_rax");
	ck_assert_str_eq(name_at(t, 0xffffffff81000080ULL), "weak_last");
	s = symtab__find(t, 0xffffffffa0000004ULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "mod_fn");
	ck_assert_ptr_null(symtab__find_name(t, "hidden"));
	symtab__free(t);

	/* Read in pieces: a line longer than the read buffer (skipped), upper-case hex, an address
	 * of more than 64 bits (skipped), a tab after the name, and a last line without its
	 * newline. */
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 3 << 20; i++)
		fputc('x', f);
	fputs("\nFFFFFFFF81000100 T upper_fn\n"
	      "1ffffffff81000200 T too_wide\n"
	      "ffffffff81000300 t tab_fn\t[mod]\n"
	      "ffffffff81000400 T last_fn", f);
	fclose(f);
	t = symtab__from_kallsyms(path);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(symtab__nr(t), 3);
	ck_assert_str_eq(name_at(t, 0xffffffff81000100ULL), "upper_fn");
	ck_assert_str_eq(name_at(t, 0xffffffff81000300ULL), "tab_fn");
	ck_assert_str_eq(name_at(t, 0xffffffff81000400ULL), "last_fn");
	ck_assert_ptr_null(symtab__find_name(t, "too_wide"));
	symtab__free(t);

	/* Nothing usable (all addresses hidden) */
	f = fopen(path, "w");
	fputs("0000000000000000 T _text\n", f);
	fclose(f);
	errno = 0;
	ck_assert_ptr_null(symtab__from_kallsyms(path));
	ck_assert_int_eq(errno, ENOENT);
	unlink(path);
	ck_assert_ptr_null(symtab__from_kallsyms("/nonexistent/kallsyms"));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(test_running_kernel)
{
	struct utsname u;
	uint8_t id[64];
	int len = kallsyms__running_build_id(id, sizeof(id));
	struct symtab *t;
	const struct symbol *s;

	ck_assert_int_eq(uname(&u), 0);
	ck_assert(kallsyms__matches_running(u.release, NULL, 0));
	ck_assert(!kallsyms__matches_running("0.0.0-not-this-one", NULL, 0));
	ck_assert(!kallsyms__matches_running(NULL, NULL, 0));
	if (len > 0) {
		/* The build id decides when both are known. */
		ck_assert(kallsyms__matches_running("0.0.0-not-this-one", id, len));
		id[0] ^= 0xff;
		ck_assert(!kallsyms__matches_running(u.release, id, len));
	}
	t = symtab__from_kallsyms(NULL);
	if (!t && errno == ENOENT)
		return;	/* kptr_restrict hides addresses: nothing more to check */
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_gt(symtab__nr(t), 1000);
	s = symtab__find_name(t, "schedule");
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_eq(symtab__find(t, s->start + 1), s);
	symtab__free(t);
}
END_TEST

START_TEST(test_running_vdso)
{
	struct machine_opts mo = { .running_vdso = true };
	struct machine *m = machine__new(&mo);
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	struct map_snapshot *snap;
	const struct symtab *t;
	const struct map *mp;

	ck_assert_uint_ne(base, 0);
	ck_assert_int_eq(machine__mmap(m, 1, base, 0x2000, 0, PROT_READ | PROT_EXEC, "[vdso]", NULL,
				       0), 0);
	snap = machine__snapshot(m, 1);
	mp = map_snapshot__find(snap, base + 0x10);
	ck_assert_int_eq(dso__kind(mp->dso), DSO_VDSO);
	ck_assert_ptr_nonnull(dso__elf(mp->dso));
	t = dso__symtab(mp->dso);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(symtab__find_name(t, "__vdso_clock_gettime"));
	map_snapshot__put(snap);
	machine__free(m);
}
END_TEST

Suite *symbols_suite(void)
{
	Suite *s = suite_create("symbols");
	TCase *tc = tcase_create("elf");

	tcase_add_test(tc, test_aliases_and_sizes);
	tcase_add_test(tc, test_elf_file_basics);
	tcase_add_test(tc, test_elf_file_sparse_claims);
	tcase_add_test(tc, test_stripped_debuglink_and_build_id);
	tcase_add_test(tc, test_running_vdso);
	suite_add_tcase(s, tc);
	tc = tcase_create("demangle");
	tcase_add_test(tc, test_demangle);
	tcase_add_test(tc, test_demangle_short);
	tcase_add_test(tc, test_demangle_symbol);
	tcase_add_test(tc, test_plt_symbols);
	tcase_add_test(tc, test_plt_without_symtab);
	tcase_add_test(tc, test_symbol_name_demangles_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("kallsyms");
	tcase_add_test(tc, test_kallsyms_file);
	tcase_add_test(tc, test_running_kernel);
	suite_add_tcase(s, tc);
	return s;
}
