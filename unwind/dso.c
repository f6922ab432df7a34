/* DSOs: one per file name a machine's maps mention, shared by every map that names it. The ELF
 * file (through the machine's cache) and the symbols are opened on first use, from any worker:
 * a per-dso lock and a release store of elf_done publish them once (the kernel's kallsyms the
 * same way, under the machine's lock); the fast path is one acquire load. */
#include <errno.h>
#include <elf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "unwind/elfcache.h"
#include "unwind/machine_int.h"
#include "unwind/symbols.h"

static enum dso_kind kind_of(const char *name, bool kernel)
{
	if (kernel)
		return DSO_KERNEL;
	if (!strcmp(name, "[vdso]"))
		return DSO_VDSO;
	/* "//anon" and the like name no file; neither do memfds, devices, deleted files. */
	if (name[0] == '/' && name[1] != '/' && strncmp(name, "/memfd:", 7) &&
	    strncmp(name, "/dev/", 5) && strncmp(name, "/SYSV", 5) && !strstr(name, " (deleted)"))
		return DSO_FILE;
	return DSO_ANON;
}

struct dso *dso__new(struct machine *m, const char *name, bool kernel, uint32_t seq)
{
	struct dso *d = calloc(1, sizeof(*d));

	if (!d || !(d->name = strdup(name))) {
		free(d);
		return NULL;
	}
	d->machine = m;
	d->kind = kind_of(name, kernel);
	d->seq = seq;
	pthread_mutex_init(&d->lock, NULL);
	atomic_init(&d->elf_done, false);
	return d;
}

void dso__free(struct dso *d)
{
	if (!d)
		return;
	elf_file__put(d->elf);
	pthread_mutex_destroy(&d->lock);
	free(d->name);
	free(d);
}

const char *dso__name(const struct dso *d)
{
	return d->name;
}

size_t dso__build_id(const struct dso *d, const uint8_t **ret_id)
{
	*ret_id = d->build_id;
	return d->build_id_len;
}

uint32_t dso__seq(const struct dso *d)
{
	return d->seq;
}

enum dso_kind dso__kind(const struct dso *d)
{
	return d->kind;
}

/* This process's vDSO as an ELF file: its size is where its section headers end. */
static struct elf_file *running_vdso(void)
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	Elf64_Ehdr eh;

	if (!base)
		return NULL;
	memcpy(&eh, base, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shoff > (1 << 20) || eh.e_shnum > 256)
		return NULL;
	return elf_file__from_memory("[vdso]", base, eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize);
}

int dso__elf_error(struct dso *d)
{
	return dso__elf(d) ? 0 : d->elf_err;
}

struct elf_file *dso__elf(struct dso *d)
{
	if (atomic_load_explicit(&d->elf_done, memory_order_acquire))
		return d->elf;
	pthread_mutex_lock(&d->lock);
	if (!atomic_load_explicit(&d->elf_done, memory_order_relaxed)) {
		if (d->kind == DSO_FILE) {
			d->elf = elfcache__get(d->machine->cache, d->name,
					       d->build_id_len ? d->build_id : NULL,
					       d->build_id_len);
			d->elf_err = d->elf ? 0 : errno;
		}
		else if (d->kind == DSO_VDSO && d->machine->running_vdso)
			d->elf = running_vdso();
		atomic_store_explicit(&d->elf_done, true, memory_order_release);
	}
	pthread_mutex_unlock(&d->lock);
	return d->elf;
}

uint64_t dso__file_offset(struct dso *d, uint64_t addr)
{
	struct elf_file *f;
	uint64_t off, avail;

	if (!d || d->kind == DSO_KERNEL || !(f = dso__elf(d)) ||
	    elf_file__vaddr_to_offset(f, addr, &off, &avail) < 0)
		return addr;
	return off;
}

const struct symtab *dso__symtab(struct dso *d)
{
	struct machine *m = d->machine;
	struct elf_file *f;

	if (d->kind == DSO_KERNEL) {
		if (atomic_load_explicit(&m->kallsyms_done, memory_order_acquire))
			return m->kallsyms_tab;
		pthread_mutex_lock(&m->kallsyms_lock);
		if (!atomic_load_explicit(&m->kallsyms_done, memory_order_relaxed)) {
			if (m->kallsyms)
				m->kallsyms_tab = symtab__from_kallsyms(m->kallsyms);
			atomic_store_explicit(&m->kallsyms_done, true, memory_order_release);
		}
		pthread_mutex_unlock(&m->kallsyms_lock);
		return m->kallsyms_tab;
	}
	f = dso__elf(d);
	return f ? elf_file__symtab(f) : NULL;
}

void dso__preload(struct dso *d, bool dwarf)
{
	struct elf_file *f;

	dso__symtab(d);
	if (dwarf && (f = dso__elf(d)))
		elf_file__has_dwarf(f);
}
