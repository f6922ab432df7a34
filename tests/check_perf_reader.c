/* Tests of perf_reader against real files from `perf record` (counts compared with
 * `perf report --stats`), against files cut at every offset or with corrupted fields, against a
 * synthesized precord-style file whose COMPRESSED records hold two threads' frames, and against
 * the committed corpus of damaged files (tests/corpus). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
/* ZSTD_frameHeaderSize */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "lib/cleanup.h"
#include "perf/abi.h"
#include "perf/reader.h"
#include "perf/sample.h"
#include "perf/compress.h"
#include "perf/writer.h"

static char dir[64];

/* Check records every passing ck_assert (a write to its log): in loops over thousands of cuts
 * that dominates, so hot loops use this, which only reports failures. */
#define CHECK(cond, fmt, ...)                                           \
	do {                                                            \
		if (!(cond))                                            \
			ck_abort_msg("%s: " fmt, #cond, ##__VA_ARGS__); \
	} while (0)

static void make_dir(void)
{
	strcpy(dir, "/tmp/check_perf_reader.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static const char *path_in(const char *name)
{
	static char buf[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* ---- file helpers ---- */

struct blob {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct blob *b, const void *src, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 4096;
		b->p = realloc(b->p, b->cap);
		ck_assert_ptr_nonnull(b->p);
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

static void put64(struct blob *b, uint64_t v)
{
	put(b, &v, 8);
}

static struct blob slurp(const char *path)
{
	struct blob b = { 0 };
	struct stat st;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	b.n = b.cap = st.st_size;
	b.p = malloc(b.n + 1);
	ck_assert_int_eq(read(fd, b.p, b.n), (ssize_t)b.n);
	close(fd);
	return b;
}

static void spit(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
	close(fd);
}

/* ---- collecting records ---- */

struct rec {
	uint32_t type;
	uint16_t size;
	uint64_t offset, time;
	bool compressed;
	int attr_index;
	uint64_t sum; /* cheap content fingerprint */
};

struct recs {
	struct rec *v;
	size_t n, cap;
	const struct perf_reader *r;
	int bad_samples;
};

static uint64_t fingerprint(const struct perf_event_header *h)
{
	const uint8_t *p = (const void *)h;
	uint64_t s = 1469598103934665603ULL;

	for (size_t i = 0; i < h->size; i++)
		s = (s ^ p[i]) * 1099511628211ULL;
	return s;
}

static int collect(const struct perf_reader_record *rr, void *ctx)
{
	struct recs *rs = ctx;
	struct rec *e;

	CHECK((uintptr_t)rr->hdr % 8 == 0, "misaligned record");
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 256;
		rs->v = realloc(rs->v, rs->cap * sizeof(*rs->v));
	}
	e = &rs->v[rs->n++];
	e->type = rr->hdr->type;
	e->size = rr->hdr->size;
	e->offset = rr->offset;
	e->time = rr->time;
	e->compressed = rr->compressed;
	e->attr_index = rr->attr_index;
	e->sum = fingerprint(rr->hdr);
	if (rs->r && rr->attr_index >= 0) {
		const struct perf_event_attr *a = &perf_reader__attr(rs->r, rr->attr_index)->attr;
		struct perf_sample s;

		if (rr->hdr->type == PERF_RECORD_SAMPLE) {
			if (perf_sample__parse(a, rr->hdr, &s) < 0)
				rs->bad_samples++;
			else if (s.time != rr->time)
				rs->bad_samples++;
		} else if (perf_sample__parse_id(a, rr->hdr, &s) < 0 ||
			   (rr->time != PERF_READER_NO_TIME && s.time != rr->time)) {
			rs->bad_samples++;
		}
	}
	return 0;
}

static struct recs read_once(struct perf_reader *r, bool ordered)
{
	struct recs rs = { .r = r };
	int err = ordered ? perf_reader__for_each_ordered(r, collect, &rs) :
			    perf_reader__for_each(r, collect, &rs);

	ck_assert_int_eq(err, 0);
	return rs;
}

/* new + open: the reader, or NULL with errno set (the reader's reason then lost). */
static struct perf_reader *open_reader(const char *path, const struct perf_reader_opts *o)
{
	struct perf_reader *r = perf_reader__new(o);
	int e;

	ck_assert_ptr_nonnull(r);
	e = perf_reader__open(r, path);
	if (e < 0) {
		perf_reader__free(r);
		errno = -e;
		return NULL;
	}
	return r;
}

/* got holds the records of want, in its order, and as many bad samples. */
static void assert_same_recs(const struct recs *got, const struct recs *want)
{
	ck_assert_uint_eq(got->n, want->n);
	ck_assert_int_eq(got->bad_samples, want->bad_samples);
	for (size_t i = 0; i < want->n; i++) {
		ck_assert_uint_eq(got->v[i].offset, want->v[i].offset);
		ck_assert_uint_eq(got->v[i].sum, want->v[i].sum);
		ck_assert_uint_eq(got->v[i].time, want->v[i].time);
	}
}

/* Every record, read twice: decoded on the calling thread, then on a decoding thread of its
 * own; both give the same records, counts and damage. */
static struct recs read_all(struct perf_reader *r, bool ordered)
{
	struct recs rs = read_once(r, ordered), rt;
	struct perf_reader_stats st = *perf_reader__walk_stats(r);
	const struct perf_reader_damage *d = perf_reader__damage(r);
	uint64_t doff = d ? d->offset : UINT64_MAX;

	perf_reader__set_decode_thread(r, true);
	rt = read_once(r, ordered);
	perf_reader__set_decode_thread(r, false);
	d = perf_reader__damage(r);
	ck_assert_uint_eq(d ? d->offset : UINT64_MAX, doff);
	ck_assert(!memcmp(&st, perf_reader__walk_stats(r), sizeof(st)));
	assert_same_recs(&rt, &rs);
	free(rt.v);
	return rs;
}

static struct perf_reader *open_ok(const char *path)
{
	struct perf_reader *r = perf_reader__new(NULL);
	int e;

	ck_assert_ptr_nonnull(r);
	e = perf_reader__open(r, path);
	ck_assert_msg(e == 0, "open %s: %s (%s)", path, strerror(-e), perf_reader__error(r));
	return r;
}

/* Parse `perf report --stats`; returns how many "NAME events: N" lines of the aggregated part
 * were found and checks each against ours. */
static int compare_with_perf(const char *path, const struct perf_reader_stats *st)
{
	char cmd[512], line[256];
	FILE *p;
	int lines = 0;
	bool aggregated = false;

	snprintf(cmd, sizeof(cmd), "perf report --stats -i %s 2>/dev/null", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char name[64];
		unsigned long long n;
		uint32_t t;

		if (strstr(line, "Aggregated stats:")) {
			aggregated = true;
			continue;
		}
		if (strstr(line, " stats:"))
			aggregated = false;
		if (!aggregated || sscanf(line, " %63[A-Z_0-9] events: %llu", name, &n) != 2)
			continue;
		lines++;
		if (!strcmp(name, "TOTAL")) {
			ck_assert_uint_eq(st->total, n);
			continue;
		}
		for (t = 1; t < PERF_RECORD_HEADER_MAX; t++)
			if (perf_reader__type_name(t) && !strcmp(perf_reader__type_name(t), name))
				break;
		ck_assert_msg(t < PERF_RECORD_HEADER_MAX, "unknown perf type %s", name);
		ck_assert_msg(st->nr_by_type[t] == n, "%s: %s perf %llu ours %llu", path, name, n,
			      (unsigned long long)st->nr_by_type[t]);
	}
	pclose(p);
	return lines;
}

/* How many records perf report counted out of order (its "N out of order events recorded"
 * warning; 0 without one): a record older than what its previous round flushed. perf writes
 * such records now and then (-z at 20 kHz on a busy machine: 1 in a run of the series), and the
 * reader counts them by the same rule. */
static uint64_t perf_unordered(const char *path)
{
	char cmd[512], line[256];
	unsigned long long n = 0, v;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "perf report -i %s --stdio --sort pid 2>&1 >/dev/null", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, " %llu out of order events recorded", &v) == 1)
			n = v;
	pclose(p);
	return n;
}

static uint64_t nr_types(const struct perf_reader_stats *st)
{
	uint64_t k = 0;

	for (int t = 0; t < PERF_RECORD_HEADER_MAX; t++)
		k += st->nr_by_type[t] != 0;
	return k;
}

/* ---- real files from perf record ---- */

#define BUSY "sh -c 'i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done'"

/* perf record spends about a second waiting whatever the workload: run them side by side. */
static void record_files(void)
{
	make_dir();
	ck_assert_int_eq(
		run("cd %s && "
		    "{ perf record -q -e cpu-clock -o plain.data -- " BUSY " & "
		    /* A small ring and a high rate so that -z writes several COMPRESSED
		     * records (at the default 4000 Hz it wrote only two now and then). */
		    "perf record -q -z -m 2 -F 20000 -e cpu-clock -o z.data -- " BUSY " & "
		    "perf record -q -e cpu-clock --call-graph dwarf -o dwarf.data -- " BUSY " & "
		    "perf record -q -a -e cpu-clock -o sys.data -- sleep 0.2 & "
		    "perf record -q -e cpu-clock -o small.data -- true & "
		    "perf record -q -z -e cpu-clock -o small-z.data -- " BUSY " & "
		    "wait; } 2>/dev/null && "
		    "test -s plain.data -a -s z.data -a -s dwarf.data -a -s sys.data -a "
		    "-s small.data -a -s small-z.data", dir), 0);
}

static void check_real(const char *name, bool compressed)
{
	struct perf_reader *r = open_ok(path_in(name));
	const struct perf_reader_info *in = perf_reader__info(r);
	struct perf_reader_stats st;
	struct recs file, ord;
	uint64_t last = 0;
	size_t i, nsamples = 0;

	ck_assert_ptr_null(perf_reader__damage(r));
	ck_assert_uint_eq(perf_reader__warnings(r), 0);
	ck_assert_int_eq(perf_reader__stats(r, &st), 0);
	ck_assert_int_ge(compare_with_perf(path_in(name), &st), nr_types(&st) + 1);
	ck_assert_uint_gt(st.nr_by_type[PERF_RECORD_SAMPLE], 0);
	ck_assert_uint_eq(st.nr_by_type[PERF_RECORD_COMPRESSED] > 0, compressed);
	/* perf -z never ends its one frame */
	ck_assert_int_eq(perf_reader__one_stream(r), compressed);

	/* Features. */
	ck_assert_ptr_nonnull(in->hostname);
	ck_assert_ptr_nonnull(in->osrelease);
	ck_assert_str_eq(in->arch, "x86_64");
	ck_assert_uint_ge(in->nr_cpus_online, 1);
	ck_assert_uint_ge(in->nr_cpus_avail, in->nr_cpus_online);
	ck_assert_int_ge(in->cmdline_argc, 3);
	ck_assert_str_eq(perf_reader__attr(r, 0)->name, "cpu-clock");
	ck_assert(perf_reader__has_feature(r, FEAT_EVENT_DESC));
	if (compressed) {
		ck_assert_uint_eq(in->comp_type, 1);
		ck_assert_uint_gt(in->comp_mmap_len, 0);
	}

	file = read_all(r, false);
	ord = read_all(r, true);
	ck_assert_uint_eq(file.n, st.total - st.nr_by_type[PERF_RECORD_COMPRESSED]);
	ck_assert_uint_eq(ord.n, file.n);
	ck_assert_int_eq(file.bad_samples, 0);
	ck_assert_uint_eq(perf_reader__nr_unordered(r), perf_unordered(path_in(name)));
	for (i = 0; i < file.n; i++) {
		ck_assert_uint_eq(file.v[i].compressed, compressed && file.v[i].type < 64 &&
							    file.v[i].time > 0);
		nsamples += file.v[i].type == PERF_RECORD_SAMPLE;
		if (i)
			ck_assert_uint_ge(file.v[i].offset, file.v[i - 1].offset);
	}
	ck_assert_uint_eq(nsamples, st.nr_by_type[PERF_RECORD_SAMPLE]);
	for (i = 0; i < ord.n; i++) {
		/* (time 0 is none to perf too: such a record goes when read, LOST_SAMPLES last) */
		if (ord.v[i].time == PERF_READER_NO_TIME || !ord.v[i].time)
			continue;
		ck_assert_uint_ge(ord.v[i].time, last);
		last = ord.v[i].time;
	}
	if (perf_reader__has_feature(r, FEAT_SAMPLE_TIME))
		ck_assert_uint_le(in->first_sample_time, in->last_sample_time);
	free(file.v);
	free(ord.v);
	perf_reader__free(r);
}

START_TEST(test_perf_plain)
{
	struct perf_reader *r;

	check_real("plain.data", false);
	/* perf collects build ids at the end of an uncompressed session. */
	r = open_ok(path_in("plain.data"));
	ck_assert_uint_gt(perf_reader__info(r)->nr_build_ids, 0);
	ck_assert_ptr_nonnull(perf_reader__info(r)->build_ids[0].path);
	ck_assert_uint_eq(perf_reader__info(r)->build_ids[0].id_len, 20);
	perf_reader__free(r);
}
END_TEST

START_TEST(test_perf_compressed)
{
	check_real("z.data", true);
	check_real("small-z.data", true);
}
END_TEST

START_TEST(test_perf_dwarf)
{
	struct perf_reader *r;
	const struct perf_event_attr *a;

	check_real("dwarf.data", false);
	r = open_ok(path_in("dwarf.data"));
	a = &perf_reader__attr(r, 0)->attr;
	ck_assert(a->sample_type & PERF_SAMPLE_STACK_USER);
	ck_assert(a->sample_type & PERF_SAMPLE_REGS_USER);
	perf_reader__free(r);
}
END_TEST

START_TEST(test_perf_system_wide)
{
	check_real("sys.data", false);
}
END_TEST

/* Dwarf samples decode with a user stack whose dyn_size fits and an IP register. */
static struct perf_reader *stack_reader;
static int check_stack(const struct perf_reader_record *rr, void *ctx)
{
	size_t *n = ctx;
	struct perf_sample s;
	uint64_t ip;

	if (rr->hdr->type != PERF_RECORD_SAMPLE)
		return 0;
	ck_assert_int_eq(perf_sample__parse(&perf_reader__attr(stack_reader, 0)->attr, rr->hdr,
					    &s), 0);
	if (s.cpumode == PERF_RECORD_MISC_USER && s.stack_size) {
		ck_assert_uint_le(s.stack_dyn_size, s.stack_size);
		ck_assert(perf_sample__reg(&s, PERF_X86_IP, &ip));
		ck_assert_uint_eq(ip, s.ip);
		n[0]++;
	}
	return 0;
}

START_TEST(test_perf_dwarf_stacks)
{
	size_t n[2] = { 0, 0 };

	stack_reader = open_ok(path_in("dwarf.data"));
	ck_assert_int_eq(perf_reader__for_each(stack_reader, check_stack, n), 0);
	ck_assert_uint_gt(n[0], 0);
	perf_reader__free(stack_reader);
}
END_TEST

/* Cut a file at every offset: no crash; every record that lies wholly before the damage is
 * delivered (and no other); the damage offset is at or before the cut. */
static void truncate_everywhere(const char *name)
{
	struct blob b = slurp(path_in(name));
	struct perf_reader *r = open_ok(path_in(name));
	struct recs full = read_all(r, false);
	uint64_t data_off = perf_reader__header(r)->data.offset;
	const char *cut = path_in("cut.data");
	size_t len;
	int fd;

	perf_reader__free(r);
	spit(cut, b.p, b.n);
	fd = open(cut, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	for (len = b.n; len-- > 0;) {
		const struct perf_reader_damage *d;
		struct recs got = { 0 };
		size_t expect = 0, i;

		CHECK(ftruncate(fd, len) == 0, "%m");
		r = open_reader(cut, NULL);
		if (!r) {
			CHECK(len < data_off, "open failed at cut %zu: %s", len, strerror(errno));
			continue;
		}
		CHECK(perf_reader__for_each(r, collect, &got) == 0, "cut %zu", len);
		d = perf_reader__damage(r);
		CHECK(d, "no damage reported for a cut at %zu", len);
		CHECK(d->offset <= len, "cut %zu: damage at %lu", len, (unsigned long)d->offset);
		for (i = 0; i < full.n; i++)
			expect += full.v[i].offset < d->offset;
		CHECK(got.n == expect, "cut %zu: %zu records, expected %zu (damage %lu %s)", len,
		      got.n, expect, (unsigned long)d->offset, d->reason);
		for (i = 0; i < got.n; i++)
			CHECK(got.v[i].sum == full.v[i].sum, "cut %zu: record %zu differs", len, i);
		free(got.v);
		/* The ordered walk sees the same records (checked on a sample of the cuts). */
		if (len % 7 == 0) {
			got = (struct recs){ 0 };
			CHECK(perf_reader__for_each_ordered(r, collect, &got) == 0, "cut %zu", len);
			CHECK(got.n == expect, "cut %zu: ordered %zu of %zu", len, got.n, expect);
			free(got.v);
		}
		perf_reader__free(r);
	}
	close(fd);
	free(full.v);
	free(b.p);
}

START_TEST(test_truncate_plain)
{
	truncate_everywhere("small.data");
}
END_TEST

START_TEST(test_truncate_compressed)
{
	truncate_everywhere("small-z.data");
}
END_TEST

static struct perf_file_header *hdr_of(struct blob *b)
{
	return (struct perf_file_header *)b->p;
}

static void expect_open_fails(struct blob *b, int err, const char *what)
{
	struct perf_reader *r = perf_reader__new(NULL);
	int e;

	ck_assert_ptr_nonnull(r);
	spit(path_in("bad.data"), b->p, b->n);
	e = perf_reader__open(r, path_in("bad.data"));
	ck_assert_msg(e < 0, "%s: opened", what);
	ck_assert_msg(e == -err, "%s: error %d (%s)", what, e, perf_reader__error(r));
	/* The reason names the file and says more than strerror. */
	ck_assert_msg(strstr(perf_reader__error(r), path_in("bad.data")), "%s: '%s'", what,
		      perf_reader__error(r));
	ck_assert_msg(!strstr(perf_reader__error(r), strerror(err)), "%s: '%s'", what,
		      perf_reader__error(r));
	perf_reader__free(r);
}

START_TEST(test_corrupt_header)
{
	struct blob orig = slurp(path_in("small.data"));
	struct blob b = { malloc(orig.n), orig.n, orig.n };
	static const uint64_t huge[] = { UINT64_MAX, UINT64_MAX - 7, 1ULL << 40, 0 };
	struct perf_reader *r;

#define RESET() memcpy(b.p, orig.p, orig.n)
	for (size_t i = 0; i < ARRAY_SIZE(huge); i++) {
		RESET();
		hdr_of(&b)->attrs.offset = huge[i] ? huge[i] : orig.n - 8;
		expect_open_fails(&b, EBADMSG, "attrs.offset");
		RESET();
		hdr_of(&b)->attrs.size = huge[i] ? huge[i] : 0;
		expect_open_fails(&b, EBADMSG, "attrs.size");
		RESET();
		hdr_of(&b)->attr_size = huge[i];
		expect_open_fails(&b, EBADMSG, "attr_size");
		if (huge[i]) {
			RESET();
			hdr_of(&b)->data.offset = huge[i];
			expect_open_fails(&b, EBADMSG, "data.offset");
		}
	}
	RESET();
	hdr_of(&b)->attr_size = 8;
	expect_open_fails(&b, EBADMSG, "attr_size 8");
	/* ids pointing outside the file */
	RESET();
	memcpy(b.p + hdr_of(&b)->attrs.offset + hdr_of(&b)->attr_size - 16, &huge[0], 8);
	expect_open_fails(&b, EBADMSG, "ids.offset");
	RESET();
	hdr_of(&b)->size = 96;
	expect_open_fails(&b, EBADMSG, "header size 96");
	RESET();
	/* a file header claiming pipe mode: what follows is no stream of records */
	hdr_of(&b)->size = 16;
	expect_open_fails(&b, EBADMSG, "pipe header");
	RESET();
	hdr_of(&b)->magic = __builtin_bswap64(PERF_MAGIC2);
	expect_open_fails(&b, EPROTONOSUPPORT, "big endian");
	RESET();
	b.p[0] = 'X';
	expect_open_fails(&b, EINVAL, "magic");
	b.n = 10;
	expect_open_fails(&b, EINVAL, "tiny file");
	b.n = orig.n;

	/* data.size huge: records read to the end of the file, damage reported, nothing lost. */
	RESET();
	hdr_of(&b)->data.size = UINT64_MAX - 100;
	spit(path_in("bad.data"), b.p, b.n);
	r = open_ok(path_in("bad.data"));
	{
		struct recs rs = read_all(r, false);
		struct perf_reader *o = open_ok(path_in("small.data"));
		struct recs ro = read_all(o, false);

		ck_assert_ptr_nonnull(perf_reader__damage(r));
		ck_assert_uint_ge(rs.n, ro.n);
		free(rs.v);
		free(ro.v);
		perf_reader__free(o);
	}
	perf_reader__free(r);

	/* Feature section pointing outside the file: data intact, feature damage. */
	RESET();
	{
		struct perf_file_header *h = hdr_of(&b);
		uint64_t idx = h->data.offset + h->data.size;

		memcpy(b.p + idx, &huge[0], 8);
		spit(path_in("bad.data"), b.p, b.n);
		r = open_ok(path_in("bad.data"));
		ck_assert_ptr_nonnull(perf_reader__damage(r));
		ck_assert_uint_ge(perf_reader__damage(r)->offset, idx);
		ck_assert_ptr_eq(perf_reader__feat_damage(r), perf_reader__damage(r));
		perf_reader__free(r);
	}
	free(b.p);
	free(orig.p);
#undef RESET
}
END_TEST

/* Records whose size is 0 or not a multiple of 8: records before them all delivered. */
START_TEST(test_corrupt_record_size)
{
	struct blob orig = slurp(path_in("small.data"));
	struct perf_reader *r = open_ok(path_in("small.data"));
	struct recs full = read_all(r, false);
	static const uint16_t sizes[] = { 0, 4, 12, 9 };
	size_t k;

	perf_reader__free(r);
	ck_assert_uint_ge(full.n, 6);
	for (k = 1; k < 6; k++) {
		for (size_t s = 0; s < ARRAY_SIZE(sizes); s++) {
			struct blob b = { malloc(orig.n), orig.n, orig.n };
			const struct perf_reader_damage *d;
			struct recs got;

			memcpy(b.p, orig.p, orig.n);
			/* Don't turn the record into a COMPRESSED one (odd sizes are legal there). */
			memcpy(b.p + full.v[k].offset + 6, &sizes[s], 2);
			spit(path_in("bad.data"), b.p, b.n);
			r = open_ok(path_in("bad.data"));
			got = read_all(r, false);
			d = perf_reader__damage(r);
			ck_assert_ptr_nonnull(d);
			ck_assert_uint_eq(d->offset, full.v[k].offset);
			ck_assert_ptr_null(perf_reader__feat_damage(r)); /* the records' */
			ck_assert_uint_eq(got.n, k);
			free(got.v);
			perf_reader__free(r);
			free(b.p);
		}
	}
	free(full.v);
	free(orig.p);
}
END_TEST

struct comp_pos {
	uint64_t off[1024];
	uint16_t size[1024];
	int n;
};

/* Offsets of the COMPRESSED records of a file (walking the headers by hand). */
static struct comp_pos find_compressed(const struct blob *b)
{
	const struct perf_file_header *h = (const void *)b->p;
	struct comp_pos c = { .n = 0 };
	uint64_t off = h->data.offset;

	while (off < h->data.offset + h->data.size && c.n < 1024) {
		struct perf_event_header eh;

		memcpy(&eh, b->p + off, sizeof(eh));
		if (eh.type == PERF_RECORD_COMPRESSED) {
			c.off[c.n] = off;
			c.size[c.n++] = eh.size;
		}
		off += eh.size;
	}
	return c;
}

/* precord's compressed files: a reader's first frames may be small and whole in one COMPRESSED
 * record, later ones long (megabytes of input, streamed) and cut into many records, each of
 * which decompresses to at most mmap_len. A reader that sized its output by mmap_len per frame
 * called such a file damaged ("Destination buffer is too small"). Every sample must come out. */
static size_t put_samples(uint8_t *buf, size_t n, uint64_t *t)
{
	for (size_t i = 0; i < n; i++) {
		struct { struct perf_event_header h; uint64_t ip; uint32_t pid, tid; uint64_t time; } s = {
			{ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 32 }, 0x400000 + (*t % 4096) * 16,
			42, 42 + (uint32_t)(*t % 3), *t };
		(*t)++;
		memcpy(buf + 32 * i, &s, 32);
	}
	return 32 * n;
}

START_TEST(test_long_frame_after_whole_one)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
				     .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME };
	uint64_t id = 1, t = 1000, nsamples = 0;
	struct perf_writer_event ev = { "cpu-clock", &a, &id, 1 };
	struct perf_writer_opts wo = { .events = &ev, .nr_events = 1, .comp_level = 1,
				       .comp_mmap_len = COMPRESS_MAX_DECOMPRESSED };
	char path[] = "/tmp/check_perf_reader_frames.XXXXXX";
	int fd = mkstemp(path);
	struct compress *z = compress__new(1);
	uint8_t *buf = malloc(1 << 20);
	struct perf_writer *w;
	struct perf_reader *r;
	const void *out;
	ssize_t n;
	struct recs got;

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_ptr_nonnull(z);
	w = perf_writer__open(path, &wo);
	ck_assert_ptr_nonnull(w);
	/* a small frame, whole in one record */
	n = compress__compress(z, buf, put_samples(buf, 100, &t), &out);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(perf_writer__append(w, &(struct iovec){ (void *)out, (size_t)n }, 1), 0);
	nsamples += 100;
	/* then a long one: 6 MiB of records streamed into one frame */
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(compress__feed(z, buf, put_samples(buf, 32768, &t)), 0);
		nsamples += 32768;
	}
	n = compress__finish(z, &out);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(perf_writer__append(w, &(struct iovec){ (void *)out, (size_t)n }, 1), 0);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	perf_writer__free(w);

	r = open_reader(path, NULL);
	ck_assert_ptr_nonnull(r);
	got = read_all(r, false);
	ck_assert_msg(!perf_reader__damage(r), "damaged at %llu: %s",
		      (unsigned long long)perf_reader__damage(r)->offset, perf_reader__damage(r)->reason);
	ck_assert_uint_eq(got.n, nsamples); /* every record is a sample */
	free(got.v);
	perf_reader__free(r);
	compress__free(z);
	free(buf);
	unlink(path);
}
END_TEST

/* One COMPRESSED record: the payload, then a skippable frame that pads it to 8 bytes. */
static void append_compressed(struct perf_writer *w, const void *payload, size_t n)
{
	uint8_t rec[8 + 65528] = { 0 };
	size_t pad = (8 - n % 8) % 8;
	struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, (uint16_t)(8 + n + 8 + pad) };
	uint8_t skip[8] = { 0x5f, 0x2a, 0x4d, 0x18, (uint8_t)pad };

	ck_assert_uint_le(n + 8 + pad, sizeof(rec) - 8);
	memcpy(rec, &h, 8);
	memcpy(rec + 8, payload, n);
	memcpy(rec + 8 + n, skip, 8);
	ck_assert_int_eq(perf_writer__append(w, &(struct iovec){ rec, h.size }, 1), 0);
}

