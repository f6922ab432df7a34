/* Process/thread/map state for preport. Processes own a reference to their current snapshot;
 * a change to a snapshot that a sample in flight also holds builds a new snapshot and swaps it
 * in, so snapshots already handed to workers never change (copy on write: snapshots are small
 * sorted arrays, and copying one is cheaper than any finer-grained locking the parallel
 * unwinders would otherwise need); one only its process holds is edited in place. Only
 * refcounts and the lazily opened dso state are touched from several threads. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "unwind/elfcache.h"
#include "unwind/machine_int.h"
#include "unwind/symbols.h"

#define KERNEL_SPACE_START 0xffff800000000000ULL

struct proc {
	struct proc *next;
	int32_t pid;
	unsigned int nr_threads;
	const char *comm;
	struct map_snapshot *maps;
};

struct thread {
	struct thread *next;
	int32_t tid, pid;
	const char *comm;
	bool exited; /* kept for its comm: the kernel still samples a task after its EXIT */
	uint32_t serial; /* this thread of the tid (machine__thread_comm): a FORK of a tid seen
			  * before makes another thread, with a new serial */
	struct old_thread *older; /* the tid's threads before it, the latest first */
};

/* A thread a FORK of its tid replaced: its last name */
struct old_thread {
	struct old_thread *older;
	uint32_t serial;
	const char *comm;
};

struct interned {
	struct interned *next;
	char s[];
};

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static size_t hash_int(int32_t v)
{
	return (uint32_t)v * 2654435761U;
}

/* Generic chained-table helpers; next is the first member of every entry type. */
struct chain {
	struct chain *next;
};

static int table_init(void *table_, size_t n)
{
	TABLE(struct chain) *t = table_;

	t->b = calloc(n, sizeof(*t->b));
	t->nr_buckets = n;
	t->nr = 0;
	return t->b ? 0 : -ENOMEM;
}

static void table_insert(void *table_, void *entry, size_t hash, size_t (*rehash)(void *))
{
	TABLE(struct chain) *t = table_;
	struct chain *e = entry;

	if (t->nr >= t->nr_buckets * 2) {
		size_t n = t->nr_buckets * 2;
		struct chain **b = calloc(n, sizeof(*b));

		if (b) {	/* on ENOMEM keep the old buckets: slower, still correct */
			for (size_t i = 0; i < t->nr_buckets; i++) {
				struct chain *c = t->b[i], *next;

				for (; c; c = next) {
					size_t h = rehash(c) & (n - 1);

					next = c->next;
					c->next = b[h];
					b[h] = c;
				}
			}
			free(t->b);
			t->b = b;
			t->nr_buckets = n;
		}
	}
	hash &= t->nr_buckets - 1;
	e->next = t->b[hash];
	t->b[hash] = e;
	t->nr++;
}

static void table_remove(void *table_, void *entry, size_t hash)
{
	TABLE(struct chain) *t = table_;
	struct chain **pp = &t->b[hash & (t->nr_buckets - 1)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == entry) {
			*pp = (*pp)->next;
			t->nr--;
			return;
		}
	}
}

static size_t rehash_proc(void *e)
{
	return hash_int(((struct proc *)e)->pid);
}

static size_t rehash_thread(void *e)
{
	return hash_int(((struct thread *)e)->tid);
}

static size_t rehash_dso(void *e)
{
	return hash_str(((struct dso *)e)->name);
}

static size_t rehash_interned(void *e)
{
	return hash_str(((struct interned *)e)->s);
}

static const char *intern(struct machine *m, const char *s)
{
	size_t h = hash_str(s), len;
	struct interned *e;

	for (e = m->strings.b[h & (m->strings.nr_buckets - 1)]; e; e = e->next) {
		if (!strcmp(e->s, s))
			return e->s;
	}
	len = strlen(s);
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	memcpy(e->s, s, len + 1);
	table_insert(&m->strings, e, h, rehash_interned);
	return e->s;
}

/* --- dsos --- */

static struct dso *dso_find(struct machine *m, const char *name, bool kernel)
{
	size_t h = hash_str(name);
	struct dso *d;

	for (d = m->dsos.b[h & (m->dsos.nr_buckets - 1)]; d; d = d->next) {
		if (!strcmp(d->name, name))
			return d;
	}
	d = dso__new(m, name, kernel, (uint32_t)m->dsos.nr + 1);
	if (!d)
		return NULL;
	for (struct dso *p = m->pending_ids.b[h & (m->pending_ids.nr_buckets - 1)]; p; p = p->next) {
		if (!strcmp(p->name, name)) {
			memcpy(d->build_id, p->build_id, p->build_id_len);
			d->build_id_len = p->build_id_len;
		}
	}
	table_insert(&m->dsos, d, h, rehash_dso);
	return d;
}

