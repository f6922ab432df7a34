/* The perf.data on-disk format as perf 6.1 reads it (see shared/reference/perf-data-format.md):
 * the file header, the user-space record types perf adds to the kernel's, and feature bits.
 * Kernel record types and perf_event_attr come from <linux/perf_event.h>. Little-endian only. */
#ifndef PRECORD_PERF_ABI_H
#define PRECORD_PERF_ABI_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#define PERF_MAGIC2 0x32454c4946524550ULL /* "PERFILE2" */
#define PERF_HEADER_SIZE 104
/* perf 6.1 refuses attrs larger than this ("incompatible file format"). */
#define PERF_FILE_ATTR_SIZE 128

struct perf_file_section {
	uint64_t offset;
	uint64_t size;
};

struct perf_file_header {
	uint64_t magic;
	uint64_t size;      /* PERF_HEADER_SIZE */
	uint64_t attr_size; /* attr.size + sizeof(struct perf_file_section) */
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types; /* unused: {0, 0} */
	uint64_t features[4];                 /* bit n = bit n%64 of word n/64 */
};

_Static_assert(sizeof(struct perf_file_header) == PERF_HEADER_SIZE, "perf header layout");

/* Whether the header's feature bit is set (its section is in the file). */
static inline bool perf_file_header__has_feat(const struct perf_file_header *h, int bit)
{
	return h->features[bit / 64] & (1ULL << (bit % 64));
}

/* The largest perf_event_attr any reader here takes (the attrs section, EVENT_DESC, a pipe's
 * HEADER_ATTR): far more than any kernel's, and a bound against a damaged size. */
#define PERF_ATTR_SIZE_MAX 4096

/* Records perf's tools add to the kernel's (types >= 64). */
enum perf_user_event_type {
	PERF_RECORD_USER_TYPE_START = 64,
	PERF_RECORD_HEADER_ATTR = 64,
	PERF_RECORD_HEADER_EVENT_TYPE = 65,
	PERF_RECORD_HEADER_TRACING_DATA = 66,
	PERF_RECORD_HEADER_BUILD_ID = 67,
	PERF_RECORD_FINISHED_ROUND = 68,
	PERF_RECORD_ID_INDEX = 69,
	PERF_RECORD_AUXTRACE_INFO = 70,
	PERF_RECORD_AUXTRACE = 71,
	PERF_RECORD_AUXTRACE_ERROR = 72,
	PERF_RECORD_THREAD_MAP = 73,
	PERF_RECORD_CPU_MAP = 74,
	PERF_RECORD_STAT_CONFIG = 75,
	PERF_RECORD_STAT = 76,
	PERF_RECORD_STAT_ROUND = 77,
	PERF_RECORD_EVENT_UPDATE = 78,
	PERF_RECORD_TIME_CONV = 79,
	PERF_RECORD_HEADER_FEATURE = 80,
	PERF_RECORD_COMPRESSED = 81,
	PERF_RECORD_FINISHED_INIT = 82,
	PERF_RECORD_HEADER_MAX
};

/* Feature bits (perf's HEADER_*). */
enum perf_feature {
	FEAT_TRACING_DATA = 1,
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CPUDESC = 8,
	FEAT_CPUID = 9,
	FEAT_TOTAL_MEM = 10,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_CPU_TOPOLOGY = 13,
	FEAT_NUMA_TOPOLOGY = 14,
	FEAT_BRANCH_STACK = 15,
	FEAT_PMU_MAPPINGS = 16,
	FEAT_GROUP_DESC = 17,
	FEAT_AUXTRACE = 18,
	FEAT_STAT = 19,
	FEAT_CACHE = 20,
	FEAT_SAMPLE_TIME = 21,
	FEAT_MEM_TOPOLOGY = 22,
	FEAT_CLOCKID = 23,
	FEAT_DIR_FORMAT = 24,
	FEAT_BPF_PROG_INFO = 25,
	FEAT_BPF_BTF = 26,
	FEAT_COMPRESSED = 27,
	FEAT_CPU_PMU_CAPS = 28,
	FEAT_CLOCK_DATA = 29,       /* struct perf_clock_ref, as perf record -k writes it */
	FEAT_HYBRID_TOPOLOGY = 30,
	FEAT_PMU_CAPS = 31,
	FEAT_LAST = 32,
	FEAT_BITS = 256
};

/* precord's trailer, after the last feature section: entries {u32 tag, u32 len, bytes, zeros to
 * a multiple of 8}, then u64 the entries' size and u64 PERF_TRAILER_MAGIC ("PRECTRL1"), the
 * file's last 8 bytes. perf finds its features through the index at the data's end and never
 * looks past them; precord's own data lives here rather than in feature bits above perf's,
 * which perf 6.1's reading skips but perf inject's writing indexes past its table (a crash). */
#define PERF_TRAILER_MAGIC 0x314c525443455250ULL

/* Largest record: the header's u16 size. */
#define PERF_RECORD_MAX_SIZE 65535
/* Largest zstd payload of one PERF_RECORD_COMPRESSED (size - header, kept a multiple of 8 below). */
#define PERF_COMPRESSED_MAX_PAYLOAD (65535 - 8)

/* x86-64 registers as perf numbers them (PERF_REG_X86_*), and the user mask perf records. */
enum perf_x86_reg {
	PERF_X86_AX, PERF_X86_BX, PERF_X86_CX, PERF_X86_DX, PERF_X86_SI, PERF_X86_DI,
	PERF_X86_BP, PERF_X86_SP, PERF_X86_IP, PERF_X86_FLAGS, PERF_X86_CS, PERF_X86_SS,
	PERF_X86_DS, PERF_X86_ES, PERF_X86_FS, PERF_X86_GS,
	PERF_X86_R8, PERF_X86_R9, PERF_X86_R10, PERF_X86_R11, PERF_X86_R12, PERF_X86_R13,
	PERF_X86_R14, PERF_X86_R15,
};
#define PERF_X86_REGS_USER_MASK 0xff0fffULL

/* CLOCK_DATA: the clock of every event's timestamps (attr.use_clockid, clockid) and the wall
 * clock read back to back with it, so that a sample's time converts to the time of day:
 * wall_ns + (time - clock_ns). On disk: u32 version (1), u32 clockid, u64 wall_ns, u64
 * clock_ns (perf's HEADER_CLOCK_DATA). */
struct perf_clock_ref {
	uint32_t clockid;
	uint64_t wall_ns;       /* CLOCK_REALTIME, ns since the epoch */
	uint64_t clock_ns;      /* clockid at the same moment */
};

#endif
