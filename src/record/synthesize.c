/* Builds COMM, MMAP2 and the kernel MMAP records for processes that exist before recording,
 * from /proc. Records of one process are gathered in a sink and handed out only once the process
 * is complete, so a process that vanishes mid-read is dropped whole (rolled back) and counted,
 * never delivered half. Over many pids, groups of pids are spread with wq__parallel_for; each
 * group has its own sink, so building needs no locks and only out() is called concurrently. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroupfs.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/cleanup.h"
#include "perf/abi.h"
#include "record/synthesize.h"
#include "lib/workqueue.h"

#define DEFAULT_BATCH (64 * 1024)
#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

/* One synthesis call: shared by every participant, read-only but for err and the totals. */
struct run {
	const struct synth_opts *o;
	const char *proc;
	size_t trailer;         /* bytes of sample_id trailer per record */
	size_t batch;
	synth_output_fn out;
	void *ctx;
	const pid_t *pids;
	size_t nr_pids, group;  /* pids per parallel_for index */
	struct sink *slots;     /* ordered mode: one per group, delivered at the end */
	atomic_int err;
	atomic_uint_fast64_t records, bytes, processes, threads, mmaps, vanished;
};

/* A participant's output buffer and scratch space. */
struct sink {
	struct run *run;
	char *buf;
	size_t len, cap;
	char *scratch;          /* /proc/PID/maps text */
	size_t scratch_cap;
	uint64_t records, processes, threads, mmaps, vanished;
	int err;
};

static void sink_free(struct sink *s)
{
	free(s->buf);
	free(s->scratch);
	s->buf = s->scratch = NULL;
	s->len = s->cap = s->scratch_cap = 0;
}

/* Room for size more bytes; returns a pointer to them (zeroed) or NULL (s->err = -ENOMEM). */
static void *sink_reserve(struct sink *s, size_t size)
{
	void *p;

	if (s->len + size > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		char *nb;

		while (cap < s->len + size)
			cap *= 2;
		nb = realloc(s->buf, cap);
		if (!nb) {
			s->err = -ENOMEM;
			return NULL;
		}
		s->buf = nb;
		s->cap = cap;
	}
	p = s->buf + s->len;
	memset(p, 0, size);
	s->len += size;
	s->records++;
	return p;
}

/* Hand the buffer to out() unless the run is ordered (then it is kept for the end). */
static int sink_flush(struct sink *s)
{
	struct run *r = s->run;
	int ret;

	if (s->err)
		return s->err;
	if (r->o->ordered || s->len == 0)
		return 0;
	ret = r->out(r->ctx, s->buf, s->len);
	if (ret < 0)
		s->err = ret;
	atomic_fetch_add(&r->bytes, s->len);
	s->len = 0;
	return ret < 0 ? ret : 0;
}

static size_t trailer_size(const struct perf_event_attr *attr)
{
	uint64_t st;
	size_t n = 0;

	if (!attr || !attr->sample_id_all)
		return 0;
	st = attr->sample_type;
	n += st & PERF_SAMPLE_TID ? 8 : 0;
	n += st & PERF_SAMPLE_TIME ? 8 : 0;
	n += st & PERF_SAMPLE_ID ? 8 : 0;
	n += st & PERF_SAMPLE_STREAM_ID ? 8 : 0;
	n += st & PERF_SAMPLE_CPU ? 8 : 0;
	n += st & PERF_SAMPLE_IDENTIFIER ? 8 : 0;
	return n;
}

/* The trailer, in the kernel's order (perf_event__output_id_sample). Time is always 0: time-0
 * records apply before any sample. */
