/* The containers under a report: a string arena freed at once, an open-addressing index of ids
 * by hash whose equality is the caller's, hashes and array growth. Nothing here prints or knows
 * about perf. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "lib/cleanup.h"
#include "report/report_int.h"

/* ---- small building blocks: string arena, open-addressing index table ---------------------- */


char *rep_arena_strdup(struct arena *a, const char *s, size_t len)
{
	if (len + 1 > a->left) {
		size_t sz = len + 1 > 65536 ? len + 1 : 65536;
		char **nb = realloc(a->blocks, (a->nr_blocks + 1) * sizeof(*nb));
		if (!nb)
			return NULL;
		a->blocks = nb;
		a->cur = malloc(sz);
		if (!a->cur) {
			a->left = 0;
			return NULL;
		}
		a->blocks[a->nr_blocks++] = a->cur;
		a->left = sz;
	}
	char *p = a->cur;
	memcpy(p, s, len);
	p[len] = '\0';
	a->cur += len + 1;
	a->left -= len + 1;
	return p;
}

void rep_arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->nr_blocks; i++)
		free(a->blocks[i]);
	free(a->blocks);
}

/* Slots hold the full hash and id + 1 (0: empty); ids index an array owned by the user, which
 * also answers equality. Load stays below 1/2. */


int rep_htab_reserve(struct htab *t)
{
	if (t->slots && (t->nr + 1) * 2 <= t->mask + 1)
		return 0;
	uint32_t cap = t->slots ? (t->mask + 1) * 2 : 64;
	struct slot *ns = calloc(cap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	if (t->slots) {
		for (uint32_t i = 0; i <= t->mask; i++) {
			if (!t->slots[i].id1)
				continue;
			uint32_t j = t->slots[i].hash & (cap - 1);
			while (ns[j].id1)
				j = (j + 1) & (cap - 1);
			ns[j] = t->slots[i];
		}
		free(t->slots);
	}
	t->slots = ns;
	t->mask = cap - 1;
	return 0;
}

/* Finds the slot of the id equal to key, or the empty slot where it belongs. The table must
 * have been reserved. */
struct slot *rep_htab_probe(const struct htab *t, uint32_t h,
			       bool (*eq)(const void *ctx, uint32_t id, const void *key),
			       const void *ctx, const void *key)
{
	uint32_t j = h & t->mask;
	for (;;) {
		struct slot *s = &t->slots[j];
		if (!s->id1 || (s->hash == h && eq(ctx, s->id1 - 1, key)))
			return s;
		j = (j + 1) & t->mask;
	}
}

void rep_htab_set(struct htab *t, struct slot *s, uint32_t h, uint32_t id)
{
	s->hash = h;
	s->id1 = id + 1;
	t->nr++;
}

uint64_t rep_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint32_t rep_hash_words(const uint32_t *w, size_t n)
{
	/* two words per multiply-rotate step, one full mix at the end: this runs for every frame
	 * of every sample */
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	size_t i = 0;
	for (; i + 1 < n; i += 2) {
		h ^= ((uint64_t)w[i] | (uint64_t)w[i + 1] << 32) * 0x87c37b91114253d5ULL;
		h = ((h << 31) | (h >> 33)) * 0x4cf5ad432745937fULL;
	}
	if (i < n) {
		h ^= (uint64_t)w[i] * 0x87c37b91114253d5ULL;
		h = ((h << 31) | (h >> 33)) * 0x4cf5ad432745937fULL;
	}
	h = rep_mix64(h);
	return (uint32_t)(h ^ (h >> 32));
}

uint32_t rep_hash_str(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (uint32_t)(h ^ (h >> 32));
}

/* Grow *arr (of *cap elements of size sz) to hold n + 1. */
int rep_grow(void *arr, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	void *p = realloc(*(void **)arr, nc * sz);
	if (!p)
		return -ENOMEM;
	*(void **)arr = p;
	*cap = nc;
	return 0;
}
