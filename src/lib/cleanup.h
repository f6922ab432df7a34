/* Scope-bound cleanup helpers in the style of systemd's alloc-util.h: a variable declared with
 * _cleanup_free_ is freed when it leaves scope unless TAKE_PTR() handed it on. Every helper
 * accepts NULL / -1, so error paths can simply return. */
#ifndef PRECORD_CLEANUP_H
#define PRECORD_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Hand ownership on: returns the pointer and leaves NULL behind. */
#define TAKE_PTR(p)                          \
	({                                   \
		__typeof__(p) _tp_ = (p);    \
		(p) = NULL;                  \
		_tp_;                        \
	})

#define TAKE_FD(fd)                          \
	({                                   \
		int _tfd_ = (fd);            \
		(fd) = -1;                   \
		_tfd_;                       \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
