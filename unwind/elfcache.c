/* The ELF file cache: one struct elf_file per (path, build id), mapped once, shared by every
 * mapping, process and worker that refers to it. The cache table is guarded by one mutex that
 * is only taken on lookup (callers keep the returned reference); a file's lazy symbol table has
 * its own lock so that loading a big table does not stall other files. */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/elfhdr.h"
#include "perf/buildid_cache.h"
#include "unwind/elfcache.h"
#include "unwind/inlines.h"
#include "unwind/symbols.h"

#define MAX_LOADS 16
#define BUILD_ID_MAX 64
#define PAGE_MASK_4K (~4095ULL)

struct load_seg {
	uint64_t vaddr, offset, filesz, memsz;
};

struct elf_file {
	atomic_int refs;
	void *owned_image;	/* elf_file__from_memory's copy */
	char *path;
	char *debug_dir;
	char *buildid_dir;	/* perf's build-id cache, from the elfcache (NULL: none) */
	int fd;
	Elf *elf;
	const uint8_t *image;
	size_t size;
	uint16_t e_type;
	uint8_t build_id[BUILD_ID_MAX];
	size_t build_id_len;
	struct load_seg load[MAX_LOADS];
	size_t nr_load;
	bool has_eh;
	struct eh_frame_hdr_info eh;

	pthread_mutex_t sym_lock;
	atomic_bool sym_loaded;	/* release after symtab is set; pairs with the acquire readers */
	struct symtab *symtab;
	char *symtab_path;

	pthread_mutex_t dwarf_lock;	/* the DWARF, opened on first use, and its answers */
	bool dwarf_tried;
	struct dwarf_inlines *dwarf;
};

struct cache_entry {
	struct cache_entry *next;
	char *path;
	uint8_t build_id[BUILD_ID_MAX];
	size_t build_id_len;
	struct elf_file *file;	/* NULL: err says why */
	int err;
};

struct elfcache {
	pthread_mutex_t lock;
	struct cache_entry **buckets;
	size_t nr_buckets, nr;
	char *debug_dir;
	char *buildid_dir;
	char *symfs;		/* NULL: none */
};

static pthread_once_t libelf_once = PTHREAD_ONCE_INIT;

static void libelf_init(void)
{
	elf_version(EV_CURRENT);
}

/* Build ids as perf stores them are padded to 20 bytes with zeros. */
static bool build_id_matches(const uint8_t *file_id, size_t file_len, const uint8_t *want,
			     size_t want_len)
{
	size_t i;

	if (file_len > want_len || memcmp(file_id, want, file_len))
		return false;
	for (i = file_len; i < want_len; i++) {
		if (want[i])
			return false;
	}
	return true;
}

static void read_build_id(struct elf_file *f)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(f->elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + name_off, "GNU", 4) &&
			    nh.n_descsz <= BUILD_ID_MAX) {
				memcpy(f->build_id, (char *)data->d_buf + desc_off, nh.n_descsz);
				f->build_id_len = nh.n_descsz;
				return;
			}
		}
	}
}

/* Decode one DW_EH_PE-encoded value at p (which sits at file vaddr `vaddr`, in a header at
 * `base`). Only the forms .eh_frame_hdr uses in practice. Returns bytes consumed or 0. */
static size_t read_encoded(const uint8_t *p, const uint8_t *end, uint8_t enc, uint64_t vaddr,
			   uint64_t base, uint64_t *ret)
{
	uint64_t v;
	size_t n;

	switch (enc & 0x0f) {
	case DW_EH_PE_udata4: {
		uint32_t u;
		n = 4;
		if (end - p < 4)
			return 0;
		memcpy(&u, p, 4);
		v = u;
		break;
	}
	case DW_EH_PE_sdata4: {
		int32_t s;
		n = 4;
		if (end - p < 4)
			return 0;
		memcpy(&s, p, 4);
		v = (uint64_t)(int64_t)s;
		break;
	}
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		n = 8;
		if (end - p < 8)
			return 0;
		memcpy(&v, p, 8);
		break;
	default:
		return 0;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += vaddr;
		break;
	case DW_EH_PE_datarel:
		v += base;
		break;
	default:
		return 0;
	}
	*ret = v;
	return n;
}

