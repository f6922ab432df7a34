/* addr2line's answers from libdw. Each compilation unit is scanned once into a table of its
 * functions (DW_TAG_subprogram, DW_TAG_inlined_subroutine) with their address ranges, names and,
 * for inlined calls, the enclosing function and the call site, as binutils' dwarf2.c builds it.
 * A lookup takes the innermost function holding the address (the smallest range; the later DIE
 * on a tie), the line table's file:line for it, then one record per enclosing inlined call. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "unwind/demangle.h"
#include "unwind/inlines.h"
#include "unwind/symbols.h"

struct dfunc {
	const char *name;	/* raw (mangled or DW_AT_name); may be replaced, as binutils does */
	const char *call_file;	/* inlined: where the call is */
	uint32_t call_line;
	int32_t caller;		/* inlined: the enclosing function's index, else -1 */
	uint64_t low;		/* its first range's start (binutils' arange.low) */
	bool is_linkage;	/* name is final: a linkage name, or a C DW_AT_name */
};

struct drange {
	uint64_t lo, hi;
	uint32_t func;
};

struct dcu {
	uint64_t off;	/* CU DIE offset */
	Dwarf_Die die;
	struct dfunc *funcs;
	size_t nr_funcs, cap_funcs;
	struct drange *ranges;	/* sorted by lo */
	uint64_t *max_hi;	/* max hi over ranges[0..i] */
	size_t nr_ranges, cap_ranges;
	/* DWARF 5 rows that binutils names after file 0 (see initial_rows()) */
	Dwarf_Lines *lines;
	size_t nr_lines;
	uint8_t *initial;
	const char *file0;
	const char *comp_dir;	/* DW_AT_comp_dir; NULL: none */
};

/* An answer: frames[first .. first + n). */
struct answer {
	uint64_t key;	/* addr + 1; 0: empty slot */
	uint32_t first, n;
};

/* Demangled names, by the raw string's address. */
struct dname {
	const char *raw;
	char *shown;	/* NULL: not C++, the raw name is shown */
};

struct dwarf_inlines {
	int fd;
	Dwarf *dw;
	struct dcu **cus;	/* open hash by CU offset */
	size_t cap_cus, nr_cus;
	struct answer *answers;	/* open hash by address */
	size_t cap_answers, nr_answers;
	struct inline_frame *frames;
	size_t nr_frames, cap_frames;
	struct dname *names;	/* open hash by raw pointer */
	size_t cap_names, nr_names;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static int grow(void *arr, size_t *cap, size_t need, size_t sz)
{
	size_t nc;
	void *p;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 16;
	while (nc < need)
		nc *= 2;
	p = realloc(*(void **)arr, nc * sz);
	if (!p)
		return -ENOMEM;
	*(void **)arr = p;
	*cap = nc;
	return 0;
}

struct dwarf_inlines *dwarf_inlines__open(const char *path)
{
	struct dwarf_inlines *d = calloc(1, sizeof(*d));
	int err;

	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	/* a path from a profiled process: a FIFO or device there must not make us wait */
	d->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (d->fd < 0) {
		err = errno;
		free(d);
		errno = err;
		return NULL;
	}
	{
		struct stat st;

		if (fstat(d->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(d->fd);
			free(d);
			errno = ENOEXEC;
			return NULL;
		}
	}
	d->dw = dwarf_begin(d->fd, DWARF_C_READ);
	if (!d->dw) {
		close(d->fd);
		free(d);
		errno = ENODATA;
		return NULL;
	}
	return d;
}

void dwarf_inlines__free(struct dwarf_inlines *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->cap_cus; i++) {
		struct dcu *cu = d->cus[i];

		if (!cu)
			continue;
		free(cu->funcs);
		free(cu->ranges);
		free(cu->max_hi);
		free(cu->initial);
		free(cu);
	}
	for (size_t i = 0; i < d->cap_names; i++)
		free(d->names[i].shown);
	free(d->cus);
	free(d->answers);
	free(d->frames);
	free(d->names);
	dwarf_end(d->dw);
	close(d->fd);
	free(d);
}

/* binutils' mangle_style(): languages whose DW_AT_name is not the symbol name. */
static bool lang_mangles(int lang)
{
	switch (lang) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
	case DW_LANG_Ada83:
	case DW_LANG_Ada95:
	case DW_LANG_Java:
	case DW_LANG_D:
	case DW_LANG_Rust:
		return true;
	default:
		return false;
	}
}