/* One COMPRESSED record carrying exactly n bytes of the stream (odd sizes too, as perf writes). */
static void append_raw_compressed(struct perf_writer *w, const void *payload, size_t n)
{
	uint8_t rec[8 + 65528];
	struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, (uint16_t)(8 + n) };

	ck_assert_uint_le(n, sizeof(rec) - 8);
	memcpy(rec, &h, 8);
	memcpy(rec + 8, payload, n);
	ck_assert_int_eq(perf_writer__append(w, &(struct iovec){ rec, h.size }, 1), 0);
}

static void append_round(struct perf_writer *w)
{
	struct perf_event_header h = { PERF_RECORD_FINISHED_ROUND, 0, 8 };

	ck_assert_int_eq(perf_writer__append(w, &(struct iovec){ &h, 8 }, 1), 0);
}

static int stop_at_first(const struct perf_reader_record *rec, void *ctx)
{
	return 1;
}

/* A file of the given layout read on the calling thread and with a decoding thread (read_all:
 * the same records, offsets, counts and damage), damaged or not as said, and once more with a
 * callback that stops at the first record (a frame being gathered then must not leak: ASan's
 * run): its samples, and the frames decoded apart. */
/* A file of one cpu-clock attr laid out by layout, at /tmp/check_perf_reader_NAME.PID (into
 * path, of len bytes). */
