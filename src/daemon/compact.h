/* precordd's unwinding of finished files: one thread turns each closed DWARF recording into its
 * call-chain copy (report/inject: whole stacks at a fraction of the size, readable without the
 * programs' unwind tables) beside it, as NAME.unwinding, so the service loop never waits. The
 * loop takes finished copies and swaps each in if its file is still kept (retention may have
 * deleted it meanwhile). Each copy is made by a child process on one CPU at the lowest priority
 * (nice 19), so a file a profiled program truncates or crafts can only cost that copy. */
#ifndef PRECORD_DAEMON_COMPACT_H
#define PRECORD_DAEMON_COMPACT_H

#include <limits.h>

#include "report/inject.h"

struct compactor;

struct compact_done {
	char path[PATH_MAX];       /* the file */
	char tmp[PATH_MAX];        /* its copy (exists when err is 0) */
	int err;                   /* 0 or -errno of inject__unwind */
	char why[512];             /* when err: inject__error(), or how the child died */
	struct inject_stats st;
};

/* Start the thread; copies are compressed at comp_level, and a child without CPU time for
 * stall_ms is killed (its file keeps its stacks). Returns NULL with errno set. */
struct compactor *compactor__new(int comp_level, unsigned int stall_ms);

/* The same settings for the next copies (a reload). */
void compactor__configure(struct compactor *c, int comp_level, unsigned int stall_ms);

/* The child's side (precordd ISOLATE_ARG unwind PATH TMP LEVEL, see isolate.h). */
int compactor__child_main(int argc, char **argv);

/* Queue path (copied). Returns 0, -EAGAIN when the queue is full (the file stays as it is) or
 * -ENAMETOOLONG. */
int compactor__submit(struct compactor *c, const char *path);

/* One finished job, if any: returns 1 and fills *ret, 0 when none is finished. */
int compactor__take(struct compactor *c, struct compact_done *ret);

/* Files queued or being unwound. */
unsigned int compactor__pending(struct compactor *c);

/* Stop: the file being unwound is finished (its copy removed), queued ones are left as they
 * are, finished copies not taken are removed. NULL is a no-op. */
void compactor__free(struct compactor *c);

#endif