/* The linkage name anywhere along abstract_origin / specification, else DW_AT_name. */
static const char *die_name(Dwarf_Die *die, bool mangles, bool *ret_linkage)
{
	Dwarf_Attribute a;
	const char *n;

	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) &&
	    (n = dwarf_formstring(&a))) {
		*ret_linkage = true;
		return n;
	}
	*ret_linkage = !mangles;
	if (dwarf_attr_integrate(die, DW_AT_name, &a) && (n = dwarf_formstring(&a)))
		return n;
	*ret_linkage = false;
	return NULL;
}

struct scan {
	struct dcu *cu;
	Dwarf_Files *files;
	size_t nr_files;
	bool mangles;
	int err;
};

static void scan_children(struct scan *sc, Dwarf_Die *parent, int32_t enclosing, int depth)
{
	Dwarf_Die child;

	if (depth > 256 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		int32_t inner = enclosing;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_entry_point) {
			struct dcu *cu = sc->cu;
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			uint32_t idx = (uint32_t)cu->nr_funcs;
			size_t nr = 0;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (lo >= hi)
					continue;
				if (grow(&cu->ranges, &cu->cap_ranges, cu->nr_ranges + 1,
					 sizeof(*cu->ranges)) < 0) {
					sc->err = -ENOMEM;
					return;
				}
				cu->ranges[cu->nr_ranges++] = (struct drange){ lo, hi, idx };
				if (!nr++) {
					if (grow(&cu->funcs, &cu->cap_funcs, cu->nr_funcs + 1,
						 sizeof(*cu->funcs)) < 0) {
						sc->err = -ENOMEM;
						return;
					}
					cu->funcs[idx] = (struct dfunc){ .low = lo, .caller = -1 };
				}
			}
			if (nr) {
				struct dfunc *fn = &cu->funcs[idx];
				Dwarf_Attribute a;
				Dwarf_Word w;

				cu->nr_funcs++;
				fn->name = die_name(&child, sc->mangles, &fn->is_linkage);
				if (tag == DW_TAG_inlined_subroutine) {
					fn->caller = enclosing;
					if (dwarf_attr(&child, DW_AT_call_file, &a) &&
					    !dwarf_formudata(&a, &w) && sc->files && w < sc->nr_files)
						fn->call_file = dwarf_filesrc(sc->files, w, NULL, NULL);
					if (dwarf_attr(&child, DW_AT_call_line, &a) &&
					    !dwarf_formudata(&a, &w))
						fn->call_line = (uint32_t)w;
				}
				inner = (int32_t)idx;
			}
		}
		scan_children(sc, &child, inner, depth + 1);
		if (sc->err)
			return;
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int range_cmp(const void *pa, const void *pb)
{
	const struct drange *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return (a->func > b->func) - (a->func < b->func);
}

/* binutils reads a DWARF 5 line program's initial file register (1) the DWARF 4 way, as the
 * table's first entry: the rows of a sequence before its first DW_LNS_set_file (gas emits none
 * while the file stays 1) are named after file 0, the CU's primary source. Marks those rows. */
static void initial_rows(struct dcu *cu, Dwarf_Die *cudie)
{
	Dwarf_Half version = 0;
	Dwarf_Files *files;
	bool run = true;

	if (dwarf_cu_info(cudie->cu, &version, NULL, NULL, NULL, NULL, NULL, NULL) != 0 ||
	    version < 5 || dwarf_getsrclines(cudie, &cu->lines, &cu->nr_lines) != 0 ||
	    !cu->nr_lines)
		return;
	cu->initial = calloc(cu->nr_lines, 1);
	if (!cu->initial)
		return;	/* only the file names of a few rows differ from addr2line's */
	for (size_t i = 0; i < cu->nr_lines; i++) {
		Dwarf_Line *ln = dwarf_onesrcline(cu->lines, i);
		size_t idx;
		bool end = false;

		if (!ln || dwarf_line_file(ln, &files, &idx) != 0)
			continue;
		if (run && idx == 1) {
			cu->initial[i] = 1;
			if (!cu->file0)
				cu->file0 = dwarf_filesrc(files, 0, NULL, NULL);
		} else {
			run = false;
		}
		if (dwarf_lineendsequence(ln, &end) == 0 && end)
			run = true;
	}
}

/* binutils' file name for row ln. */
static const char *row_file(const struct dcu *cu, Dwarf_Line *ln)
{
	Dwarf_Addr a, x;

	if (cu->initial && cu->file0 && dwarf_lineaddr(ln, &a) == 0) {
		/* ln's index: rows are sorted by address */
		size_t lo = 0, hi = cu->nr_lines;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (dwarf_lineaddr(dwarf_onesrcline(cu->lines, mid), &x) == 0 && x < a)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo; i < cu->nr_lines; i++) {
			Dwarf_Line *l = dwarf_onesrcline(cu->lines, i);

			if (dwarf_lineaddr(l, &x) != 0 || x != a)
				break;
			if (l == ln)
				return cu->initial[i] ? cu->file0 : dwarf_linesrc(ln, NULL, NULL);
		}
	}
	return dwarf_linesrc(ln, NULL, NULL);
}