static void put_trailer(const struct run *r, void *p, uint32_t pid, uint32_t tid)
{
	uint64_t *u = p;
	uint64_t st;

	if (!r->trailer)
		return;
	st = r->o->attr->sample_type;
	if (st & PERF_SAMPLE_TID)
		*u++ = (uint64_t)tid << 32 | pid;
	if (st & PERF_SAMPLE_TIME)
		*u++ = 0;
	if (st & PERF_SAMPLE_ID)
		*u++ = r->o->id;
	if (st & PERF_SAMPLE_STREAM_ID)
		*u++ = r->o->id;
	if (st & PERF_SAMPLE_CPU)
		*u++ = r->o->cpu;
	if (st & PERF_SAMPLE_IDENTIFIER)
		*u++ = r->o->id;
}

struct comm_body {
	uint32_t pid, tid;
};

static int emit_comm(struct sink *s, pid_t pid, pid_t tid, const char *comm)
{
	size_t clen = strnlen(comm, 15);
	size_t size = sizeof(struct perf_event_header) + sizeof(struct comm_body) + ALIGN8(clen + 1) +
		      s->run->trailer;
	char *p = sink_reserve(s, size);
	struct perf_event_header *h = (void *)p;
	struct comm_body *b;

	if (!p)
		return s->err;
	h->type = PERF_RECORD_COMM;
	h->size = size;
	b = (void *)(h + 1);
	b->pid = pid;
	b->tid = tid;
	memcpy(b + 1, comm, clen);
	put_trailer(s->run, p + size - s->run->trailer, pid, tid);
	s->threads++;
	return 0;
}

struct mmap2_body {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};

_Static_assert(sizeof(struct mmap2_body) == 64, "MMAP2 body layout");

struct map_line {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min, prot, flags;
	const char *name;
	size_t name_len;
};

static int emit_mmap2(struct sink *s, pid_t pid, const struct map_line *m)
{
	size_t size = sizeof(struct perf_event_header) + sizeof(struct mmap2_body) +
		      ALIGN8(m->name_len + 1) + s->run->trailer;
	char *p;
	struct perf_event_header *h;
	struct mmap2_body *b;

	if (size > PERF_RECORD_MAX_SIZE)
		return 0; /* a name no perf could read: leave the mapping out */
	p = sink_reserve(s, size);
	if (!p)
		return s->err;
	h = (void *)p;
	h->type = PERF_RECORD_MMAP2;
	h->misc = PERF_RECORD_MISC_USER;
	if (!(m->prot & PROT_EXEC))
		h->misc |= PERF_RECORD_MISC_MMAP_DATA;
	h->size = size;
	b = (void *)(h + 1);
	b->pid = pid;
	b->tid = pid;
	b->start = m->start;
	b->len = m->end - m->start;
	b->pgoff = m->pgoff;
	b->maj = m->maj;
	b->min = m->min;
	b->ino = m->ino;
	b->prot = m->prot;
	b->flags = m->flags;
	memcpy(b + 1, m->name, m->name_len);
	put_trailer(s->run, p + size - s->run->trailer, pid, pid);
	s->mmaps++;
	return 0;
}

static bool parse_hex(const char **p, uint64_t *ret)
{
	char *end;

	errno = 0;
	*ret = strtoull(*p, &end, 16);
	if (end == *p || errno)
		return false;
	*p = end;
	return true;
}

/* One line of /proc/PID/maps ("start-end perms offset maj:min inode   name"), without its
 * newline. Returns false for a line it cannot read. */
