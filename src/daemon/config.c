/* The config parser: one "key = value" per line, blank lines and whole-line comments ('#' or
 * ';'), an optional pair of double quotes around a value. Each key has one setter that validates
 * its value; the first problem stops parsing and becomes "file:line: reason". The result is built
 * in a scratch config and handed over only when the whole file is good. */
#include "daemon/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/parse.h"
#include "lib/topology.h"

#define MAX_CONFIG_SIZE (1 << 20)
#define MAX_LINE 4096
#define MAX_TARGETS 64

int config__defaults(struct daemon_config *c)
{
	memset(c, 0, sizeof(*c));
	c->continuous = true;
	c->frequency = 49;
	c->callgraph = CALLGRAPH_DWARF;
	c->unwind = true;
	c->all_cgroups = true;
	c->stack_size = 8192;
	c->all = true;
	c->compression = 1;
	c->rotate_size = 64ULL << 20;
	c->rotate_interval_ms = 3600 * 1000;
	c->max_total_size = 1ULL << 30;
	c->socket_gid = (gid_t)-1;
	c->control_max_duration_ms = 600 * 1000;
	c->control_max_sessions = 4;
	c->event = strdup("cpu-clock");
	c->output_dir = strdup("/var/lib/precord");
	c->socket_path = strdup("/run/precord/control");
	c->socket_group = strdup("precord");
	c->push_name = strdup("precordd");
	c->push_timeout_ms = 30 * 1000;
	c->convert_stall_ms = 60 * 1000;
	if (!c->event || !c->output_dir || !c->socket_path || !c->socket_group || !c->push_name)
		return -ENOMEM;
	return 0;
}

void config__free(struct daemon_config *c)
{
	if (!c)
		return;
	free(c->event);
	free(c->pids);
	for (size_t i = 0; i < c->nr_cgroups; i++)
		free(c->cgroups[i]);
	free(c->cgroups);
	free(c->cpus);
	free(c->output_dir);
	free(c->socket_path);
	free(c->socket_group);
	free(c->push_url);
	free(c->push_name);
	free(c->push_labels);
	memset(c, 0, sizeof(*c));
}

/* Value parsers: 0 or -EINVAL; the setter writes the reason. */

