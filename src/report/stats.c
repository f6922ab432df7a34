/* What --stats and perf's warnings print: records by type, per-event samples and lost samples,
 * precord's pause statistics. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "lib/cleanup.h"
#include "report/report_int.h"

/* ---- stats ------------------------------------------------------------------------------- */

static const char *record_name(unsigned int type)
{
	static const char *const names[] = {
		[0] = "TOTAL", [1] = "MMAP", [2] = "LOST", [3] = "COMM", [4] = "EXIT",
		[5] = "THROTTLE", [6] = "UNTHROTTLE", [7] = "FORK", [8] = "READ", [9] = "SAMPLE",
		[10] = "MMAP2", [11] = "AUX", [12] = "ITRACE_START", [13] = "LOST_SAMPLES",
		[14] = "SWITCH", [15] = "SWITCH_CPU_WIDE", [16] = "NAMESPACES", [17] = "KSYMBOL",
		[18] = "BPF_EVENT", [19] = "CGROUP", [20] = "TEXT_POKE",
		[21] = "AUX_OUTPUT_HW_ID", [64] = "ATTR", [65] = "EVENT_TYPE",
		[66] = "TRACING_DATA", [67] = "BUILD_ID", [68] = "FINISHED_ROUND",
		[69] = "ID_INDEX", [70] = "AUXTRACE_INFO", [71] = "AUXTRACE",
		[72] = "AUXTRACE_ERROR", [73] = "THREAD_MAP", [74] = "CPU_MAP",
		[75] = "STAT_CONFIG", [76] = "STAT", [77] = "STAT_ROUND", [78] = "EVENT_UPDATE",
		[79] = "TIME_CONV", [80] = "FEATURE", [81] = "COMPRESSED", [82] = "FINISHED_INIT",
	};
	return type < ARRAY_SIZE(names) ? names[type] : NULL;
}

int report__fprintf_preamble(const struct report *r, FILE *fp, uint64_t total_lost_samples)
{
	/* as perf: a line per sort key filtered down to one value, in the keys' order (whether
	 * or not its column is hidden: see rep_elided) */
	for (size_t i = 0; r && i < r->opts.nr_sort_keys; i++) {
		const char *label, *v = rep_single_value(&r->opts, r->opts.sort_keys[i], &label);

		if (v)
			fprintf(fp, "# %s: %s\n", label, v);
	}
	fprintf(fp, "#\n# Total Lost Samples: %" PRIu64 "\n#\n", total_lost_samples);
	return ferror(fp) ? -EIO : 0;
}

int report__fprintf_stats(FILE *fp, const struct report_stats *st)
{
	uint64_t total = 0;
	for (unsigned int t = 1; t < REPORT_NR_RECORD_TYPES; t++)
		total += st->nr_events[t];

	fprintf(fp, "\nAggregated stats:\n");
	fprintf(fp, "%16s events: %10" PRIu64 "\n", "TOTAL", total);
	for (unsigned int t = 1; t < REPORT_NR_RECORD_TYPES; t++) {
		const char *name = record_name(t);
		if (!st->nr_events[t])
			continue;
		char unknown[32];
		if (!name) {
			snprintf(unknown, sizeof(unknown), "TYPE_%u", t);
			name = unknown;
		}
		fprintf(fp, "%16s events: %10" PRIu64 "  (%4.1f%%)\n", name, st->nr_events[t],
			rep_pct(st->nr_events[t], total));
	}
	for (size_t i = 0; i < st->nr_events_stats; i++) {
		const struct report_event_stats *e = &st->events[i];
		fprintf(fp, "%s stats:\n", e->name ? e->name : "unknown");
		if (e->nr_samples)
			fprintf(fp, "%16s events: %10" PRIu64 "\n", "SAMPLE", e->nr_samples);
		if (e->nr_lost_samples)
			fprintf(fp, "%16s events: %10" PRIu64 "\n", "LOST_SAMPLES",
				e->nr_lost_samples);
	}
	const struct report_pause_stats *p = &st->pause;
	if (p->present) {
		/* precord --lossless: what the promise of zero loss cost the target. */
		fprintf(fp, "precord pause stats:\n");
		fprintf(fp, "%16s: %10" PRIu64 "\n", "pauses", p->nr_pauses);
		fprintf(fp, "%16s: %14.3f", "paused ms", (double)p->paused_ns / 1e6);
		if (p->recording_ns)
			fprintf(fp, "  (%4.1f%% of %.3f s)", rep_pct(p->paused_ns, p->recording_ns),
				(double)p->recording_ns / 1e9);
		fputc('\n', fp);
		fprintf(fp, "%16s: %14.3f\n", "longest ms", (double)p->longest_pause_ns / 1e6);
		if (p->mechanism && *p->mechanism)
			fprintf(fp, "%16s: %s\n", "mechanism", p->mechanism);
		if (p->nr_rings) {
			fprintf(fp, "%16s:", "pauses by ring");
			for (uint32_t i = 0; i < p->nr_rings; i++) {
				uint64_t v;

				memcpy(&v, (const uint8_t *)p->by_ring + 8 * (size_t)i, sizeof(v));
				fprintf(fp, " %" PRIu32 ":%" PRIu64, i, v);
			}
			fputc('\n', fp);
		}
	}
	return ferror(fp) ? -EIO : 0;
}

int report__fprintf_warnings(FILE *fp, const struct report_stats *st)
{
	uint64_t total = 0, lost_samples = st->total_lost_samples;
	int n = 0;
	for (unsigned int t = 1; t < REPORT_NR_RECORD_TYPES; t++)
		total += st->nr_events[t];
	if (st->nr_events[PERF_RECORD_LOST]) {
		fprintf(fp, "Warning:\nProcessed %" PRIu64 " events and lost %" PRIu64
			" chunks!\n\nCheck IO/CPU overload!\n\n", total,
			st->nr_events[PERF_RECORD_LOST]);
		n++;
	}
	if (lost_samples) {
		uint64_t nr = st->nr_events[PERF_RECORD_SAMPLE] + lost_samples;
		double rate = (double)lost_samples / (double)nr;
		if (rate > 0.05) {
			fprintf(fp, "Warning:\nProcessed %" PRIu64 " samples and lost %3.2f%%!\n\n",
				nr, rate * 100.0);
			n++;
		}
	}
	return ferror(fp) ? -EIO : n;
}