static void write_frames_file(char *path, size_t len, const char *name,
			      void (*layout)(struct perf_writer *w))
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
				     .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME };
	uint64_t id = 1;
	struct perf_writer_event ev = { "cpu-clock", &a, &id, 1 };
	struct perf_writer_opts wo = { .events = &ev, .nr_events = 1, .comp_level = 1,
				       .comp_mmap_len = COMPRESS_MAX_DECOMPRESSED };
	struct perf_writer *w;

	snprintf(path, len, "/tmp/check_perf_reader_%s.%d", name, (int)getpid());
	w = perf_writer__open(path, &wo);
	ck_assert_ptr_nonnull(w);
	layout(w);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	perf_writer__free(w);
}

static bool frames_one_stream; /* perf_reader__one_stream of frames_file's last file */

static uint64_t frames_file(void (*layout)(struct perf_writer *w), bool damaged, uint64_t *ret_jobs)
{
	char path[64];
	struct perf_reader *r;
	struct recs got;
	uint64_t n;

	write_frames_file(path, sizeof(path), "apart", layout);
	r = open_reader(path, NULL);
	ck_assert_ptr_nonnull(r);
	frames_one_stream = perf_reader__one_stream(r);
	for (int ordered = 0; ordered < 2; ordered++) {
		got = read_all(r, ordered);
		ck_assert_msg(!perf_reader__damage(r) == !damaged, "damaged at %llu: %s",
			      perf_reader__damage(r) ? (unsigned long long)perf_reader__damage(r)->offset : 0,
			      perf_reader__damage(r) ? perf_reader__damage(r)->reason : "(none)");
		free(got.v);
	}
	perf_reader__set_decode_thread(r, true);
	/* 1: stopped at the first record (0: damage came before any) */
	ck_assert_int_eq(perf_reader__for_each(r, stop_at_first, NULL), got.n > 0);
	free(read_once(r, false).v);
	*ret_jobs = perf_reader__frame_jobs(r);
	n = perf_reader__walk_stats(r)->nr_by_type[PERF_RECORD_SAMPLE];
	perf_reader__free(r);
	unlink(path);
	return n;
}

