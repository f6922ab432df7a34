/* Sorted function-symbol tables built from ELF symbol tables or kallsyms. Building follows perf
 * (tools/perf/util/symbol.c) so that names agree with perf report: functions only; symbols
 * sharing an address are reduced to one chosen by perf's preferences (sized over unsized, strong
 * over weak, global over local, fewer leading underscores, longer name), where an unsized symbol
 * counts as sized unless the next one shares its address (perf extends it first); unsized
 * symbols extend to the next one. Names live in one arena owned by the table. */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "unwind/demangle.h"
#include "unwind/symbols.h"

struct symtab {
	size_t nr;
	struct symbol *syms;
	char *arena;
};

/* Collected before sorting: names as offsets because the arena moves while it grows. */
struct raw_sym {
	uint64_t start, size;
	size_t name_off;
	uint8_t binding;
	bool sized;	/* non-empty once perf's symbols__fixup_end has run (builder_finish) */
};

struct builder {
	struct raw_sym *raw;
	size_t nr, cap;
	char *arena;
	size_t arena_len, arena_cap;
};

static int builder_add(struct builder *b, uint64_t start, uint64_t size, const char *name,
		       size_t name_len, uint8_t binding)
{
	if (b->nr == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct raw_sym *n = realloc(b->raw, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->raw = n;
		b->cap = cap;
	}
	if (b->arena_len + name_len + 1 > b->arena_cap) {
		size_t cap = b->arena_cap ? b->arena_cap : 4096;
		char *n;

		while (cap < b->arena_len + name_len + 1)
			cap *= 2;
		n = realloc(b->arena, cap);
		if (!n)
			return -ENOMEM;
		b->arena = n;
		b->arena_cap = cap;
	}
	memcpy(b->arena + b->arena_len, name, name_len);
	b->arena[b->arena_len + name_len] = '\0';
	b->raw[b->nr++] = (struct raw_sym){ start, size, b->arena_len, binding, false };
	b->arena_len += name_len + 1;
	return 0;
}

static void builder_release(struct builder *b)
{
	free(b->raw);
	free(b->arena);
}

static int raw_cmp(const void *pa, const void *pb)
{
	const struct raw_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* Same address: keep the input order so the choice below is deterministic. */
	return a->name_off < b->name_off ? -1 : a->name_off > b->name_off;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol(): true when a is to be kept over b (same start). */
static bool prefer_a(const struct raw_sym *a, const struct raw_sym *b, const char *arena)
{
	const char *na = arena + a->name_off, *nb = arena + b->name_off;
	size_t la, lb;

	if (a->sized && !b->sized)
		return true;
	if (!a->sized && b->sized)
		return false;
	if ((a->binding == STB_WEAK) != (b->binding == STB_WEAK))
		return b->binding == STB_WEAK;
	if ((a->binding == STB_GLOBAL) != (b->binding == STB_GLOBAL))
		return a->binding == STB_GLOBAL;
	la = leading_underscores(na);
	lb = leading_underscores(nb);
	if (la != lb)
		return la < lb;
	la = strlen(na);
	lb = strlen(nb);
	if (la != lb)
		return la > lb;
	/* Kernel syscall aliases: SyS_foo / compat_SyS_foo lose to sys_foo. */
	if (!strncmp(na, "SyS", 3) || !strncmp(na, "compat_SyS", 10))
		return false;
	return true;
}

/* Sort, drop aliases, fix ends, and turn the builder into a table. Consumes b. */
static struct symtab *builder_finish(struct builder *b)
{
	struct symtab *t;
	size_t i, n = 0;

	if (!b->nr) {
		builder_release(b);
		errno = ENOENT;
		return NULL;
	}
	/* kallsyms is in address order, most of it at least: sorted already, it is left as it is */
	for (i = 1; i < b->nr && raw_cmp(&b->raw[i - 1], &b->raw[i]) <= 0; i++)
		;
	if (i < b->nr)
		qsort(b->raw, b->nr, sizeof(*b->raw), raw_cmp);
	/* perf extends the unsized symbols to the next one before it drops aliases
	 * (symbols__fixup_end, then symbols__fixup_duplicate, for kallsyms and ELF alike): of
	 * unsized symbols sharing an address all but the last stay empty, so the last wins
	 * (kallsyms: __x86_indirect_thunk_rax over __pi___x86_indirect_thunk_rax before it,
	 * __pi_memcpy over memcpy) */
	for (i = 0; i < b->nr; i++)
		b->raw[i].sized = b->raw[i].size || i + 1 == b->nr ||
				  b->raw[i + 1].start != b->raw[i].start;
	for (i = 0; i < b->nr; i++) {
		if (n && b->raw[n - 1].start == b->raw[i].start) {
			if (!prefer_a(&b->raw[n - 1], &b->raw[i], b->arena))
				b->raw[n - 1] = b->raw[i];
			continue;
		}
		b->raw[n++] = b->raw[i];
	}
	t = calloc(1, sizeof(*t));
	if (t)
		t->syms = calloc(n, sizeof(*t->syms));
	if (!t || !t->syms) {
		free(t);
		builder_release(b);
		errno = ENOMEM;
		return NULL;
	}
	t->nr = n;
	/* the arena doubled as it grew: give back what it does not use (a MB for kallsyms) */
	t->arena = realloc(b->arena, b->arena_len);
	if (!t->arena)
		t->arena = b->arena;
	for (i = 0; i < n; i++) {
		struct symbol *s = &t->syms[i];

		s->start = b->raw[i].start;
		s->size = b->raw[i].size;
		s->name = t->arena + b->raw[i].name_off;
		s->binding = b->raw[i].binding;
		if (s->size)
			s->end = s->start + s->size;
		else if (i + 1 < n)
			s->end = b->raw[i + 1].start;
		else	/* perf: the last unsized symbol runs to the next page boundary + a page */
			s->end = ((s->start + 4095) & ~4095ULL) + 4096;
		atomic_init(&s->pretty, NULL);
	}
	free(b->raw);
	return t;
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	}
	return NULL;
}

/* Adds scn's function symbols to b and counts in *ret_objects its data objects, which perf
 * loads too (elf_sym__filter: functions and objects) and which count for its PLT rule below.
 * Returns 0 or -1 with errno (EIO, ENOMEM). */
static int from_section(Elf *elf, Elf_Scn *scn, struct builder *b, size_t *ret_objects)
{
	GElf_Shdr sh;
	Elf_Data *data;
	size_t i, nr;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(data = elf_getdata(scn, NULL))) {
		errno = EIO;
		return -1;
	}
	nr = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < nr; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF)
			continue;
		if (type == STT_NOTYPE) {
			/* perf also takes labels in executable sections (e.g. _start in ld.so,
			 * assembly entry points): unsized, they run to the next symbol. */
			GElf_Shdr tsh;
			Elf_Scn *tscn;

			if (sym.st_shndx >= SHN_LORESERVE ||
			    !(tscn = elf_getscn(elf, sym.st_shndx)) || !gelf_getshdr(tscn, &tsh) ||
			    !(tsh.sh_flags & SHF_EXECINSTR))
				continue;
		} else if (type == STT_OBJECT) {
			*ret_objects += sym.st_name != 0;
			continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
			continue;
		}
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (builder_add(b, sym.st_value, sym.st_size, name, strlen(name),
				GELF_ST_BIND(sym.st_info)) < 0) {
			errno = ENOMEM;
			return -1;
		}
	}
	return 0;
}