/* --- machine --- */

struct machine *machine__new(const struct machine_opts *opts)
{
	struct machine *m = calloc(1, sizeof(*m));

	if (!m)
		goto nomem;
	pthread_mutex_init(&m->kallsyms_lock, NULL);
	atomic_init(&m->kallsyms_done, false);
	m->next_gen = 1;
	m->next_serial = 1;
	if (table_init(&m->procs, 64) || table_init(&m->threads, 64) ||
	    table_init(&m->dsos, 64) || table_init(&m->strings, 64) ||
	    table_init(&m->pending_ids, 16))
		goto nomem;
	if (opts && opts->elfcache) {
		m->cache = opts->elfcache;
	} else {
		struct elfcache_opts co = { .debug_dir = opts ? opts->debug_dir : NULL,
					    .symfs = opts ? opts->symfs : NULL };

		m->cache = elfcache__new(&co);
		m->own_cache = true;
		if (!m->cache)
			goto nomem;
	}
	m->running_vdso = opts && opts->running_vdso;
	if (opts) {
		m->on_new_file = opts->on_new_file;
		m->ctx = opts->ctx;
	}
	if (opts && opts->kallsyms && !(m->kallsyms = strdup(opts->kallsyms)))
		goto nomem;
	m->kernel_dso = dso_find(m, "[kernel.kallsyms]", true);
	m->kernel = map_snapshot__alloc(0);
	if (!m->kernel_dso || !m->kernel)
		goto nomem;
	m->kernel->pid = -1;
	m->kernel->gen = m->next_gen++;
	m->kernel->kernel_dso = m->kernel_dso;
	return m;
nomem:
	machine__free(m);
	errno = ENOMEM;
	return NULL;
}

static struct proc *proc_find(struct machine *m, int32_t pid)
{
	struct proc *p = m->procs.b[hash_int(pid) & (m->procs.nr_buckets - 1)];

	while (p && p->pid != pid)
		p = p->next;
	return p;
}

static struct thread *thread_find(struct machine *m, int32_t tid)
{
	struct thread *t = m->threads.b[hash_int(tid) & (m->threads.nr_buckets - 1)];

	while (t && t->tid != tid)
		t = t->next;
	return t;
}

static struct map_snapshot *empty_snapshot(struct machine *m, int32_t pid)
{
	struct map_snapshot *s = map_snapshot__alloc(0);

	if (!s)
		return NULL;
	s->pid = pid;
	s->gen = m->next_gen++;
	s->kernel = map_snapshot__get(m->kernel);
	s->kernel_dso = m->kernel_dso;
	return s;
}

static void proc_drop(struct machine *m, struct proc *p)
{
	table_remove(&m->procs, p, hash_int(p->pid));
	map_snapshot__put(p->maps);
	free(p);
}

/* Process pid, created empty when unknown. */
static struct proc *proc_get(struct machine *m, int32_t pid)
{
	struct proc *p = proc_find(m, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->maps = empty_snapshot(m, pid);
	if (!p->maps) {
		free(p);
		return NULL;
	}
	table_insert(&m->procs, p, hash_int(pid), rehash_proc);
	return p;
}

static struct thread *thread_get(struct machine *m, int32_t pid, int32_t tid)
{
	struct thread *t = thread_find(m, tid);
	struct proc *p;