static struct dcu *scan_cu(Dwarf_Die *cudie)
{
	struct dcu *cu = calloc(1, sizeof(*cu));
	struct scan sc = { .cu = cu };

	if (!cu)
		return NULL;
	cu->die = *cudie;
	cu->off = dwarf_dieoffset(cudie);
	{
		Dwarf_Attribute a;

		cu->comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	}
	sc.mangles = lang_mangles(dwarf_srclang(cudie));
	if (dwarf_getsrcfiles(cudie, &sc.files, &sc.nr_files) != 0)
		sc.files = NULL;
	scan_children(&sc, cudie, -1, 0);
	initial_rows(cu, cudie);
	if (!sc.err && cu->nr_ranges) {
		qsort(cu->ranges, cu->nr_ranges, sizeof(*cu->ranges), range_cmp);
		cu->max_hi = malloc(cu->nr_ranges * sizeof(*cu->max_hi));
		if (!cu->max_hi)
			sc.err = -ENOMEM;
		for (size_t i = 0; !sc.err && i < cu->nr_ranges; i++)
			cu->max_hi[i] = i && cu->max_hi[i - 1] > cu->ranges[i].hi ? cu->max_hi[i - 1]
										  : cu->ranges[i].hi;
	}
	if (sc.err) {
		free(cu->funcs);
		free(cu->ranges);
		free(cu->max_hi);
		free(cu->initial);
		free(cu);
		errno = ENOMEM;
		return NULL;
	}
	return cu;
}

/* The scanned unit for cudie, scanning it on first use. */
static struct dcu *get_cu(struct dwarf_inlines *d, Dwarf_Die *cudie)
{
	uint64_t off = dwarf_dieoffset(cudie);
	size_t i;

	if (d->nr_cus * 2 >= d->cap_cus) {
		size_t nc = d->cap_cus ? d->cap_cus * 2 : 64;
		struct dcu **n = calloc(nc, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t k = 0; k < d->cap_cus; k++) {
			struct dcu *c = d->cus[k];

			if (!c)
				continue;
			for (i = mix(c->off) & (nc - 1); n[i]; i = (i + 1) & (nc - 1))
				;
			n[i] = c;
		}
		free(d->cus);
		d->cus = n;
		d->cap_cus = nc;
	}
	for (i = mix(off) & (d->cap_cus - 1); d->cus[i]; i = (i + 1) & (d->cap_cus - 1))
		if (d->cus[i]->off == off)
			return d->cus[i];
	d->cus[i] = scan_cu(cudie);
	if (d->cus[i])
		d->nr_cus++;
	return d->cus[i];
}

