/* Tests of src/report/report: Children/Self semantics, sort keys, filters, percentages, call graphs,
 * folded stacks and stats, and golden comparisons with perf 6.1's own output. The goldens in
 * tests/data were made from two real recordings: report-X.script is `perf script -F
 * comm,pid,tid[,cpu],period,ip,sym,symoff,dso` (paths cut to basenames) and report-X.NAME.txt
 * is `perf report --stdio OPTIONS` from "# Samples" on, without the closing tip. */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static struct report_frame F(const char *dso, const char *sym)
{
	return (struct report_frame){ .dso = dso, .sym = sym, .ip = 0x1000, .map_ip = 0x1000, .map_off = 0x1000 };
}

static void add(struct report *r, const char *comm, int pid, int tid, int cpu, uint64_t period,
		const struct report_frame *fr, size_t n)
{
	struct report_sample s = { .comm = comm, .pid = pid, .tid = tid, .cpu = cpu,
				   .period = period, .nr_frames = n, .frames = fr };
	ck_assert_int_eq(report__add_sample(r, &s), 0);
}

struct found {
	const char *sym;
	struct report_entry e;
	int n, pos, rows;
};

static int find_cb(const struct report_entry *e, void *ctx)
{
	struct found *f = ctx;
	if (e->sym && f->sym && !strcmp(e->sym, f->sym)) {
		f->e = *e;
		f->n++;
		f->pos = f->rows;
	}
	f->rows++;
	return 0;
}

static struct found find(struct report *r, const char *sym)
{
	struct found f = { .sym = sym };
	ck_assert_int_eq(report__foreach_entry(r, find_cb, &f), 0);
	return f;
}

/* Everything a print function writes, as a malloc'd string. */
#define CAPTURE(out, call)                                           \
	do {                                                         \
		size_t _len;                                         \
		FILE *_fp = open_memstream(&(out), &_len);           \
		ck_assert_ptr_nonnull(_fp);                          \
		ck_assert_int_ge((call), 0);                         \
		fclose(_fp);                                         \
	} while (0)
#define FP _fp

static char *slurp(const char *name)
{
	char path[4096];
	const char *top = getenv("PRECORD_TOP");
	snprintf(path, sizeof(path), "%s/tests/data/%s", top ? top : ".", name);
	FILE *fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "cannot open %s", path);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	char tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof(tmp), fp)) > 0)
		fwrite(tmp, 1, n, out);
	fclose(out);
	fclose(fp);
	return buf;
}

/* With memo, feed_script gives each sample the report_chain of the first sample with the same
 * frames (the aggregation sink's memo, in its simplest form): a repeated stack is added by its
 * known place in the tree, without its frames. Returns the samples added that way. */
#define FEED_MEMO 8192
struct feed_memo {
	char *key[FEED_MEMO];
	struct report_chain chain[FEED_MEMO];
	size_t n;
};

static struct report_chain *memo_chain(struct feed_memo *m, const struct report_frame *fr,
				       size_t n)
{
	char *key = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&key, &len);

	ck_assert_ptr_nonnull(fp);
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%llx %llx %s %s %d|", (unsigned long long)fr[i].ip,
			(unsigned long long)fr[i].sym_start, fr[i].dso ? fr[i].dso : "-",
			fr[i].sym ? fr[i].sym : "-", fr[i].kernel);
	fclose(fp);
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->key[i], key)) {
			free(key);
			return &m->chain[i];
		}
	ck_assert_uint_lt(m->n, FEED_MEMO);
	m->key[m->n] = key;
	m->chain[m->n] = (struct report_chain){ .known = false };
	return &m->chain[m->n++];
}

/* Feed a `perf script` text (see the file comment) into r. Kernel frames are those above the
 * canonical hole; symoff gives the symbol start. */
