/* Ring sizes from the settings: the largest record the attrs can produce (the sample layout
 * field by field, as the kernel writes it), the fastest rate (frequency with the kernel's
 * overshoot margin, plus switch records), and for --lossless the room above the high mark that
 * the pause path's worst reaction needs. */
#include "record/lossless/ringsize.h"

#include <errno.h>

/* The kernel's frequency steering overshoots at times (a new thread's inherited event starts
 * from the parent's period, and the period is adjusted once per tick). */
#define FREQ_OVERSHOOT 1.5

/* Context markers a kernel call chain may hold besides its frames (PERF_MAX_CONTEXTS_PER_STACK). */
#define CALLCHAIN_CONTEXTS 8

/* Every field of the sample as precord's attrs ask for it. */
static uint64_t max_sample(const struct ringsize_events *ev)
{
	uint64_t s = 8;                         /* header */

	if (ev->identifier)
		s += 8;
	s += 8 + 8 + 8 + 8 + 8;                 /* ip, pid/tid, time, cpu/res, period */
	if (ev->callchain)
		s += 8 + 8 * (uint64_t)(ev->max_stack + CALLCHAIN_CONTEXTS);
	if (ev->nr_user_regs)
		s += 8 + 8 * (uint64_t)ev->nr_user_regs;
	if (ev->nr_tracepoints)
		s += RINGSIZE_MAX_RAW;
	if (ev->stack_user)
		s += 8 + ev->stack_user + 8;    /* size, data, dyn_size */
	/* The kernel cuts the stack copy so that the record fits its 16-bit size. */
	return s > RINGSIZE_MAX_RECORD ? RINGSIZE_MAX_RECORD : s;
}

/* A SWITCH record (or SWITCH_CPU_WIDE) with sample_id_all: header, next/prev pid/tid, then
 * tid, time, cpu and, with several events, the id and identifier. */
static uint64_t switch_record(const struct ringsize_events *ev)
{
	return 8 + 8 + 8 + 8 + 8 + (ev->identifier ? 16 : 0);
}

static size_t pow2_pages(uint64_t bytes, size_t page)
{
	uint64_t pages = (bytes + page - 1) / page;
	size_t p = 1;

	while (p < pages && p < ((size_t)1 << 40))
		p <<= 1;
	return p;
}

int ringsize__plan(const struct ringsize_events *ev, bool lossless, unsigned int high_permille,
		   uint64_t reaction_ns, size_t max_pages, struct ringsize_plan *ret)
{
	uint64_t freq, need;
	double rate;

	*ret = (struct ringsize_plan){ 0 };
	if (!ev || !ev->nr_events || ev->nr_tracepoints > ev->nr_events || !ev->page_size || (lossless && (!high_permille || high_permille >= 1000)))
		return -EINVAL;
	ret->max_sample = max_sample(ev);
	ret->max_record = ret->max_sample > RINGSIZE_MAX_SIDEBAND ? ret->max_sample : RINGSIZE_MAX_SIDEBAND;
	freq = ev->freq ? ev->freq : ev->max_freq;
	if (ev->max_freq && freq > ev->max_freq)
		freq = ev->max_freq;
	rate = (double)(ev->nr_events - ev->nr_tracepoints) * (double)freq * FREQ_OVERSHOOT *
	       (double)ret->max_sample;
	if (ev->nr_tracepoints)
		rate += (double)ev->nr_tracepoints * (double)(ev->max_freq ? ev->max_freq : 100000) *
			(double)ret->max_sample;
	if (ev->switch_events)
		rate += (double)RINGSIZE_MAX_SWITCHES * 2.0 * (double)switch_record(ev);
	ret->max_rate = rate / 1e9;
	/* Without lossless a ring must at least hold the largest record (with a page to spare:
	 * the kernel cannot write a record into a ring with no free byte). */
	need = ret->max_record + ev->page_size;
	if (lossless) {
		uint64_t below;

		ret->headroom = (uint64_t)(ret->max_rate * (double)reaction_ns) + ret->max_record;
		/* The ring above the high mark holds the headroom; the ring below it must hold a
		 * record too, so the readers always have something whole to drain. */
		below = (uint64_t)((double)ret->headroom * high_permille / (1000 - high_permille));
		if (below < ret->max_record)
			below = ret->max_record;
		need = ret->headroom + below;
	}
	ret->min_pages = pow2_pages(need, ev->page_size);
	return ret->min_pages > max_pages ? -E2BIG : 0;
}

uint64_t ringsize__lock_limit(bool cap_ipc_lock, uint64_t mlock_kb, unsigned int nr_cpus,
			      uint64_t rlimit_memlock)
{
	uint64_t l;

	if (cap_ipc_lock || rlimit_memlock == UINT64_MAX)
		return UINT64_MAX;
	l = mlock_kb * 1024 * nr_cpus;
	return l + rlimit_memlock < l ? UINT64_MAX : l + rlimit_memlock;
}

uint64_t ringsize__reaction(uint64_t worst_ns, uint64_t median_ns)
{
	uint64_t r = median_ns > UINT64_MAX / RINGSIZE_CALIB_FACTOR ? UINT64_MAX :
		     median_ns * RINGSIZE_CALIB_FACTOR;

	if (worst_ns > r)
		r = worst_ns;
	if (r > RINGSIZE_MAX_REACTION_NS)
		r = RINGSIZE_MAX_REACTION_NS;
	return r > RINGSIZE_REACTION_NS ? r : RINGSIZE_REACTION_NS;
}

unsigned int ringsize__high_for(const struct ringsize_plan *plan, uint64_t ring_bytes,
				uint64_t reaction_ns)
{
	double headroom = plan->max_rate * (double)reaction_ns + (double)plan->max_record;
	double above, high;

	if (!ring_bytes || headroom + (double)plan->max_record > (double)ring_bytes)
		return 0;
	/* room above the mark, in whole per mille, rounded up */
	above = headroom * 1000.0 / (double)ring_bytes;
	high = 1000.0 - (double)(uint64_t)(above + 0.999999);
	if (high < 1 || high * (double)ring_bytes / 1000.0 < (double)plan->max_record)
		return 0;
	return high >= 999 ? 999 : (unsigned int)high;
}