static Elf_Scn *section_named(Elf *elf, const char *want, GElf_Shdr *ret_sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, ret_sh))
			continue;
		name = elf_strptr(elf, shstrndx, ret_sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* perf 6.1's dso__synthesize_plt_symbols(): one sized symbol "NAME@plt" per .rela.plt (or
 * .rel.plt) relocation, in relocation order, over the .plt entries that follow its header
 * (header and entries are sh_entsize bytes on x86). .plt.got and .plt.sec get none (perf 6.1
 * names them after the symbol they fall in). Returns the number added or -ENOMEM. */
static int add_plt(struct builder *b, Elf *elf)
{
	GElf_Shdr rel_sh, plt_sh, dyn_sh;
	Elf_Scn *rel, *plt, *dyn;
	Elf_Data *rel_data, *dyn_data;
	uint64_t addr;
	size_t nr, added = 0;
	char name[1024];

	rel = section_named(elf, ".rela.plt", &rel_sh);
	if (!rel)
		rel = section_named(elf, ".rel.plt", &rel_sh);
	plt = section_named(elf, ".plt", &plt_sh);
	if (!rel || !plt || !rel_sh.sh_entsize || !plt_sh.sh_entsize ||
	    (rel_sh.sh_type != SHT_RELA && rel_sh.sh_type != SHT_REL))
		return 0;
	dyn = elf_getscn(elf, rel_sh.sh_link);
	if (!dyn || !gelf_getshdr(dyn, &dyn_sh) || dyn_sh.sh_type != SHT_DYNSYM)
		return 0;
	rel_data = elf_getdata(rel, NULL);
	dyn_data = elf_getdata(dyn, NULL);
	if (!rel_data || !dyn_data)
		return 0;
	nr = rel_sh.sh_size / rel_sh.sh_entsize;
	addr = plt_sh.sh_addr + plt_sh.sh_entsize;
	for (size_t i = 0; i < nr; i++, addr += plt_sh.sh_entsize) {
		GElf_Rela rela;
		GElf_Rel r;
		GElf_Sym sym;
		uint64_t info;
		const char *n = NULL;
		int len;

		if (rel_sh.sh_type == SHT_RELA) {
			if (!gelf_getrela(rel_data, (int)i, &rela))
				break;
			info = rela.r_info;
		} else {
			if (!gelf_getrel(rel_data, (int)i, &r))
				break;
			info = r.r_info;
		}
		if (gelf_getsym(dyn_data, (int)GELF_R_SYM(info), &sym))
			n = elf_strptr(elf, dyn_sh.sh_link, sym.st_name);
		len = snprintf(name, sizeof(name), "%s@plt", n ? n : "");
		if (len < 0 || (size_t)len >= sizeof(name))
			continue;
		if (builder_add(b, addr, plt_sh.sh_entsize, name, (size_t)len, STB_GLOBAL) < 0)
			return -ENOMEM;
		added++;
	}
	return (int)added;
}

