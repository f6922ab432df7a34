/* Reader of perf.data files. The file is mmapped read-only; every offset and size taken from it
 * is checked against the mapping before use, and nothing is allocated in proportion to a size
 * field that was not first checked against the file size, so a hostile file costs at most a
 * small multiple of its own size. Open walks the record headers once to find where the complete
 * records end (that is also how a killed recorder's file is recovered); iteration then streams
 * them, decompressing COMPRESSED records through one zstd stream kept across records, as perf
 * does, so a record split between two compressed records and frames that end and restart
 * (precord's per-chunk frames) both read back. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
/* zstd's buffer-less decoding API (exported by libzstd.so, declared only with this) */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "lib/cleanup.h"
#include "perf/reader.h"
#include "perf/features.h"
#include "perf/pause_stats.h"
#include "perf/sample.h"
#include "perf/writer.h"

#define PIPE_HEADER_SIZE 16
#define OLD_HEADER_SIZE 72
/* attr_size bounds: the first published attr (64) plus the ids section, up to far more than any
 * kernel's attr; beyond that the header is garbage. */
#define MIN_ATTR_SIZE (PERF_ATTR_SIZE_VER0 + 16)
#define MAX_ATTR_SIZE 4096
/* Time-ordered mode queues at most this much (entries and copied records); past it the oldest
 * half is delivered early, as perf does when its ordered-events memory runs out. Bounds memory
 * for files without rounds and for compressed data that decompresses to far more than it takes. */
#define ORDERED_MAX_BYTES ((size_t)256 << 20)
/* Decompressed data goes into blocks of this size; records are delivered pointing into them and
 * a block lives while any record in it is queued or held (perf_reader__hold). A record cut by
 * the end of a block is carried (copied) to the start of the next: at most one per block. */
#define BLOCK_CAP ((size_t)2 << 20)
/* A new block is started when less than this and a zstd block are left: a record is at most
 * 64 KiB. */
#define BLOCK_MIN_ROOM ((size_t)65536)
/* The largest zstd window decoded (zstd's and perf's default limit, ZSTD_WINDOWLOG_LIMIT_DEFAULT). */
#define ZSTD_WINDOW_MAX ((uint64_t)1 << 27)
/* Free blocks kept for reuse (fresh memory costs a page fault per page). */
#define BLOCK_CACHE 8

struct perf_reader_ref {
	struct perf_reader *r;
	atomic_size_t refs;     /* the walk's, queued records', held records' */
	size_t cap;             /* bytes of data */
	bool small;             /* one misaligned record's copy: freed, not cached */
	_Alignas(8) uint8_t data[]; /* records are 8-byte aligned */
};

struct id_entry {
	uint64_t id;
	int idx;
};

struct feat_section {
	uint64_t offset, size;
};

struct perf_reader {
	const uint8_t *map;
	size_t len;
	struct perf_file_header hdr;

	struct perf_reader_attr *attrs;
	size_t nr_attrs;
	uint64_t *ids;
	struct id_entry *id_index;
	size_t nr_id_index;

	/* Records lie in [data_start, data_end); data_end is after the last complete record. */
	uint64_t data_start, data_end;

	struct perf_reader_info info;
	uint64_t feat_ok[4];
	struct feat_section feat[FEAT_BITS];
	uint32_t event_desc_attr_size;
	unsigned int warnings;

	bool has_data_damage, has_feat_damage;
	struct perf_reader_damage data_damage, feat_damage;
	char reason_buf[128];
	char *path;             /* as given to open, for the reasons (owned) */
	char err[512];          /* perf_reader__error() */

	uint64_t nr_unordered;
	size_t ordered_max_bytes;
	struct perf_reader_stats walk_stats; /* counts of the last iteration */
	uint64_t frame_jobs;    /* zstd frames the last iteration decoded apart */

	/* Kept across walks (a zstd window costs up to megabytes to set up); reset per walk. */
	ZSTD_DStream *ds;
	ZSTD_DCtx *job_ds[2];   /* frame jobs': the decoding, the delivering thread's */
	pthread_mutex_t block_lock; /* the free blocks and block_cap */
	struct perf_reader_ref *free_blocks[BLOCK_CACHE];
	size_t block_cap;       /* of new blocks: BLOCK_CAP, or more for a larger zstd window */
	size_t nr_free_blocks;
	bool decode_thread;     /* decode COMPRESSED records on a thread of their own */

	/* Everything the features allocated, freed at close. */
	void **allocs;
	size_t nr_allocs, cap_allocs;
};

static void seterr(struct perf_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

/* [off, off + size) lies inside the file (overflow-safe). */
static bool in_file(const struct perf_reader *r, uint64_t off, uint64_t size)
{
	return off <= r->len && size <= r->len - off;
}

static uint64_t rd64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void *keep(struct perf_reader *r, void *p)
{
	if (!p)
		return NULL;
	if (r->nr_allocs == r->cap_allocs) {
		size_t cap = r->cap_allocs ? 2 * r->cap_allocs : 16;
		void **n = realloc(r->allocs, cap * sizeof(*n));

		if (!n) {
			free(p);
			return NULL;
		}
		r->allocs = n;
		r->cap_allocs = cap;
	}
	r->allocs[r->nr_allocs++] = p;
	return p;
}

static void data_damage(struct perf_reader *r, uint64_t off, const char *reason)
{
	if (r->has_data_damage && r->data_damage.offset <= off)
		return;
	r->has_data_damage = true;
	r->data_damage.offset = off;
	r->data_damage.reason = reason;
}

static void feat_damage(struct perf_reader *r, uint64_t off, const char *reason)
{
	if (r->has_feat_damage)
		return;
	r->has_feat_damage = true;
	r->feat_damage.offset = off;
	r->feat_damage.reason = reason;
}

/* ---- record classification: attr and time of a whole record ---- */

static int cmp_id(const void *a, const void *b)
{
	const struct id_entry *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->idx - y->idx;
}

int perf_reader__attr_of_id(const struct perf_reader *r, uint64_t id)
{
	size_t lo = 0, hi = r->nr_id_index;

	if (r->nr_attrs == 1)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->id_index[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->nr_id_index && r->id_index[lo].id == id)
		return r->id_index[lo].idx;
	return -ENOENT;
}

/* u64 words of a sample before its ID field (perf's id_pos), -1 when there is none. */
static int sample_id_pos(uint64_t type)
{
	int pos = 0;

	if (type & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(type & PERF_SAMPLE_ID))
		return -1;
	pos += !!(type & PERF_SAMPLE_IP);
	pos += !!(type & PERF_SAMPLE_TID);
	pos += !!(type & PERF_SAMPLE_TIME);
	pos += !!(type & PERF_SAMPLE_ADDR);
	return pos;
}

/* u64 words from a non-sample record's end back to its trailer's ID (perf's is_pos), -1 when
 * there is none. */
static int trailer_id_pos(uint64_t type)
{
	int pos = 1;

	if (type & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(type & PERF_SAMPLE_ID))
		return -1;
	pos += !!(type & PERF_SAMPLE_STREAM_ID);
	pos += !!(type & PERF_SAMPLE_CPU);
	return pos;
}

int perf_reader__attr_index(const struct perf_reader *r, const struct perf_event_header *rec)
{
	const struct perf_event_attr *a0 = &r->attrs[0].attr;
	size_t words;
	int pos;

	if (rec->type >= PERF_RECORD_USER_TYPE_START || rec->size < sizeof(*rec))
		return -ENOENT;
	words = (rec->size - sizeof(*rec)) / 8;
	if (r->nr_attrs == 1)
		return 0;
	/* Like perf, the first attr's layout says where the id is; all must agree. */
	if (rec->type == PERF_RECORD_SAMPLE) {
		pos = sample_id_pos(a0->sample_type);
		if (pos < 0)
			return 0;
		if ((size_t)pos >= words)
			return -ENOENT;
		return perf_reader__attr_of_id(r, rd64((const uint64_t *)(rec + 1) + pos));
	}
	if (!a0->sample_id_all)
		return 0;
	pos = trailer_id_pos(a0->sample_type);
	if (pos < 0)
		return 0;
	if ((size_t)pos > words)
		return -ENOENT;
	return perf_reader__attr_of_id(r, rd64((const uint8_t *)rec + rec->size - 8 * pos));
}

static uint64_t record_time(const struct perf_reader *r, const struct perf_event_header *rec,
			    int idx)
{
	size_t words = (rec->size - sizeof(*rec)) / 8;
	const struct perf_event_attr *a;
	uint64_t type;
	size_t pos;

	if (idx < 0)
		return PERF_READER_NO_TIME;
	a = &r->attrs[idx].attr;
	type = a->sample_type;
	if (!(type & PERF_SAMPLE_TIME))
		return PERF_READER_NO_TIME;
	if (rec->type == PERF_RECORD_SAMPLE) {
		pos = !!(type & PERF_SAMPLE_IDENTIFIER) + !!(type & PERF_SAMPLE_IP) +
		      !!(type & PERF_SAMPLE_TID);
		if (pos >= words)
			return PERF_READER_NO_TIME;
		return rd64((const uint64_t *)(rec + 1) + pos);
	}
	if (!a->sample_id_all)
		return PERF_READER_NO_TIME;
	pos = 1 + !!(type & PERF_SAMPLE_ID) + !!(type & PERF_SAMPLE_STREAM_ID) +
	      !!(type & PERF_SAMPLE_CPU) + !!(type & PERF_SAMPLE_IDENTIFIER);
	if (pos > words)
		return PERF_READER_NO_TIME;
	return rd64((const uint8_t *)rec + rec->size - 8 * pos);
}

/* ---- features ---- */

struct fcur {
	const uint8_t *p;
	uint64_t left;
};

static int fc_u32(struct fcur *c, uint32_t *v)
{
	if (c->left < 4)
		return -EBADMSG;
	*v = rd32(c->p);
	c->p += 4;
	c->left -= 4;
	return 0;
}

static int fc_u64(struct fcur *c, uint64_t *v)
{
	if (c->left < 8)
		return -EBADMSG;
	*v = rd64(c->p);
	c->p += 8;
	c->left -= 8;
	return 0;
}

static int fc_skip(struct fcur *c, uint64_t n)
{
	if (n > c->left)
		return -EBADMSG;
	c->p += n;
	c->left -= n;
	return 0;
}

/* perf's string: u32 len (including NUL and padding), then len bytes. */
static int fc_string(struct perf_reader *r, struct fcur *c, const char **ret)
{
	uint32_t n;
	char *s;

	if (fc_u32(c, &n) < 0 || n > c->left)
		return -EBADMSG;
	s = keep(r, strndup((const char *)c->p, n));
	if (!s)
		return -ENOMEM;
	c->p += n;
	c->left -= n;
	*ret = s;
	return 0;
}

static int parse_cmdline(struct perf_reader *r, struct fcur *c)
{
	const char **argv;
	uint32_t n, i;

	/* Each string costs at least its 4-byte length: bounds n by the section. */
	if (fc_u32(c, &n) < 0 || n > c->left / 4)
		return -EBADMSG;
	argv = keep(r, calloc((size_t)n + 1, sizeof(*argv)));
	if (!argv)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (fc_string(r, c, &argv[i]) < 0)
			return -EBADMSG;
	r->info.cmdline_argc = n;
	r->info.cmdline_argv = argv;
	return 0;
}

static int parse_event_desc(struct perf_reader *r, struct fcur *c)
{
	uint32_t nr, sz, i;

	if (fc_u32(c, &nr) < 0 || fc_u32(c, &sz) < 0 || sz < PERF_ATTR_SIZE_VER0 ||
	    sz > MAX_ATTR_SIZE)
		return -EBADMSG;
	r->event_desc_attr_size = sz;
	for (i = 0; i < nr; i++) {
		uint32_t nr_ids;
		const char *name;
		uint64_t first_id = 0;
		int idx = -1;

		if (fc_skip(c, sz) < 0 || fc_u32(c, &nr_ids) < 0 || fc_string(r, c, &name) < 0)
			return -EBADMSG;
		if (nr_ids > c->left / 8)
			return -EBADMSG;
		if (nr_ids)
			first_id = rd64(c->p);
		c->p += 8 * (uint64_t)nr_ids;
		c->left -= 8 * (uint64_t)nr_ids;
		/* perf names the attr that owns the event's first id; without ids, by position. */
		if (nr_ids)
			idx = perf_reader__attr_of_id(r, first_id);
		else if (i < r->nr_attrs)
			idx = i;
		if (idx >= 0 && !r->attrs[idx].name)
			r->attrs[idx].name = name;
	}
	return 0;
}

/* Layout of one entry: struct perf_event_header; s32 pid; u8 id[20]; u8 id_len; u8 pad[3]; name
 * NUL-padded. Entries are counted first so that the array is allocated once. */
#define BUILD_ID_NAME_OFF 36
/* perf's PERF_RECORD_MISC_BUILD_ID_SIZE: the entry carries its id length. */
#define MISC_BUILD_ID_SIZE (1 << 15)

static int build_id_entry(const struct fcur *c, struct perf_event_header *h)
{
	if (c->left < sizeof(*h))
		return -EBADMSG;
	memcpy(h, c->p, sizeof(*h));
	if (h->size < BUILD_ID_NAME_OFF || h->size > c->left)
		return -EBADMSG;
	return 0;
}

static int parse_build_ids(struct perf_reader *r, struct fcur *c)
{
	struct perf_reader_build_id *v;
	struct perf_event_header h;
	struct fcur k = *c;
	size_t n = 0, i;

	while (k.left) {
		if (build_id_entry(&k, &h) < 0)
			return -EBADMSG;
		fc_skip(&k, h.size);
		n++;
	}
	v = keep(r, calloc(n + 1, sizeof(*v)));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct perf_reader_build_id *b = &v[i];
		const uint8_t *rec = c->p;

		build_id_entry(c, &h);
		b->misc = h.misc;
		memcpy(&b->pid, rec + 8, 4);
		memcpy(b->id, rec + 12, 20);
		/* Older perfs wrote no length (no MISC_BUILD_ID_SIZE): a 20-byte SHA-1 then. */
		b->id_len = (h.misc & MISC_BUILD_ID_SIZE) ? rec[32] : 20;
		if (b->id_len > 20)
			b->id_len = 20;
		b->path = keep(r, strndup((const char *)rec + BUILD_ID_NAME_OFF,
					  h.size - BUILD_ID_NAME_OFF));
		if (!b->path)
			return -ENOMEM;
		fc_skip(c, h.size);
	}
	r->info.build_ids = v;
	r->info.nr_build_ids = n;
	return 0;
}