static void parse_eh_frame_hdr(struct elf_file *f, const GElf_Phdr *ph)
{
	const uint8_t *p, *end;
	uint64_t dummy, count;
	size_t n;

	if (ph->p_offset >= f->size || ph->p_filesz < 4 || ph->p_filesz > f->size - ph->p_offset)
		return;
	p = f->image + ph->p_offset;
	end = p + ph->p_filesz;
	/* version 1, then the encodings of eh_frame_ptr, fde_count and the table; libunwind's
	 * remote-table search needs the table as datarel sdata4 (0x3b). */
	if (p[0] != 1 || p[1] == DW_EH_PE_omit || p[2] == DW_EH_PE_omit || p[3] != 0x3b)
		return;
	n = 4;
	n += read_encoded(p + n, end, p[1], ph->p_vaddr + n, ph->p_vaddr, &dummy) ?: 1000000;
	if (n > ph->p_filesz)
		return;
	{
		size_t m = read_encoded(p + n, end, p[2], ph->p_vaddr + n, ph->p_vaddr, &count);

		if (!m)
			return;
		n += m;
	}
	if (count * 8 > ph->p_filesz - n)
		return;
	f->eh.hdr_vaddr = ph->p_vaddr;
	f->eh.table_vaddr = ph->p_vaddr + n;
	f->eh.fde_count = count;
	f->has_eh = count > 0;
}

static void read_segments(struct elf_file *f)
{
	size_t nr_ph, i;

	if (elf_getphdrnum(f->elf, &nr_ph) < 0)
		nr_ph = 0;
	for (i = 0; i < nr_ph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && f->nr_load < MAX_LOADS)
			f->load[f->nr_load++] = (struct load_seg){ ph.p_vaddr, ph.p_offset,
								   ph.p_filesz, ph.p_memsz };
		else if (ph.p_type == PT_GNU_EH_FRAME)
			parse_eh_frame_hdr(f, &ph);
	}
}

static void elf_file_free(struct elf_file *f)
{
	if (!f)
		return;
	symtab__free(f->symtab);
	free(f->symtab_path);
	dwarf_inlines__free(f->dwarf);
	pthread_mutex_destroy(&f->dwarf_lock);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->owned_image);
	pthread_mutex_destroy(&f->sym_lock);
	free(f->path);
	free(f->debug_dir);
	free(f->buildid_dir);
	free(f);
}

struct elf_file *elf_file__open(const char *path, const uint8_t *build_id, size_t build_id_len,
				const char *debug_dir)
{
	struct elf_file *f;
	struct stat st;
	struct elfhdr hdr;
	GElf_Ehdr eh;
	int err;

	pthread_once(&libelf_once, libelf_init);
	f = calloc(1, sizeof(*f));
	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	f->fd = -1;
	atomic_init(&f->refs, 1);
	atomic_init(&f->sym_loaded, false);
	pthread_mutex_init(&f->sym_lock, NULL);
	pthread_mutex_init(&f->dwarf_lock, NULL);
	f->path = strdup(path);
	f->debug_dir = strdup(debug_dir ? debug_dir : "/usr/lib/debug");
	if (!f->path || !f->debug_dir) {
		err = ENOMEM;
		goto fail;
	}
	/* a path from a profiled process: a FIFO or device there must not make us wait */
	f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (f->fd < 0) {
		err = errno;
		goto fail;
	}
	/* and its header sane before libelf sizes anything by it (lib/elfhdr.h) */
	if (fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    elfhdr__read(f->fd, (uint64_t)st.st_size, &hdr) < 0) {
		err = ENOEXEC;
		goto fail;
	}
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh)) {
		err = ENOEXEC;
		goto fail;
	}
	f->e_type = eh.e_type;
	f->image = (const uint8_t *)elf_rawfile(f->elf, &f->size);
	if (!f->image) {
		err = EIO;
		goto fail;
	}
	read_build_id(f);
	if (build_id && build_id_len &&
	    !build_id_matches(f->build_id, f->build_id_len, build_id, build_id_len)) {
		err = ESTALE;
		goto fail;
	}
	read_segments(f);
	return f;
