/* pipe_file: a pipe-mode stream rewritten as a file-mode perf.data in an unnamed temporary file
 * (see pipe_file.h). The file it writes: the header, the data section (every record of the
 * stream that is not a pipe-mode header record, each padded to 8 bytes where the stream left it
 * short), the feature index and sections right after it (where the reader looks for them), then
 * the attrs and their ids. Records are read through one buffer of the largest record's size;
 * only the tracing data, whose size is a u32, is read into memory of its own, bounded by what
 * the stream delivers. */
#include "perf/pipe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "perf/abi.h"

#define IN_CAP (1u << 20)
#define OUT_CAP (1u << 20)
#define PIPE_HEADER_SIZE 16
/* An attr larger than this is no kernel's: the stream is not one perf wrote. */

struct in {
	int fd;
	uint8_t *buf;
	size_t lo, hi;
	uint64_t off;            /* stream offset of buf[lo] */
	bool eof;
	int err;
};

/* At least n (<= IN_CAP) bytes at in->buf + in->lo, unless the stream ends first: returns the
 * bytes available (< n at the end or on an error, in->err then set). */
static size_t in_need(struct in *in, size_t n)
{
	if (in->hi - in->lo >= n)
		return n;
	if (in->lo) {
		memmove(in->buf, in->buf + in->lo, in->hi - in->lo);
		in->hi -= in->lo;
		in->lo = 0;
	}
	while (in->hi < n && !in->eof && !in->err) {
		ssize_t got = read(in->fd, in->buf + in->hi, IN_CAP - in->hi);

		if (got > 0)
			in->hi += (size_t)got;
		else if (got == 0)
			in->eof = true;
		else if (errno != EINTR)
			in->err = -errno;
	}
	return in->hi - in->lo < n ? in->hi - in->lo : n;
}

static void in_take(struct in *in, size_t n)
{
	in->lo += n;
	in->off += n;
}

struct out {
	int fd;
	uint8_t *buf;
	size_t used;
	uint64_t off;            /* file offset of buf[0] */
	int err;
};

static void out_flush(struct out *o)
{
	size_t done = 0;

	while (!o->err && done < o->used) {
		ssize_t n = write(o->fd, o->buf + done, o->used - done);

		if (n > 0)
			done += (size_t)n;
		else if (n < 0 && errno != EINTR)
			o->err = -errno;
	}
	o->off += o->used;
	o->used = 0;
}

static void out_put(struct out *o, const void *p, size_t n)
{
	const uint8_t *s = p;

	while (n && !o->err) {
		size_t k = OUT_CAP - o->used < n ? OUT_CAP - o->used : n;

		memcpy(o->buf + o->used, s, k);
		o->used += k;
		s += k;
		n -= k;
		if (o->used == OUT_CAP)
			out_flush(o);
	}
}

static void out_zeros(struct out *o, size_t n)
{
	static const uint8_t z[8];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);
		out_put(o, z, k);
		n -= k;
	}
}

static uint64_t out_pos(const struct out *o)
{
	return o->off + o->used;
}

struct attr_ent {
	uint8_t attr[PERF_ATTR_SIZE_MAX];
	uint32_t size;
	uint64_t *ids;
	size_t nr_ids;
};

struct conv {
	struct attr_ent *attrs;
	size_t nr_attrs;
	struct { uint8_t *p; size_t len; } feat[FEAT_BITS];
	uint8_t *build_ids;
	size_t build_ids_len;
};

static void conv_free(struct conv *c)
{
	for (size_t i = 0; i < c->nr_attrs; i++)
		free(c->attrs[i].ids);
	free(c->attrs);
	for (int i = 0; i < FEAT_BITS; i++)
		free(c->feat[i].p);
	free(c->build_ids);
}

static int set_feat(struct conv *c, int bit, const void *p, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, p, len);
	free(c->feat[bit].p);
	c->feat[bit].p = copy;
	c->feat[bit].len = len;
	return 0;
}

