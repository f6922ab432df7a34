/* How large a per-CPU ring must be, worked out from the settings instead of guessed: the largest
 * record the events can write, the fastest rate the settings allow a ring to be written at, and,
 * for --lossless, the bytes that still arrive between a ring passing the high mark and the target
 * being stopped (that rate times the worst reaction of the pause path). A ring smaller than one
 * record loses every such record; a --lossless ring with less room above its high mark than the
 * reaction needs loses what does not fit. Pure arithmetic: no system call, no printing. */
#ifndef PRECORD_RINGSIZE_H
#define PRECORD_RINGSIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The worst reaction the --lossless sizing allows for, ns: from the moment a ring passes the
 * high mark until no task of the target writes any more. It covers the watcher's look (it plans
 * its looks to see the mark when crossed at the fastest rate, but may itself wake late) and the
 * stop (the freezer, or the signals, kick the running tasks at once; the waiting ones write
 * nothing until they run, and then stop first). Measured with build/tools/backstop_reaction
 * (make bench) and `precord bench pause`. */
#define RINGSIZE_REACTION_NS 2000000ull

/* A ring the recorder picks itself (-m left out) allows for this many times that reaction. */
#define RINGSIZE_AUTO_MARGIN 5ull

/* The pause mechanism is timed at start (pauser__calibrate, a few cycles on a spinning helper).
 * A few cycles show its usual speed, not its tail: the reaction allowed for is this many times
 * the median cycle, or the slowest cycle seen, whichever is longer, and never less than
 * RINGSIZE_REACTION_NS. */
#define RINGSIZE_CALIB_FACTOR 4ull

/* ... and at most this much: a pause slower than that is a starved helper (a CPU hog at a
 * better nice level) or a freezer stuck behind other cgroup work, not something a ring should
 * grow to hundreds of MiB for: if such a pause lets a ring fill, the run fails with exit 124,
 * naming the loss, rather than losing silently. */
#define RINGSIZE_MAX_REACTION_NS 50000000ull

/* Switch records a CPU can write at most per second: a context switch costs more than 1 us. */
#define RINGSIZE_MAX_SWITCHES 1000000ull

/* The largest side-band record: MMAP2 with a PATH_MAX file name, plus sample_id fields. */
#define RINGSIZE_MAX_SIDEBAND (4096 + 128)

/* The kernel's record size field is 16 bits: larger samples have their stack copy cut. */
#define RINGSIZE_MAX_RECORD 65535ull

/* A tracepoint sample's raw data at most (the trace entry, bounded by the kernel's per-event
 * buffer), plus its u32 size and padding. */
#define RINGSIZE_MAX_RAW (4096 + 8)

struct ringsize_events {
	unsigned int nr_events;
	unsigned int nr_tracepoints; /* of nr_events: sampled at every hit with PERF_SAMPLE_RAW,
				      * at most max_freq times a second (the kernel throttles) */
	uint64_t freq;             /* samples/s per event; 0 with a fixed period */
	uint64_t max_freq;         /* the kernel's perf_event_max_sample_rate (0: unknown): the
				    * bound used with a fixed period */
	bool identifier;           /* PERF_SAMPLE_IDENTIFIER */
	bool callchain;            /* PERF_SAMPLE_CALLCHAIN */
	unsigned int max_stack;    /* perf_event_max_stack (frames in a call chain) */
	unsigned int nr_user_regs; /* PERF_SAMPLE_REGS_USER registers; 0 without */
	uint32_t stack_user;       /* PERF_SAMPLE_STACK_USER bytes; 0 without */
	bool switch_events;
	size_t page_size;
};

struct ringsize_plan {
	uint64_t max_sample;      /* the largest sample, bytes */
	uint64_t max_record;      /* the largest record of any type, bytes */
	double max_rate;          /* bytes per ns a ring can be written at most (samples and
				   * switch records) */
	uint64_t headroom;        /* --lossless: bytes needed above the high mark */
	size_t min_pages;         /* the smallest ring (data pages, a power of two) that holds a
				   * record or, with lossless, the headroom: the smallest -m honoured */
};

/* Plan for ev; lossless: with a high mark of high_permille (0 < high < 1000) and a reaction of
 * reaction_ns. Returns 0, or -EINVAL for bad arguments, or -E2BIG when no ring of at most
 * max_pages data pages honours the settings (*ret is filled either way). */
int ringsize__plan(const struct ringsize_events *ev, bool lossless, unsigned int high_permille,
		   uint64_t reaction_ns, size_t max_pages, struct ringsize_plan *ret);

/* The reaction to size for, ns, from the calibration's slowest and median cycles (0: not
 * measured): the slowest, or RINGSIZE_CALIB_FACTOR times the median, at least
 * RINGSIZE_REACTION_NS and at most RINGSIZE_MAX_REACTION_NS. */
uint64_t ringsize__reaction(uint64_t worst_ns, uint64_t median_ns);

/* The highest high mark (per mille) that leaves room above it for plan's rate during
 * reaction_ns plus one record, in a ring of ring_bytes, with at least one record below it;
 * 0 when no mark does. */
unsigned int ringsize__high_for(const struct ringsize_plan *plan, uint64_t ring_bytes,
				uint64_t reaction_ns);

/* The memory the kernel lets this process lock for rings beyond what root may (CAP_IPC_LOCK):
 * perf_event_mlock_kb per CPU, times nr_cpus, plus RLIMIT_MEMLOCK. Inputs given, not read, so
 * tests can feed them; UINT64_MAX when unlimited. */
uint64_t ringsize__lock_limit(bool cap_ipc_lock, uint64_t mlock_kb, unsigned int nr_cpus,
			      uint64_t rlimit_memlock);

#endif
