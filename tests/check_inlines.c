/* Tests for unwind/inlines: the records computed from libdw against the ones binutils'
 * addr2line prints for the same addresses asked in the same order (one addr2line process, as perf
 * keeps one per file: its answers depend on what it was asked before). Run on the inlines
 * workload (C++ -O2: std::sort with a lambda, inlined into main and std::__introsort_loop) and on
 * its shared library. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "unwind/demangle.h"
#include "unwind/elfcache.h"
#include "unwind/inlines.h"
#include "unwind/symbols.h"

struct a2l {
	pid_t pid;
	FILE *to, *from;
};

static void a2l_start(struct a2l *a, const char *path)
{
	int in[2], out[2];

	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	a->pid = fork();
	ck_assert_int_ge(a->pid, 0);
	if (!a->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execlp("addr2line", "addr2line", "-e", path, "-i", "-f", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	a->to = fdopen(in[1], "w");
	a->from = fdopen(out[0], "r");
	ck_assert_ptr_nonnull(a->to);
	ck_assert_ptr_nonnull(a->from);
}

static void a2l_stop(struct a2l *a)
{
	int st;

	fclose(a->to);
	fclose(a->from);
	waitpid(a->pid, &st, 0);
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Ask addr as perf does (the address, then "," whose "??" answer ends the list) and check
 * each record against ours: the name as perf shows it and the file:line. */
static int compare_one(struct a2l *a, struct dwarf_inlines *d, const struct symtab *t,
		       uint64_t addr)
{
	const struct symbol *sym = symtab__find(t, addr);
	const struct inline_frame *fr = NULL;
	char fn[8192], fl[4096];
	int n = dwarf_inlines__lookup(d, addr, sym, &fr), k = 0;

	ck_assert_int_ge(n, 0);
	fprintf(a->to, "%llx\n,\n", (unsigned long long)addr);
	fflush(a->to);
	for (;;) {
		char *nl;

		ck_assert_ptr_nonnull(fgets(fn, sizeof(fn), a->from));
		ck_assert_ptr_nonnull(fgets(fl, sizeof(fl), a->from));
		if ((nl = strchr(fn, '\n')))
			*nl = '\0';
		if ((nl = strchr(fl, '\n')))
			*nl = '\0';
		if (!strcmp(fn, "??") && !strcmp(fl, "??:0")) {
			/* the "," sentinel; as the first record, addr2line knows nothing of
			 * addr and the sentinel's own pair follows */
			if (!k) {
				ck_assert_ptr_nonnull(fgets(fn, sizeof(fn), a->from));
				ck_assert_ptr_nonnull(fgets(fl, sizeof(fl), a->from));
			}
			break;
		}
		if ((nl = strstr(fl, " (discriminator")))
			*nl = '\0';
		if (!n && !k && !strncmp(fl, "??:", 3)) {
			/* No DWARF covers addr: addr2line names the ELF symbol, without a
			 * line; perf's frame stays the symbol, as ours does. */
			_cleanup_free_ char *shown = demangle__symbol(fn);

			ck_assert_msg(sym && !strcmp(shown ? shown : fn, symbol__name(sym)),
				      "%llx: addr2line names %s", (unsigned long long)addr, fn);
			k++;
			continue;
		}
		ck_assert_msg(k < n, "%llx: addr2line has record %d (%s), we have %d",
			      (unsigned long long)addr, k, fn, n);
		{
			_cleanup_free_ char *shown = demangle__symbol(fn);
			char mine[4096];

			ck_assert_msg(!strcmp(shown ? shown : fn, fr[k].name),
				      "%llx record %d: addr2line '%s', we '%s'",
				      (unsigned long long)addr, k, shown ? shown : fn, fr[k].name);
			snprintf(mine, sizeof(mine), "%s:%u", fr[k].file ? fr[k].file : "??",
				 fr[k].line);
			ck_assert_msg(!strcmp(base(fl), base(mine)),
				      "%llx record %d (%s): addr2line %s, we %s",
				      (unsigned long long)addr, k, fr[k].name, fl, mine);
			ck_assert_int_eq(fr[k].inlined, !sym || strcmp(fr[k].name, symbol__name(sym)));
		}
		k++;
	}
	/* the sentinel's own "??" record comes after the real ones */
	return k;
}

