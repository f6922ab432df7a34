/* Hostile ELF files for the unit tests of the code that reads files profiled processes map. */
#ifndef PRECORD_TESTS_ELF_FIXTURE_H
#define PRECORD_TESTS_ELF_FIXTURE_H

#include <check.h>
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* A 64-bit little-endian x86-64 shared object's header with nsec section headers at shoff. */
static inline Elf64_Ehdr elf_fixture__ehdr(uint64_t shoff, uint16_t nsec)
{
	Elf64_Ehdr eh = { 0 };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = shoff;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = nsec;
	return eh;
}

/* At path: a header that claims 50 million sections (extended numbering: e_shnum 0, the count
 * in section 0) in a sparse file of 2 GiB, 4 KiB on disk. */
static inline void elf_fixture__sparse_claims(const char *path)
{
	Elf64_Ehdr eh = elf_fixture__ehdr(sizeof(Elf64_Ehdr), 0);
	Elf64_Shdr sh0 = { 0 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	sh0.sh_size = 50000000;
	ck_assert_int_eq(write(fd, &eh, sizeof(eh)), (ssize_t)sizeof(eh));
	ck_assert_int_eq(write(fd, &sh0, sizeof(sh0)), (ssize_t)sizeof(sh0));
	ck_assert_int_eq(ftruncate(fd, 2LL << 30), 0);
	close(fd);
}

/* This process's peak RSS in KiB (a test's memory bound: before and after). */
static inline long elf_fixture__maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

#endif
