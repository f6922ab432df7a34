/* mutate: damages a perf.data systematically, for tests/integration/test_mutation_sweep.sh.
 *     mutate list [-l LEVEL] FILE    prints one damaged variant a line: "NAME OP ARGS..."
 *     mutate apply IN OUT OP ARGS... writes IN with that damage to OUT
 * Variants follow the file's layout (header, attrs and their ids, data records, feature
 * sections): truncations (evenly spaced, at record and section boundaries), size and offset
 * fields set to 0, huge or off by 8, flipped bytes in each part, and records or chunks swapped,
 * duplicated or removed. LEVEL 1 (default) gives a few dozen variants, 2 a few hundred, 3 over a
 * thousand. Flips are pseudo-random but the list is the same for the same file and level.
 * Operations: T OFF (truncate), X OFF MASK (xor a byte), S2|S4|S8 OFF VALUE (store a little-
 * endian field), SWAP A B LEN, DUP A LEN (insert a copy of [A, A+LEN) after it), DEL A LEN. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/abi.h"

static uint8_t *buf;
static size_t size;
static int level = 1;

static int load(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
		fprintf(stderr, "mutate: cannot read %s: %s\n", path, strerror(errno));
		return -1;
	}
	size = n;
	buf = malloc(size + 1);
	if (!buf || fread(buf, 1, size, f) != size) {
		fprintf(stderr, "mutate: cannot read %s\n", path);
		return -1;
	}
	fclose(f);
	return 0;
}

static uint64_t get(size_t off, int len)
{
	uint64_t v = 0;

	if (off + len <= size)
		memcpy(&v, buf + off, len);
	return v;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(uint64_t n)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return n ? (rnd_state >> 33) % n : 0;
}

/* Store fields of the header: 0, huge, all ones, +8, -8 (fewer at level 1). */
static void fields(const char *what, size_t off, int len)
{
	uint64_t v = get(off, len);
	uint64_t huge = len == 8 ? 0x7fffffffffffff00ULL : len == 4 ? 0x7fffff00 : 0xfff8;
	uint64_t ones = len == 8 ? UINT64_MAX : len == 4 ? 0xffffffffULL : 0xffff;

	static int calls;

	/* Level 1: one of 0 and huge, in turn. */
	if (level >= 2 || calls % 2 == 0)
		printf("%s=0 S%d %zu 0\n", what, len, off);
	if (level >= 2 || calls++ % 2 == 1)
		printf("%s=huge S%d %zu %" PRIu64 "\n", what, len, off, huge);
	if (level >= 2) {
		printf("%s=-1 S%d %zu %" PRIu64 "\n", what, len, off, ones);
		printf("%s+8 S%d %zu %" PRIu64 "\n", what, len, off, (v + 8) & ones);
		printf("%s-8 S%d %zu %" PRIu64 "\n", what, len, off, (v - 8) & ones);
	}
}

static void flips(const char *what, size_t start, size_t end, int n)
{
	if (end > size)
		end = size;
	for (int i = 0; i < n && start < end; i++) {
		size_t at = start + rnd(end - start);
		unsigned mask = i % 2 ? 1u << rnd(8) : 0xff;

		printf("flip-%s@%zu X %zu %u\n", what, at, at, mask);
	}
}

