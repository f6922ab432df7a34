/* Tests of the report session without the CLI: a perf.data is synthesized with the writer (a
 * COMM, an MMAP of this very test program and samples whose callchains point at functions of
 * it, written out of time order), run through a session with a recording sink and with the
 * aggregation sink, and checked: time order, symbols, filters, the time range, counts from the
 * same pass, sinks stopping the pass, a second run refused, the pprof sink read back. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include "perf/writer.h"
#include "report/aggregate.h"
#include "report/pprof.h"
#include "report/profile.pb-c.h"
#include "report/session.h"
#include "unwind/symbols.h"

#define ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

__attribute__((noinline)) void session_test_leaf(void)
{
	__asm__ volatile("nop; nop; nop; nop");
}

__attribute__((noinline)) void session_test_caller(void)
{
	session_test_leaf();
	__asm__ volatile("nop; nop; nop; nop");
}

/* A function whose DWARF name (its asm label, as the linkage name) is not the ELF symbol chosen
 * for its address, as glibc's __GI___clock_gettime under clock_gettime@@GLIBC_2.17: both are
 * global, and the alias has the longer name, so perf's rules pick it. */
void session_test_renamed(void) __asm__("session_test_hidden_nm");
__attribute__((noinline, used)) void session_test_renamed(void)
{
	__asm__ volatile("nop; nop; nop; nop");
}
extern void session_test_public_alias(void) __attribute__((alias("session_test_hidden_nm")));

static char dir[64];
static uint64_t leaf_fn;	/* make_file's leaf function; 0: session_test_leaf */

static const char *path_in(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* The executable mapping of this program that holds addr: start, end, pgoff, path. */
static void self_map(uint64_t addr, uint64_t *start, uint64_t *end, uint64_t *pgoff, char *path)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 128];

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &n) < 4)
			continue;
		if (addr < s || addr >= e)
			continue;
		*start = s;
		*end = e;
		*pgoff = off;
		strcpy(path, line + n);
		path[strcspn(path, "\n")] = 0;
		fclose(f);
		return;
	}
	fclose(f);
	ck_abort_msg("no mapping holds %#llx", (unsigned long long)addr);
}

static void put(struct perf_writer *w, const void *rec, size_t len)
{
	struct iovec iov = { (void *)rec, len };

	ck_assert_int_eq(perf_writer__append(w, &iov, 1), 0);
}

static void put_comm(struct perf_writer *w, uint32_t pid, const char *comm)
{
	struct { struct perf_event_header h; uint32_t pid, tid; char comm[16]; } r = {
		.h = { PERF_RECORD_COMM, 0, sizeof(r) }, .pid = pid, .tid = pid };

	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	put(w, &r, sizeof(r));
}

static void put_mmap(struct perf_writer *w, uint32_t pid, uint64_t start, uint64_t len,
		     uint64_t pgoff, const char *path)
{
	struct { struct perf_event_header h; uint32_t pid, tid; uint64_t start, len, pgoff;
		 char name[PATH_MAX]; } r = { .h = { PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, 0 },
					      .pid = pid, .tid = pid, .start = start, .len = len,
					      .pgoff = pgoff };
	size_t n = strlen(path) + 1;

	memcpy(r.name, path, n);
	r.h.size = (uint16_t)((offsetof(typeof(r), name) + n + 7) & ~7ul);
	put(w, &r, r.h.size);
}

static void put_sample(struct perf_writer *w, uint32_t pid, uint64_t time, uint32_t cpu,
		       uint64_t period, uint64_t leaf, uint64_t caller)
{
	struct { struct perf_event_header h; uint64_t ip; uint32_t pid, tid; uint64_t time;
		 uint32_t cpu, res; uint64_t period, nr, chain[3]; } r = {
		.h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(r) }, .ip = leaf,
		.pid = pid, .tid = pid, .time = time, .cpu = cpu, .period = period, .nr = 3,
		.chain = { PERF_CONTEXT_USER, leaf, caller } };

	put(w, &r, sizeof(r));
}

static void put_lost_samples(struct perf_writer *w, uint64_t lost)
{
	struct { struct perf_event_header h; uint64_t lost; } r = {
		.h = { PERF_RECORD_LOST_SAMPLES, 0, sizeof(r) }, .lost = lost };

	put(w, &r, sizeof(r));
}

