/* Tests for src/perf/pipe_file: pipe-mode streams written by hand into a pipe come back as a
 * file-mode perf.data that perf_reader reads (attr and ids, a feature, a data record padded to
 * 8 bytes, the stats of the records taken out), and hostile ones cost nothing: a wrong attr size
 * is refused, tracing data claiming 4 GiB of a 10-byte stream is damage, not an allocation, a
 * record size below its header ends the stream there, an empty stream is refused. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/abi.h"
#include "perf/pipe_file.h"
#include "perf/reader.h"

struct stream {
	uint8_t b[8192];
	size_t n;
};

static void put(struct stream *s, const void *p, size_t n)
{
	ck_assert_uint_le(s->n + n, sizeof(s->b));
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void put_header(struct stream *s)
{
	uint64_t h[2] = { PERF_MAGIC2, 16 };
	put(s, h, sizeof(h));
}

static void put_rec(struct stream *s, uint32_t type, const void *body, size_t len)
{
	struct perf_event_header h = { type, 0, (uint16_t)(sizeof(h) + len) };
	put(s, &h, sizeof(h));
	put(s, body, len);
}

/* a cpu-clock attr (size VER0: 64) with ids 7 and 8 */
static void put_attr(struct stream *s, uint32_t attr_size)
{
	uint8_t body[64 + 16] = { 0 };
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID, .sample_period = 1 };
	uint64_t ids[2] = { 7, 8 };

	memcpy(body, &a, 64);
	memcpy(body + 4, &attr_size, 4);
	memcpy(body + 64, ids, 16);
	put_rec(s, PERF_RECORD_HEADER_ATTR, body, sizeof(body));
}

/* The stream through a pipe (a child writes it) into pipe_file__load. */
static int load(const struct stream *s, struct pipe_file_result *ret, const char **reason)
{
	int p[2];
	pid_t pid;
	int err;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		_exit(write(p[1], s->b, s->n) == (ssize_t)s->n ? 0 : 1);
	}
	close(p[1]);
	*reason = NULL;
	err = pipe_file__load(p[0], ret, reason);
	close(p[0]);
	return err;
}

/* The memfd as a file for perf_reader (through /proc/self/fd). */
static struct perf_reader *open_result(const struct pipe_file_result *pf)
{
	char path[64];
	struct perf_reader *r = perf_reader__new(NULL);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", pf->fd);
	ck_assert_ptr_nonnull(r);
	ck_assert_msg(perf_reader__open(r, path) == 0, "%s", perf_reader__error(r));
	return r;
}

static int count_records(const struct perf_reader_record *rec, void *ctx)
{
	(void)rec;
	(*(int *)ctx)++;
	return 0;
}

START_TEST(test_stream_becomes_file)
{
	struct stream s = { .n = 0 };
	struct pipe_file_result pf;
	const char *reason;
	uint64_t feat[3] = { FEAT_HOSTNAME, 0, 0 };
	uint8_t comm[8 + 4 + 4 + 8] = { 0 }; /* COMM: pid, tid, "ab" + NUL: 20 bytes, unaligned */
	struct perf_reader_stats st;
	struct perf_reader *r;
	int n = 0;

	put_header(&s);
	put_attr(&s, 64);
	/* HOSTNAME: u32 len, then the string */
	feat[1] = 4 | ((uint64_t)'h' << 32) | ((uint64_t)'o' << 40) | ((uint64_t)'s' << 48);
	put_rec(&s, PERF_RECORD_HEADER_FEATURE, feat, 8 + 8);
	put_rec(&s, PERF_RECORD_HEADER_FEATURE, (uint64_t[]){ FEAT_LAST }, 8);
	memcpy(comm + 8, "ab", 3);
	put_rec(&s, PERF_RECORD_COMM, comm, 12);
	ck_assert_int_eq(load(&s, &pf, &reason), 0);
	ck_assert(pf.converted);
	ck_assert_ptr_null(pf.damage);
	r = open_result(&pf);
	ck_assert_uint_eq(perf_reader__nr_attrs(r), 1);
	ck_assert_uint_eq(perf_reader__attr(r, 0)->nr_ids, 2);
	ck_assert_uint_eq(perf_reader__attr(r, 0)->ids[1], 8);
	ck_assert_uint_eq(perf_reader__attr(r, 0)->attr.config, PERF_COUNT_SW_CPU_CLOCK);
	ck_assert(perf_reader__has_feature(r, FEAT_HOSTNAME));
	ck_assert_int_eq(perf_reader__for_each(r, count_records, &n), 0);
	ck_assert_int_eq(n, 1); /* the COMM, padded from 20 to 24 bytes */
	ck_assert_ptr_null(perf_reader__damage(r));
	ck_assert_int_eq(perf_reader__stats(r, &st), 0);
	ck_assert_uint_eq(st.nr_by_type[PERF_RECORD_COMM], 1);
	ck_assert_uint_eq(pf.nr_header[PERF_RECORD_HEADER_ATTR - PERF_RECORD_USER_TYPE_START], 1);
	ck_assert_uint_eq(pf.nr_header[PERF_RECORD_HEADER_FEATURE - PERF_RECORD_USER_TYPE_START], 2);
	perf_reader__free(r);
	close(pf.fd);
}
END_TEST