static int list(void)
{
	const struct perf_file_header *h = (const void *)buf;
	uint64_t doff, dsize, dend, aoff, asize, attr_size;
	size_t recs[4096], nrec = 0, comp = 0, off;
	int every = level == 1 ? 5 : level == 2 ? 50 : 100;
	int nflip = level == 1 ? 2 : level == 2 ? 16 : 48;

	if (size < PERF_HEADER_SIZE || memcmp(buf, "PERFILE2", 8)) {
		fprintf(stderr, "mutate: not a perf.data file\n");
		return 1;
	}
	doff = h->data.offset, dsize = h->data.size, dend = doff + dsize;
	aoff = h->attrs.offset, asize = h->attrs.size, attr_size = h->attr_size;
	if (dend > size || aoff + asize > size || attr_size < 16) {
		fprintf(stderr, "mutate: the header does not fit the file\n");
		return 1;
	}
	/* Records of the data section. */
	for (off = doff; off + 8 <= dend && nrec < sizeof(recs) / sizeof(recs[0]);) {
		uint16_t rs = get(off + 6, 2);
		uint32_t type = get(off, 4);

		if (rs < 8 || off + rs > dend)
			break;
		if (type == PERF_RECORD_COMPRESSED && !comp)
			comp = off;
		recs[nrec++] = off;
		off += rs;
	}

	/* Truncations: evenly spaced, then at boundaries. */
	for (int i = 1; i < every; i++)
		printf("cut-%d%% T %zu\n", i * 100 / every, size * i / every);
	printf("cut-header T %d\ncut-attrs T %" PRIu64 "\ncut-data-start T %" PRIu64 "\n",
	       PERF_HEADER_SIZE / 2, aoff + asize / 2, doff + 4);
	printf("cut-data-end T %" PRIu64 "\ncut-features T %" PRIu64 "\n", dend, dend + 8);
	for (size_t i = 0; i < nrec; i += level == 1 ? nrec : nrec / 12 + 1)
		printf("cut-rec%zu T %zu\ncut-rec%zu+1 T %zu\n", i, recs[i], i, recs[i] + 1);

	/* The header's fields. */
	fields("hdr.size", 8, 8);
	fields("hdr.attr_size", 16, 8);
	fields("hdr.attrs.offset", 24, 8);
	fields("hdr.attrs.size", 32, 8);
	fields("hdr.data.offset", 40, 8);
	fields("hdr.data.size", 48, 8);
	printf("hdr.features=all S8 72 %" PRIu64 "\n", UINT64_MAX);
	printf("hdr.features=none S8 72 0\n");
	flips("header", 0, PERF_HEADER_SIZE, nflip);

	/* The first attr: its size, sample_type, read_format, its ids section. */
	if (asize >= attr_size) {
		fields("attr0.size", aoff + 4, 4);
		printf("attr0.sample_type=all S8 %" PRIu64 " %" PRIu64 "\n", aoff + 24, UINT64_MAX);
		if (level >= 2) {
			printf("attr0.sample_type=0 S8 %" PRIu64 " 0\n", aoff + 24);
			printf("attr0.read_format=all S8 %" PRIu64 " %" PRIu64 "\n", aoff + 32,
			       (uint64_t)0xf);
			printf("attr0.regs_user=all S8 %" PRIu64 " %" PRIu64 "\n", aoff + 80,
			       UINT64_MAX);
		}
		fields("attr0.ids.offset", aoff + attr_size - 16, 8);
		fields("attr0.ids.size", aoff + attr_size - 8, 8);
		flips("attrs", aoff, aoff + asize, nflip);
	}

	/* Records: size 0 / small / huge / odd, type 0 / unknown, flips, swaps, duplicates. */
	for (size_t i = 0; i < nrec; i += nrec / (level == 1 ? 2 : level == 2 ? 8 : 24) + 1) {
		size_t r = recs[i];

		printf("rec%zu.size=0 S2 %zu 0\n", i, r + 6);
		printf("rec%zu.size=huge S2 %zu 65528\n", i, r + 6);
		if (level >= 2) {
			printf("rec%zu.size=4 S2 %zu 4\n", i, r + 6);
			printf("rec%zu.size=odd S2 %zu %" PRIu64 "\n", i, r + 6, get(r + 6, 2) + 3);
			printf("rec%zu.type=0 S4 %zu 0\n", i, r);
			printf("rec%zu.type=huge S4 %zu 4000000000\n", i, r);
			printf("rec%zu.type=sample S4 %zu 9\n", i, r);
		}
		if (i + 1 < nrec)
			printf("rec%zu-dup DUP %zu %zu\n", i, r, recs[i + 1] - r);
		if (i + 2 < nrec && level >= 2) {
			size_t a = recs[i + 1] - r, b = recs[i + 2] - recs[i + 1];

			if (a == b)
				printf("rec%zu-swap SWAP %zu %zu %zu\n", i, r, recs[i + 1], a);
			printf("rec%zu-del DEL %zu %zu\n", i, r, a);
		}
	}
	if (comp) {
		/* Inside the first zstd frame. */
		uint16_t rs = get(comp + 6, 2);

		fields("compressed0.size", comp + 6, 2);
		flips("compressed", comp + 8, comp + rs, nflip);
	}
	flips("data", doff, dend, nflip * 2);
	if (dsize >= 512) {
		printf("data-swap-chunks SWAP %" PRIu64 " %" PRIu64 " 128\n", doff + 64,
		       doff + dsize / 2);
		printf("data-dup-chunk DUP %" PRIu64 " 200\n", doff + dsize / 3);
		printf("data-swap-halves SWAP %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", doff,
		       doff + dsize / 2, dsize / 2);
	}

	/* Feature sections: each {offset, size} pair, and the bytes they point to. */
	if (dend + 16 <= size) {
		int nfeat = 0;

		for (int b = 0; b < 256; b++)
			nfeat += (h->features[b / 64] >> (b % 64)) & 1;
		for (int k = 0; k < nfeat && dend + 16 * (k + 1) <= size; k++) {
			char what[32];
			uint64_t foff = get(dend + 16 * k, 8), fsz = get(dend + 16 * k + 8, 8);

			if (level == 1 && (k % 4 || k > 8))
				continue;
			snprintf(what, sizeof(what), "feat%d.offset", k);
			fields(what, dend + 16 * k, 8);
			snprintf(what, sizeof(what), "feat%d.size", k);
			fields(what, dend + 16 * k + 8, 8);
			if (foff + fsz <= size && fsz) {
				snprintf(what, sizeof(what), "feat%d", k);
				flips(what, foff, foff + fsz, level == 1 ? 1 : nflip / 4);
				if (level >= 2)
					printf("feat%d-len=huge S4 %" PRIu64 " 4000000000\n", k, foff);
			}
		}
		flips("features", dend, size, nflip);
	}
	return 0;
}

