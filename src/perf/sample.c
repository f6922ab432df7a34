/* Decoding of PERF_RECORD_SAMPLE bodies and of the sample_id trailer of other records, following
 * the field order of <linux/perf_event.h>. Every read goes through a cursor that knows how many
 * bytes of the record remain, so a hostile length can only produce -EBADMSG, never a read past the
 * record. Pointers handed out are 8-byte aligned whenever the record is: lengths that would break
 * that alignment (raw, user stack) are rejected, as the kernel never produces them. */
#include <errno.h>
#include <string.h>

#include "perf/sample.h"

struct cursor {
	const uint8_t *p;
	size_t left;
};

static int take_u64(struct cursor *c, uint64_t *ret)
{
	if (c->left < 8)
		return -EBADMSG;
	memcpy(ret, c->p, 8);
	c->p += 8;
	c->left -= 8;
	return 0;
}

/* Skip n u64 words (n may be hostile: checked before multiplying). */
static int skip_u64s(struct cursor *c, uint64_t n, const uint64_t **ret)
{
	if (n > c->left / 8)
		return -EBADMSG;
	if (ret)
		*ret = (const uint64_t *)c->p;
	c->p += n * 8;
	c->left -= n * 8;
	return 0;
}

static int skip_bytes(struct cursor *c, uint64_t n, const uint8_t **ret)
{
	if (n > c->left)
		return -EBADMSG;
	if (ret)
		*ret = c->p;
	c->p += n;
	c->left -= n;
	return 0;
}

static int take_pair_u32(struct cursor *c, uint32_t *a, uint32_t *b)
{
	uint64_t v;

	if (take_u64(c, &v) < 0)
		return -EBADMSG;
	*a = (uint32_t)v;
	*b = (uint32_t)(v >> 32);
	return 0;
}

static int skip_read_values(struct cursor *c, uint64_t read_format)
{
	uint64_t per_value = 1 + !!(read_format & PERF_FORMAT_ID) + !!(read_format & PERF_FORMAT_LOST);
	uint64_t times = !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t nr;

	if (!(read_format & PERF_FORMAT_GROUP))
		return skip_u64s(c, per_value + times, NULL);
	if (take_u64(c, &nr) < 0 || skip_u64s(c, times, NULL) < 0)
		return -EBADMSG;
	/* per_value <= 3, so nr * per_value only overflows when nr is absurd: check first. */
	if (nr > c->left / 8 / per_value)
		return -EBADMSG;
	return skip_u64s(c, nr * per_value, NULL);
}

/* The fixed-size fields up to the call chain, in the ABI's order. */
static int parse_fixed(const struct perf_event_attr *attr, struct cursor *c, struct perf_sample *ret)
{
	uint64_t type = attr->sample_type;
	uint64_t v;

	if ((type & PERF_SAMPLE_IDENTIFIER) && take_u64(c, &ret->id) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_IP) && take_u64(c, &ret->ip) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_TID) && take_pair_u32(c, &ret->pid, &ret->tid) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_TIME) && take_u64(c, &ret->time) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_ADDR) && take_u64(c, &ret->addr) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_ID) && take_u64(c, &ret->id) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_STREAM_ID) && take_u64(c, &v) < 0)
		return -EBADMSG;
	if (type & PERF_SAMPLE_CPU) {
		uint32_t res;

		if (take_pair_u32(c, &ret->cpu, &res) < 0)
			return -EBADMSG;
	}
	if ((type & PERF_SAMPLE_PERIOD) && take_u64(c, &ret->period) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_READ) && skip_read_values(c, attr->read_format) < 0)
		return -EBADMSG;
	if (type & PERF_SAMPLE_CALLCHAIN) {
		if (take_u64(c, &ret->callchain_nr) < 0 ||
		    skip_u64s(c, ret->callchain_nr, &ret->callchain) < 0)
			return -EBADMSG;
	}
	return 0;
}