static bool parse_map_line(const char *l, const char *eol, struct map_line *m)
{
	uint64_t v;
	char *end;

	if (!parse_hex(&l, &m->start) || *l++ != '-' || !parse_hex(&l, &m->end) || *l++ != ' ')
		return false;
	if (eol - l < 5 || m->end < m->start)
		return false;
	m->prot = (l[0] == 'r' ? PROT_READ : 0) | (l[1] == 'w' ? PROT_WRITE : 0) |
		  (l[2] == 'x' ? PROT_EXEC : 0);
	m->flags = l[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	l += 4;
	if (*l++ != ' ' || !parse_hex(&l, &m->pgoff) || *l++ != ' ')
		return false;
	if (!parse_hex(&l, &v) || *l++ != ':')
		return false;
	m->maj = v;
	if (!parse_hex(&l, &v) || *l != ' ')
		return false;
	m->min = v;
	errno = 0;
	m->ino = strtoull(l, &end, 10);
	if (end == l || errno)
		return false;
	l = end;
	while (l < eol && *l == ' ')
		l++;
	m->name = l;
	m->name_len = eol - l;
	/* perf's names: no name is anonymous memory; hugetlbfs and SysV shm count as anonymous. */
	if (m->name_len == 0) {
		m->name = "//anon";
		m->name_len = 6;
	} else if ((m->name_len >= 14 && !strncmp(m->name, "/anon_hugepage", 14)) ||
		   (m->name_len >= 5 && !strncmp(m->name, "/SYSV", 5))) {
		m->name = "//anon";
		m->name_len = 6;
		m->flags |= MAP_HUGETLB;
	}
	return true;
}

/* Read a whole /proc file into s->scratch (NUL-terminated). Returns its length or -errno. */
static ssize_t read_proc_file(struct sink *s, const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return fileio__read_all(fd, &s->scratch, &s->scratch_cap, SIZE_MAX / 2);
}

/* Read one thread's comm into buf[16]. Returns 0 or -errno. */
static int read_comm(const char *proc, pid_t pid, const char *tid, char *buf)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/task/%s/comm", proc, pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, 15);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* All records of one process, appended to s. Returns 0, -ESRCH when the process vanished (its
 * records are rolled back), or s->err. */
static int synth_process(struct sink *s, pid_t pid)
{
	const struct run *r = s->run;
	size_t mark_len = s->len;
	uint64_t mark_records = s->records, mark_threads = s->threads, mark_mmaps = s->mmaps;
	char path[PATH_MAX], comm[16], pidstr[16];
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	ssize_t len;
	int ret;

	snprintf(path, sizeof(path), "%s/%d/task", r->proc, pid);
	d = opendir(path);
	if (!d) {
		ret = -errno;
		goto fail;
	}
	/* The main thread first, so the process has its name before any other record. */
	snprintf(pidstr, sizeof(pidstr), "%d", pid);
	ret = read_comm(r->proc, pid, pidstr, comm);
	if (ret < 0)
		goto fail;
	if (emit_comm(s, pid, pid, comm) < 0)
		return s->err;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0 || tid == pid)
			continue;
		/* A thread that exited meanwhile is just left out. */
		if (read_comm(r->proc, pid, de->d_name, comm) < 0)
			continue;
		if (emit_comm(s, pid, tid, comm) < 0)
			return s->err;
	}

	snprintf(path, sizeof(path), "%s/%d/maps", r->proc, pid);
	len = read_proc_file(s, path);
	if (len < 0) {
		ret = len;
		/* Not allowed to see the maps (another user's process, not root): names only. */
		if (ret == -EACCES || ret == -EPERM)
			len = 0;
		else if (ret == -ENOMEM)
			return s->err = ret;
		else
			goto fail;
	}
	/* scratch is NULL when nothing was read yet: no arithmetic on it then. */
	for (const char *l = s->scratch, *end = len > 0 ? s->scratch + len : l; l < end;) {
		const char *eol = memchr(l, '\n', end - l);
		struct map_line m;

		if (!eol)
			eol = end;
		if (parse_map_line(l, eol, &m) && (!r->o->exec_only || (m.prot & PROT_EXEC))) {
			if (emit_mmap2(s, pid, &m) < 0)
				return s->err;
		}
		l = eol + 1;
	}
	s->processes++;
	return 0;

fail:
	/* Gone, or unreadable in some other way: one process never stops the others. */
	if (ret == -ENOMEM)
		return s->err = ret;
	s->len = mark_len;
	s->records = mark_records;
	s->threads = mark_threads;
	s->mmaps = mark_mmaps;
	s->vanished++;
	return -ESRCH;
}

