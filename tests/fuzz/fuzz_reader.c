/* libFuzzer target for perf_reader and perf_sample: each input is written to a memfd and read
 * through every entry point (open, the header as preport --header prints it, both iterations
 * with sample and trailer decoding, stats, repair into another memfd, then the repaired file
 * again). The file-order iteration runs again with a decoding thread (frames decoded apart): it
 * must deliver the same records. Build with `make fuzz`; run as
 * build/fuzz_reader -max_total_time=120 tests/corpus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perf/reader.h"
#include "perf/sample.h"
#include "report/header.h"

struct seen {
	const struct perf_reader *r;
	uint64_t n, sum; /* records delivered; their offsets, sizes and first words mixed */
};

static int visit(const struct perf_reader_record *rec, void *ctx)
{
	struct seen *sn = ctx;
	const struct perf_reader *r = sn->r;
	const struct perf_reader_attr *a;
	struct perf_sample s;
	uint64_t v, w = 0;

	memcpy(&w, (const uint8_t *)rec->hdr + 8, rec->hdr->size >= 16 ? 8 : 0);
	sn->n++;
	sn->sum = (sn->sum ^ (rec->offset * 31 + rec->hdr->size) ^ w) * 0x100000001b3ull;
	if (rec->attr_index < 0)
		return 0;
	a = perf_reader__attr(r, rec->attr_index);
	if (rec->hdr->type == PERF_RECORD_SAMPLE) {
		if (perf_sample__parse(&a->attr, rec->hdr, &s) == 0) {
			perf_sample__reg(&s, 8, &v);
			/* Touch what the pointers claim, so ASan sees any overrun. */
			for (uint64_t i = 0; i < s.callchain_nr; i++)
				v += s.callchain[i];
			for (uint64_t i = 0; i < s.stack_size; i++)
				v += s.stack[i];
			if (v == 0x1234567)
				return 1;
		}
	} else {
		perf_sample__parse_id(&a->attr, rec->hdr, &s);
	}
	return 0;
}

static void read_everything(const char *path, const char *repair_path)
{
	struct perf_reader *r = perf_reader__new(NULL);
	struct perf_reader_stats st;
	const struct perf_reader_info *in;

	if (!r)
		return;
	if (perf_reader__open(r, path) < 0) {
		/* A refusal always says why. */
		if (!perf_reader__error(r)[0])
			abort();
		perf_reader__free(r);
		return;
	}
	in = perf_reader__info(r);
	/* preport --header-only's printout: every feature section decoded */
	{
		FILE *null = fopen("/dev/null", "we");

		if (null) {
			report__fprintf_header(null, r);
			fclose(null);
		}
	}
	for (int i = 0; i < in->cmdline_argc; i++)
		(void)strlen(in->cmdline_argv[i]);
	for (size_t i = 0; i < in->nr_build_ids; i++)
		(void)strlen(in->build_ids[i].path);
	for (size_t i = 0; i < perf_reader__nr_attrs(r); i++) {
		const struct perf_reader_attr *a = perf_reader__attr(r, i);

		if (a->name)
			(void)strlen(a->name);
		for (size_t j = 0; j < a->nr_ids; j++)
			perf_reader__attr_of_id(r, a->ids[j]);
	}
	{
		struct seen one = { r }, apart = { r }, ordered = { r };

		perf_reader__for_each(r, visit, &one);
		perf_reader__for_each_ordered(r, visit, &ordered);
		perf_reader__set_decode_thread(r, true);
		perf_reader__for_each(r, visit, &apart);
		perf_reader__set_decode_thread(r, false);
		if (apart.n != one.n || apart.sum != one.sum)
			abort(); /* the decoding thread delivered other records */
	}
	perf_reader__stats(r, &st);
	perf_reader__damage(r);
	if (repair_path)
		perf_reader__repair(r, repair_path);
	perf_reader__free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int in_fd = -1, out_fd = -1;
	static char in_path[64], out_path[64];

	if (in_fd < 0) {
		in_fd = memfd_create("fuzz-in", 0);
		out_fd = memfd_create("fuzz-out", 0);
		snprintf(in_path, sizeof(in_path), "/proc/self/fd/%d", in_fd);
		snprintf(out_path, sizeof(out_path), "/proc/self/fd/%d", out_fd);
	}
	if (ftruncate(in_fd, 0) < 0 || pwrite(in_fd, data, size, 0) != (ssize_t)size)
		return 0;
	read_everything(in_path, out_path);
	/* What repair wrote must itself be readable. */
	read_everything(out_path, NULL);
	return 0;
}
