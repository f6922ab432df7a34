/* The machine: process, thread and memory-map state as the records of a perf.data describe it (COMM, MMAP,
 * MMAP2, FORK, EXIT), applied in time order by one thread. What samples need is published as
 * immutable, refcounted map snapshots: every change to a process's maps builds a new snapshot
 * (copy on write), so a sample holds a consistent view of its process at its time while the
 * records after it are applied and workers unwind in parallel.
 *
 * Threads share their process's maps; FORK of a new process copies the parent's; exec (COMM with
 * PERF_RECORD_MISC_COMM_EXEC) empties them; an MMAP over existing maps replaces the overlap (the
 * kernel records no munmap). Kernel maps (MMAP with pid -1) are shared by every process.
 * Each snapshot carries a generation: it changes whenever code may have left an address range
 * (exec, munmap, replacement, a new process), so per-process caches keyed by address (libunwind's)
 * know when to flush. Generations are unique across processes. */
#ifndef PRECORD_MACHINE_H
#define PRECORD_MACHINE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/dso.h"
#include "unwind/map_snapshot.h"

struct machine;
struct elfcache;

struct machine_opts {
	struct elfcache *elfcache;	/* shared file cache; NULL: the machine makes its own */
	const char *debug_dir;	/* for its own cache: NULL: /usr/lib/debug */
	const char *symfs;	/* for its own cache: perf's --symfs (elfcache_opts) */
	/* Kernel symbols from this kallsyms file, e.g. "/proc/kallsyms" when the recording was made
	 * on the running kernel (see kallsyms__matches_running()); NULL: kernel frames stay
	 * unsymbolized. */
	const char *kallsyms;
	/* The recording was made on the running kernel: [vdso] maps are read from this process's
	 * own vDSO (same kernel, same image), for unwinding and symbols. */
	bool running_vdso;
	/* Called on the thread applying records when a map first names a file with executable
	 * code: a chance to load its dso ahead on another thread (dso__preload). NULL: none. */
	void (*on_new_file)(void *ctx, struct dso *d);
	void *ctx;
};

/* Errors: the machine's calls return 0 or -errno (NULL with errno set); their only failures are
 * ENOMEM and, for a record, EBADMSG: nothing to explain beyond strerror. None prints. */

/* Returns NULL with errno ENOMEM. opts may be NULL. */
struct machine *machine__new(const struct machine_opts *opts);

/* Build id of a file as the BUILD_ID feature lists it (call before the maps naming it; ids
 * given later only affect files not yet opened). Returns 0 or -ENOMEM. */
int machine__set_build_id(struct machine *m, const char *path, const uint8_t *id, size_t len);

/* Apply one record: MMAP, MMAP2, COMM, FORK and EXIT change state, any other type is ignored.
 * Returns 0, -EBADMSG for a malformed record (nothing changed), -ENOMEM. Not thread safe, like
 * every machine__ call: one thread applies records and hands snapshots to workers. */
int machine__process(struct machine *m, const struct perf_event_header *rec);

/* The same changes, decoded. pid -1 (or kernel) maps go to the kernel's maps. build_id may be
 * NULL (MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID carries one). Each returns 0 or -ENOMEM. */
int machine__mmap(struct machine *m, int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		  uint32_t prot, const char *filename, const uint8_t *build_id, size_t build_id_len);
int machine__munmap(struct machine *m, int32_t pid, uint64_t start, uint64_t len);
int machine__comm(struct machine *m, int32_t pid, int32_t tid, const char *comm, bool exec);
int machine__fork(struct machine *m, int32_t pid, int32_t ppid, int32_t tid, int32_t ptid);
/* Always 0. */
int machine__exit(struct machine *m, int32_t pid, int32_t tid);

/* Current command name of thread tid (of its process when the thread is unknown), interned:
 * valid until machine__free. The idle task (pid and tid 0) is "swapper", as perf names it.
 * NULL when neither is known (never an error). *ret_serial (when not NULL): which thread of
 * the tid this is (a FORK of a tid seen before makes another, as in perf), 0 when no record
 * named the tid. */
const char *machine__comm_of(struct machine *m, int32_t pid, int32_t tid, uint32_t *ret_serial);

/* The name thread serial of tid (machine__comm_of's) has now: after the pass, its last in the
 * recording; for serial 0 (no record named the tid when it was sampled) the tid's first
 * thread's, which records named later. NULL when unknown. */
const char *machine__thread_comm(struct machine *m, int32_t tid, uint32_t serial);

/* A new reference to process pid's current maps (an empty process is created for an unknown
 * pid, so kernel maps still resolve). Returns NULL with errno ENOMEM. */
struct map_snapshot *machine__snapshot(struct machine *m, int32_t pid);

/* The dso kernel addresses resolve to when no kernel map holds them. Never NULL. */
struct dso *machine__kernel_dso(struct machine *m);

/* Frees everything; every snapshot must have been put. NULL is a no-op. */
void machine__free(struct machine *m);

#endif