static int add_attr(struct conv *c, const uint8_t *body, size_t len, const char **reason)
{
	uint32_t size;
	struct attr_ent *a;
	void *grown;

	if (len < PERF_ATTR_SIZE_VER0) {
		*reason = "a HEADER_ATTR record shorter than an attr";
		return -EBADMSG;
	}
	memcpy(&size, body + 4, 4);
	if (!size)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > len || size > PERF_ATTR_SIZE_MAX || size % 8) {
		*reason = "a HEADER_ATTR record whose attr size is wrong";
		return -EBADMSG;
	}
	grown = realloc(c->attrs, (c->nr_attrs + 1) * sizeof(*c->attrs));
	if (!grown)
		return -ENOMEM;
	c->attrs = grown;
	a = &c->attrs[c->nr_attrs];
	memset(a, 0, sizeof(*a));
	memcpy(a->attr, body, size);
	a->size = size;
	a->nr_ids = (len - size) / 8;
	a->ids = malloc(a->nr_ids ? a->nr_ids * 8 : 1);
	if (!a->ids)
		return -ENOMEM;
	memcpy(a->ids, body + size, a->nr_ids * 8);
	c->nr_attrs++;
	return 0;
}

static int add_build_id(struct conv *c, const uint8_t *rec, size_t len)
{
	uint8_t *grown = realloc(c->build_ids, c->build_ids_len + len);

	if (!grown)
		return -ENOMEM;
	c->build_ids = grown;
	memcpy(c->build_ids + c->build_ids_len, rec, len);
	c->build_ids_len += len;
	return 0;
}

/* The tracing data's payload: n bytes that follow its record, held as they arrive (the memory
 * grows with what the stream delivers, not with what its size field claims). */
static int read_tracing(struct conv *c, struct in *in, uint32_t n, struct pipe_file_result *ret)
{
	uint8_t *p = NULL;
	size_t got = 0, cap = 0;

	while (got < n) {
		size_t k = in_need(in, n - got < IN_CAP ? n - got : IN_CAP);

		if (!k)
			break;
		if (got + k > cap) {
			size_t want = cap ? cap * 2 : IN_CAP;
			uint8_t *grown;

			while (want < got + k)
				want *= 2;
			grown = realloc(p, want < n ? want : n);
			if (!grown) {
				free(p);
				return -ENOMEM;
			}
			p = grown;
			cap = want < n ? want : n;
		}
		memcpy(p + got, in->buf + in->lo, k);
		in_take(in, k);
		got += k;
	}
	if (in->err) {
		free(p);
		return in->err;
	}
	if (got < n) {
		free(p);
		ret->damage = "the stream ended inside its tracing data";
		ret->damage_off = in->off;
		return 0;
	}
	free(c->feat[FEAT_TRACING_DATA].p);
	c->feat[FEAT_TRACING_DATA].p = p ? p : malloc(1);
	c->feat[FEAT_TRACING_DATA].len = n;
	return c->feat[FEAT_TRACING_DATA].p ? 0 : -ENOMEM;
}

/* One record of the stream, whole in in->buf: into c, or copied to the data section. */
static int one_record(struct conv *c, struct in *in, struct out *o,
		      const struct perf_event_header *h, struct pipe_file_result *ret,
		      const char **reason)
{
	const uint8_t *rec = in->buf + in->lo;

	switch (h->type) {
	case PERF_RECORD_HEADER_ATTR:
	case PERF_RECORD_HEADER_FEATURE:
	case PERF_RECORD_HEADER_BUILD_ID:
	case PERF_RECORD_HEADER_EVENT_TYPE:
	case PERF_RECORD_HEADER_TRACING_DATA:
		ret->nr_header[h->type - PERF_RECORD_USER_TYPE_START]++;
		break;
	default:
		break;
	}
	switch (h->type) {
	case PERF_RECORD_HEADER_ATTR:
		return add_attr(c, rec + sizeof(*h), h->size - sizeof(*h), reason);
	case PERF_RECORD_HEADER_FEATURE: {
		uint64_t bit;

		if (h->size < sizeof(*h) + 8) {
			ret->dropped++;
			return 0;
		}
		memcpy(&bit, rec + sizeof(*h), 8);
		/* FEAT_LAST ends the features; a zero SAMPLE_TIME is one written before any
		 * sample (perf's pipe mode): the file has none rather than a wrong one */
		if (bit >= FEAT_LAST || bit == FEAT_TRACING_DATA || bit == FEAT_BUILD_ID) {
			ret->dropped += bit != FEAT_LAST;
			return 0;
		}
		if (bit == FEAT_SAMPLE_TIME) {
			static const uint8_t zero[16];
			if (h->size - sizeof(*h) - 8 == 16 && !memcmp(rec + sizeof(*h) + 8, zero, 16)) {
				ret->zero_sample_time = true;
				return 0;
			}
		}
		return set_feat(c, (int)bit, rec + sizeof(*h) + 8, h->size - sizeof(*h) - 8);
	}
	case PERF_RECORD_HEADER_BUILD_ID:
		return add_build_id(c, rec, h->size);
	case PERF_RECORD_HEADER_EVENT_TYPE:
		ret->dropped++;
		return 0;
	case PERF_RECORD_HEADER_TRACING_DATA:
		return 0; /* its payload follows: convert_records reads it */
	default:
		break;
	}
	/* a data record: 8-byte aligned in the file, as the reader and perf expect (COMPRESSED
	 * payloads end where their size says: they keep it) */
	if (h->size % 8 && h->type != PERF_RECORD_COMPRESSED) {
		struct perf_event_header a = *h;
		uint32_t padded = (h->size + 7u) & ~7u;

		if (padded > PERF_RECORD_MAX_SIZE) {
			ret->dropped++;
			return 0;
		}
		a.size = (uint16_t)padded;
		out_put(o, &a, sizeof(a));
		out_put(o, rec + sizeof(a), h->size - sizeof(a));
		out_zeros(o, padded - h->size);
	} else {
		out_put(o, rec, h->size);
	}
	return 0;
}