fail:
	elf_file_free(f);
	errno = err;
	return NULL;
}

struct elf_file *elf_file__from_memory(const char *name, const void *image, size_t size)
{
	struct elf_file *f;
	GElf_Ehdr eh;
	int err = ENOMEM;

	pthread_once(&libelf_once, libelf_init);
	f = calloc(1, sizeof(*f));
	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	f->fd = -1;
	atomic_init(&f->refs, 1);
	atomic_init(&f->sym_loaded, false);
	pthread_mutex_init(&f->sym_lock, NULL);
	pthread_mutex_init(&f->dwarf_lock, NULL);
	f->path = strdup(name);
	f->debug_dir = strdup("");
	/* A private copy: libelf wants writable memory, and the source may go away. */
	f->owned_image = malloc(size);
	if (!f->path || !f->debug_dir || !f->owned_image)
		goto fail;
	memcpy(f->owned_image, image, size);
	err = ENOEXEC;
	f->elf = elf_memory(f->owned_image, size);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh))
		goto fail;
	f->e_type = eh.e_type;
	f->image = f->owned_image;
	f->size = size;
	read_build_id(f);
	read_segments(f);
	return f;
fail:
	elf_file_free(f);
	errno = err;
	return NULL;
}

struct elf_file *elf_file__get(struct elf_file *f)
{
	if (f)
		atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
	return f;
}

void elf_file__put(struct elf_file *f)
{
	/* acq_rel: the last put must see every other holder's writes before freeing. */
	if (f && atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) == 1)
		elf_file_free(f);
}

const char *elf_file__path(const struct elf_file *f)
{
	return f->path;
}

size_t elf_file__build_id(const struct elf_file *f, const uint8_t **ret_id)
{
	if (ret_id)
		*ret_id = f->build_id;
	return f->build_id_len;
}

const uint8_t *elf_file__image(const struct elf_file *f, size_t *ret_size)
{
	if (ret_size)
		*ret_size = f->size;
	return f->image;
}

int elf_file__bias(const struct elf_file *f, uint64_t start, uint64_t pgoff, uint64_t *ret_bias)
{
	const struct load_seg *hit = NULL;

	/* Adjacent segments can share a file page (the last page of one is the first of the
	 * next, mapped twice): a mapping that starts exactly at a segment's first page belongs
	 * to that segment; otherwise (a segment split by mprotect) the one whose range holds it. */
	for (size_t i = 0; i < f->nr_load; i++) {
		const struct load_seg *l = &f->load[i];
		uint64_t off_page = l->offset & PAGE_MASK_4K;

		if (pgoff == off_page) {
			hit = l;
			break;
		}
		if (!hit && pgoff > off_page && pgoff < l->offset + l->filesz)
			hit = l;
	}
	if (hit) {
		uint64_t off_page = hit->offset & PAGE_MASK_4K;

		*ret_bias = start - ((hit->vaddr & PAGE_MASK_4K) + (pgoff - off_page));
		return 0;
	}
	*ret_bias = f->e_type == ET_EXEC ? 0 : start - pgoff;
	return -ENOENT;
}

int elf_file__vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, uint64_t *ret_off,
			      uint64_t *ret_avail)
{
	for (size_t i = 0; i < f->nr_load; i++) {
		const struct load_seg *l = &f->load[i];

		if (vaddr >= l->vaddr && vaddr < l->vaddr + l->filesz) {
			*ret_off = vaddr - l->vaddr + l->offset;
			*ret_avail = l->vaddr + l->filesz - vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int elf_file__eh_frame_hdr(const struct elf_file *f, struct eh_frame_hdr_info *ret)
{
	if (!f->has_eh)
		return -ENOENT;
	*ret = f->eh;
	return 0;
}

/* .symtab of a separate debug file, if it is one for f (same build id when both have one), with
 * the PLT symbols of f itself. */
static struct symtab *debug_symtab(struct elf_file *f, const char *path)
{
	_cleanup_close_ int fd = -1;
	struct symtab *t;
	struct stat a, b;
	Elf *elf;

	if (stat(path, &a) < 0 || fstat(f->fd, &b) < 0 || !S_ISREG(a.st_mode))
		return NULL;
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)	/* the debuglink named f itself */
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &a) < 0 || !S_ISREG(a.st_mode))
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return NULL;
	if (f->build_id_len) {
		struct elf_file probe = { .elf = elf };

		read_build_id(&probe);
		if (probe.build_id_len &&
		    (probe.build_id_len != f->build_id_len ||
		     memcmp(probe.build_id, f->build_id, f->build_id_len))) {
			elf_end(elf);
			return NULL;
		}
	}
	t = symtab__from_elf_plt(elf, SYMTAB_SYMTAB, f->elf);
	elf_end(elf);
	return t;
}

