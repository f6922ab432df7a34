/* Decoders of perf.data feature sections (see feat_decode.h). Every read checks what is left of
 * the section first, so a damaged count or length ends a walk with -EBADMSG instead of reading
 * past the payload; the layouts are perf 6.1's (tools/perf/util/header.c, write_* functions). */
#include "perf/feat_decode.h"

#include <errno.h>
#include <string.h>

#include "perf/abi.h"

struct feat_cur feat_cur__new(const void *p, size_t len)
{
	return (struct feat_cur){ .p = p, .left = p ? len : 0 };
}

int feat_cur__skip(struct feat_cur *c, uint64_t n)
{
	if (n > c->left)
		return -EBADMSG;
	c->p += n;
	c->left -= n;
	return 0;
}

int feat_cur__u32(struct feat_cur *c, uint32_t *ret)
{
	if (c->left < 4)
		return -EBADMSG;
	memcpy(ret, c->p, 4);
	return feat_cur__skip(c, 4);
}

int feat_cur__u64(struct feat_cur *c, uint64_t *ret)
{
	if (c->left < 8)
		return -EBADMSG;
	memcpy(ret, c->p, 8);
	return feat_cur__skip(c, 8);
}

int feat_cur__string(struct feat_cur *c, const char **ret)
{
	struct feat_cur k = *c;
	uint32_t n;

	if (feat_cur__u32(&k, &n) < 0 || n > k.left || !memchr(k.p, 0, n))
		return -EBADMSG;
	*ret = (const char *)k.p;
	feat_cur__skip(&k, n);
	*c = k;
	return 0;
}

int feat_list__begin(struct feat_cur *c, const void *p, size_t len, uint32_t *ret_nr)
{
	*c = feat_cur__new(p, len);
	return feat_cur__u32(c, ret_nr);
}

/* EVENT_DESC: u32 nr, u32 attr size, then per event the attr (that many bytes, whatever its own
 * size field says, as perf reads it), u32 nr_ids, the name, the ids. */
int feat_event_desc__begin(struct feat_cur *c, const void *p, size_t len, uint32_t *ret_nr,
			   uint32_t *ret_attr_size)
{
	if (feat_list__begin(c, p, len, ret_nr) < 0 || feat_cur__u32(c, ret_attr_size) < 0 ||
	    *ret_attr_size < PERF_ATTR_SIZE_VER0 || *ret_attr_size > PERF_ATTR_SIZE_MAX)
		return -EBADMSG;
	return 0;
}

int feat_event_desc__next(struct feat_cur *c, uint32_t attr_size, struct feat_event_desc *ret)
{
	struct feat_cur k = *c;

	if (attr_size > k.left)
		return -EBADMSG;
	memset(ret, 0, sizeof(*ret));
	memcpy(&ret->attr, k.p, attr_size < sizeof(ret->attr) ? attr_size : sizeof(ret->attr));
	feat_cur__skip(&k, attr_size);
	if (feat_cur__u32(&k, &ret->nr_ids) < 0 || feat_cur__string(&k, &ret->name) < 0 ||
	    ret->nr_ids > k.left / 8)
		return -EBADMSG;
	ret->ids = k.p;
	feat_cur__skip(&k, 8 * (uint64_t)ret->nr_ids);
	*c = k;
	return 0;
}

uint64_t feat_event_desc__id(const struct feat_event_desc *d, uint32_t i)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)d->ids + 8 * (size_t)i, 8);
	return v;
}

int feat_pmu_mapping__next(struct feat_cur *c, uint32_t *ret_type, const char **ret_name)
{
	struct feat_cur k = *c;

	if (feat_cur__u32(&k, ret_type) < 0 || feat_cur__string(&k, ret_name) < 0)
		return -EBADMSG;
	*c = k;
	return 0;
}

int feat_group__next(struct feat_cur *c, struct feat_group *ret)
{
	struct feat_cur k = *c;

	if (feat_cur__string(&k, &ret->name) < 0 || feat_cur__u32(&k, &ret->leader_idx) < 0 ||
	    feat_cur__u32(&k, &ret->nr_members) < 0)
		return -EBADMSG;
	*c = k;
	return 0;
}

int feat_cap__next(struct feat_cur *c, const char **ret_name, const char **ret_value)
{
	struct feat_cur k = *c;

	if (feat_cur__string(&k, ret_name) < 0 || feat_cur__string(&k, ret_value) < 0)
		return -EBADMSG;
	*c = k;
	return 0;
}

/* BPF_BTF entry: u32 id, u32 data size, the data. */
int feat_btf__next(struct feat_cur *c, uint32_t *ret_id)
{
	struct feat_cur k = *c;
	uint32_t size;

	if (feat_cur__u32(&k, ret_id) < 0 || feat_cur__u32(&k, &size) < 0 ||
	    feat_cur__skip(&k, size) < 0)
		return -EBADMSG;
	*c = k;
	return 0;
}
