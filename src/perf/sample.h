/* A PERF_RECORD_SAMPLE decoded according to its attr's sample_type, and the sample_id trailer of
 * other records. Pointers point into the record, which must outlive the struct. */
#ifndef PRECORD_PERF_SAMPLE_H
#define PRECORD_PERF_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct perf_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id;
	uint32_t cpu;
	uint64_t period;            /* without PERF_SAMPLE_PERIOD: attr.sample_period, as perf */
	uint16_t cpumode;           /* misc & PERF_RECORD_MISC_CPUMODE_MASK */
	uint64_t callchain_nr;      /* 0 when absent */
	const uint64_t *callchain;  /* callchain_nr entries, PERF_CONTEXT_* markers included */
	uint64_t cgroup;            /* PERF_SAMPLE_CGROUP: the task's cgroup id (0: none) */
	uint32_t raw_size;          /* PERF_SAMPLE_RAW: tracepoint fields (0: none) */
	const uint8_t *raw;
	uint64_t regs_abi;          /* 0: no user registers */
	uint64_t regs_mask;         /* attr.sample_regs_user */
	const uint64_t *regs;       /* popcount(regs_mask) values, ascending bit order */
	uint64_t stack_size;        /* bytes copied (0: none) */
	const uint8_t *stack;
	uint64_t stack_dyn_size;    /* valid bytes of stack (<= stack_size) */
	int attr_index;             /* which attr of the file this sample belongs to */
	const struct perf_event_header *hdr; /* the record decoded (perf_sample__parse) */
};

/* Decode a PERF_RECORD_SAMPLE of size rec->size laid out for attr. Every field is bounds-checked
 * against the record, which must hold exactly the fields the attr asks for. Returns 0, or (the
 * struct is then undefined) -EBADMSG the record is shorter than the attr's layout or a field is
 * inconsistent, -EMSGSIZE it is longer, -EPROTO sample_type has bits no kernel defines. */
int perf_sample__parse(const struct perf_event_attr *attr, const struct perf_event_header *rec,
		       struct perf_sample *ret);

/* Decode the sample_id trailer of a non-sample record (sample_id_all). Fields absent from
 * sample_type are left zero. Returns 0 or -EBADMSG. */
int perf_sample__parse_id(const struct perf_event_attr *attr, const struct perf_event_header *rec,
			  struct perf_sample *ret);

/* Where field `bit` lies in the records laid out for attr, for readers that want one field of
 * every record without decoding it: bit is one of the fields a sample carries at a fixed place
 * (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU) that the sample_id trailer may carry too.
 * sample_off: its byte offset in a SAMPLE record, -1 when not sampled. id_back: bytes from the
 * end of any other record to it, 0 when that record has no sample_id or it is not in it. A
 * record must be checked to be long enough (sample_off + 8, or id_back + header). */
struct perf_sample_place {
	int sample_off;
	int id_back;
};
struct perf_sample_place perf_sample__place(const struct perf_event_attr *attr, uint64_t bit);

/* The field at place pl of a whole record (8 bytes there), or NULL when the record carries none
 * (or is too short for it). */
static inline const uint8_t *perf_sample__at(const struct perf_event_header *rec,
					    struct perf_sample_place pl)
{
	if (rec->type == PERF_RECORD_SAMPLE)
		return pl.sample_off >= 0 && (size_t)pl.sample_off + 8 <= rec->size ?
			       (const uint8_t *)rec + pl.sample_off : NULL;
	return pl.id_back && (size_t)pl.id_back + sizeof(*rec) <= rec->size ?
		       (const uint8_t *)rec + rec->size - pl.id_back : NULL;
}

/* Value of perf register reg (PERF_X86_*) in s, or false when it was not sampled. */
bool perf_sample__reg(const struct perf_sample *s, int reg, uint64_t *ret);

#endif
