/* Decoders of perf.data feature sections, over the raw payloads perf_reader__feature() returns:
 * a bounds-checked cursor for perf's encodings, and walks over the list features (EVENT_DESC,
 * PMU_MAPPINGS, GROUP_DESC, the PMU capabilities, BPF_BTF). Nothing is copied or allocated:
 * strings and ids point into the payload, so they live as long as it; a string must end inside
 * its section (a damaged one stops the walk with -EBADMSG rather than read past it). */
#ifndef PRECORD_PERF_FEAT_DECODE_H
#define PRECORD_PERF_FEAT_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* Where a walk is in a section; zero-initialised it is an empty one. */
struct feat_cur {
	const uint8_t *p;
	uint64_t left;
};

struct feat_cur feat_cur__new(const void *p, size_t len);
/* Each returns 0 or -EBADMSG (not enough bytes left), moving past what it read only on success. */
int feat_cur__u32(struct feat_cur *c, uint32_t *ret);
int feat_cur__u64(struct feat_cur *c, uint64_t *ret);
int feat_cur__skip(struct feat_cur *c, uint64_t n);
/* perf's string: u32 len (NUL and padding included), then len bytes; *ret points at them. Also
 * -EBADMSG when no NUL lies within the len bytes. */
int feat_cur__string(struct feat_cur *c, const char **ret);

/* One event of EVENT_DESC, as perf's header printout reads it (its own attr copy, not the attrs
 * section's). */
struct feat_event_desc {
	struct perf_event_attr attr;  /* the on-disk attr, cut or zero-extended to ours */
	const char *name;
	uint32_t nr_ids;
	const void *ids;              /* nr_ids u64 (unaligned): feat_event_desc__id */
};

/* Start a walk over EVENT_DESC: *ret_nr events of *ret_attr_size bytes of attr each follow.
 * Returns 0 or -EBADMSG (also for an attr size under PERF_ATTR_SIZE_VER0 or over
 * PERF_ATTR_SIZE_MAX). */
int feat_event_desc__begin(struct feat_cur *c, const void *p, size_t len, uint32_t *ret_nr,
			   uint32_t *ret_attr_size);
/* The next event. Returns 0 or -EBADMSG. */
int feat_event_desc__next(struct feat_cur *c, uint32_t attr_size, struct feat_event_desc *ret);
uint64_t feat_event_desc__id(const struct feat_event_desc *d, uint32_t i);

/* PMU_MAPPINGS, GROUP_DESC, CPU_PMU_CAPS and BPF_BTF open with a u32 count: the number of
 * entries (or capabilities) that follow. Returns 0 or -EBADMSG. */
int feat_list__begin(struct feat_cur *c, const void *p, size_t len, uint32_t *ret_nr);
/* PMU_MAPPINGS: one {type, name}. Returns 0 or -EBADMSG. */
int feat_pmu_mapping__next(struct feat_cur *c, uint32_t *ret_type, const char **ret_name);

struct feat_group {
	const char *name;             /* "{anon_group}" for a group without a name */
	uint32_t leader_idx;          /* attr index of its leader */
	uint32_t nr_members;
};
/* GROUP_DESC: the next group. Returns 0 or -EBADMSG. */
int feat_group__next(struct feat_cur *c, struct feat_group *ret);

/* One capability of CPU_PMU_CAPS or PMU_CAPS: {name, value}. Returns 0 or -EBADMSG. */
int feat_cap__next(struct feat_cur *c, const char **ret_name, const char **ret_value);
/* PMU_CAPS opens with the number of PMUs; each is a u32 count of capabilities, the
 * capabilities (feat_cap__next), then the PMU's name (feat_cur__string). */

/* BPF_BTF: the next BTF's id, its data skipped. Returns 0 or -EBADMSG. */
int feat_btf__next(struct feat_cur *c, uint32_t *ret_id);

#endif