static void sink_account(struct run *r, struct sink *s)
{
	atomic_fetch_add(&r->records, s->records);
	atomic_fetch_add(&r->processes, s->processes);
	atomic_fetch_add(&r->threads, s->threads);
	atomic_fetch_add(&r->mmaps, s->mmaps);
	atomic_fetch_add(&r->vanished, s->vanished);
	s->records = s->processes = s->threads = s->mmaps = s->vanished = 0;
}

static void set_err(struct run *r, int err)
{
	int zero = 0;

	atomic_compare_exchange_strong(&r->err, &zero, err);
}

/* parallel_for body: pids [i * group, (i + 1) * group). */
static void synth_group(size_t i, void *ctx)
{
	struct run *r = ctx;
	struct sink local = { .run = r };
	struct sink *s = r->o->ordered ? &r->slots[i] : &local;
	size_t first = i * r->group, last = first + r->group;

	if (last > r->nr_pids)
		last = r->nr_pids;
	s->run = r;
	for (size_t k = first; k < last; k++) {
		if (atomic_load_explicit(&r->err, memory_order_relaxed))
			break;
		synth_process(s, r->pids[k]);
		if (s->err)
			break;
		if (s->len >= r->batch)
			sink_flush(s);
		if (s->err)
			break;
	}
	if (!s->err)
		sink_flush(s);
	if (s->err)
		set_err(r, s->err);
	sink_account(r, s);
	if (r->o->ordered) {
		free(s->scratch);
		s->scratch = NULL;
		s->scratch_cap = 0;
	} else {
		sink_free(s);
	}
}

static void run_init(struct run *r, const struct synth_opts *o, synth_output_fn out, void *ctx)
{
	memset(r, 0, sizeof(*r));
	r->o = o;
	r->proc = o->proc_root ? o->proc_root : "/proc";
	r->trailer = trailer_size(o->attr);
	r->batch = o->batch_size ? o->batch_size : DEFAULT_BATCH;
	r->out = out;
	r->ctx = ctx;
}

static void run_stats(struct run *r, struct synth_stats *ret)
{
	if (!ret)
		return;
	*ret = (struct synth_stats){
		.nr_records = atomic_load(&r->records),
		.nr_bytes = atomic_load(&r->bytes),
		.nr_processes = atomic_load(&r->processes),
		.nr_threads = atomic_load(&r->threads),
		.nr_mmaps = atomic_load(&r->mmaps),
		.nr_vanished = atomic_load(&r->vanished),
	};
}

int synthesize__pids(const struct synth_opts *opts, const pid_t *pids, size_t nr,
		     synth_output_fn out, void *ctx, struct synth_stats *ret_stats)
{
	static const struct synth_opts defaults;
	size_t nr_groups, participants;
	struct run r;
	int ret = 0;

	if (!out || (nr && !pids))
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	run_init(&r, opts, out, ctx);
	r.pids = pids;
	r.nr_pids = nr;
	/* Groups: about four per participant, so uneven processes even out, but at most 16 pids
	 * each, so no participant sits on a large batch while others idle. */
	participants = opts->wq ? wq__nr_workers(opts->wq) + 1 : 1;
	r.group = nr / (participants * 4);
	if (r.group == 0)
		r.group = 1;
	if (r.group > 16)
		r.group = 16;
	nr_groups = (nr + r.group - 1) / r.group;
	if (opts->ordered && nr_groups) {
		r.slots = calloc(nr_groups, sizeof(*r.slots));
		if (!r.slots)
			return -ENOMEM;
	}

	if (opts->wq) {
		ret = wq__parallel_for(opts->wq, nr_groups, 1, synth_group, &r);
	} else {
		for (size_t i = 0; i < nr_groups; i++)
			synth_group(i, &r);
	}
	if (ret == 0)
		ret = atomic_load(&r.err);

	if (r.slots) {
		for (size_t i = 0; i < nr_groups; i++) {
			struct sink *s = &r.slots[i];

			if (ret == 0 && s->len) {
				int o = out(ctx, s->buf, s->len);

				if (o < 0)
					ret = o;
				else
					atomic_fetch_add(&r.bytes, s->len);
			}
			sink_free(s);
		}
		free(r.slots);
	}
	run_stats(&r, ret_stats);
	return ret;
}