static int parse_bool(const char *s, bool *ret)
{
	static const char *yes[] = { "yes", "true", "on", "1" }, *no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*ret = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Setters. Each returns 0, or -EINVAL / -ENOMEM with the reason in why. */

struct parse_ctx {
	struct daemon_config *c;
	char why[512];
};

static int bad(struct parse_ctx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct parse_ctx *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int set_str(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int set_continuous(struct parse_ctx *p, const char *v)
{
	if (parse_bool(v, &p->c->continuous))
		return bad(p, "expected yes or no, not '%s'", v);
	return 0;
}

static int set_unwind(struct parse_ctx *p, const char *v)
{
	if (parse_bool(v, &p->c->unwind))
		return bad(p, "expected yes or no, not '%s'", v);
	return 0;
}

static int set_convert_stall_timeout(struct parse_ctx *p, const char *v)
{
	uint64_t ms;

	if (parse__duration_ms(v, &ms) || ms < 1000 || ms > 3600 * 1000)
		return bad(p, "expected a duration from 1s to 1h (like 60s), not '%s'", v);
	p->c->convert_stall_ms = ms;
	return 0;
}

static int set_all_cgroups(struct parse_ctx *p, const char *v)
{
	if (parse_bool(v, &p->c->all_cgroups))
		return bad(p, "expected yes or no, not '%s'", v);
	return 0;
}

static int set_event(struct parse_ctx *p, const char *v)
{
	for (const char *s = v; *s; s++)
		if (!isgraph((unsigned char)*s))
			return bad(p, "an event name has no spaces ('%s')", v);
	return set_str(&p->c->event, v);
}

static int set_frequency(struct parse_ctx *p, const char *v)
{
	uint64_t f;

	if (parse__freq(v, &f))
		return bad(p, "expected samples per second from 1 to %d, not '%s'", PARSE_FREQ_MAX, v);
	p->c->frequency = f;
	return 0;
}

static int set_call_graph(struct parse_ctx *p, const char *v)
{
	uint32_t stack;
	int r = parse__callgraph(v, &p->c->callgraph, &stack);

	if (r == -ERANGE)
		return bad(p, "the dwarf stack size must be %d to %d bytes, not '%s'", PARSE_STACK_MIN,
			   PARSE_STACK_MAX, v + 6);
	if (r < 0)
		return bad(p, "expected fp, dwarf, dwarf,SIZE or none, not '%s'", v);
	if (stack)
		p->c->stack_size = stack;
	return 0;
}

static int set_target(struct parse_ctx *p, const char *v)
{
	struct daemon_config *c = p->c;
	_cleanup_free_ char *copy = strdup(v);
	char *s = copy, *tok;

	if (!copy)
		return -ENOMEM;
	if (!strcmp(v, "all")) {
		c->all = true;
		return 0;
	}
	c->all = false;
	while ((tok = strsep(&s, ","))) {
		while (isspace((unsigned char)*tok))
			tok++;
		for (char *e = tok + strlen(tok); e > tok && isspace((unsigned char)e[-1]);)
			*--e = 0;
		if (c->nr_pids + c->nr_cgroups >= MAX_TARGETS)
			return bad(p, "at most %d targets", MAX_TARGETS);
		if (!strncmp(tok, "pid:", 4)) {
			pid_t pid, *np;

			if (parse__pid(tok + 4, &pid))
				return bad(p, "'%s' is not a process id (expected pid:N)", tok);
			np = realloc(c->pids, (c->nr_pids + 1) * sizeof(pid_t));
			if (!np)
				return -ENOMEM;
			c->pids = np;
			c->pids[c->nr_pids++] = pid;
		} else if (!strncmp(tok, "cgroup:", 7)) {
			char **ng;

			if (parse__cgroup_path(tok + 7))
				return bad(p, "'%s' is not a cgroup path (expected cgroup:/a/b, below "
					   "the cgroup root, no '.' or '..', shorter than %d bytes)",
					   tok + 7, PARSE_CGROUP_PATH_SIZE);
			ng = realloc(c->cgroups, (c->nr_cgroups + 1) * sizeof(char *));
			if (!ng)
				return -ENOMEM;
			c->cgroups = ng;
			c->cgroups[c->nr_cgroups] = strdup(tok + 7);
			if (!c->cgroups[c->nr_cgroups])
				return -ENOMEM;
			c->nr_cgroups++;
		} else {
			return bad(p, "expected all, or a list of pid:N and cgroup:PATH, not '%s'", tok);
		}
	}
	return 0;
}

static int set_cpus(struct parse_ctx *p, const char *v)
{
	cpu_set_t set;

	if (cpulist__parse(v, &set) < 0)
		return bad(p, "expected a CPU list like 0-3,6, not '%s'", v);
	return set_str(&p->c->cpus, v);
}

static int set_buffer_size(struct parse_ctx *p, const char *v)
{
	uint64_t b;
	long page = sysconf(_SC_PAGESIZE);

	if (parse__size(v, &b, NULL) || (b && (b < (uint64_t)page || b > (1ULL << 30) ||
					 (b & (b - 1)) || b % page)))
		return bad(p, "expected 0 (automatic) or a power of two from %ldK to 1G, not '%s'",
			   page / 1024, v);
	p->c->buffer_size = b;
	return 0;
}

static int set_compression(struct parse_ctx *p, const char *v)
{
	uint64_t l;

	if (parse__uint(v, 0, 22, &l))
		return bad(p, "expected a zstd level from 1 to 22, or 0 for none, not '%s'", v);
	p->c->compression = (int)l;
	return 0;
}

static int set_output_dir(struct parse_ctx *p, const char *v)
{
	if (v[0] != '/' || strlen(v) > PATH_MAX - 64)
		return bad(p, "expected an absolute directory path, not '%s'", v);
	return set_str(&p->c->output_dir, v);
}

static int set_rotate_size(struct parse_ctx *p, const char *v)
{
	if (parse__size(v, &p->c->rotate_size, NULL) || p->c->rotate_size < (64 << 10))
		return bad(p, "expected a size of at least 64K (like 64M), not '%s'", v);
	return 0;
}

static int set_rotate_interval(struct parse_ctx *p, const char *v)
{
	uint64_t ms;

	if (parse__duration_ms(v, &ms) || (ms && ms < 100))
		return bad(p, "expected 0 (off) or a duration of at least 100ms (like 30s, 10m, 1h), "
			   "not '%s'", v);
	p->c->rotate_interval_ms = ms;
	return 0;
}

static int set_max_total_size(struct parse_ctx *p, const char *v)
{
	if (parse__size(v, &p->c->max_total_size, NULL) || p->c->max_total_size < (128 << 10))
		return bad(p, "expected a size of at least 128K (like 1G), not '%s'", v);
	return 0;
}

static int set_max_age(struct parse_ctx *p, const char *v)
{
	if (parse__duration_ms(v, &p->c->max_age_ms))
		return bad(p, "expected 0 (off) or a duration (like 12h, 7d), not '%s'", v);
	return 0;
}

static int set_socket(struct parse_ctx *p, const char *v)
{
	if (!*v || !strcmp(v, "none")) {
		free(p->c->socket_path);
		p->c->socket_path = NULL;
		return 0;
	}
	if (v[0] != '/' || strlen(v) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return bad(p, "expected an absolute path shorter than %zu bytes, or none, not '%s'",
			   sizeof(((struct sockaddr_un *)0)->sun_path), v);
	return set_str(&p->c->socket_path, v);
}

static int set_socket_group(struct parse_ctx *p, const char *v)
{
	if (!*v || !strcmp(v, "none")) {
		free(p->c->socket_group);
		p->c->socket_group = NULL;
		return 0;
	}
	return set_str(&p->c->socket_group, v);
}

static int set_control_max_duration(struct parse_ctx *p, const char *v)
{
	uint64_t ms;

	if (parse__duration_ms(v, &ms) || ms < 1000 || ms > 86400000ULL)
		return bad(p, "expected a duration from 1s to 1d, not '%s'", v);
	p->c->control_max_duration_ms = ms;
	return 0;
}

static int set_control_max_sessions(struct parse_ctx *p, const char *v)
{
	uint64_t n;

	if (parse__uint(v, 0, 64, &n))
		return bad(p, "expected a number from 0 to 64, not '%s'", v);
	p->c->control_max_sessions = (unsigned int)n;
	return 0;
}

static int set_pprof(struct parse_ctx *p, const char *v)
{
	if (parse_bool(v, &p->c->pprof))
		return bad(p, "expected yes or no, not '%s'", v);
	return 0;
}

/* The HOST[:PORT] of a push URL (host..host+hl): an IPv6 address in brackets, a name or IPv4
 * address without a colon, and a port of 1 to 65535 digits' worth. Returns 0 or bad()'s. */
static int bad_host_port(struct parse_ctx *p, const char *v, const char *host, size_t hl)
{
	const char *end = host + hl, *port;

	if (host[0] == '[') {
		const char *close = memchr(host, ']', hl);

		if (!close || close == host + 1)
			return bad(p, "an IPv6 address goes between [ and ] (like http://[::1]:4040), "
				   "not '%.200s'", v);
		port = close + 1;
		if (port < end && *port != ':')
			return bad(p, "expected :PORT or / after the IPv6 address in '%.200s'", v);
	} else {
		port = memchr(host, ':', hl);
		if (!port)
			port = end;
		if (memchr(port + (port < end), ':', (size_t)(end - port - (port < end))))
			return bad(p, "more than one ':' after the host in '%.200s' (an IPv6 address "
				   "goes between [ and ])", v);
	}
	if (port < end) {
		unsigned long n = 0;
		size_t digits = (size_t)(end - port - 1);

		for (const char *d = port + 1; d < end && n <= 65535; d++)
			n = isdigit((unsigned char)*d) ? n * 10 + (unsigned long)(*d - '0') : 65536;
		if (!digits || n < 1 || n > 65535)
			return bad(p, "the port in '%.200s' is not a number from 1 to 65535", v);
	}
	return 0;
}

/* http(s)://HOST[:PORT][/PATH]: printable ASCII without blanks, quotes or backslashes, no
 * user info, query or fragment (precordd adds /ingest and the query itself). */
static int set_push_url(struct parse_ctx *p, const char *v)
{
	const char *host = !strncmp(v, "http://", 7) ? v + 7 : !strncmp(v, "https://", 8) ? v + 8 : NULL;
	size_t hl;

	if (!*v || !strcmp(v, "none")) {
		free(p->c->push_url);
		p->c->push_url = NULL;
		return 0;
	}
	if (!host)
		return bad(p, "expected the server's URL, http://HOST:PORT or https://HOST:PORT "
			   "(like http://pyroscope:4040), or none, not '%.200s'", v);
	if (strlen(v) > 1024)
		return bad(p, "a URL of at most 1024 bytes, not %zu", strlen(v));
	for (const char *s = v; *s; s++)
		if (!isgraph((unsigned char)*s) || strchr("\\\"'<>^`{|}", *s))
			return bad(p, "the URL has a blank or a character URLs do not carry (0x%02x) "
				   "in '%.200s'", (unsigned char)*s, v);
	hl = strcspn(host, "/");
	if (!hl || host[0] == ':')
		return bad(p, "no host in '%.200s' (expected http://HOST:PORT)", v);
	if (memchr(host, '@', hl))
		return bad(p, "user:password@ is not taken in the URL: put an authenticating proxy "
			   "in front of the server, not '%.200s'", v);
	if (strpbrk(v, "?#"))
		return bad(p, "no query or fragment in the URL (precordd adds /ingest?...), not "
			   "'%.200s'", v);
	if (bad_host_port(p, v, host, hl))
		return -EINVAL;
	if (set_str(&p->c->push_url, v))
		return -ENOMEM;
	/* a trailing slash would make //ingest */
	for (size_t l = strlen(p->c->push_url); l > (size_t)(host - v) + hl && p->c->push_url[l - 1] == '/';)
		p->c->push_url[--l] = 0;
	return 0;
}

/* A name Pyroscope takes as the application: letters, digits, '.', '_', '-'. */
static bool name_ok(const char *s, size_t max)
{
	size_t l = strlen(s);

	if (!l || l > max)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return false;
	return true;
}

static int set_push_name(struct parse_ctx *p, const char *v)
{
	if (!name_ok(v, 128))
		return bad(p, "expected an application name of 1 to 128 letters, digits, '.', '_' "
			   "or '-', not '%.200s'", v);
	return set_str(&p->c->push_name, v);
}

/* key=value,...: keys as Prometheus labels ([A-Za-z_][A-Za-z0-9_]*), values as application
 * names (no ',', '=', braces, quotes or blanks, which the name's {...} cannot carry). */
static int set_push_labels(struct parse_ctx *p, const char *v)
{
	_cleanup_free_ char *copy = strdup(v);
	char *s = copy, *tok;
	unsigned int n = 0;

	if (!copy)
		return -ENOMEM;
	while ((tok = strsep(&s, ","))) {
		char *eq = strchr(tok, '=');

		if (++n > 32)
			return bad(p, "at most 32 labels");
		if (!eq)
			return bad(p, "expected key=value pairs separated by ',', not '%.100s'", tok);
		*eq = 0;
		if (!*tok || isdigit((unsigned char)*tok) || tok[strspn(tok, "abcdefghijklmnopqrstuvwxyz"
						 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")])
			return bad(p, "label name '%.100s' is not a letter or '_' followed by letters, "
				   "digits or '_'", tok);
		if (!strncmp(tok, "__", 2))
			return bad(p, "label names starting with __ are reserved, not '%.100s'", tok);
		if (!name_ok(eq + 1, 256))
			return bad(p, "the value of label %s is not 1 to 256 letters, digits, '.', '_' "
				   "or '-' ('%.100s')", tok, eq + 1);
	}
	return set_str(&p->c->push_labels, v);
}

static int set_push_timeout(struct parse_ctx *p, const char *v)
{
	uint64_t ms;

	if (parse__duration_ms(v, &ms) || ms < 100 || ms > 3600 * 1000)
		return bad(p, "expected a duration from 100ms to 1h (like 30s), not '%s'", v);
	p->c->push_timeout_ms = ms;
	return 0;
}

static int set_push_spool_size(struct parse_ctx *p, const char *v)
{
	if (parse__size(v, &p->c->push_spool_size, NULL) || p->c->push_spool_size < (64 << 10))
		return bad(p, "expected a size of at least 64K (like 100M), not '%s'", v);
	return 0;
}

static const struct key {
	const char *name;
	int (*set)(struct parse_ctx *p, const char *v);
} keys[] = {
	{ "continuous", set_continuous },
	{ "event", set_event },
	{ "frequency", set_frequency },
	{ "call_graph", set_call_graph },
	{ "unwind", set_unwind },
	{ "convert_stall_timeout", set_convert_stall_timeout },
	{ "all_cgroups", set_all_cgroups },
	{ "target", set_target },
	{ "cpus", set_cpus },
	{ "buffer_size", set_buffer_size },
	{ "compression", set_compression },
	{ "output_dir", set_output_dir },
	{ "rotate_size", set_rotate_size },
	{ "rotate_interval", set_rotate_interval },
	{ "max_total_size", set_max_total_size },
	{ "max_age", set_max_age },
	{ "socket", set_socket },
	{ "socket_group", set_socket_group },
	{ "control_max_duration", set_control_max_duration },
	{ "control_max_sessions", set_control_max_sessions },
	{ "pprof", set_pprof },
	{ "push_url", set_push_url },
	{ "push_name", set_push_name },
	{ "push_labels", set_push_labels },
	{ "push_timeout", set_push_timeout },
	{ "push_spool_size", set_push_spool_size },
};

/* Edit distance, to suggest the key a typo meant. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t d = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			cur[j] = d;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static int parse_line(struct parse_ctx *p, char *line, unsigned int *seen_on, unsigned int lineno)
{
	char *eq, *key, *val;
	size_t vl;

	line = trim(line);
	if (!*line || *line == '#' || *line == ';')
		return 0;
	if (*line == '[')
		return bad(p, "sections are not used: write key = value lines only");
	eq = strchr(line, '=');
	if (!eq)
		return bad(p, "expected 'key = value', not '%.60s'", line);
	*eq = 0;
	key = trim(line);
	val = trim(eq + 1);
	vl = strlen(val);
	if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
		val[vl - 1] = 0;
		val++;
	} else if (memchr(val, '"', vl)) {
		return bad(p, "unbalanced double quote in the value of %s", key);
	}
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		int err;

		if (strcmp(key, keys[i].name))
			continue;
		if (seen_on[i])
			return bad(p, "%s is set twice (also on line %u)", key, seen_on[i]);
		seen_on[i] = lineno;
		if (!*val && keys[i].set != set_socket && keys[i].set != set_socket_group &&
		    keys[i].set != set_push_url)
			return bad(p, "%s has no value", key);
		err = keys[i].set(p, val);
		if (err == -EINVAL && p->why[0]) {
			char tmp[sizeof(p->why)];
			int n = snprintf(tmp, sizeof(tmp), "bad value for %s: ", key);

			if (n > 0 && (size_t)n < sizeof(tmp)) {
				memcpy(tmp + n, p->why, strnlen(p->why, sizeof(tmp) - n - 1));
				tmp[n + strnlen(p->why, sizeof(tmp) - n - 1)] = 0;
				memcpy(p->why, tmp, sizeof(tmp));
			}
		}
		return err;
	}
	{
		size_t best = SIZE_MAX, bi = 0;

		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			size_t d = distance(key, keys[i].name);

			if (d < best) {
				best = d;
				bi = i;
			}
		}
		if (best <= 2)
			return bad(p, "unknown key '%.60s' (did you mean %s?)", key, keys[bi].name);
		return bad(p, "unknown key '%.60s' (see precordd.conf(5))", key);
	}
}

static unsigned int line_of(const unsigned int *seen_on, int (*set)(struct parse_ctx *, const char *))
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].set == set)
			return seen_on[i];
	return 0;
}

/* The push keys: meaningful with push_url only; the spool fits in the budget beside the two
 * files the recording needs (its default: an eighth of the budget, or what is left). */
static int check_push(struct parse_ctx *p, const unsigned int *seen_on, unsigned int *ret_line)
{
	struct daemon_config *c = p->c;
	static const struct { int (*set)(struct parse_ctx *, const char *); const char *name; } only[] = {
		{ set_push_name, "push_name" }, { set_push_labels, "push_labels" },
		{ set_push_timeout, "push_timeout" }, { set_push_spool_size, "push_spool_size" },
	};
	uint64_t room = c->max_total_size - 2 * c->rotate_size; /* >= 0: checked before */

	for (size_t i = 0; i < ARRAY_SIZE(only) && !c->push_url; i++) {
		if (line_of(seen_on, only[i].set)) {
			*ret_line = line_of(seen_on, only[i].set);
			return bad(p, "%s applies when pushing only: set push_url too (like push_url = "
				   "http://pyroscope:4040)", only[i].name);
		}
	}
	if (!c->push_url)
		return 0;
	if (!line_of(seen_on, set_push_spool_size))
		c->push_spool_size = c->max_total_size / 8 < room ? c->max_total_size / 8 : room;
	if (c->push_spool_size > room) {
		*ret_line = line_of(seen_on, set_push_spool_size);
		return bad(p, "push_spool_size (%llu bytes) must fit in max_total_size (%llu bytes) "
			   "beside two files of rotate_size (%llu bytes)",
			   (unsigned long long)c->push_spool_size, (unsigned long long)c->max_total_size,
			   (unsigned long long)c->rotate_size);
	}
	if (c->push_spool_size < (64 << 10)) {
		*ret_line = line_of(seen_on, set_max_total_size);
		return bad(p, "pushing needs a spool of at least 64K for the profiles a server "
			   "missed; max_total_size (%llu bytes) leaves %llu beside two files of "
			   "rotate_size: raise max_total_size", (unsigned long long)c->max_total_size,
			   (unsigned long long)room);
	}
	return 0;
}

/* Rules between keys, reported at the line of the key that breaks them (0: file-wide). */
static int check_whole(struct parse_ctx *p, const unsigned int *seen_on, unsigned int *ret_line)
{
	struct daemon_config *c = p->c;
	size_t i_total = 0, i_cpus = 0, i_group = 0;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		if (keys[i].set == set_max_total_size)
			i_total = i;
		if (keys[i].set == set_cpus)
			i_cpus = i;
		if (keys[i].set == set_socket_group)
			i_group = i;
	}
	if (c->max_total_size < 2 * c->rotate_size) {
		*ret_line = seen_on[i_total];
		return bad(p, "max_total_size (%llu bytes) must hold at least two files of "
			   "rotate_size (%llu bytes): the open one and the last closed one",
			   (unsigned long long)c->max_total_size, (unsigned long long)c->rotate_size);
	}
	if (c->cpus && !c->all) {
		*ret_line = seen_on[i_cpus];
		return bad(p, "cpus applies to target = all only");
	}
	if (check_push(p, seen_on, ret_line))
		return -EINVAL;
	c->socket_gid = (gid_t)-1;
	if (c->socket_group && c->socket_path) {
		struct group gr, *res = NULL;
		char buf[16384];

		if (getgrnam_r(c->socket_group, &gr, buf, sizeof(buf), &res) || !res) {
			/* the default group is optional: without it, root only */
			if (!seen_on[i_group])
				return 0;
			*ret_line = seen_on[i_group];
			return bad(p, "socket_group '%s' does not exist (create it with 'groupadd %s', "
				   "or set socket_group = none for root only)", c->socket_group,
				   c->socket_group);
		}
		c->socket_gid = res->gr_gid;
	}
	return 0;
}

const char *config__error(const struct daemon_config *c)
{
	return c->err;
}

/* ret on failure: empty but for the reason. */
static int failed(struct daemon_config *ret, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int failed(struct daemon_config *ret, int err, const char *fmt, ...)
{
	va_list ap;

	memset(ret, 0, sizeof(*ret));
	va_start(ap, fmt);
	vsnprintf(ret->err, sizeof(ret->err), fmt, ap);
	va_end(ap);
	return err;
}

int config__parse(const char *text, size_t len, const char *name, struct daemon_config *ret)
{
	struct daemon_config c;
	struct parse_ctx p = { .c = &c };
	unsigned int seen_on[ARRAY_SIZE(keys)] = { 0 };
	unsigned int lineno = 0;
	size_t off = 0;
	int err;

	err = config__defaults(&c);
	if (err)
		goto out;
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - text - off) : len - off;
		char line[MAX_LINE];

		lineno++;
		if (ll >= MAX_LINE) {
			err = bad(&p, "line longer than %d bytes", MAX_LINE - 1);
			goto out;
		}
		memcpy(line, text + off, ll);
		line[ll] = 0;
		if (memchr(line, 0, ll)) {
			err = bad(&p, "a NUL byte in the line (is this a text file?)");
			goto out;
		}
		err = parse_line(&p, line, seen_on, lineno);
		if (err)
			goto out;
		off += ll + (nl ? 1 : 0);
	}
	lineno = 0; /* stays 0 for a rule about defaults: reported for the whole file */
	err = check_whole(&p, seen_on, &lineno);
	if (!err) {
		*ret = c;
		ret->err[0] = 0;
		return 0;
	}
out:
	config__free(&c);
	if (err != -EINVAL)
		return failed(ret, err, "%s: %s", name, strerror(-err));
	if (lineno)
		return failed(ret, err, "%s:%u: %s", name, lineno, p.why);
	return failed(ret, err, "%s: %s", name, p.why);
}

int config__load(const char *path, struct daemon_config *ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t got = 0;

	/* without blocking: a FIFO would wait for a writer before it could be refused below */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;

		return failed(ret, -e, "cannot read %s: %s%s", path, strerror(e),
			      e == ENOENT ? " (install the sample with 'make install', or give "
					    "another with --config)" : "");
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_CONFIG_SIZE)
		return failed(ret, -EINVAL, "%s: not a regular file of at most 1 MiB", path);
	buf = malloc(st.st_size + 1);
	if (!buf)
		return failed(ret, -ENOMEM, "cannot read %s: %s", path, strerror(ENOMEM));
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	return config__parse(buf, got, path, ret);
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool config__same_recording(const struct daemon_config *a, const struct daemon_config *b)
{
	if (a->continuous != b->continuous || !str_eq(a->event, b->event) ||
	    a->frequency != b->frequency || a->callgraph != b->callgraph || a->all_cgroups != b->all_cgroups ||
	    (a->callgraph == CALLGRAPH_DWARF && a->stack_size != b->stack_size) ||
	    a->all != b->all || !str_eq(a->cpus, b->cpus) || a->buffer_size != b->buffer_size ||
	    a->compression != b->compression || !str_eq(a->output_dir, b->output_dir) ||
	    a->nr_pids != b->nr_pids || a->nr_cgroups != b->nr_cgroups)
		return false;
	for (size_t i = 0; i < a->nr_pids; i++)
		if (a->pids[i] != b->pids[i])
			return false;
	for (size_t i = 0; i < a->nr_cgroups; i++)
		if (strcmp(a->cgroups[i], b->cgroups[i]))
			return false;
	return true;
}