static uint64_t layout_t;

/* precord's: 30 frames of 50 samples, each whole in one record, rounds between; a frame cut
 * into three records; two frames in one record (the first ending inside a sample). */
static void layout_apart(struct perf_writer *w)
{
	uint8_t raw[32 * 100], z[8192], two[16384];
	size_t n, m;

	for (int i = 0; i < 30; i++) {
		n = ZSTD_compress(z, sizeof(z), raw, put_samples(raw, 50, &layout_t), 1);
		ck_assert(!ZSTD_isError(n));
		append_raw_compressed(w, z, n);
		if (i % 3 == 2)
			append_round(w);
	}
	n = ZSTD_compress(z, sizeof(z), raw, put_samples(raw, 100, &layout_t), 1);
	ck_assert(!ZSTD_isError(n) && n > 3);
	append_raw_compressed(w, z, 1);
	append_raw_compressed(w, z + 1, n / 2);
	append_raw_compressed(w, z + 1 + n / 2, n - 1 - n / 2);
	put_samples(raw, 100, &layout_t);
	n = ZSTD_compress(two, sizeof(two), raw, 32 * 40 + 16, 1);
	m = ZSTD_compress(two + n, sizeof(two) - n, raw + 32 * 40 + 16, 32 * 60 - 16, 1);
	ck_assert(!ZSTD_isError(n) && !ZSTD_isError(m));
	append_raw_compressed(w, two, n + m);
	append_round(w);
}

/* perf -z's: one frame across records with plain records between them. */
static void layout_stream(struct perf_writer *w)
{
	uint8_t raw[32 * 100], z[8192];
	size_t n = ZSTD_compress(z, sizeof(z), raw, put_samples(raw, 100, &layout_t), 1);

	ck_assert(!ZSTD_isError(n));
	append_raw_compressed(w, z, n / 3);
	append_round(w);
	append_raw_compressed(w, z + n / 3, n - n / 3);
	/* a whole frame after the stream began: the stream's all the same */
	n = ZSTD_compress(z, sizeof(z), raw, put_samples(raw, 100, &layout_t), 1);
	append_raw_compressed(w, z, n);
}

/* With a decoding thread, the independent frames of a file decode apart, on both threads, and
 * give the records one stream would: every sample, in order (read_all compares). A frame that a
 * plain record interrupts sends it and the rest of the file to one stream. */
START_TEST(test_frames_decoded_apart)
{
	uint64_t jobs;

	ck_assert_uint_eq(frames_file(layout_apart, false, &jobs), 30 * 50 + 100 + 100);
	ck_assert_uint_eq(jobs, 30 + 1 + 2);
	ck_assert(!frames_one_stream);
	ck_assert_uint_eq(frames_file(layout_stream, false, &jobs), 200);
	ck_assert_uint_eq(jobs, 0);
	ck_assert(frames_one_stream);
}
END_TEST

/* Three helper threads decode frames for the walk (perf_reader__decode_ahead, one at a time)
 * while the calling thread holds its first record until a helper has decoded one: the decoding
 * thread then leaves the frames ahead to them. The records are those of a walk on one thread,
 * in order and time order; once the walk is over, no helper finds anything to decode. */
struct ahead_ctx {
	struct perf_reader *r;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int decoded;
	unsigned int after; /* frames decoded by a call made once the walk was over */
	bool stop, waited, over;
	struct recs got;
};

static void *ahead_helper(void *arg)
{
	struct ahead_ctx *c = arg;

	for (;;) {
		bool over, did;

		pthread_mutex_lock(&c->lock);
		over = c->over;
		pthread_mutex_unlock(&c->lock);
		did = perf_reader__decode_ahead(c->r);
		pthread_mutex_lock(&c->lock);
		c->decoded += did;
		c->after += did && over;
		pthread_cond_broadcast(&c->cond);
		if (c->stop) {
			pthread_mutex_unlock(&c->lock);
			return NULL;
		}
		pthread_mutex_unlock(&c->lock);
		if (!did)
			sched_yield();
	}
}

static int ahead_collect(const struct perf_reader_record *rr, void *ctx)
{
	struct ahead_ctx *c = ctx;

	if (!c->waited) {
		pthread_mutex_lock(&c->lock);
		while (!c->decoded)
			pthread_cond_wait(&c->cond, &c->lock);
		pthread_mutex_unlock(&c->lock);
		c->waited = true;
	}
	return collect(rr, &c->got);
}

START_TEST(test_frames_decode_ahead)
{
	char path[64];
	struct perf_reader *r;
	struct ahead_ctx c = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	pthread_t t[3];

	write_frames_file(path, sizeof(path), "ahead", layout_apart);
	r = open_reader(path, NULL);
	ck_assert_ptr_nonnull(r);
	c.r = r;
	ck_assert(!perf_reader__decode_ahead(r)); /* no walk */
	for (int ordered = 0; ordered < 2; ordered++) {
		struct recs one = read_once(r, ordered);

		perf_reader__set_decode_thread(r, true);
		perf_reader__set_frame_helper(r, true);
		c.got = (struct recs){ .r = r };
		c.waited = false;
		c.decoded = c.after = 0;
		c.stop = c.over = false;
		for (int i = 0; i < 3; i++)
			ck_assert_int_eq(pthread_create(&t[i], NULL, ahead_helper, &c), 0);
		ck_assert_int_eq((ordered ? perf_reader__for_each_ordered :
					    perf_reader__for_each)(r, ahead_collect, &c), 0);
		pthread_mutex_lock(&c.lock);
		c.over = true;
		pthread_mutex_unlock(&c.lock);
		ck_assert(!perf_reader__decode_ahead(r)); /* the walk is over */
		pthread_mutex_lock(&c.lock);
		c.stop = true;
		pthread_mutex_unlock(&c.lock);
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		ck_assert_uint_ge(c.decoded, 1);
		ck_assert_uint_eq(c.after, 0);
		ck_assert_uint_eq(perf_reader__frame_jobs(r), 30 + 1 + 2);
		ck_assert_int_eq(one.bad_samples, 0);
		assert_same_recs(&c.got, &one);
		perf_reader__set_decode_thread(r, false);
		perf_reader__set_frame_helper(r, false);
		free(one.v);
		free(c.got.v);
	}
	perf_reader__free(r);
	unlink(path);
}
END_TEST

/* perf -z's, with a plain record after each of 400 pieces of its one frame, a zstd block per
 * 10 samples: the first samples come out of the first pieces, and the pipe to the calling thread
 * fills while that thread holds the first of them, however the two threads are scheduled. */
static void layout_pieces(struct perf_writer *w)
{
	uint8_t raw[32 * 300], z[16384];
	size_t len = put_samples(raw, 300, &layout_t), n, piece;
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_outBuffer out = { z, sizeof(z), 0 };

	ck_assert_ptr_nonnull(cc);
	for (size_t at = 0; at < len; at += 320) {
		ZSTD_inBuffer in = { raw + at, len - at < 320 ? len - at : 320, 0 };
		size_t left = ZSTD_compressStream2(cc, &out, &in, at + 320 < len ? ZSTD_e_flush :
									 ZSTD_e_end);

		ck_assert(!ZSTD_isError(left) && !left && in.pos == in.size);
	}
	ZSTD_freeCCtx(cc);
	n = out.pos;
	piece = n / 400 + 1;
	for (size_t at = 0; at < n; at += piece) {
		append_raw_compressed(w, z + at, n - at < piece ? n - at : piece);
		append_round(w);
	}
}

/* The decoding thread's idle work (perf_reader__set_idle_work): called on that thread, instead
 * of a wait for the calling thread, again while it returns true; never once the walk is over. */
struct idle_ctx {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t caller;
	unsigned int calls, work; /* calls; of them, those that "did work" (returned true) */
	bool other_thread, waited;
	struct recs got;
};

static bool idle_work(void *arg)
{
	struct idle_ctx *c = arg;
	bool did;

	pthread_mutex_lock(&c->lock);
	c->other_thread |= !pthread_equal(pthread_self(), c->caller);
	did = c->work < 3;
	c->calls++;
	c->work += did;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return did;
}

static int idle_collect(const struct perf_reader_record *rr, void *ctx)
{
	struct idle_ctx *c = ctx;

	if (!c->waited) {
		pthread_mutex_lock(&c->lock);
		while (c->work < 3 || c->calls == c->work)
			pthread_cond_wait(&c->cond, &c->lock);
		pthread_mutex_unlock(&c->lock);
		c->waited = true;
	}
	return collect(rr, &c->got);
}