/* The stream after its pipe header into c and the data section of o. */
static int convert_records(struct conv *c, struct in *in, struct out *o,
			   struct pipe_file_result *ret, const char **reason)
{
	for (;;) {
		struct perf_event_header h;
		size_t got = in_need(in, sizeof(h));
		int err;

		if (in->err)
			return in->err;
		if (got == 0)
			return 0;
		if (got < sizeof(h)) {
			ret->damage = "the stream ended inside a record header";
			ret->damage_off = in->off;
			return 0;
		}
		memcpy(&h, in->buf + in->lo, sizeof(h));
		if (h.size < sizeof(h)) {
			ret->damage = "a record size smaller than its header";
			ret->damage_off = in->off;
			return 0;
		}
		if (in_need(in, h.size) < h.size) {
			if (in->err)
				return in->err;
			ret->damage = "the stream ended inside a record";
			ret->damage_off = in->off;
			return 0;
		}
		err = one_record(c, in, o, &h, ret, reason);
		if (err)
			return err;
		if (h.type == PERF_RECORD_HEADER_TRACING_DATA) {
			uint32_t n = 0;

			if (h.size >= sizeof(h) + 4)
				memcpy(&n, in->buf + in->lo + sizeof(h), 4);
			in_take(in, h.size);
			err = read_tracing(c, in, n, ret);
			if (err || ret->damage)
				return err;
			continue;
		}
		in_take(in, h.size);
		if (o->err)
			return o->err;
	}
}

