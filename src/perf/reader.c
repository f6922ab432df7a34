/* Reader of perf.data files. The file is mmapped read-only; every offset and size taken from it
 * is checked against the mapping before use, and nothing is allocated in proportion to a size
 * field that was not first checked against the file size, so a hostile file costs at most a
 * small multiple of its own size. Open walks the record headers once to find where the complete
 * records end (that is also how a killed recorder's file is recovered); iteration (walk.c) then
 * streams them, decompressing COMPRESSED records through one zstd stream kept across records, as
 * perf does, so a record split between two compressed records and frames that end and restart
 * (precord's per-chunk frames) both read back. This file: open, header, attrs, ids, features,
 * repair. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "perf/reader.h"
#include "perf/reader_int.h"
#include "perf/feat_decode.h"
#include "perf/features.h"
#include "perf/pause_stats.h"
#include "perf/pipe_file.h"
#include "perf/sample.h"
#include "perf/writer.h"

#define PIPE_HEADER_SIZE 16
#define OLD_HEADER_SIZE 72
/* attr_size bounds: the first published attr (64) plus the ids section, up to far more than any
 * kernel's attr; beyond that the header is garbage. */
#define MIN_ATTR_SIZE (PERF_ATTR_SIZE_VER0 + 16)


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


void reader__stats_init(const struct perf_reader *r, struct perf_reader_stats *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sizeof(r->pipe_header) / sizeof(r->pipe_header[0]); i++) {
		s->nr_by_type[PERF_RECORD_USER_TYPE_START + i] = r->pipe_header[i];
		s->total += r->pipe_header[i];
	}
}

void reader__data_damage(struct perf_reader *r, uint64_t off, const char *reason)
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

/* ---- record classification: the attr of a whole record ---- */

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


/* ---- features ---- */

