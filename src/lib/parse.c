/* The shared value parsers (see parse.h). Numbers are read digit by digit rather than with
 * strtoull, which would accept blanks, a sign and "0x": every front end must refuse exactly the
 * same strings, and a root daemon reads some of them from a socket. */
#include "lib/parse.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

/* Digits at s into *ret; *ret_end after them. -EINVAL when there is none, -ERANGE on overflow. */
static int digits(const char *s, uint64_t *ret, const char **ret_end)
{
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (p == s)
		return -EINVAL;
	*ret = v;
	*ret_end = p;
	return 0;
}

int parse__uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	const char *end;
	uint64_t v;
	int r = digits(s, &v, &end);

	if (r < 0)
		return r;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse__pid(const char *s, pid_t *ret)
{
	uint64_t v;
	int r = parse__uint(s, 1, INT_MAX, &v);

	if (r < 0)
		return r;
	*ret = (pid_t)v;
	return 0;
}

int parse__size(const char *s, uint64_t *ret, bool *ret_suffixed)
{
	const char *end;
	uint64_t v, mul = 1;
	int r = digits(s, &v, &end);

	if (r < 0)
		return r;
	switch (*end) {
	case 'k': case 'K': mul = 1ULL << 10; end++; break;
	case 'm': case 'M': mul = 1ULL << 20; end++; break;
	case 'g': case 'G': mul = 1ULL << 30; end++; break;
	case 't': case 'T': mul = 1ULL << 40; end++; break;
	}
	if (mul > 1 && *end == 'i')
		end++;
	if (*end == 'B' || (mul > 1 && *end == 'b'))
		end++;
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*ret = v * mul;
	if (ret_suffixed)
		*ret_suffixed = end[-1] < '0' || end[-1] > '9';
	return 0;
}

int parse__duration_ms(const char *s, uint64_t *ret)
{
	static const struct { const char *unit; uint64_t ms; } units[] = {
		{ "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "sec", 1000 }, { "m", 60000 },
		{ "min", 60000 }, { "h", 3600000 }, { "d", 86400000 },
	};
	const char *end, *frac = NULL;
	uint64_t v, f = 0, scale = 1, ms;
	int r = digits(s, &v, &end);

	if (r < 0)
		return r;
	if (*end == '.') {
		frac = end + 1;
		/* at most 9 fraction digits: a nanosecond is as fine as a duration gets */
		for (end = frac; *end >= '0' && *end <= '9'; end++) {
			if (end - frac >= 9)
				return -EINVAL;
			f = f * 10 + (uint64_t)(*end - '0');
			scale *= 10;
		}
		if (end == frac)
			return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v > (UINT64_MAX - units[i].ms) / units[i].ms)
			return -ERANGE;
		/* f / scale < 1 and units[i].ms <= 86400000: f * ms fits in 64 bits */
		ms = v * units[i].ms + (f * units[i].ms + scale / 2) / scale;
		if (!ms && (v || f))
			return -ERANGE;
		*ret = ms;
		return 0;
	}
	return -EINVAL;
}

int parse__freq(const char *s, uint64_t *ret)
{
	return parse__uint(s, 1, PARSE_FREQ_MAX, ret);
}

int parse__callgraph(const char *s, enum callgraph_mode *ret_mode, uint32_t *ret_stack)
{
	uint64_t size = PARSE_STACK_DEFAULT;

	if (!strcmp(s, "fp") || !strcmp(s, "none")) {
		*ret_mode = s[0] == 'f' ? CALLGRAPH_FP : CALLGRAPH_NONE;
		*ret_stack = 0;
		return 0;
	}
	if (strncmp(s, "dwarf", 5) || (s[5] && s[5] != ','))
		return -EINVAL;
	if (s[5] == ',' && (parse__size(s + 6, &size, NULL) < 0 || size < PARSE_STACK_MIN ||
			    size > PARSE_STACK_MAX))
		return -ERANGE;
	*ret_mode = CALLGRAPH_DWARF;
	*ret_stack = (uint32_t)((size + 7) & ~7ULL);
	return 0;
}

