/* Map snapshots: a process's maps at one moment, a sorted array that never changes once
 * published, so workers read it without locks while the machine (machine.c) builds the next one.
 * Only the reference count is shared between threads: a get is relaxed, the put that frees is
 * acq_rel so that it follows every other holder's reads. A snapshot that nothing but its process
 * holds is not published: the machine edits it in place (edit_in_place), within room kept on
 * both sides of the array, instead of copying it once per mmap. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/machine_int.h"

struct map_snapshot *map_snapshot__alloc(size_t nr)
{
	/* aligned_alloc wants a multiple of the alignment */
	size_t size = (sizeof(struct map_snapshot) + nr * sizeof(struct map) + SNAPSHOT_LINE - 1) &
		      ~(size_t)(SNAPSHOT_LINE - 1);
	struct map_snapshot *s = aligned_alloc(SNAPSHOT_LINE, size);

	if (s) {
		memset(s, 0, sizeof(*s));
		atomic_init(&s->refs, 1);
		s->cap = nr;
		s->maps = s->buf;
	}
	return s;
}

struct map_snapshot *map_snapshot__get(struct map_snapshot *s)
{
	if (s)
		atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	return s;
}

void map_snapshot__put(struct map_snapshot *s)
{
	/* acq_rel: the last holder frees after every other holder's reads. */
	if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1) {
		map_snapshot__put(s->kernel);
		free(s);
	}
}

static const struct map *find_in(const struct map_snapshot *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct map *mp = &s->maps[mid];

		if (addr < mp->start)
			hi = mid;
		else if (addr >= mp->end)
			lo = mid + 1;
		else
			return mp;
	}
	return NULL;
}

const struct map *map_snapshot__find(const struct map_snapshot *s, uint64_t addr)
{
	const struct map *mp = find_in(s, addr);

	if (!mp && s->kernel)
		mp = find_in(s->kernel, addr);
	return mp;
}

size_t map_snapshot__nr(const struct map_snapshot *s)
{
	return s->nr;
}

const struct map *map_snapshot__map(const struct map_snapshot *s, size_t i)
{
	return i < s->nr ? &s->maps[i] : NULL;
}

uint64_t map_snapshot__gen(const struct map_snapshot *s)
{
	return s->gen;
}

int32_t map_snapshot__pid(const struct map_snapshot *s)
{
	return s->pid;
}

struct dso *map_snapshot__kernel_dso(const struct map_snapshot *s)
{
	return s->kernel_dso;
}

struct map_snapshot *map_snapshot__edit(const struct map_snapshot *old, uint64_t start,
					uint64_t end, const struct map *add, bool *ret_overlap)
{
	/* Cutting one map out of the middle can add one entry; the rest is room for edits in
	 * place, on both sides: mmap hands out addresses top down, so new maps mostly go in at the
	 * front. */
	struct map_snapshot *s = map_snapshot__alloc(old->nr + 2 + old->nr / 2);
	bool overlap = false;
	size_t i, n = 0;

	if (!s)
		return NULL;
	s->maps = s->buf + (s->cap - (old->nr + 2)) / 2;
	s->pid = old->pid;
	s->gen = old->gen;
	s->kernel = map_snapshot__get(old->kernel);
	s->kernel_dso = old->kernel_dso;
	for (i = 0; i < old->nr; i++) {
		const struct map *o = &old->maps[i];

		if (o->end <= start || o->start >= end) {
			s->maps[n++] = *o;
			continue;
		}
		overlap = true;
		if (o->start < start) {
			s->maps[n] = *o;
			s->maps[n++].end = start;
		}
		if (o->end > end) {
			s->maps[n] = *o;
			s->maps[n].start = end;
			s->maps[n++].pgoff = o->pgoff + (end - o->start);
		}
	}
	if (add) {
		/* Keep address order: find the slot (maps are disjoint from add by now). */
		size_t at = n;

		while (at > 0 && s->maps[at - 1].start > add->start)
			at--;
		memmove(&s->maps[at + 1], &s->maps[at], (n - at) * sizeof(struct map));
		s->maps[at] = *add;
		n++;
	}
	s->nr = n;
	*ret_overlap = overlap;
	return s;
}

/* Maps are sorted and disjoint, so those [start, end) overlaps are
 * consecutive: they give way to what remains of the first and the last and to add, and the
 * shorter side of the array moves. Returns false (s unchanged) when s lacks the room. */
bool map_snapshot__edit_in_place(struct map_snapshot *s, uint64_t start, uint64_t end,
				 const struct map *add, bool *ret_overlap)
{
	struct map mid[3];
	size_t lo = 0, hi, n = 0, l = s->nr, front, back;
	ptrdiff_t grow;

	while (lo < l) {          /* the first map ending after start */
		size_t m = lo + (l - lo) / 2;

		if (s->maps[m].end <= start)
			lo = m + 1;
		else
			l = m;
	}
	for (hi = lo; hi < s->nr && s->maps[hi].start < end; hi++)
		;
	if (lo < hi && s->maps[lo].start < start) {
		mid[n] = s->maps[lo];
		mid[n++].end = start;
	}
	if (add)
		mid[n++] = *add;
	if (lo < hi && s->maps[hi - 1].end > end) {
		mid[n] = s->maps[hi - 1];
		mid[n].start = end;
		mid[n++].pgoff = s->maps[hi - 1].pgoff + (end - s->maps[hi - 1].start);
	}
	front = (size_t)(s->maps - s->buf);
	back = s->cap - front - s->nr;
	grow = (ptrdiff_t)n - (ptrdiff_t)(hi - lo);
	if (!grow) {
		/* as many maps as before: nothing moves */
	} else if (grow < 0 ? lo < s->nr - hi :
			      (lo < s->nr - hi || back < (size_t)grow) && front >= (size_t)grow) {
		/* the maps before lo move, by grow to the left (-grow to the right) */
		memmove(s->maps - grow, s->maps, lo * sizeof(struct map));
		s->maps -= grow;
	} else if (back >= (size_t)(grow > 0 ? grow : 0)) {
		memmove(&s->maps[lo + n], &s->maps[hi], (s->nr - hi) * sizeof(struct map));
	} else {
		return false;
	}
	memcpy(&s->maps[lo], mid, n * sizeof(struct map));
	s->nr = (size_t)((ptrdiff_t)s->nr + grow);
	*ret_overlap = lo < hi;
	return true;
}