/* pid 100 "alpha" and pid 200 "beta", both running this program; 6 samples at times 60, 10,
 * 50, 20, 40, 30 (written in that order, no rounds), alternately of pid 100 and 200 (so alpha's
 * are 40, 50, 60), cpu = time / 10 % 2, period = time. */
static void make_file(const char *path, uint64_t *ret_leaf, uint64_t *ret_caller)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_type = ST,
				     .sample_period = 1 };
	struct perf_writer_event ev = { .name = "cpu-clock", .attr = &a };
	struct perf_writer_opts o = { .events = &ev, .nr_events = 1 };
	struct perf_writer *w = perf_writer__open(path, &o);
	uint64_t leaf = (leaf_fn ? leaf_fn : (uint64_t)(uintptr_t)session_test_leaf) + 1;
	uint64_t caller = (uint64_t)(uintptr_t)session_test_caller + 6;
	uint64_t start, end, pgoff;
	static const uint64_t times[] = { 60, 10, 50, 20, 40, 30 };
	char exe[PATH_MAX];

	ck_assert_ptr_nonnull(w);
	self_map(caller, &start, &end, &pgoff, exe);	/* the leaf may lie outside */
	put_comm(w, 100, "alpha");
	put_comm(w, 200, "beta");
	put_mmap(w, 100, start, end - start, pgoff, exe);
	put_mmap(w, 200, start, end - start, pgoff, exe);
	for (size_t i = 0; i < 6; i++)
		put_sample(w, i % 2 ? 200 : 100, times[i], times[i] / 10 % 2, times[i], leaf, caller);
	put_lost_samples(w, 7);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	perf_writer__free(w);
	*ret_leaf = leaf;
	*ret_caller = caller;
}

struct seen {
	int n, stop_at;
	uint64_t times[16];
	char comms[16][16];
	bool filtered[16];
	char leaf[16][64], caller[16][64];
	size_t nr_frames[16];
	bool finished;
};

static int on_sample(void *ctx, const struct report_session_sample *s)
{
	struct seen *sn = ctx;
	const char *name;

	ck_assert_int_lt(sn->n, 16);
	sn->times[sn->n] = s->raw->time;
	snprintf(sn->comms[sn->n], 16, "%s", s->comm);
	sn->filtered[sn->n] = s->filtered;
	sn->nr_frames[sn->n] = s->nr_frames;
	name = unwind_frame__name(&s->frames[0]);
	snprintf(sn->leaf[sn->n], 64, "%s", name ? name : "?");
	name = s->nr_frames > 1 ? unwind_frame__name(&s->frames[1]) : NULL;
	snprintf(sn->caller[sn->n], 64, "%s", name ? name : "?");
	sn->n++;
	return sn->stop_at && sn->n == sn->stop_at ? 42 : 0;
}

static int on_finish(void *ctx, struct report_session *s)
{
	((struct seen *)ctx)->finished = true;
	return 0;
}

static struct report_session *open_ok(const struct report_session_opts *o, struct seen *sn)
{
	uint64_t leaf, caller;
	struct report_session *s;
	struct report_sink sink = { .sample = on_sample, .finish = on_finish, .ctx = sn };

	make_file(path_in("s.data"), &leaf, &caller);
	s = report_session__new(o);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(report_session__open(s, path_in("s.data")) == 0, "open: %s",
		      report_session__error(s));
	ck_assert_int_eq(report_session__add_sink(s, &sink), 0);
	return s;
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_session.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	leaf_fn = 0;
	unlink(path_in("s.data"));
	rmdir(dir);
}

/* A side-band record of type with body (len bytes), its sample_id (TID, TIME, CPU) after. */
static void put_side(struct perf_writer *w, uint32_t type, const void *body, size_t len,
		     uint32_t pid, uint64_t time)
{
	struct { uint32_t pid, tid; uint64_t time; uint32_t cpu, res; } id = { .pid = pid, .tid = pid,
									  .time = time };
	struct perf_event_header h = { type, 0, (uint16_t)(sizeof(h) + len + sizeof(id)) };
	struct iovec iov[3] = { { &h, sizeof(h) }, { (void *)body, len }, { &id, sizeof(id) } };

	ck_assert_int_eq(perf_writer__append(w, iov, 3), 0);
}

