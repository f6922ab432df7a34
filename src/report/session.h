/* A report session: the report side's counterpart of the record session. It opens a perf.data,
 * runs one time-ordered pass (maps per process, samples batched with a snapshot of their maps,
 * unwound and symbolized on every worker of a workqueue) and hands each resolved sample, in time
 * order, to the sinks added to it (aggregation, folded stacks, flame graph, pprof, ...). Record
 * counts for the header and the warnings come from the same pass. preport and precordd share it. */
#ifndef PRECORD_REPORT_SESSION_H
#define PRECORD_REPORT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/reader.h"
#include "perf/sample.h"
#include "report/timerange.h"
#include "unwind/machine.h"
#include "unwind/unwinder.h"

struct report_session;

/* preport --unwind-to's private section of its copies (the trailer's, which perf never reads;
 * precord's are 250 and 251: perf/pause_stats.h, perf/ring_order.h): the user part of the
 * copy's call chains was unwound from DWARF stacks, so the session shows the functions inlined
 * at those frames as in the original (perf 6.1 shows them only in stacks it unwinds itself,
 * not in the copy). Payload: u32 version (1). */
#define REPORT_UNWOUND_TAG 252

struct report_session_opts {
	unsigned int jobs;        /* threads that unwind, the caller's included; 0: online CPUs */
	int max_stack;            /* perf's --max-stack: at most this many frames of a recorded
				   * chain and as many unwound from a user stack; 0: 127 */
	bool outermost;           /* caller order: a recorded chain's outermost max_stack frames
				   * are kept, as perf keeps them, not its innermost */
	/* Samples on other CPUs are dropped (not counted at all). */
	const int32_t *cpus;
	size_t nr_cpus;
	/* Samples of other pids / tids / comms are delivered with filtered set and only their
	 * sampled ip (not unwound): perf counts them in the totals but shows no row. */
	const int32_t *pids, *tids;
	size_t nr_pids, nr_tids;
	const char *const *comms;
	size_t nr_comms;
	/* ... and of other cgroups: each entry a cgroup path or a unit name (preport --cgroup) */
	const char *const *cgroups;
	size_t nr_cgroups;
	/* Only samples with a time in one of these ranges (see timerange.h); nr 0: all. The
	 * array must outlive the session. */
	const struct time_range *times;
	size_t nr_times;
	/* Passed to the reader (see perf_reader_opts). */
	size_t ordered_max_bytes;
	/* perf's --symfs: the recording's files are looked for under this directory (see
	 * elfcache_opts); NULL: where the recording names them. */
	const char *symfs;
	/* perf's --kallsyms: the kernel's symbols from this file, whatever kernel made the
	 * recording; NULL: /proc/kallsyms when it did the running one, else none. */
	const char *kallsyms;
	/* Frames carry addresses only (unwinder__set_addresses_only): no symbol lookups. */
	bool addresses_only;
	/* perf's --hide-unresolved: a sample whose own ip no symbol holds is not delivered (it
	 * counts nowhere, as in perf), and the others reach the sinks without the frames no
	 * symbol holds. */
	bool hide_unresolved;
	/* The sinks ask for inlined frames or source lines: with more than one thread, the DWARF
	 * of the first files the maps name is opened ahead of the pass, beside their symbols. */
	bool prefetch_dwarf;
	/* The sinks read each sample's own ip alone (perf without call chains: no Children, no
	 * graph, no parent, no --ignore-callees): nothing is unwound, and every sample is delivered
	 * with one frame, its resolved ip. */
	bool self_only;
};

/* One resolved sample, valid during the sink's call only. */
struct report_session_sample {
	size_t attr;                        /* event index in the file */
	const struct perf_sample *raw;      /* the decoded record */
	const char *comm;                   /* ":TID" when no COMM named the thread, as perf */
	uint32_t thread;                    /* which thread of the tid: a FORK of a tid seen
					     * before makes another, as in perf; 0 when no record
					     * named the tid (report_session__comm) */
	const char *cgroup;                 /* the cgroup path (PERF_SAMPLE_CGROUP and the file's
					     * CGROUP records); "unknown" for an id no record named,
					     * NULL when the samples carry no cgroup */
	int32_t cpu;                        /* -1 when the file has no PERF_SAMPLE_CPU */
	uint64_t period;                    /* >= 1 */
	bool filtered;                      /* by pid / tid / comm: frames[0] is the bare ip */
	const struct map_snapshot *maps;    /* the process's maps at the sample's time */
	size_t nr_frames;                   /* >= 1 */
	const struct unwind_frame *frames;  /* leaf first */
};

/* A consumer of resolved samples. sample is called in time order on the thread that runs the
 * session; a non-zero return stops the pass and is returned by report_session__run. finish (may
 * be NULL) is called once after the pass, also when it stopped at damage. */
struct report_sink {
	int (*sample)(void *ctx, const struct report_session_sample *s);
	int (*finish)(void *ctx, struct report_session *s);
	void *ctx;
};

/* A filter between the session and its sinks: it sees each resolved sample and, in time order
 * among them, the side-band records whose types it asked for, and passes on what the sinks
 * should see with report_session__emit (samples of its own making included: their frames and
 * strings need to live only during that call). sample and side may be NULL; a non-zero return
 * stops the pass. finish is called after the pass, before the sinks' finish. */