	if (t && t->pid == pid && !t->exited)
		return t;
	p = proc_get(m, pid);
	if (!p)
		return NULL;
	if (t) {	/* tid reused (or learned late, or back after its EXIT): move it */
		struct proc *old = t->exited ? NULL : proc_find(m, t->pid);

		if (old && old->nr_threads)
			old->nr_threads--;
		t->pid = pid;
		t->exited = false;
		p->nr_threads++;
		return t;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->pid = pid;
	t->serial = m->next_serial++;
	p->nr_threads++;
	table_insert(&m->threads, t, hash_int(tid), rehash_thread);
	return t;
}

/* The build id a dso's file is opened by, while it is not open yet: under the dso's lock, as
 * dso__elf reads it (a thread loading ahead may be opening it now). */
static void set_dso_build_id(struct dso *d, const uint8_t *id, size_t len)
{
	if (len > sizeof(d->build_id))
		len = sizeof(d->build_id);
	if (atomic_load_explicit(&d->elf_done, memory_order_acquire))
		return;
	pthread_mutex_lock(&d->lock);
	if (!atomic_load_explicit(&d->elf_done, memory_order_relaxed)) {
		memcpy(d->build_id, id, len);
		d->build_id_len = len;
	}
	pthread_mutex_unlock(&d->lock);
}

int machine__set_build_id(struct machine *m, const char *path, const uint8_t *id, size_t len)
{
	size_t h = hash_str(path);
	struct dso *d;

	if (len > sizeof(d->build_id))
		len = sizeof(d->build_id);
	for (d = m->dsos.b[h & (m->dsos.nr_buckets - 1)]; d; d = d->next)
		if (!strcmp(d->name, path))
			set_dso_build_id(d, id, len);
	d = calloc(1, sizeof(*d));
	if (!d || !(d->name = strdup(path))) {
		free(d);
		return -ENOMEM;
	}
	memcpy(d->build_id, id, len);
	d->build_id_len = len;
	table_insert(&m->pending_ids, d, h, rehash_dso);
	return 0;
}

/* Edit the kernel snapshot or process p's: in place when nothing else holds it (acquire: pairs
 * with the release of the last worker's put, whose reads are then over), else into a copy. */
static int apply_edit(struct machine *m, struct map_snapshot **slot, uint64_t start, uint64_t end,
		      const struct map *add)
{
	bool overlap;
	struct map_snapshot *s;

	if (atomic_load_explicit(&(*slot)->refs, memory_order_acquire) == 1 &&
	    map_snapshot__edit_in_place(*slot, start, end, add, &overlap)) {
		if (overlap)	/* code may have left [start, end): address caches are stale */
			(*slot)->gen = m->next_gen++;
		return 0;
	}
	s = map_snapshot__edit(*slot, start, end, add, &overlap);

	if (!s)
		return -ENOMEM;
	if (overlap)	/* code may have left [start, end): address caches are stale */
		s->gen = m->next_gen++;
	map_snapshot__put(*slot);
	*slot = s;
	return 0;
}

int machine__mmap(struct machine *m, int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		  uint32_t prot, const char *filename, const uint8_t *build_id, size_t build_id_len)
{
	bool kernel = pid == -1 || start >= KERNEL_SPACE_START;
	struct map add = { .start = start, .end = start + len, .pgoff = pgoff, .prot = prot };
	char name[4096];
	struct proc *p;

	if (!len)
		return 0;
	if (add.end < start)	/* a kernel map "to the end of memory" wraps: clamp */
		add.end = UINT64_MAX;
	if (kernel) {
		/* "[kernel.kallsyms]_text" (and _stext) name the kernel image. */
		if (!strncmp(filename, "[kernel.kallsyms]", 17))
			filename = "[kernel.kallsyms]";
	}
	snprintf(name, sizeof(name), "%s", filename);
	add.dso = dso_find(m, name, kernel);
	if (!add.dso)
		return -ENOMEM;
	if (build_id && build_id_len && add.dso->kind == DSO_FILE)
		set_dso_build_id(add.dso, build_id, build_id_len);
	if (!kernel && (prot & PROT_EXEC) && add.dso->kind == DSO_FILE && !add.dso->announced &&
	    m->on_new_file) {
		add.dso->announced = true;
		m->on_new_file(m->ctx, add.dso);
	}
	if (kernel)
		return apply_edit(m, &m->kernel, add.start, add.end, &add);
	p = proc_get(m, pid);
	if (!p)
		return -ENOMEM;
	return apply_edit(m, &p->maps, add.start, add.end, &add);
}

int machine__munmap(struct machine *m, int32_t pid, uint64_t start, uint64_t len)
{
	struct proc *p = proc_get(m, pid);

	if (!p)
		return -ENOMEM;
	return apply_edit(m, &p->maps, start, start + len, NULL);
}

int machine__comm(struct machine *m, int32_t pid, int32_t tid, const char *comm, bool exec)
{
	struct thread *t = thread_get(m, pid, tid);
	struct proc *p = proc_find(m, pid);
	const char *s = intern(m, comm);

	if (!t || !p || !s)
		return -ENOMEM;
	t->comm = s;
	if (tid == pid || !p->comm)
		p->comm = s;
	if (exec) {
		/* perf keeps the maps across an exec (only flushing its unwinding caches): the new
		 * image's mappings replace what they overlap as they come, and a sample taken in
		 * execve after the exec's COMM still finds the old libc's execve at its user ip.
		 * A copy under a new generation: nothing cached for the old image applies. */
		bool overlap;
		struct map_snapshot *e = map_snapshot__edit(p->maps, 0, 0, NULL, &overlap);

		if (!e)
			return -ENOMEM;
		e->pid = pid;
		e->gen = m->next_gen++;
		map_snapshot__put(p->maps);
		p->maps = e;
		p->comm = s;
	}
	return 0;
}

int machine__fork(struct machine *m, int32_t pid, int32_t ppid, int32_t tid, int32_t ptid)
{
	struct thread *parent_t = thread_find(m, ptid);
	const char *comm = parent_t ? parent_t->comm : NULL;
	struct proc *p, *parent;
	struct thread *t;

	if (pid != ppid || !proc_find(m, pid)) {
		/* A new process: a fresh copy of the parent's maps with its own generation (the
		 * pid may be reused, and the child's caches must not see another's code). */
		struct map_snapshot *s;
		bool overlap;

		parent = proc_get(m, ppid);
		if (!parent)
			return -ENOMEM;
		if (!comm)
			comm = parent->comm;
		p = proc_find(m, pid);
		if (p && p != parent)
			proc_drop(m, p);	/* pid reused without an EXIT */
		s = map_snapshot__edit(parent->maps, 0, 0, NULL, &overlap);
		if (!s)
			return -ENOMEM;
		s->pid = pid;
		s->gen = m->next_gen++;
		p = proc_get(m, pid);
		if (!p) {
			map_snapshot__put(s);
			return -ENOMEM;
		}
		map_snapshot__put(p->maps);
		p->maps = s;
		p->comm = comm;
		p->nr_threads = 0;
	}
	if ((t = thread_find(m, tid))) {
		/* a FORK names a new thread: the tid is reused; the old one's last name stays */
		struct old_thread *o = malloc(sizeof(*o));

		if (!o)
			return -ENOMEM;
		*o = (struct old_thread){ t->older, t->serial, t->comm };
		t->older = o;
		t->serial = m->next_serial++;
	}
	t = thread_get(m, pid, tid);
	if (!t)
		return -ENOMEM;
	t->comm = comm;
	return 0;
}

int machine__exit(struct machine *m, int32_t pid, int32_t tid)
{
	struct thread *t = thread_find(m, tid);
	struct proc *p = proc_find(m, pid);

	bool was_live = t && !t->exited;

	if (was_live) {
		/* Kept, with its comm, as perf keeps dead threads: samples taken on the task's
		 * way out come after its EXIT and are still named after it. */
		t->exited = true;
		if (p && p->nr_threads)
			p->nr_threads--;
	}
	/* The process goes with its main thread, or with its last known thread (a process known
	 * only from its maps survives the exit of threads never seen). Samples already holding
	 * its snapshot keep that alive. */
	if (p && (tid == pid || (was_live && !p->nr_threads)))
		proc_drop(m, p);
	return 0;
}

const char *machine__thread_comm(struct machine *m, int32_t tid, uint32_t serial)
{
	struct thread *t = thread_find(m, tid);
	const char *first;

	if (!t)
		return NULL;
	if (t->serial == serial)
		return t->comm;
	/* serial 0, a tid no record had named when it was sampled: perf made its thread then,
	 * and the records that came later (a COMM) are that thread's: the tid's first one */
	first = t->comm;
	for (const struct old_thread *o = t->older; o; o = o->older) {
		if (o->serial == serial)
			return o->comm;
		first = o->comm;
	}
	return serial ? NULL : first;
}

const char *machine__comm_of(struct machine *m, int32_t pid, int32_t tid, uint32_t *ret_serial)
{
	struct thread *t = thread_find(m, tid);
	struct proc *p;

	if (ret_serial)
		*ret_serial = t ? t->serial : 0;
	if (t && t->comm)
		return t->comm;
	p = proc_find(m, pid);
	if (p && p->comm)
		return p->comm;
	/* No file names the idle task; perf calls it swapper. */
	return pid == 0 && tid == 0 ? "swapper" : NULL;
}

struct map_snapshot *machine__snapshot(struct machine *m, int32_t pid)
{
	struct proc *p = proc_get(m, pid);

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	if (p->maps->kernel != m->kernel) {
		/* The kernel's maps changed since: republish with the current ones. */
		bool overlap;
		struct map_snapshot *s = map_snapshot__edit(p->maps, 0, 0, NULL, &overlap);

		if (!s) {
			errno = ENOMEM;
			return NULL;
		}
		map_snapshot__put(s->kernel);
		s->kernel = map_snapshot__get(m->kernel);
		map_snapshot__put(p->maps);
		p->maps = s;
	}
	return map_snapshot__get(p->maps);
}

struct dso *machine__kernel_dso(struct machine *m)
{
	return m->kernel_dso;
}

/* Bounded string inside a record: NULL unless NUL-terminated before end. */
static const char *rec_str(const char *p, const char *end)
{
	return p < end && memchr(p, '\0', end - p) ? p : NULL;
}

int machine__process(struct machine *m, const struct perf_event_header *rec)
{
	const char *body = (const char *)(rec + 1), *end = (const char *)rec + rec->size;
	size_t len = rec->size >= sizeof(*rec) ? rec->size - sizeof(*rec) : 0;
	uint32_t u32[4];
	uint64_t u64[3];
	const char *name;

	switch (rec->type) {
	case PERF_RECORD_MMAP: {
		uint32_t prot = PROT_READ;

		if (len < 8 + 24 + 1)
			return -EBADMSG;
		memcpy(u32, body, 8);
		memcpy(u64, body + 8, 24);
		if (!(name = rec_str(body + 32, end)))
			return -EBADMSG;
		if (!(rec->misc & PERF_RECORD_MISC_MMAP_DATA))
			prot |= PROT_EXEC;
		if ((rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			u32[0] = (uint32_t)-1;
		return machine__mmap(m, (int32_t)u32[0], u64[0], u64[1], u64[2], prot, name, NULL,
				     0);
	}
	case PERF_RECORD_MMAP2: {
		uint8_t id[20];
		size_t id_len = 0;
		uint32_t prot;

		if (len < 8 + 24 + 24 + 8 + 1)
			return -EBADMSG;
		memcpy(u32, body, 8);
		memcpy(u64, body + 8, 24);
		if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			id_len = (uint8_t)body[32];
			if (id_len > sizeof(id))
				return -EBADMSG;
			memcpy(id, body + 36, id_len);
		}
		memcpy(&prot, body + 56, 4);
		if (!(name = rec_str(body + 64, end)))
			return -EBADMSG;
		if ((rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			u32[0] = (uint32_t)-1;
		return machine__mmap(m, (int32_t)u32[0], u64[0], u64[1], u64[2], prot, name,
				     id_len ? id : NULL, id_len);
	}
	case PERF_RECORD_COMM:
		if (len < 8 + 1)
			return -EBADMSG;
		memcpy(u32, body, 8);
		if (!(name = rec_str(body + 8, end)))
			return -EBADMSG;
		return machine__comm(m, (int32_t)u32[0], (int32_t)u32[1], name,
				     rec->misc & PERF_RECORD_MISC_COMM_EXEC);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (len < 16)
			return -EBADMSG;
		memcpy(u32, body, 16);
		if (rec->type == PERF_RECORD_FORK)
			return machine__fork(m, (int32_t)u32[0], (int32_t)u32[1], (int32_t)u32[2],
					     (int32_t)u32[3]);
		return machine__exit(m, (int32_t)u32[0], (int32_t)u32[2]);
	default:
		return 0;
	}
}

void machine__free(struct machine *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->procs.b && i < m->procs.nr_buckets; i++) {
		struct proc *p = m->procs.b[i], *next;

		for (; p; p = next) {
			next = p->next;
			map_snapshot__put(p->maps);
			free(p);
		}
	}
	for (size_t i = 0; m->threads.b && i < m->threads.nr_buckets; i++) {
		struct thread *t = m->threads.b[i], *next;

		for (; t; t = next) {
			next = t->next;
			while (t->older) {
				struct old_thread *o = t->older;

				t->older = o->older;
				free(o);
			}
			free(t);
		}
	}
	for (size_t i = 0; m->strings.b && i < m->strings.nr_buckets; i++) {
		struct interned *s = m->strings.b[i], *next;

		for (; s; s = next) {
			next = s->next;
			free(s);
		}
	}
	for (int k = 0; k < 2; k++) {
		TABLE(struct dso) *t = k ? (void *)&m->pending_ids : (void *)&m->dsos;

		for (size_t i = 0; t->b && i < t->nr_buckets; i++) {
			struct dso *d = t->b[i], *next;

			for (; d; d = next) {
				next = d->next;
				if (!k) {
					dso__free(d);
					continue;
				}
				free(d->name);	/* a pending build id: name and id only */
				free(d);
			}
		}
		free(t->b);
	}
	map_snapshot__put(m->kernel);
	symtab__free(m->kallsyms_tab);
	free(m->kallsyms);
	if (m->own_cache)
		elfcache__free(m->cache);
	pthread_mutex_destroy(&m->kallsyms_lock);
	free(m->procs.b);
	free(m->threads.b);
	free(m->strings.b);
	free(m);
}