static size_t feed_script_memo(struct report *r, const char *name, bool memo)
{
	static struct feed_memo m;
	size_t known = 0;
	char *text = slurp(name), *save = NULL;
	struct report_frame fr[512];
	char comm[256] = "";
	int pid = 0, tid = 0, cpu = -1;
	uint64_t period = 0;
	size_t n = 0;
	bool have = false;

	for (char *line = strtok_r(text, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		if (!line || line[0] != '\t') {
			if (have && n) {
				struct report_sample s = { .comm = comm, .pid = pid, .tid = tid,
							   .cpu = cpu, .period = period,
							   .nr_frames = n, .frames = fr };
				if (memo && (s.chain = memo_chain(&m, fr, n))->known) {
					s.frames = NULL;
					known++;
				}
				ck_assert_int_eq(report__add_sample(r, &s), 0);
			}
			n = 0;
			have = false;
			if (!line)
				break;
			/* "comm words pid/tid [cpu] period" */
			char *tok[64];
			int nt = 0;
			for (char *sv2 = NULL, *t = strtok_r(line, " ", &sv2); t && nt < 64;
			     t = strtok_r(NULL, " ", &sv2))
				tok[nt++] = t;
			period = strtoull(tok[nt - 1], NULL, 10);
			int k = nt - 2;
			cpu = -1;
			if (tok[k][0] == '[')
				cpu = atoi(tok[k--] + 1);
			sscanf(tok[k], "%d/%d", &pid, &tid);
			comm[0] = '\0';
			for (int j = 0; j < k; j++) {
				if (j)
					strcat(comm, " ");
				strcat(comm, tok[j]);
			}
			have = true;
			continue;
		}
		/* "\t ip sym+0xoff (dso)"; the dso may itself contain parentheses */
		char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		uint64_t ip = strtoull(p, &p, 16);
		while (*p == ' ')
			p++;
		size_t len = strlen(p);
		char *dso = NULL;
		if (len && p[len - 1] == ')') {
			int depth = 0;
			for (size_t q = len; q-- > 0;) {
				if (p[q] == ')')
					depth++;
				else if (p[q] == '(' && --depth == 0) {
					p[len - 1] = '\0';
					dso = p + q + 1;
					p[q ? q - 1 : 0] = '\0';
					break;
				}
			}
		}
		char *plus = strrchr(p, '+');
		uint64_t start = 0;
		if (plus && !strncmp(plus, "+0x", 3)) {
			start = ip - strtoull(plus + 3, NULL, 16) + 1;
			*plus = '\0';
		}
		ck_assert_uint_lt(n, 512);
		fr[n] = (struct report_frame){
			.ip = ip, .map_ip = ip, .map_off = ip, .sym_start = start,
			.sym = strcmp(p, "[unknown]") ? p : NULL,
			.dso = dso && strcmp(dso, "[unknown]") ? dso : NULL,
			.kernel = ip >= 0xffff800000000000ULL,
		};
		n++;
	}
	/* report__add_sample copied every string it keeps. */
	free(text);
	for (size_t i = 0; i < m.n; i++)
		free(m.key[i]);
	m.n = 0;
	return known;
}

/* Compare texts, reporting the first differing line (Check's messages are size-limited). */
static void assert_text(const char *what, const char *out, const char *want)
{
	if (!strcmp(out, want))
		return;
	const char *a = out, *b = want;
	int line = 1;
	while (*a && *a == *b) {
		if (*a == '\n')
			line++;
		a++, b++;
	}
	ck_abort_msg("%s differs at line %d:\n got: %.80s\nwant: %.80s", what, line, a, b);
}

static void check_golden(const char *script, const char *golden, const char *sort,
			 const char *graph, bool no_children, const char *comm)
{
	struct report_opts o = { .graph = REPORT_GRAPH_GRAPH, .min_percent = -1,
				 .no_children = no_children };
	const char *comms[1] = { comm };
	if (sort)
		ck_assert_int_eq(report__parse_sort(sort, &o), 0);
	if (graph)
		ck_assert_int_eq(report__parse_callgraph(graph, &o), 0);
	if (comm) {
		o.comms = comms;
		o.nr_comms = 1;
	}
	/* as perf, and the same again when repeated stacks come by their known chain */
	for (int memo = 0; memo < 2; memo++) {
		struct report *r = report__new(&o);
		ck_assert_ptr_nonnull(r);
		size_t known = feed_script_memo(r, script, memo);
		if (memo)
			ck_assert_uint_gt(known, report__nr_samples(r) / 2);
		char *out = NULL, *want = slurp(golden);
		CAPTURE(out, report__fprintf(r, FP, "cpu-clock"));
		assert_text(golden, out, want);
		free(out);
		free(want);
		report__free(r);
	}
}

/* ---- core semantics ---------------------------------------------------------------------- */

START_TEST(test_children_recursion_once)
{
	struct report *r = report__new(NULL);
	/* main -> rec -> rec -> leaf, and main -> rec (sampled in rec) */
	struct report_frame a[] = { F("w", "leaf"), F("w", "rec"), F("w", "rec"), F("w", "main") };
	struct report_frame b[] = { F("w", "rec"), F("w", "rec"), F("w", "main") };
	add(r, "w", 1, 1, 0, 100, a, 4);
	add(r, "w", 1, 1, 0, 50, b, 3);

	struct found rec = find(r, "rec"), leaf = find(r, "leaf"), m = find(r, "main");
	ck_assert_int_eq(rec.n, 1);
	ck_assert_uint_eq(rec.e.self, 50);
	ck_assert_uint_eq(rec.e.children, 150); /* not 100 * 2 + 50 * 2 */
	ck_assert_uint_eq(leaf.e.self, 100);
	ck_assert_uint_eq(leaf.e.children, 100);
	ck_assert_uint_eq(m.e.self, 0);
	ck_assert_uint_eq(m.e.children, 150);
	ck_assert_uint_eq(report__nr_samples(r), 2);
	ck_assert_uint_eq(report__total_period(r), 150);
	/* Children order, then the caller above its callee at equal children (caller order:
	 * the longer chain first). */
	ck_assert_int_eq(m.pos, 0);
	ck_assert_int_eq(rec.pos, 1);
	ck_assert_int_eq(leaf.pos, 2);
	report__free(r);
}
END_TEST

START_TEST(test_no_children)
{
	struct report_opts o = { .no_children = true, .graph = REPORT_GRAPH_NONE };
	struct report *r = report__new(&o);
	struct report_frame a[] = { F("w", "leaf"), F("w", "main") };
	struct report_frame b[] = { F("w", "main") };
	add(r, "w", 1, 1, 0, 30, a, 2);
	add(r, "w", 1, 1, 0, 10, b, 1);
	add(r, "w", 1, 1, 0, 30, a, 2);

	struct found leaf = find(r, "leaf"), m = find(r, "main");
	ck_assert_int_eq(leaf.rows, 2);
	ck_assert_uint_eq(leaf.e.self, 60);
	ck_assert_uint_eq(leaf.e.children, 60);
	ck_assert_uint_eq(leaf.e.nr_samples, 2);
	ck_assert_uint_eq(m.e.self, 10);
	ck_assert_int_eq(leaf.pos, 0);
	report__free(r);
}
END_TEST

static int collect_dso(const struct report_entry *e, void *ctx)
{
	char *buf = ctx;
	char line[256];
	snprintf(line, sizeof(line), "%s:%s:%d:%d:%llu/%llu;", e->comm, e->dso ? e->dso : "-",
		 e->tid, e->cpu, (unsigned long long)e->self, (unsigned long long)e->children);
	strcat(buf, line);
	return 0;
}

START_TEST(test_sort_keys)
{
	struct report_opts o = { .no_children = true };
	char buf[1024] = "";
	struct report_frame a[] = { F("libc.so.6", "memcpy") };
	struct report_frame b[] = { F("w", "main") };
	struct report_frame c[] = { F("libc.so.6", "strlen") };

	ck_assert_int_eq(report__parse_sort("dso", &o), 0);
	struct report *r = report__new(&o);
	add(r, "w", 1, 1, 0, 10, a, 1);
	add(r, "w", 1, 2, 1, 20, b, 1);
	add(r, "x", 3, 3, 1, 15, c, 1);
	ck_assert_int_eq(report__foreach_entry(r, collect_dso, buf), 0);
	/* libc rows merge across comms and symbols; ties would go by name. */
	ck_assert_str_eq(buf, "w:libc.so.6:1:-1:25/25;w:w:2:-1:20/20;");
	report__free(r);

	buf[0] = '\0';
	ck_assert_int_eq(report__parse_sort("pid", &o), 0);
	r = report__new(&o);
	add(r, "w", 1, 1, 0, 10, a, 1);
	add(r, "w", 1, 2, 1, 10, b, 1);
	add(r, "w", 1, 1, 1, 5, c, 1);
	ck_assert_int_eq(report__foreach_entry(r, collect_dso, buf), 0);
	ck_assert_str_eq(buf, "w:libc.so.6:1:-1:15/15;w:w:2:-1:10/10;");
	report__free(r);

	buf[0] = '\0';
	ck_assert_int_eq(report__parse_sort("cpu,comm", &o), 0);
	r = report__new(&o);
	add(r, "w", 1, 1, 1, 10, a, 1);
	add(r, "w", 1, 2, 0, 10, b, 1);
	add(r, "x", 3, 3, 0, 10, c, 1);
	ck_assert_int_eq(report__foreach_entry(r, collect_dso, buf), 0);
	/* Equal overhead: cpu ascending, then comm. */
	ck_assert_str_eq(buf, "w:w:2:0:10/10;x:libc.so.6:3:0:10/10;w:libc.so.6:1:1:10/10;");
	report__free(r);
}
END_TEST

/* -F: parsing (a field once, '+' to append, the bad word named), then a table with the
 * columns in the order given, the rows ordered by the fields in turn (samples, then the
 * kernel's share), the kernel's and the user's shares apart, the keys taken from the list. */
START_TEST(test_fields)
{
	struct report_opts o = { .no_children = true, .graph = REPORT_GRAPH_NONE };
	char bad[32];
	struct report_frame a[] = { F("libc.so.6", "memcpy") };
	struct report_frame b[] = { F("w", "main") };
	struct report_frame k[] = { F("[kernel.kallsyms]", "do_syscall_64") };
	char *out = NULL;

	ck_assert_int_eq(report__parse_fields("overhead,bogus", &o, bad, sizeof(bad)), -EINVAL);
	ck_assert_str_eq(bad, "bogus");
	ck_assert_int_eq(report__parse_fields(",", &o, bad, sizeof(bad)), -EINVAL);
	ck_assert_uint_eq(o.nr_fields, 0); /* untouched on failure */
	ck_assert_int_eq(report__parse_fields("+sample,sample", &o, bad, sizeof(bad)), 0);
	ck_assert(o.fields_append);
	ck_assert_uint_eq(o.nr_fields, 1);
	ck_assert(!report__wants_key(&o, REPORT_SORT_SRCLINE));
	ck_assert_int_eq(report__parse_fields("sample,overhead_sys,overhead_us,symbol,srcline", &o,
						bad, sizeof(bad)), 0);
	ck_assert(!o.fields_append);
	ck_assert_uint_eq(o.nr_fields, 5);
	ck_assert_int_eq(o.fields[3].kind, REPORT_FIELD_KEY);
	ck_assert_int_eq(o.fields[3].key, REPORT_SORT_SYM);
	ck_assert(report__wants_key(&o, REPORT_SORT_SRCLINE));
	ck_assert_int_eq(report__parse_fields("sample,overhead_sys,overhead_us,sym", &o, bad,
						sizeof(bad)), 0);

	k[0].kernel = true;
	struct report *r = report__new(&o);
	ck_assert_ptr_nonnull(r);
	add(r, "w", 1, 1, 0, 10, a, 1);
	add(r, "w", 1, 1, 0, 10, b, 1);
	add(r, "w", 1, 1, 0, 10, b, 1);
	add(r, "w", 1, 1, 0, 30, k, 1);
	CAPTURE(out, report__fprintf(r, FP, NULL));
	/* main's two samples first; then of one sample each, the kernel's share first */
	ck_assert_ptr_nonnull(strstr(out, "#      Samples       sys       usr  Symbol  "));
	ck_assert_ptr_nonnull(strstr(out, "\n             2     0.00%    33.33%  [.] main\n"
					 "             1    50.00%     0.00%  [k] do_syscall_64\n"
					 "             1     0.00%    16.67%  [.] memcpy\n"));
	free(out);
	report__free(r);

	/* no sort key at all: refused */
	ck_assert_int_eq(report__parse_fields("overhead", &o, bad, sizeof(bad)), 0);
	errno = 0;
	ck_assert_ptr_null(report__new(&o));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* The parent key: a row per parent symbol, "[other]" for the samples without one (after the
 * named ones on a tie, as perf's sort__parent_cmp); -p's key follows the default ones; -x keeps
 * those samples out of the rows, not out of the totals. */
START_TEST(test_parent)
{
	struct report_opts o = { .no_children = true, .graph = REPORT_GRAPH_NONE,
				 .parent = "^ksys_" };
	struct report_frame a[] = { F("w", "main") };
	const char *names[] = { "ksys_read", NULL, "ksys_write", NULL };
	char *out = NULL;

	for (int x = 0; x < 2; x++) {
		o.exclude_other = x;
		struct report *r = report__new(&o);
		ck_assert_ptr_nonnull(r);
		for (int i = 0; i < 4; i++) {
			struct report_sample s = { .comm = "w", .pid = 1, .tid = 1, .period = 10,
						   .nr_frames = 1, .frames = a, .parent = names[i] };
			ck_assert_int_eq(report__add_sample(r, &s), 0);
		}
		CAPTURE(out, report__fprintf(r, FP, NULL));
		ck_assert_ptr_nonnull(strstr(out, "Symbol    Parent symbol\n"));
		if (!x)
			ck_assert_ptr_nonnull(strstr(out,
				"    50.00%  w        w              [.] main  [other]      \n"
				"    25.00%  w        w              [.] main  ksys_read    \n"
				"    25.00%  w        w              [.] main  ksys_write   \n"));
		else
			ck_assert_ptr_null(strstr(out, "[other]"));
		ck_assert_ptr_nonnull(strstr(out, "    25.00%  w        w              [.] main  ksys_write   \n"));
		free(out);
		report__free(r);
	}
}
END_TEST

/* The srcfile key: a row per source file of the Self frames, "" where none is known; the
 * functions of one file are one row. */
START_TEST(test_srcfile)
{
	struct report_opts o = { .no_children = true, .graph = REPORT_GRAPH_NONE,
				 .nr_sort_keys = 1, .sort_keys = { REPORT_SORT_SRCFILE } };
	struct report_frame a[] = { F("w", "main") }, b[] = { F("w", "work") },
			    k[] = { F("[kernel.kallsyms]", "schedule") };
	char *out = NULL;

	a[0].srcfile = b[0].srcfile = "w.c";
	k[0].srcfile = "";
	k[0].kernel = true;
	struct report *r = report__new(&o);
	ck_assert_ptr_nonnull(r);
	add(r, "w", 1, 1, 0, 10, a, 1);
	add(r, "w", 1, 1, 0, 10, b, 1);
	add(r, "w", 1, 1, 0, 10, k, 1);
	CAPTURE(out, report__fprintf(r, FP, NULL));
	ck_assert_ptr_nonnull(strstr(out, "# Overhead  Source File\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n    66.67%  w.c\n    33.33%  \n"));
	free(out);
	report__free(r);
}
END_TEST

/* What reads more than a sample's own ip: children, a graph, a parent, --ignore-callees. */
START_TEST(test_needs_callers)
{
	struct report_opts o = { .no_children = true, .graph = REPORT_GRAPH_NONE,
				 .nr_sort_keys = 2,
				 .sort_keys = { REPORT_SORT_SYM, REPORT_SORT_SRCLINE } };
	struct report_opts t;
	char bad[32];

	ck_assert(!report__needs_callers(&o));
	t = o, t.hierarchy = true, t.show_nr_samples = true;
	ck_assert(!report__needs_callers(&t));
	t = o, t.no_children = false;
	ck_assert(report__needs_callers(&t));
	t = o, t.graph = REPORT_GRAPH_FOLDED;
	ck_assert(report__needs_callers(&t));
	t = o, t.ignore_callees = "^main$";
	ck_assert(report__needs_callers(&t));
	t = o, t.parent = "^sys_";
	ck_assert(report__needs_callers(&t));
	t = o;
	ck_assert_int_eq(report__parse_sort("sym,parent", &t), 0);
	ck_assert(report__needs_callers(&t));
	t = o;
	ck_assert_int_eq(report__parse_fields("sym,parent", &t, bad, sizeof(bad)), 0);
	ck_assert(report__needs_callers(&t));
	t = o;
	ck_assert_int_eq(report__parse_fields("sym,overhead_children", &t, bad, sizeof(bad)), 0);
	ck_assert(report__needs_callers(&t));
	t = o;
	ck_assert_int_eq(report__parse_fields("overhead,sym,srcline,sample", &t, bad, sizeof(bad)), 0);
	ck_assert(!report__needs_callers(&t));
}
END_TEST

/* --hierarchy: a level per key, each row the sum of those under it, the largest first. */
START_TEST(test_hierarchy)
{
	struct report_opts o = { .hierarchy = true, .graph = REPORT_GRAPH_NONE,
				 .show_nr_samples = true };
	struct report_frame a[] = { F("libc.so.6", "memcpy") };
	struct report_frame b[] = { F("w", "main") };
	struct report_frame c[] = { F("w", "work") };
	char *out = NULL;

	ck_assert_int_eq(report__parse_sort("dso,sym", &o), 0);
	struct report *r = report__new(&o);
	ck_assert_ptr_nonnull(r);
	add(r, "w", 1, 1, 0, 30, a, 1);
	add(r, "w", 1, 1, 0, 20, b, 1);
	add(r, "w", 1, 1, 0, 20, c, 1);
	add(r, "w", 1, 1, 0, 20, c, 1);
	CAPTURE(out, report__fprintf(r, FP, NULL));
	/* the keys' dots as wide as their header: wider than any level's column and indent */
	ck_assert_ptr_nonnull(strstr(out, "#    Overhead       Samples  Shared Object / Symbol\n"
					 "# .........................  ......................\n"));
	ck_assert_ptr_nonnull(strstr(out, "    66.67%             3     w            \n"
					 "       44.44%             2     [.] work\n"
					 "       22.22%             1     [.] main\n"
					 "    33.33%             1     libc.so.6    \n"
					 "       33.33%             1     [.] memcpy\n"));
	free(out);
	report__free(r);

	/* no columns of -F with it */
	ck_assert_int_eq(report__parse_fields("overhead,sym", &o, (char[8]){ 0 }, 8), 0);
	errno = 0;
	ck_assert_ptr_null(report__new(&o));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

static int print_row(const struct report_entry *e, void *ctx)
{
	char *buf = ctx;
	size_t n = strlen(buf);
	snprintf(buf + n, 1024 - n, "%s:%llu/%llu;", e->sym ? e->sym : "?",
		 (unsigned long long)e->children, (unsigned long long)e->self);
	return 0;
}

/* Inlined frames: the Self row stays the sampled symbol (report_sample.self), the inlined one
 * gets Children, shown as "NAME (inlined)". */
START_TEST(test_inlined_frames)
{
	struct report_opts o = { .graph = REPORT_GRAPH_NONE };
	char buf[1024] = "";
	struct report_frame in = F("w", "helper"), base = F("w", "work"), top = F("w", "main");
	in.inlined = in.expanded = base.expanded = true;
	struct report_frame chain[] = { in, base, top };
	struct report_sample s = { .comm = "w", .pid = 1, .tid = 1, .period = 10, .nr_frames = 3,
				   .frames = chain, .self = &base };
	ck_assert_int_eq(report__parse_sort("sym", &o), 0);
	struct report *r = report__new(&o);
	ck_assert_int_eq(report__add_sample(r, &s), 0);
	ck_assert_int_eq(report__foreach_entry(r, print_row, buf), 0);
	ck_assert_str_eq(buf, "work:10/10;helper (inlined):10/0;main:10/0;");
	report__free(r);
}
END_TEST

/* --sort srcline: one row per line of the sampled address. */
START_TEST(test_sort_srcline)
{
	struct report_opts o = { .no_children = true, .graph = REPORT_GRAPH_NONE };
	struct report_frame a = F("w", "work"), b = F("w", "work"), c = F("w", "main");
	a.srcline = "work.c:10";
	b.srcline = "work.c:12";
	c.srcline = "work.c:10";
	ck_assert_int_eq(report__parse_sort("srcline", &o), 0);
	ck_assert_int_eq(o.sort_keys[0], REPORT_SORT_SRCLINE);
	struct report *r = report__new(&o);
	add(r, "w", 1, 1, 0, 10, &a, 1);
	add(r, "w", 1, 1, 0, 30, &b, 1);
	add(r, "w", 1, 1, 0, 10, &c, 1);
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);
	ck_assert_int_eq(report__fprintf(r, fp, "cpu-clock"), 0);
	fclose(fp);
	ck_assert_ptr_nonnull(strstr(out, "Source:Line"));
	const char *x = strstr(out, "60.00%  work.c:12"), *y = strstr(out, "40.00%  work.c:10");
	ck_assert_msg(x && y && x < y, "%s", out);
	free(out);
	report__free(r);
}
END_TEST

START_TEST(test_parse_options)
{
	struct report_opts o = { 0 };
	ck_assert_int_eq(report__parse_sort("comm,dso,symbol", &o), 0);
	ck_assert_uint_eq(o.nr_sort_keys, 3);
	ck_assert_int_eq(o.sort_keys[2], REPORT_SORT_SYM);
	ck_assert_int_eq(report__parse_sort("comm,bogus", &o), -EINVAL);
	ck_assert_int_eq(report__parse_sort("comm,comm", &o), -EINVAL);
	ck_assert_int_eq(report__parse_sort("", &o), -EINVAL);
	ck_assert_uint_eq(o.nr_sort_keys, 3); /* untouched on failure */

	ck_assert_int_eq(report__parse_callgraph("callee,2.5", &o), 0);
	ck_assert_int_eq(o.order, REPORT_ORDER_CALLEE);
	ck_assert(o.min_percent == 2.5);
	ck_assert_int_eq(report__parse_callgraph("none", &o), 0);
	ck_assert_int_eq(o.graph, REPORT_GRAPH_NONE);
	ck_assert_int_eq(report__parse_callgraph("graph,caller,0", &o), 0);
	ck_assert_int_eq(o.graph, REPORT_GRAPH_GRAPH);
	ck_assert_int_eq(o.order, REPORT_ORDER_CALLER);
	ck_assert(o.min_percent == 0);
	ck_assert_int_eq(report__parse_callgraph("fractal", &o), 0);
	ck_assert_int_eq(o.graph, REPORT_GRAPH_FRACTAL);
	ck_assert_int_eq(report__parse_callgraph("fractals", &o), -EINVAL);
	ck_assert_int_eq(report__parse_callgraph("fractal,nan", &o), -EINVAL);
	ck_assert_int_eq(report__parse_callgraph("-nan", &o), -EINVAL);
	ck_assert_int_eq(report__parse_callgraph("101", &o), -EINVAL);
	/* perf's: the first number the threshold, the next print_limit; the value by name */
	ck_assert_int_eq(report__parse_callgraph("graph,0.5,3,callee,count", &o), 0);
	ck_assert(o.min_percent == 0.5);
	ck_assert_uint_eq(o.print_limit, 3);
	ck_assert_int_eq(o.graph_value, REPORT_VALUE_COUNT);
	ck_assert_int_eq(report__parse_callgraph("period", &o), 0);
	ck_assert_int_eq(o.graph_value, REPORT_VALUE_PERIOD);
	ck_assert_int_eq(report__parse_callgraph("1,-2", &o), -EINVAL);
	ck_assert_int_eq(report__parse_callgraph("1,2.5", &o), -EINVAL);
	ck_assert_int_eq(report__parse_callgraph("1,4294967296", &o), -EINVAL);
	ck_assert_uint_eq(o.print_limit, 3); /* untouched on failure */

	struct report_opts bad = { .nr_sort_keys = 1, .sort_keys = { 99 } };
	errno = 0;
	ck_assert_ptr_null(report__new(&bad));
	ck_assert_int_eq(errno, EINVAL);

	struct report *r = report__new(NULL);
	struct report_sample s = { .comm = "w", .period = 1 };
	ck_assert_int_eq(report__add_sample(r, &s), -EINVAL);
	report__free(r);
	report__free(NULL);
}
END_TEST

START_TEST(test_filters)
{
	int32_t pids[] = { 7 }, cpus[] = { 0, 1 };
	const char *comms[] = { "keep" };
	struct report_opts o = { .no_children = true, .graph = REPORT_GRAPH_NONE,
				 .pids = pids, .nr_pids = 1, .cpus = cpus, .nr_cpus = 2 };
	struct report *r = report__new(&o);
	pids[0] = 99; /* the report keeps its own copy */
	struct report_frame a[] = { F("w", "a") }, b[] = { F("w", "b") }, c[] = { F("w", "c") };
	add(r, "w", 7, 7, 0, 10, a, 1);
	add(r, "w", 8, 8, 1, 30, b, 1);  /* other pid: counted, not shown */
	add(r, "w", 7, 7, 5, 100, c, 1); /* other cpu: dropped entirely */
	ck_assert_uint_eq(report__nr_samples(r), 2);
	ck_assert_uint_eq(report__total_period(r), 40);
	struct found fa = find(r, "a"), fb = find(r, "b"), fc = find(r, "c");
	ck_assert_int_eq(fa.rows, 1);
	ck_assert_int_eq(fb.n + fc.n, 0);
	char *out = NULL;
	CAPTURE(out, report__fprintf(r, FP, "cpu-clock"));
	ck_assert_ptr_nonnull(strstr(out, "    25.00%  w        w              [.] a\n"));
	ck_assert_ptr_nonnull(strstr(out, "# Samples: 2  of event 'cpu-clock'\n"));
	free(out);
	CAPTURE(out, report__fprintf_folded(r, FP));
	ck_assert_str_eq(out, "w;a 1\n");
	free(out);
	report__free(r);

	struct report_opts oc = { .no_children = true, .comms = comms, .nr_comms = 1 };
	r = report__new(&oc);
	add(r, "keep", 1, 1, 0, 10, a, 1);
	add(r, "drop", 2, 2, 0, 10, b, 1);
	fa = find(r, "a");
	ck_assert_int_eq(fa.rows, 1);
	ck_assert_uint_eq(report__total_period(r), 20);
	report__free(r);
}
END_TEST

START_TEST(test_percent_and_header)
{
	struct report_opts o = { .no_children = true, .graph = REPORT_GRAPH_NONE };
	struct report *r = report__new(&o);
	struct report_frame a[] = { F("w", "two") }, b[] = { F("w", "one") };
	add(r, "w", 1, 1, 0, 1, a, 1);
	add(r, "w", 1, 1, 0, 1, a, 1);
	add(r, "w", 1, 1, 0, 1, b, 1);
	char *out = NULL;
	CAPTURE(out, report__fprintf(r, FP, "cpu-clock"));
	ck_assert_str_eq(out,
		"# Samples: 3  of event 'cpu-clock'\n"
		"# Event count (approx.): 3\n"
		"#\n"
		"# Overhead  Command  Shared Object  Symbol \n"
		"# ........  .......  .............  .......\n"
		"#\n"
		"    66.67%  w        w              [.] two\n"
		"    33.33%  w        w              [.] one\n"
		"\n\n");
	free(out);
	/* perf shortens the sample count above 1000: "1K", not "1001". */
	for (int i = 0; i < 1500; i++)
		add(r, "w", 1, 1, 0, 1, b, 1);
	CAPTURE(out, report__fprintf(r, FP, "cpu-clock"));
	ck_assert_ptr_nonnull(strstr(out, "# Samples: 1K of event 'cpu-clock'\n"));
	ck_assert_ptr_nonnull(strstr(out, "# Event count (approx.): 1503\n"));
	free(out);
	report__free(r);
}
END_TEST

/* A column wider than any fixed buffer: the header is padded and underlined to its whole
 * width, as perf does for a long C++ name (the table once cut both at 255 characters). */
START_TEST(test_wide_symbol_column)
{
	struct report_opts o = { .no_children = true, .graph = REPORT_GRAPH_NONE };
	struct report *r = report__new(&o);
	char name[301], want[400];
	memset(name, 'x', 300);
	name[300] = 0;
	struct report_frame a[] = { F("w", name) };
	add(r, "w", 1, 1, 0, 1, a, 1);
	char *out = NULL;
	CAPTURE(out, report__fprintf(r, FP, "cpu-clock"));
	/* "[.] " and the name: 304 characters, the header and the dots as wide */
	snprintf(want, sizeof(want), "# Overhead  Command  Shared Object  %-304s\n", "Symbol");
	ck_assert_ptr_nonnull(strstr(out, want));
	size_t at = strlen("# ........  .......  .............  ");
	memcpy(want, "# ........  .......  .............  ", at);
	memset(want + at, '.', 304);
	strcpy(want + at + 304, "\n#\n");
	ck_assert_ptr_nonnull(strstr(out, want));
	free(out);
	report__free(r);
}
END_TEST

START_TEST(test_unresolved_addresses)
{
	/* An unresolved leaf in a mapped dso: its self row shows the map-relative address (the file
	 * offset, perf's map_ip, not the ELF vaddr of a -no-pie binary),
	 * the frame's children row (perf's cumulative entry) the absolute one. */
	struct report *r = report__new(NULL);
	struct report_frame a[] = {
		{ .dso = "prog", .ip = 0x5600000012a0, .map_ip = 0x4012a0, .map_off = 0x12a0 },
		{ .dso = "prog", .sym = "main", .ip = 0x560000001100, .map_ip = 0x1100 },
	};
	add(r, "prog", 1, 1, 0, 10, a, 2);
	char *out = NULL;
	CAPTURE(out, report__fprintf(r, FP, NULL));
	ck_assert_ptr_nonnull(strstr(out, "[.] 0x00000000000012a0\n"));
	ck_assert_ptr_nonnull(strstr(out, "[.] 0x00005600000012a0\n"));
	ck_assert_ptr_nonnull(strstr(out, "---main\n               0x5600000012a0\n"));
	free(out);
	report__free(r);
}
END_TEST

START_TEST(test_memory_stays_small)
{
	/* 300k samples over 64 distinct 20-frame stacks: the cost is per distinct stack. */
	struct report *r = report__new(NULL);
	struct report_frame fr[20];
	char names[20][16];
	for (int i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "fn%d", i);
		fr[i] = F("libbig.so", names[i]);
	}
	add(r, "w", 1, 1, 0, 1, fr, 20);
	struct mallinfo2 before = mallinfo2();
	for (int i = 0; i < 300000; i++) {
		fr[0].sym = names[i % 64 % 20];
		fr[1].sym = names[(i / 20) % 3];
		add(r, "w", 1, 1 + i % 2, 0, 1, fr, 20);
	}
	struct mallinfo2 after = mallinfo2();
	ck_assert_uint_lt(after.uordblks - before.uordblks, 256 * 1024);
	ck_assert_uint_eq(report__nr_samples(r), 300001);
	report__free(r);
}
END_TEST

/* ---- call graphs ------------------------------------------------------------------------- */

static struct report *graph_report_as(enum report_graph graph, enum report_order order,
				      bool no_children, double minp)
{
	struct report_opts o = { .graph = graph, .order = order,
				 .no_children = no_children, .min_percent = minp };
	struct report *r = report__new(&o);
	struct report_frame x[] = { F("w", "leaf"), F("w", "a"), F("w", "main") };
	struct report_frame y[] = { F("w", "leaf"), F("w", "b"), F("w", "main") };
	struct report_frame z[] = { F("w", "leaf"), F("w", "c"), F("w", "main") };
	for (int i = 0; i < 600; i++)
		add(r, "w", 1, 1, 0, 1, x, 3);
	for (int i = 0; i < 396; i++)
		add(r, "w", 1, 1, 0, 1, y, 3);
	for (int i = 0; i < 4; i++) /* 0.4%: below perf's default 0.5% threshold */
		add(r, "w", 1, 1, 0, 1, z, 3);
	return r;
}

static struct report *graph_report(enum report_order order, bool no_children, double minp)
{
	return graph_report_as(REPORT_GRAPH_GRAPH, order, no_children, minp);
}

START_TEST(test_graph_callee)
{
	struct report *r = graph_report(REPORT_ORDER_DEFAULT, true, -1);
	char *out = NULL;
	CAPTURE(out, report__fprintf(r, FP, "cpu-clock"));
	ck_assert_str_eq(out,
		"# Samples: 1000  of event 'cpu-clock'\n"
		"# Event count (approx.): 1000\n"
		"#\n"
		"# Overhead  Command  Shared Object  Symbol  \n"
		"# ........  .......  .............  ........\n"
		"#\n"
		"   100.00%  w        w              [.] leaf\n"
		"            |\n"
		"            ---leaf\n"
		"               |          \n"
		"               |--60.00%--a\n"
		"               |          main\n"
		"               |          \n"
		"                --39.60%--b\n"
		"                          main\n"
		"\n"
		"\n\n");
	free(out);
	report__free(r);

	/* Threshold 0 keeps the small branch. */
	r = graph_report(REPORT_ORDER_CALLEE, true, 0);
	CAPTURE(out, report__fprintf(r, FP, "cpu-clock"));
	ck_assert_ptr_nonnull(strstr(out, "                --0.40%--c\n"));
	free(out);
	report__free(r);
}
END_TEST

/* A sample without a chain (perf unwinds nothing when the kernel copied none of the user stack):
 * its Self row is its own frame, and it adds no branch to any graph, as perf's empty callchain. */
START_TEST(test_graph_empty_chain)
{
	struct report_opts o = { .graph = REPORT_GRAPH_GRAPH, .order = REPORT_ORDER_CALLER,
				 .min_percent = -1 };
	struct report *r = report__new(&o);
	struct report_frame x[] = { F("w", "leaf"), F("w", "main") };
	struct report_frame self = F("w", "leaf");
	struct report_sample s = { .comm = "w", .pid = 1, .tid = 1, .period = 1, .self = &self };
	char *out = NULL;

	for (int i = 0; i < 3; i++)
		add(r, "w", 1, 1, 0, 1, x, 2);
	ck_assert_int_eq(report__add_sample(r, &s), 0);
	/* without a Self frame, no frames are an error */
	s.self = NULL;
	ck_assert_int_eq(report__add_sample(r, &s), -EINVAL);
	struct found f = find(r, "leaf");
	ck_assert_uint_eq(f.e.self, 4);
	ck_assert_uint_eq(f.e.children, 4);
	ck_assert_uint_eq(find(r, "main").e.children, 3);
	CAPTURE(out, report__fprintf(r, FP, "cpu-clock"));
	/* leaf's graph carries 3 of its 4 samples: a percentage, no "---" */
	ck_assert_ptr_nonnull(strstr(out,
		"   100.00%   100.00%  w        w              [.] leaf\n"
		"            |          \n"
		"             --75.00%--main\n"
		"                       leaf\n"));
	free(out);
	CAPTURE(out, report__fprintf_folded(r, FP));
	ck_assert_str_eq(out, "w 1\nw;main;leaf 3\n");
	free(out);
	report__free(r);
}
END_TEST

START_TEST(test_graph_caller_children)
{
	/* main and leaf tie on Children and on chain depth: Self decides. */
	struct report *r = graph_report(REPORT_ORDER_DEFAULT, false, -1);
	char *out = NULL;
	CAPTURE(out, report__fprintf(r, FP, NULL));
	assert_text("caller graph", out,
		"# Samples: 1000 \n"
		"# Event count (approx.): 1000\n"
		"#\n"
		"# Children      Self  Command  Shared Object  Symbol  \n"
		"# ........  ........  .......  .............  ........\n"
		"#\n"
		"   100.00%   100.00%  w        w              [.] leaf\n"
		"            |\n"
		"            ---main\n"
		"               |          \n"
		"               |--60.00%--a\n"
		"               |          leaf\n"
		"               |          \n"
		"                --39.60%--b\n"
		"                          leaf\n"
		"\n"
		"   100.00%     0.00%  w        w              [.] main\n"
		"            |\n"
		"            ---main\n"
		"               |          \n"
		"               |--60.00%--a\n"
		"               |          leaf\n"
		"               |          \n"
		"                --39.60%--b\n"
		"                          leaf\n"
		"\n"
		"    60.00%     0.00%  w        w              [.] a\n"
		"            |\n"
		"            ---a\n"
		"               leaf\n"
		"\n"
		"    39.60%     0.00%  w        w              [.] b\n"
		"            |\n"
		"            ---b\n"
		"               leaf\n"
		"\n"
		"     0.40%     0.00%  w        w              [.] c\n"
		"\n\n");
	free(out);
	report__free(r);
}
END_TEST

/* The table's head and only row of graph_report(..., true, -1) without an event name. */
#define LEAF_ROW \
	"# Samples: 1000 \n"                                        \
	"# Event count (approx.): 1000\n"                           \
	"#\n"                                                       \
	"# Overhead  Command  Shared Object  Symbol  \n"            \
	"# ........  .......  .............  ........\n"            \
	"#\n"                                                       \
	"   100.00%  w        w              [.] leaf\n"

/* graph_report(callee default, no children, default threshold) printed in mode: LEAF_ROW, then
 * want. */
static void assert_mode_text(enum report_graph mode, const char *what, const char *want)
{
	struct report *r = graph_report_as(mode, REPORT_ORDER_DEFAULT, true, -1);
	char *out = NULL, *full = NULL;

	ck_assert_int_ge(asprintf(&full, "%s%s", LEAF_ROW, want), 0);
	CAPTURE(out, report__fprintf(r, FP, NULL));
	assert_text(what, out, full);
	free(out);
	free(full);
	report__free(r);
}

/* perf's flat and folded modes: each chain from the root, the most samples ending there first,
 * flat with what passes through its end, folded with what ends there; the 0.4% chain is under
 * the threshold. */
START_TEST(test_graph_flat_folded)
{
	assert_mode_text(REPORT_GRAPH_FOLDED, "folded",
		"60.00% leaf;a;main\n"
		"39.60% leaf;b;main\n"
		"\n\n");
	assert_mode_text(REPORT_GRAPH_FLAT, "flat",
		"           60.00%\n"
		"                leaf\n"
		"                a\n"
		"                main\n"
		"\n"
		"           39.60%\n"
		"                leaf\n"
		"                b\n"
		"                main\n"
		"\n"
		"\n\n");
}
END_TEST

/* perf's fractal mode: each branch's share of its parent's children, the threshold per node
 * (ceil(1000 * 0.5%) = 5 hides c's 4), and the hidden ones as one "[...]" line. */
START_TEST(test_graph_fractal)
{
	assert_mode_text(REPORT_GRAPH_FRACTAL, "fractal",
		"            |\n"
		"            ---leaf\n"
		"               |          \n"
		"               |--60.00%--a\n"
		"               |          main\n"
		"               |          \n"
		"               |--39.60%--b\n"
		"               |          main\n"
		"                --0.40%--[...]\n"
		"\n"
		"\n\n");
}
END_TEST

START_TEST(test_graph_callee_children_order)
{
	/* In callee order the caller still goes above the callee at equal children, by the
	 * shorter longest chain. */
	struct report *r = graph_report(REPORT_ORDER_CALLEE, false, -1);
	struct found m = find(r, "main"), l = find(r, "leaf");
	ck_assert_int_eq(m.pos, 0);
	ck_assert_int_eq(l.pos, 1);
	report__free(r);
}
END_TEST

/* ---- against perf 6.1 -------------------------------------------------------------------- */

START_TEST(test_perf_g_default)
{
	check_golden("report-g.script", "report-g.default.txt", NULL, NULL, false, NULL);
}
END_TEST

START_TEST(test_perf_g_variants)
{
	check_golden("report-g.script", "report-g.nochildren.txt", NULL, NULL, true, NULL);
	check_golden("report-g.script", "report-g.none.txt", NULL, "none", false, NULL);
	check_golden("report-g.script", "report-g.callee0.txt", NULL, "callee,0", false, NULL);
	check_golden("report-g.script", "report-g.caller0-nochildren.txt", NULL, "caller,0", true,
		     NULL);
	check_golden("report-g.script", "report-g.sym-nochildren.txt", "sym", NULL, true, NULL);
	check_golden("report-g.script", "report-g.dso-sym.txt", "dso,sym", NULL, false, NULL);
}
END_TEST

START_TEST(test_perf_a_system_wide)
{
	check_golden("report-a.script", "report-a.none-nochildren.txt", NULL, "none", true, NULL);
	check_golden("report-a.script", "report-a.pid-none.txt", "pid", "none", false, NULL);
	check_golden("report-a.script", "report-a.cpu-comm.txt", "cpu,comm", "none", false, NULL);
	check_golden("report-a.script", "report-a.comm-filter.txt", NULL, "none", false, "w");
}
END_TEST

/* ---- folded ------------------------------------------------------------------------------ */

START_TEST(test_folded_exact)
{
	struct report *r = report__new(NULL);
	struct report_frame a[] = { F("libstdc++.so.6", "std::vector<int>::push_back(int const&)"),
				    F("w", "main") };
	struct report_frame b[] = { { .dso = "/usr/lib/libfoo.so", .ip = 0x42, .map_ip = 0x42, .map_off = 0x42 },
				    F("w", "(anonymous namespace)::run(int)"), F("w", "main") };
	struct report_frame c[] = { { .ip = 0 }, F("w", "odd;name"), F("w", "main") };
	add(r, "my prog", 1, 1, 0, 5, a, 2);
	add(r, "my prog", 1, 2, 0, 5, a, 2);
	add(r, "my prog", 1, 1, 0, 5, b, 3);
	add(r, "w", 2, 2, 0, 5, c, 3);
	/* two frames that read the same (ld.so's _start and the program's): one line, as
	 * stackcollapse-perf.pl folds them */
	struct report_frame d[] = { F("ld-linux-x86-64.so.2", "_start") }, e[] = { F("w", "_start") };
	add(r, "w", 2, 2, 0, 5, d, 1);
	add(r, "w", 2, 2, 0, 5, e, 1);
	char *out = NULL;
	CAPTURE(out, report__fprintf_folded(r, FP));
	ck_assert_str_eq(out,
		"my_prog;main;(anonymous namespace)::run;[libfoo.so] 1\n"
		"my_prog;main;std::vector<int>::push_back 2\n"
		"w;_start 2\n"
		"w;main;odd:name;[unknown] 1\n");
	free(out);
	report__free(r);
}
END_TEST

/* ---- stats ------------------------------------------------------------------------------- */

START_TEST(test_stats_like_perf)
{
	struct report_event_stats ev = { .name = "cpu-clock", .nr_samples = 418 };
	struct report_stats st = { .events = &ev, .nr_events_stats = 1 };
	st.nr_events[1] = 1;   /* MMAP */
	st.nr_events[3] = 2;   /* COMM */
	st.nr_events[4] = 1;   /* EXIT */
	st.nr_events[9] = 418; /* SAMPLE */
	st.nr_events[10] = 4;  /* MMAP2 */
	st.nr_events[68] = 1;  /* FINISHED_ROUND */
	st.nr_events[69] = 1;
	st.nr_events[73] = 1;
	st.nr_events[74] = 1;
	st.nr_events[78] = 2;
	st.nr_events[82] = 1;
	char *out = NULL;
	CAPTURE(out, report__fprintf_stats(FP, &st));
	/* `perf report --stats` on the recording the goldens come from. */
	ck_assert_str_eq(out,
		"\nAggregated stats:\n"
		"           TOTAL events:        433\n"
		"            MMAP events:          1  ( 0.2%)\n"
		"            COMM events:          2  ( 0.5%)\n"
		"            EXIT events:          1  ( 0.2%)\n"
		"          SAMPLE events:        418  (96.5%)\n"
		"           MMAP2 events:          4  ( 0.9%)\n"
		"  FINISHED_ROUND events:          1  ( 0.2%)\n"
		"        ID_INDEX events:          1  ( 0.2%)\n"
		"      THREAD_MAP events:          1  ( 0.2%)\n"
		"         CPU_MAP events:          1  ( 0.2%)\n"
		"    EVENT_UPDATE events:          2  ( 0.5%)\n"
		"   FINISHED_INIT events:          1  ( 0.2%)\n"
		"cpu-clock stats:\n"
		"          SAMPLE events:        418\n");
	free(out);
	CAPTURE(out, report__fprintf_warnings(FP, &st));
	ck_assert_str_eq(out, "");
	free(out);

	/* Losses, as perf words them, and precord's pause block. */
	st.nr_events[2] = 25;
	st.total_lost_samples = 1651320;
	st.nr_events[9] = 855339;
	ev.nr_lost_samples = 1651320;
	st.pause = (struct report_pause_stats){ .present = true, .nr_pauses = 3,
						.paused_ns = 3000000, .longest_pause_ns = 1000000,
						.recording_ns = 3000000000ULL };
	CAPTURE(out, report__fprintf_warnings(FP, &st));
	ck_assert_str_eq(out,
		"Warning:\nProcessed 855379 events and lost 25 chunks!\n\nCheck IO/CPU overload!\n\n"
		"Warning:\nProcessed 2506659 samples and lost 65.88%!\n\n");
	free(out);
	CAPTURE(out, report__fprintf_stats(FP, &st));
	ck_assert_ptr_nonnull(strstr(out, "            LOST events:         25"));
	ck_assert_ptr_nonnull(strstr(out, "    LOST_SAMPLES events:    1651320\n"));
	ck_assert_ptr_nonnull(strstr(out, "precord pause stats:\n"
					  "          pauses:          3\n"
					  "       paused ms:          3.000  ( 0.1% of 3.000 s)\n"
					  "      longest ms:          1.000\n"));
	free(out);
	CAPTURE(out, report__fprintf_preamble(NULL, FP, 7));
	ck_assert_str_eq(out, "#\n# Total Lost Samples: 7\n#\n");
	free(out);
	const char *one[] = { "w" };
	struct report_opts o = { .comms = one, .nr_comms = 1 };
	struct report *r = report__new(&o);
	CAPTURE(out, report__fprintf_preamble(r, FP, 0));
	ck_assert_str_eq(out, "# comm: w\n#\n# Total Lost Samples: 0\n#\n");
	free(out);
	report__free(r);
}
END_TEST

Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");
	/* 300k samples in test_memory_stays_small: seconds on a loaded machine */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_children_recursion_once);
	tcase_add_test(tc, test_no_children);
	tcase_add_test(tc, test_sort_keys);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_hierarchy);
	tcase_add_test(tc, test_parent);
	tcase_add_test(tc, test_srcfile);
	tcase_add_test(tc, test_needs_callers);
	tcase_add_test(tc, test_parse_options);
	tcase_add_test(tc, test_filters);
	tcase_add_test(tc, test_percent_and_header);
	tcase_add_test(tc, test_wide_symbol_column);
	tcase_add_test(tc, test_unresolved_addresses);
	tcase_add_test(tc, test_memory_stays_small);
	tcase_add_test(tc, test_inlined_frames);
	tcase_add_test(tc, test_sort_srcline);
	suite_add_tcase(s, tc);

	tc = tcase_create("graph");
	tcase_add_test(tc, test_graph_callee);
	tcase_add_test(tc, test_graph_empty_chain);
	tcase_add_test(tc, test_graph_caller_children);
	tcase_add_test(tc, test_graph_callee_children_order);
	tcase_add_test(tc, test_graph_flat_folded);
	tcase_add_test(tc, test_graph_fractal);
	suite_add_tcase(s, tc);

	tc = tcase_create("perf");
	tcase_add_test(tc, test_perf_g_default);
	tcase_add_test(tc, test_perf_g_variants);
	tcase_add_test(tc, test_perf_a_system_wide);
	suite_add_tcase(s, tc);

	tc = tcase_create("folded");
	tcase_add_test(tc, test_folded_exact);
	suite_add_tcase(s, tc);

	tc = tcase_create("stats");
	tcase_add_test(tc, test_stats_like_perf);
	suite_add_tcase(s, tc);
	return s;
}