static int parse_feature(struct perf_reader *r, int bit, struct fcur *c)
{
	struct perf_reader_info *in = &r->info;

	switch (bit) {
	case FEAT_HOSTNAME:
		return fc_string(r, c, &in->hostname);
	case FEAT_OSRELEASE:
		return fc_string(r, c, &in->osrelease);
	case FEAT_VERSION:
		return fc_string(r, c, &in->version);
	case FEAT_ARCH:
		return fc_string(r, c, &in->arch);
	case FEAT_CPUDESC:
		return fc_string(r, c, &in->cpudesc);
	case FEAT_NRCPUS:
		if (fc_u32(c, &in->nr_cpus_avail) < 0 || fc_u32(c, &in->nr_cpus_online) < 0)
			return -EBADMSG;
		return 0;
	case FEAT_CMDLINE:
		return parse_cmdline(r, c);
	case FEAT_EVENT_DESC:
		return parse_event_desc(r, c);
	case FEAT_SAMPLE_TIME:
		if (fc_u64(c, &in->first_sample_time) < 0 || fc_u64(c, &in->last_sample_time) < 0)
			return -EBADMSG;
		return 0;
	case FEAT_COMPRESSED:
		if (fc_u32(c, &in->comp_version) < 0 || fc_u32(c, &in->comp_type) < 0 ||
		    fc_u32(c, &in->comp_level) < 0 || fc_u32(c, &in->comp_ratio) < 0 ||
		    fc_u32(c, &in->comp_mmap_len) < 0)
			return -EBADMSG;
		return 0;
	case FEAT_BUILD_ID:
		return parse_build_ids(r, c);
	case FEAT_CLOCK_DATA: {
		uint32_t version;

		if (fc_u32(c, &version) < 0 || fc_u32(c, &in->clock.clockid) < 0 ||
		    fc_u64(c, &in->clock.wall_ns) < 0 || fc_u64(c, &in->clock.clock_ns) < 0)
			return -EBADMSG;
		in->has_clock = version >= 1;
		return 0;
	}
	default:
		return 0; /* kept raw for repair, not interpreted */
	}
}

static bool any_feature(const struct perf_reader *r)
{
	return r->hdr.features[0] | r->hdr.features[1] | r->hdr.features[2] | r->hdr.features[3];
}

static int read_features(struct perf_reader *r)
{
	uint64_t idx = r->data_start + r->hdr.data.size;
	int bit;

	if (!any_feature(r))
		return 0;
	/* The index sits right after what data.size claims: nowhere if that is past the end. */
	if (r->hdr.data.size > r->len - r->data_start) {
		feat_damage(r, r->len, "feature index beyond the end of the file");
		return 0;
	}

	for (bit = 0; bit < FEAT_BITS; bit++) {
		struct feat_section s;
		struct fcur c;
		int err;

		if (!(r->hdr.features[bit / 64] & (1ULL << (bit % 64))))
			continue;
		if (!in_file(r, idx, sizeof(s))) {
			feat_damage(r, idx, "feature index beyond the end of the file");
			return 0;
		}
		memcpy(&s, r->map + idx, sizeof(s));
		idx += sizeof(s);
		if (!in_file(r, s.offset, s.size)) {
			feat_damage(r, idx - sizeof(s), "feature section outside the file");
			continue;
		}
		c.p = r->map + s.offset;
		c.left = s.size;
		err = parse_feature(r, bit, &c);
		if (err == -ENOMEM)
			return err;
		if (err < 0) {
			feat_damage(r, s.offset, "unreadable feature section");
			continue;
		}
		r->feat[bit].offset = s.offset;
		r->feat[bit].size = s.size;
		r->feat_ok[bit / 64] |= 1ULL << (bit % 64);
	}
	return 0;
}

/* ---- open ---- */

static int read_attrs(struct perf_reader *r, const char **reason)
{
	const struct perf_file_header *h = &r->hdr;
	uint64_t nr, i, total_ids = 0, k = 0;
	size_t body = h->attr_size - 16;

	if (h->attr_size < MIN_ATTR_SIZE || h->attr_size > MAX_ATTR_SIZE) {
		*reason = "bad attr size in the header";
		return -EBADMSG;
	}
	if (!in_file(r, h->attrs.offset, h->attrs.size)) {
		*reason = "attrs section outside the file";
		return -EBADMSG;
	}
	nr = h->attrs.size / h->attr_size;
	if (!nr) {
		*reason = "no attrs in the file";
		return -EBADMSG;
	}
	r->attrs = calloc(nr, sizeof(*r->attrs));
	if (!r->attrs)
		return -ENOMEM;
	r->nr_attrs = nr;
	for (i = 0; i < nr; i++) {
		const uint8_t *e = r->map + h->attrs.offset + i * h->attr_size;
		struct feat_section ids;
		uint32_t size = rd32(e + 4);

		if (!size)
			size = PERF_ATTR_SIZE_VER0;
		if (size > body)
			size = body;
		if (size > sizeof(struct perf_event_attr))
			size = sizeof(struct perf_event_attr);
		memcpy(&r->attrs[i].attr, e, size);
		memcpy(&ids, e + body, sizeof(ids));
		if (!in_file(r, ids.offset, ids.size)) {
			*reason = "attr ids outside the file";
			return -EBADMSG;
		}
		r->attrs[i].nr_ids = ids.size / 8;
		total_ids += ids.size / 8;
	}
	/* Bounded: each id was checked to lie in the file (but sections may overlap, so cap too). */
	if (total_ids > r->len) {
		*reason = "attr ids overlap implausibly";
		return -EBADMSG;
	}
	r->ids = calloc(total_ids + 1, sizeof(*r->ids));
	r->id_index = calloc(total_ids + 1, sizeof(*r->id_index));
	if (!r->ids || !r->id_index)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		const uint8_t *e = r->map + h->attrs.offset + i * h->attr_size;
		struct feat_section ids;
		size_t j;

		memcpy(&ids, e + body, sizeof(ids));
		memcpy(r->ids + k, r->map + ids.offset, r->attrs[i].nr_ids * 8);
		r->attrs[i].ids = r->ids + k;
		for (j = 0; j < r->attrs[i].nr_ids; j++) {
			r->id_index[k + j].id = r->ids[k + j];
			r->id_index[k + j].idx = i;
		}
		k += r->attrs[i].nr_ids;
	}
	qsort(r->id_index, k, sizeof(*r->id_index), cmp_id);
	r->nr_id_index = k;
	return 0;
}

/* A record header that can start a record: size covers the header, and everything but
 * COMPRESSED (whose zstd payload has any length in perf 6.1) keeps 8-byte alignment. */
static bool plausible(const struct perf_event_header *h)
{
	if (h->size < sizeof(*h))
		return false;
	return h->type == PERF_RECORD_COMPRESSED || h->size % 8 == 0;
}

/* Walk the record headers from data_start up to limit; returns the end of the last complete
 * record and sets *ret_bad to where and why the walk stopped early (reason NULL: clean end). */
static uint64_t scan_records(const struct perf_reader *r, uint64_t limit, const char **ret_bad)
{
	uint64_t off = r->data_start;

	*ret_bad = NULL;
	while (off < limit) {
		struct perf_event_header h;

		if (limit - off < sizeof(h)) {
			*ret_bad = "truncated record header";
			break;
		}
		memcpy(&h, r->map + off, sizeof(h));
		if (!plausible(&h)) {
			*ret_bad = h.size < sizeof(h) ? "record size smaller than its header" :
							"record size not a multiple of 8";
			break;
		}
		if (h.size > limit - off) {
			*ret_bad = "truncated record";
			break;
		}
		off += h.size;
	}
	return off;
}