/* Every address of the file's functions, in a fixed shuffled order. */
static void compare_file(const char *path, size_t min_addrs, int min_inlined)
{
	struct elf_file *f;
	struct dwarf_inlines *d;
	const struct symtab *t;
	struct a2l a;
	uint64_t *addrs = NULL;
	size_t nr = 0, cap = 0;
	int with_inlined = 0;
	unsigned int seed = 12345;

	if (access(path, R_OK) != 0 || system("command -v addr2line > /dev/null 2>&1") != 0)
		return;	/* make test-bins builds it; binutils is in build-essential */
	f = elf_file__open(path, NULL, 0, "/nonexistent");
	ck_assert_ptr_nonnull(f);
	t = elf_file__symtab(f);
	ck_assert_ptr_nonnull(t);
	d = dwarf_inlines__open(path);
	ck_assert_msg(d != NULL, "no DWARF in %s: %s", path, strerror(errno));
	for (size_t i = 0; i < symtab__nr(t); i++) {
		const struct symbol *s = symtab__symbol(t, i);

		if (!s->size || s->size > 65536)
			continue;
		for (uint64_t x = s->start; x < s->end; x++) {
			if (nr == cap) {
				cap = cap ? cap * 2 : 4096;
				addrs = realloc(addrs, cap * sizeof(*addrs));
				ck_assert_ptr_nonnull(addrs);
			}
			addrs[nr++] = x;
		}
	}
	ck_assert_uint_ge(nr, min_addrs);
	for (size_t i = nr - 1; i > 0; i--) {
		size_t j = rand_r(&seed) % (i + 1);
		uint64_t tmp = addrs[i];

		addrs[i] = addrs[j];
		addrs[j] = tmp;
	}
	a2l_start(&a, path);
	for (size_t i = 0; i < nr; i++)
		with_inlined += compare_one(&a, d, t, addrs[i]) > 1;
	/* and again: the cached answers are the first ones */
	for (size_t i = 0; i < nr; i += 7) {
		const struct inline_frame *fr, *fr2;
		const struct symbol *sym = symtab__find(t, addrs[i]);
		int n = dwarf_inlines__lookup(d, addrs[i], sym, &fr);
		const char *first = n > 0 ? fr[0].name : NULL;
		int n2 = dwarf_inlines__lookup(d, addrs[i], sym, &fr2);

		ck_assert_int_eq(n, n2);
		if (n > 0)
			ck_assert_str_eq(first, fr2[0].name);
	}
	a2l_stop(&a);
	ck_assert_int_ge(with_inlined, min_inlined);
	free(addrs);
	dwarf_inlines__free(d);
	elf_file__put(f);
}

START_TEST(test_workload_matches_addr2line)
{
	compare_file("build/workloads/inlines", 1000, 100);
}
END_TEST

START_TEST(test_library_matches_addr2line)
{
	compare_file("build/workloads/libinlines.so", 40, 1);
}
END_TEST

START_TEST(test_no_dwarf)
{
	errno = 0;
	ck_assert_ptr_null(dwarf_inlines__open("/nonexistent/file"));
	ck_assert_int_eq(errno, ENOENT);
	/* /bin/true is stripped: no DWARF of its own */
	errno = 0;
	if (!dwarf_inlines__open("/bin/true"))
		ck_assert_int_eq(errno, ENODATA);
	dwarf_inlines__free(NULL);
}
END_TEST

Suite *inlines_suite(void)
{
	Suite *s = suite_create("inlines");
	TCase *tc = tcase_create("addr2line");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_workload_matches_addr2line);
	tcase_add_test(tc, test_library_matches_addr2line);
	tcase_add_test(tc, test_no_dwarf);
	suite_add_tcase(s, tc);
	return s;
}