static int apply(const char *out, const char *op, char **args, int n)
{
	uint64_t a[3] = { 0 };
	FILE *f;

	for (int i = 0; i < n && i < 3; i++)
		a[i] = strtoull(args[i], NULL, 0);
	f = fopen(out, "wb");
	if (!f) {
		fprintf(stderr, "mutate: cannot write %s: %s\n", out, strerror(errno));
		return 1;
	}
	if (!strcmp(op, "T")) {
		fwrite(buf, 1, a[0] < size ? a[0] : size, f);
	} else if (!strcmp(op, "X") || op[0] == 'S') {
		int len = op[0] == 'X' ? 1 : atoi(op + 1);

		if (a[0] + len <= size) {
			if (op[0] == 'X')
				buf[a[0]] ^= a[1];
			else
				memcpy(buf + a[0], &a[1], len);
		}
		fwrite(buf, 1, size, f);
	} else if (!strcmp(op, "SWAP")) {
		if (a[0] + a[2] <= size && a[1] + a[2] <= size &&
		    (a[0] + a[2] <= a[1] || a[1] + a[2] <= a[0])) {
			uint8_t *tmp = malloc(a[2] + 1);

			memcpy(tmp, buf + a[0], a[2]);
			memmove(buf + a[0], buf + a[1], a[2]);
			memcpy(buf + a[1], tmp, a[2]);
			free(tmp);
		}
		fwrite(buf, 1, size, f);
	} else if (!strcmp(op, "DUP") || !strcmp(op, "DEL")) {
		uint64_t at = a[0] < size ? a[0] : size, len = a[1] < size - at ? a[1] : size - at;

		if (!strcmp(op, "DUP")) {
			fwrite(buf, 1, at + len, f);
			fwrite(buf + at, 1, size - at, f);
		} else {
			fwrite(buf, 1, at, f);
			fwrite(buf + at + len, 1, size - at - len, f);
		}
	} else {
		fprintf(stderr, "mutate: unknown operation %s\n", op);
		fclose(f);
		return 2;
	}
	if (fclose(f)) {
		fprintf(stderr, "mutate: cannot write %s\n", out);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc >= 3 && !strcmp(argv[1], "list")) {
		int i = 2;

		if (!strcmp(argv[2], "-l") && argc >= 5) {
			level = atoi(argv[3]);
			i = 4;
		}
		if (load(argv[i]))
			return 1;
		rc = list();
	} else if (argc >= 5 && !strcmp(argv[1], "apply")) {
		if (load(argv[2]))
			return 1;
		rc = apply(argv[3], argv[4], argv + 5, argc - 5);
	} else {
		fprintf(stderr, "usage: mutate list [-l LEVEL] FILE | mutate apply IN OUT OP ARGS...\n");
		return 2;
	}
	free(buf);
	return rc;
}
