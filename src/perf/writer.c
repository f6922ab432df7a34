/* The perf.data writer. Layout: header (104 bytes), the ids of every event, the attrs (128-byte
 * attr + ids section each), then the data section, which grows by appends; at finalize the
 * feature index is written at exactly data.offset + data.size, followed by the feature payloads.
 *
 * Invariant: under w->lock, the file holds header + attrs + data_size bytes of whole records
 * and nothing more that a reader could mistake for data. Every append is one pwritev at the
 * current end, rolled back (ftruncate) if it does not complete, so data_size only ever moves
 * from one record boundary to the next; sync publishes it by rewriting the header alone.
 *
 * A full disk: every append first allocates its bytes plus END_RESERVE more past the data
 * (fallocate, KEEP_SIZE) and fails with nothing written when that cannot be done. The reserve
 * is what the end of the file needs when the disk is full: the records that count what could not
 * be written (perf_writer__append_closing) and the feature sections (without COMPRESSED perf
 * cannot read a compressed file at all). */
#include "perf/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/creds.h"
#include "perf/compress.h"
#include "perf/buildid_cache.h"
#include "perf/features.h"
#include "perf/abi.h"

/* perf's PERF_RECORD_MISC_BUILD_ID_SIZE: the entry's size byte holds the id length. */
#define MISC_BUILD_ID_SIZE (1 << 15)
#define DSO_BUCKETS 1024
/* The files a recording names for the build-id table, at most: a process may map executable
 * files under as many new paths as it likes (4 KiB each, and they compress to nothing in the
 * file), so the table is bounded; the ones past it get no build id, as perf gives none to a
 * file it could not read. */
#define DSO_MAX 16384
#define DSO_BYTES_MAX (8 << 20)
/* Kept allocated past the data for the file's end: lost-count records, pause statistics and the
 * feature sections, ~10 KiB plus ~100 bytes per DSO with a build id. */
#define END_RESERVE (256 * 1024)

struct pw_event {
	uint8_t attr[PERF_FILE_ATTR_SIZE]; /* attr.size already set to PERF_FILE_ATTR_SIZE */
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct pw_dso {
	struct pw_dso *next;
	bool kernel;
	uint8_t id[FEAT_BUILD_ID_MAX]; /* copy_only: the id given */
	uint8_t id_len;
	char path[];
};

struct perf_writer {
	int fd;
	bool has_clock;
	struct perf_clock_ref clock; /* CLOCKID and CLOCK_DATA */
	/* lock guards the file contents, data_size's updates, finalized and the round state. */
	pthread_mutex_t lock;
	uint64_t attrs_offset;
	uint64_t data_offset;
	uint64_t data_size; /* written under lock, read lock-free by perf_writer__data_size */
	bool no_reserve;    /* the file system cannot allocate ahead (no fallocate) */
	uint64_t max_data_size; /* opts->max_data_size */
	bool limit_hit;     /* an append was refused for it (set under lock, read lock-free) */
	bool synced;        /* perf_writer__sync wrote the header with data_size synced_size */
	uint64_t synced_size;
	bool finalized;
	int finalize_ret;

	/* FINISHED_ROUND bookkeeping: round_gen counts completed rounds (read lock-free by
	 * perf_writer__round, stored under lock after the round's marker is in the file). */
	uint64_t round_gen;
	unsigned int nr_slots;
	unsigned int nr_done;
	bool *slot_done;
	uint64_t marker_end; /* data_size right after the last marker (or at the round's start) */

	/* Lock-free statistics for SAMPLE_TIME and COMPRESSED. */
	uint64_t time_first;
	uint64_t time_last;
	uint64_t comp_raw;
	uint64_t comp_out;

	struct pw_event *events;
	size_t nr_events;
	char **argv;
	int argc;
	int comp_level;
	size_t comp_mmap_len;
	bool copy_only;
	bool names;              /* every event has a name: EVENT_DESC can be written */
	void *given[FEAT_LAST + 1]; /* copy_only: feature payloads given as they are */
	size_t given_len[FEAT_LAST + 1];

	void *tracing_data;  /* TRACING_DATA payload as given (tracepoint formats) */
	size_t tracing_len;

	/* private sections (precord's own data, in the trailer), by ascending tag, under lock */
	struct pw_private {
		uint32_t tag;
		void *data;
		size_t len;
	} priv[PRIVATE_MAX];
	size_t nr_priv;