/* Raw data, the branch stack, the user registers and the user stack. */
static int parse_variable(const struct perf_event_attr *attr, struct cursor *c, struct perf_sample *ret)
{
	uint64_t type = attr->sample_type;
	uint64_t v;

	if (type & PERF_SAMPLE_RAW) {
		uint32_t raw_size;

		if (c->left < 4)
			return -EBADMSG;
		memcpy(&raw_size, c->p, 4);
		/* The kernel pads raw data so that what follows stays u64-aligned. */
		if (((uint64_t)raw_size + 4) % 8 || skip_bytes(c, (uint64_t)raw_size + 4, &ret->raw) < 0)
			return -EBADMSG;
		ret->raw += 4;
		ret->raw_size = raw_size;
	}
	if (type & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr;

		if (take_u64(c, &nr) < 0)
			return -EBADMSG;
		if ((attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) && take_u64(c, &v) < 0)
			return -EBADMSG;
		/* Each entry is {from, to, flags}: three u64. */
		if (nr > c->left / 24 || skip_u64s(c, nr * 3, NULL) < 0)
			return -EBADMSG;
	}
	if (type & PERF_SAMPLE_REGS_USER) {
		if (take_u64(c, &ret->regs_abi) < 0)
			return -EBADMSG;
		if (ret->regs_abi) {
			ret->regs_mask = attr->sample_regs_user;
			if (skip_u64s(c, __builtin_popcountll(ret->regs_mask), &ret->regs) < 0)
				return -EBADMSG;
		}
	}
	if (type & PERF_SAMPLE_STACK_USER) {
		if (take_u64(c, &ret->stack_size) < 0)
			return -EBADMSG;
		if (ret->stack_size) {
			if (ret->stack_size % 8 || skip_bytes(c, ret->stack_size, &ret->stack) < 0 ||
			    take_u64(c, &ret->stack_dyn_size) < 0 ||
			    ret->stack_dyn_size > ret->stack_size)
				return -EBADMSG;
		}
	}
	return 0;
}

/* What follows the user stack, as far as the ABI defines it. */
static int parse_tail(const struct perf_event_attr *attr, struct cursor *c, struct perf_sample *ret)
{
	uint64_t type = attr->sample_type;
	uint64_t v;

	if ((type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) && take_u64(c, &v) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_DATA_SRC) && take_u64(c, &v) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_TRANSACTION) && take_u64(c, &v) < 0)
		return -EBADMSG;
	if (type & PERF_SAMPLE_REGS_INTR) {
		if (take_u64(c, &v) < 0)
			return -EBADMSG;
		if (v && skip_u64s(c, __builtin_popcountll(attr->sample_regs_intr), NULL) < 0)
			return -EBADMSG;
	}
	if ((type & PERF_SAMPLE_PHYS_ADDR) && take_u64(c, &v) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_CGROUP) && take_u64(c, &ret->cgroup) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_DATA_PAGE_SIZE) && take_u64(c, &v) < 0)
		return -EBADMSG;
	if ((type & PERF_SAMPLE_CODE_PAGE_SIZE) && take_u64(c, &v) < 0)
		return -EBADMSG;
	if (type & PERF_SAMPLE_AUX) {
		if (take_u64(c, &v) < 0 || skip_bytes(c, v, NULL) < 0)
			return -EBADMSG;
	}
	return 0;
}

int perf_sample__parse(const struct perf_event_attr *attr, const struct perf_event_header *rec,
		       struct perf_sample *ret)
{
	struct cursor c;

	if (rec->size < sizeof(*rec) || rec->type != PERF_RECORD_SAMPLE)
		return -EBADMSG;
	if (attr->sample_type & ~(uint64_t)(PERF_SAMPLE_MAX - 1))
		return -EPROTO; /* a field no kernel writes: its size, hence the layout, unknown */
	memset(ret, 0, sizeof(*ret));
	ret->hdr = rec;
	ret->cpumode = rec->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	/* without PERF_SAMPLE_PERIOD every sample stands for the attr's period (perf -c N), as
	 * perf's evsel__parse_sample has it; the field overwrites it when present */
	ret->period = attr->sample_period;
	c.p = (const uint8_t *)(rec + 1);
	c.left = rec->size - sizeof(*rec);
	if (parse_fixed(attr, &c, ret) < 0 || parse_variable(attr, &c, ret) < 0 ||
	    parse_tail(attr, &c, ret) < 0)
		return -EBADMSG;
	/* The kernel writes exactly the fields the attr asks for: bytes left over mean the attr
	 * describes another layout (a damaged attr), and every field read may be wrong. */
	return c.left ? -EMSGSIZE : 0;
}