static void put_named(struct perf_writer *w, uint32_t pid, const char *comm, uint64_t time)
{
	struct { uint32_t pid, tid; char comm[16]; } b = { .pid = pid, .tid = pid };

	snprintf(b.comm, sizeof(b.comm), "%s", comm);
	put_side(w, PERF_RECORD_COMM, &b, sizeof(b), pid, time);
}

struct threads_seen {
	int n;
	uint32_t thread[4];
	char comm[4][16];
};

static int threads_sample(void *ctx, const struct report_session_sample *s)
{
	struct threads_seen *ts = ctx;

	ck_assert_int_lt(ts->n, 4);
	ts->thread[ts->n] = s->thread;
	snprintf(ts->comm[ts->n++], 16, "%s", s->comm);
	return 0;
}

/* Which thread of a tid each sample is, and each thread's last name (perf's pid column): pid
 * 400 named, sampled, renamed by a FORK of its tid (a new thread), sampled, renamed; pid 300
 * sampled before any record names it, then named. */
START_TEST(test_threads)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_type = ST,
				     .sample_period = 1, .sample_id_all = 1 };
	struct perf_writer_event ev = { .name = "cpu-clock", .attr = &a };
	struct perf_writer_opts wo = { .events = &ev, .nr_events = 1 };
	struct perf_writer *w = perf_writer__open(path_in("s.data"), &wo);
	struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } fork = { 400, 1, 400, 1, 5 };
	uint64_t ip = (uint64_t)(uintptr_t)session_test_leaf;
	struct threads_seen ts = { 0 };
	struct report_sink sink = { .sample = threads_sample, .ctx = &ts };
	struct report_session_opts o = { .jobs = 1 };
	struct report_session *s;

	ck_assert_ptr_nonnull(w);
	put_named(w, 400, "first", 1);
	put_sample(w, 400, 2, 0, 1, ip, ip);
	put_sample(w, 300, 3, 0, 1, ip, ip);
	put_named(w, 300, "late-named", 4);
	put_side(w, PERF_RECORD_FORK, &fork, sizeof(fork), 400, 5);
	put_named(w, 400, "second", 6);
	put_sample(w, 400, 7, 0, 1, ip, ip);
	put_named(w, 400, "second-late", 8);
	ck_assert_int_eq(perf_writer__finalize(w), 0);
	perf_writer__free(w);

	s = report_session__new(&o);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(report_session__open(s, path_in("s.data")) == 0, "open: %s",
		      report_session__error(s));
	ck_assert_int_eq(report_session__add_sink(s, &sink), 0);
	ck_assert_int_eq(report_session__run(s), 0);
	ck_assert_int_eq(ts.n, 3);
	ck_assert_str_eq(ts.comm[0], "first");
	ck_assert_str_eq(ts.comm[1], ":300");
	ck_assert_str_eq(ts.comm[2], "second");
	ck_assert_uint_ne(ts.thread[0], 0);
	ck_assert_uint_eq(ts.thread[1], 0);
	ck_assert_uint_ne(ts.thread[2], ts.thread[0]);
	ck_assert_str_eq(report_session__comm(s, 400, ts.thread[0]), "first");
	ck_assert_str_eq(report_session__comm(s, 400, ts.thread[2]), "second-late");
	/* perf made pid 300's thread at its sample: the COMM after named that thread */
	ck_assert_str_eq(report_session__comm(s, 300, ts.thread[1]), "late-named");
	ck_assert_ptr_null(report_session__comm(s, 301, 0));
	report_session__free(s);
}
END_TEST

START_TEST(test_order_symbols_counts)
{
	struct seen sn = { 0 };
	struct report_session_opts o = { .jobs = 2 };
	struct report_session *s = open_ok(&o, &sn);
	const struct report_session_stats *st;

	ck_assert_int_eq(report_session__run(s), 0);
	ck_assert(sn.finished);
	ck_assert_int_eq(sn.n, 6);
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(sn.times[i], (uint64_t)(i + 1) * 10);
		ck_assert_str_eq(sn.comms[i], sn.times[i] >= 40 ? "alpha" : "beta");
		ck_assert(!sn.filtered[i]);
		ck_assert_uint_eq(sn.nr_frames[i], 2);
		ck_assert_str_eq(sn.leaf[i], "session_test_leaf");
		ck_assert_str_eq(sn.caller[i], "session_test_caller");
	}
	st = report_session__stats(s);
	ck_assert_uint_eq(st->nr_samples, 6);
	ck_assert_uint_eq(st->nr_frames, 12);
	ck_assert_uint_eq(st->records.nr_by_type[PERF_RECORD_SAMPLE], 6);
	ck_assert_uint_eq(st->records.nr_by_type[PERF_RECORD_COMM], 2);
	ck_assert_uint_eq(st->records.nr_by_type[PERF_RECORD_MMAP], 2);
	ck_assert_uint_eq(st->records.total_lost_samples, 7);
	ck_assert_uint_eq(st->nr_attrs, 1);
	ck_assert_uint_eq(st->attr_samples[0], 6);
	ck_assert_uint_eq(st->attr_lost_samples[0], 7);
	ck_assert_str_eq(report_session__event_name(s, 0), "cpu-clock");
	/* two threads: the one file both pids map was loaded ahead, once */
	ck_assert_uint_eq(st->nr_preload_queued, 1);
	ck_assert_int_eq(report_session__run(s), -EALREADY);
	report_session__free(s);
}
END_TEST