static int locate_data(struct perf_reader *r)
{
	const struct perf_file_header *h = &r->hdr;
	uint64_t claimed_end, limit;
	const char *bad;
	bool recover = false;

	r->data_start = h->data.offset;
	if (h->data.size > UINT64_MAX - h->data.offset)
		claimed_end = UINT64_MAX;
	else
		claimed_end = h->data.offset + h->data.size;

	if (h->data.size == 0) {
		/* Killed recorder: perf and precord both leave 0 until the first sync. */
		recover = true;
	} else if (!any_feature(r) && claimed_end <= r->len) {
		/* No features: the recorder never finished the file. Its size may be stale (the
		 * records go on past data.size) or, synced just before the kill, exact. */
		recover = true;
	}
	limit = recover ? r->len : (claimed_end < r->len ? claimed_end : r->len);
	r->data_end = scan_records(r, limit, &bad);
	if (recover) {
		r->warnings |= PERF_READER_W_RECOVERED;
		if (any_feature(r))
			r->warnings |= PERF_READER_W_NO_FEATURES;
		if (bad)
			data_damage(r, r->data_end, bad);
		return 0;
	}
	if (bad)
		data_damage(r, r->data_end, bad);
	else if (r->data_end < claimed_end)
		data_damage(r, r->data_end, "file truncated inside the data section");
	return read_features(r);
}

struct perf_reader *perf_reader__new(const struct perf_reader_opts *opts)
{
	struct perf_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	pthread_mutex_init(&r->block_lock, NULL);
	r->ordered_max_bytes = opts && opts->ordered_max_bytes ? opts->ordered_max_bytes :
								  ORDERED_MAX_BYTES;
	return r;
}

const char *perf_reader__error(const struct perf_reader *r)
{
	return r->err;
}

/* Open path read-only and refuse what is not a regular file. Returns the fd or -errno, *reason
 * set when strerror would not say enough. */
static int open_regular(const char *path, struct stat *st, const char **reason)
{
	_cleanup_close_ int fd = -1;

	if (!strcmp(path, "-")) {
		/* Standard input: a file redirected there is read like any other; a pipe is not. */
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	} else {
		/* O_NONBLOCK: opening a FIFO with no writer must not wait for one (it is refused
		 * below); it changes nothing for the regular file that is mapped. */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	}
	if (fd < 0 || fstat(fd, st) < 0)
		return -errno;
	if (S_ISDIR(st->st_mode)) {
		*reason = "is a directory (perf's directory format is not supported)";
		return -EISDIR;
	}
	if (!S_ISREG(st->st_mode)) {
		*reason = S_ISFIFO(st->st_mode) ?
			  "a pipe: pipe-mode perf.data is not supported (record to a file, e.g. perf record -o FILE, and read that)" :
			  "not a regular file: only perf.data files can be read";
		return -EPROTONOSUPPORT;
	}
	return TAKE_FD(fd);
}

/* Check the file header in the mapping and copy it. Returns 0 or -errno with *reason set. */
static int read_header(struct perf_reader *r, const char **reason)
{
	uint64_t magic = rd64(r->map), hsize = rd64(r->map + 8);

	if (magic == __builtin_bswap64(PERF_MAGIC2)) {
		*reason = "big-endian perf.data is not supported";
		return -EPROTONOSUPPORT;
	}
	if (!memcmp(r->map, "PERFFILE", 8)) {
		*reason = "perf.data version 1 is not supported";
		return -EPROTONOSUPPORT;
	}
	if (magic != PERF_MAGIC2) {
		*reason = "not a perf.data file (bad magic)";
		return -EINVAL;
	}
	if (hsize == PIPE_HEADER_SIZE) {
		*reason = "pipe-mode perf.data is not supported (record with -o FILE)";
		return -EPROTONOSUPPORT;
	}
	if (hsize != PERF_HEADER_SIZE && hsize != OLD_HEADER_SIZE) {
		*reason = "unsupported header size";
		return -EBADMSG;
	}
	if (r->len < hsize) {
		*reason = "file truncated inside the header";
		return -EBADMSG;
	}
	/* The old 72-byte header has no feature bitmap: it stays zero. */
	memcpy(&r->hdr, r->map, hsize);
	return 0;
}

/* The body of perf_reader__open. Returns 0 or -errno with *reason set where it helps. */
static int open_file(struct perf_reader *r, const char *path, const char **reason)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	int err;

	fd = open_regular(path, &st, reason);
	if (fd < 0)
		return fd;
	r->len = st.st_size;
	if (r->len < PIPE_HEADER_SIZE) {
		*reason = "file too small to be a perf.data file";
		return -EINVAL;
	}
	r->map = mmap(NULL, r->len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return -errno;
	}
	err = read_header(r, reason);
	if (!err)
		err = read_attrs(r, reason);
	if (err < 0)
		return err;
	if (r->hdr.data.offset > r->len) {
		*reason = "data section starts beyond the end of the file";
		return -EBADMSG;
	}
	return locate_data(r);
}