const char *parse__callgraph_name(enum callgraph_mode mode)
{
	switch (mode) {
	case CALLGRAPH_DWARF: return "dwarf";
	case CALLGRAPH_FP: return "fp";
	case CALLGRAPH_NONE: return "none";
	}
	return NULL;
}

int parse__cgroup_path(const char *s)
{
	size_t n = strlen(s);

	if (n >= PARSE_CGROUP_PATH_SIZE)
		return -ENAMETOOLONG;
	if (s[0] != '/')
		return -EINVAL;
	for (const char *c = s; *c; c++)
		if (*c <= ' ' || *c >= 127 || *c == ',')
			return -EINVAL;
	if (n == 1)
		return 0;
	/* every component non-empty (no "//", no trailing "/"), not "." nor ".." */
	for (const char *c = s; *c == '/';) {
		const char *e = strchrnul(c + 1, '/');
		size_t len = (size_t)(e - c - 1);

		if (!len || (len == 1 && c[1] == '.') || (len == 2 && c[1] == '.' && c[2] == '.'))
			return -EINVAL;
		c = e;
	}
	return 0;
}

/* FRAC after a '.': up to 9 digits of ns (more are cut). Returns the end, or NULL. */
static const char *parse_frac(const char *p, uint64_t *ret_ns)
{
	uint64_t ns = 0, scale = 100000000;

	*ret_ns = 0;
	if (*p != '.')
		return p;
	if (!(*++p >= '0' && *p <= '9'))
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
		ns += scale ? (uint64_t)(*p - '0') * scale : 0;
	*ret_ns = ns;
	return p;
}

/* "@SECONDS[.FRAC]" */
static int parse_epoch(const char *s, uint64_t *ret_ns)
{
	uint64_t sec = 0, ns;
	const char *p = s;

	if (!(*p >= '0' && *p <= '9'))
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (sec > (UINT64_MAX / 1000000000ull - 9) / 10)
			return -ERANGE;
		sec = sec * 10 + (uint64_t)(*p - '0');
	}
	p = parse_frac(p, &ns);
	if (!p || *p)
		return -EINVAL;
	*ret_ns = sec * 1000000000ull + ns;
	return 0;
}

int parse__wall_time(const char *s, time_t now, uint64_t *ret_ns)
{
	struct tm tm = { 0 }, day;
	const char *p = s, *t;
	bool utc = false;
	uint64_t frac = 0;
	size_t len = strlen(s);
	char buf[64];
	time_t sec;

	if (*s == '@')
		return parse_epoch(s + 1, ret_ns);
	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len + 1);
	if (buf[len - 1] == 'Z') {
		utc = true;
		buf[--len] = 0;
	}
	p = buf;
	if (utc)
		gmtime_r(&now, &tm);
	else
		localtime_r(&now, &tm);
	tm.tm_sec = 0;
	day = tm;               /* a failed strptime may have set fields */
	if ((t = strptime(p, "%Y-%m-%d", &day)) && (!*t || *t == ' ' || *t == 'T')) {
		tm = day;
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		p = *t ? t + 1 : t;
	} else if (strchr(p, '-')) {
		return -EINVAL;
	}
	if (*p) {
		if (!(t = strptime(p, "%H:%M", &tm)))
			return -EINVAL;
		tm.tm_sec = 0;
		if (*t == ':' && (!(t = strptime(t + 1, "%S", &tm)) || !(t = parse_frac(t, &frac))))
			return -EINVAL;
		if (*t)
			return -EINVAL;
	}
	tm.tm_isdst = -1;
	sec = utc ? timegm(&tm) : mktime(&tm);
	if (sec == (time_t)-1 || sec < 0)
		return -ERANGE;
	*ret_ns = (uint64_t)sec * 1000000000ull + frac;
	return 0;
}