START_TEST(test_filters_and_time)
{
	static const int32_t cpus[] = { 1 }, pids[] = { 100 };
	static const struct time_range times[] = { { 15, 60 } };
	struct seen sn = { 0 };
	struct report_session_opts o = { .jobs = 1, .cpus = cpus, .nr_cpus = 1, .pids = pids,
					 .nr_pids = 1, .times = times, .nr_times = 1 };
	struct report_session *s = open_ok(&o, &sn);

	ck_assert_int_eq(report_session__run(s), 0);
	/* cpu 1: times 10, 30, 50; from 15: 30 (beta: filtered by pid) and 50 (alpha). */
	ck_assert_int_eq(sn.n, 2);
	ck_assert_uint_eq(sn.times[0], 30);
	ck_assert_uint_eq(sn.times[1], 50);
	ck_assert(sn.filtered[0] && !sn.filtered[1]);
	ck_assert_uint_eq(report_session__stats(s)->nr_preload_queued, 0); /* one thread: none */
	report_session__free(s);

	/* pid filter alone: the other pid's samples arrive filtered, with their ip only */
	memset(&sn, 0, sizeof(sn));
	o = (struct report_session_opts){ .pids = pids, .nr_pids = 1 };
	s = open_ok(&o, &sn);
	ck_assert_int_eq(report_session__run(s), 0);
	ck_assert_int_eq(sn.n, 6);
	for (int i = 0; i < 6; i++) {
		ck_assert(sn.filtered[i] == !strcmp(sn.comms[i], "beta"));
		ck_assert_uint_eq(sn.nr_frames[i], sn.filtered[i] ? 1 : 2);
	}
	report_session__free(s);
}
END_TEST

START_TEST(test_sink_stops_and_aggregates)
{
	struct seen sn = { .stop_at = 3 };
	struct report_session *s = open_ok(NULL, &sn);
	struct report_set *rs = report_set__new(s, NULL, false);

	ck_assert_ptr_nonnull(rs);
	ck_assert_int_eq(report_session__run(s), 42);
	ck_assert_int_eq(sn.n, 3);
	ck_assert(sn.finished);
	/* the aggregation sink was added after the recorder: it saw the first two */
	ck_assert_uint_eq(report__nr_samples(report_set__report(rs, 0)), 2);
	ck_assert_uint_eq(report__total_period(report_set__report(rs, 0)), 10 + 20);
	report_set__free(rs);
	report_session__free(s);
}
END_TEST

