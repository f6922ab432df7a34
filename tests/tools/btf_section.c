/* btf_section: rewrites the BPF_BTF feature section of a perf.data, for
 * tests/integration/test_preport_header.sh.
 *     btf_section IN OUT N
 * OUT is IN with its BPF_BTF section (IN must have one: perf record writes it) replaced by one
 * of N entries (u32 id, u32 size 0) whose ids run in a scrambled order over N / 2 values, each
 * id twice: a reader must print each id once, in order. The new section is appended and the
 * section table points at it. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/abi.h"
#include "perf/features.h"

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

int main(int argc, char **argv)
{
	const struct perf_file_header *h;
	uint8_t *buf;
	FILE *f;
	long n;
	uint32_t nr;
	uint64_t desc;
	int idx = 0;

	if (argc != 4 || (nr = (uint32_t)strtoul(argv[3], NULL, 10)) < 2) {
		fprintf(stderr, "usage: btf_section IN OUT N (N >= 2)\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < (long)sizeof(*h) ||
	    fseek(f, 0, SEEK_SET) < 0) {
		fprintf(stderr, "btf_section: cannot read %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "btf_section: cannot read %s\n", argv[1]);
		return 1;
	}
	fclose(f);
	h = (const struct perf_file_header *)buf;
	if (!(h->features[FEAT_BPF_BTF / 64] >> (FEAT_BPF_BTF % 64) & 1)) {
		fprintf(stderr, "btf_section: %s has no BPF_BTF section\n", argv[1]);
		return 1;
	}
	/* the section table: one (offset, size) per feature bit set, in bit order */
	for (int b = 0; b < FEAT_BPF_BTF; b++)
		idx += h->features[b / 64] >> (b % 64) & 1;
	desc = h->data.offset + h->data.size + (uint64_t)idx * 16;
	if (desc + 16 > (uint64_t)n || rd64(buf + desc) > (uint64_t)n) {
		fprintf(stderr, "btf_section: %s: the section table is out of the file\n", argv[1]);
		return 1;
	}
	{
		uint64_t sect[2] = { (uint64_t)n, 4 + (uint64_t)nr * 8 };

		memcpy(buf + desc, sect, sizeof(sect));
	}
	f = fopen(argv[2], "wb");
	if (!f || fwrite(buf, 1, (size_t)n, f) != (size_t)n || fwrite(&nr, 4, 1, f) != 1) {
		fprintf(stderr, "btf_section: cannot write %s\n", argv[2]);
		return 1;
	}
	for (uint32_t i = 0; i < nr; i++) {
		/* 7919 is prime and N / 2 is not its multiple here: a scrambled walk of 1..N/2 */
		uint32_t e[2] = { 1 + (uint32_t)((uint64_t)(i % (nr / 2)) * 7919 % (nr / 2)), 0 };

		if (fwrite(e, sizeof(e), 1, f) != 1) {
			fprintf(stderr, "btf_section: cannot write %s\n", argv[2]);
			return 1;
		}
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "btf_section: cannot write %s\n", argv[2]);
		return 1;
	}
	free(buf);
	return 0;
}