/* After the data: the feature index and sections, the attrs and ids, then the header. */
static int write_tail(struct conv *c, struct out *o, uint64_t data_size)
{
	struct perf_file_header hdr = {
		.magic = PERF_MAGIC2, .size = PERF_HEADER_SIZE,
		.data = { PERF_HEADER_SIZE, data_size },
	};
	uint64_t pos, attr_size = PERF_ATTR_SIZE_VER0;
	size_t nr_feat = 0;

	if (c->build_ids_len && !c->feat[FEAT_BUILD_ID].p) {
		c->feat[FEAT_BUILD_ID].p = TAKE_PTR(c->build_ids);
		c->feat[FEAT_BUILD_ID].len = c->build_ids_len;
	}
	for (int bit = 0; bit < FEAT_BITS; bit++) {
		if (!c->feat[bit].p)
			continue;
		hdr.features[bit / 64] |= 1ULL << (bit % 64);
		nr_feat++;
	}
	/* the index, then each section at an 8-byte boundary */
	pos = out_pos(o) + nr_feat * sizeof(struct perf_file_section);
	for (int bit = 0; bit < FEAT_BITS; bit++) {
		struct perf_file_section s;

		if (!c->feat[bit].p)
			continue;
		s.offset = pos;
		s.size = c->feat[bit].len;
		out_put(o, &s, sizeof(s));
		pos += (s.size + 7) / 8 * 8;
	}
	for (int bit = 0; bit < FEAT_BITS; bit++) {
		if (!c->feat[bit].p)
			continue;
		out_put(o, c->feat[bit].p, c->feat[bit].len);
		out_zeros(o, (8 - c->feat[bit].len % 8) % 8);
	}
	/* the attrs, each padded to the largest, then the ids of each */
	for (size_t i = 0; i < c->nr_attrs; i++)
		if (c->attrs[i].size > attr_size)
			attr_size = c->attrs[i].size;
	hdr.attr_size = attr_size + sizeof(struct perf_file_section);
	hdr.attrs.offset = out_pos(o);
	hdr.attrs.size = c->nr_attrs * hdr.attr_size;
	pos = hdr.attrs.offset + hdr.attrs.size;
	for (size_t i = 0; i < c->nr_attrs; i++) {
		struct perf_file_section ids = { pos, c->attrs[i].nr_ids * 8 };

		out_put(o, c->attrs[i].attr, c->attrs[i].size);
		out_zeros(o, attr_size - c->attrs[i].size);
		out_put(o, &ids, sizeof(ids));
		pos += ids.size;
	}
	for (size_t i = 0; i < c->nr_attrs; i++)
		out_put(o, c->attrs[i].ids, c->attrs[i].nr_ids * 8);
	out_flush(o);
	if (!o->err && pwrite(o->fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		o->err = errno ? -errno : -EIO;
	return o->err;
}

/* Not pipe mode: the first bytes, then the rest of the stream, as they are. */
static int copy_rest(struct in *in, struct out *o)
{
	for (;;) {
		size_t got = in_need(in, IN_CAP);

		if (in->err)
			return in->err;
		if (!got)
			break;
		out_put(o, in->buf + in->lo, got);
		in_take(in, got);
		if (o->err)
			return o->err;
	}
	out_flush(o);
	return o->err;
}

/* An unnamed file for the stream: in $TMPDIR (else /tmp), where the page cache may write it out,
 * else in memory. Returns the fd or -errno. */
static int scratch_file(void)
{
	const char *dir = getenv("TMPDIR");
	int fd = -1;

	if (dir && *dir)
		fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		fd = memfd_create("preport-input", MFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int pipe_file__load(int fd, struct pipe_file_result *ret, const char **reason)
{
	_cleanup_free_ uint8_t *ibuf = malloc(IN_CAP), *obuf = malloc(OUT_CAP);
	_cleanup_close_ int mfd = -1;
	struct in in = { .fd = fd, .buf = ibuf };
	struct out o = { .buf = obuf };
	struct conv c = { 0 };
	uint64_t magic, hsize;
	int err;

	*ret = (struct pipe_file_result){ .fd = -1 };
	if (!ibuf || !obuf)
		return -ENOMEM;
	mfd = scratch_file();
	if (mfd < 0) {
		*reason = "cannot make the temporary file the stream is read into ($TMPDIR, /tmp, "
			  "or memory)";
		return mfd;
	}
	o.fd = mfd;
	if (in_need(&in, PIPE_HEADER_SIZE) < PIPE_HEADER_SIZE) {
		if (in.err)
			return in.err;
		*reason = in.hi == in.lo ? "empty input (nothing was written to the pipe)" :
					   "too small to be a perf.data file";
		return -EINVAL;
	}
	memcpy(&magic, in.buf, 8);
	memcpy(&hsize, in.buf + 8, 8);
	if (magic != PERF_MAGIC2 || hsize != PIPE_HEADER_SIZE) {
		err = copy_rest(&in, &o);
		if (!err)
			ret->fd = TAKE_FD(mfd);
		return err;
	}
	in_take(&in, PIPE_HEADER_SIZE);
	ret->converted = true;
	/* the data section starts right after the header, written last */
	out_zeros(&o, PERF_HEADER_SIZE);
	err = convert_records(&c, &in, &o, ret, reason);
	if (!err && !c.nr_attrs) {
		*reason = ret->damage ? "the stream ended before its first event's attr" :
					"a pipe-mode stream without an attr (HEADER_ATTR) record";
		err = -EBADMSG;
	}
	if (!err)
		err = write_tail(&c, &o, out_pos(&o) - PERF_HEADER_SIZE);
	conv_free(&c);
	if (!err)
		ret->fd = TAKE_FD(mfd);
	return err;
}