struct perf_sample_place perf_sample__place(const struct perf_event_attr *attr, uint64_t bit)
{
	/* a sample's fields up to CPU, and the trailer's, in the kernel's order */
	static const uint64_t fields[] = { PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID,
					   PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
					   PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU };
	static const uint64_t trailer[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
					    PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
					    PERF_SAMPLE_IDENTIFIER };
	uint64_t type = attr->sample_type;
	struct perf_sample_place pl = { -1, 0 };
	size_t i, n;
	bool in_trailer = false;

	if (!(type & bit))
		return pl;
	for (i = 0, n = 0; i < sizeof(fields) / sizeof(fields[0]) && fields[i] != bit; i++)
		n += !!(type & fields[i]);
	if (i < sizeof(fields) / sizeof(fields[0]))
		pl.sample_off = (int)(8 + 8 * n);
	/* counted from the record's end: the field itself and those after it */
	for (i = sizeof(trailer) / sizeof(trailer[0]), n = 1; i > 0; i--) {
		if (trailer[i - 1] == bit) {
			in_trailer = true;
			break;
		}
		n += !!(type & trailer[i - 1]);
	}
	if (attr->sample_id_all && in_trailer)
		pl.id_back = (int)(8 * n);
	return pl;
}

int perf_sample__parse_id(const struct perf_event_attr *attr, const struct perf_event_header *rec,
			  struct perf_sample *ret)
{
	uint64_t type = attr->sample_type;
	size_t n = 0;
	struct cursor c;
	uint64_t v;

	if (rec->size < sizeof(*rec))
		return -EBADMSG;
	memset(ret, 0, sizeof(*ret));
	ret->cpumode = rec->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	if (!attr->sample_id_all)
		return 0;

	n += !!(type & PERF_SAMPLE_TID);
	n += !!(type & PERF_SAMPLE_TIME);
	n += !!(type & PERF_SAMPLE_ID);
	n += !!(type & PERF_SAMPLE_STREAM_ID);
	n += !!(type & PERF_SAMPLE_CPU);
	n += !!(type & PERF_SAMPLE_IDENTIFIER);
	if (n * 8 > rec->size - sizeof(*rec))
		return -EBADMSG;
	c.p = (const uint8_t *)rec + rec->size - n * 8;
	c.left = n * 8;

	/* The trailer's order differs from the sample's: identifier comes last, so that it sits at
	 * a fixed distance from the record's end. */
	if (type & PERF_SAMPLE_TID)
		take_pair_u32(&c, &ret->pid, &ret->tid);
	if (type & PERF_SAMPLE_TIME)
		take_u64(&c, &ret->time);
	if (type & PERF_SAMPLE_ID)
		take_u64(&c, &ret->id);
	if (type & PERF_SAMPLE_STREAM_ID)
		take_u64(&c, &v);
	if (type & PERF_SAMPLE_CPU) {
		uint32_t res;

		take_pair_u32(&c, &ret->cpu, &res);
	}
	if (type & PERF_SAMPLE_IDENTIFIER)
		take_u64(&c, &ret->id);
	return 0;
}

bool perf_sample__reg(const struct perf_sample *s, int reg, uint64_t *ret)
{
	uint64_t bit;

	if (!s->regs_abi || !s->regs || reg < 0 || reg >= 64)
		return false;
	bit = 1ULL << reg;
	if (!(s->regs_mask & bit))
		return false;
	*ret = s->regs[__builtin_popcountll(s->regs_mask & (bit - 1))];
	return true;
}
