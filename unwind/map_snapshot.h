/* Map snapshots: the memory maps of one process at one moment, as the machine (machine.h)
 * publishes them. A snapshot never changes once published (a change to the maps makes a new
 * one), so a sample holds a consistent view of its process while later records are applied;
 * get/put and every lookup are thread safe. Each snapshot also reaches the kernel's maps. */
#ifndef PRECORD_MAP_SNAPSHOT_H
#define PRECORD_MAP_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

struct map_snapshot;
struct dso;

struct map {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;	/* file offset of start */
	uint32_t prot;	/* PROT_*; MMAP records: PROT_EXEC unless MMAP_DATA */
	struct dso *dso;	/* never NULL; lives as long as the machine */
};

/* Errors: none of these fails; a lookup that finds nothing returns NULL. */

/* Another reference to s (NULL: returns NULL). */
struct map_snapshot *map_snapshot__get(struct map_snapshot *s);
/* Drop a reference; the last one frees. NULL is a no-op. */
void map_snapshot__put(struct map_snapshot *s);

/* The map holding addr (the process's, then the kernel's), or NULL. O(log n). */
const struct map *map_snapshot__find(const struct map_snapshot *s, uint64_t addr);

/* The process's own maps in address order (kernel maps excluded); map_snapshot__map returns
 * NULL for i out of range. */
size_t map_snapshot__nr(const struct map_snapshot *s);
const struct map *map_snapshot__map(const struct map_snapshot *s, size_t i);
/* The generation: it changes whenever code may have left an address range (see machine.h). */
uint64_t map_snapshot__gen(const struct map_snapshot *s);
/* The process (-1 for the kernel's own snapshot). */
int32_t map_snapshot__pid(const struct map_snapshot *s);
/* The dso kernel addresses resolve to when no kernel map holds them. */
struct dso *map_snapshot__kernel_dso(const struct map_snapshot *s);

#endif
