/* The watcher's sleep planner: see lookahead.h. One thread (the watcher) calls it. */
#include "record/lossless/lookahead.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

struct lookahead {
	size_t nr_rings;
	uint64_t high_bytes;
	double bound;
	bool started;
	uint64_t last_ns;
	uint64_t *last_head;
	double *peak; /* bytes per ns, decayed */
};

struct lookahead *lookahead__new(size_t nr_rings, uint64_t ring_bytes, unsigned int high_permille,
				 double bound)
{
	struct lookahead *la;

	if (!nr_rings || !ring_bytes || high_permille >= 1000 || bound < 0) {
		errno = EINVAL;
		return NULL;
	}
	la = calloc(1, sizeof(*la));
	if (!la)
		return NULL;
	la->nr_rings = nr_rings;
	la->high_bytes = ring_bytes * high_permille / 1000;
	la->bound = bound > 0 ? bound : LOOKAHEAD_DEFAULT_BOUND;
	la->last_head = calloc(nr_rings, sizeof(*la->last_head));
	la->peak = calloc(nr_rings, sizeof(*la->peak));
	if (!la->last_head || !la->peak) {
		lookahead__free(la);
		errno = ENOMEM;
		return NULL;
	}
	return la;
}

uint64_t lookahead__next(struct lookahead *la, const uint64_t *heads, const uint64_t *used,
			 uint64_t now_ns)
{
	uint64_t dt = la->started && now_ns > la->last_ns ? now_ns - la->last_ns : 0;
	double decay = dt ? exp2(-(double)dt / LOOKAHEAD_PEAK_HALF_LIFE_NS) : 1;
	double sleep = (double)LOOKAHEAD_MAX_NS;

	for (size_t i = 0; i < la->nr_rings; i++) {
		double rate;

		la->peak[i] *= decay;
		if (dt && heads[i] >= la->last_head[i]) {
			double seen = (double)(heads[i] - la->last_head[i]) / (double)dt;

			if (seen > la->peak[i])
				la->peak[i] = seen;
		}
		la->last_head[i] = heads[i];
		rate = la->peak[i] > la->bound ? la->peak[i] : la->bound;
		if (used[i] >= la->high_bytes) {
			sleep = 0;
			continue;
		}
		if ((double)(la->high_bytes - used[i]) / rate < sleep)
			sleep = (double)(la->high_bytes - used[i]) / rate;
	}
	la->started = true;
	la->last_ns = now_ns;
	if (sleep < (double)LOOKAHEAD_MIN_NS)
		return LOOKAHEAD_MIN_NS;
	return (uint64_t)sleep;
}

double lookahead__rate(const struct lookahead *la, size_t ring)
{
	return la->peak[ring] > la->bound ? la->peak[ring] : la->bound;
}

void lookahead__free(struct lookahead *la)
{
	if (!la)
		return;
	free(la->last_head);
	free(la->peak);
	free(la);
}
