/* perf report --header-only's text (see header.h), line for line as perf 6.1 prints it
 * (tools/perf/util/header.c, print_* and perf_header__fprintf_info; perf_event_attr_fprintf.c
 * for the events). Each feature prints from the reader's parse or from its raw section through
 * perf/feat_decode; a feature whose section does not decode prints nothing, so a damaged file
 * still gets its other lines. */
#include "report/header.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf/abi.h"
#include "perf/feat_decode.h"
#include "perf/reader.h"

#define NSEC_PER_SEC ((uint64_t)1000000000)

/* perf's names of the feature bits, for "missing features" and the abbreviated lines. */
static const char *const feat_names[FEAT_LAST] = {
	[FEAT_TRACING_DATA] = "TRACING_DATA", [FEAT_BUILD_ID] = "BUILD_ID",
	[FEAT_HOSTNAME] = "HOSTNAME", [FEAT_OSRELEASE] = "OSRELEASE", [FEAT_VERSION] = "VERSION",
	[FEAT_ARCH] = "ARCH", [FEAT_NRCPUS] = "NRCPUS", [FEAT_CPUDESC] = "CPUDESC",
	[FEAT_CPUID] = "CPUID", [FEAT_TOTAL_MEM] = "TOTAL_MEM", [FEAT_CMDLINE] = "CMDLINE",
	[FEAT_EVENT_DESC] = "EVENT_DESC", [FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY",
	[FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY", [FEAT_BRANCH_STACK] = "BRANCH_STACK",
	[FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS", [FEAT_GROUP_DESC] = "GROUP_DESC",
	[FEAT_AUXTRACE] = "AUXTRACE", [FEAT_STAT] = "STAT", [FEAT_CACHE] = "CACHE",
	[FEAT_SAMPLE_TIME] = "SAMPLE_TIME", [FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
	[FEAT_CLOCKID] = "CLOCKID", [FEAT_DIR_FORMAT] = "DIR_FORMAT",
	[FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO", [FEAT_BPF_BTF] = "BPF_BTF",
	[FEAT_COMPRESSED] = "COMPRESSED", [FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
	[FEAT_CLOCK_DATA] = "CLOCK_DATA", [FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
	[FEAT_PMU_CAPS] = "PMU_CAPS",
};

/* ---- events: perf_event_attr__fprintf ---- */

struct bit_name {
	uint64_t bit;
	const char *name;
};

#define B(pfx, n) { pfx##n, #n }
static const struct bit_name sample_bits[] = {
	B(PERF_SAMPLE_, IP), B(PERF_SAMPLE_, TID), B(PERF_SAMPLE_, TIME), B(PERF_SAMPLE_, ADDR),
	B(PERF_SAMPLE_, READ), B(PERF_SAMPLE_, CALLCHAIN), B(PERF_SAMPLE_, ID),
	B(PERF_SAMPLE_, CPU), B(PERF_SAMPLE_, PERIOD), B(PERF_SAMPLE_, STREAM_ID),
	B(PERF_SAMPLE_, RAW), B(PERF_SAMPLE_, BRANCH_STACK), B(PERF_SAMPLE_, REGS_USER),
	B(PERF_SAMPLE_, STACK_USER), B(PERF_SAMPLE_, IDENTIFIER), B(PERF_SAMPLE_, REGS_INTR),
	B(PERF_SAMPLE_, DATA_SRC), B(PERF_SAMPLE_, WEIGHT), B(PERF_SAMPLE_, PHYS_ADDR),
	B(PERF_SAMPLE_, AUX), B(PERF_SAMPLE_, CGROUP), B(PERF_SAMPLE_, DATA_PAGE_SIZE),
	B(PERF_SAMPLE_, CODE_PAGE_SIZE), B(PERF_SAMPLE_, WEIGHT_STRUCT), { 0, NULL }
};
static const struct bit_name branch_bits[] = {
	B(PERF_SAMPLE_BRANCH_, USER), B(PERF_SAMPLE_BRANCH_, KERNEL), B(PERF_SAMPLE_BRANCH_, HV),
	B(PERF_SAMPLE_BRANCH_, ANY), B(PERF_SAMPLE_BRANCH_, ANY_CALL),
	B(PERF_SAMPLE_BRANCH_, ANY_RETURN), B(PERF_SAMPLE_BRANCH_, IND_CALL),
	B(PERF_SAMPLE_BRANCH_, ABORT_TX), B(PERF_SAMPLE_BRANCH_, IN_TX),
	B(PERF_SAMPLE_BRANCH_, NO_TX), B(PERF_SAMPLE_BRANCH_, COND),
	B(PERF_SAMPLE_BRANCH_, CALL_STACK), B(PERF_SAMPLE_BRANCH_, IND_JUMP),
	B(PERF_SAMPLE_BRANCH_, CALL), B(PERF_SAMPLE_BRANCH_, NO_FLAGS),
	B(PERF_SAMPLE_BRANCH_, NO_CYCLES), B(PERF_SAMPLE_BRANCH_, TYPE_SAVE),
	B(PERF_SAMPLE_BRANCH_, HW_INDEX), B(PERF_SAMPLE_BRANCH_, PRIV_SAVE), { 0, NULL }
};
static const struct bit_name read_bits[] = {
	B(PERF_FORMAT_, TOTAL_TIME_ENABLED), B(PERF_FORMAT_, TOTAL_TIME_RUNNING),
	B(PERF_FORMAT_, ID), B(PERF_FORMAT_, GROUP), B(PERF_FORMAT_, LOST), { 0, NULL }
};
#undef B

enum fmt { U, HEX, SIGNED, SAMPLE_BITS, BRANCH_BITS, READ_BITS };

/* ", name = value" for one non-zero field; bits perf has no name for are left out. */
static void attr_field(FILE *f, const char *name, uint64_t v, enum fmt fmt)
{
	const struct bit_name *bits = fmt == SAMPLE_BITS ? sample_bits :
				      fmt == BRANCH_BITS ? branch_bits : read_bits;
	const char *sep = "";

	if (!v)
		return;
	fprintf(f, ", %s = ", name);
	switch (fmt) {
	case U: fprintf(f, "%" PRIu64, v); return;
	case HEX: fprintf(f, "%#" PRIx64, v); return;
	case SIGNED: fprintf(f, "%" PRId64, (int64_t)v); return;
	default: break;
	}
	for (; bits->name; bits++)
		if (v & bits->bit) {
			fprintf(f, "%s%s", sep, bits->name);
			sep = "|";
		}
}

static void print_attr(FILE *f, const struct perf_event_attr *a)
{
	/* every field perf prints, in its order; the one-bit flags are unsigned numbers */
#define F(n, fmt) { #n, a->n, fmt }
#define FL(n) { #n, a->n, U }
	const struct { const char *name; uint64_t v; enum fmt fmt; } fields[] = {
		F(type, U), F(size, U), F(config, HEX),
		{ "{ sample_period, sample_freq }", a->sample_period, U },
		F(sample_type, SAMPLE_BITS), F(read_format, READ_BITS),
		FL(disabled), FL(inherit), FL(pinned), FL(exclusive), FL(exclude_user),
		FL(exclude_kernel), FL(exclude_hv), FL(exclude_idle), FL(mmap), FL(comm), FL(freq),
		FL(inherit_stat), FL(enable_on_exec), FL(task), FL(watermark), FL(precise_ip),
		FL(mmap_data), FL(sample_id_all), FL(exclude_host), FL(exclude_guest),
		FL(exclude_callchain_kernel), FL(exclude_callchain_user), FL(mmap2), FL(comm_exec),
		FL(use_clockid), FL(context_switch), FL(write_backward), FL(namespaces),
		FL(ksymbol), FL(bpf_event), FL(aux_output), FL(cgroup), FL(text_poke), FL(build_id),
		FL(inherit_thread), FL(remove_on_exec), FL(sigtrap),
		{ "{ wakeup_events, wakeup_watermark }", a->wakeup_events, U },
		F(bp_type, U),
		{ "{ bp_addr, config1 }", a->bp_addr, HEX },
		{ "{ bp_len, config2 }", a->bp_len, HEX },
		F(branch_sample_type, BRANCH_BITS), F(sample_regs_user, HEX),
		F(sample_stack_user, U), { "clockid", (uint64_t)(int64_t)a->clockid, SIGNED },
		F(sample_regs_intr, HEX), F(aux_watermark, U), F(sample_max_stack, U),
		F(aux_sample_size, U), F(sig_data, U),
	};
#undef FL
#undef F

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		attr_field(f, fields[i].name, fields[i].v, fields[i].fmt);
}

/* EVENT_DESC, read whole first: perf prints no event of a section it cannot read. Its events
 * end early at one whose attr size is 0 (perf's terminator). */
static void print_event_desc(FILE *f, const void *p, size_t len)
{
	struct feat_event_desc d;
	struct feat_cur c;
	uint32_t nr, sz, i;

	if (feat_event_desc__begin(&c, p, len, &nr, &sz) < 0)
		goto bad;
	for (i = 0; i < nr; i++)
		if (feat_event_desc__next(&c, sz, &d) < 0)
			goto bad;
	feat_event_desc__begin(&c, p, len, &nr, &sz);
	for (i = 0; i < nr; i++) {
		feat_event_desc__next(&c, sz, &d);
		if (!d.attr.size)
			break;
		fprintf(f, "# event : name = %s, ", d.name);
		if (d.nr_ids) {
			fprintf(f, ", id = {");
			for (uint32_t k = 0; k < d.nr_ids; k++)
				fprintf(f, "%s %" PRIu64, k ? "," : "", feat_event_desc__id(&d, k));
			fprintf(f, " }");
		}
		print_attr(f, &d.attr);
		fputc('\n', f);
	}
	return;
bad:
	fprintf(f, "# event desc: not available or unable to read\n");
}

/* ---- the other features ---- */

static void print_cmdline(FILE *f, const struct perf_reader_info *in)
{
	fprintf(f, "# cmdline : ");
	for (int i = 0; i < in->cmdline_argc; i++) {
		/* perf escapes single quotes as \' */
		for (const char *s = in->cmdline_argv[i]; *s; s++)
			fprintf(f, *s == '\'' ? "\\'" : "%c", *s);
		fputc(' ', f);
	}
	fputc('\n', f);
}

static void print_pmu_mappings(FILE *f, const void *p, size_t len)
{
	const char *sep = "# pmu mappings: ", *name;
	struct feat_cur c;
	uint32_t nr, type;

	if (feat_list__begin(&c, p, len, &nr) < 0)
		return;
	if (!nr) {
		fprintf(f, "# pmu mappings: not available\n");
		return;
	}
	for (uint32_t i = 0; i < nr; i++) {
		if (feat_pmu_mapping__next(&c, &type, &name) < 0) {
			if (i)
				fputc('\n', f);
			fprintf(f, "# pmu mappings: unable to read\n");
			return;
		}
		fprintf(f, "%s%s = %" PRIu32, sep, name, type);
		sep = ", ";
	}
	fputc('\n', f);
}

/* The groups over the attrs (evsels) in their order, as perf's process_group_desc rebuilds them:
 * true when the description fits them (every group led by the attr it names, in order, each
 * closed before the next). With f, their line as perf's print_group_desc prints it. */
static bool group_walk(FILE *f, const struct perf_reader *r, struct feat_cur c, uint32_t nr_groups)
{
	size_t n = perf_reader__nr_attrs(r);
	uint32_t gi = 0, left = 0;
	struct feat_group g;

	for (size_t i = 0; i < n; i++) {
		const char *name = perf_reader__attr(r, i)->name;
		struct feat_cur k = c;

		if (gi < nr_groups && feat_group__next(&k, &g) < 0)
			return false;
		if (gi < nr_groups && g.leader_idx == i) {
			if (left)
				return false;
			c = k;
			gi++;
			left = g.nr_members - 1; /* u32: a group of 0 never closes, as in perf */
			if (f && g.nr_members > 1)
				fprintf(f, "# group: %s{%s", strcmp(g.name, "{anon_group}") ? g.name : "",
					name ? name : "unknown");
		} else if (left) {
			if (f)
				fprintf(f, ",%s%s", name ? name : "unknown", left == 1 ? "}\n" : "");
			left--;
		}
	}
	return gi == nr_groups && !left;
}

static void print_group_desc(FILE *f, const struct perf_reader *r, const void *p, size_t len)
{
	struct feat_cur c;
	uint32_t nr_groups;

	if (feat_list__begin(&c, p, len, &nr_groups) == 0 && nr_groups &&
	    group_walk(NULL, r, c, nr_groups))
		group_walk(f, r, c, nr_groups);
}

/* perf's print_per_cpu_pmu_caps for one PMU whose capabilities c is at. */
static int print_caps(FILE *f, struct feat_cur *c, uint32_t nr, const char *pmu)
{
	struct feat_cur k = *c;
	const char *name, *value;

	for (uint32_t i = 0; i < nr; i++)
		if (feat_cap__next(&k, &name, &value) < 0)
			return -EBADMSG;
	if (!nr) {
		fprintf(f, "# %s pmu capabilities: not available\n", pmu);
		return 0;
	}
	fprintf(f, "# %s pmu capabilities: ", pmu);
	for (uint32_t i = 0; i < nr; i++) {
		feat_cap__next(c, &name, &value);
		fprintf(f, "%s%s=%s", i ? ", " : "", name, value);
	}
	fputc('\n', f);
	return 0;
}

static void print_cpu_pmu_caps(FILE *f, const void *p, size_t len)
{
	struct feat_cur c;
	uint32_t nr;

	if (feat_list__begin(&c, p, len, &nr) == 0)
		print_caps(f, &c, nr, "cpu");
}

/* PMU_CAPS: per PMU its capabilities, then its name (read ahead of them for the line). */
static void print_pmu_caps(FILE *f, const void *p, size_t len)
{
	struct feat_cur c;
	uint32_t nr_pmus, nr;

	if (feat_list__begin(&c, p, len, &nr_pmus) < 0)
		return;
	for (uint32_t i = 0; i < nr_pmus; i++) {
		struct feat_cur caps, k;
		const char *name, *value, *pmu;

		if (feat_cur__u32(&c, &nr) < 0)
			return;
		caps = k = c;
		for (uint32_t j = 0; j < nr; j++)
			if (feat_cap__next(&k, &name, &value) < 0)
				return;
		if (feat_cur__string(&k, &pmu) < 0 || print_caps(f, &caps, nr, pmu) < 0)
			return;
		c = k;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* BPF_BTF: perf keeps the BTFs in a tree by id (a repeated id once) and prints them in order.
 * The ids are sorted, not searched for one by one: a section of 200k entries took minutes. */
static void print_bpf_btf(FILE *f, const void *p, size_t len)
{
	struct feat_cur c;
	uint32_t nr, id, *ids;
	size_t n = 0;

	if (feat_list__begin(&c, p, len, &nr) < 0)
		return;
	/* each entry takes at least 8 bytes of the section: nr is bounded by it */
	ids = malloc(((size_t)nr < len / 8 ? (size_t)nr : len / 8) * sizeof(*ids) + 1);
	if (!ids)
		return;
	while (n < nr && n < len / 8 && feat_btf__next(&c, &id) == 0)
		ids[n++] = id;
	qsort(ids, n, sizeof(*ids), cmp_u32);
	for (size_t i = 0; i < n; i++)
		if (!i || ids[i] != ids[i - 1])
			fprintf(f, "# btf info of id %" PRIu32 "\n", ids[i]);
	free(ids);
}

static void print_sample_time(FILE *f, uint64_t first, uint64_t last)
{
	fprintf(f, "# time of first sample : %" PRIu64 ".%06" PRIu64 "\n", first / NSEC_PER_SEC,
		first % NSEC_PER_SEC / 1000);
	fprintf(f, "# time of last sample : %" PRIu64 ".%06" PRIu64 "\n", last / NSEC_PER_SEC,
		last % NSEC_PER_SEC / 1000);
	fprintf(f, "# sample duration : %10.3f ms\n", (double)(last - first) / 1e6);
}

/* perf's clockid_name: the first of its names for the clock. */
static const char *clock_name(uint32_t id)
{
	switch (id) {
	case CLOCK_MONOTONIC: return "monotonic";
	case CLOCK_MONOTONIC_RAW: return "monotonic_raw";
	case CLOCK_REALTIME: return "realtime";
	case CLOCK_BOOTTIME: return "boottime";
	case CLOCK_TAI: return "tai";
	default: return "(not found)";
	}
}

/* CLOCK_DATA, read raw: perf shows only version 1. */
static void print_clock_data(FILE *f, const void *p, size_t len)
{
	struct feat_cur c = feat_cur__new(p, len);
	uint32_t version, clockid;
	uint64_t tod, ref;
	char date[64] = "<error>";
	struct tm tm;
	time_t sec;

	if (feat_cur__u32(&c, &version) < 0 || version != 1 || feat_cur__u32(&c, &clockid) < 0 ||
	    feat_cur__u64(&c, &tod) < 0 || feat_cur__u64(&c, &ref) < 0) {
		fprintf(f, "# reference time disabled\n");
		return;
	}
	sec = (time_t)(tod / NSEC_PER_SEC);
	if (localtime_r(&sec, &tm)) {
		char day[48];

		strftime(day, sizeof(day), "%F %T", &tm);
		snprintf(date, sizeof(date), "%s.%06d", day, (int)(tod % NSEC_PER_SEC / 1000));
	}
	fprintf(f, "# clockid: %s (%u)\n", clock_name(clockid), clockid);
	fprintf(f, "# reference time: %s = %ld.%06d (TOD) = %ld.%09ld (%s)\n", date, (long)sec,
		(int)(tod % NSEC_PER_SEC / 1000), (long)(ref / NSEC_PER_SEC),
		(long)(ref % NSEC_PER_SEC), clock_name(clockid));
}

/* One feature's lines (perf's print_* for bit); nothing for those perf prints nothing for. */
static void print_feature(FILE *f, const struct perf_reader *r, int bit)
{
	const struct perf_reader_info *in = perf_reader__info(r);
	size_t len = 0;
	const void *p = perf_reader__feature(r, bit, &len);

	switch (bit) {
	case FEAT_HOSTNAME: fprintf(f, "# hostname : %s\n", in->hostname); break;
	case FEAT_OSRELEASE: fprintf(f, "# os release : %s\n", in->osrelease); break;
	case FEAT_VERSION: fprintf(f, "# perf version : %s\n", in->version); break;
	case FEAT_ARCH: fprintf(f, "# arch : %s\n", in->arch); break;
	case FEAT_NRCPUS:
		fprintf(f, "# nrcpus online : %u\n# nrcpus avail : %u\n", in->nr_cpus_online,
			in->nr_cpus_avail);
		break;
	case FEAT_CPUDESC: fprintf(f, "# cpudesc : %s\n", in->cpudesc); break;
	case FEAT_CPUID: fprintf(f, "# cpuid : %s\n", in->cpuid); break;
	case FEAT_TOTAL_MEM: fprintf(f, "# total memory : %" PRIu64 " kB\n", in->total_mem_kb); break;
	case FEAT_CMDLINE: print_cmdline(f, in); break;
	case FEAT_EVENT_DESC: print_event_desc(f, p, len); break;
	case FEAT_CPU_TOPOLOGY:
	case FEAT_NUMA_TOPOLOGY:
	case FEAT_CACHE:
	case FEAT_MEM_TOPOLOGY:
	case FEAT_HYBRID_TOPOLOGY:
		fprintf(f, "# %s info available, use -I to display\n", feat_names[bit]);
		break;
	case FEAT_BRANCH_STACK: fprintf(f, "# contains samples with branch stack\n"); break;
	case FEAT_PMU_MAPPINGS: print_pmu_mappings(f, p, len); break;
	case FEAT_GROUP_DESC: print_group_desc(f, r, p, len); break;
	case FEAT_AUXTRACE: fprintf(f, "# contains AUX area data (e.g. instruction trace)\n"); break;
	case FEAT_STAT: fprintf(f, "# contains stat data\n"); break;
	case FEAT_SAMPLE_TIME: print_sample_time(f, in->first_sample_time, in->last_sample_time); break;
	case FEAT_CLOCKID:
		fprintf(f, "# clockid frequency: %" PRIu64 " MHz\n", in->clockid_res_ns * 1000);
		break;
	case FEAT_BPF_BTF: print_bpf_btf(f, p, len); break;
	case FEAT_COMPRESSED:
		fprintf(f, "# compressed : %s, level = %d, ratio = %d\n",
			in->comp_type == 1 ? "Zstd" : "Unknown", (int)in->comp_level,
			(int)in->comp_ratio);
		break;
	case FEAT_CPU_PMU_CAPS: print_cpu_pmu_caps(f, p, len); break;
	case FEAT_CLOCK_DATA: print_clock_data(f, p, len); break;
	case FEAT_PMU_CAPS: print_pmu_caps(f, p, len); break;
	default: break; /* TRACING_DATA, BUILD_ID: nothing; BPF_PROG_INFO, DIR_FORMAT: not done */
	}
}

int report__fprintf_header(FILE *f, const struct perf_reader *r)
{
	const struct perf_file_header *h = perf_reader__header(r);
	bool pipe = perf_reader__warnings(r) & PERF_READER_W_PIPE;
	uint64_t doff = pipe ? 0 : h->data.offset, dsize = pipe ? 0 : h->data.size;
	time_t mtime = (time_t)perf_reader__mtime(r);
	char when[64];

	if (!ctime_r(&mtime, when))
		snprintf(when, sizeof(when), "(unknown)\n");
	fprintf(f, "# ========\n");
	fprintf(f, "# captured on    : %s", when);
	fprintf(f, "# header version : 1\n");
	fprintf(f, "# data offset    : %" PRIu64 "\n", doff);
	fprintf(f, "# data size      : %" PRIu64 "\n", dsize);
	fprintf(f, "# feat offset    : %" PRIu64 "\n", doff + dsize);
	/* a pipe's features come as records, which perf prints as it reads them: after the end */
	if (pipe)
		fprintf(f, "# ========\n#\n");
	for (int bit = 1; bit < FEAT_LAST; bit++) {
		if (perf_reader__has_feature(r, bit))
			print_feature(f, r, bit);
		else if (pipe && bit == FEAT_SAMPLE_TIME && perf_reader__info(r)->pipe_zero_sample_time)
			print_sample_time(f, 0, 0);
	}
	if (!pipe) {
		fprintf(f, "# missing features: ");
		for (int bit = 1; bit < FEAT_LAST; bit++)
			if (!perf_file_header__has_feat(h, bit))
				fprintf(f, "%s ", feat_names[bit]);
		fprintf(f, "\n# ========\n#\n");
	}
	return ferror(f) ? -EIO : 0;
}
