/* Tests of the perf.data writer: the file is read back byte by byte and checked against the
 * layout perf 6.1 expects (header, attrs and ids, feature index at data end, feature payloads),
 * then the concurrency contracts (whole records under 4 appenders, FINISHED_ROUND placement,
 * sync at record boundaries) and the failure paths (rollback of a short write, keep_old). */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "elf_fixture.h"
#include "lib/cleanup.h"
#include "perf/abi.h"
#include "perf/features.h"
#include "perf/reader.h"
#include "perf/writer.h"

#define TEST_TYPE 200 /* a record type perf does not use: our test records */

static char tmpdir[64];

static void setup(void)
{
	strcpy(tmpdir, "/tmp/check_perf_writer.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static void teardown(void)
{
	nftw(tmpdir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static char *tpath(const char *name)
{
	static char buf[4][128];
	static int n;
	char *p = buf[n++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return p;
}

struct file {
	uint8_t *data;
	size_t len;
};

static struct file slurp(const char *path)
{
	struct file f = { 0 };
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	f.len = (size_t)st.st_size;
	f.data = malloc(f.len + 1);
	ck_assert_ptr_nonnull(f.data);
	ck_assert_int_eq(pread(fd, f.data, f.len, 0), (ssize_t)f.len);
	close(fd);
	return f;
}

static const struct perf_file_header *hdr_of(const struct file *f)
{
	ck_assert_uint_ge(f->len, PERF_HEADER_SIZE);
	return (const struct perf_file_header *)f->data;
}

static struct perf_event_attr cpu_clock_attr(uint64_t sample_type)
{
	struct perf_event_attr a = { 0 };

	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 4000;
	a.freq = 1;
	a.sample_type = sample_type;
	a.sample_id_all = 1;
	return a;
}

static struct perf_writer *open_simple(const char *path)
{
	static struct perf_event_attr attr;
	static struct perf_writer_event ev;
	static const uint64_t ids[] = { 7 };
	struct perf_writer_opts opts = { 0 };

	attr = cpu_clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	ev = (struct perf_writer_event){ "cpu-clock", &attr, ids, 1 };
	opts.events = &ev;
	opts.nr_events = 1;
	struct perf_writer *w = perf_writer__open(path, &opts);
	ck_assert_ptr_nonnull(w);
	return w;
}

/* A test record: header (misc = writer thread), u64 seq, then `size - 16` pattern bytes. */
static size_t make_record(uint8_t *buf, unsigned int thread, uint64_t seq, size_t size)
{
	struct perf_event_header h = { TEST_TYPE, (uint16_t)thread, (uint16_t)size };

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + 8, &seq, 8);
	for (size_t i = 16; i < size; i++)
		buf[i] = (uint8_t)(thread * 31 + seq + i);
	return size;
}

static bool record_ok(const uint8_t *p, size_t size)
{
	struct perf_event_header h;
	uint64_t seq;

	memcpy(&h, p, sizeof(h));
	memcpy(&seq, p + 8, 8);
	if (h.type != TEST_TYPE || h.size != size || size < 16)
		return false;
	for (size_t i = 16; i < size; i++)
		if (p[i] != (uint8_t)(h.misc * 31 + seq + i))
			return false;
	return true;
}

static int append_one(struct perf_writer *w, const void *p, size_t len)
{
	struct iovec iov = { (void *)p, len };

	return perf_writer__append(w, &iov, 1);
}

/* Feature sections of a finalized file, by bit; the index must sit at data end. */
struct feats {
	struct perf_file_section sec[FEAT_BITS];
	bool has[FEAT_BITS];
	uint64_t index_end;
	uint64_t last_end;
};

static struct feats read_feats(const struct file *f)
{
	const struct perf_file_header *h = hdr_of(f);
	struct feats r = { 0 };
	uint64_t off = h->data.offset + h->data.size;

	for (int bit = 0; bit < FEAT_BITS; bit++) {
		if (!(h->features[bit / 64] & (1ULL << (bit % 64))))
			continue;
		ck_assert_uint_le(off + 16, f->len);
		memcpy(&r.sec[bit], f->data + off, 16);
		r.has[bit] = true;
		off += 16;
	}
	r.index_end = off;
	for (int bit = 0; bit < FEAT_BITS; bit++) {
		if (!r.has[bit])
			continue;
		ck_assert_uint_ge(r.sec[bit].offset, r.index_end);
		ck_assert_uint_le(r.sec[bit].offset + r.sec[bit].size, f->len);
		if (r.sec[bit].offset + r.sec[bit].size > r.last_end)
			r.last_end = r.sec[bit].offset + r.sec[bit].size;
	}
	return r;
}

/* Read a perf string at *off within [.., end); returns it, advances *off. */
static const char *get_string(const struct file *f, uint64_t *off, uint64_t end)
{
	uint32_t len;

	ck_assert_uint_le(*off + 4, end);
	memcpy(&len, f->data + *off, 4);
	ck_assert_uint_eq(len % FEAT_NAME_ALIGN, 0);
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_le(*off + 4 + len, end);
	const char *s = (const char *)f->data + *off + 4;
	ck_assert_uint_lt(strnlen(s, len), len);
	*off += 4 + len;
	return s;
}

static const char *feat_string(const struct file *f, const struct feats *ft, int bit)
{
	ck_assert_msg(ft->has[bit], "feature %d missing", bit);
	uint64_t off = ft->sec[bit].offset;
	const char *s = get_string(f, &off, ft->sec[bit].offset + ft->sec[bit].size);
	ck_assert_uint_eq(off, ft->sec[bit].offset + ft->sec[bit].size);
	return s;
}

START_TEST(test_layout)
{
	struct perf_event_attr a0 = cpu_clock_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
						   PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	struct perf_event_attr a1 = a0;
	const uint64_t ids0[] = { 11, 12, 13 }, ids1[] = { 21 };
	struct perf_writer_event evs[] = {
		{ "cpu-clock", &a0, ids0, 3 },
		{ "task-clock", &a1, ids1, 1 },
	};
	char *argv[] = { "precord", "record", "--", "ls" };
	struct perf_writer_opts opts = {
		.events = evs, .nr_events = 2, .argc = 4, .argv = argv,
		.comp_level = 3, .comp_mmap_len = 65536,
	};
	uint8_t rec[64];
	uint64_t total = 0;

	a1.config = PERF_COUNT_SW_TASK_CLOCK;
	struct perf_writer *w = perf_writer__open(tpath("l.data"), &opts);
	ck_assert_ptr_nonnull(w);
	for (int i = 0; i < 3; i++) {
		size_t n = make_record(rec, 0, i, 16 + 8 * i);
		ck_assert_int_eq(append_one(w, rec, n), 0);
		total += n;
	}
	ck_assert_uint_eq(perf_writer__data_size(w), total);
	perf_writer__note_time(w, 100, 200);
	perf_writer__note_time(w, 50, 150);
	perf_writer__note_compression(w, 1000, 104);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	ck_assert_int_eq(perf_writer__finalize(w), 0);

	struct file f = slurp(tpath("l.data"));
	const struct perf_file_header *h = hdr_of(&f);
	ck_assert_uint_eq(h->magic, PERF_MAGIC2);
	ck_assert_mem_eq(f.data, "PERFILE2", 8);
	ck_assert_uint_eq(h->size, 104);
	ck_assert_uint_eq(h->attr_size, 144);
	ck_assert_uint_eq(h->attrs.size, 2 * 144);
	ck_assert_uint_eq(h->event_types.offset, 0);
	ck_assert_uint_eq(h->event_types.size, 0);
	ck_assert_uint_eq(h->data.size, total);
	ck_assert_uint_ge(h->data.offset, h->attrs.offset + h->attrs.size);

	/* Attrs: 128 bytes each with size 128, then their ids section. */
	for (int i = 0; i < 2; i++) {
		const uint8_t *e = f.data + h->attrs.offset + i * 144;
		struct perf_event_attr got;
		struct perf_file_section ids;

		memcpy(&got, e, 128);
		memcpy(&ids, e + 128, 16);
		ck_assert_uint_eq(got.size, 128);
		ck_assert_uint_eq(got.type, PERF_TYPE_SOFTWARE);
		ck_assert_uint_eq(got.config, i ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK);
		ck_assert_uint_eq(got.sample_type, a0.sample_type);
		ck_assert_uint_eq(got.sample_id_all, 1);
		ck_assert_uint_eq(ids.size, evs[i].nr_ids * 8);
		ck_assert_uint_le(ids.offset + ids.size, f.len);
		ck_assert_uint_ge(ids.offset, 104);
		ck_assert_mem_eq(f.data + ids.offset, evs[i].ids, ids.size);
	}
	/* Data: exactly our records. */
	uint64_t off = h->data.offset;
	for (int i = 0; i < 3; i++) {
		ck_assert(record_ok(f.data + off, 16 + 8 * i));
		off += 16 + 8 * i;
	}

	struct feats ft = read_feats(&f);
	/* Index at exactly data end (read_feats starts there) and the file ends with the last
	 * payload. */
	ck_assert_uint_eq(ft.last_end, f.len);
	int expect[] = { FEAT_HOSTNAME, FEAT_OSRELEASE, FEAT_VERSION, FEAT_ARCH, FEAT_NRCPUS,
			 FEAT_TOTAL_MEM, FEAT_CMDLINE, FEAT_EVENT_DESC, FEAT_SAMPLE_TIME,
			 FEAT_COMPRESSED };
	for (size_t i = 0; i < ARRAY_SIZE(expect); i++)
		ck_assert_msg(ft.has[expect[i]], "feature %d missing", expect[i]);
	ck_assert(!ft.has[FEAT_BUILD_ID]); /* no DSO registered */
	/* Payloads come in bit order, right after the index. */
	uint64_t prev = ft.index_end;
	for (int bit = 0; bit < FEAT_BITS; bit++) {
		if (!ft.has[bit])
			continue;
		ck_assert_uint_eq(ft.sec[bit].offset, prev);
		prev = ft.sec[bit].offset + ft.sec[bit].size;
	}

	struct utsname u;
	ck_assert_int_eq(uname(&u), 0);
	ck_assert_str_eq(feat_string(&f, &ft, FEAT_HOSTNAME), u.nodename);
	ck_assert_str_eq(feat_string(&f, &ft, FEAT_OSRELEASE), u.release);
	ck_assert_str_eq(feat_string(&f, &ft, FEAT_ARCH), u.machine);
	ck_assert_str_eq(feat_string(&f, &ft, FEAT_VERSION), "precord " PRECORD_VERSION);
#if defined(__x86_64__)
	const char *cpuid = feat_string(&f, &ft, FEAT_CPUID);
	ck_assert(strncmp(cpuid, "GenuineIntel,", 13) == 0 || strncmp(cpuid, "AuthenticAMD,", 13) == 0 ||
		  strchr(cpuid, ',') != NULL);
	ck_assert(strlen(feat_string(&f, &ft, FEAT_CPUDESC)) > 0);
#endif

	uint32_t nr[2];
	ck_assert_uint_eq(ft.sec[FEAT_NRCPUS].size, 8);
	memcpy(nr, f.data + ft.sec[FEAT_NRCPUS].offset, 8);
	ck_assert_uint_eq(nr[1], (uint32_t)sysconf(_SC_NPROCESSORS_ONLN)); /* online second */
	ck_assert_uint_ge(nr[0], nr[1]);

	uint64_t mem;
	ck_assert_uint_eq(ft.sec[FEAT_TOTAL_MEM].size, 8);
	memcpy(&mem, f.data + ft.sec[FEAT_TOTAL_MEM].offset, 8);
	ck_assert_uint_eq(mem, (uint64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 1024);

	/* CMDLINE: u32 n, n strings. */
	off = ft.sec[FEAT_CMDLINE].offset;
	uint64_t end = off + ft.sec[FEAT_CMDLINE].size;
	uint32_t n;
	memcpy(&n, f.data + off, 4);
	off += 4;
	ck_assert_uint_eq(n, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_str_eq(get_string(&f, &off, end), argv[i]);
	ck_assert_uint_eq(off, end);

	/* EVENT_DESC: u32 nr, u32 attr_sz, per event {attr, u32 nr_ids, name, ids}. */
	off = ft.sec[FEAT_EVENT_DESC].offset;
	end = off + ft.sec[FEAT_EVENT_DESC].size;
	uint32_t nr_ev, attr_sz;
	memcpy(&nr_ev, f.data + off, 4);
	memcpy(&attr_sz, f.data + off + 4, 4);
	off += 8;
	ck_assert_uint_eq(nr_ev, 2);
	ck_assert_uint_eq(attr_sz, 128);
	for (int i = 0; i < 2; i++) {
		struct perf_event_attr got;
		uint32_t nids;

		memcpy(&got, f.data + off, 128);
		ck_assert_uint_eq(got.size, 128);
		ck_assert_uint_eq(got.config, i ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK);
		off += 128;
		memcpy(&nids, f.data + off, 4);
		off += 4;
		ck_assert_uint_eq(nids, evs[i].nr_ids);
		ck_assert_str_eq(get_string(&f, &off, end), evs[i].name);
		ck_assert_mem_eq(f.data + off, evs[i].ids, nids * 8);
		off += nids * 8;
	}
	ck_assert_uint_eq(off, end);

	uint64_t t[2];
	ck_assert_uint_eq(ft.sec[FEAT_SAMPLE_TIME].size, 16);
	memcpy(t, f.data + ft.sec[FEAT_SAMPLE_TIME].offset, 16);
	ck_assert_uint_eq(t[0], 50);
	ck_assert_uint_eq(t[1], 200);

	uint32_t comp[5];
	ck_assert_uint_eq(ft.sec[FEAT_COMPRESSED].size, 20);
	memcpy(comp, f.data + ft.sec[FEAT_COMPRESSED].offset, 20);
	ck_assert_uint_eq(comp[0], 0);     /* version, as perf 6.1 writes it */
	ck_assert_uint_eq(comp[1], 1);     /* zstd */
	ck_assert_uint_eq(comp[2], 3);     /* level */
	ck_assert_uint_eq(comp[3], 10);    /* 1000 / 104 rounded */
	ck_assert_uint_eq(comp[4], 65536); /* mmap_len */

	perf_writer__free(w);
	free(f.data);
}
END_TEST

START_TEST(test_no_optional_features)
{
	struct perf_writer *w = open_simple(tpath("m.data"));
	struct file f;

	/* No time noted, no compression, no cmdline, no data: those features are absent and the
	 * index sits right at data.offset. */
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	f = slurp(tpath("m.data"));
	struct feats ft = read_feats(&f);
	ck_assert_uint_eq(hdr_of(&f)->data.size, 0);
	ck_assert(!ft.has[FEAT_SAMPLE_TIME]);
	ck_assert(!ft.has[FEAT_COMPRESSED]);
	ck_assert(!ft.has[FEAT_CMDLINE]);
	ck_assert(ft.has[FEAT_EVENT_DESC]);
	ck_assert_uint_eq(ft.last_end, f.len);
	/* A single event may have no IDENTIFIER and its attr still says size 128. */
	struct perf_event_attr a;
	memcpy(&a, f.data + hdr_of(&f)->attrs.offset, 128);
	ck_assert_uint_eq(a.size, 128);
	perf_writer__free(w);
	free(f.data);
}
END_TEST

/* CLOCKID and CLOCK_DATA as perf record -k writes them, read back as written. */
START_TEST(test_clock_data)
{
	static const uint64_t ids[] = { 7 };
	struct perf_event_attr attr = cpu_clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TIME);
	struct perf_writer_event ev = { "cpu-clock", &attr, ids, 1 };
	struct perf_clock_ref ck = { .clockid = 1, .wall_ns = 1764576000123456789ull,
				     .clock_ns = 3012444194000ull };
	struct perf_writer_opts opts = { .events = &ev, .nr_events = 1, .clock = &ck };
	struct perf_writer *w;
	struct perf_reader *r;
	const struct perf_reader_info *in;
	struct file f;

	attr.use_clockid = 1;
	attr.clockid = 1;
	w = perf_writer__open(tpath("c.data"), &opts);
	ck_assert_ptr_nonnull(w);
	/* one sample (ip, time): a file without data reads as a recorder's leftover */
	uint64_t rec[3] = { PERF_RECORD_SAMPLE | (uint64_t)24 << 48, 0x1000, ck.clock_ns + 5 };
	ck_assert_int_eq(append_one(w, rec, sizeof(rec)), 0);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	perf_writer__free(w);
	f = slurp(tpath("c.data"));
	struct feats ft = read_feats(&f);
	ck_assert(ft.has[FEAT_CLOCKID]);
	ck_assert(ft.has[FEAT_CLOCK_DATA]);
	free(f.data);
	r = perf_reader__new(NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(perf_reader__open(r, tpath("c.data")), 0);
	in = perf_reader__info(r);
	ck_assert(in->has_clock);
	ck_assert_uint_eq(in->clock.clockid, 1);
	ck_assert_uint_eq(in->clock.wall_ns, ck.wall_ns);
	ck_assert_uint_eq(in->clock.clock_ns, ck.clock_ns);
	perf_reader__free(r);
	/* without opts.clock: neither feature */
	w = open_simple(tpath("n.data"));
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	perf_writer__free(w);
	f = slurp(tpath("n.data"));
	ft = read_feats(&f);
	ck_assert(!ft.has[FEAT_CLOCKID] && !ft.has[FEAT_CLOCK_DATA]);
	free(f.data);
}
END_TEST

START_TEST(test_open_errors)
{
	struct perf_event_attr a = cpu_clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TIME);
	struct perf_event_attr b = a;
	struct perf_writer_event evs[] = { { "a", &a, NULL, 0 }, { "b", &b, NULL, 0 } };
	struct perf_writer_opts opts = { .events = evs, .nr_events = 2 };

	errno = 0;
	ck_assert_ptr_null(perf_writer__open(tpath("e.data"), NULL));
	ck_assert_int_eq(errno, EINVAL);
	/* Two events perf could not tell apart. */
	errno = 0;
	ck_assert_ptr_null(perf_writer__open(tpath("e.data"), &opts));
	ck_assert_int_eq(errno, EINVAL);
	a.sample_type |= PERF_SAMPLE_IDENTIFIER;
	b.sample_type |= PERF_SAMPLE_IDENTIFIER;
	b.sample_id_all = 0;
	ck_assert_ptr_null(perf_writer__open(tpath("e.data"), &opts));
	ck_assert_int_eq(errno, EINVAL);
	opts.nr_events = 0;
	ck_assert_ptr_null(perf_writer__open(tpath("e.data"), &opts));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(access(tpath("e.data"), F_OK), -1);
	opts.nr_events = 1;
	ck_assert_ptr_null(perf_writer__open(tpath("nodir/e.data"), &opts));
	ck_assert_int_eq(errno, ENOENT);
	/* not a regular file: refused at once (a FIFO without a reader used to block open()) and
	 * left as it is, not renamed to .old */
	opts.keep_old = true;
	ck_assert_int_eq(mkfifo(tpath("fifo"), 0600), 0);
	ck_assert_ptr_null(perf_writer__open(tpath("fifo"), &opts));
	ck_assert_int_eq(errno, ESPIPE);
	ck_assert_int_eq(access(tpath("fifo.old"), F_OK), -1);
	ck_assert_ptr_null(perf_writer__open(tmpdir, &opts));
	ck_assert_int_eq(errno, EISDIR);
	perf_writer__free(NULL);
}
END_TEST

START_TEST(test_after_finalize)
{
	struct perf_writer *w = open_simple(tpath("a.data"));
	uint8_t rec[32];

	make_record(rec, 0, 0, 32);
	ck_assert_int_eq(append_one(w, rec, 32), 0);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	ck_assert_int_eq(append_one(w, rec, 32), -EINVAL);
	ck_assert_int_eq(perf_writer__set_round_slots(w, 1), 0);
	ck_assert_int_eq(perf_writer__pass_done(w, 0, perf_writer__round(w)), -EINVAL);
	ck_assert_int_eq(perf_writer__sync(w), 0); /* must not clobber the final header */
	ck_assert_uint_eq(perf_writer__data_size(w), 32);
	struct file f = slurp(tpath("a.data"));
	struct feats ft = read_feats(&f);
	ck_assert(ft.has[FEAT_EVENT_DESC]);
	ck_assert_uint_eq(ft.last_end, f.len);
	perf_writer__free(w);
	free(f.data);
}
END_TEST

/* max_data_size: appends fill the data up to it exactly; the one that would pass it fails with
 * -EFBIG and nothing written, and so does every later one, even one that would fit; the closing
 * records still go in, and the file reads whole. */
START_TEST(test_max_data_size)
{
	static struct perf_event_attr attr;
	static const uint64_t ids[] = { 7 };
	struct perf_writer_event ev;
	struct perf_writer_opts opts = { 0 };
	uint8_t rec[100];

	attr = cpu_clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	ev = (struct perf_writer_event){ "cpu-clock", &attr, ids, 1 };
	opts.events = &ev;
	opts.nr_events = 1;
	opts.max_data_size = 1000;
	struct perf_writer *w = perf_writer__open(tpath("m.data"), &opts);
	ck_assert_ptr_nonnull(w);
	for (int i = 0; i < 9; i++)
		ck_assert_int_eq(append_one(w, rec, make_record(rec, 0, (uint64_t)i, 100)), 0);
	ck_assert(!perf_writer__limit_hit(w));
	make_record(rec, 0, 9, 64);
	ck_assert_int_eq(append_one(w, rec, 64), 0);             /* 964 */
	ck_assert_int_eq(append_one(w, rec, make_record(rec, 0, 10, 40)), -EFBIG);
	ck_assert(perf_writer__limit_hit(w));
	ck_assert_int_eq(append_one(w, rec, make_record(rec, 0, 11, 32)), -EFBIG); /* would fit */
	ck_assert_uint_eq(perf_writer__data_size(w), 964);
	make_record(rec, 0, 12, 48);
	ck_assert_int_eq(perf_writer__append_closing(w, &(struct iovec){ rec, 48 }, 1), 0);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	struct file f = slurp(tpath("m.data"));
	const struct perf_file_header *h = hdr_of(&f);
	ck_assert_uint_eq(h->data.size, 1012);
	ck_assert(record_ok(f.data + h->data.offset + 964, 48));
	ck_assert_uint_eq(read_feats(&f).last_end, f.len);
	perf_writer__free(w);
	free(f.data);
}
END_TEST

START_TEST(test_many_iovecs)
{
	struct perf_writer *w = open_simple(tpath("v.data"));
	enum { N = 2500 }; /* more than IOV_MAX (1024): the append is split, still whole */
	static uint8_t recs[N][16];
	static struct iovec iov[N];
	for (int i = 0; i < N; i++)
		iov[i] = (struct iovec){ recs[i], make_record(recs[i], 0, i, 16) };
	ck_assert_int_eq(perf_writer__append(w, iov, N), 0);
	ck_assert_int_eq(perf_writer__append(w, iov, 0), 0);
	ck_assert_int_eq(perf_writer__append(w, NULL, 1), -EINVAL);
	ck_assert_uint_eq(perf_writer__data_size(w), N * 16);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	struct file f = slurp(tpath("v.data"));
	ck_assert_uint_eq(hdr_of(&f)->data.size, N * 16);
	for (int i = 0; i < N; i++)
		ck_assert(record_ok(f.data + hdr_of(&f)->data.offset + 16 * i, 16));
	perf_writer__free(w);
	free(f.data);
}
END_TEST

/* ---- concurrency ---- */

#define THREADS 4
#define APPENDS 3000

struct appender {
	struct perf_writer *w;
	unsigned int id;
	int err;
};

/* Record sizes vary with seq so that a torn or interleaved write cannot go unnoticed. */
static size_t size_of_seq(unsigned int id, uint64_t seq)
{
	return 16 + 8 * ((seq * 7 + id * 3) % 30);
}

static void *appender_main(void *arg)
{
	struct appender *a = arg;
	uint8_t buf[3][512];
	uint64_t seq = 0;

	for (int i = 0; i < APPENDS; i++) {
		/* 1..3 records, in one iov or one iov per record. */
		int nrec = 1 + i % 3;
		struct iovec iov[3];
		size_t len = 0;

		if (i % 2) {
			for (int r = 0; r < nrec; r++, seq++) {
				iov[r].iov_base = buf[r];
				iov[r].iov_len = make_record(buf[r], a->id, seq, size_of_seq(a->id, seq));
			}
			a->err = perf_writer__append(a->w, iov, nrec);
		} else {
			for (int r = 0; r < nrec; r++, seq++)
				len += make_record(buf[0] + len, a->id, seq, size_of_seq(a->id, seq));
			iov[0] = (struct iovec){ buf[0], len };
			a->err = perf_writer__append(a->w, iov, 1);
		}
		if (a->err)
			break;
	}
	return NULL;
}

/* Walk the data section of test records; returns records per thread in seq order. */
static void check_test_records(const struct file *f, uint64_t *ret_counts, size_t nthreads,
			       size_t *ret_markers)
{
	const struct perf_file_header *h = hdr_of(f);
	uint64_t off = h->data.offset, end = h->data.offset + h->data.size;
	size_t markers = 0;

	memset(ret_counts, 0, nthreads * sizeof(*ret_counts));
	while (off < end) {
		struct perf_event_header rh;

		ck_assert_uint_le(off + 8, end);
		memcpy(&rh, f->data + off, 8);
		ck_assert_uint_ge(rh.size, 8);
		ck_assert_uint_le(off + rh.size, end);
		if (rh.type == PERF_RECORD_FINISHED_ROUND) {
			ck_assert_uint_eq(rh.size, 8);
			markers++;
		} else {
			uint64_t seq;
			memcpy(&seq, f->data + off + 8, 8);
			ck_assert_uint_lt(rh.misc, nthreads);
			ck_assert_msg(record_ok(f->data + off, rh.size), "torn record at %llu",
				      (unsigned long long)off);
			/* Each thread's records arrive in its own order, none lost or repeated. */
			ck_assert_uint_eq(seq, ret_counts[rh.misc]);
			ck_assert_uint_eq(rh.size, size_of_seq(rh.misc, seq));
			ret_counts[rh.misc]++;
		}
		off += rh.size;
	}
	ck_assert_uint_eq(off, end);
	if (ret_markers)
		*ret_markers = markers;
}

START_TEST(test_concurrent_appends)
{
	struct perf_writer *w = open_simple(tpath("c.data"));
	struct appender a[THREADS];
	pthread_t t[THREADS];
	uint64_t counts[THREADS];

	for (unsigned int i = 0; i < THREADS; i++) {
		a[i] = (struct appender){ w, i, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, appender_main, &a[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(a[i].err, 0);
	}
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	struct file f = slurp(tpath("c.data"));
	ck_assert_uint_eq(hdr_of(&f)->data.size, perf_writer__data_size(w));
	check_test_records(&f, counts, THREADS, NULL);
	for (int i = 0; i < THREADS; i++)
		ck_assert_uint_eq(counts[i], APPENDS * 2); /* 1+2+3 records per 3 appends */
	perf_writer__free(w);
	free(f.data);
}
END_TEST

/* ---- rounds ---- */

static size_t count_markers(const char *path)
{
	struct file f = slurp(path);
	const struct perf_file_header *h = hdr_of(&f);
	uint64_t off = h->data.offset, end = h->data.offset + h->data.size;
	size_t markers = 0;

	while (off < end) {
		struct perf_event_header rh;

		memcpy(&rh, f.data + off, 8);
		ck_assert_uint_ge(rh.size, 8);
		markers += rh.type == PERF_RECORD_FINISHED_ROUND;
		off += rh.size;
	}
	ck_assert_uint_eq(off, end);
	free(f.data);
	return markers;
}

static size_t sync_markers(struct perf_writer *w, const char *path)
{
	ck_assert_int_eq(perf_writer__sync(w), 0);
	return count_markers(path);
}

START_TEST(test_round_rule)
{
	const char *path = tpath("r.data");
	struct perf_writer *w = open_simple(path);
	uint8_t rec[16];
	uint64_t seq[3] = { 0 };
	uint64_t s0, s1, s2, stale;

#define APPEND(slot) do { make_record(rec, slot, seq[slot]++, 16); \
		ck_assert_int_eq(append_one(w, rec, 16), 0); } while (0)
#define SYNC_MARKERS() sync_markers(w, path)

	ck_assert_int_eq(perf_writer__pass_done(w, 0, perf_writer__round(w)), -EINVAL);
	ck_assert_int_eq(perf_writer__set_round_slots(w, 3), 0);
	ck_assert_int_eq(perf_writer__pass_done(w, 3, perf_writer__round(w)), -EINVAL);
	ck_assert_int_eq(perf_writer__pass_done(w, 0, perf_writer__round(w) + 1), -EINVAL);

	/* Round 1: slots 0 and 1 done, twice for slot 0: no marker until slot 2 is done. */
	s0 = perf_writer__round(w);
	APPEND(0);
	ck_assert_int_eq(perf_writer__pass_done(w, 0, s0), 0);
	s0 = perf_writer__round(w);
	APPEND(0);
	ck_assert_int_eq(perf_writer__pass_done(w, 0, s0), 0);
	s1 = perf_writer__round(w);
	stale = s1; /* slot 1 begins a pass now that ends only after the marker */
	APPEND(1);
	ck_assert_int_eq(perf_writer__pass_done(w, 1, s1), 0);
	ck_assert_uint_eq(SYNC_MARKERS(), 0);
	s2 = perf_writer__round(w);
	ck_assert_int_eq(perf_writer__pass_done(w, 2, s2), 0); /* an empty pass counts */
	ck_assert_uint_eq(SYNC_MARKERS(), 1);
	ck_assert_uint_gt(perf_writer__round(w), s2);

	/* Round 2: slot 1's pass began before the marker: it does not count. */
	s0 = perf_writer__round(w);
	s2 = perf_writer__round(w);
	APPEND(0);
	ck_assert_int_eq(perf_writer__pass_done(w, 0, s0), 0);
	ck_assert_int_eq(perf_writer__pass_done(w, 2, s2), 0);
	APPEND(1);
	ck_assert_int_eq(perf_writer__pass_done(w, 1, stale), 0);
	ck_assert_uint_eq(SYNC_MARKERS(), 1);
	s1 = perf_writer__round(w);
	ck_assert_int_eq(perf_writer__pass_done(w, 1, s1), 0);
	ck_assert_uint_eq(SYNC_MARKERS(), 2);

	/* Round 3: nothing appended since the marker: the round ends without one. */
	uint64_t r = perf_writer__round(w);
	for (unsigned int i = 0; i < 3; i++)
		ck_assert_int_eq(perf_writer__pass_done(w, i, r), 0);
	ck_assert_uint_eq(SYNC_MARKERS(), 2);
	ck_assert_uint_gt(perf_writer__round(w), r);

	/* Changing the number of slots restarts the round: old passes do not count. */
	r = perf_writer__round(w);
	APPEND(0);
	ck_assert_int_eq(perf_writer__set_round_slots(w, 1), 0);
	ck_assert_int_eq(perf_writer__pass_done(w, 0, r), 0);
	ck_assert_uint_eq(SYNC_MARKERS(), 2);
	ck_assert_int_eq(perf_writer__pass_done(w, 0, perf_writer__round(w)), 0);
	ck_assert_uint_eq(SYNC_MARKERS(), 3);

	perf_writer__free(w);
#undef APPEND
#undef SYNC_MARKERS
}
END_TEST

/* Threads acting as readers: each pass takes a ticket after perf_writer__round() (standing for
 * the time of the newest record it can drain) and stamps its records with it. perf's ordering
 * then needs: every record after marker k has a ticket >= every ticket before marker k-1. */
static uint64_t ticket;

struct passer {
	struct perf_writer *w;
	unsigned int slot;
	int err;
	uint64_t records;
};

#define ROUNDS_WANTED 30

static void *passer_main(void *arg)
{
	struct passer *p = arg;
	uint8_t buf[4][32];

	/* Keep draining until enough rounds went by: a reader that stopped early would hold
	 * every later marker back. */
	for (int pass = 0; pass < 200000 && !p->err; pass++) {
		uint64_t started = perf_writer__round(p->w);
		if (started >= ROUNDS_WANTED)
			break;
		uint64_t t = __atomic_fetch_add(&ticket, 1, __ATOMIC_SEQ_CST);
		int nrec = pass % 4; /* some passes find nothing */
		struct iovec iov[4];

		for (int r = 0; r < nrec; r++)
			iov[r] = (struct iovec){ buf[r], make_record(buf[r], p->slot, t, 24) };
		if (nrec)
			p->err = perf_writer__append(p->w, iov, nrec);
		p->records += nrec;
		if (!p->err)
			p->err = perf_writer__pass_done(p->w, p->slot, started);
		if (pass % 8 == 0)
			sched_yield();
	}
	return NULL;
}

START_TEST(test_round_threads)
{
	struct perf_writer *w = open_simple(tpath("t.data"));
	struct passer p[4];
	pthread_t t[4];

	ck_assert_int_eq(perf_writer__set_round_slots(w, 4), 0);
	for (unsigned int i = 0; i < 4; i++) {
		p[i] = (struct passer){ w, i, 0, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, passer_main, &p[i]), 0);
	}
	uint64_t want_records = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(p[i].err, 0);
		want_records += p[i].records;
	}
	ck_assert_int_eq(perf_writer__finalize(w), 0);

	struct file f = slurp(tpath("t.data"));
	const struct perf_file_header *h = hdr_of(&f);
	uint64_t off = h->data.offset, end = off + h->data.size;
	/* max_before[k]: largest ticket before marker k; checked against records after k+1. */
	uint64_t max_so_far = 0, max_at_prev = 0, max_at_prev2 = 0;
	size_t markers = 0, records = 0;
	bool any = false;

	while (off < end) {
		struct perf_event_header rh;
		memcpy(&rh, f.data + off, 8);
		if (rh.type == PERF_RECORD_FINISHED_ROUND) {
			markers++;
			max_at_prev2 = max_at_prev;
			max_at_prev = max_so_far;
		} else {
			uint64_t tk;
			ck_assert(record_ok(f.data + off, 24));
			memcpy(&tk, f.data + off + 8, 8);
			/* After marker k (k >= 2), tickets must be >= the max before marker k-1. */
			if (markers >= 2)
				ck_assert_msg(tk >= max_at_prev2,
					      "ticket %llu after marker %zu < %llu before marker %zu",
					      (unsigned long long)tk, markers,
					      (unsigned long long)max_at_prev2, markers - 1);
			if (!any || tk > max_so_far)
				max_so_far = tk;
			any = true;
			records++;
		}
		off += rh.size;
	}
	ck_assert_uint_eq(records, want_records);
	ck_assert_uint_ge(markers, ROUNDS_WANTED / 2);
	perf_writer__free(w);
	free(f.data);
}
END_TEST

/* ---- sync ---- */

struct syncer_arg {
	struct perf_writer *w;
	volatile bool stop;
	int err;
	_Atomic uint64_t allowed; /* the appender waits while it has appended this much */
};

#define SYNC_DATA_MAX (2 << 20)
#define SYNC_STEP (64 << 10)

static void *sync_appender(void *arg)
{
	struct syncer_arg *s = arg;
	uint8_t buf[512];

	for (uint64_t seq = 0; !s->stop && !s->err; seq++) {
		size_t n = make_record(buf, 0, seq, size_of_seq(0, seq));

		while (!s->stop && perf_writer__data_size(s->w) >= atomic_load(&s->allowed))
			usleep(50);
		s->err = append_one(s->w, buf, n);
		if (perf_writer__data_size(s->w) > SYNC_DATA_MAX)
			break;
		if (seq % 64 == 0)
			sched_yield();
	}
	return NULL;
}

START_TEST(test_sync_visible)
{
	const char *path = tpath("s.data");
	struct perf_writer *w = open_simple(path);
	struct syncer_arg s = { w, false, 0, SYNC_STEP };
	pthread_t t;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct perf_file_header h;
	uint64_t last = 0, walked;
	uint8_t rbuf[512];
	int grew = 0;

	ck_assert_int_ge(fd, 0);
	/* Before any sync the header says 0 and has no features. */
	ck_assert_int_eq(pread(fd, &h, sizeof(h), 0), sizeof(h));
	ck_assert_uint_eq(h.data.size, 0);
	ck_assert_uint_eq(h.features[0] | h.features[1] | h.features[2] | h.features[3], 0);
	walked = h.data.offset;

	/* Syncs while the appender appends, whatever the machine's load: the appender is let go
	 * SYNC_STEP further each time a sync has shown it reached its limit, so each step is
	 * seen growing, and the loop ends when all has been appended (the tcase's timeout bounds
	 * it, not a number of passes that a busy machine might not give the appender time for). */
	ck_assert_int_eq(pthread_create(&t, NULL, sync_appender, &s), 0);
	while (last <= SYNC_DATA_MAX && !s.err) {
		ck_assert_int_eq(perf_writer__sync(w), 0);
		ck_assert_int_eq(pread(fd, &h, sizeof(h), 0), sizeof(h));
		ck_assert_uint_eq(h.magic, PERF_MAGIC2);
		ck_assert_uint_eq(h.features[0], 0);
		ck_assert_uint_ge(h.data.size, last);
		grew += h.data.size > last;
		last = h.data.size;

		/* The size must end on a record boundary of what is in the file; records before
		 * the previous boundary were checked already. */
		struct stat st;
		uint64_t end = h.data.offset + h.data.size;
		ck_assert_int_eq(fstat(fd, &st), 0);
		ck_assert_uint_ge((uint64_t)st.st_size, end);
		while (walked < end) {
			struct perf_event_header rh;
			ck_assert_int_eq(pread(fd, &rh, 8, walked), 8);
			ck_assert_uint_eq(rh.type, TEST_TYPE);
			ck_assert_uint_le(walked + rh.size, end);
			ck_assert_int_eq(pread(fd, rbuf, rh.size, walked), rh.size);
			ck_assert(record_ok(rbuf, rh.size));
			walked += rh.size;
		}
		ck_assert_uint_eq(walked, end);
		if (last >= atomic_load(&s.allowed))
			atomic_fetch_add(&s.allowed, SYNC_STEP);
		usleep(1000);
	}
	s.stop = true;
	pthread_join(t, NULL);
	ck_assert_int_eq(s.err, 0);
	ck_assert_int_ge(grew, SYNC_DATA_MAX / SYNC_STEP);
	ck_assert_int_eq(perf_writer__sync(w), 0);
	ck_assert_int_eq(pread(fd, &h, sizeof(h), 0), sizeof(h));
	ck_assert_uint_eq(h.data.size, perf_writer__data_size(w));
	close(fd);
	perf_writer__free(w);
}
END_TEST

/* ---- failure paths ---- */

static struct perf_file_header read_header(const char *path)
{
	struct perf_file_header h;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &h, sizeof(h), 0), sizeof(h));
	close(fd);
	return h;
}

/* Check itself reports through a file that RLIMIT_FSIZE also limits: no ck_assert may run while
 * the limit is low, so these tests note results first and assert after restoring it. */
static struct rlimit lower_fsize(rlim_t max, int *ret)
{
	struct rlimit old, lim;

	ck_assert(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = max;
	*ret = setrlimit(RLIMIT_FSIZE, &lim); /* checked by the caller once the limit is back */
	return old;
}

START_TEST(test_rollback_fsize)
{
	const char *path = tpath("f.data");
	struct perf_writer *w = open_simple(path);
	uint64_t data_offset = read_header(path).data.offset;
	const rlim_t max = 64 * 1024 + 500;
	uint8_t rec[3][1000];
	struct iovec iov[3];
	struct stat st;
	uint64_t good = 0, seq = 0;
	int r = 0, sync_r, slots_r;
	int stat_r;

	/* RLIMIT_FSIZE makes a write stop short at the limit, the next one fail with EFBIG. The
	 * limit falls inside a 3-record append: the first part gets written, then rolled back. */
	int lower_r;
	struct rlimit old = lower_fsize(max, &lower_r);
	for (int i = 0; i < 200; i++) {
		good = perf_writer__data_size(w);
		for (int k = 0; k < 3; k++)
			iov[k] = (struct iovec){ rec[k], make_record(rec[k], 0, seq + k, 1000) };
		r = perf_writer__append(w, iov, 3);
		if (r < 0)
			break;
		seq += 3;
	}
	stat_r = stat(path, &st);
	slots_r = perf_writer__set_round_slots(w, 1);
	sync_r = perf_writer__sync(w);
	int setr = setrlimit(RLIMIT_FSIZE, &old);

	ck_assert_int_eq(lower_r, 0);
	ck_assert_int_eq(setr, 0);
	ck_assert_int_eq(r, -EFBIG);
	ck_assert_uint_le(data_offset + good, max);
	ck_assert_uint_gt(data_offset + good + 3000, max); /* it did cross the limit */
	ck_assert_uint_lt(data_offset + good + 1000, max); /* ... after a part was written */
	/* The file ends exactly where the last whole append ended. */
	ck_assert_uint_eq(perf_writer__data_size(w), good);
	ck_assert_int_eq(stat_r, 0);
	ck_assert_uint_eq((uint64_t)st.st_size, data_offset + good);
	ck_assert_int_eq(slots_r, 0);
	ck_assert_int_eq(sync_r, 0);

	/* With room again, appends go on after the last good record and the file reads whole. */
	ck_assert_int_eq(perf_writer__append(w, iov, 3), 0);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	struct file f = slurp(path);
	const struct perf_file_header *h = hdr_of(&f);
	ck_assert_uint_eq(h->data.size, (seq + 3) * 1000);
	for (uint64_t i = 0; i < seq + 3; i++) {
		const uint8_t *p = f.data + h->data.offset + i * 1000;
		ck_assert(record_ok(p, 1000));
		ck_assert_uint_eq(*(const uint64_t *)(p + 8), i);
	}
	struct feats ft = read_feats(&f);
	ck_assert_uint_eq(ft.last_end, f.len);
	signal(SIGXFSZ, SIG_DFL);
	perf_writer__free(w);
	free(f.data);
}
END_TEST

START_TEST(test_finalize_fails_cleanly)
{
	const char *path = tpath("g.data");
	struct perf_writer *w = open_simple(path);
	uint8_t rec[64];
	struct stat st;

	make_record(rec, 0, 0, 64);
	ck_assert_int_eq(append_one(w, rec, 64), 0);
	uint64_t end = read_header(path).data.offset + 64;
	/* No room for the features: finalize fails but leaves header + data readable. */
	int lower_r;
	struct rlimit old = lower_fsize(end, &lower_r);
	int r1 = perf_writer__finalize(w);
	int r2 = perf_writer__finalize(w);
	int setr = setrlimit(RLIMIT_FSIZE, &old);

	ck_assert_int_eq(lower_r, 0);
	ck_assert_int_eq(setr, 0);
	ck_assert_int_eq(r1, -EFBIG);
	ck_assert_int_eq(r2, -EFBIG);
	struct perf_file_header h = read_header(path);
	ck_assert_uint_eq(h.data.size, 64);
	ck_assert_uint_eq(h.features[0], 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, end);
	signal(SIGXFSZ, SIG_DFL);
	perf_writer__free(w);
}
END_TEST

static void write_text(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(s, f);
	fclose(f);
}

START_TEST(test_keep_old)
{
	struct perf_event_attr a = cpu_clock_attr(PERF_SAMPLE_IP);
	struct perf_writer_event ev = { "cpu-clock", &a, NULL, 0 };
	struct perf_writer_opts opts = { .events = &ev, .nr_events = 1, .keep_old = true };
	const char *path = tpath("k.data"), *old = tpath("k.data.old");
	struct perf_writer *w;
	char buf[16] = { 0 };

	/* No file yet: nothing to keep. */
	w = perf_writer__open(path, &opts);
	ck_assert_ptr_nonnull(w);
	perf_writer__free(w);
	ck_assert_int_eq(access(old, F_OK), -1);

	write_text(path, "previous");
	w = perf_writer__open(path, &opts);
	ck_assert_ptr_nonnull(w);
	perf_writer__free(w);
	FILE *f = fopen(old, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "previous");
	ck_assert_uint_eq(read_header(path).magic, PERF_MAGIC2);

	/* Without keep_old the file is replaced and .old untouched. */
	write_text(path, "second");
	opts.keep_old = false;
	w = perf_writer__open(path, &opts);
	ck_assert_ptr_nonnull(w);
	perf_writer__free(w);
	ck_assert_uint_eq(read_header(path).magic, PERF_MAGIC2);
	f = fopen(old, "r");
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "previous");

	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
}
END_TEST

/* ---- build ids ---- */

struct self_id {
	uint8_t id[FEAT_BUILD_ID_MAX];
	int len;
};

/* The main program's build id as the loader mapped it: independent of libelf. */
static int main_note_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct self_id *s = data;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		int r = feat__build_id_from_notes((const void *)(info->dlpi_addr + ph->p_vaddr),
						  ph->p_memsz, s->id);
		if (r > 0) {
			s->len = r;
			break;
		}
	}
	return 1; /* the first entry is the main program */
}

