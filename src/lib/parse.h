/* One parser for each value that more than one front end accepts: precord's options, `precord
 * ctl`'s options, precordd's config file and the control socket all call these, so a size, a
 * duration, a frequency, a call-graph mode or a cgroup path means the same thing and has the same
 * limits wherever it is typed. Each parser takes the whole string (no leading or trailing
 * blanks), returns 0 or a negative errno, and writes *ret only on success. */
#ifndef PRECORD_PARSE_H
#define PRECORD_PARSE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

/* The call-graph modes, as the user names them (dwarf[,SIZE], fp, none). */
enum callgraph_mode { CALLGRAPH_DWARF, CALLGRAPH_FP, CALLGRAPH_NONE };

/* -F: samples per second. The kernel's own limit (kernel.perf_event_max_sample_rate, 100000 by
 * default and lowered by the kernel when sampling takes too long) is applied when recording
 * starts; this is only the syntax limit: one sample per microsecond, above which the sampling
 * interrupt alone would fill the CPU. */
#define PARSE_FREQ_MAX 1000000
/* dwarf,SIZE: bytes of user stack copied per sample, a multiple of 8 (the kernel's limit is
 * 65528, the largest multiple of 8 below 64K). */
#define PARSE_STACK_MIN 8
#define PARSE_STACK_MAX 65528
#define PARSE_STACK_DEFAULT 8192
/* A cgroup path's longest spelling, NUL included. */
#define PARSE_CGROUP_PATH_SIZE 256

/* A number macro as a string literal, for static messages: PARSE_STR(PARSE_FREQ_MAX). */
#define PARSE_STR_(x) #x
#define PARSE_STR(x) PARSE_STR_(x)

/* Decimal digits only (no sign, no blanks), min <= value <= max. -EINVAL or -ERANGE. */
int parse__uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret);

/* A process id, 1 to INT_MAX. -EINVAL or -ERANGE. */
int parse__pid(const char *s, pid_t *ret);

/* A size in bytes: N, or N with K, M, G or T (powers of 1024), optionally followed by "i" and
 * "B" or "b" (4M, 4MB, 4MiB); a bare "B" is allowed after N. *ret_suffixed says whether a unit
 * was given (may be NULL). -EINVAL (syntax) or -ERANGE (overflow). */
int parse__size(const char *s, uint64_t *ret, bool *ret_suffixed);

/* A duration in milliseconds: N or N.FRACTION, then a unit: ms, s, sec, m, min, h or d; no
 * unit means seconds ("1.5" = "1500ms"). Rounded to the nearest millisecond; a non-zero
 * duration shorter than 0.5 ms is -ERANGE, like an overflow. -EINVAL for the syntax. */
int parse__duration_ms(const char *s, uint64_t *ret);

/* Samples per second, 1 to PARSE_FREQ_MAX. -EINVAL or -ERANGE. */
int parse__freq(const char *s, uint64_t *ret);

/* dwarf[,SIZE], fp or none. *ret_stack is SIZE rounded up to a multiple of 8 for dwarf
 * (PARSE_STACK_DEFAULT without SIZE), 0 otherwise. -EINVAL for an unknown mode, -ERANGE for
 * a SIZE that is not a size from PARSE_STACK_MIN to PARSE_STACK_MAX. */
int parse__callgraph(const char *s, enum callgraph_mode *ret_mode, uint32_t *ret_stack);

/* The mode's name ("dwarf", "fp", "none"; NULL for a bad mode). */
const char *parse__callgraph_name(enum callgraph_mode mode);

/* A time of day for reports (preport --since/--until), in ns since the epoch: @SECONDS[.FRAC]
 * (since the epoch), or [YYYY-MM-DD[ |T]]HH:MM[:SS[.FRAC]] or YYYY-MM-DD, in local time
 * unless it ends in Z (UTC); without a date, the day of now. -EINVAL or -ERANGE. */
int parse__wall_time(const char *s, time_t now, uint64_t *ret_ns);

/* A cgroup path below the cgroup root, checked strictly because precordd (root) opens it:
 * "/" or "/" followed by components separated by single "/", none of them "." or "..", no
 * trailing "/", only printable non-blank ASCII other than ',' (the config's list separator),
 * shorter than PARSE_CGROUP_PATH_SIZE. Returns 0, -EINVAL or -ENAMETOOLONG. */
int parse__cgroup_path(const char *s);

#endif