START_TEST(test_idle_work)
{
	char path[64];
	struct perf_reader *r;
	struct idle_ctx c = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

	write_frames_file(path, sizeof(path), "idle", layout_pieces);
	r = open_reader(path, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert(perf_reader__one_stream(r));
	c.caller = pthread_self();
	for (int ordered = 0; ordered < 2; ordered++) {
		struct recs one = read_once(r, ordered);
		unsigned int calls;

		ck_assert_uint_eq(perf_reader__walk_stats(r)->nr_by_type[PERF_RECORD_SAMPLE], 300);
		perf_reader__set_decode_thread(r, true);
		perf_reader__set_idle_work(r, idle_work, &c);
		c.got = (struct recs){ .r = r };
		c.calls = c.work = 0;
		c.waited = c.other_thread = false;
		ck_assert_int_eq((ordered ? perf_reader__for_each_ordered :
					    perf_reader__for_each)(r, idle_collect, &c), 0);
		/* three calls did work, a fourth found none and the decoder waited */
		ck_assert_uint_eq(c.work, 3);
		ck_assert_uint_ge(c.calls, 4);
		ck_assert(c.other_thread);
		assert_same_recs(&c.got, &one);
		/* a walk on the calling thread alone has no decoding thread to call it */
		calls = c.calls;
		perf_reader__set_decode_thread(r, false);
		free(read_once(r, ordered).v);
		ck_assert_uint_eq(c.calls, calls);
		perf_reader__set_idle_work(r, NULL, NULL);
		free(one.v);
		free(c.got.v);
	}
	perf_reader__free(r);
	unlink(path);
}
END_TEST

/* A skippable frame of size 0, then a frame, in one record (the stream decoder once skipped the
 * next frame's first bytes after it). */
static void layout_skip0(struct perf_writer *w)
{
	uint8_t raw[32 * 50], z[4096] = { 0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0 };
	size_t n = ZSTD_compress(z + 8, sizeof(z) - 8, raw, put_samples(raw, 50, &layout_t), 1);

	ck_assert(!ZSTD_isError(n));
	append_raw_compressed(w, z, 8 + n);
}

/* A frame of two blocks across three records: the first block's header and half its content,
 * then the rest of it (garbage), then the second block. The damage, and the counts up to it, are
 * the one stream's (read_all compares the counts too): the third record is never reached, so it
 * is not counted either. */
static void layout_damaged_frame(struct perf_writer *w)
{
	static uint8_t raw[32 * 8192], z[65536];
	size_t n = ZSTD_compress(z, sizeof(z), raw, put_samples(raw, 8192, &layout_t), 1);
	size_t fh = ZSTD_frameHeaderSize(z, n), b1, mid;

	ck_assert(!ZSTD_isError(n) && !ZSTD_isError(fh));
	b1 = (z[fh] | z[fh + 1] << 8 | z[fh + 2] << 16) >> 3; /* a compressed block's size */
	ck_assert_uint_eq(z[fh] >> 1 & 3, 2);
	ck_assert_uint_lt(fh + 3 + b1 + 3, n);
	mid = fh + 3 + b1 / 2;
	append_raw_compressed(w, z, mid);
	memset(z + mid, 0xa5, fh + 3 + b1 - mid);
	append_raw_compressed(w, z + mid, fh + 3 + b1 - mid);
	append_raw_compressed(w, z + fh + 3 + b1, n - (fh + 3 + b1));
}

/* 300 RLE blocks of 128 KiB in a 1.2 KB record: 37.5 MiB decoded. The frame goes to the stream,
 * not into a job decoded whole (at most 32 MiB). Its records (0x08 bytes: size 2056, a type no
 * attr has) decode the same either way, the last one cut by the frame's end. */
static void layout_rle_bomb(struct perf_writer *w)
{
	static uint8_t z[4 + 2 + 300 * 4] = { 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58 };

	for (int i = 0; i < 300; i++) {
		uint32_t bh = (131072u << 3) | (1u << 1) | (i == 299);

		z[6 + 4 * i] = bh & 0xff;
		z[7 + 4 * i] = bh >> 8 & 0xff;
		z[8 + 4 * i] = bh >> 16 & 0xff;
		z[9 + 4 * i] = 0x08;
	}
	append_raw_compressed(w, z, sizeof(z));
}

START_TEST(test_frames_apart_edges)
{
	uint64_t jobs;

	ck_assert_uint_eq(frames_file(layout_skip0, false, &jobs), 50);
	ck_assert_uint_eq(jobs, 2);
	frames_file(layout_damaged_frame, true, &jobs);
	ck_assert_uint_eq(jobs, 1);
	ck_assert_uint_eq(frames_file(layout_rle_bomb, true, &jobs), 0);
	ck_assert_uint_eq(jobs, 0);
}
END_TEST

/* A skippable frame between two frames is passed over; a record cut by a frame's end reads whole
 * (perf's -z frames end where its ring buffer wraps, not at a record's end). */
static void layout_skippable_cut(struct perf_writer *w)
{
	uint8_t raw[32 * 40], z[4096], skip[8 + 13] = { 0x50, 0x2a, 0x4d, 0x18, 13, 0, 0, 0, 7 };
	size_t n, cut = 32 * 17 + 12; /* inside the 18th sample */

	put_samples(raw, 40, &layout_t);
	n = ZSTD_compress(z, sizeof(z), raw, cut, 1);
	ck_assert(!ZSTD_isError(n));
	append_compressed(w, z, n);
	append_compressed(w, skip, sizeof(skip));
	n = ZSTD_compress(z, sizeof(z), raw + cut, sizeof(raw) - cut, 1);
	ck_assert(!ZSTD_isError(n));
	append_compressed(w, z, n);
}

START_TEST(test_skippable_and_cut_frames)
{
	uint64_t jobs;

	/* every record is a sample: all 40, undamaged */
	ck_assert_uint_eq(frames_file(layout_skippable_cut, false, &jobs), 40);
}
END_TEST

START_TEST(test_bad_zstd)
{
	struct blob orig = slurp(path_in("z.data"));
	struct comp_pos c = find_compressed(&orig);
	struct perf_reader *r = open_ok(path_in("z.data"));
	struct recs full = read_all(r, false);

	perf_reader__free(r);
	ck_assert_int_ge(c.n, 3);
	for (int k = 0; k < c.n && k < 3; k++) {
		struct blob b = { malloc(orig.n), orig.n, orig.n };
		const struct perf_reader_damage *d;
		struct recs got;
		size_t expect = 0;

		memcpy(b.p, orig.p, orig.n);
		/* Garbage over the payload (past the frame header in the first record). */
		memset(b.p + c.off[k] + 8 + (k == 0 ? 16 : 0), 0xa5, c.size[k] - 8 - (k == 0 ? 16 : 0));
		spit(path_in("bad.data"), b.p, b.n);
		r = open_ok(path_in("bad.data"));
		got = read_all(r, false);
		d = perf_reader__damage(r);
		ck_assert_ptr_nonnull(d);
		ck_assert_uint_le(d->offset, c.off[k]);
		for (size_t i = 0; i < full.n; i++)
			expect += full.v[i].offset < d->offset;
		ck_assert_uint_eq(got.n, expect);
		for (size_t i = 0; i < got.n; i++)
			ck_assert_uint_eq(got.v[i].sum, full.v[i].sum);
		free(got.v);
		perf_reader__free(r);
		free(b.p);
	}
	free(full.v);
	free(orig.p);
}
END_TEST

/* perf report reads a file cleanly: exit 0, nothing alarming on stderr, and its counts are ours. */
static void perf_reads_cleanly(const char *path)
{
	struct perf_reader *r = open_ok(path);
	struct perf_reader_stats st;
	struct blob err;
	char *s;

	ck_assert_ptr_null(perf_reader__damage(r));
	ck_assert_uint_eq(perf_reader__warnings(r), 0);
	ck_assert_int_eq(perf_reader__stats(r, &st), 0);
	ck_assert_int_ge(compare_with_perf(path, &st), nr_types(&st) + 1);
	ck_assert_int_eq(run("perf report --stdio -i %s >/dev/null 2>%s", path,
			     path_in("stderr.txt")), 0);
	err = slurp(path_in("stderr.txt"));
	err.p[err.n] = 0;
	for (s = (char *)err.p; *s; s++)
		*s = *s >= 'A' && *s <= 'Z' ? *s + 32 : *s;
	/* (perf's kptr_restrict warning is about this machine, not the file: not matched.) */
	ck_assert_msg(!strstr((char *)err.p, "fail") && !strstr((char *)err.p, "corrupt") &&
			      !strstr((char *)err.p, "error") &&
			      !strstr((char *)err.p, "out of order") &&
			      !strstr((char *)err.p, "properly terminated") &&
			      !strstr((char *)err.p, "incompatible") &&
			      !strstr((char *)err.p, "no samples"),
		      "perf report on %s: %s", path, err.p);
	free(err.p);
	perf_reader__free(r);
}

START_TEST(test_repair_truncated)
{
	static const char *const names[] = { "z.data", "plain.data", "dwarf.data" };

	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		struct blob b = slurp(path_in(names[k]));
		const struct perf_file_header *h = (const void *)b.p;
		struct comp_pos c = find_compressed(&b);
		struct perf_reader *r;
		struct recs got, rep;

		/* Cut in the middle of the data section (of the last compressed record). */
		if (c.n >= 2)
			b.n = c.off[c.n - 1] + c.size[c.n - 1] / 2;
		else
			b.n = h->data.offset + h->data.size * 2 / 3 + 3;
		spit(path_in("cut.data"), b.p, b.n);
		r = open_ok(path_in("cut.data"));
		got = read_all(r, false);
		ck_assert_ptr_nonnull(perf_reader__damage(r));
		ck_assert_uint_gt(got.n, 0);
		ck_assert_int_eq(perf_reader__repair(r, path_in("repaired.data")), 0);
		perf_reader__free(r);

		perf_reads_cleanly(path_in("repaired.data"));
		r = open_ok(path_in("repaired.data"));
		rep = read_all(r, false);
		/* The repair keeps every sample and only records it read (in time order, without
		 * perf's own records and round markers): each repaired record is one of those read,
		 * and the samples are all there. */
		size_t got_samples = 0, rep_samples = 0;

		for (size_t i = 0; i < got.n; i++)
			got_samples += got.v[i].type == PERF_RECORD_SAMPLE;
		for (size_t i = 0; i < rep.n; i++) {
			size_t j = 0;

			rep_samples += rep.v[i].type == PERF_RECORD_SAMPLE;
			while (j < got.n && got.v[j].sum != rep.v[i].sum)
				j++;
			ck_assert_msg(j < got.n, "%s: repaired record %zu (type %u) was not read",
				      names[k], i, rep.v[i].type);
		}
		ck_assert_uint_eq(rep_samples, got_samples);
		ck_assert_uint_gt(rep.n, got_samples);
		free(rep.v);
		free(got.v);
		perf_reader__free(r);
		free(b.p);
	}
}
END_TEST

