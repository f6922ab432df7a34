/* Bounded reading of an ELF header (see elfhdr.h). */
#include "lib/elfhdr.h"

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOEXEC; /* shorter than its header says */
		got += (size_t)n;
	}
	return 0;
}

uint16_t elfhdr__u16(const struct elfhdr *h, const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return h->big_endian == (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) ? v : __builtin_bswap16(v);
}

uint32_t elfhdr__u32(const struct elfhdr *h, const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return h->big_endian == (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) ? v : __builtin_bswap32(v);
}

uint64_t elfhdr__u64(const struct elfhdr *h, const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return h->big_endian == (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) ? v : __builtin_bswap64(v);
}

/* Whether a table of n entries of entsize bytes at off lies inside a file of size bytes. */
static bool table_fits(uint64_t off, uint64_t n, uint64_t entsize, uint64_t size)
{
	return !n || (off <= size && n * entsize <= size - off);
}

int elfhdr__read(int fd, uint64_t size, struct elfhdr *h)
{
	unsigned char e[sizeof(Elf64_Ehdr)];
	uint16_t shnum16, phnum16;
	int err;

	memset(h, 0, sizeof(*h));
	if (size < sizeof(Elf32_Ehdr))
		return -ENOEXEC;
	err = read_at(fd, e, size < sizeof(e) ? sizeof(Elf32_Ehdr) : sizeof(e), 0);
	if (err)
		return err;
	if (memcmp(e, ELFMAG, SELFMAG) || (e[EI_CLASS] != ELFCLASS32 && e[EI_CLASS] != ELFCLASS64) ||
	    (e[EI_DATA] != ELFDATA2LSB && e[EI_DATA] != ELFDATA2MSB))
		return -ENOEXEC;
	h->is64 = e[EI_CLASS] == ELFCLASS64;
	h->big_endian = e[EI_DATA] == ELFDATA2MSB;
	if (h->is64 && size < sizeof(Elf64_Ehdr))
		return -ENOEXEC;
	h->type = elfhdr__u16(h, e + offsetof(Elf64_Ehdr, e_type));
	if (h->is64) {
		h->phoff = elfhdr__u64(h, e + offsetof(Elf64_Ehdr, e_phoff));
		h->shoff = elfhdr__u64(h, e + offsetof(Elf64_Ehdr, e_shoff));
		h->phentsize = elfhdr__u16(h, e + offsetof(Elf64_Ehdr, e_phentsize));
		h->shentsize = elfhdr__u16(h, e + offsetof(Elf64_Ehdr, e_shentsize));
		phnum16 = elfhdr__u16(h, e + offsetof(Elf64_Ehdr, e_phnum));
		shnum16 = elfhdr__u16(h, e + offsetof(Elf64_Ehdr, e_shnum));
	} else {
		h->phoff = elfhdr__u32(h, e + offsetof(Elf32_Ehdr, e_phoff));
		h->shoff = elfhdr__u32(h, e + offsetof(Elf32_Ehdr, e_shoff));
		h->phentsize = elfhdr__u16(h, e + offsetof(Elf32_Ehdr, e_phentsize));
		h->shentsize = elfhdr__u16(h, e + offsetof(Elf32_Ehdr, e_shentsize));
		phnum16 = elfhdr__u16(h, e + offsetof(Elf32_Ehdr, e_phnum));
		shnum16 = elfhdr__u16(h, e + offsetof(Elf32_Ehdr, e_shnum));
	}
	h->shnum = shnum16;
	h->phnum = phnum16;
	if (h->shoff && (h->shentsize != (h->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) ||
			 !table_fits(h->shoff, 1, h->shentsize, size)))
		return -ENOEXEC;
	/* extended numbering: the real counts are in section 0 */
	if (h->shoff && (shnum16 == 0 || phnum16 == PN_XNUM)) {
		unsigned char s[sizeof(Elf64_Shdr)];

		err = read_at(fd, s, h->shentsize, h->shoff);
		if (err)
			return err;
		if (shnum16 == 0) {
			uint64_t n = h->is64 ? elfhdr__u64(h, s + offsetof(Elf64_Shdr, sh_size))
					     : elfhdr__u32(h, s + offsetof(Elf32_Shdr, sh_size));

			if (n > ELFHDR_MAX_SHNUM)
				return -ENOEXEC;
			h->shnum = (uint32_t)n;
		}
		if (phnum16 == PN_XNUM)
			h->phnum = h->is64 ? elfhdr__u32(h, s + offsetof(Elf64_Shdr, sh_info))
					   : elfhdr__u32(h, s + offsetof(Elf32_Shdr, sh_info));
	}
	if (!h->shoff)
		h->shnum = 0;
	if (h->phnum && h->phentsize != (h->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return -ENOEXEC;
	if (h->shnum > ELFHDR_MAX_SHNUM || h->phnum > ELFHDR_MAX_PHNUM ||
	    !table_fits(h->shoff, h->shnum, h->shentsize, size) ||
	    !table_fits(h->phoff, h->phnum, h->phentsize, size))
		return -ENOEXEC;
	return 0;
}