struct symtab *symtab__from_elf(Elf *elf, enum symtab_source source)
{
	return symtab__from_elf_plt(elf, source, elf);
}

struct symtab *symtab__from_elf_plt(Elf *elf, enum symtab_source source, Elf *runtime)
{
	struct builder b = { 0 };
	Elf_Scn *scn = NULL;
	size_t objects = 0;

	if (!elf) {
		errno = EINVAL;
		return NULL;
	}
	if (source & SYMTAB_SYMTAB)
		scn = find_section(elf, SHT_SYMTAB);
	if (!scn && (source & SYMTAB_DYNSYM))
		scn = find_section(elf, SHT_DYNSYM);
	if (!scn) {
		errno = ENOENT;
		return NULL;
	}
	if (from_section(elf, scn, &b, &objects) < 0) {
		builder_release(&b);
		return NULL;
	}
	/* perf adds PLT entries only to a dso that has symbols of its own (dso__load: ret > 0),
	 * data objects included: /usr/bin/dash, without .symtab, has only environ and __environ
	 * defined in .dynsym, and perf names its PLT entries (free@plt) */
	if ((b.nr || objects) && runtime && add_plt(&b, runtime) < 0) {
		builder_release(&b);
		errno = ENOMEM;
		return NULL;
	}
	return builder_finish(&b);
}

/* One line of kallsyms, "ADDR TYPE NAME[\t[module]]" without its newline: a function symbol
 * added to b (0), another or a malformed line skipped (0), or -ENOMEM. */
static int kallsyms_line(struct builder *b, const char *p, const char *e)
{
	uint64_t addr = 0;
	const char *q = p, *name, *n;
	char type;

	for (; q < e; q++) {
		unsigned int c = (unsigned char)*q, v;

		if (c - '0' < 10)
			v = c - '0';
		else if ((c | 0x20) - 'a' < 6)
			v = (c | 0x20) - 'a' + 10;
		else
			break;
		if (addr >> 60)
			return 0; /* more than 64 bits */
		addr = addr << 4 | v;
	}
	if (q == p || e - q < 3 || q[0] != ' ' || q[2] != ' ')
		return 0;
	type = q[1];
	if (toupper((unsigned char)type) != 'T' && toupper((unsigned char)type) != 'W')
		return 0;
	if (!addr) /* kptr_restrict: every address reads as zero */
		return 0;
	name = q + 3;
	for (n = name; n < e && *n != ' ' && *n != '\t'; n++)
		;
	if (n == name)
		return 0;
	return builder_add(b, addr, 0, name, (size_t)(n - name),
			   type == 'W' || type == 'w' ? STB_WEAK :
			   isupper((unsigned char)type) ? STB_GLOBAL : STB_LOCAL);
}

/* Read in large pieces and parsed in place. With getline, strtoull and a sort (the file is in
 * address order) a 122k-line /proc/kallsyms took 62-70 ms to load, 25-29 ms from a copy in a
 * file; now 50-51 ms and 16-18 ms. The rest is the kernel's formatting, and the pages of the
 * table. Both threads of preport -j 2 wait for it at their first kernel frame. */
