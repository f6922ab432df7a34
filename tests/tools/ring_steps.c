/* ring_steps: the largest step back in time between two records of one CPU in a perf.data, in
 * file order (COMPRESSED records decoded in place), beside what the file's ring-order claim
 * (src/perf/ring_order.h) says. Records of time 0 (made from /proc, or at the end) are left out,
 * as the claim leaves them out.
 *
 * usage: ring_steps FILE
 * prints "records N cpus C steps S max_back_ns B claimed_ns K" (K is -1 without a claim);
 * exit 0, or 2 on a file it cannot read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/reader.h"
#include "perf/ring_order.h"
#include "perf/sample.h"

#define MAX_CPUS 4096

struct walk {
	const struct perf_reader *r;
	uint64_t newest[MAX_CPUS];
	uint64_t records, steps, max_back;
	unsigned int cpus;
};

static int on_record(const struct perf_reader_record *rec, void *ctx)
{
	struct walk *w = ctx;
	const struct perf_event_attr *a;
	struct perf_sample s;
	int e;

	if (rec->attr_index < 0 || rec->time == PERF_READER_NO_TIME || !rec->time)
		return 0;
	a = &perf_reader__attr(w->r, rec->attr_index)->attr;
	e = rec->hdr->type == PERF_RECORD_SAMPLE ? perf_sample__parse(a, rec->hdr, &s) :
						   perf_sample__parse_id(a, rec->hdr, &s);
	if (e < 0 || !(a->sample_type & PERF_SAMPLE_CPU) || s.cpu >= MAX_CPUS)
		return 0;
	w->records++;
	if (!w->newest[s.cpu])
		w->cpus++;
	if (rec->time >= w->newest[s.cpu]) {
		w->newest[s.cpu] = rec->time;
	} else {
		w->steps++;
		if (w->newest[s.cpu] - rec->time > w->max_back)
			w->max_back = w->newest[s.cpu] - rec->time;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct perf_reader *r = perf_reader__new(NULL);
	static struct walk w;
	struct ring_order o;
	int e;

	if (argc != 2) {
		fprintf(stderr, "usage: ring_steps FILE\n");
		return 2;
	}
	if (!r || (e = perf_reader__open(r, argv[1])) < 0) {
		fprintf(stderr, "ring_steps: %s\n", r ? perf_reader__error(r) : "out of memory");
		return 2;
	}
	w.r = r;
	if (perf_reader__for_each(r, on_record, &w) < 0 || perf_reader__damage(r)) {
		fprintf(stderr, "ring_steps: cannot read all of %s\n", argv[1]);
		return 2;
	}
	printf("records %llu cpus %u steps %llu max_back_ns %llu claimed_ns %lld\n",
	       (unsigned long long)w.records, w.cpus, (unsigned long long)w.steps,
	       (unsigned long long)w.max_back,
	       ring_order__read(r, &o) == 1 ? (long long)o.max_back_ns : -1LL);
	perf_reader__free(r);
	return 0;
}
