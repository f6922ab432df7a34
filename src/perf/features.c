/* Feature-section helpers for the perf.data writer: perf's string encoding, the host facts perf
 * records, and build-id readers. Nothing here prints; every reader either returns exactly what
 * the system reports or an error, never a guess, because perf trusts these values (a build id in
 * particular decides whether perf will use the file on disk at all). */
#include "perf/features.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "lib/cleanup.h"
#include "lib/fileio.h"

#define ALIGN_UP(x, a) (((x) + (a) - 1) / (a) * (a))

static bool fbuf_reserve(struct fbuf *b, size_t more)
{
	if (b->oom)
		return false;
	if (b->len + more <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 1024;
	while (cap < b->len + more)
		cap *= 2;
	uint8_t *p = realloc(b->data, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void fbuf__put(struct fbuf *b, const void *src, size_t len)
{
	if (!fbuf_reserve(b, len))
		return;
	memcpy(b->data + b->len, src, len);
	b->len += len;
}

void fbuf__put_zero(struct fbuf *b, size_t len)
{
	if (!fbuf_reserve(b, len))
		return;
	memset(b->data + b->len, 0, len);
	b->len += len;
}

void fbuf__put_u32(struct fbuf *b, uint32_t v)
{
	fbuf__put(b, &v, sizeof(v));
}

void fbuf__put_u64(struct fbuf *b, uint64_t v)
{
	fbuf__put(b, &v, sizeof(v));
}

void fbuf__put_string(struct fbuf *b, const char *s)
{
	size_t olen = strlen(s) + 1;
	size_t len = ALIGN_UP(olen, FEAT_NAME_ALIGN);

	fbuf__put_u32(b, (uint32_t)len);
	fbuf__put(b, s, olen);
	fbuf__put_zero(b, len - olen);
}

void fbuf__free(struct fbuf *b)
{
	free(b->data);
	*b = (struct fbuf){ 0 };
}

int feat__cpuid(char *buf, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int eax, ebx, ecx, edx;
	char vendor[13];

	if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
		return -ENOTSUP;
	memcpy(vendor, &ebx, 4);
	memcpy(vendor + 4, &edx, 4);
	memcpy(vendor + 8, &ecx, 4);
	vendor[12] = '\0';
	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return -ENOTSUP;

	/* The display family/model as the kernel's /proc/cpuinfo and perf compute them. */
	unsigned int family = (eax >> 8) & 0xf;
	unsigned int model = (eax >> 4) & 0xf;
	unsigned int stepping = eax & 0xf;
	if (family == 0xf)
		family += (eax >> 20) & 0xff;
	if (family >= 0x6)
		model += ((eax >> 16) & 0xf) << 4;

	int n = snprintf(buf, len, "%s,%u,%u,%u", vendor, family, model, stepping);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
#else
	(void)buf;
	(void)len;
	return -ENOTSUP;
#endif
}

/* Copy src to dst squashing runs of blanks into one space and trimming both ends. */
static void squash_spaces(char *dst, size_t len, const char *src)
{
	size_t n = 0;
	bool space = false;

	while (*src && isspace((unsigned char)*src))
		src++;
	for (; *src && n + 1 < len; src++) {
		if (isspace((unsigned char)*src)) {
			space = true;
			continue;
		}
		if (space && n + 2 < len)
			dst[n++] = ' ';
		space = false;
		dst[n++] = *src;
	}
	dst[n] = '\0';
}

int feat__cpudesc(char *buf, size_t len)
{
	/* The keys perf's CPUINFO_PROC uses on the common architectures, x86 first. */
	static const char *const keys[] = { "model name", "cpu model", "Processor", "cpu" };
	_cleanup_fclose_ FILE *f = fopen("/proc/cpuinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	if (!f)
		return -errno;
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		size_t klen = strlen(keys[k]);

		rewind(f);
		while (getline(&line, &cap, f) > 0) {
			if (strncmp(line, keys[k], klen) != 0)
				continue;
			const char *p = line + klen;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p != ':')
				continue;
			squash_spaces(buf, len, p + 1);
			if (buf[0])
				return 0;
		}
	}
	return -ENOENT;
}

/* Highest CPU number in a sysfs list such as "0-3,8-11", or -1. */
static long max_in_cpu_list(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char buf[4096];
	long max = -1;

	if (!f || !fgets(buf, sizeof(buf), f))
		return -1;
	for (char *p = buf; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v > max)
			max = v;
		p = end;
		while (*p == ',' || *p == '-')
			p++;
	}
	return max;
}

void feat__nrcpus(uint32_t *ret_avail, uint32_t *ret_online)
{
	long max = max_in_cpu_list("/sys/devices/system/cpu/present");
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	if (max < 0)
		max = sysconf(_SC_NPROCESSORS_CONF) - 1;
	*ret_avail = max >= 0 ? (uint32_t)(max + 1) : 1;
	*ret_online = online > 0 ? (uint32_t)online : 1;
}

uint64_t feat__total_mem_kb(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long psize = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || psize <= 0)
		return 0;
	return (uint64_t)pages * (uint64_t)psize / 1024;
}