START_TEST(test_bad_attr_size_refused)
{
	struct stream s = { .n = 0 };
	struct pipe_file_result pf;
	const char *reason;

	put_header(&s);
	put_attr(&s, 0xff48); /* attr.size beyond the record */
	ck_assert_int_eq(load(&s, &pf, &reason), -EBADMSG);
	ck_assert_ptr_nonnull(reason);
	ck_assert_msg(strstr(reason, "attr size"), "reason: %s", reason);
}
END_TEST

START_TEST(test_tracing_data_claims_too_much)
{
	struct stream s = { .n = 0 };
	struct pipe_file_result pf;
	const char *reason;
	uint32_t claim[2] = { 0xfffffff0u, 0 };

	put_header(&s);
	put_attr(&s, 64);
	put_rec(&s, PERF_RECORD_HEADER_TRACING_DATA, claim, 8);
	put(&s, "0123456789", 10);
	ck_assert_int_eq(load(&s, &pf, &reason), 0);
	ck_assert_ptr_nonnull(pf.damage);
	ck_assert_msg(strstr(pf.damage, "tracing data"), "damage: %s", pf.damage);
	close(pf.fd);
}
END_TEST

START_TEST(test_record_smaller_than_header)
{
	struct stream s = { .n = 0 };
	struct pipe_file_result pf;
	const char *reason;
	struct perf_event_header bad = { PERF_RECORD_COMM, 0, 4 };

	put_header(&s);
	put_attr(&s, 64);
	put(&s, &bad, sizeof(bad));
	ck_assert_int_eq(load(&s, &pf, &reason), 0);
	ck_assert_str_eq(pf.damage, "a record size smaller than its header");
	ck_assert_uint_eq(pf.damage_off, 16 + 8 + 80);
	close(pf.fd);
}
END_TEST

START_TEST(test_empty_and_attrless)
{
	struct stream s = { .n = 0 };
	struct pipe_file_result pf;
	const char *reason;

	ck_assert_int_eq(load(&s, &pf, &reason), -EINVAL);
	ck_assert_msg(strstr(reason, "empty input"), "reason: %s", reason);
	put_header(&s);
	ck_assert_int_eq(load(&s, &pf, &reason), -EBADMSG);
	ck_assert_msg(strstr(reason, "without an attr"), "reason: %s", reason);
}
END_TEST

Suite *pipe_file_suite(void)
{
	Suite *s = suite_create("pipe_file");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_stream_becomes_file);
	tcase_add_test(tc, test_bad_attr_size_refused);
	tcase_add_test(tc, test_tracing_data_claims_too_much);
	tcase_add_test(tc, test_record_smaller_than_header);
	tcase_add_test(tc, test_empty_and_attrless);
	suite_add_tcase(s, tc);
	return s;
}
