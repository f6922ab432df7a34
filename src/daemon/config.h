/* precordd's configuration: a key = value file (see man/precordd.conf.5). Parsing is strict on
 * purpose: an unknown key, a key given twice or a bad value makes the whole file invalid, and the
 * message names the file, the line and the reason, so a daemon never runs on a half-understood
 * configuration. Cross-key rules (the budget holds at least two rotated files) are checked too. */
#ifndef PRECORD_CONFIG_H
#define PRECORD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/parse.h"

#define CONFIG_DEFAULT_PATH "/etc/precord/precordd.conf"

struct daemon_config {
	bool continuous;               /* record all the time (default yes) */
	char *event;                   /* default "cpu-clock" */
	uint64_t frequency;            /* samples/s (default 49) */
	enum callgraph_mode callgraph; /* default CALLGRAPH_DWARF */
	bool unwind;                   /* dwarf: unwind each finished file into call chains
					* (default yes) */
	uint64_t convert_stall_ms;     /* a conversion's process (unwinding, pprof) without CPU
					* time for this long is killed (default 60 s) */
	bool all_cgroups;              /* the cgroup of every sample (default yes) */
	uint32_t stack_size;           /* for dwarf (default 8192) */
	bool all;                      /* target = all (default) */
	pid_t *pids;                   /* target = pid:N,... */
	size_t nr_pids;
	char **cgroups;                /* target = cgroup:PATH,... (relative to the cgroup root) */
	size_t nr_cgroups;
	char *cpus;                    /* CPU list for target = all; NULL: every online CPU */
	uint64_t buffer_size;          /* ring bytes per CPU; 0: the recorder's default */
	int compression;               /* zstd level, 0 off (default 1) */
	char *output_dir;              /* default /var/lib/precord */
	uint64_t rotate_size;          /* bytes (default 64 MiB) */
	uint64_t rotate_interval_ms;   /* 0: no time rotation (default 1 h) */
	uint64_t max_total_size;       /* bytes, >= 2 * rotate_size (default 1 GiB) */
	uint64_t max_age_ms;           /* 0: files are kept whatever their age (default) */
	char *socket_path;             /* NULL: no control socket (default /run/precord/control) */
	char *socket_group;            /* NULL: root only (default "precord") */
	gid_t socket_gid;              /* resolved socket_group; (gid_t)-1 when none, or when
					* the default group does not exist (a group set in the
					* file must exist) */
	uint64_t control_max_duration_ms; /* longest `precord ctl record` (default 10 min) */
	unsigned int control_max_sessions;/* concurrent ones (default 4) */

	/* Export (see export.h, push.h): each finished file as a pprof profile, pushed to a
	 * Grafana Pyroscope server's /ingest when push_url is set. */
	bool pprof;                    /* keep PROFILE.pb.gz beside each file (default no) */
	char *push_url;                /* http(s)://HOST[:PORT][/PATH], no query; NULL: no push */
	char *push_name;               /* the application name pushed (default "precordd") */
	char *push_labels;             /* "key=value,..." added to every push; NULL: none */
	uint64_t push_timeout_ms;      /* one push, connection included (default 30 s) */
	uint64_t push_spool_size;      /* profiles waiting to be pushed, at most (bytes; default
					* max_total_size / 8); counted in max_total_size */
	char err[512];                 /* config__error() */
};

/* Errors: every function that fails returns -errno and leaves the reason, naming the file (and
 * the line), in config__error() of the config it was given (see README, "How it works"). On
 * failure that config holds nothing else: config__free is then a no-op on it. */

/* Fill c with the defaults (the group is not resolved: socket_gid is (gid_t)-1). Returns 0 or
 * -ENOMEM (c then holds what could be set; config__free it). */
int config__defaults(struct daemon_config *c);

/* Parse text (len bytes, need not end in a NUL) named name in messages, over the defaults, into
 * ret (config__free it). Returns 0, -EINVAL for a bad file ("NAME:LINE: reason" in
 * config__error(ret)), or -ENOMEM. */
int config__parse(const char *text, size_t len, const char *name, struct daemon_config *ret);

/* Read and parse path into ret. Returns as config__parse, or -errno of reading it
 * ("cannot read PATH: ..." in config__error(ret)). */
int config__load(const char *path, struct daemon_config *ret);

/* The reason of the last failure of parse or load into c, or of daemon__check_recording(c);
 * "" if none. */
const char *config__error(const struct daemon_config *c);

/* Whether a and b record the same way (event, rate, targets, files...): if not, a reload must
 * start a new recording session. */
bool config__same_recording(const struct daemon_config *a, const struct daemon_config *b);

/* Free what c holds (c itself is the caller's) and zero it. */
void config__free(struct daemon_config *c);

#endif
