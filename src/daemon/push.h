/* One profile to a Grafana Pyroscope server over its HTTP ingest API (POST /ingest, documented at
 * https://grafana.com/docs/pyroscope/latest/configure-server/about-server-api/): the gzip'd
 * pprof in a multipart/form-data field named "profile", as Pyroscope's own clients send it, and
 * name=APP{host=...,labels}, from, until (unix seconds), format=pprof, sampleRate and spyName
 * in the query. libcurl does the HTTP; a transfer is bounded by its timeout and ends early when
 * *stop turns true. Safe to call from a thread other than the one that called push__init. */
#ifndef PRECORD_DAEMON_PUSH_H
#define PRECORD_DAEMON_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct push_target {
	const char *url;          /* http(s)://HOST[:PORT][/PATH]: /ingest is appended */
	const char *name;         /* the application name */
	const char *labels;       /* "key=value,..." or NULL */
	const char *host;         /* the host label's value */
	uint64_t sample_rate;     /* Hz */
	uint64_t timeout_ms;
	const volatile bool *stop; /* may be NULL */
	char error[512];          /* push__profile's reason for its last result but PUSH_OK */
};

enum push_result {
	PUSH_OK,                  /* the server took it (2xx) */
	PUSH_RETRY,               /* not reachable, timed out, 5xx, 408 or 429: try again later */
	PUSH_REJECTED,            /* another 4xx: the server will never take this profile */
	PUSH_BAD_FILE,            /* the profile cannot be read */
};

/* libcurl's global set-up: call once, before any thread pushes. Returns 0 or -ENOMEM. */
int push__init(void);

/* POST the profile at path, which covers from..until. Anything but PUSH_OK leaves its reason in
 * t (push__error: the HTTP status and the start of the server's answer, or curl's error). */
enum push_result push__profile(struct push_target *t, const char *path, time_t from,
			       time_t until);

/* The reason of t's last push that was not PUSH_OK ("" before any). */
const char *push__error(const struct push_target *t);

/* The name parameter: NAME{host=HOST,labels...}, HOST with what the name cannot carry replaced
 * by '_'. Returns 0 or -ENAMETOOLONG. */
int push__app_name(const struct push_target *t, char *buf, size_t size);

#endif