int perf_reader__open(struct perf_reader *r, const char *path)
{
	const char *reason = NULL;
	int err;

	if (r->path) {
		seterr(r, "cannot read %s: the reader already holds %s", path, r->path);
		return -EBUSY;
	}
	r->err[0] = 0;
	r->path = strdup(path);
	if (!r->path) {
		seterr(r, "cannot read %s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	err = open_file(r, path, &reason);
	if (err < 0)
		seterr(r, "cannot read %s: %s", path, reason ? reason : strerror(-err));
	return err;
}

const struct perf_file_header *perf_reader__header(const struct perf_reader *r)
{
	return &r->hdr;
}

size_t perf_reader__nr_attrs(const struct perf_reader *r)
{
	return r->nr_attrs;
}

const struct perf_reader_attr *perf_reader__attr(const struct perf_reader *r, size_t idx)
{
	return idx < r->nr_attrs ? &r->attrs[idx] : NULL;
}

const struct perf_reader_info *perf_reader__info(const struct perf_reader *r)
{
	return &r->info;
}

bool perf_reader__has_feature(const struct perf_reader *r, int bit)
{
	if (bit < 0 || bit >= FEAT_BITS)
		return false;
	return r->feat_ok[bit / 64] & (1ULL << (bit % 64));
}

const void *perf_reader__feature(const struct perf_reader *r, int bit, size_t *ret_len)
{
	if (!perf_reader__has_feature(r, bit))
		return NULL;
	*ret_len = r->feat[bit].size;
	return r->map + r->feat[bit].offset;
}

unsigned int perf_reader__warnings(const struct perf_reader *r)
{
	return r->warnings;
}

const struct perf_reader_damage *perf_reader__damage(const struct perf_reader *r)
{
	if (r->has_data_damage && r->has_feat_damage)
		return r->data_damage.offset <= r->feat_damage.offset ? &r->data_damage :
									&r->feat_damage;
	if (r->has_data_damage)
		return &r->data_damage;
	if (r->has_feat_damage)
		return &r->feat_damage;
	return NULL;
}

const struct perf_reader_stats *perf_reader__walk_stats(const struct perf_reader *r)
{
	return &r->walk_stats;
}

uint64_t perf_reader__frame_jobs(const struct perf_reader *r)
{
	return r->frame_jobs;
}

void perf_reader__set_decode_thread(struct perf_reader *r, bool on)
{
	r->decode_thread = on;
}

uint64_t perf_reader__nr_unordered(const struct perf_reader *r)
{
	return r->nr_unordered;
}

void perf_reader__free(struct perf_reader *r)
{
	size_t i;

	if (!r)
		return;
	if (r->map)
		munmap((void *)r->map, r->len);
	free(r->path);
	for (i = 0; i < r->nr_allocs; i++)
		free(r->allocs[i]);
	free(r->allocs);
	free(r->attrs);
	free(r->ids);
	free(r->id_index);
	ZSTD_freeDCtx(r->ds);
	ZSTD_freeDCtx(r->job_ds[0]);
	ZSTD_freeDCtx(r->job_ds[1]);
	pthread_mutex_destroy(&r->block_lock);
	while (r->nr_free_blocks)
		free(r->free_blocks[--r->nr_free_blocks]);
	free(r);
}

/* ---- the record walk ---- */

/* Internal walk functions return 0 to go on or STOP; why they stopped (the callback's value,
 * -ENOMEM, or 0 for damage, which is recorded in the reader) is in walk.result. */
#define STOP 1
/* With a decoding thread: items queued between it and the delivering thread, and how many
 * blocks it may fill ahead of the one being delivered. */
#define PIPE_ITEMS 256
#define PIPE_AHEAD_BLOCKS 4
/* Items queued before a waiting delivering side is woken. */
#define PIPE_WAKE 16
/* A decoder that had to wait goes on once it has room for several items or blocks, not one:
 * woken for each, the two sides took turns on one CPU every few microseconds. */
#define PIPE_RESUME_ITEMS (PIPE_ITEMS / 2)
#define PIPE_RESUME_BLOCKS (PIPE_AHEAD_BLOCKS - 2)

struct walk;
/* rec->ref NULL: rec->hdr stays valid after the call (it points into the mapping). */
typedef int (*sink_fn)(struct walk *w, const struct perf_reader_record *rec);

struct qent {
	uint64_t time, seq;
	struct perf_reader_record rec; /* holds a reference to rec.ref */
};

/* What the decoding side hands the delivering side, in file order. */
enum item_kind {
	IT_PLAIN,       /* the record at off, in the mapping */
	IT_CONTAINER,   /* the COMPRESSED record at off (counted only) */
	IT_SEGMENT,     /* bytes [start, end) of blk, decoded from the COMPRESSED record at off */
	IT_DAMAGE,      /* zstd failed on the COMPRESSED record at off: reason */
	IT_ERROR,       /* err (-ENOMEM) */
	IT_END,         /* no more; off: the last COMPRESSED record */
	IT_FRAME,       /* the items of a whole zstd frame, decoded apart: job */
};

struct frame_job;

struct item {
	enum item_kind kind;
	int err;
	uint64_t off;
	struct perf_reader_ref *blk; /* IT_SEGMENT: a reference of the item's own */
	size_t start, end;
	struct frame_job *job;       /* IT_FRAME */
	char reason[96];
};

/* The decoding side: the file's records in order, COMPRESSED payloads decoded into blocks. */
struct decoder {
	ZSTD_DCtx **dsp;    /* where its zstd context is kept across walks */
	ZSTD_DCtx *ds;
	struct frame_job *job; /* its items go to this job's list, not to the walk */
	size_t need;        /* bytes of the next unit zstd takes (0: a frame starts) */
	uint8_t *stage;     /* a unit cut between payloads, gathered */
	size_t staged;
	uint8_t fhdr[ZSTD_FRAMEHEADERSIZE_MAX]; /* the frame header being read */
	size_t nr_fhdr;
	bool skipping;      /* inside a skippable frame's content */
	struct perf_reader_ref *blk, *prev; /* output block; the one before, zstd's history */
	size_t len, seg;    /* bytes in blk; where the segment not yet handed on starts */
	uint64_t off;       /* the COMPRESSED record being decoded */
	struct perf_reader_ref *last_pushed; /* block of the last segment (for the pipe's limit) */
};

/* The pipe between a decoding thread and the delivering (calling) thread. */
struct pipe {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* either side waits on it; both signal it */
	struct item *ring;
	size_t head, tail;          /* counts: items popped, pushed */
	uint64_t blocks_pushed, blocks_seen;
	bool c_waiting, p_waiting;  /* the delivering, the decoding side waits on cond */
	bool p_far;                 /* the decoding side waits for blocks, not items */
	bool stop;                  /* the delivering side stopped: the decoder ends */
	/* frame jobs pushed and not yet delivered, oldest first (see produce_frames) */
	struct frame_job *jobs, **jobs_tail;
	size_t nr_jobs;
	bool p_jobs;                /* the decoding side waits for nr_jobs to drop */
};

struct walk {
	struct perf_reader *r;
	sink_fn sink;
	perf_reader_fn fn;
	void *ctx;
	int result;
	struct perf_reader_stats *stats;
	struct decoder dec;
	struct decoder pdec, cdec; /* frame jobs' decoders on the decoding, the delivering side */
	struct pipe *pipe;  /* NULL: the decoder delivers as it goes, on the calling thread */
	bool in_job;        /* the delivering side takes a frame job's items (not the pipe's) */
	/* delivering side: decompressed bytes not yet delivered are data[head, end) of blk; a
	 * record cut by the end of a block is gathered in carry */
	struct perf_reader_ref *blk;
	size_t head, end;
	uint8_t *carry;
	size_t nr_carry;
	/* ordered mode: a min-heap on (time, seq) */
	struct qent *heap;
	size_t nr_heap, cap_heap;
	uint64_t seq, next_flush, max_time, last_flush;
	size_t queued_bytes;
};

static int fail(struct walk *w, int err)
{
	w->result = err;
	return STOP;
}

/* Blocks are made by the decoding side and released by both: refs are atomic, the cache of free
 * blocks and block_cap are under block_lock. */
static struct perf_reader_ref *block_new(struct perf_reader *r)
{
	struct perf_reader_ref *b = NULL;
	size_t cap;

	pthread_mutex_lock(&r->block_lock);
	if (!r->block_cap)
		r->block_cap = BLOCK_CAP;
	cap = r->block_cap;
	while (r->nr_free_blocks && r->free_blocks[r->nr_free_blocks - 1]->cap < cap)
		free(r->free_blocks[--r->nr_free_blocks]); /* from before a larger window */
	if (r->nr_free_blocks)
		b = r->free_blocks[--r->nr_free_blocks];
	pthread_mutex_unlock(&r->block_lock);
	if (!b) {
		if (!(b = malloc(sizeof(*b) + cap)))
			return NULL;
		b->cap = cap;
	}
	b->r = r;
	atomic_init(&b->refs, 1);
	b->small = false;
	return b;
}

/* An aligned copy of one record that lies misaligned in the file, as a block of its own. */
static struct perf_reader_ref *block_copy(struct perf_reader *r, const void *rec, size_t size)
{
	struct perf_reader_ref *b = malloc(sizeof(*b) + size);

	if (!b)
		return NULL;
	b->r = r;
	atomic_init(&b->refs, 1);
	b->small = true;
	b->cap = size;
	memcpy(b->data, rec, size);
	return b;
}

static void block_put(struct perf_reader_ref *b)
{
	struct perf_reader *r;

	if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
		return;
	r = b->r;
	if (!b->small) {
		pthread_mutex_lock(&r->block_lock);
		if (b->cap >= r->block_cap && r->nr_free_blocks < BLOCK_CACHE) {
			r->free_blocks[r->nr_free_blocks++] = b;
			b = NULL;
		}
		pthread_mutex_unlock(&r->block_lock);
	}
	free(b);
}

struct perf_reader_ref *perf_reader__hold(const struct perf_reader_record *rec)
{
	struct perf_reader_ref *b = rec->ref;

	if (b)
		atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
	return b;
}

void perf_reader__release(struct perf_reader_ref *ref)
{
	block_put(ref);
}

/* Decompressed records are counted here; plain ones (COMPRESSED containers among them) by
 * count_plain. */
static void count_record(struct perf_reader_stats *s, const struct perf_event_header *h,
			 bool compressed)
{
	if (compressed) {
		s->total++;
		if (h->type < PERF_RECORD_HEADER_MAX)
			s->nr_by_type[h->type]++;
		else
			s->nr_other++;
	}
	/* LOST: {u64 id, u64 lost}; LOST_SAMPLES: {u64 lost}. */
	if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 16)
		s->total_lost += rd64((const uint8_t *)(h + 1) + 8);
	else if (h->type == PERF_RECORD_LOST_SAMPLES && h->size >= sizeof(*h) + 8)
		s->total_lost_samples += rd64(h + 1);
}

static void count_plain(struct perf_reader_stats *s, uint32_t type)
{
	if (!s)
		return;
	s->total++;
	if (type < PERF_RECORD_HEADER_MAX)
		s->nr_by_type[type]++;
	else
		s->nr_other++;
}

static int deliver(struct walk *w, const struct perf_event_header *h, uint64_t off,
		   bool compressed, struct perf_reader_ref *ref)
{
	struct perf_reader_record rec = {
		.hdr = h,
		.offset = off,
		.compressed = compressed,
		.ref = ref,
	};

	rec.attr_index = perf_reader__attr_index(w->r, h);
	if (rec.attr_index < 0)
		rec.attr_index = -1;
	rec.time = record_time(w->r, h, rec.attr_index);
	if (w->stats)
		count_record(w->stats, h, compressed);
	return w->sink(w, &rec);
}

/* ---- delivering side ---- */

static bool bad_size(uint16_t size)
{
	return size < sizeof(struct perf_event_header) || size % 8;
}

/* Bytes of the current block towards the record in carry; delivers it once whole. */
static int fill_carry(struct walk *w, uint64_t off)
{
	struct perf_event_header h;
	struct perf_reader_ref *b;
	size_t want, take;
	int stop;

	for (;;) {
		want = sizeof(h);
		if (w->nr_carry >= sizeof(h)) {
			memcpy(&h, w->carry, sizeof(h));
			if (bad_size(h.size)) {
				data_damage(w->r, off, "bad record size inside compressed data");
				return STOP;
			}
			want = h.size;
			if (w->nr_carry == want)
				break;
		}
		take = want - w->nr_carry < w->end - w->head ? want - w->nr_carry : w->end - w->head;
		if (!take)
			return 0; /* the rest comes with the next segment */
		memcpy(w->carry + w->nr_carry, w->blk->data + w->head, take);
		w->nr_carry += take;
		w->head += take;
	}
	w->nr_carry = 0;
	b = block_copy(w->r, w->carry, want);
	if (!b)
		return fail(w, -ENOMEM);
	stop = deliver(w, (const void *)b->data, off, true, b);
	block_put(b);
	return stop;
}

/* Hand on the complete records in the current block; a record that the block's end cuts
 * waits in carry (the rest comes in the next block). */
static int drain_pending(struct walk *w, uint64_t off)
{
	if (w->nr_carry && fill_carry(w, off))
		return STOP;
	while (w->end - w->head >= sizeof(struct perf_event_header)) {
		const uint8_t *at = w->blk->data + w->head;
		struct perf_event_header h;

		memcpy(&h, at, sizeof(h));
		if (bad_size(h.size)) {
			data_damage(w->r, off, "bad record size inside compressed data");
			return STOP;
		}
		if (h.size > w->end - w->head)
			break;
		if ((uintptr_t)at % 8) {
			/* a frame decoded apart that starts inside a record: its records lie
			 * misaligned in its block (never in precord's or perf's files) */
			struct perf_reader_ref *b = block_copy(w->r, at, h.size);
			int stop;

			if (!b)
				return fail(w, -ENOMEM);
			stop = deliver(w, (const void *)b->data, off, true, b);
			block_put(b);
			if (stop)
				return STOP;
		} else if (deliver(w, (const void *)at, off, true, w->blk)) {
			return STOP;
		}
		w->head += h.size;
	}
	return 0;
}

/* Decoded bytes [start, end) of it->blk: more of the current block, or the next block. */
static int take_segment(struct walk *w, struct item *it)
{
	if (it->blk != w->blk) {
		size_t left = w->end - w->head;

		if (left) { /* a record cut by the block's end: gathered */
			if (!w->carry && !(w->carry = malloc(65536)))
				return fail(w, -ENOMEM);
			memcpy(w->carry + w->nr_carry, w->blk->data + w->head, left);
			w->nr_carry += left;
		}
		block_put(w->blk);
		w->blk = it->blk;
		w->head = it->start;
		if (w->pipe && !w->in_job) {
			pthread_mutex_lock(&w->pipe->lock);
			w->pipe->blocks_seen++;
			if (w->pipe->p_waiting && w->pipe->p_far &&
			    w->pipe->blocks_pushed - w->pipe->blocks_seen <= PIPE_RESUME_BLOCKS)
				pthread_cond_broadcast(&w->pipe->cond);
			pthread_mutex_unlock(&w->pipe->lock);
		}
	} else {
		block_put(it->blk); /* the walk holds the block already */
	}
	it->blk = NULL;
	w->end = it->end;
	return drain_pending(w, it->off);
}

static int consume_frame(struct walk *w, struct frame_job *j);

/* One item from the decoding side; STOP ends the walk (w->result says why). */
static int consume(struct walk *w, struct item *it)
{
	struct perf_reader *r = w->r;
	const struct perf_event_header *h = (const void *)(r->map + it->off);
	uint16_t size;

	switch (it->kind) {
	case IT_CONTAINER:
		count_plain(w->stats, PERF_RECORD_COMPRESSED);
		return 0;
	case IT_PLAIN:
		memcpy(&size, r->map + it->off + 6, 2);
		count_plain(w->stats, rd32(r->map + it->off));
		if (it->off % 8) {
			/* Only after an odd-sized COMPRESSED record: callers get aligned records. */
			struct perf_reader_ref *b = block_copy(r, h, size);
			int stop;

			if (!b)
				return fail(w, -ENOMEM);
			stop = deliver(w, (const void *)b->data, it->off, false, b);
			block_put(b);
			return stop;
		}
		return deliver(w, h, it->off, false, NULL);
	case IT_SEGMENT:
		return take_segment(w, it);
	case IT_DAMAGE:
		snprintf(r->reason_buf, sizeof(r->reason_buf), "%s", it->reason);
		data_damage(r, it->off, r->reason_buf);
		return STOP;
	case IT_ERROR:
		return fail(w, it->err);
	case IT_END:
		if ((w->nr_carry || w->end > w->head) && !r->has_data_damage)
			data_damage(r, it->off, "compressed data ends inside a record");
		return STOP;
	case IT_FRAME:
		return consume_frame(w, it->job);
	}
	return STOP;
}

/* ---- decoding side ---- */

/* Hand an item on: delivered now, or queued for the delivering thread (waiting while the queue
 * is full or the decoder is PIPE_AHEAD_BLOCKS ahead). STOP when the walk is to end. */
static int push(struct walk *w, struct item *it)
{
	struct pipe *p = w->pipe;
	bool fresh = it->kind == IT_SEGMENT && it->blk != w->dec.last_pushed;

	if (it->kind == IT_SEGMENT)
		w->dec.last_pushed = it->blk;
	if (!p) {
		int stop = consume(w, it);

		block_put(it->blk);
		return stop;
	}
	pthread_mutex_lock(&p->lock);
	for (bool waited = false; !p->stop; waited = true) {
		size_t used = p->tail - p->head;
		uint64_t ahead = p->blocks_pushed - p->blocks_seen;
		bool full = used >= (waited ? PIPE_RESUME_ITEMS : PIPE_ITEMS);
		bool far = fresh && ahead > (waited ? PIPE_RESUME_BLOCKS : PIPE_AHEAD_BLOCKS - 1);

		if (!full && !far)
			break;
		/* the delivering side may be waiting for a batch that will not fill now */
		if (p->c_waiting)
			pthread_cond_broadcast(&p->cond);
		p->p_waiting = true;
		p->p_far = !full;
		pthread_cond_wait(&p->cond, &p->lock);
		p->p_waiting = false;
	}
	if (p->stop) {
		pthread_mutex_unlock(&p->lock);
		block_put(it->blk);
		return STOP;
	}
	p->blocks_pushed += fresh;
	p->ring[p->tail++ % PIPE_ITEMS] = *it;
	/* a waiting delivering side is woken for a batch of items (or the last one), not for each:
	 * one wakeup per COMPRESSED record was most of the decoding thread's context switches */
	if (p->c_waiting && (p->tail - p->head >= PIPE_WAKE || it->kind >= IT_DAMAGE))
		pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* A frame job: one zstd frame's bytes gathered from the COMPRESSED payloads that carry it, each
 * piece with the record it came from, and once decoded the items the walk's decoder would have
 * pushed for them (segments, and damage or an error). state is under the pipe's lock. */
enum job_state { JOB_QUEUED, JOB_CLAIMED, JOB_DONE };

struct job_cut {
	size_t end;   /* src[previous cut's end, end) came from */
	uint64_t off; /* the COMPRESSED record at off */
};

struct frame_job {
	struct frame_job *next;
	enum job_state state;
	uint8_t *src;
	size_t len, cap;
	struct job_cut *cuts;
	size_t nr_cuts, cap_cuts;
	struct item *items;
	size_t nr_items, cap_items;
	int err;      /* -ENOMEM: items after the last are missing */
};

/* An item of the decoder d: to its job's list, or on to the walk. */
static int dpush(struct walk *w, struct decoder *d, struct item *it)
{
	struct frame_job *j = d->job;

	if (!j)
		return push(w, it);
	if (j->nr_items == j->cap_items) {
		size_t nc = j->cap_items ? 2 * j->cap_items : 8;
		struct item *n = realloc(j->items, nc * sizeof(*n));

		if (!n) {
			block_put(it->blk);
			j->err = -ENOMEM;
			return STOP;
		}
		j->items = n;
		j->cap_items = nc;
	}
	j->items[j->nr_items++] = *it;
	return 0;
}

/* The decoded bytes not yet handed on, as a segment of their own (with a reference). */
static int push_segment(struct walk *w, struct decoder *d)
{
	struct item it = { .kind = IT_SEGMENT, .off = d->off, .blk = d->blk, .start = d->seg,
			   .end = d->len };

	if (!d->blk || d->len == d->seg)
		return 0;
	atomic_fetch_add_explicit(&d->blk->refs, 1, memory_order_relaxed);
	d->seg = d->len;
	return dpush(w, d, &it);
}

static int push_error(struct walk *w, struct decoder *d, int err)
{
	struct item it = { .kind = IT_ERROR, .err = err };

	dpush(w, d, &it);
	return STOP;
}

static int zstd_damage(struct walk *w, struct decoder *d, const char *reason)
{
	struct item it = { .kind = IT_DAMAGE, .off = d->off };

	snprintf(it.reason, sizeof(it.reason), "zstd: %s", reason);
	if (push_segment(w, d) == 0)
		dpush(w, d, &it);
	return STOP;
}

/* Room for a zstd block in the current block, else a fresh block; the old one stays held as
 * zstd's history (see decompress) until the next switch. */
static int block_room(struct walk *w, struct decoder *d)
{
	struct perf_reader_ref *b;

	if (d->blk && d->blk->cap - d->len >= ZSTD_BLOCKSIZE_MAX)
		return 0;
	if (push_segment(w, d))
		return STOP;
	b = block_new(w->r);
	if (!b)
		return push_error(w, d, -ENOMEM);
	block_put(d->prev);
	d->prev = d->blk;
	d->blk = b;
	d->len = d->seg = 0;
	return 0;
}

/* A frame header is whole (its bytes in d->fhdr): blocks from now on hold at least its window
 * beside the room for two zstd blocks. */
static int frame_started(struct walk *w, struct decoder *d)
{
	struct perf_reader *r = w->r;
	ZSTD_frameHeader fh;
	size_t e = ZSTD_getFrameHeader(&fh, d->fhdr, d->nr_fhdr), cap;

	if (ZSTD_isError(e))
		return zstd_damage(w, d, ZSTD_getErrorName(e));
	if (e || fh.frameType == ZSTD_skippableFrame)
		return 0;
	if (fh.windowSize > ZSTD_WINDOW_MAX)
		return zstd_damage(w, d, "frame window larger than 128 MiB");
	cap = fh.windowSize + BLOCK_MIN_ROOM + 2 * ZSTD_BLOCKSIZE_MAX;
	pthread_mutex_lock(&r->block_lock);
	if (cap > r->block_cap)
		r->block_cap = (cap + 65535) & ~(size_t)65535;
	pthread_mutex_unlock(&r->block_lock);
	/* the frames before are not its history */
	block_put(d->prev);
	d->prev = NULL;
	return 0;
}

/* The next unit zstd asks for is whole (at src): decode it into the current block. */
static int decode_unit(struct walk *w, struct decoder *d, const uint8_t *src, size_t n)
{
	ZSTD_nextInputType_e type = ZSTD_nextInputType(d->ds);
	size_t ret;

	if (type == ZSTDnit_frameHeader && n <= sizeof(d->fhdr) - d->nr_fhdr) {
		memcpy(d->fhdr + d->nr_fhdr, src, n);
		d->nr_fhdr += n;
	}
	if ((type == ZSTDnit_block || type == ZSTDnit_lastBlock || !d->blk) && block_room(w, d))
		return STOP;
	ret = ZSTD_decompressContinue(d->ds, d->blk->data + d->len, d->blk->cap - d->len, src, n);
	if (ZSTD_isError(ret))
		return zstd_damage(w, d, ZSTD_getErrorName(ret));
	d->len += ret;
	if (type == ZSTDnit_frameHeader && ZSTD_nextInputType(d->ds) != ZSTDnit_frameHeader &&
	    frame_started(w, d))
		return STOP;
	/* after a skippable frame's size: its content */
	d->skipping = type == ZSTDnit_skippableFrame;
	return 0;
}

/*
 * COMPRESSED payloads in file order form one zstd stream of frames, as perf reads them. zstd's
 * buffer-less API decodes each unit (frame header, block header, block) straight into the blocks
 * that records are delivered from: no copy through a window of zstd's own. Its history is the
 * current block's output and the previous block's (zstd keeps two segments), so a block holds a
 * whole window (see frame_started). A unit cut between two payloads is gathered in d->stage.
 */
static int decompress(struct walk *w, struct decoder *d, const uint8_t *payload, size_t n,
		      uint64_t off)
{
	size_t pos = 0;

	d->off = off;
	if (!d->ds) {
		if (!*d->dsp)
			*d->dsp = ZSTD_createDCtx();
		if (!*d->dsp || !(d->stage = malloc(ZSTD_BLOCKSIZE_MAX)))
			return push_error(w, d, -ENOMEM);
		d->ds = *d->dsp;
		d->need = 0;
	}
	while (pos < n) {
		const uint8_t *src = payload + pos;
		size_t take;

		if (!d->need) {
			/* A frame that ends is followed by a new one in the same stream. */
			ZSTD_decompressBegin(d->ds);
			d->need = ZSTD_nextSrcSizeToDecompress(d->ds);
			d->nr_fhdr = 0;
		}
		if (d->skipping) {
			/* skippable content (any size): passed over, not gathered; the next frame
			 * starts afresh */
			take = n - pos < d->need ? n - pos : d->need;
			pos += take;
			d->need -= take;
			d->skipping = d->need > 0;
			continue;
		}
		if (d->need > ZSTD_BLOCKSIZE_MAX)
			return zstd_damage(w, d, "block larger than 128 KiB");
		if (!d->staged && n - pos >= d->need) {
			pos += d->need;
		} else {
			take = d->need - d->staged < n - pos ? d->need - d->staged : n - pos;
			memcpy(d->stage + d->staged, src, take);
			d->staged += take;
			pos += take;
			if (d->staged < d->need)
				break;
			src = d->stage;
		}
		if (decode_unit(w, d, src, d->need))
			return STOP;
		d->staged = 0;
		d->need = ZSTD_nextSrcSizeToDecompress(d->ds);
	}
	return push_segment(w, d);
}

/* The records of the file in order, COMPRESSED ones decoded; ends with IT_END (or a stop). */
static int produce(struct walk *w)
{
	struct perf_reader *r = w->r;
	uint64_t off = r->data_start, last_comp = 0;
	bool seen_comp = false;

	while (off < r->data_end) {
		struct item it = { .kind = IT_PLAIN, .off = off };
		uint32_t type = rd32(r->map + off);
		uint16_t size;

		/* scan_records() checked every header below data_end. */
		memcpy(&size, r->map + off + 6, 2);
		if (type == PERF_RECORD_COMPRESSED) {
			if (!seen_comp && !perf_reader__has_feature(r, FEAT_COMPRESSED))
				r->warnings |= PERF_READER_W_NO_COMP_FEATURE;
			seen_comp = true;
			last_comp = off;
			it.kind = IT_CONTAINER;
			if (push(w, &it) ||
			    decompress(w, &w->dec, r->map + off + sizeof(struct perf_event_header),
				       size - sizeof(struct perf_event_header), off))
				return STOP;
		} else if (push(w, &it)) {
			return STOP;
		}
		off += size;
	}
	return push(w, &(struct item){ .kind = IT_END, .off = last_comp });
}

/* ---- frames decoded apart ----
 *
 * precord's files hold many independent zstd frames (one per reader flush, each carried by a
 * run of COMPRESSED records). With a decoding thread, that thread finds where each frame ends by
 * reading its frame and block headers (without decoding), gathers its bytes into a job and
 * pushes an IT_FRAME item. The job is decoded by whichever side is free: the decoding thread once
 * it is JOBS_AHEAD frames ahead of the delivering one, or the delivering thread when it reaches a
 * job nobody has started, or must wait for one while another is still queued. A frame that a
 * plain record interrupts, that grows past JOB_MAX_SRC (perf -z's one frame for the whole file),
 * or whose headers are not zstd's, goes to the one-stream decoder instead, and so does the rest
 * of the file: either way the same records come out, at the same offsets, with the same damage.
 */
/* Frames decoded ahead: on 270k-sample precord files (8 MiB frames) -j 2 took 0.72 s with 1,
 * 0.53-0.61 with 2, 0.53-0.60 with 4, each frame ahead costing its 8 MiB of peak memory. */
#define JOBS_AHEAD 2
#define JOB_MAX_SRC ((size_t)16 << 20)

enum scan_state { SC_MAGIC, SC_FHD, SC_BHDR, SC_SKIPSIZE, SC_SKIP };
enum scan_then { SC_THEN_BHDR, SC_THEN_CHECKSUM, SC_THEN_END };

struct frame_scan {
	enum scan_state st;
	enum scan_then then;    /* after SC_SKIP */
	uint8_t buf[4];
	size_t have, want;      /* header bytes gathered in buf, wanted */
	uint64_t skip;          /* SC_SKIP: bytes to pass over */
	bool checksum;          /* the frame ends with a 4-byte checksum */
};

static void scan_reset(struct frame_scan *sc)
{
	*sc = (struct frame_scan){ .st = SC_MAGIC, .want = 4 };
}

static void scan_skip(struct frame_scan *sc, uint64_t n, enum scan_then then)
{
	sc->st = SC_SKIP;
	sc->skip = n;
	sc->then = then;
}

/* The gathered header is whole: what follows it. -1: not a zstd frame. */
static int scan_header(struct frame_scan *sc)
{
	static const uint8_t did_size[4] = { 0, 1, 2, 4 }, fcs_size[4] = { 0, 2, 4, 8 };
	uint32_t v = rd32(sc->buf), type, size;
	uint8_t fhd = sc->buf[0];
	bool single;

	sc->have = 0;
	switch (sc->st) {
	case SC_MAGIC:
		if (v == ZSTD_MAGICNUMBER) {
			sc->st = SC_FHD;
			sc->want = 1;
		} else if ((v & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START) {
			sc->st = SC_SKIPSIZE;
			sc->want = 4;
		} else {
			return -1;
		}
		return 0;
	case SC_FHD:
		if (fhd & 0x08) /* reserved bit */
			return -1;
		single = fhd >> 5 & 1;
		sc->checksum = fhd >> 2 & 1;
		/* window descriptor, dictionary id, content size (1 byte when single and 0) */
		scan_skip(sc, (uint64_t)!single + did_size[fhd & 3] +
			      (fhd >> 6 ? fcs_size[fhd >> 6] : single), SC_THEN_BHDR);
		return 0;
	case SC_BHDR:
		v &= 0xffffff;
		type = v >> 1 & 3;
		size = v >> 3;
		if (type == 3 || size > ZSTD_BLOCKSIZE_MAX)
			return -1;
		scan_skip(sc, type == 1 ? 1 : size,
			  !(v & 1) ? SC_THEN_BHDR : sc->checksum ? SC_THEN_CHECKSUM : SC_THEN_END);
		return 0;
	case SC_SKIPSIZE:
		scan_skip(sc, v, SC_THEN_END);
		return 0;
	case SC_SKIP:
		break;
	}
	return -1;
}

/* n more bytes of the stream: 1 when the frame ends after *used of them, 0 when all belong to
 * it, -1 when its headers are not zstd's. */
static int scan_feed(struct frame_scan *sc, const uint8_t *p, size_t n, size_t *used)
{
	size_t i = 0;

	for (;;) {
		if (sc->st == SC_SKIP) {
			uint64_t t = sc->skip < n - i ? sc->skip : n - i;

			i += t;
			sc->skip -= t;
			if (sc->skip)
				break;
			if (sc->then == SC_THEN_BHDR) {
				sc->st = SC_BHDR;
				sc->want = 3;
				sc->buf[3] = 0;
			} else if (sc->then == SC_THEN_CHECKSUM) {
				scan_skip(sc, 4, SC_THEN_END);
			} else {
				*used = i;
				scan_reset(sc);
				return 1;
			}
			continue;
		}
		if (i == n)
			break;
		{
			size_t t = sc->want - sc->have < n - i ? sc->want - sc->have : n - i;

			memcpy(sc->buf + sc->have, p + i, t);
			sc->have += t;
			i += t;
		}
		if (sc->have == sc->want && scan_header(sc) < 0) {
			*used = i;
			return -1;
		}
	}
	*used = i;
	return 0;
}

static void job_free(struct frame_job *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nr_items; i++)
		block_put(j->items[i].blk);
	free(j->items);
	free(j->src);
	free(j->cuts);
	free(j);
}

/* n more bytes of the job's frame, from the COMPRESSED record at off. */
static int job_add(struct frame_job *j, const uint8_t *p, size_t n, uint64_t off)
{
	if (j->len + n > j->cap) {
		size_t nc = j->cap ? j->cap : 65536;
		uint8_t *s;

		while (nc < j->len + n)
			nc *= 2;
		if (!(s = realloc(j->src, nc)))
			return -ENOMEM;
		j->src = s;
		j->cap = nc;
	}
	if (j->nr_cuts == j->cap_cuts) {
		size_t nc = j->cap_cuts ? 2 * j->cap_cuts : 16;
		struct job_cut *c = realloc(j->cuts, nc * sizeof(*c));

		if (!c)
			return -ENOMEM;
		j->cuts = c;
		j->cap_cuts = nc;
	}
	if (n)
		memcpy(j->src + j->len, p, n);
	j->len += n;
	j->cuts[j->nr_cuts++] = (struct job_cut){ j->len, off };
	return 0;
}

/* Decode the job's frame with d (a frame job decoder, its own zstd context) into its items. */
static void job_decode(struct walk *w, struct decoder *d, struct frame_job *j)
{
	size_t start = 0, i;

	d->job = j;
	d->need = d->staged = d->nr_fhdr = 0;
	d->skipping = false;
	for (i = 0; i < j->nr_cuts; i++) {
		if (decompress(w, d, j->src + start, j->cuts[i].end - start, j->cuts[i].off))
			break;
		start = j->cuts[i].end;
	}
	/* zstd and the scan read the same headers: a frame that zstd has not ended is damage */
	if (i == j->nr_cuts && d->need)
		zstd_damage(w, d, "frame ends before its last block");
	block_put(d->blk);
	block_put(d->prev);
	d->blk = d->prev = NULL;
	d->len = d->seg = 0;
	d->job = NULL;
}

/* The job's bytes through the one-stream decoder, pushed as they decode; the job is freed. */
static int job_to_stream(struct walk *w, struct frame_job **jp)
{
	struct frame_job *j = *jp;
	size_t start = 0;
	int stop = 0;

	*jp = NULL;
	for (size_t i = 0; j && i < j->nr_cuts && !stop; i++) {
		stop = decompress(w, &w->dec, j->src + start, j->cuts[i].end - start, j->cuts[i].off);
		start = j->cuts[i].end;
	}
	job_free(j);
	return stop;
}

static int job_push(struct walk *w, struct frame_job *j)
{
	struct pipe *p = w->pipe;

	pthread_mutex_lock(&p->lock);
	*p->jobs_tail = j;
	p->jobs_tail = &j->next;
	p->nr_jobs++;
	pthread_mutex_unlock(&p->lock);
	w->r->frame_jobs++; /* read once the decoding thread is joined */
	return push(w, &(struct item){ .kind = IT_FRAME, .job = j });
}

/* The oldest job nobody decodes yet, or NULL. Under the pipe's lock. */
static struct frame_job *job_queued(struct pipe *p)
{
	struct frame_job *j = p->jobs;

	while (j && j->state != JOB_QUEUED)
		j = j->next;
	return j;
}

/* Claim j (queued), decode it with d, mark it done. Called and returns under the pipe's lock. */
static void job_run(struct walk *w, struct decoder *d, struct frame_job *j)
{
	struct pipe *p = w->pipe;

	j->state = JOB_CLAIMED;
	pthread_mutex_unlock(&p->lock);
	job_decode(w, d, j);
	pthread_mutex_lock(&p->lock);
	j->state = JOB_DONE;
	if (p->c_waiting)
		pthread_cond_broadcast(&p->cond);
}

/* The decoding side, JOBS_AHEAD frames ahead: decode queued jobs until there is room to read on
 * (with all, until none is queued). STOP when the walk ends. */
static int jobs_help(struct walk *w, bool all)
{
	struct pipe *p = w->pipe;
	bool stop;

	pthread_mutex_lock(&p->lock);
	while (!p->stop && (all || p->nr_jobs >= JOBS_AHEAD)) {
		struct frame_job *j = job_queued(p);

		if (j) {
			job_run(w, &w->pdec, j);
			continue;
		}
		if (all)
			break;
		p->p_jobs = true;
		pthread_cond_wait(&p->cond, &p->lock);
		p->p_jobs = false;
	}
	stop = p->stop;
	pthread_mutex_unlock(&p->lock);
	return stop ? STOP : 0;
}

/* The delivering side at j's item: j decoded (by this thread, if nobody has started it; while
 * another decodes it, this one decodes a later queued job), its items consumed, j freed. */
static int consume_frame(struct walk *w, struct frame_job *j)
{
	struct pipe *p = w->pipe;
	int stop = 0;

	pthread_mutex_lock(&p->lock);
	while (j->state != JOB_DONE) {
		struct frame_job *o = j->state == JOB_QUEUED ? j : job_queued(p);

		if (o) {
			job_run(w, &w->cdec, o);
			continue;
		}
		p->c_waiting = true;
		pthread_cond_wait(&p->cond, &p->lock);
		p->c_waiting = false;
	}
	pthread_mutex_unlock(&p->lock);
	w->in_job = true;
	for (size_t i = 0; i < j->nr_items && !stop; i++) {
		stop = consume(w, &j->items[i]);
		block_put(j->items[i].blk);
		j->items[i].blk = NULL;
	}
	w->in_job = false;
	if (!stop && j->err)
		stop = fail(w, j->err);
	/* jobs are delivered in the order they were pushed: j is the first */
	pthread_mutex_lock(&p->lock);
	p->jobs = j->next;
	if (!p->jobs)
		p->jobs_tail = &p->jobs;
	p->nr_jobs--;
	if (p->p_jobs)
		pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	job_free(j);
	return stop;
}

/* produce() with frames decoded apart (see above): the decoding thread's walk. */
static int produce_frames(struct walk *w)
{
	struct perf_reader *r = w->r;
	uint64_t off = r->data_start, last_comp = 0;
	bool seen_comp = false, stream = false;
	struct frame_job *j = NULL;
	struct frame_scan sc;

	scan_reset(&sc);
	while (off < r->data_end) {
		struct item it = { .kind = IT_PLAIN, .off = off };
		uint32_t type = rd32(r->map + off);
		const uint8_t *pl = r->map + off + sizeof(struct perf_event_header);
		uint16_t size;
		size_t n;

		/* scan_records() checked every header below data_end. */
		memcpy(&size, r->map + off + 6, 2);
		n = size - sizeof(struct perf_event_header);
		if (type != PERF_RECORD_COMPRESSED) {
			/* a plain record inside a frame: the frame and the rest go to the stream */
			if (j) {
				stream = true;
				if (job_to_stream(w, &j))
					return STOP;
			}
			if (push(w, &it))
				return STOP;
			off += size;
			continue;
		}
		if (!seen_comp && !perf_reader__has_feature(r, FEAT_COMPRESSED))
			r->warnings |= PERF_READER_W_NO_COMP_FEATURE;
		seen_comp = true;
		last_comp = off;
		it.kind = IT_CONTAINER;
		if (push(w, &it))
			return STOP;
		while (n && !stream) {
			size_t used = 0;
			int e;

			if (!j && !(j = calloc(1, sizeof(*j))))
				return push_error(w, &w->dec, -ENOMEM);
			e = scan_feed(&sc, pl, n, &used);
			if (e < 0) {
				used = 0; /* the stream decoder finds the damage itself */
			} else if (job_add(j, pl, used, off) < 0) {
				job_free(j);
				return push_error(w, &w->dec, -ENOMEM);
			}
			pl += used;
			n -= used;
			if (e < 0 || j->len > JOB_MAX_SRC) {
				stream = true;
				if (job_to_stream(w, &j))
					return STOP;
			} else if (e == 1) {
				if (job_push(w, j))
					return STOP;
				j = NULL;
				if (jobs_help(w, false))
					return STOP;
			}
		}
		if (n && decompress(w, &w->dec, pl, n, off))
			return STOP;
		off += size;
	}
	/* the file ends inside a frame */
	if (j && job_to_stream(w, &j))
		return STOP;
	if (push(w, &(struct item){ .kind = IT_END, .off = last_comp }))
		return STOP;
	return jobs_help(w, true);
}

static void *decode_thread(void *arg)
{
	produce_frames(arg);
	return NULL;
}

static void decoder_fini(struct decoder *d)
{
	block_put(d->blk);
	block_put(d->prev);
	free(d->stage);
	memset(d, 0, sizeof(*d));
}

/* The delivering side of a threaded walk: items in order until one stops the walk; then the
 * decoder is told to end, joined, and what it queued beyond is dropped. */
static void consume_pipe(struct walk *w)
{
	struct pipe *p = w->pipe;
	bool stop = false;

	while (!stop) {
		struct item it;

		pthread_mutex_lock(&p->lock);
		while (p->head == p->tail) {
			p->c_waiting = true;
			pthread_cond_wait(&p->cond, &p->lock);
			p->c_waiting = false;
		}
		it = p->ring[p->head++ % PIPE_ITEMS];
		if (p->p_waiting && !p->p_far && p->tail - p->head < PIPE_RESUME_ITEMS)
			pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		stop = consume(w, &it) == STOP;
		block_put(it.blk);
	}
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	while (p->head != p->tail)
		block_put(p->ring[p->head++ % PIPE_ITEMS].blk);
	while (p->jobs) {
		struct frame_job *j = p->jobs;

		p->jobs = j->next;
		job_free(j);
	}
}

/* A decoding thread for files with COMPRESSED records when the reader was asked for one; else
 * (or when the thread cannot start) the calling thread decodes as it delivers. */
static void walk_records(struct walk *w)
{
	struct perf_reader *r = w->r;
	struct pipe p = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	sigset_t all, old;

	r->frame_jobs = 0;
	p.jobs_tail = &p.jobs;
	w->dec.dsp = &r->ds;
	w->pdec.dsp = &r->job_ds[0];
	w->cdec.dsp = &r->job_ds[1];

	if (r->decode_thread && perf_reader__has_feature(r, FEAT_COMPRESSED) &&
	    (p.ring = malloc(PIPE_ITEMS * sizeof(*p.ring)))) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		w->pipe = &p;
		if (pthread_create(&p.thread, NULL, decode_thread, w))
			w->pipe = NULL;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (w->pipe)
		consume_pipe(w);
	else
		produce(w);
	w->pipe = NULL;
	free(p.ring);
	decoder_fini(&w->dec);
	decoder_fini(&w->pdec);
	decoder_fini(&w->cdec);
}

static void walk_fini(struct walk *w)
{
	while (w->nr_heap--)
		block_put(w->heap[w->nr_heap].rec.ref);
	free(w->heap);
	block_put(w->blk);
	free(w->carry);
}

static int sink_direct(struct walk *w, const struct perf_reader_record *rec)
{
	int err = w->fn(rec, w->ctx);

	return err ? fail(w, err) : 0;
}

int perf_reader__for_each(struct perf_reader *r, perf_reader_fn fn, void *ctx)
{
	struct walk w = { .r = r, .sink = sink_direct, .fn = fn, .ctx = ctx,
			  .stats = &r->walk_stats };

	memset(&r->walk_stats, 0, sizeof(r->walk_stats));
	walk_records(&w);
	walk_fini(&w);
	return w.result;
}

/* ---- time order ---- */

static bool qless(const struct qent *a, const struct qent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_up(struct walk *w, size_t i)
{
	while (i) {
		size_t p = (i - 1) / 2;
		struct qent t;

		if (!qless(&w->heap[i], &w->heap[p]))
			break;
		t = w->heap[i];
		w->heap[i] = w->heap[p];
		w->heap[p] = t;
		i = p;
	}
}

static void heap_down(struct walk *w, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct qent t;

		if (l < w->nr_heap && qless(&w->heap[l], &w->heap[m]))
			m = l;
		if (l + 1 < w->nr_heap && qless(&w->heap[l + 1], &w->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		t = w->heap[i];
		w->heap[i] = w->heap[m];
		w->heap[m] = t;
		i = m;
	}
}

/* Deliver queued records with time <= limit, oldest first. */
static int flush_until(struct walk *w, uint64_t limit)
{
	while (w->nr_heap && w->heap[0].time <= limit) {
		struct qent e = w->heap[0];
		int err;

		w->heap[0] = w->heap[--w->nr_heap];
		heap_down(w, 0);
		w->last_flush = e.time;
		w->queued_bytes -= sizeof(e) + e.rec.hdr->size;
		err = w->fn(&e.rec, w->ctx);
		block_put(e.rec.ref);
		if (err)
			return fail(w, err);
	}
	return 0;
}

static int sink_ordered(struct walk *w, const struct perf_reader_record *rec)
{
	struct qent *e;
	int err;

	if (rec->hdr->type == PERF_RECORD_FINISHED_ROUND) {
		/* perf: deliver up to the largest time seen at the previous round, then remember
		 * the largest time seen now for the next one. */
		if (flush_until(w, w->next_flush))
			return STOP;
		w->next_flush = w->max_time;
		err = w->fn(rec, w->ctx);
		return err ? fail(w, err) : 0;
	}
	if (rec->time == PERF_READER_NO_TIME) {
		err = w->fn(rec, w->ctx);
		return err ? fail(w, err) : 0;
	}
	if (w->nr_heap == w->cap_heap) {
		size_t cap = w->cap_heap ? 2 * w->cap_heap : 1024;
		struct qent *n = realloc(w->heap, cap * sizeof(*n));

		if (!n)
			return fail(w, -ENOMEM);
		w->heap = n;
		w->cap_heap = cap;
	}
	if (rec->time < w->last_flush)
		w->r->nr_unordered++;
	if (rec->time > w->max_time)
		w->max_time = rec->time;
	e = &w->heap[w->nr_heap];
	e->time = rec->time;
	e->seq = w->seq++;
	e->rec = *rec;
	/* A decompressed record stays in its block (a reference), a plain one in the mapping.
	 * Queued bytes count the blocks' share too, so the cap bounds the blocks kept alive. */
	perf_reader__hold(rec);
	heap_up(w, w->nr_heap++);
	w->queued_bytes += sizeof(*e) + rec->hdr->size;
	if (w->queued_bytes > w->r->ordered_max_bytes) {
		while (w->nr_heap && w->queued_bytes > w->r->ordered_max_bytes / 2)
			if (flush_until(w, w->heap[0].time))
				return STOP;
	}
	return 0;
}

int perf_reader__for_each_ordered(struct perf_reader *r, perf_reader_fn fn, void *ctx)
{
	struct walk w = { .r = r, .sink = sink_ordered, .fn = fn, .ctx = ctx,
			  .stats = &r->walk_stats };
	int err;

	memset(&r->walk_stats, 0, sizeof(r->walk_stats));
	r->nr_unordered = 0;
	walk_records(&w);
	/* Damage is not an error: what was read before it is still delivered. */
	if (!w.result)
		flush_until(&w, UINT64_MAX);
	err = w.result;
	walk_fini(&w);
	return err;
}

/* ---- stats ---- */

static int sink_count(struct walk *w, const struct perf_reader_record *rec)
{
	return 0;
}

int perf_reader__stats(struct perf_reader *r, struct perf_reader_stats *ret)
{
	struct perf_reader_stats s = { 0 };
	struct walk w = { .r = r, .sink = sink_count, .stats = &s };

	walk_records(&w);
	walk_fini(&w);
	if (w.result < 0)
		return w.result;
	*ret = s;
	return 0;
}

const char *perf_reader__type_name(uint32_t type)
{
	static const char *const names[PERF_RECORD_HEADER_MAX] = {
		[PERF_RECORD_MMAP] = "MMAP",
		[PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM",
		[PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE",
		[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK",
		[PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE",
		[PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX",
		[PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
		[PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES",
		[PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
		[PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
		[PERF_RECORD_HEADER_ATTR] = "ATTR",
		[PERF_RECORD_HEADER_EVENT_TYPE] = "EVENT_TYPE",
		[PERF_RECORD_HEADER_TRACING_DATA] = "TRACING_DATA",
		[PERF_RECORD_HEADER_BUILD_ID] = "BUILD_ID",
		[PERF_RECORD_FINISHED_ROUND] = "FINISHED_ROUND",
		[PERF_RECORD_ID_INDEX] = "ID_INDEX",
		[PERF_RECORD_AUXTRACE_INFO] = "AUXTRACE_INFO",
		[PERF_RECORD_AUXTRACE] = "AUXTRACE",
		[PERF_RECORD_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
		[PERF_RECORD_THREAD_MAP] = "THREAD_MAP",
		[PERF_RECORD_CPU_MAP] = "CPU_MAP",
		[PERF_RECORD_STAT_CONFIG] = "STAT_CONFIG",
		[PERF_RECORD_STAT] = "STAT",
		[PERF_RECORD_STAT_ROUND] = "STAT_ROUND",
		[PERF_RECORD_EVENT_UPDATE] = "EVENT_UPDATE",
		[PERF_RECORD_TIME_CONV] = "TIME_CONV",
		[PERF_RECORD_HEADER_FEATURE] = "FEATURE",
		[PERF_RECORD_COMPRESSED] = "COMPRESSED",
		[PERF_RECORD_FINISHED_INIT] = "FINISHED_INIT",
	};

	return type < PERF_RECORD_HEADER_MAX ? names[type] : NULL;
}

/* ---- repair ---- */

/* The repair keeps only what it could decode and validate, and writes it through the one
 * perf.data writer: attrs whose samples decode (and, with several, that perf can tell apart),
 * records of the types perf 6.1 reads whose bodies and sample_id trailers are whole, in time
 * order, and the features preport parsed, written anew (nothing is copied unchecked). */

struct rp_ent {
	uint64_t time, seq, off; /* off: into rp.buf */
	int attr;                /* -1: no attr (FINISHED_ROUND is never kept) */
};

struct repair {
	const struct perf_reader *r;
	bool *keep;              /* per attr: passes the attr checks */
	uint64_t *good, *bad;    /* per attr: samples that decode / do not */
	uint8_t *buf;
	size_t len, cap;
	struct rp_ent *ents;
	size_t nr, cap_ents;
	uint64_t last_time;
};

/* Body bytes (after the header, before the trailer) a record of `type` needs at least, and
 * whether it ends in a NUL-terminated name; -1 for types the repair drops. */
static int body_min(uint32_t type, bool *ret_name)
{
	*ret_name = false;
	switch (type) {
	case PERF_RECORD_MMAP:
		*ret_name = true;
		return 32;
	case PERF_RECORD_MMAP2:
		*ret_name = true;
		return 64;
	case PERF_RECORD_COMM:
		*ret_name = true;
		return 8;
	case PERF_RECORD_KSYMBOL:
		*ret_name = true;
		return 16;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return 24;
	case PERF_RECORD_LOST:
		return 16;
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return 8;
	case PERF_RECORD_SWITCH:
		return 0;
	default:
		return -1; /* perf's own records, and kernel ones too rare here to check */
	}
}

static size_t trailer_size(const struct perf_event_attr *a)
{
	uint64_t t = a->sample_type;

	if (!a->sample_id_all)
		return 0;
	return 8 * (!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
		    !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
		    !!(t & PERF_SAMPLE_IDENTIFIER));
}

/* The attr record rec belongs to, or -1 when it cannot be told (an unknown id among several). A
 * non-sample record without a trailer belongs to the first attr kept. */
static int rec_attr(const struct repair *rp, const struct perf_reader_record *rec)
{
	if (rec->attr_index >= 0 && (size_t)rec->attr_index < rp->r->nr_attrs)
		return rec->attr_index;
	if (rp->r->nr_attrs == 1)
		return 0;
	if (rec->hdr->type == PERF_RECORD_SAMPLE)
		return -1;
	for (size_t i = 0; i < rp->r->nr_attrs; i++)
		if (rp->keep[i])
			return rp->r->attrs[i].attr.sample_id_all ? -1 : (int)i;
	return -1;
}

/* Whether a non-sample record is whole: its type is one perf reads, its body is long enough,
 * its name ends inside it and its sample_id trailer decodes. */
static bool record_ok(const struct repair *rp, const struct perf_reader_record *rec, int a)
{
	const struct perf_event_header *h = rec->hdr;
	const struct perf_event_attr *at;
	struct perf_sample ps;
	bool name;
	int min = body_min(h->type, &name);
	size_t tail, body;

	if (min < 0 || a < 0 || !rp->keep[a])
		return false;
	/* Only what the kernel sets: perf takes bit 12 on a map for a /proc walk that timed out. */
	if (h->misc & PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT)
		return false;
	if (h->type == PERF_RECORD_MMAP2 && (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
	    h->size >= sizeof(*h) + 41 && ((const uint8_t *)(h + 1))[40] > FEAT_BUILD_ID_MAX)
		return false; /* build_id_size after pid, tid, start, len, pgoff */
	at = &rp->r->attrs[a].attr;
	tail = trailer_size(at);
	if (h->size % 8 || h->size < sizeof(*h) + tail)
		return false;
	body = h->size - sizeof(*h) - tail;
	if (body < (size_t)min + (name ? 1 : 0))
		return false;
	if (name && !memchr((const uint8_t *)(h + 1) + min, 0, body - (size_t)min))
		return false;
	return !tail || perf_sample__parse_id(at, h, &ps) == 0;
}

static int sink_collect(struct walk *w, const struct perf_reader_record *rec)
{
	struct repair *rp = w->ctx;
	const struct perf_event_header *h = rec->hdr;
	int a = rec_attr(rp, rec);
	uint64_t time = rec->time;

	if (h->type == PERF_RECORD_SAMPLE) {
		struct perf_sample ps;

		if (a < 0 || !rp->keep[a])
			return 0;
		if (perf_sample__parse(&rp->r->attrs[a].attr, h, &ps) < 0) {
			rp->bad[a]++;
			return 0;
		}
		rp->good[a]++;
		if (rp->r->attrs[a].attr.sample_type & PERF_SAMPLE_TIME)
			time = ps.time;
	} else if (!record_ok(rp, rec, a)) {
		return 0;
	}
	/* A record without a time stays where it was among its neighbours. */
	if (time == PERF_READER_NO_TIME)
		time = rp->last_time;
	rp->last_time = time;
	if (rp->len + h->size > rp->cap) {
		size_t cap = rp->cap ? rp->cap * 2 : 1 << 20;
		uint8_t *n;

		while (cap < rp->len + h->size)
			cap *= 2;
		n = realloc(rp->buf, cap);
		if (!n)
			return fail(w, -ENOMEM);
		rp->buf = n;
		rp->cap = cap;
	}
	if (rp->nr == rp->cap_ents) {
		size_t cap = rp->cap_ents ? rp->cap_ents * 2 : 4096;
		struct rp_ent *n = realloc(rp->ents, cap * sizeof(*n));

		if (!n)
			return fail(w, -ENOMEM);
		rp->ents = n;
		rp->cap_ents = cap;
	}
	rp->ents[rp->nr] = (struct rp_ent){ time, rp->nr, rp->len, a };
	rp->nr++;
	memcpy(rp->buf + rp->len, h, h->size);
	rp->len += h->size;
	return 0;
}

static int ent_cmp(const void *x, const void *y)
{
	const struct rp_ent *a = x, *b = y;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Attrs the repair keeps: sample_type and read_format of fields a kernel defines, reserved bits
 * clear (perf warns otherwise); with several, only those
 * perf can tell apart by id and that agree with the first good one on the layout of ids and
 * trailers (perf's "non matching sample_type" otherwise). */
static void choose_attrs(const struct perf_reader *r, bool *keep)
{
	const struct perf_event_attr *ref = NULL;

	for (size_t i = 0; i < r->nr_attrs; i++) {
		const struct perf_event_attr *a = &r->attrs[i].attr;

		keep[i] = !(a->sample_type & ~(uint64_t)(PERF_SAMPLE_MAX - 1)) &&
			  !(a->read_format & ~(uint64_t)(PERF_FORMAT_MAX - 1)) &&
			  !a->__reserved_1 && !a->__reserved_2 && !a->__reserved_3;
		if (!keep[i])
			continue;
		if (!ref) {
			ref = a;
			continue;
		}
		keep[i] = (a->sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) &&
			  a->sample_type == ref->sample_type &&
			  a->sample_id_all == ref->sample_id_all &&
			  a->read_format == ref->read_format;
	}
	/* several kept: the first needs ids too */
	if (ref) {
		size_t n = 0;

		for (size_t i = 0; i < r->nr_attrs; i++)
			n += keep[i];
		if (n > 1 && !(ref->sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)))
			for (size_t i = 0; i < r->nr_attrs; i++)
				keep[i] = &r->attrs[i].attr == ref;
	}
}

/* The features preport parsed, encoded anew. */
static int repair_features(const struct perf_reader *r, struct perf_writer *w)
{
	const struct perf_reader_info *in = &r->info;
	const struct { int bit; const char *s; } strs[] = {
		{ FEAT_HOSTNAME, in->hostname }, { FEAT_OSRELEASE, in->osrelease },
		{ FEAT_VERSION, in->version ? in->version : "preport repair" },
		{ FEAT_ARCH, in->arch }, { FEAT_CPUDESC, in->cpudesc },
	};
	struct fbuf b = { 0 };
	int err = 0;

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]) && !err; i++) {
		if (!strs[i].s || (strs[i].bit != FEAT_VERSION && !perf_reader__has_feature(r, strs[i].bit)))
			continue;
		b.len = 0;
		fbuf__put_string(&b, strs[i].s);
		err = b.oom ? -ENOMEM : perf_writer__set_feature(w, strs[i].bit, b.data, b.len);
	}
	if (!err && perf_reader__has_feature(r, FEAT_NRCPUS)) {
		b.len = 0;
		fbuf__put_u32(&b, in->nr_cpus_avail);
		fbuf__put_u32(&b, in->nr_cpus_online);
		err = b.oom ? -ENOMEM : perf_writer__set_feature(w, FEAT_NRCPUS, b.data, b.len);
	}
	if (!err && perf_reader__has_feature(r, FEAT_CMDLINE) && in->cmdline_argc > 0) {
		b.len = 0;
		fbuf__put_u32(&b, (uint32_t)in->cmdline_argc);
		for (int i = 0; i < in->cmdline_argc; i++)
			fbuf__put_string(&b, in->cmdline_argv[i] ? in->cmdline_argv[i] : "");
		err = b.oom ? -ENOMEM : perf_writer__set_feature(w, FEAT_CMDLINE, b.data, b.len);
	}
	for (size_t i = 0; !err && i < in->nr_build_ids; i++) {
		const struct perf_reader_build_id *bi = &in->build_ids[i];
		bool kernel = (bi->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;

		if (bi->path && bi->path[0] && bi->id_len && bi->id_len <= FEAT_BUILD_ID_MAX)
			err = perf_writer__add_build_id(w, bi->path, kernel, bi->id, bi->id_len);
	}
	fbuf__free(&b);
	if (!err) {
		struct pause_stats ps;

		if (pause_stats__read(r, &ps) == 1)
			err = pause_stats__write(w, &ps);
	}
	return err;
}

int perf_reader__repair(struct perf_reader *r, const char *out_path)
{
	struct repair rp = { .r = r };
	struct walk wk = { .r = r, .sink = sink_collect, .ctx = &rp };
	_cleanup_free_ struct perf_writer_event *evs = NULL;
	struct perf_writer_opts wo = { .copy_only = true };
	struct perf_writer *w = NULL;
	size_t nev = 0;
	int err;

	if (!r->map) {
		seterr(r, "cannot repair into %s: no file is open", out_path);
		return -EINVAL;
	}
	rp.keep = calloc(r->nr_attrs + 1, sizeof(*rp.keep));
	rp.good = calloc(r->nr_attrs + 1, sizeof(*rp.good));
	rp.bad = calloc(r->nr_attrs + 1, sizeof(*rp.bad));
	evs = calloc(r->nr_attrs + 1, sizeof(*evs));
	if (!rp.keep || !rp.good || !rp.bad || !evs) {
		err = -ENOMEM;
		goto out;
	}
	choose_attrs(r, rp.keep);
	walk_records(&wk);
	walk_fini(&wk);
	err = wk.result;
	if (err < 0)
		goto out;
	/* An attr whose samples mostly do not decode is damaged itself: none of its records. */
	for (size_t i = 0; i < r->nr_attrs; i++)
		if (rp.keep[i] && rp.bad[i] > rp.good[i])
			rp.keep[i] = false;
	for (size_t i = 0; i < r->nr_attrs; i++) {
		if (!rp.keep[i])
			continue;
		evs[nev] = (struct perf_writer_event){ .name = r->attrs[i].name,
						       .attr = &r->attrs[i].attr,
						       .ids = r->attrs[i].ids,
						       .nr_ids = r->attrs[i].nr_ids };
		nev++;
	}
	/* perf refuses a file without samples ("has no samples!"): there is nothing to repair
	 * into. */
	size_t kept = 0;
	for (size_t i = 0; i < r->nr_attrs; i++)
		if (rp.keep[i])
			kept += rp.good[i];
	if (!nev || !kept) {
		err = -ENODATA;
		goto out;
	}
	qsort(rp.ents, rp.nr, sizeof(*rp.ents), ent_cmp);
	wo.events = evs;
	wo.nr_events = nev;
	w = perf_writer__open(out_path, &wo);
	if (!w) {
		err = -errno;
		goto out;
	}
	err = repair_features(r, w);
	for (size_t i = 0; i < rp.nr && !err;) {
		struct iovec iov[64];
		int n = 0;

		for (; i < rp.nr && n < 64; i++) {
			const struct rp_ent *e = &rp.ents[i];
			struct perf_event_header *h = (void *)(rp.buf + e->off);

			if (e->attr < 0 || !rp.keep[e->attr])
				continue;
			if (h->type == PERF_RECORD_SAMPLE &&
			    (r->attrs[e->attr].attr.sample_type & PERF_SAMPLE_TIME))
				perf_writer__note_time(w, e->time, e->time);
			iov[n++] = (struct iovec){ h, h->size };
		}
		err = perf_writer__append(w, iov, n);
	}
	if (!err)
		err = perf_writer__finalize(w);
	perf_writer__free(w);
	if (err)
		unlink(out_path);
out:
	if (err == -ENODATA)
		seterr(r, "cannot repair %s: not one complete record (a sample that decodes) precedes the damage; %s not written",
		       r->path, out_path);
	else if (err)
		seterr(r, "cannot repair %s into %s: %s", r->path, out_path, strerror(-err));
	free(rp.keep);
	free(rp.good);
	free(rp.bad);
	free(rp.buf);
	free(rp.ents);
	return err;
}
