/* libFuzzer target for what precord and preport read from a profiled process's ELF files
 * (unwind/elfcache.c, unwind/symbols.c): the input is written to a file in a private directory
 * and opened with elf_file__open (build id, PT_LOADs, .eh_frame_hdr), then its symbols are
 * loaded (.symtab, the debug-file lookups, .dynsym), sorted, looked up and demangled; the same
 * bytes go through elf_file__from_memory too. Seeds: tests/fuzz/corpus/fuzz_elf/. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/elfcache.h"
#include "unwind/symbols.h"

static char dir[64], path[96], debug_dir[96];
static int fd = -1;

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static uint64_t use(struct elf_file *f)
{
	const struct symtab *t;
	const uint8_t *id, *img;
	struct eh_frame_hdr_info eh;
	uint64_t sum = 0, off, avail, bias;
	size_t n, size;

	n = elf_file__build_id(f, &id);
	for (size_t i = 0; i < n; i++)
		sum += id[i];
	img = elf_file__image(f, &size);
	if (!elf_file__eh_frame_hdr(f, &eh))
		sum += eh.hdr_vaddr + eh.table_vaddr + eh.fde_count;
	elf_file__bias(f, 0x555555554000ULL, 0, &bias);
	elf_file__bias(f, 0x7f0000001000ULL, 0x1000, &bias);
	sum += bias;
	t = elf_file__symtab(f);
	n = t ? symtab__nr(t) : 0;
	for (size_t i = 0; i < n; i++) {
		const struct symbol *s = symtab__symbol(t, i);
		const char *name = symbol__name(s);

		sum += strlen(name) + strlen(s->name);
		/* A damaged st_size may wrap end below start: such a symbol is never found. */
		symtab__find(t, s->start);
		symtab__find(t, s->end);
		/* Reads as the unwinder's: only inside the image. */
		if (!elf_file__vaddr_to_offset(f, s->start, &off, &avail) && off < size &&
		    size - off >= 8)
			sum += img[off] + img[off + 7];
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *f;
	uint64_t sum = 0;

	if (fd < 0) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-elf.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/lib.so", dir);
		snprintf(debug_dir, sizeof(debug_dir), "%s/debug", dir);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			abort();
		atexit(cleanup);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	f = elf_file__open(path, NULL, 0, debug_dir);
	if (f) {
		const uint8_t *id;
		size_t n = elf_file__build_id(f, &id);
		struct elf_file *g;

		sum += use(f);
		/* Opening with its own build id must succeed. */
		if (n && n <= 64) {
			uint8_t copy[64];

			memcpy(copy, id, n);
			g = elf_file__open(path, copy, n, debug_dir);
			if (!g)
				__builtin_trap();
			elf_file__put(g);
		}
		elf_file__put(f);
	}
	f = elf_file__from_memory("[fuzz]", data, size);
	if (f) {
		sum += use(f);
		elf_file__put(f);
	}
	return sum == 0x5eed ? 0 : 0;
}
