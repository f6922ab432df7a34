/* A self-contained interactive SVG flame graph: stacks are merged into a tree, each frame is a
 * rectangle as wide as its share of the samples, the root at the bottom. The file carries its
 * own script (hover details, click to zoom, reset, search) and needs no network. Output is a
 * pure function of the stacks added, whatever their order: children are laid out by name and
 * colours come from a hash of the name. */
#ifndef PRECORD_FLAMEGRAPH_H
#define PRECORD_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct flamegraph;

struct flamegraph_opts {
	const char *title;     /* NULL: "Flame Graph" */
	unsigned int width;    /* image width in pixels; 0: 1200 */
	const char *unit;      /* what the counts are; NULL: "samples" */
};

/* Returns NULL with errno = ENOMEM. */
struct flamegraph *flamegraph__new(void);

/* Add count to the stack names[0..nr) (root first). Names are copied. Returns 0 or -ENOMEM
 * (the graph is unchanged), -EINVAL when nr is 0. */
int flamegraph__add(struct flamegraph *fg, const char *const *names, size_t nr, uint64_t count);

/* Write the SVG. Returns 0 or -EIO. */
int flamegraph__write(const struct flamegraph *fg, FILE *fp, const struct flamegraph_opts *opts);

void flamegraph__free(struct flamegraph *fg);

#endif