	const struct creds *creds; /* to read mapped files with; NULL: ours */
	char *path;                /* as opened, for perf_writer__discard */
	char *buildid_cache;       /* opts->buildid_cache, copied */
	bool moved_old;            /* a file there was moved to path.old */
	pthread_mutex_t dso_lock;
	struct pw_dso *dsos[DSO_BUCKETS];
	size_t nr_dsos, dso_bytes;  /* bounded by DSO_MAX and DSO_BYTES_MAX */
};

/* pwrite all of buf at off, retrying short writes and EINTR. Returns 0 or -errno. */
static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* pwritev all of iov at off. The common case is one pwritev; a short write finishes the
 * partly written element with pwrite and goes on with the rest. Returns 0 or -errno. */
static int pwritev_all(int fd, const struct iovec *iov, int iovcnt, uint64_t off)
{
	int i = 0;

	while (i < iovcnt) {
		int cnt = iovcnt - i < IOV_MAX ? iovcnt - i : IOV_MAX;
		ssize_t n = pwritev(fd, iov + i, cnt, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		off += (uint64_t)n;
		while (i < iovcnt && (size_t)n >= iov[i].iov_len)
			n -= (ssize_t)iov[i++].iov_len;
		if (n > 0) {
			int r = pwrite_all(fd, (const uint8_t *)iov[i].iov_base + n,
					   iov[i].iov_len - (size_t)n, off);
			if (r < 0)
				return r;
			off += iov[i].iov_len - (size_t)n;
			i++;
		}
	}
	return 0;
}

static void fill_header(const struct perf_writer *w, struct perf_file_header *h,
			const uint64_t features[4])
{
	memset(h, 0, sizeof(*h));
	h->magic = PERF_MAGIC2;
	h->size = PERF_HEADER_SIZE;
	h->attr_size = PERF_FILE_ATTR_SIZE + sizeof(struct perf_file_section);
	h->attrs.offset = w->attrs_offset;
	h->attrs.size = w->nr_events * h->attr_size;
	h->data.offset = w->data_offset;
	h->data.size = w->data_size;
	if (features)
		memcpy(h->features, features, sizeof(h->features));
}

/* Allocate len bytes at off without changing the file's size. Returns 0, -ENOSPC (or -EDQUOT,
 * -EFBIG) when the space is not there, 0 on file systems that cannot allocate ahead. */
static int reserve(struct perf_writer *w, uint64_t off, uint64_t len)
{
	if (w->no_reserve)
		return 0;
	while (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0) {
		if (errno == EINTR)
			continue;
		if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)
			return -errno;
		w->no_reserve = true; /* EOPNOTSUPP and the like: write and see */
		break;
	}
	return 0;
}

/* Append under w->lock: the whole of iov or nothing. Unless closing, the space for it and for
 * END_RESERVE after it must be there first. */
static int append_locked(struct perf_writer *w, const struct iovec *iov, int iovcnt, size_t total,
			 bool closing)
{
	uint64_t end = w->data_offset + w->data_size;
	int r;

	if (!closing && w->max_data_size &&
	    (w->limit_hit || w->data_size + total > w->max_data_size)) {
		__atomic_store_n(&w->limit_hit, true, __ATOMIC_RELEASE);
		return -EFBIG;
	}
	r = closing ? 0 : reserve(w, end, total + END_RESERVE);
	if (r < 0)
		return r;
	r = pwritev_all(w->fd, iov, iovcnt, end);

	if (r < 0) {
		/* Cut what did get written. Should that fail too, the next append still writes at
		 * `end` and data_size never covers the debris, so readers are not misled. */
		while (ftruncate(w->fd, (off_t)end) < 0 && errno == EINTR)
			;
		return r;
	}
	__atomic_store_n(&w->data_size, w->data_size + total, __ATOMIC_RELEASE);
	return 0;
}

static int append(struct perf_writer *w, const struct iovec *iov, int iovcnt, bool closing)
{
	size_t total = 0;
	int r;

	if (!w || iovcnt < 0 || (iovcnt && !iov))
		return -EINVAL;
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (total == 0)
		return 0;

	pthread_mutex_lock(&w->lock);
	r = w->finalized ? -EINVAL : append_locked(w, iov, iovcnt, total, closing);
	pthread_mutex_unlock(&w->lock);
	return r;
}

int perf_writer__append(struct perf_writer *w, const struct iovec *iov, int iovcnt)
{
	return append(w, iov, iovcnt, false);
}

int perf_writer__append_closing(struct perf_writer *w, const struct iovec *iov, int iovcnt)
{
	return append(w, iov, iovcnt, true);
}

bool perf_writer__limit_hit(const struct perf_writer *w)
{
	return w && __atomic_load_n(&w->limit_hit, __ATOMIC_ACQUIRE);
}

int perf_writer__set_round_slots(struct perf_writer *w, unsigned int nr_slots)
{
	bool *done;

	if (!w || nr_slots == 0)
		return -EINVAL;
	done = calloc(nr_slots, sizeof(*done));
	if (!done)
		return -ENOMEM;
	pthread_mutex_lock(&w->lock);
	free(w->slot_done);
	w->slot_done = done;
	w->nr_slots = nr_slots;
	w->nr_done = 0;
	/* Passes begun under the old slot numbering must not count: start a new round. */
	__atomic_store_n(&w->round_gen, w->round_gen + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

uint64_t perf_writer__round(struct perf_writer *w)
{
	/* Pairs with the release store after a marker: a pass that sees the new round begins
	 * after the marker is in the file. */
	return __atomic_load_n(&w->round_gen, __ATOMIC_ACQUIRE);
}

int perf_writer__pass_done(struct perf_writer *w, unsigned int slot, uint64_t started)
{
	int r = 0;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	if (w->finalized || slot >= w->nr_slots || started > w->round_gen) {
		r = -EINVAL;
		goto out;
	}
	/* A pass begun before the last marker may have been draining records older than it. */
	if (started != w->round_gen)
		goto out;
	if (!w->slot_done[slot]) {
		w->slot_done[slot] = true;
		w->nr_done++;
	}
	if (w->nr_done < w->nr_slots)
		goto out;

	/* Every reader has drained everything that was in its rings when the last marker was
	 * written: no record still to come is older than those before that marker. */
	if (w->data_size != w->marker_end) {
		struct perf_event_header marker = {
			.type = PERF_RECORD_FINISHED_ROUND,
			.size = sizeof(marker),
		};
		struct iovec iov = { &marker, sizeof(marker) };

		r = append_locked(w, &iov, 1, sizeof(marker), false);
		if (r < 0)
			goto out; /* the round stays complete; the next pass_done retries */
	}
	w->marker_end = w->data_size;
	memset(w->slot_done, 0, w->nr_slots * sizeof(*w->slot_done));
	w->nr_done = 0;
	__atomic_store_n(&w->round_gen, w->round_gen + 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&w->lock);
	return r;
}

void perf_writer__note_time(struct perf_writer *w, uint64_t first, uint64_t last)
{
	uint64_t cur = __atomic_load_n(&w->time_first, __ATOMIC_RELAXED);

	while (first < cur &&
	       !__atomic_compare_exchange_n(&w->time_first, &cur, first, true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
	cur = __atomic_load_n(&w->time_last, __ATOMIC_RELAXED);
	while (last > cur &&
	       !__atomic_compare_exchange_n(&w->time_last, &cur, last, true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

void perf_writer__note_compression(struct perf_writer *w, uint64_t raw, uint64_t compressed)
{
	__atomic_fetch_add(&w->comp_raw, raw, __ATOMIC_RELAXED);
	__atomic_fetch_add(&w->comp_out, compressed, __ATOMIC_RELAXED);
}

int perf_writer__note_mmap(struct perf_writer *w, const struct perf_event_header *h)
{
	uint16_t cpumode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	size_t name_off;
	const char *name;
	uint32_t prot = 4; /* PROT_EXEC: an MMAP record maps code unless it says data */

	if (h->type == PERF_RECORD_MMAP && !(h->misc & PERF_RECORD_MISC_MMAP_DATA)) {
		name_off = 8 + 32;
	} else if (h->type == PERF_RECORD_MMAP2 && !(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		name_off = 8 + 64;
		if (h->size >= name_off)
			memcpy(&prot, (const char *)h + 8 + 56, 4);
	} else {
		return 0;
	}
	if (h->size <= name_off || !(prot & 4))
		return 0;
	name = (const char *)h + name_off;
	if (!memchr(name, 0, h->size - name_off))
		return 0;
	if (cpumode == PERF_RECORD_MISC_KERNEL)
		return strncmp(name, "[kernel.kallsyms]", 17) == 0 ? perf_writer__add_dso(w, name, true) : 0;
	if (name[0] == '/' || strcmp(name, "[vdso]") == 0)
		return perf_writer__add_dso(w, name, false);
	return 0;
}

static unsigned int hash_path(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h % DSO_BUCKETS;
}

int perf_writer__add_dso(struct perf_writer *w, const char *path, bool kernel)
{
	unsigned int b;
	struct pw_dso *d;
	size_t len;

	if (!w || !path)
		return -EINVAL;
	b = hash_path(path);
	len = strlen(path);
	pthread_mutex_lock(&w->dso_lock);
	for (d = w->dsos[b]; d; d = d->next)
		if (d->kernel == kernel && strcmp(d->path, path) == 0)
			break;
	if (!d && (w->nr_dsos >= DSO_MAX || w->dso_bytes + len + 1 > DSO_BYTES_MAX)) {
		pthread_mutex_unlock(&w->dso_lock);
		return 0; /* past the bound: no build id for it */
	}
	if (!d) {
		d = malloc(sizeof(*d) + len + 1);
		if (!d) {
			pthread_mutex_unlock(&w->dso_lock);
			return -ENOMEM;
		}
		memcpy(d->path, path, len + 1);
		d->kernel = kernel;
		d->next = w->dsos[b];
		w->dsos[b] = d;
		w->nr_dsos++;
		w->dso_bytes += len + 1;
	}
	pthread_mutex_unlock(&w->dso_lock);
	return 0;
}

int perf_writer__set_feature(struct perf_writer *w, int bit, const void *data, size_t len)
{
	void *copy;

	if (!w || !w->copy_only || bit <= 0 || bit > FEAT_LAST || bit == FEAT_EVENT_DESC ||
	    bit == FEAT_SAMPLE_TIME || bit == FEAT_COMPRESSED || bit == FEAT_TRACING_DATA ||
	    bit == FEAT_BUILD_ID || (len && !data))
		return -EINVAL;
	copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, len);
	pthread_mutex_lock(&w->lock);
	free(w->given[bit]);
	w->given[bit] = copy;
	w->given_len[bit] = len;
	pthread_mutex_unlock(&w->lock);
	return 0;
}

int perf_writer__add_build_id(struct perf_writer *w, const char *path, bool kernel,
			      const uint8_t *id, size_t id_len)
{
	struct pw_dso *d;
	size_t len;
	unsigned int b;

	if (!w || !w->copy_only || !path || !id || !id_len || id_len > FEAT_BUILD_ID_MAX)
		return -EINVAL;
	len = strlen(path);
	d = calloc(1, sizeof(*d) + len + 1);
	if (!d)
		return -ENOMEM;
	memcpy(d->path, path, len + 1);
	d->kernel = kernel;
	memcpy(d->id, id, id_len);
	d->id_len = (uint8_t)id_len;
	b = hash_path(path);
	pthread_mutex_lock(&w->dso_lock);
	d->next = w->dsos[b];
	w->dsos[b] = d;
	pthread_mutex_unlock(&w->dso_lock);
	return 0;
}

int perf_writer__set_private(struct perf_writer *w, uint32_t tag, const struct iovec *iov,
			     int iovcnt)
{
	struct pw_private *p;
	size_t i, len = 0, at = 0;
	uint8_t *copy;
	int r = 0;

	for (int k = 0; k < iovcnt; k++)
		len += iov[k].iov_len;
	if (!w || !tag || !len || len > UINT32_MAX)
		return -EINVAL;
	copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	for (int k = 0; k < iovcnt; k++) {
		if (iov[k].iov_len)
			memcpy(copy + at, iov[k].iov_base, iov[k].iov_len);
		at += iov[k].iov_len;
	}
	pthread_mutex_lock(&w->lock);
	for (i = 0; i < w->nr_priv && w->priv[i].tag < tag; i++)
		;
	p = &w->priv[i];
	if (i < w->nr_priv && p->tag == tag) {
		free(p->data);
	} else if (w->nr_priv == PRIVATE_MAX) {
		free(copy);
		r = -EINVAL;
		goto out;
	} else {
		memmove(p + 1, p, (w->nr_priv - i) * sizeof(*p));
		w->nr_priv++;
	}
	*p = (struct pw_private){ tag, copy, len };
out:
	pthread_mutex_unlock(&w->lock);
	return r;
}

int perf_writer__sync(struct perf_writer *w)
{
	struct perf_file_header h;
	int r = 0;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	/* the header holds nothing else that changes: the same data size, the same header (an
	 * idle precordd syncs ten times a second) */
	if (!w->finalized && (!w->synced || w->synced_size != w->data_size)) {
		/* No features yet: a reader of this file must not look past the data. */
		fill_header(w, &h, NULL);
		r = pwrite_all(w->fd, &h, sizeof(h), 0);
		if (!r) {
			w->synced = true;
			w->synced_size = w->data_size;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return r;
}

uint64_t perf_writer__data_size(const struct perf_writer *w)
{
	return __atomic_load_n(&w->data_size, __ATOMIC_ACQUIRE);
}

static void put_build_id(struct fbuf *b, const char *name, uint16_t cpumode, const uint8_t *id,
			 int id_len)
{
	size_t name_len = (strlen(name) + 1 + FEAT_NAME_ALIGN - 1) / FEAT_NAME_ALIGN *
			  FEAT_NAME_ALIGN;
	struct perf_event_header hdr = {
		.type = 0,
		.misc = MISC_BUILD_ID_SIZE | cpumode,
		.size = (uint16_t)(sizeof(hdr) + 4 + FEAT_BUILD_ID_MAX + 4 + name_len),
	};
	uint8_t idbuf[FEAT_BUILD_ID_MAX + 4] = { 0 };

	memcpy(idbuf, id, (size_t)id_len);
	idbuf[FEAT_BUILD_ID_MAX] = (uint8_t)id_len;
	fbuf__put(b, &hdr, sizeof(hdr));
	fbuf__put_u32(b, (uint32_t)-1); /* pid: host */
	fbuf__put(b, idbuf, sizeof(idbuf));
	fbuf__put(b, name, strlen(name) + 1);
	fbuf__put_zero(b, name_len - strlen(name) - 1);
}

/* The build-id pass reads files that profiled processes mapped, named by paths those
 * processes control: each read is bounded (feat__build_id_file), and so is the whole pass. */
#define BUILD_ID_PASS_MS 2000

struct build_ids_run {
	struct perf_writer *w;
	struct fbuf *b;
	size_t n;
};

/* A file to add to the build-id cache once the pass is over. */
struct cache_add {
	const char *path; /* the DSO entry's: DSOs live as long as the writer */
	uint8_t id[FEAT_BUILD_ID_MAX];
	size_t len;
};

/* BUILD_ID entries for every registered DSO whose id reads correctly, until the pass's time
 * is spent. Counts them in x->n. The files go into the build-id cache after the pass, out of
 * its time and its lock: linking, or copying across file systems, is slower than reading ids,
 * and spent the time of the DSOs after them. */
static int build_ids_fn(void *p)
{
	struct build_ids_run *x = p;
	struct perf_writer *w = x->w;
	struct fbuf *b = x->b;
	uint8_t id[FEAT_BUILD_ID_MAX];
	bool kernel_done = false;
	uint64_t end = clock__ms() + BUILD_ID_PASS_MS;
	size_t n = 0, nr_adds = 0;
	struct cache_add *adds = NULL;

	pthread_mutex_lock(&w->dso_lock);
	/* no room for the list: no cache, the recording's ids all the same */
	if (w->buildid_cache)
		adds = calloc(w->nr_dsos ? w->nr_dsos : 1, sizeof(*adds));
	for (size_t i = 0; i < DSO_BUCKETS; i++) {
		for (struct pw_dso *d = w->dsos[i]; d; d = d->next) {
			int len;

			if (d->kernel) {
				if (kernel_done || strncmp(d->path, "[kernel.kallsyms]", 17) != 0)
					continue;
				kernel_done = true;
				len = feat__build_id_kernel(id);
				if (len > 0) {
					put_build_id(b, "[kernel.kallsyms]", PERF_RECORD_MISC_KERNEL,
						     id, len);
					n++;
				}
				continue;
			}
			/* The vDSO as perf names it; no other "[...]" or "//anon" has a file. */
			if (strcmp(d->path, "[vdso]") == 0) {
				len = feat__build_id_vdso(id);
				if (len > 0) {
					put_build_id(b, d->path, PERF_RECORD_MISC_USER, id, len);
					n++;
				}
				continue;
			}
			if (d->path[0] != '/' || clock__ms() > end)
				continue;
			len = feat__build_id_file(d->path, id);
			if (len > 0) {
				put_build_id(b, d->path, PERF_RECORD_MISC_USER, id, len);
				n++;
				if (adds && nr_adds < w->nr_dsos) {
					adds[nr_adds].path = d->path;
					memcpy(adds[nr_adds].id, id, (size_t)len);
					adds[nr_adds++].len = (size_t)len;
				}
			}
		}
	}
	pthread_mutex_unlock(&w->dso_lock);
	for (size_t i = 0; i < nr_adds; i++)
		buildid_cache__add(w->buildid_cache, adds[i].path, adds[i].id, adds[i].len);
	free(adds);
	x->n = n;
	return 0;
}

/* The same, with the writer's credentials. Returns how many entries were written. */
static size_t build_ids(struct perf_writer *w, struct fbuf *b)
{
	struct build_ids_run x = { w, b, 0 };

	if (creds__run(w->creds, build_ids_fn, &x) < 0)
		return 0;
	return x.n;
}

struct feat_list {
	uint64_t bits[4];
	int bit[FEAT_LAST + 1];
	size_t start[FEAT_LAST + 1]; /* offset of the payload within the payload buffer */
	size_t end[FEAT_LAST + 1];
	int nr;
};

static void feat_begin(struct feat_list *l, const struct fbuf *b, int bit)
{
	l->bit[l->nr] = bit;
	l->start[l->nr] = b->len;
}

static void feat_end(struct feat_list *l, const struct fbuf *b)
{
	int bit = l->bit[l->nr];

	l->end[l->nr] = b->len;
	l->bits[bit / 64] |= 1ULL << (bit % 64);
	l->nr++;
}

static void feat_drop(struct feat_list *l, struct fbuf *b)
{
	b->len = l->start[l->nr];
}

/* Build every feature payload in ascending bit order, the order perf reads the index in. */
/* The machine's features, in bit order: HOSTNAME to TOTAL_MEM. */
static void host_features(struct feat_list *l, struct fbuf *b)
{
	struct utsname uts;
	char str[512];
	bool have_uts = uname(&uts) == 0;

	if (have_uts) {
		feat_begin(l, b, FEAT_HOSTNAME);
		fbuf__put_string(b, uts.nodename);
		feat_end(l, b);
		feat_begin(l, b, FEAT_OSRELEASE);
		fbuf__put_string(b, uts.release);
		feat_end(l, b);
	}
	feat_begin(l, b, FEAT_VERSION);
	fbuf__put_string(b, "precord " PRECORD_VERSION);
	feat_end(l, b);
	if (have_uts) {
		feat_begin(l, b, FEAT_ARCH);
		fbuf__put_string(b, uts.machine);
		feat_end(l, b);
	}

	uint32_t avail, online;
	feat__nrcpus(&avail, &online);
	feat_begin(l, b, FEAT_NRCPUS);
	fbuf__put_u32(b, avail); /* this order: perf 6.1's process_nrcpus reads avail first */
	fbuf__put_u32(b, online);
	feat_end(l, b);

	if (feat__cpudesc(str, sizeof(str)) == 0) {
		feat_begin(l, b, FEAT_CPUDESC);
		fbuf__put_string(b, str);
		feat_end(l, b);
	}
	if (feat__cpuid(str, sizeof(str)) == 0) {
		feat_begin(l, b, FEAT_CPUID);
		fbuf__put_string(b, str);
		feat_end(l, b);
	}
	uint64_t mem = feat__total_mem_kb();
	if (mem) {
		feat_begin(l, b, FEAT_TOTAL_MEM);
		fbuf__put_u64(b, mem);
		feat_end(l, b);
	}
}

/* The session's features, in bit order: CMDLINE, EVENT_DESC, SAMPLE_TIME, CLOCKID, COMPRESSED,
 * CLOCK_DATA. */
static void compressed_feature(struct perf_writer *w, struct feat_list *l, struct fbuf *b);
static void event_desc_feature(struct perf_writer *w, struct feat_list *l, struct fbuf *b);
static void sample_time_feature(struct perf_writer *w, struct feat_list *l, struct fbuf *b);

/* CLOCKID (the clock's resolution, ns) or CLOCK_DATA, as perf record -k writes them. */
static void clock_feature(struct perf_writer *w, struct feat_list *l, struct fbuf *b, int bit)
{
	struct timespec res;

	if (!w->has_clock)
		return;
	feat_begin(l, b, bit);
	if (bit == FEAT_CLOCKID) {
		fbuf__put_u64(b, clock_getres((clockid_t)w->clock.clockid, &res) == 0 ?
				 (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec : 1);
	} else {
		fbuf__put_u32(b, 1);
		fbuf__put_u32(b, w->clock.clockid);
		fbuf__put_u64(b, w->clock.wall_ns);
		fbuf__put_u64(b, w->clock.clock_ns);
	}
	feat_end(l, b);
}

static void session_features(struct perf_writer *w, struct feat_list *l, struct fbuf *b)
{
	if (w->argc > 0) {
		feat_begin(l, b, FEAT_CMDLINE);
		fbuf__put_u32(b, (uint32_t)w->argc);
		for (int i = 0; i < w->argc; i++)
			fbuf__put_string(b, w->argv[i]);
		feat_end(l, b);
	}

	event_desc_feature(w, l, b);
	sample_time_feature(w, l, b);
	clock_feature(w, l, b, FEAT_CLOCKID);
	compressed_feature(w, l, b);
	clock_feature(w, l, b, FEAT_CLOCK_DATA);
}

static void event_desc_feature(struct perf_writer *w, struct feat_list *l, struct fbuf *b)
{
	feat_begin(l, b, FEAT_EVENT_DESC);
	fbuf__put_u32(b, (uint32_t)w->nr_events);
	fbuf__put_u32(b, PERF_FILE_ATTR_SIZE);
	for (size_t i = 0; i < w->nr_events; i++) {
		const struct pw_event *e = &w->events[i];

		fbuf__put(b, e->attr, sizeof(e->attr));
		fbuf__put_u32(b, (uint32_t)e->nr_ids);
		fbuf__put_string(b, e->name);
		fbuf__put(b, e->ids, e->nr_ids * sizeof(*e->ids));
	}
	feat_end(l, b);
}

static void sample_time_feature(struct perf_writer *w, struct feat_list *l, struct fbuf *b)
{
	uint64_t first = __atomic_load_n(&w->time_first, __ATOMIC_RELAXED);
	uint64_t last = __atomic_load_n(&w->time_last, __ATOMIC_RELAXED);

	if (first <= last) {
		feat_begin(l, b, FEAT_SAMPLE_TIME);
		fbuf__put_u64(b, first);
		fbuf__put_u64(b, last);
		feat_end(l, b);
	}
}

/* The trailer (see writer.h): the private sections, then its size and magic. */
static void put_trailer(struct perf_writer *w, struct fbuf *b)
{
	static const uint8_t zero[8];
	size_t start = b->len;

	if (!w->nr_priv)
		return;
	for (size_t i = 0; i < w->nr_priv; i++) {
		fbuf__put_u32(b, w->priv[i].tag);
		fbuf__put_u32(b, (uint32_t)w->priv[i].len);
		fbuf__put(b, w->priv[i].data, w->priv[i].len);
		fbuf__put(b, zero, (8 - w->priv[i].len % 8) % 8);
	}
	fbuf__put_u64(b, b->len - start);
	fbuf__put_u64(b, PERF_TRAILER_MAGIC);
}

/* copy_only: the given payloads and the writer's own, in ascending bit order. Nothing of this
 * machine. */
static void copied_features(struct perf_writer *w, struct feat_list *l, struct fbuf *b)
{
	for (int bit = FEAT_TRACING_DATA + 1; bit <= FEAT_LAST; bit++) {
		if (bit == FEAT_BUILD_ID) {
			size_t n = 0;

			feat_begin(l, b, FEAT_BUILD_ID);
			pthread_mutex_lock(&w->dso_lock);
			for (size_t i = 0; i < DSO_BUCKETS; i++)
				for (struct pw_dso *d = w->dsos[i]; d; d = d->next)
					if (d->id_len) {
						put_build_id(b, d->path, d->kernel ? PERF_RECORD_MISC_KERNEL :
										   PERF_RECORD_MISC_USER,
							     d->id, d->id_len);
						n++;
					}
			pthread_mutex_unlock(&w->dso_lock);
			if (n)
				feat_end(l, b);
			else
				feat_drop(l, b);
		} else if (bit == FEAT_EVENT_DESC) {
			if (w->names)
				event_desc_feature(w, l, b);
		} else if (bit == FEAT_SAMPLE_TIME) {
			sample_time_feature(w, l, b);
		} else if (bit == FEAT_COMPRESSED) {
			compressed_feature(w, l, b);
		} else if ((bit == FEAT_CLOCKID || bit == FEAT_CLOCK_DATA) && w->has_clock) {
			clock_feature(w, l, b, bit);
		} else if (w->given[bit]) {
			feat_begin(l, b, bit);
			fbuf__put(b, w->given[bit], w->given_len[bit]);
			feat_end(l, b);
		}
	}
}

static void compressed_feature(struct perf_writer *w, struct feat_list *l, struct fbuf *b)
{
	if (w->comp_level > 0) {
		uint64_t raw = __atomic_load_n(&w->comp_raw, __ATOMIC_RELAXED);
		uint64_t out = __atomic_load_n(&w->comp_out, __ATOMIC_RELAXED);
		/* perf rounds the ratio to the nearest integer; it is only displayed. */
		uint64_t ratio = out ? (raw * 2 + out) / (out * 2) : 0;
		size_t mmap_len = w->comp_mmap_len ? w->comp_mmap_len : COMPRESS_MAX_DECOMPRESSED;

		feat_begin(l, b, FEAT_COMPRESSED);
		fbuf__put_u32(b, 0); /* version: perf 6.1 writes 0 and perfparser accepts only 0 */
		fbuf__put_u32(b, 1); /* type: zstd */
		fbuf__put_u32(b, (uint32_t)w->comp_level);
		fbuf__put_u32(b, ratio > UINT32_MAX ? UINT32_MAX : (uint32_t)ratio);
		fbuf__put_u32(b, mmap_len > UINT32_MAX ? UINT32_MAX : (uint32_t)mmap_len);
		feat_end(l, b);
	}
}

/* Every feature in ascending bit order, the order perf reads the index in; only those a reader
 * cannot do without (TRACING_DATA, COMPRESSED) when `essential` (a disk fuller than the
 * reserve). */
static int build_features(struct perf_writer *w, struct feat_list *l, struct fbuf *b,
			  bool essential)
{
	if (w->tracing_len) {
		feat_begin(l, b, FEAT_TRACING_DATA);
		fbuf__put(b, w->tracing_data, w->tracing_len);
		feat_end(l, b);
	}
	if (essential) {
		compressed_feature(w, l, b);
		return b->oom ? -ENOMEM : 0;
	}
	if (w->copy_only) {
		copied_features(w, l, b);
		return b->oom ? -ENOMEM : 0;
	}
	feat_begin(l, b, FEAT_BUILD_ID);
	if (build_ids(w, b) > 0)
		feat_end(l, b);
	else
		feat_drop(l, b);
	host_features(l, b);
	session_features(w, l, b);
	return b->oom ? -ENOMEM : 0;
}

/* Write index + payloads at the end of the data, then the header that points to them. */
static int write_features(struct perf_writer *w, uint64_t ret_features[4], bool essential)
{
	struct feat_list l = { 0 };
	struct fbuf payload = { 0 };
	_cleanup_free_ struct perf_file_section *index = NULL;
	uint64_t feat_off = w->data_offset + w->data_size;
	uint64_t base;
	int r;

	r = build_features(w, &l, &payload, essential);
	if (r < 0)
		goto out;
	if (!essential)
		put_trailer(w, &payload);
	if (payload.oom) {
		r = -ENOMEM;
		goto out;
	}
	index = calloc((size_t)l.nr, sizeof(*index));
	if (!index) {
		r = -ENOMEM;
		goto out;
	}
	/* The index starts exactly at data end; payloads follow it in the same order. */
	base = feat_off + (uint64_t)l.nr * sizeof(*index);
	for (int i = 0; i < l.nr; i++) {
		index[i].offset = base + l.start[i];
		index[i].size = l.end[i] - l.start[i];
	}
	struct iovec iov[2] = {
		{ index, (size_t)l.nr * sizeof(*index) },
		{ payload.data, payload.len },
	};
	r = pwritev_all(w->fd, iov, 2, feat_off);
	if (r == 0) {
		uint64_t end = base + payload.len;
		while ((r = ftruncate(w->fd, (off_t)end)) < 0 && errno == EINTR)
			;
		r = r < 0 ? -errno : 0;
	}
	if (r == 0)
		memcpy(ret_features, l.bits, sizeof(l.bits));
out:
	fbuf__free(&payload);
	return r;
}

int perf_writer__finalize(struct perf_writer *w)
{
	struct perf_file_header h;
	uint64_t features[4] = { 0 };
	int r, r2;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	if (w->finalized) {
		r = w->finalize_ret;
		goto out;
	}
	w->finalized = true;
	r = write_features(w, features, false);
	if (r < 0 && (w->comp_level > 0 || w->tracing_len)) {
		/* The disk is fuller than the reserve allowed for: at least what perf needs to
		 * read the data. */
		memset(features, 0, sizeof(features));
		if (write_features(w, features, true) == 0)
			r = 0;
	}
	if (r < 0) {
		/* Leave a readable file: the data without features. */
		memset(features, 0, sizeof(features));
		while (ftruncate(w->fd, (off_t)(w->data_offset + w->data_size)) < 0 &&
		       errno == EINTR)
			;
	}
	fill_header(w, &h, features);
	r2 = pwrite_all(w->fd, &h, sizeof(h), 0);
	if (r == 0)
		r = r2;
	if (fsync(w->fd) < 0 && r == 0)
		r = -errno;
	w->finalize_ret = r;
out:
	pthread_mutex_unlock(&w->lock);
	return r;
}

static void undo_open(const char *path, bool moved);

void perf_writer__discard(struct perf_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
		if (w->path)
			undo_open(w->path, w->moved_old);
	}
	perf_writer__free(w);
}

void perf_writer__free(struct perf_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0) {
		perf_writer__finalize(w);
		close(w->fd);
	}
	for (size_t i = 0; i < w->nr_events; i++) {
		free(w->events[i].name);
		free(w->events[i].ids);
	}
	free(w->events);
	free(w->path);
	free(w->buildid_cache);
	for (int i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	for (size_t i = 0; i < DSO_BUCKETS; i++) {
		struct pw_dso *d = w->dsos[i], *next;
		for (; d; d = next) {
			next = d->next;
			free(d);
		}
	}
	free(w->slot_done);
	free(w->tracing_data);
	for (int i = 0; i <= FEAT_LAST; i++)
		free(w->given[i]);
	for (size_t i = 0; i < w->nr_priv; i++)
		free(w->priv[i].data);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->dso_lock);
	free(w);
}

static int check_opts(const struct perf_writer_opts *opts)
{
	if (!opts || !opts->events || opts->nr_events == 0 || opts->comp_level < 0 ||
	    (opts->argc > 0 && !opts->argv))
		return -EINVAL;
	const struct perf_event_attr *a0 = opts->events[0].attr;
	for (size_t i = 0; i < opts->nr_events; i++) {
		const struct perf_writer_event *e = &opts->events[i];

		if (!e->attr || (e->nr_ids && !e->ids))
			return -EINVAL;
		if (opts->nr_events == 1)
			continue;
		/* perf can only tell the events' samples apart by id. */
		if (!(e->attr->sample_type & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)) ||
		    e->attr->sample_id_all != a0->sample_id_all ||
		    e->attr->read_format != a0->read_format)
			return -EINVAL;
	}
	return 0;
}

static int copy_opts(struct perf_writer *w, const struct perf_writer_opts *opts)
{
	w->events = calloc(opts->nr_events, sizeof(*w->events));
	if (!w->events)
		return -ENOMEM;
	w->names = true;
	w->copy_only = opts->copy_only;
	w->nr_events = opts->nr_events;
	for (size_t i = 0; i < opts->nr_events; i++) {
		const struct perf_writer_event *src = &opts->events[i];
		struct pw_event *e = &w->events[i];
		struct perf_event_attr *attr = (struct perf_event_attr *)e->attr;
		size_t n = sizeof(*src->attr) < sizeof(e->attr) ? sizeof(*src->attr)
								: sizeof(e->attr);

		memcpy(e->attr, src->attr, n);
		attr->size = PERF_FILE_ATTR_SIZE;
		e->name = strdup(src->name ? src->name : "");
		if (!src->name)
			w->names = false;
		e->ids = malloc(src->nr_ids ? src->nr_ids * sizeof(*e->ids) : 1);
		if (!e->name || !e->ids)
			return -ENOMEM;
		if (src->nr_ids)	/* src->ids may be NULL then: memcpy(x, NULL, 0) is UB */
			memcpy(e->ids, src->ids, src->nr_ids * sizeof(*e->ids));
		e->nr_ids = src->nr_ids;
	}
	if (opts->argc > 0) {
		w->argv = calloc((size_t)opts->argc, sizeof(*w->argv));
		if (!w->argv)
			return -ENOMEM;
		for (; w->argc < opts->argc; w->argc++) {
			w->argv[w->argc] = strdup(opts->argv[w->argc] ? opts->argv[w->argc] : "");
			if (!w->argv[w->argc])
				return -ENOMEM;
		}
	}
	w->comp_level = opts->comp_level;
	w->max_data_size = opts->max_data_size;
	w->comp_mmap_len = opts->comp_mmap_len;
	if (opts->clock) {
		w->has_clock = true;
		w->clock = *opts->clock;
	}
	if (opts->tracing_len) {
		w->tracing_data = malloc(opts->tracing_len);
		if (!w->tracing_data)
			return -ENOMEM;
		memcpy(w->tracing_data, opts->tracing_data, opts->tracing_len);
		w->tracing_len = opts->tracing_len;
	}
	return 0;
}

/* A non-empty regular file at path becomes path.old (replacing an older one). Returns 1 when
 * one was moved, 0 when there was none, or -errno. */
static int move_old(const char *path)
{
	struct stat st;
	_cleanup_free_ char *old = NULL;

	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	if (asprintf(&old, "%s.old", path) < 0)
		return -ENOMEM;
	return rename(path, old) < 0 ? -errno : 1;
}

/* Whether the file system of path (a file there or to be made there) has len bytes free for
 * this user. Returns 0 (or when it cannot tell) or -ENOSPC. */
static int room_for(const char *path, uint64_t len)
{
	_cleanup_free_ char *copy = strdup(path);
	struct statvfs vfs;
	uint64_t avail;

	if (!copy || (statvfs(path, &vfs) < 0 && statvfs(dirname(copy), &vfs) < 0))
		return 0;
	avail = (uint64_t)(geteuid() ? vfs.f_bavail : vfs.f_bfree) * vfs.f_frsize;
	return avail < len ? -ENOSPC : 0;
}

/* A start that failed leaves what was there: the file it created is removed (it holds no
 * recording: perf and preport could not read it) and the one moved to path.old goes back. */
static void undo_open(const char *path, bool moved)
{
	_cleanup_free_ char *old = NULL;

	unlink(path);
	if (moved && asprintf(&old, "%s.old", path) >= 0)
		rename(old, path);
}

/* Header (data size 0, no features), every event's ids, then the attrs; data follows. */
static int write_prefix(struct perf_writer *w)
{
	struct fbuf b = { 0 };
	struct perf_file_header h;
	_cleanup_free_ uint64_t *ids_off = calloc(w->nr_events, sizeof(*ids_off));
	int r;

	if (!ids_off)
		return -ENOMEM;
	fbuf__put_zero(&b, PERF_HEADER_SIZE);
	for (size_t i = 0; i < w->nr_events; i++) {
		ids_off[i] = b.len;
		fbuf__put(&b, w->events[i].ids, w->events[i].nr_ids * sizeof(uint64_t));
	}
	w->attrs_offset = b.len;
	for (size_t i = 0; i < w->nr_events; i++) {
		struct perf_file_section s = { ids_off[i], w->events[i].nr_ids * sizeof(uint64_t) };

		fbuf__put(&b, w->events[i].attr, PERF_FILE_ATTR_SIZE);
		fbuf__put(&b, &s, sizeof(s));
	}
	w->data_offset = b.len;
	if (b.oom) {
		fbuf__free(&b);
		return -ENOMEM;
	}
	fill_header(w, &h, NULL);
	memcpy(b.data, &h, sizeof(h));
	r = pwrite_all(w->fd, b.data, b.len, 0);
	fbuf__free(&b);
	return r;
}

struct perf_writer *perf_writer__open(const char *path, const struct perf_writer_opts *opts)
{
	struct perf_writer *w;
	struct stat st = { 0 };
	bool moved = false;
	int r;

	if (!path || check_opts(opts) < 0) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->fd = -1;
	w->time_first = UINT64_MAX;
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->dso_lock, NULL);

	r = copy_opts(w, opts);
	if (r < 0)
		goto err;
	w->creds = opts->creds;
	if (opts->buildid_cache && !(w->buildid_cache = strdup(opts->buildid_cache))) {
		r = -ENOMEM;
		goto err;
	}
	/* what is not a regular file is refused, untouched (ESPIPE: the file is written with
	 * seeks); precord's CLI says so more clearly, before anything starts */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -ESPIPE;
		goto err;
	}
	/* a disk already too full for the file's end: refused before the old file is moved (the
	 * undo below would bring it back, but not the path.old it replaced) */
	r = room_for(path, END_RESERVE);
	if (r < 0)
		goto err;
	if (opts->keep_old) {
		r = move_old(path);
		if (r < 0)
			goto err;
		moved = r;
	}
	/* O_NONBLOCK: a FIFO put there meanwhile fails (ENXIO) instead of blocking until a reader
	 * comes */
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0600);
	if (w->fd < 0) {
		r = -errno;
		if (moved)
			undo_open(path, true);
		goto err;
	}
	if (fstat(w->fd, &st) < 0) {
		r = -errno;
		goto err;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -ESPIPE;
		goto err;	/* not ours to remove */
	}
	fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) & ~O_NONBLOCK);
	w->moved_old = moved;
	w->path = strdup(path);
	r = w->path ? write_prefix(w) : -ENOMEM;
	if (r == 0)
		r = reserve(w, w->data_offset, END_RESERVE); /* room for the file's end */
	if (r < 0) {
		/* a full disk at the start: no file perf cannot read, the old one back */
		undo_open(path, moved);
		goto err;
	}
	return w;
err:
	/* Nothing to finalize: mark it done so free does not write features. */
	w->finalized = true;
	perf_writer__free(w);
	errno = -r;
	return NULL;
}