int synthesize__pid(const struct synth_opts *opts, pid_t pid, synth_output_fn out, void *ctx,
		    struct synth_stats *ret_stats)
{
	static const struct synth_opts defaults;
	struct synth_opts one;
	struct synth_stats st;
	int ret;

	if (pid <= 0)
		return -EINVAL;
	/* One process: no point in the pool, and ordered is then the same as not. */
	one = opts ? *opts : defaults;
	one.wq = NULL;
	ret = synthesize__pids(&one, &pid, 1, out, ctx, &st);
	if (ret == 0 && st.nr_vanished)
		ret = -ESRCH;
	if ((ret == 0 || ret == -ESRCH) && ret_stats)
		*ret_stats = st;
	return ret;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The pids in /proc, sorted. Returns the count or -errno. */
static ssize_t list_pids(const char *proc, pid_t **ret)
{
	_cleanup_(closedirp) DIR *d = opendir(proc);
	_cleanup_free_ pid_t *pids = NULL;
	size_t nr = 0, cap = 0;
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		if (nr == cap) {
			pid_t *np;

			cap = cap ? cap * 2 : 1024;
			np = realloc(pids, cap * sizeof(*pids));
			if (!np)
				return -ENOMEM;
			pids = np;
		}
		pids[nr++] = pid;
	}
	qsort(pids, nr, sizeof(*pids), cmp_pid);
	*ret = TAKE_PTR(pids);
	return nr;
}

int synthesize__all(const struct synth_opts *opts, synth_output_fn out, void *ctx,
		    struct synth_stats *ret_stats)
{
	_cleanup_free_ pid_t *pids = NULL;
	ssize_t nr;

	nr = list_pids(opts && opts->proc_root ? opts->proc_root : "/proc", &pids);
	if (nr < 0)
		return nr;
	return synthesize__pids(opts, pids, nr, out, ctx, ret_stats);
}

struct mmap_body {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
};

/* Address of _text and _etext from kallsyms. Returns 0, -ENOENT or -errno. */
static int kernel_text(const char *proc, uint64_t *ret_text, uint64_t *ret_etext)
{
	char path[PATH_MAX];
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	uint64_t text = 0, etext = 0;
	bool have_text = false;

	snprintf(path, sizeof(path), "%s/kallsyms", proc);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* Core kernel symbols come in address order: _etext closes the text, stop there. */
	while (getline(&line, &cap, f) > 0) {
		char *p = line, *name;
		uint64_t addr;

		if (!parse_hex((const char **)&p, &addr) || *p != ' ' || !p[1] || p[2] != ' ')
			continue;
		name = p + 3;
		name[strcspn(name, " \t\n")] = '\0';
		if (!strcmp(name, "_text")) {
			text = addr;
			have_text = true;
		} else if (!strcmp(name, "_etext")) {
			etext = addr;
			if (have_text)
				break;
		}
	}
	if (!have_text)
		return -ENOENT;
	if (text == 0)
		return -EACCES;
	*ret_text = text;
	*ret_etext = etext;
	return 0;
}

