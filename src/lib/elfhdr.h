/* The ELF header of a file a profiled process mapped, read with pread and checked before
 * anything trusts its tables: libelf's elf_begin allocates a descriptor for every section the
 * header claims (up to 2^32 with extended numbering, read from section 0), so a sparse file of
 * a few KiB on disk that claims tens of millions of sections made it allocate gigabytes. */
#ifndef PRECORD_ELFHDR_H
#define PRECORD_ELFHDR_H

#include <stdbool.h>
#include <stdint.h>

/* More sections or program headers than any linked object has (a linker merges input
 * sections): such a file is not looked into. */
#define ELFHDR_MAX_SHNUM 65536
#define ELFHDR_MAX_PHNUM 4096

struct elfhdr {
	bool is64, big_endian;
	uint16_t type;
	uint64_t phoff, shoff;
	uint32_t phnum, shnum;      /* the real counts, extended numbering resolved */
	uint16_t phentsize, shentsize;
};

/* Read and check the header of fd (size bytes long): an ELF file of either class and byte
 * order, whose section and program header tables have entries of their class's size, hold
 * at most ELFHDR_MAX_SHNUM and ELFHDR_MAX_PHNUM entries and lie inside the file. Returns 0,
 * -ENOEXEC (not ELF, or tables not as above) or -errno of reading. */
int elfhdr__read(int fd, uint64_t size, struct elfhdr *h);

/* A value of the file's byte order. */
uint16_t elfhdr__u16(const struct elfhdr *h, const void *p);
uint32_t elfhdr__u32(const struct elfhdr *h, const void *p);
uint64_t elfhdr__u64(const struct elfhdr *h, const void *p);

#endif