/* The gzip'd profile at path, unpacked (and the file removed). */
static Perftools__Profiles__Profile *read_profile(const char *path)
{
	static uint8_t buf[1 << 20];
	Perftools__Profiles__Profile *p;
	gzFile gz = gzopen(path, "rb");
	int len;

	ck_assert_ptr_nonnull(gz);
	len = gzread(gz, buf, sizeof(buf));
	gzclose(gz);
	unlink(path);
	ck_assert_int_gt(len, 0);
	p = perftools__profiles__profile__unpack(NULL, (size_t)len, buf);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* The pprof sink's profile, read back with zlib and protobuf-c: values summed per stack, labels,
 * functions named, locations in mappings. */
START_TEST(test_pprof_roundtrip)
{
	struct seen sn = { 0 };
	struct report_session *s = open_ok(NULL, &sn);
	struct pprof_writer *w = pprof_writer__new(s);
	Perftools__Profiles__Profile *p;
	uint64_t count = 0, period = 0;

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(report_session__run(s), 0);
	/* two distinct (pid, stack): alpha's three samples merge, and beta's */
	ck_assert_uint_eq(pprof_writer__nr_samples(w), 2);
	ck_assert_int_eq(pprof_writer__write(w, path_in("p.pb.gz")), 0);
	ck_assert_int_eq(pprof_writer__write(w, "/nonexistent/dir/p.pb.gz"), -ENOENT);
	p = read_profile(path_in("p.pb.gz"));
	ck_assert_str_eq(p->string_table[0], "");
	ck_assert_uint_eq(p->n_sample_type, 2);
	ck_assert_str_eq(p->string_table[p->sample_type[0]->type], "samples");
	ck_assert_str_eq(p->string_table[p->sample_type[1]->type], "cpu");
	ck_assert_str_eq(p->string_table[p->sample_type[1]->unit], "nanoseconds");
	ck_assert_uint_eq(p->n_sample, 2);
	for (size_t i = 0; i < p->n_sample; i++) {
		Perftools__Profiles__Sample *sm = p->sample[i];
		Perftools__Profiles__Location *leaf;

		count += (uint64_t)sm->value[0];
		period += (uint64_t)sm->value[1];
		ck_assert_uint_eq(sm->n_location_id, 2);
		ck_assert_uint_eq(sm->n_label, 3);
		ck_assert_str_eq(p->string_table[sm->label[2]->key], "comm");
		ck_assert_str_eq(p->string_table[sm->label[2]->str],
				 sm->label[0]->num == 100 ? "alpha" : "beta");
		leaf = p->location[sm->location_id[0] - 1];
		ck_assert_uint_eq(leaf->id, sm->location_id[0]);
		ck_assert_uint_ne(leaf->mapping_id, 0);
		ck_assert_uint_eq(leaf->n_line, 1);
		ck_assert_str_eq(p->string_table[p->function[leaf->line[0]->function_id - 1]->name],
				 "session_test_leaf");
	}
	ck_assert_uint_eq(count, 6);
	ck_assert_uint_eq(period, 10 + 20 + 30 + 40 + 50 + 60);
	ck_assert_uint_ge(p->n_mapping, 1);
	perftools__profiles__profile__free_unpacked(p, NULL);
	pprof_writer__free(w);
	report_session__free(s);
}
END_TEST

/* A location's last line is the function its code belongs to, named by the symbol as the self
 * table names it, even where the DWARF names the function otherwise: go tool pprof -noinlines
 * then shows preport's symbols. */
START_TEST(test_pprof_outer_line_is_symbol)
{
	struct seen sn = { 0 };
	struct report_session *s;
	struct pprof_writer *w;
	Perftools__Profiles__Profile *p;

	leaf_fn = (uint64_t)(uintptr_t)session_test_public_alias;
	s = open_ok(NULL, &sn);
	w = pprof_writer__new(s);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(report_session__run(s), 0);
	ck_assert_str_eq(sn.leaf[0], "session_test_public_alias");
	ck_assert_int_eq(pprof_writer__write(w, path_in("p.pb.gz")), 0);
	p = read_profile(path_in("p.pb.gz"));
	for (size_t i = 0; i < p->n_sample; i++) {
		Perftools__Profiles__Location *leaf = p->location[p->sample[i]->location_id[0] - 1];
		Perftools__Profiles__Line *last;

		ck_assert_uint_ge(leaf->n_line, 1);
		last = leaf->line[leaf->n_line - 1];
		ck_assert_str_eq(p->string_table[p->function[last->function_id - 1]->name],
				 "session_test_public_alias");
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	pprof_writer__free(w);
	report_session__free(s);
}
END_TEST

/* A frame nothing symbolizes (an address outside every mapping) is a location without lines,
 * as pprof models it, even as the profile's first location. */
START_TEST(test_pprof_unsymbolized)
{
	struct seen sn = { 0 };
	struct report_session *s;
	struct pprof_writer *w;
	Perftools__Profiles__Profile *p;
	uint64_t count = 0;

	leaf_fn = 0xfff;	/* the leaf's ip: 0x1000 */
	s = open_ok(NULL, &sn);
	w = pprof_writer__new(s);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(report_session__run(s), 0);
	ck_assert_int_eq(pprof_writer__write(w, path_in("p.pb.gz")), 0);
	p = read_profile(path_in("p.pb.gz"));
	for (size_t i = 0; i < p->n_sample; i++) {
		Perftools__Profiles__Location *leaf = p->location[p->sample[i]->location_id[0] - 1];

		ck_assert_uint_eq(leaf->address, 0x1000);
		ck_assert_uint_eq(leaf->n_line, 0);
		count += (uint64_t)p->sample[i]->value[0];
	}
	ck_assert_uint_eq(count, 6);
	perftools__profiles__profile__free_unpacked(p, NULL);
	pprof_writer__free(w);
	report_session__free(s);
}
END_TEST

START_TEST(test_open_errors)
{
	struct report_session_opts bad = { .max_stack = -1 };
	struct report_session *s = report_session__new(NULL);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(report_session__open(s, "/nonexistent/perf.data"), -ENOENT);
	ck_assert_ptr_nonnull(strstr(report_session__error(s), "/nonexistent/perf.data"));
	report_session__free(s);
	s = report_session__new(&bad);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(report_session__open(s, "/dev/null"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(report_session__error(s), "max_stack"));
	report_session__free(s);
	report_session__free(NULL);
}
END_TEST

START_TEST(test_time_ranges)
{
	struct time_range *r = NULL;
	size_t n = 0;

	ck_assert_int_eq(time_ranges__parse("1.5,2.000000001", 0, 0, &r, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(r[0].start, 1500000000ULL);
	ck_assert_uint_eq(r[0].end, 2000000001ULL);
	ck_assert(time_ranges__contains(r, n, 2000000001ULL));
	ck_assert(!time_ranges__contains(r, n, 2000000002ULL));
	free(r);
	ck_assert_int_eq(time_ranges__parse(",3 10,", 0, 0, &r, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(r[0].start, 0);
	ck_assert_uint_eq(r[0].end, 3000000000ULL);
	ck_assert_uint_eq(r[1].start, 10000000000ULL);
	ck_assert_uint_eq(r[1].end, UINT64_MAX);
	ck_assert(!time_ranges__contains(r, n, 5000000000ULL));
	free(r);
	/* percentages of [1000, 2000]: the second tenth; a range list */
	ck_assert_int_eq(time_ranges__parse("10%/2", 1000, 2000, &r, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(r[0].start, 1100);
	ck_assert_uint_eq(r[0].end, 1199);
	free(r);
	ck_assert_int_eq(time_ranges__parse("0%-10%,90%-100%", 1000, 2000, &r, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(r[0].start, 1000);
	ck_assert_uint_eq(r[1].end, 2000);
	free(r);
	ck_assert(time_ranges__contains(NULL, 0, 42));
	/* refused, nothing stored */
	r = NULL;
	n = 7;
	ck_assert_int_eq(time_ranges__parse("10%/2", 0, 0, &r, &n), -ENODATA);
	ck_assert_int_eq(time_ranges__parse("5,4", 0, 0, &r, &n), -EINVAL);
	ck_assert_int_eq(time_ranges__parse(",", 0, 0, &r, &n), -EINVAL);
	ck_assert_int_eq(time_ranges__parse("1,2,3", 0, 0, &r, &n), -EINVAL);
	ck_assert_int_eq(time_ranges__parse("x,1", 0, 0, &r, &n), -EINVAL);
	ck_assert_int_eq(time_ranges__parse("", 0, 0, &r, &n), -EINVAL);
	ck_assert_int_eq(time_ranges__parse("10%/11", 1, 2, &r, &n), -EINVAL);
	ck_assert_int_eq(time_ranges__parse("20%-10%", 1, 2, &r, &n), -EINVAL);
	ck_assert_int_eq(time_ranges__parse("101%-102%", 1, 2, &r, &n), -EINVAL);
	ck_assert_ptr_null(r);
	ck_assert_uint_eq(n, 7);
}
END_TEST

Suite *report_session_suite(void)
{
	Suite *s = suite_create("report_session");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_order_symbols_counts);
	tcase_add_test(tc, test_filters_and_time);
	tcase_add_test(tc, test_sink_stops_and_aggregates);
	tcase_add_test(tc, test_pprof_roundtrip);
	tcase_add_test(tc, test_pprof_outer_line_is_symbol);
	tcase_add_test(tc, test_pprof_unsymbolized);
	tcase_add_test(tc, test_open_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("time");
	tcase_add_test(tc, test_time_ranges);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	return s;
}