/* The name in .gnu_debuglink, or NULL. Points into the mapped file. */
static const char *debuglink_name(struct elf_file *f)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(f->elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".gnu_debuglink"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_size || !memchr(data->d_buf, '\0', data->d_size))
			return NULL;
		return data->d_buf;
	}
	return NULL;
}

/* dir/.build-id/xx/rest followed by tail in buf: perf's name of a file by build id, the id
 * without the zero padding perf adds in the file */
static void build_id_path(char *buf, size_t size, const char *dir, const uint8_t *id, size_t len,
			  const char *tail)
{
	int n;

	while (len > 1 && !id[len - 1])
		len--;
	n = snprintf(buf, size, "%s/.build-id/%02x/", dir, id[0]);
	for (size_t i = 1; i < len && n >= 0 && n < (int)size - 8; i++)
		n += snprintf(buf + n, size - n, "%02x", id[i]);
	if (n >= 0 && n < (int)size)
		snprintf(buf + n, size - n, "%s", tail);
}

/* The separate debug file's .symtab, in perf's order (dso__load's binary types): the
 * .gnu_debuglink target (beside the file, in .debug/ there, under debug_dir), perf's build-id
 * cache (buildid_dir/.build-id/xx/rest/elf, then .../debug: perf record's copy of the file as
 * it was recorded, unstripped even when the file on disk has been stripped since), then
 * debug_dir/.build-id/xx/rest.debug. Each must carry f's build id. Sets f->symtab and
 * f->symtab_path; false: none. */
static bool load_debug_symbols(struct elf_file *f)
{
	static const char *const cache_tails[] = { "/elf", "/debug" };
	char path[4096];
	const char *link = debuglink_name(f);

	if (link && *link && !strchr(link, '/')) {
		_cleanup_free_ char *copy = strdup(f->path);
		const char *dir = copy ? dirname(copy) : ".";

		for (int i = 0; i < 3; i++) {
			if (i == 0)
				snprintf(path, sizeof(path), "%s/%s", dir, link);
			else if (i == 1)
				snprintf(path, sizeof(path), "%s/.debug/%s", dir, link);
			else
				snprintf(path, sizeof(path), "%s%s/%s", f->debug_dir, dir, link);
			if ((f->symtab = debug_symtab(f, path))) {
				f->symtab_path = strdup(path);
				return true;
			}
		}
	}
	for (size_t i = 0; f->build_id_len && f->buildid_dir && i < 2; i++) {
		build_id_path(path, sizeof(path), f->buildid_dir, f->build_id, f->build_id_len,
			      cache_tails[i]);
		if ((f->symtab = debug_symtab(f, path))) {
			f->symtab_path = strdup(path);
			return true;
		}
	}
	if (f->build_id_len) {
		build_id_path(path, sizeof(path), f->debug_dir, f->build_id, f->build_id_len,
			      ".debug");
		if ((f->symtab = debug_symtab(f, path))) {
			f->symtab_path = strdup(path);
			return true;
		}
	}
	return false;
}

/* perf prefers a separate debug file's .symtab to the file's own (whose local symbols may be
 * stripped), then the file's .symtab, then its .dynsym; PLT entries always come from the file. */
