/* Synthesized records for what already runs before recording starts: the kernel's MMAP, a COMM
 * per thread and an MMAP2 per line of /proc/PID/maps, laid out as perf 6.1 reads them (see
 * shared/reference/perf-data-format.md section 2), time 0, with the sample_id trailer the attr
 * asks for. Work over many pids is spread with wq__parallel_for. */
#ifndef PRECORD_SYNTHESIZE_H
#define PRECORD_SYNTHESIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/perf_event.h>

struct wq;

/* Receives whole records, one or more back to back (buf, len), len a multiple of 8. Called
 * from worker threads, possibly several at once, unless synth_opts.ordered is set. Returns 0,
 * or a negative -errno that stops synthesis and is returned by it. */
typedef int (*synth_output_fn)(void *ctx, const void *buf, size_t len);

struct synth_opts {
	/* sample_type and sample_id_all decide the trailer: pid/tid, time (0), id, stream_id,
	 * cpu/res, identifier, each when its bit is set. NULL or !sample_id_all: no trailer. */
	const struct perf_event_attr *attr;
	uint64_t id;            /* the trailer's id, stream_id and identifier */
	uint32_t cpu;           /* the trailer's cpu */
	struct wq *wq;          /* spread many pids over it; NULL: the calling thread alone */
	/* Deliver every record from the calling thread, in pid order, after all are built, so out
	 * need not be thread-safe. Costs memory: the whole output is held until the end. */
	bool ordered;
	bool exec_only;         /* MMAP2 only for executable mappings (perf record without -d) */
	/* out() gets a batch once it holds this many bytes (0: 64 KiB), cut only between
	 * processes, so a batch may be larger; and whatever is left when a group of pids ends. */
	size_t batch_size;
	const char *proc_root;  /* "/proc" if NULL; the kernel MMAP reads <proc_root>/kallsyms */
};

struct synth_stats {
	uint64_t nr_records;
	uint64_t nr_bytes;
	uint64_t nr_processes;  /* processes synthesized */
	uint64_t nr_threads;    /* COMM records */
	uint64_t nr_mmaps;      /* MMAP2 records */
	uint64_t nr_vanished;   /* exited before or while being read (or unreadable): skipped */
};

/* The MMAP for [kernel.kallsyms]_text: pid -1, start = pgoff = address of _text, len up to
 * _etext. Returns 0, -EACCES when kallsyms hides addresses (kptr_restrict), -ENOENT when _text
 * is missing, -errno from reading, or what out returned. */
int synthesize__kernel_mmap(const struct synth_opts *opts, synth_output_fn out, void *ctx);

/* COMM per thread and MMAP2 per mapping of one process (precord -p PID, or a forked command);
 * pid is a process (thread group) id. Runs on the calling thread only.
 * Returns 0, -ESRCH when the process is gone (counted as vanished), -ENOMEM, or what out
 * returned. ret_stats, if not NULL, is filled on success and on -ESRCH. */
int synthesize__pid(const struct synth_opts *opts, pid_t pid, synth_output_fn out, void *ctx,
		    struct synth_stats *ret_stats);

/* The same for a list of processes, over opts->wq; ones that vanish are skipped and counted.
 * Returns 0, -ENOMEM or what out returned (records already delivered stay delivered). */
int synthesize__pids(const struct synth_opts *opts, const pid_t *pids, size_t nr,
		     synth_output_fn out, void *ctx, struct synth_stats *ret_stats);

/* Every process in /proc (precord -a); not the kernel MMAP, which is a separate call. Returns
 * as synthesize__pids, or -errno when /proc cannot be listed. */
int synthesize__all(const struct synth_opts *opts, synth_output_fn out, void *ctx,
		    struct synth_stats *ret_stats);

/* A PERF_RECORD_CGROUP (id, path relative to root, "/" for root itself) for every cgroup
 * under root, the cgroup2 mount point (perf record --all-cgroups's synthesized records), time
 * 0, from the calling thread. Returns 0 (*ret_nr, if not NULL, the number of records),
 * -ENOMEM, or what out returned. */
int synthesize__cgroups(const struct synth_opts *opts, const char *root, synth_output_fn out,
			void *ctx, uint64_t *ret_nr);

struct synth_bench_opts {
	unsigned int single_iterations; /* 0: 10000, as perf bench */
	unsigned int multi_iterations;  /* 0: 10 */
	unsigned int min_threads;       /* 0: 1 */
	unsigned int max_threads;       /* 0: online CPUs */
};

/* `precord bench synthesize [-t]`, shaped like `perf bench internals synthesize [-t]`: without
 * threads_mode, synthesis of this process (exec maps only, then all maps); with it, of every
 * process, for each thread count (callers included) from min to max. Prints the average time
 * per run and per event to out. The records are built and discarded. Returns 0 or -errno. */
int synthesize__bench(FILE *out, bool threads_mode, const struct synth_bench_opts *opts);

#endif