/* binutils' lookup_address_in_function_table(): the smallest range holding addr. */
static int32_t innermost(const struct dcu *cu, uint64_t addr)
{
	size_t lo = 0, hi = cu->nr_ranges;
	int32_t best = -1;
	uint64_t best_len = 0;

	/* ranges[lo..hi): the first with ranges[i].lo > addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cu->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && cu->max_hi[i] > addr;) {
		const struct drange *r = &cu->ranges[i];
		uint64_t len = r->hi - r->lo;

		if (addr >= r->hi)
			continue;
		if (best < 0 || len < best_len || (len == best_len && (int32_t)r->func > best)) {
			best = (int32_t)r->func;
			best_len = len;
		}
	}
	return best;
}

/* perf demangles each name addr2line gives (demangle_sym(), no parameters). */
static const char *shown_name(struct dwarf_inlines *d, const char *raw)
{
	size_t i;

	if (!raw)
		return "??";
	if (d->nr_names * 2 >= d->cap_names) {
		size_t nc = d->cap_names ? d->cap_names * 2 : 256;
		struct dname *n = calloc(nc, sizeof(*n));

		if (!n)
			return raw;
		for (size_t k = 0; k < d->cap_names; k++) {
			if (!d->names[k].raw)
				continue;
			for (i = mix((uintptr_t)d->names[k].raw) & (nc - 1); n[i].raw;
			     i = (i + 1) & (nc - 1))
				;
			n[i] = d->names[k];
		}
		free(d->names);
		d->names = n;
		d->cap_names = nc;
	}
	for (i = mix((uintptr_t)raw) & (d->cap_names - 1); d->names[i].raw;
	     i = (i + 1) & (d->cap_names - 1))
		if (d->names[i].raw == raw)
			return d->names[i].shown ? d->names[i].shown : raw;
	d->names[i].raw = raw;
	d->names[i].shown = demangle__symbol(raw);
	d->nr_names++;
	return d->names[i].shown ? d->names[i].shown : raw;
}

static int add_frame(struct dwarf_inlines *d, const struct dcu *cu, const char *raw,
		     const char *file, uint32_t line, const struct symbol *sym)
{
	const char *name = shown_name(d, raw);

	if (grow(&d->frames, &d->cap_frames, d->nr_frames + 1, sizeof(*d->frames)) < 0)
		return -ENOMEM;
	d->frames[d->nr_frames++] = (struct inline_frame){
		.name = name,
		.raw = raw ? raw : name,
		.file = file,
		.dir = file && file[0] != '/' ? cu->comp_dir : NULL,
		.line = line,
		.inlined = !sym || strcmp(name, symbol__name(sym)) != 0,
	};
	return 0;
}

/* Compute the answer for addr into frames[first..]; returns how many. */
static int answer(struct dwarf_inlines *d, uint64_t addr, const struct symbol *sym)
{
	Dwarf_Die cudie;
	Dwarf_Line *ln;
	struct dcu *cu;
	const char *file = NULL, *raw;
	int line = 0, n = 0;
	int32_t fi;

	if (!dwarf_addrdie(d->dw, addr, &cudie))
		return 0;
	cu = get_cu(d, &cudie);
	if (!cu)
		return -ENOMEM;
	ln = dwarf_getsrc_die(&cu->die, addr);
	if (ln) {
		file = row_file(cu, ln);
		if (dwarf_lineno(ln, &line) != 0)
			line = 0;
	}
	fi = cu->nr_ranges ? innermost(cu, addr) : -1;
	if (fi < 0) {
		/* No function: addr2line names the ELF symbol. */
		if (!file || !sym)
			return 0;
		return add_frame(d, cu, sym->name, file, (uint32_t)line, sym) < 0 ? -ENOMEM : 1;
	}
	{
		struct dfunc *fn = &cu->funcs[fi];

		if (fn->is_linkage || !sym) {
			raw = fn->name;
		} else {
			/* binutils names a function without a linkage name after the ELF symbol
			 * holding addr, and keeps that name when the symbol starts where the
			 * function does; either way it does not look again. */
			raw = sym->name;
			if (sym->start == fn->low)
				fn->name = sym->name;
			fn->is_linkage = true;
		}
	}
	if (add_frame(d, cu, raw, file, (uint32_t)line, sym) < 0)
		return -ENOMEM;
	n = 1;
	for (int32_t cur = fi; cu->funcs[cur].caller >= 0 && n < 1024; n++) {
		const struct dfunc *fn = &cu->funcs[cur];

		if (add_frame(d, cu, cu->funcs[fn->caller].name, fn->call_file, fn->call_line, sym) < 0)
			return -ENOMEM;
		cur = fn->caller;
	}
	return n;
}

int dwarf_inlines__lookup(struct dwarf_inlines *d, uint64_t addr, const struct symbol *sym,
			  const struct inline_frame **ret)
{
	uint64_t key = addr + 1;
	size_t i;
	int n;

	if (d->nr_answers * 2 >= d->cap_answers) {
		size_t nc = d->cap_answers ? d->cap_answers * 2 : 1024;
		struct answer *a = calloc(nc, sizeof(*a));

		if (!a)
			return -ENOMEM;
		for (size_t k = 0; k < d->cap_answers; k++) {
			if (!d->answers[k].key)
				continue;
			for (i = mix(d->answers[k].key) & (nc - 1); a[i].key; i = (i + 1) & (nc - 1))
				;
			a[i] = d->answers[k];
		}
		free(d->answers);
		d->answers = a;
		d->cap_answers = nc;
	}
	for (i = mix(key) & (d->cap_answers - 1); d->answers[i].key;
	     i = (i + 1) & (d->cap_answers - 1)) {
		if (d->answers[i].key == key) {
			*ret = d->frames ? d->frames + d->answers[i].first : NULL;
			return (int)d->answers[i].n;
		}
	}
	{
		size_t first = d->nr_frames;

		n = answer(d, addr, sym);
		if (n < 0) {
			d->nr_frames = first;
			return n;
		}
		d->answers[i] = (struct answer){ .key = key, .first = (uint32_t)first,
						 .n = (uint32_t)n };
		d->nr_answers++;
		*ret = d->frames ? d->frames + first : NULL;	/* none yet: no NULL + 0 */
	}
	return n;
}
