/* Feature-section helpers for the perf.data writer: perf's string encoding, the host facts perf
 * records, and build-id readers. Nothing here prints; every reader either returns exactly what
 * the system reports or an error, never a guess, because perf trusts these values (a build id in
 * particular decides whether perf will use the file on disk at all). */
#include "perf/features.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "lib/cleanup.h"
#include "lib/elfhdr.h"
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

/* The GNU build id in notes of alignment align (4, or 8 in an 8-aligned PT_NOTE), of h's byte
 * order (native when h is NULL). Returns as feat__build_id_from_notes. */
static int find_build_id(const struct elfhdr *h, const uint8_t *p, size_t len, size_t align,
			 uint8_t id[FEAT_BUILD_ID_MAX])
{
	size_t off = 0;

	while (off + 12 <= len) {
		uint32_t namesz, descsz, type;

		if (h) {
			namesz = elfhdr__u32(h, p + off);
			descsz = elfhdr__u32(h, p + off + 4);
			type = elfhdr__u32(h, p + off + 8);
		} else {
			memcpy(&namesz, p + off, 4);
			memcpy(&descsz, p + off + 4, 4);
			memcpy(&type, p + off + 8, 4);
		}
		if (namesz > len || descsz > len)
			return -EINVAL;
		/* the desc and the next note start at align in the segment (gelf_getnote) */
		size_t name_off = off + 12;
		size_t desc_off = ALIGN_UP(name_off + namesz, align);
		size_t next = ALIGN_UP(desc_off + descsz, align);
		if (next > len || desc_off > len)
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

int feat__build_id_from_notes(const void *notes, size_t len, uint8_t id[FEAT_BUILD_ID_MAX])
{
	return find_build_id(NULL, notes, len, 4, id);
}

/* The notes at off (len bytes, at most FEAT_BUILD_ID_NOTES_MAX) of fd. */
static int build_id_at(int fd, const struct elfhdr *h, uint64_t off, uint64_t len, uint64_t align,
		       uint8_t id[FEAT_BUILD_ID_MAX])
{
	_cleanup_free_ uint8_t *buf = NULL;
	ssize_t n;

	if (!len || len > FEAT_BUILD_ID_NOTES_MAX || !(buf = malloc((size_t)len)))
		return -ENOENT;
	n = pread(fd, buf, (size_t)len, (off_t)off);
	if (n != (ssize_t)len)
		return -ENOENT;
	return find_build_id(h, buf, (size_t)len, align == 8 ? 8 : 4, id);
}

/* Entry i of the program header table (phdr) or the section header table: whether it holds
 * notes, and where. Returns 1, 0 (not notes) or -ENOEXEC (unreadable). */
static int note_entry(int fd, const struct elfhdr *h, bool phdr, uint32_t i, uint64_t *off,
		      uint64_t *len, uint64_t *align)
{
	unsigned char e[sizeof(Elf64_Shdr)];
	size_t esz = phdr ? h->phentsize : h->shentsize;
	uint64_t at = (phdr ? h->phoff : h->shoff) + (uint64_t)i * esz;

	if (pread(fd, e, esz, (off_t)at) != (ssize_t)esz)
		return -ENOEXEC;
	if (phdr && elfhdr__u32(h, e) != PT_NOTE)
		return 0;
	if (!phdr && elfhdr__u32(h, e + offsetof(Elf64_Shdr, sh_type)) != SHT_NOTE)
		return 0;
#define FIELD(T, f) (h->is64 ? elfhdr__u64(h, e + offsetof(Elf64_##T, f)) \
			     : elfhdr__u32(h, e + offsetof(Elf32_##T, f)))
	*off = phdr ? FIELD(Phdr, p_offset) : FIELD(Shdr, sh_offset);
	*len = phdr ? FIELD(Phdr, p_filesz) : FIELD(Shdr, sh_size);
	*align = phdr ? FIELD(Phdr, p_align) : FIELD(Shdr, sh_addralign);
#undef FIELD
	return 1;
}

/* The notes of the file's PT_NOTE segments, then (a file with none) of its SHT_NOTE sections:
 * the first FEAT_BUILD_ID_NOTE_SCNS of either, each of at most FEAT_BUILD_ID_NOTES_MAX bytes,
 * every read a bounded pread (elfhdr__read bounds the tables). */
static int build_id_elf(int fd, const struct elfhdr *h, uint8_t id[FEAT_BUILD_ID_MAX])
{
	int ret = -ENOENT;

	for (int phdr = 1; phdr >= 0; phdr--) {
		uint32_t n = phdr ? h->phnum : h->shnum;
		size_t seen = 0;

		for (uint32_t i = !phdr; i < n && seen < FEAT_BUILD_ID_NOTE_SCNS && ret < 0; i++) {
			uint64_t off, len, align;
			int r = note_entry(fd, h, phdr, i, &off, &len, &align);

			if (r < 0)
				return r;
			if (r == 0)
				continue;
			seen++;
			ret = build_id_at(fd, h, off, len, align, id);
		}
		if (seen)
			return ret;
	}
	return ret;
}

#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#endif

/* The path comes from a profiled process, which may have replaced any directory of it with a
 * symlink (to make root open a file of its choice), or the file with a FIFO or a device: it is
 * resolved without following any symlink into an O_PATH descriptor, which opens nothing, and
 * only a regular file is then opened for reading (through that descriptor, never mapped: a file
 * truncated while we read it would raise SIGBUS). Paths the kernel reports for mappings are
 * canonical: they hold no symlink. Kernels before openat2 (5.6) refuse only a last symlink. */
static int open_mapped(const char *path, struct stat *st)
{
	struct { uint64_t flags, mode, resolve; } how = {
		O_PATH | O_CLOEXEC, 0, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int pfd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	char proc[64];

	if (pfd < 0 && errno != ENOSYS)
		return errno == ELOOP || errno == EXDEV ? -ELOOP : -errno;
	if (pfd < 0)
		pfd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st) < 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -ENOEXEC;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	return open(proc, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

int feat__build_id_file(const char *path, uint8_t id[FEAT_BUILD_ID_MAX])
{
	_cleanup_close_ int fd = -1;
	struct elfhdr h;
	struct stat st;
	int err;

	fd = open_mapped(path, &st);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	if (st.st_size > FEAT_BUILD_ID_FILE_MAX)
		return -EFBIG;
	err = elfhdr__read(fd, (uint64_t)st.st_size, &h);
	if (err)
		return err;
	return build_id_elf(fd, &h, id);
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