struct report_filter {
	int (*sample)(void *ctx, struct report_session *s, const struct report_session_sample *ss);
	int (*side)(void *ctx, struct report_session *s, const struct perf_reader_record *rec);
	int (*finish)(void *ctx, struct report_session *s);
	uint64_t side_types;                /* bit t: records of type t go to side */
	void *ctx;
};

/* Record counts of the pass, as perf's header and warnings and --stats show them. */
struct report_session_stats {
	struct perf_reader_stats records;   /* by type; COMPRESSED containers and content both */
	uint64_t nr_samples;                /* samples delivered to the sinks */
	uint64_t nr_bad_samples;            /* SAMPLE records that could not be decoded */
	uint64_t nr_frames;                 /* frames delivered */
	const uint64_t *attr_samples;       /* per event: SAMPLE records */
	const uint64_t *attr_lost_samples;  /* per event: sum of LOST_SAMPLES.lost */
	const uint64_t *attr_bad_samples;   /* per event: SAMPLE records that do not decode with
					     * the event's attr (run and count both look) */
	const int *attr_bad_error;          /* per event: perf_sample__parse's first error */
	size_t nr_attrs;
	struct unwinder_stats unwind;       /* summed over the session's unwinders */
	unsigned int nr_threads;            /* threads that unwound */
	size_t peak_queued;                 /* the most bytes of records the time order held at
					     * once (the largest of the files') */
	size_t nr_preload_queued;           /* files handed to the thread loading ahead (it drops
					     * those it has not reached when the pass ends) */
};

/* An empty session with opts (copied; may be NULL; its arrays must outlive the session).
 * Returns NULL with errno ENOMEM (the only failure: nothing to explain). */
struct report_session *report_session__new(const struct report_session_opts *opts);

/* Open path and set up the machine (kernel symbols when the file was recorded on this kernel)
 * and the workers. Returns 0 or -errno (as perf_reader__open; -EINVAL for bad opts, -ENOMEM,
 * -EBUSY when a file is already open), report_session__error() naming the file and why. */
int report_session__open(struct report_session *s, const char *path);

/* Read path after the files before it, as more of one recording (precordd's rotations): the
 * same machine and sinks, each file delivered whole before the next, the counts summed. Its
 * events must be recorded as the first file's (type, config, sample fields but the stack copy,
 * clock): a file precordd unwound goes with one that still has its stacks. Before
 * run; path must outlive the session. Returns 0, -EINVAL (no first file, after run, other
 * events) or as report_session__open, report_session__error() naming the file and why. */
int report_session__add_file(struct report_session *s, const char *path);

/* Only samples recorded between since and until (wall-clock ns since the epoch, both
 * inclusive; 0 and UINT64_MAX leave a side open), each file's sample times converted with its
 * CLOCK_DATA; a file none of whose samples (SAMPLE_TIME feature) can be in range is not read.
 * With opts.times, a sample must be in both. After every add_file. Returns 0, or -ENODATA when
 * a file has no CLOCK_DATA, report_session__error() naming it. */
int report_session__set_wall_range(struct report_session *s, uint64_t since, uint64_t until);

/* The damage of the first damaged file read (*ret_path, may be NULL: its path), or NULL. */
const struct perf_reader_damage *report_session__damage(const struct report_session *s,
							const char **ret_path);

/* The last failure of report_session__open, add_file or set_wall_range, naming the file; ""
 * if none. */
const char *report_session__error(const struct report_session *s);

/* The session's reader (header, attrs, features, damage). Owned by the session. */
struct perf_reader *report_session__reader(struct report_session *s);

/* Replace opts.times (before run; a percentage needs the file's sample times, known only once
 * it is open). The array must outlive the session. */
void report_session__set_times(struct report_session *s, const struct time_range *times,
			       size_t nr);

/* Add a sink; sinks see each sample in the order they were added. Returns 0 or -ENOMEM. */
int report_session__add_sink(struct report_session *s, const struct report_sink *sink);

/* Put a filter between the samples and the sinks (one at most; before run). Returns 0, or
 * -EBUSY when one is set. */
int report_session__set_filter(struct report_session *s, const struct report_filter *f);

/* For a filter: hand a sample to the sinks. Returns 0 or the first sink's non-zero value. */
int report_session__emit(struct report_session *s, const struct report_session_sample *ss);

/* The pass: every record in perf's time order, samples resolved and delivered to the sinks, then
 * each sink's finish. Damage stops the pass early but is not an error (see
 * perf_reader__damage()). Call it once. Returns 0, a sink's non-zero value, -EALREADY when run
 * before, or -ENOMEM. */
int report_session__run(struct report_session *s);

/* Counts only: every record in file order, no unwinding, no sink called (for --stats). Returns
 * 0 or -ENOMEM. */
int report_session__count(struct report_session *s);

/* The counts of the last run or count. Valid until report_session__free. */
const struct report_session_stats *report_session__stats(struct report_session *s);

/* The name of thread (report_session_sample.thread) of tid as the records read so far leave
 * it (after a run: its last COMM), NULL when none named it. Valid until the next run or
 * free. */
const char *report_session__comm(struct report_session *s, int32_t tid, uint32_t thread);

/* perf's name of event idx ("cpu-clock", or the EVENT_DESC name). Valid until free. */
const char *report_session__event_name(struct report_session *s, size_t idx);

/* Free everything, the reader included. NULL is a no-op. */
void report_session__free(struct report_session *s);

#endif