/* perf's string (feat_cur__string), kept as the reader's copy. */
static int fc_string(struct perf_reader *r, struct feat_cur *c, const char **ret)
{
	const char *p;
	char *s;

	if (feat_cur__string(c, &p) < 0)
		return -EBADMSG;
	s = keep(r, strdup(p));
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

static int parse_cmdline(struct perf_reader *r, struct feat_cur *c)
{
	const char **argv;
	uint32_t n, i;

	/* Each string costs at least its 4-byte length: bounds n by the section. */
	if (feat_cur__u32(c, &n) < 0 || n > c->left / 4)
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

static int parse_event_desc(struct perf_reader *r, struct feat_cur *c)
{
	struct feat_event_desc d;
	uint32_t nr, sz;

	if (feat_event_desc__begin(c, c->p, c->left, &nr, &sz) < 0)
		return -EBADMSG;
	r->event_desc_attr_size = sz;
	for (uint32_t i = 0; i < nr; i++) {
		int idx = -1;
		char *name;

		if (feat_event_desc__next(c, sz, &d) < 0)
			return -EBADMSG;
		/* perf names the attr that owns the event's first id; without ids, by position. */
		if (d.nr_ids)
			idx = perf_reader__attr_of_id(r, feat_event_desc__id(&d, 0));
		else if (i < r->nr_attrs)
			idx = (int)i;
		if (idx < 0 || r->attrs[idx].name)
			continue;
		name = keep(r, strdup(d.name));
		if (!name)
			return -ENOMEM;
		r->attrs[idx].name = name;
	}
	return 0;
}

/* Layout of one entry: struct perf_event_header; s32 pid; u8 id[20]; u8 id_len; u8 pad[3]; name
 * NUL-padded. Entries are counted first so that the array is allocated once. */
#define BUILD_ID_NAME_OFF 36
/* perf's PERF_RECORD_MISC_BUILD_ID_SIZE: the entry carries its id length. */
#define MISC_BUILD_ID_SIZE (1 << 15)

static int build_id_entry(const struct feat_cur *c, struct perf_event_header *h)
{
	if (c->left < sizeof(*h))
		return -EBADMSG;
	memcpy(h, c->p, sizeof(*h));
	if (h->size < BUILD_ID_NAME_OFF || h->size > c->left)
		return -EBADMSG;
	return 0;
}

static int parse_build_ids(struct perf_reader *r, struct feat_cur *c)
{
	struct perf_reader_build_id *v;
	struct perf_event_header h;
	struct feat_cur k = *c;
	size_t n = 0, i;

	while (k.left) {
		if (build_id_entry(&k, &h) < 0)
			return -EBADMSG;
		feat_cur__skip(&k, h.size);
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
		feat_cur__skip(c, h.size);
	}
	r->info.build_ids = v;
	r->info.nr_build_ids = n;
	return 0;
}

static int parse_feature(struct perf_reader *r, int bit, struct feat_cur *c)
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
	case FEAT_CPUID:
		return fc_string(r, c, &in->cpuid);
	case FEAT_TOTAL_MEM:
		return feat_cur__u64(c, &in->total_mem_kb);
	case FEAT_CLOCKID:
		return feat_cur__u64(c, &in->clockid_res_ns);
	case FEAT_NRCPUS:
		if (feat_cur__u32(c, &in->nr_cpus_avail) < 0 || feat_cur__u32(c, &in->nr_cpus_online) < 0)
			return -EBADMSG;
		return 0;
	case FEAT_CMDLINE:
		return parse_cmdline(r, c);
	case FEAT_EVENT_DESC:
		return parse_event_desc(r, c);
	case FEAT_SAMPLE_TIME:
		if (feat_cur__u64(c, &in->first_sample_time) < 0 || feat_cur__u64(c, &in->last_sample_time) < 0)
			return -EBADMSG;
		return 0;
	case FEAT_COMPRESSED:
		if (feat_cur__u32(c, &in->comp_version) < 0 || feat_cur__u32(c, &in->comp_type) < 0 ||
		    feat_cur__u32(c, &in->comp_level) < 0 || feat_cur__u32(c, &in->comp_ratio) < 0 ||
		    feat_cur__u32(c, &in->comp_mmap_len) < 0)
			return -EBADMSG;
		return 0;
	case FEAT_BUILD_ID:
		return parse_build_ids(r, c);
	case FEAT_CLOCK_DATA: {
		uint32_t version;

		if (feat_cur__u32(c, &version) < 0 || feat_cur__u32(c, &in->clock.clockid) < 0 ||
		    feat_cur__u64(c, &in->clock.wall_ns) < 0 || feat_cur__u64(c, &in->clock.clock_ns) < 0)
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

/* precord's trailer (see PERF_TRAILER_MAGIC), when the file ends with one that lies wholly after
 * the feature index and sections: its sections by tag. Anything else at the end is not ours and
 * is left alone (perf ignores what follows its features too). */
static void read_trailer(struct perf_reader *r)
{
	/* after the index (read_features checked that data.size lies within the file)... */
	uint64_t after = r->data_start + r->hdr.data.size, size, start, off;

	for (int i = 0; i < 4; i++)
		after += 16 * (uint64_t)__builtin_popcountll(r->hdr.features[i]);
	/* ...and after every section */
	for (int bit = 0; bit < FEAT_BITS; bit++)
		if (perf_reader__has_feature(r, bit) &&
		    r->feat[bit].offset + r->feat[bit].size > after)
			after = r->feat[bit].offset + r->feat[bit].size;
	if (r->len < 16 || after > r->len - 16 || rd64(r->map + r->len - 8) != PERF_TRAILER_MAGIC)
		return;
	size = rd64(r->map + r->len - 16);
	if (size > r->len - 16 - after)
		return;
	start = r->len - 16 - size;
	for (off = start; off + 8 <= start + size && r->nr_priv < 8;) {
		uint32_t tag = rd32(r->map + off), len = rd32(r->map + off + 4);
		bool dup = false;

		if (len > start + size - off - 8)
			return; /* cut: what was found before stays */
		for (size_t i = 0; i < r->nr_priv; i++)
			dup |= r->priv[i].tag == tag;
		if (!dup)
			r->priv[r->nr_priv++] = (struct priv_section){ tag, off + 8, len };
		off += 8 + ((uint64_t)len + 7) / 8 * 8;
	}
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
		struct feat_cur c;
		int err;

		if (!perf_file_header__has_feat(&r->hdr, bit))
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
	read_trailer(r);
	return 0;
}

/* ---- open ---- */

static int read_attrs(struct perf_reader *r, const char **reason)
{
	const struct perf_file_header *h = &r->hdr;
	uint64_t nr, i, total_ids = 0, k = 0;
	size_t body = h->attr_size - 16;

	if (h->attr_size < MIN_ATTR_SIZE || h->attr_size > PERF_ATTR_SIZE_MAX) {
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
	r->places = calloc(nr, sizeof(*r->places));
	if (!r->attrs || !r->places)
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
		r->places[i].time = perf_sample__place(&r->attrs[i].attr, PERF_SAMPLE_TIME);
		r->places[i].cpu = perf_sample__place(&r->attrs[i].attr, PERF_SAMPLE_CPU);
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

uint64_t reader__release_pages(const struct perf_reader *r, uint64_t lo, uint64_t hi)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), base = (uintptr_t)r->map;
	uint64_t a = (base + lo + pg - 1) & ~(pg - 1), b = (base + hi) & ~(pg - 1);

	if (b <= a)
		return lo;
	madvise((void *)(uintptr_t)a, b - a, MADV_DONTNEED);
	return b - base;
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
	/* The scan read a header every few KiB, and the kernel's fault-around mapped the pages
	 * between as well: the whole data section was resident before the walk began. The walk
	 * reads it again in order and gives back what it has decoded (walk.c, map_consumed): give
	 * these back now, or they stay resident beside everything the walk holds. */
	reader__release_pages(r, r->data_start, r->data_end);
	if (recover) {
		r->warnings |= PERF_READER_W_RECOVERED;
		if (any_feature(r))
			r->warnings |= PERF_READER_W_NO_FEATURES;
		if (bad)
			reader__data_damage(r, r->data_end, bad);
		return 0;
	}
	if (bad)
		reader__data_damage(r, r->data_end, bad);
	else if (r->data_end < claimed_end)
		reader__data_damage(r, r->data_end, "file truncated inside the data section");
	return read_features(r);
}

struct perf_reader *perf_reader__new(const struct perf_reader_opts *opts)
{
	struct perf_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	pthread_mutex_init(&r->block_lock, NULL);
	pthread_mutex_init(&r->help_lock, NULL);
	pthread_cond_init(&r->help_cond, NULL);
	r->ordered_max_bytes = opts && opts->ordered_max_bytes ? opts->ordered_max_bytes :
								  ORDERED_MAX_BYTES;
	return r;
}

const char *perf_reader__error(const struct perf_reader *r)
{
	return r->err;
}

/* A pipe is read once: what it held stays in its temporary file, for the other readers of the
 * process that open it (preport's passes, --unwind-to's two), keyed by the pipe's inode. */
static struct pipe_cache {
	pthread_mutex_t lock;
	dev_t dev;
	ino_t ino;
	struct pipe_file_result pf;   /* pf.fd -1: none */
} pipe_cache = { PTHREAD_MUTEX_INITIALIZER, 0, 0, { .fd = -1 } };

static int load_pipe(int fd, const struct stat *st, struct pipe_file_result *ret,
		     const char **reason)
{
	struct pipe_cache *c = &pipe_cache;
	int err = 0;

	pthread_mutex_lock(&c->lock);
	if (c->pf.fd < 0 || c->dev != st->st_dev || c->ino != st->st_ino) {
		struct pipe_file_result pf;

		err = pipe_file__load(fd, &pf, reason);
		if (!err) {
			if (c->pf.fd >= 0)
				close(c->pf.fd);
			c->pf = pf;
			c->dev = st->st_dev;
			c->ino = st->st_ino;
		}
	}
	if (!err) {
		*ret = c->pf;
		ret->fd = fcntl(c->pf.fd, F_DUPFD_CLOEXEC, 3);
		if (ret->fd < 0)
			err = -errno;
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

/* Open path read-only: a regular file, or a pipe (standard input, a FIFO), which is read to its
 * end into a temporary file (pipe_file). Refuses anything else. Returns the fd or -errno, *reason
 * set when strerror would not say enough. */
static int open_input(struct perf_reader *r, const char *path, struct stat *st,
		      const char **reason)
{
	_cleanup_close_ int fd = -1;
	struct pipe_file_result pf;
	int err;

	if (!strcmp(path, "-")) {
		/* standard input: a file redirected there, or a pipe */
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	} else if (stat(path, st) == 0 && S_ISFIFO(st->st_mode)) {
		/* a FIFO: opened as perf opens it, waiting for a writer (a probe opened without
		 * waiting would let a writer finish and leave, and a second open wait forever) */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	} else {
		/* O_NONBLOCK: no wait in open for what is not a FIFO (a device, say) */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	}
	if (fd < 0 || fstat(fd, st) < 0)
		return -errno;
	r->mtime = st->st_mtime;
	if (S_ISDIR(st->st_mode)) {
		*reason = "is a directory (perf's directory format is not supported)";
		return -EISDIR;
	}
	if (S_ISREG(st->st_mode)) {
		uint8_t h[PIPE_HEADER_SIZE];

		/* a pipe-mode stream saved to a file (perf record -o - > FILE) */
		if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || rd64(h) != PERF_MAGIC2 ||
		    rd64(h + 8) != PIPE_HEADER_SIZE)
			return TAKE_FD(fd);
		/* from its start, as the pread: standard input shares its offset with every
		 * earlier reader of it in this process (preport's look at the inputs' times) */
		if (lseek(fd, 0, SEEK_SET) < 0)
			return -errno;
		err = pipe_file__load(fd, &pf, reason);
	} else if (S_ISFIFO(st->st_mode)) {
		int fl = fcntl(fd, F_GETFL);

		/* reads wait for the writer (a standard input left non-blocking included) */
		if (fl >= 0 && (fl & O_NONBLOCK))
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		err = load_pipe(fd, st, &pf, reason);
	} else {
		*reason = "not a regular file or a pipe: only perf.data can be read";
		return -EPROTONOSUPPORT;
	}
	if (err < 0)
		return err;
	if (pf.converted)
		r->warnings |= PERF_READER_W_PIPE;
	memcpy(r->pipe_header, pf.nr_header, sizeof(r->pipe_header));
	r->pipe_damage = pf.damage;
	r->info.pipe_zero_sample_time = pf.zero_sample_time;
	r->pipe_damage_off = pf.damage_off;
	closep(&fd);
	fd = pf.fd;
	if (fstat(fd, st) < 0)
		return -errno;
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

	fd = open_input(r, path, &st, reason);
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
	err = locate_data(r);
	if (!err && r->pipe_damage)
		reader__data_damage(r, r->pipe_damage_off, r->pipe_damage);
	return err;
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

uint64_t perf_reader__size(const struct perf_reader *r)
{
	return r->len;
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

const void *perf_reader__private(const struct perf_reader *r, uint32_t tag, size_t *ret_len)
{
	for (size_t i = 0; i < r->nr_priv; i++)
		if (r->priv[i].tag == tag) {
			*ret_len = r->priv[i].size;
			return r->map + r->priv[i].offset;
		}
	/* earlier precord files carry their pause statistics as feature bit 250 */
	if (tag > FEAT_LAST && tag < FEAT_BITS)
		return perf_reader__feature(r, (int)tag, ret_len);
	return NULL;
}

unsigned int perf_reader__warnings(const struct perf_reader *r)
{
	return r->warnings;
}

int64_t perf_reader__mtime(const struct perf_reader *r)
{
	return r->mtime;
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

const struct perf_reader_damage *perf_reader__feat_damage(const struct perf_reader *r)
{
	return r->has_feat_damage ? &r->feat_damage : NULL;
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
	free(r->places);
	free(r->ids);
	free(r->id_index);
	ZSTD_freeDCtx(r->ds);
	ZSTD_freeDCtx(r->job_ds[0]);
	ZSTD_freeDCtx(r->job_ds[1]);
	ZSTD_freeDCtx(r->job_ds[2]);
	pthread_mutex_destroy(&r->block_lock);
	pthread_mutex_destroy(&r->help_lock);
	pthread_cond_destroy(&r->help_cond);
	walk_free_blocks(r);
	free(r);
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

static int collect(const struct perf_reader_record *rec, void *ctx)
{
	struct repair *rp = ctx;
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
			return -ENOMEM;
		rp->buf = n;
		rp->cap = cap;
	}
	if (rp->nr == rp->cap_ents) {
		size_t cap = rp->cap_ents ? rp->cap_ents * 2 : 4096;
		struct rp_ent *n = realloc(rp->ents, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
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
	err = perf_reader__for_each(r, collect, &rp);
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