int synthesize__kernel_mmap(const struct synth_opts *opts, synth_output_fn out, void *ctx)
{
	static const struct synth_opts defaults;
	static const char name[] = "[kernel.kallsyms]_text";
	uint64_t text, etext;
	struct sink s = { 0 };
	struct run r;
	struct perf_event_header *h;
	struct mmap_body *b;
	size_t size;
	int ret;

	if (!out)
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	run_init(&r, opts, out, ctx);
	ret = kernel_text(r.proc, &text, &etext);
	if (ret < 0)
		return ret;
	s.run = &r;
	size = sizeof(*h) + sizeof(*b) + ALIGN8(sizeof(name)) + r.trailer;
	h = sink_reserve(&s, size);
	if (!h)
		return -ENOMEM;
	h->type = PERF_RECORD_MMAP;
	h->misc = PERF_RECORD_MISC_KERNEL;
	h->size = size;
	b = (void *)(h + 1);
	b->pid = (uint32_t)-1;
	b->tid = 0;
	b->start = text;
	/* Without _etext, the map runs to the top of the address space, as old perf did. */
	b->len = etext > text ? etext - text : ~0ULL - text;
	b->pgoff = text;
	memcpy(b + 1, name, sizeof(name));
	/* The trailer names the idle task, as perf's own synthesized kernel MMAP does. */
	put_trailer(&r, (char *)h + size - r.trailer, 0, 0);
	ret = out(ctx, s.buf, s.len);
	sink_free(&s);
	return ret < 0 ? ret : 0;
}

/* One PERF_RECORD_CGROUP per directory of the cgroup2 tree, depth first: a directory that
 * vanishes meanwhile is skipped. The walk holds an fd per level; depth is bounded by the
 * kernel's own cgroup nesting limits in practice and by MAX_CGROUP_DEPTH here. */
#define MAX_CGROUP_DEPTH 64

static int emit_cgroup(struct sink *s, const char *dir, const char *rel)
{
	size_t plen = strlen(rel) + 1;
	size_t size = sizeof(struct perf_event_header) + 8 + ALIGN8(plen) + s->run->trailer;
	struct perf_event_header *h;
	uint64_t id;

	if (size > UINT16_MAX || cgroupfs__id(dir, &id) < 0)
		return 0; /* too deep a path for a record, or gone */
	h = sink_reserve(s, size);
	if (!h)
		return -ENOMEM;
	h->type = PERF_RECORD_CGROUP;
	h->misc = 0;
	h->size = (uint16_t)size;
	memcpy(h + 1, &id, 8);
	memcpy((char *)(h + 1) + 8, rel, plen);
	put_trailer(s->run, (char *)h + size - s->run->trailer, 0, 0);
	return 0;
}

static int walk_cgroups(struct sink *s, char *path, size_t root_len, size_t len, int depth)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	int e = emit_cgroup(s, path, len == root_len ? "/" : path + root_len);

	if (e < 0 || depth >= MAX_CGROUP_DEPTH || !(d = opendir(path)))
		return e;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (de->d_type != DT_DIR || de->d_name[0] == '.' || len + 1 + n >= PATH_MAX)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		e = walk_cgroups(s, path, root_len, len + 1 + n, depth + 1);
		path[len] = 0;
		if (e < 0)
			return e;
	}
	return 0;
}

int synthesize__cgroups(const struct synth_opts *opts, const char *root, synth_output_fn out,
			void *ctx, uint64_t *ret_nr)
{
	static const struct synth_opts defaults;
	_cleanup_free_ char *path = malloc(PATH_MAX);
	struct sink s = { 0 };
	struct run r;
	size_t len;
	int ret;

	if (!out || !root)
		return -EINVAL;
	if (!path)
		return -ENOMEM;
	len = strlen(root);
	while (len > 1 && root[len - 1] == '/')
		len--;
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(path, root, len);
	path[len] = 0;
	run_init(&r, opts ? opts : &defaults, out, ctx);
	s.run = &r;
	ret = walk_cgroups(&s, path, len, len, 0);
	if (!ret && s.len)
		ret = out(ctx, s.buf, s.len);
	if (!ret && ret_nr)
		*ret_nr = s.records;
	sink_free(&s);
	return ret < 0 ? ret : 0;
}

/* --- bench ------------------------------------------------------------------------------ */

/* Running mean and variance (Welford); the error shown is that of the mean, as perf prints. */
struct stat_acc {
	unsigned int n;
	double mean, m2;
};