START_TEST(test_build_ids)
{
	const char *path = tpath("b.data");
	struct perf_writer *w = open_simple(path);
	char exe[4096];
	struct self_id self = { .len = 0 };
	uint8_t kid[FEAT_BUILD_ID_MAX], vid[FEAT_BUILD_ID_MAX];
	int klen = feat__build_id_kernel(kid), vlen = feat__build_id_vdso(vid);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	dl_iterate_phdr(main_note_cb, &self);
	write_text(tpath("text"), "not an elf file\n");

	ck_assert_int_eq(perf_writer__add_dso(w, exe, false), 0);
	ck_assert_int_eq(perf_writer__add_dso(w, exe, false), 0); /* once only */
	ck_assert_int_eq(perf_writer__add_dso(w, tpath("text"), false), 0);
	ck_assert_int_eq(perf_writer__add_dso(w, tpath("missing"), false), 0);
	ck_assert_int_eq(perf_writer__add_dso(w, "[vdso]", false), 0);
	ck_assert_int_eq(perf_writer__add_dso(w, "//anon", false), 0);
	ck_assert_int_eq(perf_writer__add_dso(w, "[kernel.kallsyms]_text", true), 0);
	ck_assert_int_eq(perf_writer__add_dso(w, "[kernel.kallsyms]", true), 0);
	ck_assert_int_eq(perf_writer__add_dso(w, "/lib/modules/x.ko", true), 0);
	/* MMAP2 records: a data mapping of a file is no candidate; a code one is (once). */
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_gen;
		uint32_t prot, flags;
		char name[64];
	} m2 = { .h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m2) }, .prot = 1 };
	snprintf(m2.name, sizeof(m2.name), "%s", "/usr/bin/dash"); /* has a build id */
	ck_assert_int_eq(perf_writer__note_mmap(w, &m2.h), 0);
	m2.prot = 5;
	snprintf(m2.name, sizeof(m2.name), "%s", "[vdso]");
	ck_assert_int_eq(perf_writer__note_mmap(w, &m2.h), 0);
	ck_assert_int_eq(perf_writer__finalize(w), 0);

	struct file f = slurp(path);
	struct feats ft = read_feats(&f);
	bool saw_exe = false, saw_kernel = false, saw_vdso = false;
	ck_assert(ft.has[FEAT_BUILD_ID]);
	uint64_t off = ft.sec[FEAT_BUILD_ID].offset;
	uint64_t end = off + ft.sec[FEAT_BUILD_ID].size;
	while (off < end) {
		struct perf_event_header rh;
		int32_t pid;
		const uint8_t *e = f.data + off;

		memcpy(&rh, e, 8);
		memcpy(&pid, e + 8, 4);
		ck_assert_uint_le(off + rh.size, end);
		ck_assert_int_eq(pid, -1);
		ck_assert_uint_eq(rh.size, 36 + 64 * ((strlen((const char *)e + 36) + 64) / 64));
		ck_assert(rh.misc & 0x8000);
		const char *name = (const char *)e + 36;
		uint8_t id_len = e[12 + 20];
		if (strcmp(name, exe) == 0) {
			ck_assert(!saw_exe);
			saw_exe = true;
			ck_assert_uint_eq(rh.misc, 0x8000 | PERF_RECORD_MISC_USER);
			ck_assert_int_gt(self.len, 0);
			ck_assert_uint_eq(id_len, self.len);
			ck_assert_mem_eq(e + 12, self.id, self.len);
		} else if (strcmp(name, "[kernel.kallsyms]") == 0) {
			ck_assert(!saw_kernel);
			saw_kernel = true;
			ck_assert_uint_eq(rh.misc, 0x8000 | PERF_RECORD_MISC_KERNEL);
			ck_assert_int_gt(klen, 0);
			ck_assert_uint_eq(id_len, klen);
			ck_assert_mem_eq(e + 12, kid, klen);
		} else if (strcmp(name, "[vdso]") == 0) {
			/* As perf: the id of the vDSO the kernel maps into every process. */
			ck_assert(!saw_vdso);
			saw_vdso = true;
			ck_assert_uint_eq(rh.misc, 0x8000 | PERF_RECORD_MISC_USER);
			ck_assert_int_gt(vlen, 0);
			ck_assert_uint_eq(id_len, vlen);
			ck_assert_mem_eq(e + 12, vid, vlen);
		} else {
			ck_abort_msg("unexpected BUILD_ID entry %s", name);
		}
		off += rh.size;
	}
	ck_assert_uint_eq(off, end);
	ck_assert(saw_exe);
	ck_assert(saw_kernel == (klen > 0));
	ck_assert(saw_vdso);
	perf_writer__free(w);
	free(f.data);
}
END_TEST