#define KALLSYMS_READ ((size_t)1 << 20)

struct symtab *symtab__from_kallsyms(const char *path)
{
	_cleanup_close_ int fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	struct builder b = { 0 };
	size_t cap = KALLSYMS_READ, have = 0;
	bool eof = false;

	if (fd < 0 || !(buf = malloc(cap)))
		return NULL;
	while (!eof) {
		ssize_t n = read(fd, buf + have, cap - have);
		char *p = buf, *end, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		/* an error ends the table where it is, as the end of the file does */
		eof = n <= 0;
		have += eof ? 0 : (size_t)n;
		end = buf + have;
		while ((nl = memchr(p, '\n', (size_t)(end - p))) || (eof && p < end)) {
			if (!nl)
				nl = end; /* the last line, without its newline */
			if (kallsyms_line(&b, p, nl) < 0)
				goto nomem;
			p = nl < end ? nl + 1 : end;
		}
		have = (size_t)(end - p);
		memmove(buf, p, have);
		if (have == cap) { /* a line longer than the buffer */
			char *g = realloc(buf, 2 * cap);

			if (!g)
				goto nomem;
			buf = g;
			cap *= 2;
		}
	}
	return builder_finish(&b);
nomem:
	builder_release(&b);
	errno = ENOMEM;
	return NULL;
}

const struct symbol *symtab__find(const struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!t || !t->nr)
		return NULL;
	hi = t->nr;
	/* Last symbol with start <= addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr < t->syms[lo].start || addr >= t->syms[lo].end)
		return NULL;
	return &t->syms[lo];
}

const struct symbol *symtab__find_name(const struct symtab *t, const char *name)
{
	for (size_t i = 0; t && i < t->nr; i++) {
		if (!strcmp(t->syms[i].name, name))
			return &t->syms[i];
	}
	return NULL;
}

size_t symtab__nr(const struct symtab *t)
{
	return t ? t->nr : 0;
}

const struct symbol *symtab__symbol(const struct symtab *t, size_t i)
{
	return t && i < t->nr ? &t->syms[i] : NULL;
}

void symtab__free(struct symtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr; i++) {
		const char *p = atomic_load_explicit(&t->syms[i].pretty, memory_order_relaxed);

		if (p && p != t->syms[i].name)
			free((char *)p);
	}
	free(t->syms);
	free(t->arena);
	free(t);
}

const char *symbol__name(const struct symbol *sym)
{
	struct symbol *s = (struct symbol *)sym;	/* only the atomic cache is written */
	const char *p = atomic_load_explicit(&s->pretty, memory_order_acquire);
	const char *expected = NULL;
	char *d;

	if (p)
		return p;
	d = demangle__symbol(s->name);
	/* Racing threads compute the same string; the loser frees its copy. The release pairs
	 * with the acquire above. */
	if (atomic_compare_exchange_strong_explicit(&s->pretty, &expected, d ? d : s->name,
						    memory_order_acq_rel, memory_order_acquire))
		return d ? d : s->name;
	free(d);
	return expected;
}

int kallsyms__running_build_id(uint8_t *buf, size_t size)
{
	_cleanup_close_ int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	uint8_t notes[4096];
	ssize_t n;
	size_t off = 0;

	if (fd < 0)
		return -errno;
	n = read(fd, notes, sizeof(notes));
	if (n < 0)
		return -errno;
	while (off + sizeof(Elf64_Nhdr) <= (size_t)n) {
		Elf64_Nhdr nh;
		size_t name_off, desc_off;

		memcpy(&nh, notes + off, sizeof(nh));
		name_off = off + sizeof(nh);
		desc_off = name_off + ((nh.n_namesz + 3) & ~3U);
		if (desc_off + nh.n_descsz > (size_t)n)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(notes + name_off, "GNU", 4)) {
			size_t len = nh.n_descsz < size ? nh.n_descsz : size;

			memcpy(buf, notes + desc_off, len);
			return len;
		}
		off = desc_off + ((nh.n_descsz + 3) & ~3U);
	}
	return -ENOENT;
}

bool kallsyms__matches_running(const char *osrelease, const uint8_t *build_id, size_t build_id_len)
{
	struct utsname u;

	if (build_id && build_id_len) {
		uint8_t running[64];
		int len = kallsyms__running_build_id(running, sizeof(running));

		if (len > 0)
			return (size_t)len >= build_id_len &&
			       !memcmp(running, build_id, build_id_len);
	}
	if (!osrelease || uname(&u) < 0)
		return false;
	return !strcmp(osrelease, u.release);
}
