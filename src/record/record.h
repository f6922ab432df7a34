/* A recording session: the object precord's CLI and precordd both drive. It owns the events,
 * the rings, the reader pool, the file and the target; callers only say what to record and
 * when to stop. Lifecycle: new -> start -> poll... -> stop -> free. */
#ifndef PRECORD_RECORD_H
#define PRECORD_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/parse.h"
#include "lib/topology.h"

struct creds;

struct record_opts {
	const char *output;            /* default "perf.data" */
	const char *events;            /* comma-separated; default "cycles" */
	uint64_t freq;                 /* samples/s per event (used when period is 0) */
	uint64_t period;               /* fixed period (-c) */
	enum callgraph_mode callgraph;
	uint32_t stack_size;           /* DWARF stack copy bytes, multiple of 8, <= 65528 */
	size_t mmap_pages;             /* data pages per CPU ring, power of two; 0: 2 MiB with
					* DWARF stacks (a sample is ~8 KiB), else 512 KiB, or more
					* where --lossless needs it (ringsize.h). An explicit size
					* too small for one record, or for --lossless's headroom,
					* is refused by record__setup (EINVAL, naming the minimum) */
	const char *mmap_arg;          /* -m as typed ("3K"), for messages; NULL: mmap_pages */
	int comp_level;                /* 0: no compression */
	bool fast_compress;            /* no long-distance matching (always with --lossless): a
					* quarter of the CPU per MiB, a larger file */
	bool switch_events;
	const char *filter;            /* --filter: for the last event, a tracepoint */
	bool all_cgroups;              /* the cgroup of every sample, and cgroup records (perf's
					* --all-cgroups) */
	bool off_cpu;                  /* also sample sched:sched_switch (the stack at each
					* switch-out) with switch events (the switch-in times) */
	unsigned int nr_readers;       /* 0: one per CPU recorded */
	enum topo_scope affinity;
	bool system_wide;              /* -a */
	const char *cpu_list;          /* -C */
	const pid_t *pids;             /* -p */
	size_t nr_pids;
	char *const *argv;             /* command, NULL-terminated */
	int cmdline_argc;              /* precord's own command line, for the CMDLINE feature */
	char *const *cmdline_argv;
	bool lossless;
	unsigned int high_permille;    /* lossless watermarks */
	unsigned int low_permille;
	bool high_given;               /* --high-watermark was given: never lowered */
	bool keep_old;                 /* rename an existing output to .old (default true) */
	/* perf's build-id cache to add the recorded files to, as perf record does (precord's
	 * default: the user's ~/.debug; -N, --no-buildid-cache: none). NULL: none. */
	const char *buildid_cache;
	/* Another user's recording (precordd): events are opened, /proc/PID files and mapped
	 * files read with these credentials, so the kernel decides what may be recorded
	 * (creds__run). NULL: the caller's own. */
	const struct creds *creds;
	bool user_only;                /* exclude_kernel, no kernel callchain, no kernel map */
	size_t max_fds;                /* refuse (-EMFILE) a recording needing more event fds
					* (events x CPUs x threads); 0: no limit */
	uint64_t max_size;             /* the most data the file may hold (perf's --max-size):
					* what comes after is counted lost (unwritten_*) and
					* record_stats.limit_hit set, for the caller to stop; 0: none */
	const char *max_size_remedy;   /* how the user raises max_size, for the message when the
					* description alone passes it; NULL: "--max-size" */
	/* One-line notices (event fallback, ...), called from the caller's thread. May be NULL. */
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
	/* What must be said at once whatever quiet the caller keeps (the file cannot be written:
	 * --lossless holds the target paused until there is space), with notice_ctx. NULL: notice. */
	void (*alert)(void *ctx, const char *msg);
};

/* The largest -m: data pages per CPU ring. */
#define RECORD_MAX_MMAP_PAGES ((size_t)1 << 20)

#define RECORD_MAX_RING_STATS 256