static void load_symbols(struct elf_file *f)
{
	if (f->fd >= 0 && load_debug_symbols(f))
		return;
	f->symtab = symtab__from_elf_plt(f->elf, SYMTAB_ANY, f->elf);
	if (f->symtab)
		f->symtab_path = strdup(f->path);
}

const struct symtab *elf_file__symtab(struct elf_file *f)
{
	if (atomic_load_explicit(&f->sym_loaded, memory_order_acquire))
		return f->symtab;
	pthread_mutex_lock(&f->sym_lock);
	if (!atomic_load_explicit(&f->sym_loaded, memory_order_relaxed)) {
		load_symbols(f);
		atomic_store_explicit(&f->sym_loaded, true, memory_order_release);
	}
	pthread_mutex_unlock(&f->sym_lock);
	return f->symtab;
}

/* Where addr2line finds the DWARF: the debug file the symbols came from, the file itself, its
 * build-id debug file. */
static struct dwarf_inlines *open_dwarf(struct elf_file *f)
{
	struct dwarf_inlines *d = NULL;
	char path[4096];

	if (f->fd < 0)
		return NULL;
	if (f->symtab_path && strcmp(f->symtab_path, f->path))
		d = dwarf_inlines__open(f->symtab_path);
	if (!d)
		d = dwarf_inlines__open(f->path);
	if (!d && f->build_id_len) {
		int n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", f->debug_dir,
				 f->build_id[0]);

		for (size_t i = 1; i < f->build_id_len && n < (int)sizeof(path) - 8; i++)
			n += snprintf(path + n, sizeof(path) - n, "%02x", f->build_id[i]);
		snprintf(path + n, sizeof(path) - n, ".debug");
		d = dwarf_inlines__open(path);
	}
	return d;
}

int elf_file__inlines(struct elf_file *f, uint64_t vaddr, const struct symbol *sym,
		      const struct inline_frame **ret)
{
	int n = 0;

	elf_file__symtab(f);	/* the debug file's path */
	pthread_mutex_lock(&f->dwarf_lock);
	if (!f->dwarf_tried) {
		f->dwarf = open_dwarf(f);
		f->dwarf_tried = true;
	}
	if (f->dwarf)
		n = dwarf_inlines__lookup(f->dwarf, vaddr, sym, ret);
	pthread_mutex_unlock(&f->dwarf_lock);
	return n;
}

bool elf_file__has_dwarf(struct elf_file *f)
{
	bool has;

	elf_file__symtab(f);
	pthread_mutex_lock(&f->dwarf_lock);
	if (!f->dwarf_tried) {
		f->dwarf = open_dwarf(f);
		f->dwarf_tried = true;
	}
	has = f->dwarf != NULL;
	pthread_mutex_unlock(&f->dwarf_lock);
	return has;
}

const char *elf_file__symtab_path(struct elf_file *f)
{
	if (!atomic_load_explicit(&f->sym_loaded, memory_order_acquire))
		return NULL;
	return f->symtab_path;
}

/* --- the cache --- */

static size_t hash_key(const char *path, const uint8_t *id, size_t len)
{
	size_t h = 1469598103934665603ULL;

	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 1099511628211ULL;
	for (size_t i = 0; i < len; i++)
		h = (h ^ id[i]) * 1099511628211ULL;
	return h;
}

struct elfcache *elfcache__new(const struct elfcache_opts *opts)
{
	struct elfcache *c = calloc(1, sizeof(*c));
	char buf[4096];

	if (!c)
		goto nomem;
	pthread_mutex_init(&c->lock, NULL);
	c->nr_buckets = 256;
	c->buckets = calloc(c->nr_buckets, sizeof(*c->buckets));
	if (opts && opts->symfs && !(c->symfs = strdup(opts->symfs)))
		goto nomem;
	if (opts && opts->debug_dir)
		c->debug_dir = strdup(opts->debug_dir);
	else if (asprintf(&c->debug_dir, "%s/usr/lib/debug", c->symfs ? c->symfs : "") < 0)
		c->debug_dir = NULL;
	if (opts && opts->buildid_dir)
		c->buildid_dir = strdup(opts->buildid_dir);
	else
		c->buildid_dir = strdup(buildid_cache__default_dir(buf, sizeof(buf)) ? buf : "");
	if (!c->buckets || !c->debug_dir || !c->buildid_dir)
		goto nomem;
	return c;
nomem:
	elfcache__free(c);
	errno = ENOMEM;
	return NULL;
}