/* Samples that the reader finds in PATH now (0 while the file has no complete header yet). */
static size_t samples_in(const char *path)
{
	struct perf_reader_opts o = { 0 };
	struct perf_reader *r = open_reader(path, &o);
	struct recs rs;
	size_t n = 0;

	if (!r)
		return 0;
	rs = read_all(r, false);
	for (size_t i = 0; i < rs.n; i++)
		n += rs.v[i].type == PERF_RECORD_SAMPLE;
	free(rs.v);
	perf_reader__free(r);
	return n;
}

/* A recorder killed mid-run: data.size 0, no features. Recovered by scanning; repaired.
 * perf records a program that spins until killed, with small rings so that they fill and are
 * written out soon; the test kills perf only once the file holds samples, so the killed file is
 * certain to have some however busy the machine is. */
START_TEST(test_killed_recorder)
{
	const char *p = path_in("killed.data");
	struct perf_reader *r;
	struct recs rs;
	size_t samples = 0;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* Its own process group: perf's workload is killed with it. */
		setpgid(0, 0);
		if (!freopen("/dev/null", "w", stderr))
			_exit(127);
		execlp("perf", "perf", "record", "-q", "-a", "-m", "4", "-e", "cpu-clock", "-o", p,
		       "--", "sh", "-c", "while :; do :; done", (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	/* Waits for a condition, not a time: the tcase's timeout bounds it. */
	while (samples_in(p) == 0) {
		int st;

		ck_assert_msg(waitpid(pid, &st, WNOHANG) == 0, "perf record exited early");
		usleep(20 * 1000);
	}
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	kill(-pid, SIGKILL); /* the spinning workload */

	r = open_ok(p);
	ck_assert_uint_eq(perf_reader__header(r)->data.size, 0);
	ck_assert(perf_reader__warnings(r) & PERF_READER_W_RECOVERED);
	rs = read_all(r, false);
	for (size_t i = 0; i < rs.n; i++)
		samples += rs.v[i].type == PERF_RECORD_SAMPLE;
	ck_assert_uint_gt(samples, 0);
	ck_assert_uint_gt(rs.n, 10);
	ck_assert_int_eq(rs.bad_samples, 0);
	ck_assert_int_eq(perf_reader__repair(r, path_in("killed-fixed.data")), 0);
	perf_reader__free(r);
	free(rs.v);
	perf_reads_cleanly(path_in("killed-fixed.data"));
}
END_TEST

/* precord's way: a stale data.size and no features yet; the records go on past data.size. */
START_TEST(test_stale_size)
{
	struct blob b = slurp(path_in("plain.data"));
	struct perf_file_header *h = (void *)b.p;
	struct perf_reader *r = open_ok(path_in("plain.data"));
	struct recs full = read_all(r, false), got;

	perf_reader__free(r);
	b.n = h->data.offset + h->data.size;
	memset(h->features, 0, sizeof(h->features));
	h->data.size = full.v[full.n / 2].offset - h->data.offset;
	spit(path_in("stale.data"), b.p, b.n);
	r = open_ok(path_in("stale.data"));
	ck_assert(perf_reader__warnings(r) & PERF_READER_W_RECOVERED);
	ck_assert_ptr_null(perf_reader__damage(r));
	got = read_all(r, false);
	ck_assert_uint_eq(got.n, full.n);
	/* Now with a half-written last record. */
	perf_reader__free(r);
	spit(path_in("stale.data"), b.p, b.n - 5);
	r = open_ok(path_in("stale.data"));
	ck_assert_ptr_nonnull(perf_reader__damage(r));
	ck_assert_uint_eq(perf_reader__damage(r)->offset, full.v[full.n - 1].offset);
	free(got.v);
	got = read_all(r, false);
	ck_assert_uint_eq(got.n, full.n - 1);
	perf_reader__free(r);
	free(got.v);
	free(full.v);
	free(b.p);
}
END_TEST

START_TEST(test_pipe_mode)
{
	struct perf_reader *r = perf_reader__new(NULL);

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(run("perf record -q -e cpu-clock -o - -- true > %s 2>/dev/null",
			     path_in("pipe.data")), 0);
	/* read into a file's layout: perf's one event, its features, its records */
	ck_assert_int_eq(perf_reader__open(r, path_in("pipe.data")), 0);
	ck_assert(perf_reader__warnings(r) & PERF_READER_W_PIPE);
	ck_assert_uint_eq(perf_reader__nr_attrs(r), 1);
	ck_assert_uint_eq(perf_reader__attr(r, 0)->attr.type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(perf_reader__attr(r, 0)->attr.config, PERF_COUNT_SW_CPU_CLOCK);
	ck_assert(perf_reader__has_feature(r, FEAT_HOSTNAME));
	ck_assert(perf_reader__has_feature(r, FEAT_EVENT_DESC));
	ck_assert(!perf_reader__has_feature(r, FEAT_SAMPLE_TIME)); /* perf's zeros: none */
	ck_assert_ptr_null(perf_reader__damage(r));
	/* One file per reader: a second open is refused, with a reason. */
	ck_assert_int_eq(perf_reader__open(r, path_in("pipe.data")), -EBUSY);
	ck_assert_ptr_nonnull(strstr(perf_reader__error(r), "already"));
	perf_reader__free(r);
}
END_TEST

/* ---- synthesized files ---- */

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		     PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD)

struct synth {
	struct perf_event_attr attr[3];
	uint32_t attr_disk_size; /* bytes of each attr on disk */
	uint64_t ids[3][2];
	size_t nr_ids[3], nr_attrs;
	struct blob data;
	bool comp_feature;
	const char *hostname;
};

static void synth_init(struct synth *s, size_t nr_attrs, uint32_t disk_size)
{
	memset(s, 0, sizeof(*s));
	s->nr_attrs = nr_attrs;
	s->attr_disk_size = disk_size;
	for (size_t i = 0; i < nr_attrs; i++) {
		struct perf_event_attr *a = &s->attr[i];

		a->type = PERF_TYPE_SOFTWARE;
		a->size = disk_size;
		a->config = PERF_COUNT_SW_CPU_CLOCK;
		a->sample_period = 1000000;
		a->sample_type = SAMPLE_TYPE;
		a->sample_id_all = 1;
		s->ids[i][0] = 100 + 10 * i;
		s->ids[i][1] = 101 + 10 * i;
		s->nr_ids[i] = 2;
	}
}

static void sample(struct blob *b, uint64_t id, uint64_t ip, uint32_t tid, uint64_t time)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 48 };

	put(b, &h, sizeof(h));
	put64(b, id);
	put64(b, ip);
	put64(b, (uint64_t)tid << 32 | tid);
	put64(b, time);
	put64(b, 1000000);
}

/* COMM with the sample_id_all trailer {tid, time, identifier}. */
static void comm(struct blob *b, uint64_t id, uint32_t tid, uint64_t time)
{
	struct perf_event_header h = { PERF_RECORD_COMM, 0, 8 + 8 + 16 + 24 };

	put(b, &h, sizeof(h));
	put64(b, (uint64_t)tid << 32 | tid);
	put(b, "workload\0\0\0\0\0\0\0\0", 16);
	put64(b, (uint64_t)tid << 32 | tid);
	put64(b, time);
	put64(b, id);
}

static void round_marker(struct blob *b)
{
	struct perf_event_header h = { PERF_RECORD_FINISHED_ROUND, 0, 8 };

	put(b, &h, sizeof(h));
}

static void put_string(struct blob *b, const char *str)
{
	uint32_t len = (strlen(str) + 1 + 63) / 64 * 64;
	char pad[256] = { 0 };

	strcpy(pad, str);
	put(b, &len, 4);
	put(b, pad, len);
}

static void synth_write(struct synth *s, const char *path)
{
	struct blob f = { 0 };
	struct perf_file_header h = { 0 };
	struct blob feats = { 0 }, sect = { 0 };
	uint64_t ids_off;
	size_t i;

	h.magic = PERF_MAGIC2;
	h.size = PERF_HEADER_SIZE;
	h.attr_size = s->attr_disk_size + 16;
	h.attrs.offset = PERF_HEADER_SIZE;
	h.attrs.size = s->nr_attrs * h.attr_size;
	ids_off = h.attrs.offset + h.attrs.size;
	put(&f, &h, sizeof(h));
	for (i = 0; i < s->nr_attrs; i++) {
		uint8_t buf[512] = { 0 };
		struct perf_file_section ids = { ids_off, s->nr_ids[i] * 8 };

		memcpy(buf, &s->attr[i], sizeof(s->attr[i]));
		put(&f, buf, s->attr_disk_size);
		put(&f, &ids, sizeof(ids));
		ids_off += ids.size;
	}
	for (i = 0; i < s->nr_attrs; i++)
		put(&f, s->ids[i], s->nr_ids[i] * 8);
	h.data.offset = f.n;
	h.data.size = s->data.n;
	put(&f, s->data.p, s->data.n);

	/* Features in bit order: HOSTNAME (3), COMPRESSED (27). */
	{
		uint64_t base = f.n;
		int nr = !!s->hostname + s->comp_feature;
		uint64_t off = base + nr * 16;

		if (s->hostname) {
			struct blob str = { 0 };

			put_string(&str, s->hostname);
			h.features[0] |= 1ULL << FEAT_HOSTNAME;
			put64(&feats, off);
			put64(&feats, str.n);
			off += str.n;
			put(&sect, str.p, str.n);
			free(str.p);
		}
		if (s->comp_feature) {
			uint32_t c[5] = { 1, 1, 1, 3, 65536 };

			h.features[0] |= 1ULL << FEAT_COMPRESSED;
			put64(&feats, off);
			put64(&feats, sizeof(c));
			put(&sect, c, sizeof(c));
		}
		if (feats.n)
			put(&f, feats.p, feats.n);
		if (sect.n)
			put(&f, sect.p, sect.n);
	}
	memcpy(f.p, &h, sizeof(h));
	spit(path, f.p, f.n);
	free(f.p);
	free(feats.p);
	free(sect.p);
}

/* Compress chunk into one frame, fed in `slice`-byte pieces each flushed into its own
 * COMPRESSED record (so records straddle compressed records), the last piece ending the frame. */