static void stat_add(struct stat_acc *a, double v)
{
	double d = v - a->mean;

	a->n++;
	a->mean += d / a->n;
	a->m2 += d * (v - a->mean);
}

static double stat_err(const struct stat_acc *a)
{
	if (a->n < 2)
		return 0;
	return sqrt(a->m2 / (a->n - 1) / a->n);
}

static int discard(void *ctx, const void *buf, size_t len)
{
	return 0;
}

/* Time iterations of one synthesis; all = every process, else this one. */
static int bench_run(const struct synth_opts *o, bool all, unsigned int iterations,
		     struct stat_acc *ret_time, struct stat_acc *ret_events)
{
	for (unsigned int i = 0; i < iterations; i++) {
		struct synth_stats st;
		double t0 = (double)clock__us();
		int ret = all ? synthesize__all(o, discard, NULL, &st)
			      : synthesize__pid(o, getpid(), discard, NULL, &st);

		if (ret < 0)
			return ret;
		stat_add(ret_time, (double)clock__us() - t0);
		stat_add(ret_events, st.nr_records);
	}
	return 0;
}

static void bench_print(FILE *out, const char *indent, const char *what,
			const struct stat_acc *t, const struct stat_acc *e)
{
	fprintf(out, "%sAverage %ssynthesis took: %.3f usec (+- %.3f usec)\n", indent, what,
		t->mean, stat_err(t));
	fprintf(out, "%sAverage num. events: %.3f (+- %.3f)\n", indent, e->mean, stat_err(e));
	fprintf(out, "%sAverage time per event %.3f usec\n", indent,
		e->mean > 0 ? t->mean / e->mean : 0.0);
}

int synthesize__bench(FILE *out, bool threads_mode, const struct synth_bench_opts *opts)
{
	static const struct synth_bench_opts defaults;
	unsigned int min, max;
	int ret;

	if (!out)
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	fprintf(out, "# Running 'synthesize' benchmark:\n");

	if (!threads_mode) {
		unsigned int it = opts->single_iterations ? opts->single_iterations : 10000;
		struct synth_opts o = { .exec_only = true };
		struct stat_acc t = { 0 }, e = { 0 };

		fprintf(out, "Computing performance of single threaded precord event synthesis by\n"
			     "synthesizing events on the precord process itself:\n");
		ret = bench_run(&o, false, it, &t, &e);
		if (ret < 0)
			return ret;
		bench_print(out, "  ", "", &t, &e);
		o.exec_only = false;
		t = (struct stat_acc){ 0 };
		e = (struct stat_acc){ 0 };
		ret = bench_run(&o, false, it, &t, &e);
		if (ret < 0)
			return ret;
		bench_print(out, "  ", "data ", &t, &e);
		return 0;
	}

	min = opts->min_threads ? opts->min_threads : 1;
	max = opts->max_threads;
	if (!max) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		max = n > 0 ? n : 1;
	}
	if (min > max)
		return -EINVAL;
	fprintf(out, "Computing performance of multi threaded precord event synthesis by\n"
		     "synthesizing events on every process:\n");
	for (unsigned int nt = min; nt <= max; nt++) {
		unsigned int it = opts->multi_iterations ? opts->multi_iterations : 10;
		struct synth_opts o = { 0 };
		struct stat_acc t = { 0 }, e = { 0 };
		struct wq *wq = NULL;

		/* nt threads in all: the caller takes part in parallel_for, so nt - 1 workers. */
		if (nt > 1) {
			struct wq_opts wo = { .nr_workers = nt - 1, .scope = TOPO_SCOPE_SYSTEM,
					      .name = "synbench" };

			wq = wq__new(&wo);
			if (!wq)
				return -errno;
		}
		o.wq = wq;
		ret = bench_run(&o, true, it, &t, &e);
		wq__free(wq);
		if (ret < 0)
			return ret;
		fprintf(out, "  Number of synthesis threads: %u\n", nt);
		bench_print(out, "    ", "", &t, &e);
	}
	return 0;
}