struct record_stats {
	double elapsed;                /* seconds since the target started */
	uint64_t samples, records, switches;
	uint64_t lost_records, lost_events; /* kernel PERF_RECORD_LOST */
	uint64_t lost_samples;         /* PERF_FORMAT_LOST at the end */
	int left_running;              /* the command's pid when a stop left it running (it had
					* not ended 2 s after SIGTERM), else 0 */
	uint64_t unwritten_records;    /* drained but not written (a full disk): in the file as */
	uint64_t unwritten_samples;    /* one LOST and one LOST_SAMPLES record */
	uint64_t unwritten_bytes;
	uint64_t bytes_read, bytes_written;
	uint64_t wakeups;
	unsigned int nr_readers, nr_rings;
	/* lossless */
	const char *pause_mechanism;   /* NULL unless lossless */
	uint64_t pauses;
	double paused_total, paused_longest; /* seconds */
	const uint64_t *pauses_by_ring; /* nr_rings counters (valid while the session lives) */
	int pause_ring_cpu[RECORD_MAX_RING_STATS]; /* the CPU of each ring */
	int pause_error;               /* first failure to pause or resume (-errno) */
	uint64_t watcher_looks;        /* --lossless: the watcher's looks at the rings */
	/* --lossless: the most a pause let through (lossless_stats.after_worst_*), and the room
	 * above the high mark of one ring, which is what it may let into a ring */
	uint64_t pause_after_ns, pause_after_bytes, pause_room_bytes;
	/* --lossless: the latest a watcher looked after it planned to, and the fullest a ring was
	 * when a pause was decided (lossless_stats) */
	uint64_t watcher_late_ns;
	unsigned int pause_decided_permille, pause_high_permille;
	/* --lossless: the longest call to pause, to resume, and from a decision to its call (ns) */
	uint64_t pause_call_ns, resume_call_ns, pause_wait_ns;
	uint64_t pause_reasserts;      /* --lossless: pauses carried out again by a watcher */
	double pause_allowed_ms;       /* the reaction the rings were sized for */
	bool limit_hit;                /* the file reached opts.max_size */
	uint64_t steal_ns;             /* CPU time the hypervisor took from this machine's CPUs
					* from the events' enabling to the stop (0: none, not known,
					* or not stopped yet) */
};

struct record;

/* Errors: every function that fails returns -errno and leaves the reason, naming the thing and
 * the remedy, in record__error() (see README, "Errors"). */

/* An empty session. Returns NULL with errno ENOMEM (the only failure: nothing to explain). */
struct record *record__new(void);

/* Validate opts and prepare (events parsed, CPUs chosen); opts' strings and arrays must outlive
 * the session. Returns 0, -EINVAL / -ENOENT (bad usage: unknown event, bad CPU list...),
 * -EBUSY (already set up), or another -errno. */
int record__setup(struct record *rec, const struct record_opts *opts);

/* Open events and the file, synthesize what already runs, start the readers and, for a
 * command, let it exec. Returns 0 or -errno (-EINVAL before record__setup).
 * -ENOENT/-EACCES from exec of the command are returned as such (exit codes 127/126). */
int record__start(struct record *rec);

/* Wait up to timeout_ms for the target to end, keeping the file's header up to date. Returns
 * 1 when the target has ended (or never ends: -a with no command returns 0 until stopped),
 * 0 on timeout, -EINTR when a signal interrupted the wait. */
int record__poll(struct record *rec, int timeout_ms);

void record__stats(const struct record *rec, struct record_stats *ret);

/* End the recording: a command still running is sent SIGTERM (as perf does), events are
 * disabled, rings drained, lost counts written, the file finalized. Idempotent. Returns 0 or
 * -errno (record__error() says what). */
int record__stop(struct record *rec);

/* Continue in a new file at new_path without stopping the events: the new file gets the same
 * attrs and ids and a fresh description of what runs (every process for -a, else the targets
 * and their descendants), then the readers switch to it between passes and the old file is
 * finalized. Each record lands in exactly one file. Returns 0; -EINVAL when not recording;
 * -errno of creating or describing the new file (recording goes on in the old one, the new
 * file is removed); or -errno of finalizing the old one (recording goes on in the new one).
 * record__error() says what. record_stats.bytes_written then counts the new file. */
int record__rotate(struct record *rec, const char *new_path);

/* Bring the file's header up to what has been written (record__poll does so every half
 * second), so that a kill loses nothing written before. Returns 0 or -errno. */
int record__sync(struct record *rec);

/* The command's wait status (valid after it ended); -1 if there is no command. */
int record__target_status(const struct record *rec);

/* The command's exec failure (ENOENT, EACCES, ...) when record__start failed for that; else 0. */
int record__exec_error(const struct record *rec);

/* Whether record__start failed because the settings cannot be honoured here (an explicit -m too
 * small for --lossless's pause as timed at start): a usage error, nothing ran. */
bool record__refused(const struct record *rec);

/* The last failure, with context; "" if none. */
const char *record__error(const struct record *rec);

void record__free(struct record *rec);

#endif