static void cache_grow(struct elfcache *c)
{
	size_t n = c->nr_buckets * 2;
	struct cache_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return;	/* keep the old table: only slower */
	for (size_t i = 0; i < c->nr_buckets; i++) {
		struct cache_entry *e = c->buckets[i], *next;

		for (; e; e = next) {
			size_t h = hash_key(e->path, e->build_id, e->build_id_len) & (n - 1);

			next = e->next;
			e->next = b[h];
			b[h] = e;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nr_buckets = n;
}

static struct elf_file *open_with_cache(struct elfcache *c, const char *path, const uint8_t *id,
					size_t len)
{
	char alt[4096];
	struct elf_file *f;
	int err;

	if (c->symfs && path[0] == '/') {
		if (snprintf(alt, sizeof(alt), "%s%s", c->symfs, path) >= (int)sizeof(alt)) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		path = alt;
	}
	f = elf_file__open(path, id, len, c->debug_dir);
	err = errno;

	if (!f && len && (err == ESTALE || err == ENOENT) && *c->buildid_dir) {
		/* perf's build-id cache: the file as it was recorded */
		build_id_path(alt, sizeof(alt), c->buildid_dir, id, len, "/elf");
		f = elf_file__open(alt, id, len, c->debug_dir);
	}
	if (!f) {
		errno = err;
		return NULL;
	}
	/* its symbols may come from the cache too (a file stripped since it was recorded) */
	if (*c->buildid_dir && !(f->buildid_dir = strdup(c->buildid_dir))) {
		elf_file__put(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

struct elf_file *elfcache__get(struct elfcache *c, const char *path, const uint8_t *build_id,
			       size_t build_id_len)
{
	struct cache_entry *e;
	size_t h;

	if (build_id_len > BUILD_ID_MAX)
		build_id_len = BUILD_ID_MAX;
	if (!build_id)
		build_id_len = 0;
	h = hash_key(path, build_id, build_id_len);
	pthread_mutex_lock(&c->lock);
	for (e = c->buckets[h & (c->nr_buckets - 1)]; e; e = e->next) {
		if (e->build_id_len == build_id_len && !strcmp(e->path, path) &&
		    (!build_id_len || !memcmp(e->build_id, build_id, build_id_len)))
			break;
	}
	if (!e) {
		/* Opening under the lock serializes first opens, but each file is opened once
		 * per report and workers rarely meet a new file at the same moment. */
		e = calloc(1, sizeof(*e));
		if (!e || !(e->path = strdup(path))) {
			free(e);
			pthread_mutex_unlock(&c->lock);
			errno = ENOMEM;
			return NULL;
		}
		if (build_id_len)
			memcpy(e->build_id, build_id, build_id_len);
		e->build_id_len = build_id_len;
		e->file = open_with_cache(c, path, build_id, build_id_len);
		e->err = e->file ? 0 : errno;
		if (e->err == ENOMEM) {
			free(e->path);
			free(e);
			pthread_mutex_unlock(&c->lock);
			errno = ENOMEM;
			return NULL;
		}
		if (++c->nr > c->nr_buckets * 2)
			cache_grow(c);
		h &= c->nr_buckets - 1;
		e->next = c->buckets[h];
		c->buckets[h] = e;
	}
	if (!e->file) {
		int err = e->err;

		pthread_mutex_unlock(&c->lock);
		errno = err;
		return NULL;
	}
	elf_file__get(e->file);
	pthread_mutex_unlock(&c->lock);
	return e->file;
}

void elfcache__free(struct elfcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->buckets && i < c->nr_buckets; i++) {
		struct cache_entry *e = c->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			elf_file__put(e->file);
			free(e->path);
			free(e);
		}
	}
	free(c->buckets);
	free(c->debug_dir);
	free(c->buildid_dir);
	free(c->symfs);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
