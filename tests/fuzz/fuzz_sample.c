/* libFuzzer target for the sample decoder (perf_sample__parse, perf_sample__parse_id): the
 * input's first 41 bytes are the attr fields the decoder reads (sample_type, read_format,
 * sample_regs_user, sample_regs_intr, branch_sample_type, a flags byte for sample_id_all and the
 * record's misc), the rest is the record's body, copied into a buffer of the record's exact size
 * so that ASan sees any read past it. Seeds: tests/fuzz/corpus/fuzz_sample/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perf/sample.h"

#define PREFIX 41

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The decoder's pointers must lie inside the record. */
static void check_inside(const void *rec, size_t size, const void *p, uint64_t len)
{
	const uint8_t *b = rec, *q = p;

	if (!p)
		return;
	if (q < b || q > b + size || len > (uint64_t)(b + size - q))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_attr attr;
	struct perf_event_header *rec;
	struct perf_sample s;
	size_t body, rsize;
	uint64_t v, sum = 0;

	if (size < PREFIX)
		return 0;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sample_type = get_u64(data);
	attr.read_format = get_u64(data + 8);
	attr.sample_regs_user = get_u64(data + 16);
	attr.sample_regs_intr = get_u64(data + 24);
	attr.branch_sample_type = get_u64(data + 32);
	attr.sample_id_all = data[40] & 1;
	body = size - PREFIX;
	if (body > 0xffff - sizeof(*rec))
		body = 0xffff - sizeof(*rec);
	rsize = sizeof(*rec) + body;
	rec = malloc(rsize);
	if (!rec)
		return 0;
	memcpy(rec + 1, data + PREFIX, body);
	rec->size = rsize;
	rec->misc = data[40] >> 1;

	rec->type = PERF_RECORD_SAMPLE;
	if (perf_sample__parse(&attr, rec, &s) == 0) {
		check_inside(rec, rsize, s.callchain, s.callchain_nr * 8);
		check_inside(rec, rsize, s.regs, (uint64_t)__builtin_popcountll(s.regs_mask) * 8);
		check_inside(rec, rsize, s.stack, s.stack_size);
		if (s.stack_dyn_size > s.stack_size)
			__builtin_trap();
		for (uint64_t i = 0; i < s.callchain_nr; i++)
			sum += s.callchain[i];
		for (uint64_t i = 0; i < s.stack_size; i++)
			sum += s.stack[i];
		for (int r = 0; r < 64; r++)
			if (perf_sample__reg(&s, r, &v))
				sum += v;
	}
	/* The same bytes as the sample_id trailer of some other record. */
	rec->type = PERF_RECORD_COMM;
	if (perf_sample__parse_id(&attr, rec, &s) == 0)
		sum += s.pid + s.tid + s.time + s.id + s.cpu;
	free(rec);
	return sum == 0x5eed ? 0 : 0;
}