static size_t put_note(uint8_t *p, uint32_t type, const char *name, const void *desc,
		       uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1;
	size_t off = 12;

	memcpy(p, &namesz, 4);
	memcpy(p + 4, &descsz, 4);
	memcpy(p + 8, &type, 4);
	memset(p + 12, 0, 64);
	memcpy(p + off, name, namesz);
	off += (namesz + 3) / 4 * 4;
	memcpy(p + off, desc, descsz);
	off += (descsz + 3) / 4 * 4;
	return off;
}

START_TEST(test_notes_parser)
{
	uint8_t buf[256], id[FEAT_BUILD_ID_MAX];
	const uint8_t want[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
	uint8_t big[24] = { 0 };
	size_t n;

	/* A Xen note then the GNU build id: found past the first note. */
	n = put_note(buf, 3, "Xen", want, 5);
	n += put_note(buf + n, NT_GNU_BUILD_ID, "GNU", want, 20);
	ck_assert_int_eq(feat__build_id_from_notes(buf, n, id), 20);
	ck_assert_mem_eq(id, want, 20);
	/* Cut inside the id: malformed, not a shorter id. */
	ck_assert_int_eq(feat__build_id_from_notes(buf, n - 4, id), -EINVAL);
	/* No GNU build-id note. */
	n = put_note(buf, NT_GNU_BUILD_ID, "Xen", want, 20);
	ck_assert_int_eq(feat__build_id_from_notes(buf, n, id), -ENOENT);
	/* An id longer than perf can hold is refused rather than cut. */
	n = put_note(buf, NT_GNU_BUILD_ID, "GNU", big, 24);
	ck_assert_int_eq(feat__build_id_from_notes(buf, n, id), -EINVAL);
	/* A short (md5-sized) id is fine. */
	n = put_note(buf, NT_GNU_BUILD_ID, "GNU", want, 16);
	ck_assert_int_eq(feat__build_id_from_notes(buf, n, id), 16);
	/* Files that are not ELF or do not exist. */
	write_text(tpath("t"), "hello");
	ck_assert_int_eq(feat__build_id_file(tpath("t"), id), -ENOEXEC);
	ck_assert_int_eq(feat__build_id_file(tpath("none"), id), -ENOENT);
}
END_TEST

/* An ELF file of n note sections that all cover one 64 KiB stretch of zeros (empty notes),
 * then one note section holding a real build id. */
static void write_many_notes_elf(const char *path, size_t n, const uint8_t id[20])
{
	size_t shoff = sizeof(Elf64_Ehdr), nsec = n + 2;
	size_t zeros = shoff + nsec * sizeof(Elf64_Shdr), idnote = zeros + (64 << 10);
	uint8_t note[128]; /* put_note clears 64 bytes past the header */
	size_t notelen = put_note(note, NT_GNU_BUILD_ID, "GNU", id, 20);
	Elf64_Ehdr eh = elf_fixture__ehdr(shoff, (uint16_t)nsec);
	FILE *f = fopen(path, "we");

	ck_assert_ptr_nonnull(f);
	fwrite(&eh, sizeof(eh), 1, f);
	for (size_t i = 0; i < nsec; i++) {
		Elf64_Shdr sh = { 0 };

		if (i) {
			sh.sh_type = SHT_NOTE;
			sh.sh_addralign = 4;
			sh.sh_offset = i <= n ? zeros : idnote;
			sh.sh_size = i <= n ? (64 << 10) : notelen;
		}
		fwrite(&sh, sizeof(sh), 1, f);
	}
	for (size_t i = 0; i < (64 << 10); i++)
		fputc(0, f);
	fwrite(note, notelen, 1, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* The file comes from a profiled process: thousands of note sections (they cost the
 * attacker 64 bytes each) must not make the reader copy 64 KiB for each, which took a
 * precordd rotation 30 s and 4 GiB. Only the first FEAT_BUILD_ID_NOTE_SCNS are looked into:
 * the id in the 4001st is not found, and memory stays flat. A few note sections before the id
 * (as linked objects have) do not hide it. */
START_TEST(test_build_id_many_notes)
{
	const uint8_t want[20] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 };
	uint8_t id[FEAT_BUILD_ID_MAX];
	long before;
	int ret;

	write_many_notes_elf(tpath("few.so"), 3, want);
	ck_assert_int_eq(feat__build_id_file(tpath("few.so"), id), 20);
	ck_assert_mem_eq(id, want, 20);
	write_many_notes_elf(tpath("many.so"), 4000, want);
	before = elf_fixture__maxrss_kb();
	ret = feat__build_id_file(tpath("many.so"), id);
	/* 4000 copies would be 250 MiB; the bound allows 16 (1 MiB) */
	ck_assert_int_lt(elf_fixture__maxrss_kb() - before, 32 << 10);
	ck_assert_int_eq(ret, -ENOENT);
}
END_TEST

/* A header that claims 50 million sections (extended numbering: the count in section 0) in
 * a sparse file of 2 GiB, 4 KiB on disk: refused from its header, before libelf (which
 * allocated a descriptor per section: gigabytes) or anything else trusts it. */
START_TEST(test_build_id_sparse_claims)
{
	uint8_t id[FEAT_BUILD_ID_MAX];
	long before;
	int ret;

	elf_fixture__sparse_claims(tpath("sparse.so"));
	before = elf_fixture__maxrss_kb();
	ret = feat__build_id_file(tpath("sparse.so"), id);
	ck_assert_int_lt(elf_fixture__maxrss_kb() - before, 32 << 10);
	ck_assert_int_eq(ret, -ENOEXEC);
}
END_TEST

/* The path of a mapping may have been changed by its process since: a directory on the way
 * replaced by a symlink (to make the recorder open a file of the process's choice) is not
 * followed, and a FIFO is refused without waiting for a writer. */
START_TEST(test_build_id_hostile_paths)
{
	char dir[PATH_MAX], link[PATH_MAX], through[PATH_MAX + 16];
	uint8_t id[FEAT_BUILD_ID_MAX];
	const uint8_t want[20] = { 1 };

	snprintf(dir, sizeof(dir), "%s", tpath("real"));
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(through, sizeof(through), "%s/lib.so", dir);
	write_many_notes_elf(through, 1, want);
	ck_assert_int_eq(feat__build_id_file(through, id), 20);
	snprintf(link, sizeof(link), "%s", tpath("link"));
	ck_assert_int_eq(symlink(dir, link), 0);
	snprintf(through, sizeof(through), "%s/lib.so", link);
	ck_assert_int_eq(feat__build_id_file(through, id), -ELOOP);
	ck_assert_int_eq(mkfifo(tpath("fifo.so"), 0600), 0);
	ck_assert_int_eq(feat__build_id_file(tpath("fifo.so"), id), -ENOEXEC);
}
END_TEST

/* A process that maps one file under endless new paths (renaming it between mmaps, each path
 * near PATH_MAX) must not grow the writer without bound: 50,000 paths of 3,000 bytes were
 * 150 MB of DSO entries until the file's end; the table keeps 16384 or 8 MiB at most. */
START_TEST(test_dso_table_bounded)
{
	struct perf_writer *w = open_simple(tpath("dsos.data"));
	char path[3001];
	long before;

	ck_assert_ptr_nonnull(w);
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = 0;
	before = elf_fixture__maxrss_kb();
	for (int i = 0; i < 50000; i++) {
		snprintf(path + 1, 12, "%011d", i);
		path[12] = 'p';
		ck_assert_int_eq(perf_writer__add_dso(w, path, false), 0);
	}
	ck_assert_int_lt(elf_fixture__maxrss_kb() - before, 32 << 10);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	perf_writer__free(w);
}
END_TEST

START_TEST(test_string_encoding)
{
	struct fbuf b = { 0 };
	uint32_t len;

	fbuf__put_string(&b, "vm");
	ck_assert_uint_eq(b.len, 4 + 64);
	memcpy(&len, b.data, 4);
	ck_assert_uint_eq(len, 64);
	ck_assert_str_eq((char *)b.data + 4, "vm");
	for (size_t i = 4 + 3; i < b.len; i++)
		ck_assert_uint_eq(b.data[i], 0);
	/* 63 chars + NUL fill one block exactly; 64 need two. */
	char s[65];
	memset(s, 'x', 64);
	s[63] = '\0';
	b.len = 0;
	fbuf__put_string(&b, s);
	ck_assert_uint_eq(b.len, 4 + 64);
	s[63] = 'x';
	s[64] = '\0';
	b.len = 0;
	fbuf__put_string(&b, s);
	ck_assert_uint_eq(b.len, 4 + 128);
	fbuf__free(&b);
}
END_TEST

Suite *perf_writer_suite(void)
{
	Suite *s = suite_create("perf_writer");
	TCase *tc;

	tc = tcase_create("layout");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_no_optional_features);
	tcase_add_test(tc, test_clock_data);
	tcase_add_test(tc, test_open_errors);
	tcase_add_test(tc, test_after_finalize);
	tcase_add_test(tc, test_string_encoding);
	tcase_add_test(tc, test_many_iovecs);
	tcase_add_test(tc, test_max_data_size);
	suite_add_tcase(s, tc);

	tc = tcase_create("concurrency");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_concurrent_appends);
	tcase_add_test(tc, test_sync_visible);
	suite_add_tcase(s, tc);

	tc = tcase_create("rounds");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_rule);
	tcase_add_test(tc, test_round_threads);
	suite_add_tcase(s, tc);

	tc = tcase_create("failures");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rollback_fsize);
	tcase_add_test(tc, test_finalize_fails_cleanly);
	tcase_add_test(tc, test_keep_old);
	suite_add_tcase(s, tc);

	tc = tcase_create("build_id");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_build_ids);
	tcase_add_test(tc, test_notes_parser);
	tcase_add_test(tc, test_build_id_many_notes);
	tcase_add_test(tc, test_build_id_sparse_claims);
	tcase_add_test(tc, test_build_id_hostile_paths);
	tcase_add_test(tc, test_dso_table_bounded);
	suite_add_tcase(s, tc);
	return s;
}