static void compress_chunk(ZSTD_CCtx *cc, struct blob *out, const struct blob *chunk, size_t slice)
{
	size_t pos = 0;

	while (pos < chunk->n) {
		size_t n = chunk->n - pos < slice ? chunk->n - pos : slice;
		bool last = pos + n == chunk->n;
		ZSTD_inBuffer in = { chunk->p + pos, n, 0 };
		uint8_t buf[65536];
		ZSTD_outBuffer o = { buf + 8, sizeof(buf) - 8, 0 };
		size_t rem;

		do {
			rem = ZSTD_compressStream2(cc, &o, &in, last ? ZSTD_e_end : ZSTD_e_flush);
			ck_assert(!ZSTD_isError(rem));
		} while (rem);
		{
			struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, 8 + o.pos };

			memcpy(buf, &h, 8);
			put(out, buf, 8 + o.pos);
		}
		pos += n;
	}
}

START_TEST(test_precord_interleaved)
{
	ZSTD_CCtx *cc[2] = { ZSTD_createCCtx(), ZSTD_createCCtx() };
	struct blob expect = { 0 };
	struct synth s;
	struct perf_reader *r;
	struct recs got, ord;
	int chunk, t, i;
	uint64_t time = 1000;

	synth_init(&s, 1, 128);
	s.comp_feature = true;
	s.hostname = "synth";
	/* A plain synthesized COMM first, as a recorder does. */
	comm(&s.data, 100, 42, 0);
	comm(&expect, 100, 42, 0);
	for (chunk = 0; chunk < 4; chunk++) {
		for (t = 0; t < 2; t++) {
			struct blob c = { 0 };

			for (i = 0; i < 40; i++)
				sample(&c, 100 + t, 0x400000 + chunk * 1000 + t * 100 + i,
				       42 + t, time += 7 + (i * 13) % 5);
			put(&expect, c.p, c.n);
			/* Different slices so the two threads' records split differently. */
			compress_chunk(cc[t], &s.data, &c, t ? 100 : 333);
			free(c.p);
		}
		round_marker(&s.data);
		round_marker(&expect);
	}
	synth_write(&s, path_in("precord.data"));

	r = open_ok(path_in("precord.data"));
	ck_assert_str_eq(perf_reader__info(r)->hostname, "synth");
	ck_assert_uint_eq(perf_reader__info(r)->comp_mmap_len, 65536);
	got = read_all(r, false);
	ck_assert_ptr_null(perf_reader__damage(r));
	ck_assert_uint_eq(perf_reader__warnings(r), 0);
	ck_assert_int_eq(got.bad_samples, 0);
	{
		/* Same records, same bytes, same order as written. */
		uint64_t off = 0;
		size_t k = 0;

		while (off < expect.n) {
			const struct perf_event_header *h = (const void *)(expect.p + off);

			ck_assert_uint_lt(k, got.n);
			ck_assert_uint_eq(got.v[k].sum, fingerprint(h));
			ck_assert_uint_eq(got.v[k].compressed,
					  h->type == PERF_RECORD_SAMPLE);
			off += h->size;
			k++;
		}
		ck_assert_uint_eq(k, got.n);
	}
	/* Time order: the two threads' samples merged. */
	ord = read_all(r, true);
	ck_assert_uint_eq(ord.n, got.n);
	for (size_t k = 1; k < ord.n; k++)
		if (ord.v[k].time != PERF_READER_NO_TIME && ord.v[k - 1].time != PERF_READER_NO_TIME)
			ck_assert_uint_ge(ord.v[k].time, ord.v[k - 1].time);
	free(got.v);
	free(ord.v);
	perf_reader__free(r);
	/* perf 6.1 reads it the same way. */
	perf_reads_cleanly(path_in("precord.data"));
	ZSTD_freeCCtx(cc[0]);
	ZSTD_freeCCtx(cc[1]);
	free(expect.p);
	free(s.data.p);
}
END_TEST

/* perf's FINISHED_ROUND semantics (reference section 4). */
START_TEST(test_ordered_rounds)
{
	struct synth s;
	struct perf_reader *r;
	struct recs got;
	/* file: 10 30 20 | R | 25 40 | R | 5 ; expected: R 10 20 25 30 R 5 40 */
	static const uint64_t expect[] = { 0, 10, 20, 25, 30, 0, 5, 40 };

	synth_init(&s, 1, 128);
	sample(&s.data, 100, 1, 1, 10);
	sample(&s.data, 100, 1, 1, 30);
	comm(&s.data, 100, 1, 20);
	round_marker(&s.data);
	sample(&s.data, 100, 1, 1, 25);
	sample(&s.data, 100, 1, 1, 40);
	round_marker(&s.data);
	sample(&s.data, 100, 1, 1, 5);
	synth_write(&s, path_in("rounds.data"));
	r = open_ok(path_in("rounds.data"));
	got = read_all(r, true);
	ck_assert_uint_eq(got.n, ARRAY_SIZE(expect));
	for (size_t i = 0; i < got.n; i++) {
		if (!expect[i])
			ck_assert_uint_eq(got.v[i].type, PERF_RECORD_FINISHED_ROUND);
		else
			ck_assert_uint_eq(got.v[i].time, expect[i]);
	}
	ck_assert_uint_eq(perf_reader__nr_unordered(r), 1);
	ck_assert_uint_eq(perf_unordered(path_in("rounds.data")), 1); /* perf's count agrees */
	free(got.v);
	/* No rounds: everything sorted at the end. */
	perf_reader__free(r);
	free(s.data.p);
	synth_init(&s, 1, 128);
	for (int i = 0; i < 50; i++)
		sample(&s.data, 100, 1, 1, (i * 37) % 50);
	synth_write(&s, path_in("norounds.data"));
	r = open_ok(path_in("norounds.data"));
	got = read_all(r, true);
	ck_assert_uint_eq(got.n, 50);
	for (size_t i = 0; i < got.n; i++)
		ck_assert_uint_eq(got.v[i].time, i);
	free(got.v);
	perf_reader__free(r);

	/* A memory cap of about 10 entries: everything still delivered, oldest first each time. */
	{
		struct perf_reader_opts o = { .ordered_max_bytes = 600 };
		size_t inversions = 0;

		r = open_reader(path_in("norounds.data"), &o);
		ck_assert_ptr_nonnull(r);
		got = read_all(r, true);
		ck_assert_uint_eq(got.n, 50);
		for (size_t i = 1; i < got.n; i++)
			inversions += got.v[i].time < got.v[i - 1].time;
		ck_assert_uint_gt(inversions, 0);
		ck_assert_uint_lt(inversions, 25);
		free(got.v);
		perf_reader__free(r);
	}
	free(s.data.p);

	/* A record of time 0 after the last round (perf record's LOST_SAMPLES at the end): perf
	 * takes the time for none, delivers the record when read and counts nothing out of order.
	 * file: 10 | R | 20 | R | 30 | R | 0 ; expected: R 10 R 20 R 0 30 */
	{
		static const uint32_t types[] = {
			PERF_RECORD_FINISHED_ROUND, PERF_RECORD_SAMPLE, PERF_RECORD_FINISHED_ROUND,
			PERF_RECORD_SAMPLE, PERF_RECORD_FINISHED_ROUND, PERF_RECORD_COMM,
			PERF_RECORD_SAMPLE,
		};
		static const uint64_t times[] = { 0, 10, 0, 20, 0, 0, 30 };

		synth_init(&s, 1, 128);
		for (uint64_t t = 10; t <= 30; t += 10) {
			sample(&s.data, 100, 1, 1, t);
			round_marker(&s.data);
		}
		comm(&s.data, 100, 1, 0);
		synth_write(&s, path_in("zero.data"));
		r = open_ok(path_in("zero.data"));
		got = read_all(r, true);
		ck_assert_uint_eq(got.n, ARRAY_SIZE(types));
		for (size_t i = 0; i < got.n; i++) {
			ck_assert_uint_eq(got.v[i].type, types[i]);
			if (types[i] != PERF_RECORD_FINISHED_ROUND)
				ck_assert_uint_eq(got.v[i].time, times[i]);
		}
		ck_assert_uint_eq(perf_reader__nr_unordered(r), 0);
		ck_assert_uint_eq(perf_unordered(path_in("zero.data")), 0);
		free(got.v);
		perf_reader__free(r);
		free(s.data.p);
	}
}
END_TEST

/* Several attrs, told apart by PERF_SAMPLE_IDENTIFIER; attrs of any on-disk size. */
START_TEST(test_attrs_and_ids)
{
	static const uint32_t sizes[] = { 64, 96, 120, 128, 136, 200 };

	for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
		struct synth s;
		struct perf_reader *r;
		struct recs got;

		synth_init(&s, 3, sizes[k]);
		s.attr[1].config = PERF_COUNT_SW_TASK_CLOCK;
		sample(&s.data, 111, 1, 1, 10);  /* attr 1 */
		sample(&s.data, 100, 1, 1, 11);  /* attr 0 */
		comm(&s.data, 120, 1, 12);       /* attr 2, by its trailer */
		sample(&s.data, 999, 1, 1, 13);  /* unknown id */
		synth_write(&s, path_in("attrs.data"));
		r = open_ok(path_in("attrs.data"));
		ck_assert_uint_eq(perf_reader__nr_attrs(r), 3);
		ck_assert_ptr_null(perf_reader__attr(r, 3));
		ck_assert_uint_eq(perf_reader__attr(r, 1)->attr.config, PERF_COUNT_SW_TASK_CLOCK);
		ck_assert_uint_eq(perf_reader__attr(r, 2)->nr_ids, 2);
		ck_assert_uint_eq(perf_reader__attr(r, 2)->ids[1], 121);
		if (sizes[k] >= 96)
			ck_assert_uint_eq(perf_reader__attr(r, 0)->attr.sample_type, SAMPLE_TYPE);
		ck_assert_int_eq(perf_reader__attr_of_id(r, 101), 0);
		ck_assert_int_eq(perf_reader__attr_of_id(r, 7), -ENOENT);
		got = read_all(r, false);
		ck_assert_uint_eq(got.n, 4);
		ck_assert_int_eq(got.v[0].attr_index, 1);
		ck_assert_int_eq(got.v[1].attr_index, 0);
		ck_assert_int_eq(got.v[2].attr_index, 2);
		ck_assert_uint_eq(got.v[2].time, 12);
		ck_assert_int_eq(got.v[3].attr_index, -1);
		ck_assert_uint_eq(got.v[3].time, PERF_READER_NO_TIME);
		free(got.v);
		perf_reader__free(r);
		free(s.data.p);
	}
}
END_TEST