int feat__build_id_from_notes(const void *notes, size_t len, uint8_t id[FEAT_BUILD_ID_MAX])
{
	const uint8_t *p = notes;
	size_t off = 0;

	while (off + 12 <= len) {
		uint32_t namesz, descsz, type;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		size_t name_off = off + 12;
		size_t desc_off = name_off + ALIGN_UP((size_t)namesz, 4);
		size_t next = desc_off + ALIGN_UP((size_t)descsz, 4);
		if (namesz > len || descsz > len || next > len || desc_off > len)
			return -EINVAL;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + name_off, "GNU", 4) == 0) {
			if (descsz == 0 || descsz > FEAT_BUILD_ID_MAX)
				return -EINVAL;
			memcpy(id, p + desc_off, descsz);
			return (int)descsz;
		}
		off = next;
	}
	return -ENOENT;
}

static void elf_init(void)
{
	elf_version(EV_CURRENT);
}

int feat__build_id_file(const char *path, uint8_t id[FEAT_BUILD_ID_MAX])
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	_cleanup_close_ int fd = -1;
	Elf *elf;
	Elf_Scn *scn = NULL;
	int ret = -ENOENT;

	struct stat st;

	pthread_once(&once, elf_init);
	/* The path comes from a profiled process, which may have replaced it with a FIFO, a
	 * device or a symlink: never wait in open, and read regular files only. Not mapped:
	 * a file truncated while we read it would raise SIGBUS. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	if (st.st_size > FEAT_BUILD_ID_FILE_MAX)
		return -EFBIG;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -ENOEXEC;
	}
	/* libelf copies each section it is asked for and keeps the copy until elf_end: a file
	 * of tens of thousands of note sections (they may all overlap one stretch of the file)
	 * would make it read and hold gigabytes. Linked objects have a handful of notes, the
	 * build id among the first. */
	size_t notes_seen = 0;
	while (ret == -ENOENT && notes_seen < FEAT_BUILD_ID_NOTE_SCNS &&
	       (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		if (notes_seen++, shdr.sh_size > FEAT_BUILD_ID_NOTES_MAX)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		/* libelf has converted the note headers to host order: walk them with gelf_getnote. */
		GElf_Nhdr nhdr;
		size_t off = 0, name_off, desc_off, next;
		while ((next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
			const char *name = (const char *)data->d_buf + name_off;
			if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0) {
				if (nhdr.n_descsz == 0 || nhdr.n_descsz > FEAT_BUILD_ID_MAX ||
				    desc_off + nhdr.n_descsz > data->d_size) {
					ret = -EINVAL;
				} else {
					memcpy(id, (const uint8_t *)data->d_buf + desc_off, nhdr.n_descsz);
					ret = (int)nhdr.n_descsz;
				}
				break;
			}
			off = next;
		}
	}
	elf_end(elf);
	return ret;
}

int feat__build_id_kernel(uint8_t id[FEAT_BUILD_ID_MAX])
{
	_cleanup_close_ int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	uint8_t buf[4096];
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = fileio__read_full(fd, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	return feat__build_id_from_notes(buf, (size_t)len, id);
}

int feat__build_id_vdso(uint8_t id[FEAT_BUILD_ID_MAX])
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;

	if (!base)
		return -ENOENT;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize < sizeof(Elf64_Phdr))
		return -ENOEXEC;
	/* The vDSO is mapped whole from its start: file offsets are offsets from base. */
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff + i * eh->e_phentsize);
		int r;

		if (ph->p_type != PT_NOTE)
			continue;
		r = feat__build_id_from_notes(base + ph->p_offset, ph->p_filesz, id);
		if (r != -ENOENT)
			return r;
	}
	return -ENOENT;
}
