/* Inside the machine: the structures machine.c, dso.c and map_snapshot.c share, and the calls
 * each makes of the others. Not for use outside unwind/. */
#ifndef PRECORD_MACHINE_INT_H
#define PRECORD_MACHINE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/machine.h"

struct proc;
struct thread;
struct interned;
struct symtab;

struct dso {
	struct dso *next;	/* hash chain */
	struct machine *machine;
	char *name;
	enum dso_kind kind;
	uint8_t build_id[20];
	size_t build_id_len;
	pthread_mutex_t lock;
	atomic_bool elf_done;	/* release after elf is set; pairs with the acquire in dso__elf */
	struct elf_file *elf;
	int elf_err;	/* why elf is NULL (errno), set with it */
	uint32_t seq;	/* 1 + how many dsos the machine made before this one */
	bool announced;	/* given to on_new_file (by the thread applying records) */
};

/* refs has a cache line of its own: the reading thread gets and puts a reference for each
 * sample while the unwinding threads read the rest (sharing the line, each put took it away from
 * them). */
#define SNAPSHOT_LINE 64
struct map_snapshot {
	_Alignas(SNAPSHOT_LINE) atomic_long refs;
	_Alignas(SNAPSHOT_LINE) int32_t pid;
	uint64_t gen;
	struct map_snapshot *kernel;	/* NULL in the kernel's own snapshot */
	struct dso *kernel_dso;
	size_t nr, cap;
	struct map *maps;	/* nr maps in address order, inside buf: room on both sides */
	struct map buf[];	/* cap entries */
};

#define TABLE(type)                 \
	struct {                    \
		type **b;           \
		size_t nr_buckets;  \
		size_t nr;          \
	}

struct machine {
	struct elfcache *cache;
	bool own_cache;
	char *kallsyms;
	bool running_vdso;
	void (*on_new_file)(void *ctx, struct dso *d);
	void *ctx;
	pthread_mutex_t kallsyms_lock;
	atomic_bool kallsyms_done;
	struct symtab *kallsyms_tab;
	uint64_t next_gen;
	uint32_t next_serial;   /* of the next thread (machine__thread_comm) */
	struct map_snapshot *kernel;
	struct dso *kernel_dso;
	TABLE(struct proc) procs;
	TABLE(struct thread) threads;
	TABLE(struct dso) dsos;
	TABLE(struct interned) strings;
	/* Build ids from the file's BUILD_ID feature, by path, before their dsos exist. */
	TABLE(struct dso) pending_ids;
};

/* map_snapshot.c: an empty snapshot with room for nr maps and one reference. Returns NULL on
 * ENOMEM. */
struct map_snapshot *map_snapshot__alloc(size_t nr);

/* map_snapshot.c: a copy of old with [start, end) removed (maps cut around it) and, when add is
 * given, add inserted. *ret_overlap says whether anything was removed. Returns NULL on ENOMEM. */
struct map_snapshot *map_snapshot__edit(const struct map_snapshot *old, uint64_t start,
					uint64_t end, const struct map *add, bool *ret_overlap);

/* map_snapshot.c: the same edit made on s itself, for a snapshot nothing but its process holds.
 * Returns false (s unchanged) when s lacks the room; the copy is then the way. */
bool map_snapshot__edit_in_place(struct map_snapshot *s, uint64_t start, uint64_t end,
				 const struct map *add, bool *ret_overlap);

/* dso.c: a dso of m named name (its kind from the name; kernel: a kernel map), the seq-th the
 * machine makes. Returns NULL on ENOMEM. */
struct dso *dso__new(struct machine *m, const char *name, bool kernel, uint32_t seq);

/* dso.c: release its ELF file and free it. NULL is a no-op. */
void dso__free(struct dso *d);

#endif