/* LOST {id, lost} and LOST_SAMPLES {lost} records, each with the trailer, summed by stats the
 * way perf report --stats counts them. */
START_TEST(test_lost_stats)
{
	struct synth s;
	struct perf_reader *r;
	struct perf_reader_stats st;
	struct perf_event_header lost = { PERF_RECORD_LOST, 0, 8 + 16 + 24 };
	struct perf_event_header lost_samples = { PERF_RECORD_LOST_SAMPLES, 0, 8 + 8 + 24 };

	synth_init(&s, 1, 128);
	comm(&s.data, 100, 1, 1);
	for (int i = 1; i <= 3; i++) {
		sample(&s.data, 100, 1, 1, 10 * i);
		put(&s.data, &lost, 8);
		put64(&s.data, 100);
		put64(&s.data, 5 * i);            /* lost */
		put64(&s.data, 1ULL << 32 | 1);   /* trailer: tid, time, identifier */
		put64(&s.data, 10 * i + 1);
		put64(&s.data, 100);
	}
	put(&s.data, &lost_samples, 8);
	put64(&s.data, 7);
	put64(&s.data, 1ULL << 32 | 1);
	put64(&s.data, 40);
	put64(&s.data, 100);
	synth_write(&s, path_in("lost.data"));
	r = open_ok(path_in("lost.data"));
	ck_assert_int_eq(perf_reader__stats(r, &st), 0);
	ck_assert_uint_eq(st.nr_by_type[PERF_RECORD_LOST], 3);
	ck_assert_uint_eq(st.total_lost, 30);
	ck_assert_uint_eq(st.nr_by_type[PERF_RECORD_LOST_SAMPLES], 1);
	ck_assert_uint_eq(st.total_lost_samples, 7);
	ck_assert_uint_eq(st.total, 8);
	ck_assert_int_ge(compare_with_perf(path_in("lost.data"), &st), nr_types(&st) + 1);
	perf_reader__free(r);
	free(s.data.p);
}
END_TEST

/* A sample with a hostile callchain length is delivered; perf_sample refuses to decode it. */
START_TEST(test_huge_callchain)
{
	struct synth s;
	struct perf_reader *r;
	struct recs got;
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 8 + 8 * 8 };

	synth_init(&s, 1, 128);
	s.attr[0].sample_type |= PERF_SAMPLE_CALLCHAIN;
	put(&s.data, &h, 8);
	put64(&s.data, 100);
	put64(&s.data, 1);
	put64(&s.data, 1);
	put64(&s.data, 1);
	put64(&s.data, 1);
	put64(&s.data, UINT64_MAX / 8); /* callchain nr */
	put64(&s.data, 0x400000);
	put64(&s.data, 0x400000);
	synth_write(&s, path_in("callchain.data"));
	r = open_ok(path_in("callchain.data"));
	got = read_all(r, false);
	ck_assert_uint_eq(got.n, 1);
	ck_assert_int_eq(got.bad_samples, 1);
	free(got.v);
	perf_reader__free(r);
	free(s.data.p);
}
END_TEST

/* Decompressed output that is not records, and a stream cut mid-record. */
START_TEST(test_compressed_damage)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	struct synth s;
	struct blob c = { 0 };
	struct perf_reader *r;
	struct recs got;
	uint64_t junk[4] = { 0x0000000300000009ULL, 1, 2, 3 }; /* SAMPLE of size 0 */

	synth_init(&s, 1, 128);
	s.comp_feature = true;
	sample(&c, 100, 1, 1, 1);
	compress_chunk(cc, &s.data, &c, 1000);
	c.n = 0;
	put(&c, junk, sizeof(junk));
	compress_chunk(cc, &s.data, &c, 1000);
	synth_write(&s, path_in("zjunk.data"));
	r = open_ok(path_in("zjunk.data"));
	got = read_all(r, false);
	ck_assert_uint_eq(got.n, 1);
	ck_assert_ptr_nonnull(perf_reader__damage(r));
	ck_assert_str_eq(perf_reader__damage(r)->reason, "bad record size inside compressed data");
	free(got.v);
	perf_reader__free(r);
	free(s.data.p);

	/* A frame holding one and a half records. */
	synth_init(&s, 1, 128);
	s.comp_feature = true;
	c.n = 0;
	sample(&c, 100, 1, 1, 1);
	sample(&c, 100, 1, 1, 2);
	c.n -= 16;
	compress_chunk(cc, &s.data, &c, 1000);
	synth_write(&s, path_in("zhalf.data"));
	r = open_ok(path_in("zhalf.data"));
	got = read_all(r, false);
	ck_assert_uint_eq(got.n, 1);
	ck_assert_ptr_nonnull(perf_reader__damage(r));
	ck_assert_uint_eq(perf_reader__damage(r)->offset, perf_reader__header(r)->data.offset);
	ck_assert(!(perf_reader__warnings(r) & PERF_READER_W_NO_COMP_FEATURE));
	free(got.v);
	perf_reader__free(r);
	free(s.data.p);
	free(c.p);
	ZSTD_freeCCtx(cc);
}
END_TEST

/* Replays tests/corpus: every file listed in EXPECT opens (or not) and is damaged (or not) as
 * recorded there; every file of the directory, listed or not (fuzzer crashers), reads without
 * crashing through every entry point. */
static void exercise(const char *path)
{
	struct perf_reader *r = open_reader(path, NULL);
	struct perf_reader_stats st;
	struct recs rs;
	char out[300];
	int e;

	if (!r)
		return;
	rs = read_all(r, false);
	free(rs.v);
	rs = read_all(r, true);
	free(rs.v);
	ck_assert_int_eq(perf_reader__stats(r, &st), 0);
	snprintf(out, sizeof(out), "%s/replay.data", dir);
	unlink(out);
	e = perf_reader__repair(r, out);
	perf_reader__free(r);
	/* Nothing readable: nothing written. Else what repair wrote reads back without damage. */
	if (e == -ENODATA) {
		ck_assert_int_eq(access(out, F_OK), -1);
		return;
	}
	ck_assert_int_eq(e, 0);
	r = open_ok(out);
	ck_assert_ptr_null(perf_reader__damage(r));
	perf_reader__free(r);
}

START_TEST(test_corpus)
{
	const char *top = getenv("PRECORD_TOP") ? getenv("PRECORD_TOP") : ".";
	char path[1024], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/tests/corpus/EXPECT", top);
	f = fopen(path, "r");
	ck_assert_msg(f, "no %s", path);
	while (fgets(line, sizeof(line), f)) {
		char name[256], what[32];
		struct perf_reader *r;

		if (line[0] == '#' || sscanf(line, "%255s %31s", name, what) != 2)
			continue;
		snprintf(path, sizeof(path), "%s/tests/corpus/%s", top, name);
		r = open_reader(path, NULL);
		if (!strcmp(what, "refused")) {
			ck_assert_msg(!r, "%s: opened", name);
		} else {
			struct recs rs;

			ck_assert_msg(r, "%s: %s", name, strerror(errno));
			rs = read_all(r, false);
			free(rs.v);
			ck_assert_msg((perf_reader__damage(r) != NULL) == !strcmp(what, "damaged"),
				      "%s: expected %s", name, what);
			perf_reader__free(r);
		}
		exercise(path);
		n++;
	}
	fclose(f);
	ck_assert_int_ge(n, 10);
	/* Everything else in the directory (fuzzer finds) too. */
	snprintf(line, sizeof(line), "ls %s/tests/corpus/ > %s/list", top, dir);
	ck_assert_int_eq(system(line), 0);
	snprintf(path, sizeof(path), "%s/list", dir);
	f = fopen(path, "r");
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(path, sizeof(path), "%s/tests/corpus/%s", top, line);
		exercise(path);
	}
	fclose(f);
}
END_TEST

Suite *perf_reader_suite(void)
{
	Suite *s = suite_create("perf_reader");
	TCase *tc = tcase_create("perf");

	tcase_add_unchecked_fixture(tc, record_files, remove_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_perf_plain);
	tcase_add_test(tc, test_perf_compressed);
	tcase_add_test(tc, test_long_frame_after_whole_one);
	tcase_add_test(tc, test_skippable_and_cut_frames);
	tcase_add_test(tc, test_frames_decoded_apart);
	tcase_add_test(tc, test_frames_decode_ahead);
	tcase_add_test(tc, test_idle_work);
	tcase_add_test(tc, test_frames_apart_edges);
	tcase_add_test(tc, test_perf_dwarf);
	tcase_add_test(tc, test_perf_dwarf_stacks);
	tcase_add_test(tc, test_perf_system_wide);
	tcase_add_test(tc, test_truncate_plain);
	tcase_add_test(tc, test_truncate_compressed);
	tcase_add_test(tc, test_corrupt_header);
	tcase_add_test(tc, test_corrupt_record_size);
	tcase_add_test(tc, test_bad_zstd);
	tcase_add_test(tc, test_repair_truncated);
	tcase_add_test(tc, test_killed_recorder);
	tcase_add_test(tc, test_stale_size);
	tcase_add_test(tc, test_pipe_mode);
	suite_add_tcase(s, tc);

	tc = tcase_create("synth");
	tcase_add_unchecked_fixture(tc, make_dir, remove_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_precord_interleaved);
	tcase_add_test(tc, test_ordered_rounds);
	tcase_add_test(tc, test_attrs_and_ids);
	tcase_add_test(tc, test_huge_callchain);
	tcase_add_test(tc, test_lost_stats);
	tcase_add_test(tc, test_compressed_damage);
	suite_add_tcase(s, tc);

	tc = tcase_create("corpus");
	tcase_add_unchecked_fixture(tc, make_dir, remove_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_corpus);
	suite_add_tcase(s, tc);
	return s;
}
