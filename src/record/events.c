/* Event names to perf_event_attr. perf's generic names, raw "rNNNN" codes and "pmu/terms/" come
 * from our own tables and sysfs, with perf 6.1's modifier rules (:u :k :h :G :H :p :D);
 * everything else goes to libpfm4, which knows the PMU-specific events of the CPU it detected.
 * Nothing here opens an event or prints: the explain functions only turn an errno from the
 * caller's perf_event_open or mmap into one or two lines naming the event, reason and remedy. */
#include "record/events.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

/* Only pfmlib.h: <perfmon/pfmlib_perf_event.h> brings libpfm's own copy of struct
 * perf_event_attr, which clashes with <linux/perf_event.h>. */
#include <perfmon/pfmlib.h>

#include "lib/cleanup.h"
#include "record/tracefs.h"

/* The argument of pfm_get_os_event_encoding(PFM_OS_PERF_EVENT_EXT), laid out as libpfm's
 * pfm_perf_encode_arg_t (ABI0, 40 bytes on 64-bit); declared here for the reason above. */
struct pfm_perf_arg {
	struct perf_event_attr *attr;
	char **fstr;
	size_t size;
	int idx;
	int cpu;
	int flags;
	int pad0;
};
_Static_assert(sizeof(void *) != 8 || sizeof(struct pfm_perf_arg) == 40,
	       "must match libpfm's pfm_perf_encode_arg_t (PFM_PERF_ENCODE_ABI0)");

#define SYSFS_PMUS "/sys/bus/event_source/devices"

struct generic_event {
	const char *name;
	__u32 type;
	__u64 config;
};

/* perf's symbolic names (tools/perf/util/parse-events.c, event_symbols_hw/sw), aliases included.
 * The first spelling of each config is the one suggestions and fallbacks print. */
static const struct generic_event generic_events[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES },
};

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status = -ENODEV;

static int pfm_to_errno(int r)
{
	switch (r) {
	case PFM_SUCCESS:
		return 0;
	case PFM_ERR_NOTFOUND:
		return -ENOENT;
	case PFM_ERR_NOMEM:
		return -ENOMEM;
	case PFM_ERR_NOTSUPP:
		return -EOPNOTSUPP;
	case PFM_ERR_NOINIT:
		return -ENODEV;
	default: /* bad umask, attribute, value or combination: a modifier problem */
		return -EINVAL;
	}
}

static void pfm_init_once(void)
{
	pfm_status = pfm_to_errno(pfm_initialize());
}

int events__init(void)
{
	pthread_once(&pfm_once, pfm_init_once);
	return pfm_status;
}

static const struct generic_event *generic_find(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(generic_events); i++)
		if (strlen(generic_events[i].name) == len &&
		    !strncasecmp(generic_events[i].name, name, len))
			return &generic_events[i];
	return NULL;
}

static bool is_perf_modifier_string(const char *mods)
{
	if (!*mods)
		return false;
	return strspn(mods, "ukhGHpD") == strlen(mods);
}

/* perf 6.1's modifier rules, checked against `perf evlist -v`: no modifier at all means
 * exclude_guest; the first of u/k/h excludes all three levels and each letter re-includes its
 * own; G/H do the same for guest/host; u and p also exclude the guest unless G/H were given;
 * up to three p raise precise_ip. mods == NULL means no modifier string. */
static int apply_perf_modifiers(const char *mods, struct perf_event_attr *attr)
{
	bool exclude = false, exclude_gh = false;
	bool eu = false, ek = false, eh = false, eg = false, eH = false;
	unsigned precise = 0;
	bool pinned = false;

	if (!mods) {
		attr->exclude_user = attr->exclude_kernel = attr->exclude_hv = 0;
		attr->exclude_host = 0;
		attr->exclude_guest = 1;
		attr->precise_ip = 0;
		return 0;
	}
	if (!is_perf_modifier_string(mods))
		return -EINVAL;

	for (const char *c = mods; *c; c++) {
		switch (*c) {
		case 'u':
		case 'k':
		case 'h':
			if (!exclude)
				exclude = eu = ek = eh = true;
			if (*c == 'u') {
				if (!exclude_gh)
					eg = true;
				eu = false;
			} else if (*c == 'k') {
				ek = false;
			} else {
				eh = false;
			}
			break;
		case 'G':
		case 'H':
			if (!exclude_gh)
				exclude_gh = eg = eH = true;
			if (*c == 'G')
				eg = false;
			else
				eH = false;
			break;
		case 'p':
			if (++precise > 3)
				return -EINVAL;
			/* precise sampling of a guest is not possible: perf excludes it */
			if (!exclude_gh)
				eg = true;
			break;
		case 'D':
			pinned = true;
			break;
		}
	}
	attr->exclude_user = eu;
	attr->exclude_kernel = ek;
	attr->exclude_hv = eh;
	attr->exclude_guest = eg;
	attr->exclude_host = eH;
	attr->precise_ip = precise;
	if (pinned)
		attr->pinned = 1;
	return 0;
}

static int read_long_file(const char *path, long *ret)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	long v;

	if (!f)
		return -errno;
	if (fscanf(f, "%ld", &v) != 1)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Place value into the bit ranges of a sysfs format file such as "config:0-7,32-35", low bits
 * of value into the first range. -EINVAL if the format is malformed or value does not fit. */
static int apply_format(const char *format, __u64 value, struct perf_event_attr *attr)
{
	const char *colon = strchr(format, ':');
	__u64 *target;
	size_t flen;

	if (!colon)
		return -EINVAL;
	flen = colon - format;
	if (flen == 6 && !strncmp(format, "config", 6))
		target = &attr->config;
	else if (flen == 7 && !strncmp(format, "config1", 7))
		target = &attr->config1;
	else if (flen == 7 && !strncmp(format, "config2", 7))
		target = &attr->config2;
	else
		return -EINVAL;

	const char *p = colon + 1;
	while (*p && *p != '\n') {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			return -EINVAL;
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p)
				return -EINVAL;
		}
		if (hi < lo || hi > 63)
			return -EINVAL;
		unsigned width = hi - lo + 1;
		__u64 mask = width == 64 ? ~0ULL : (1ULL << width) - 1;
		*target |= (value & mask) << lo;
		value = width == 64 ? 0 : value >> width;
		p = end;
		if (*p == ',')
			p++;
	}
	return value ? -EINVAL : 0;
}

/* "pmu/term=value,.../[:mods]": type from sysfs; terms config, config1, config2 set the field
 * directly, any other term is looked up in the PMU's format directory. */
static int parse_pmu_spec(const char *name, struct perf_event_attr *attr)
{
	const char *slash = strchr(name, '/');
	const char *close = slash ? strchr(slash + 1, '/') : NULL;
	char path[512];
	long type;
	int r;

	if (!slash || !close || slash == name || slash - name > 64)
		return -EINVAL;
	for (const char *c = name; c < slash; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.')
			return -EINVAL;
	if (close[1] && (close[1] != ':' || !close[2]))
		return -EINVAL;

	int plen = (int)(slash - name);
	snprintf(path, sizeof(path), SYSFS_PMUS "/%.*s/type", plen, name);
	r = read_long_file(path, &type);
	if (r < 0)
		return r == -ENOENT ? -ENOENT : -EINVAL;
	attr->type = type;

	_cleanup_free_ char *terms = strndup(slash + 1, close - slash - 1);
	if (!terms)
		return -ENOMEM;
	char *save = NULL;
	for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		__u64 value = 1; /* a bare term is a flag, as in perf */
		char *end;

		if (eq) {
			*eq = '\0';
			errno = 0;
			value = strtoull(eq + 1, &end, 0);
			if (errno || end == eq + 1 || *end)
				return -EINVAL;
		}
		if (!strcmp(t, "config")) {
			attr->config = value;
		} else if (!strcmp(t, "config1")) {
			attr->config1 = value;
		} else if (!strcmp(t, "config2")) {
			attr->config2 = value;
		} else {
			char format[256];
			_cleanup_fclose_ FILE *f = NULL;

			if (strchr(t, '/') || !*t || strlen(t) > 64)
				return -EINVAL;
			snprintf(path, sizeof(path), SYSFS_PMUS "/%.*s/format/%s", plen, name, t);
			f = fopen(path, "re");
			if (!f || !fgets(format, sizeof(format), f))
				return -EINVAL;
			r = apply_format(format, value, attr);
			if (r < 0)
				return r;
		}
	}
	return apply_perf_modifiers(close[1] ? close + 2 : NULL, attr);
}

/* "r1a8" with optional perf modifiers: a raw code for the cpu PMU. */
static bool parse_raw(const char *base, size_t len, __u64 *ret)
{
	char hex[17];

	if (len < 2 || len > 17 || base[0] != 'r')
		return false;
	for (size_t i = 1; i < len; i++)
		if (!isxdigit((unsigned char)base[i]))
			return false;
	memcpy(hex, base + 1, len - 1);
	hex[len - 1] = '\0';
	*ret = strtoull(hex, NULL, 16);
	return true;
}

static int pfm_encode(const char *name, struct perf_event_attr *attr)
{
	struct pfm_perf_arg arg = { .attr = attr, .size = sizeof(arg) };

	memset(attr, 0, sizeof(*attr));
	/* size first: libpfm reads it to know which attr layout the caller has (0 = 64 bytes) */
	attr->size = sizeof(*attr);
	return pfm_to_errno(pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3,
						      PFM_OS_PERF_EVENT_EXT, &arg));
}

/* libpfm first with the whole string (its own modifiers: u, k, c=2, precise=2, ...); if that
 * fails and the last ":" part is a perf modifier string such as "pp" or "uk", encode the rest
 * and apply perf's rules on top, so "INST_RETIRED:ANY_P:pp" works as in perf. */
static int parse_pfm(const char *name, struct perf_event_attr *attr)
{
	const char *last;
	int r;

	if (events__init() < 0)
		return -ENOENT;
	r = pfm_encode(name, attr);
	if (r == 0 || r == -ENOMEM)
		return r;

	last = strrchr(name, ':');
	if (!last || !is_perf_modifier_string(last + 1))
		return r;
	_cleanup_free_ char *prefix = strndup(name, last - name);
	if (!prefix)
		return -ENOMEM;
	int r2 = pfm_encode(prefix, attr);
	if (r2 < 0)
		return r; /* the error of the name as written */
	return apply_perf_modifiers(last + 1, attr);
}

/* name as a kernel tracepoint, sampled at every hit (period 1): 0 with *attr set; -ENOENT when
 * tracefs has the subsystem but not the event; 1 when it is not one tracefs knows (not of the
 * "subsystem:event" shape, no such subsystem, or no tracefs). */
static int parse_tracepoint(const char *name, struct perf_event_attr *attr)
{
	char sys[64], tp[64];
	uint64_t id;
	int r;

	if (tracefs__split(name, sys, tp) < 0)
		return 1;
	r = tracefs__event_id(sys, tp, &id);
	if (r == -ENOENT)
		return tracefs__has_system(sys) ? -ENOENT : 1;
	if (r < 0)
		return 1;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = id;
	attr->sample_period = 1;
	return 0;
}

int event__parse(const char *name, struct evdesc *ret)
{
	struct perf_event_attr attr;
	const struct generic_event *g;
	size_t len, baselen;
	const char *colon;
	__u64 raw;
	int r;

	if (!name || !*name)
		return -EINVAL;
	len = strlen(name);
	if (len >= sizeof(ret->name))
		return -EINVAL;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);

	if (strchr(name, '/')) {
		r = parse_pmu_spec(name, &attr);
		if (r < 0)
			return r;
		goto done;
	}

	colon = strchr(name, ':');
	baselen = colon ? (size_t)(colon - name) : len;
	g = generic_find(name, baselen);
	if (g) {
		attr.type = g->type;
		attr.config = g->config;
		if (apply_perf_modifiers(colon ? colon + 1 : NULL, &attr) == 0)
			goto done;
		/* maybe libpfm's syntax ("cycles:u=1:k=0"); otherwise a bad modifier */
		r = parse_pfm(name, &attr);
		if (r < 0)
			return r == -ENOMEM ? r : -EINVAL;
		goto done;
	}

	if (parse_raw(name, baselen, &raw)) {
		attr.type = PERF_TYPE_RAW;
		attr.config = raw;
		r = apply_perf_modifiers(colon ? colon + 1 : NULL, &attr);
		if (r < 0)
			return r;
		goto done;
	}

	r = parse_pfm(name, &attr);
	/* "subsystem:event" is a tracepoint as tracefs names it: libpfm knows tracepoints only
	 * while debugfs is mounted, and then calls an unknown one a bad umask */
	if (colon && r != -ENOMEM && (r < 0 || attr.type == PERF_TYPE_TRACEPOINT)) {
		int t = parse_tracepoint(name, &attr);

		if (t == 0)
			goto done;
		if (t < 0)
			return t;
	}
	if (r < 0)
		return r;
done:
	memcpy(ret->name, name, len + 1);
	ret->attr = attr;
	return 0;
}

int events__parse_list(const char *list, struct evdesc *ret, size_t max, size_t *ret_bad_index)
{
	size_t n = 0;
	const char *p = list;

	if (!list)
		return -EINVAL;
	for (;;) {
		bool in_terms = false;
		const char *q = p;
		char item[sizeof(ret->name)];
		int r;

		/* a comma inside "pmu/a=1,b=2/" belongs to the terms */
		while (*q && (in_terms || *q != ',')) {
			if (*q == '/')
				in_terms = !in_terms;
			q++;
		}
		const char *s = p, *e = q;
		while (s < e && isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			e--;
		if (n == max) {
			if (ret_bad_index)
				*ret_bad_index = n;
			return -E2BIG;
		}
		if (e == s || (size_t)(e - s) >= sizeof(item)) {
			if (ret_bad_index)
				*ret_bad_index = n;
			return -EINVAL;
		}
		memcpy(item, s, e - s);
		item[e - s] = '\0';
		r = event__parse(item, &ret[n]);
		if (r < 0) {
			if (ret_bad_index)
				*ret_bad_index = n;
			return r;
		}
		n++;
		if (!*q)
			return (int)n;
		p = q + 1;
	}
}

/* Optimal string alignment distance, case-insensitive: a swapped pair of letters costs one,
 * the commonest typo in event names. Strings longer than 127 are cut. */
static unsigned edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned rows[3][128];
	unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	if (la > 127)
		la = 127;
	if (lb > 127)
		lb = 127;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			unsigned cost = ca != cb;
			unsigned v = prev[j] + 1;

			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (prev[j - 1] + cost < v)
				v = prev[j - 1] + cost;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
		}
		unsigned *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

struct suggest_ctx {
	const char *name;
	size_t len;
	unsigned maxd;
	char (*ret)[64];
	unsigned *dist;
	size_t n, count;
};

/* Keep the best n distinct names, stable for equal distances so that the generic table, offered
 * first, wins ties against libpfm's spellings. */
static void suggest_offer(struct suggest_ctx *c, const char *cand)
{
	size_t clen = strlen(cand);
	unsigned d;
	size_t pos;

	if (clen >= 64 || (clen > c->len ? clen - c->len : c->len - clen) > c->maxd)
		return;
	d = edit_distance(c->name, c->len, cand, clen);
	if (d > c->maxd || d == 0)
		return;
	for (size_t i = 0; i < c->count; i++)
		if (!strcasecmp(c->ret[i], cand))
			return;
	for (pos = c->count; pos > 0 && c->dist[pos - 1] > d; pos--)
		;
	if (pos >= c->n)
		return;
	size_t last = c->count < c->n ? c->count : c->n - 1;
	for (size_t i = last; i > pos; i--) {
		memcpy(c->ret[i], c->ret[i - 1], 64);
		c->dist[i] = c->dist[i - 1];
	}
	memcpy(c->ret[pos], cand, clen + 1);
	c->dist[pos] = d;
	if (c->count < c->n)
		c->count++;
}

/* libpfm lists perf's aliases in capitals ("L1-DCACHE-LOAD-MISSES"); offer them as perf spells
 * them ("L1-dcache-load-misses"), which both perf and event__parse accept. */
static void perf_spelling(const char *upper, char *buf, size_t len)
{
	static const char *const prefixes[] = { "L1-", "LLC-", "dTLB-", "iTLB-" };
	size_t i;

	for (i = 0; upper[i] && i + 1 < len; i++)
		buf[i] = tolower((unsigned char)upper[i]);
	buf[i] = '\0';
	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		size_t plen = strlen(prefixes[i]);

		if (!strncasecmp(buf, prefixes[i], plen)) {
			memcpy(buf, prefixes[i], plen);
			break;
		}
	}
}

static void suggest_from_pfm(struct suggest_ctx *c)
{
	pfm_pmu_t pmu;

	if (events__init() < 0)
		return;
	pfm_for_all_pmus(pmu) {
		pfm_pmu_info_t pinfo;

		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present)
			continue;
		/* perf_raw's only "event" is the r0000 template */
		if (pinfo.name && !strcmp(pinfo.name, "perf_raw"))
			continue;
		for (int i = pinfo.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t einfo;

			memset(&einfo, 0, sizeof(einfo));
			einfo.size = sizeof(einfo);
			if (pfm_get_event_info(i, PFM_OS_PERF_EVENT_EXT, &einfo) != PFM_SUCCESS)
				continue;
			if (!einfo.name)
				continue;
			if (pmu == PFM_PMU_PERF_EVENT && strchr(einfo.name, '-')) {
				char alias[64];

				perf_spelling(einfo.name, alias, sizeof(alias));
				suggest_offer(c, alias);
			} else {
				suggest_offer(c, einfo.name);
			}
		}
	}
}

size_t event__suggest(const char *name, char (*ret)[64], size_t n)
{
	struct suggest_ctx c = { .name = name, .ret = ret, .n = n };
	const char *colon;

	if (!name || !n)
		return 0;
	colon = strchr(name, ':');
	c.len = colon ? (size_t)(colon - name) : strlen(name);
	if (!c.len)
		return 0;
	/* a third of the name, 1..3: "cyles" gets one edit, long PMU names three */
	c.maxd = c.len / 3;
	if (c.maxd < 1)
		c.maxd = 1;
	if (c.maxd > 3)
		c.maxd = 3;
	c.dist = calloc(n, sizeof(*c.dist));
	if (!c.dist)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(generic_events); i++)
		suggest_offer(&c, generic_events[i].name);
	suggest_from_pfm(&c);
	free(c.dist);
	return c.count;
}

static bool cpu_pmu_type(__u32 type)
{
	static const char *const names[] = { "cpu", "cpu_core", "cpu_atom" };
	char path[128];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		long t;

		snprintf(path, sizeof(path), SYSFS_PMUS "/%s/type", names[i]);
		if (read_long_file(path, &t) == 0 && (__u32)t == type)
			return true;
	}
	return false;
}

static bool have_cpu_pmu(void)
{
	return access(SYSFS_PMUS "/cpu", F_OK) == 0 || access(SYSFS_PMUS "/cpu_core", F_OK) == 0 ||
	       access(SYSFS_PMUS "/armv8_pmuv3_0", F_OK) == 0;
}

bool event__is_hardware(const struct evdesc *ev)
{
	switch (ev->attr.type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		return true;
	case PERF_TYPE_SOFTWARE:
	case PERF_TYPE_TRACEPOINT:
	case PERF_TYPE_BREAKPOINT:
		return false;
	default:
		return cpu_pmu_type(ev->attr.type);
	}
}

/* ":u", ":k", ":uk"... for the privilege levels attr still counts; "" when it counts all. */
static void level_suffix(const struct perf_event_attr *attr, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (!attr->exclude_user && !attr->exclude_kernel && !attr->exclude_hv)
		return;
	buf[n++] = ':';
	if (!attr->exclude_user)
		buf[n++] = 'u';
	if (!attr->exclude_kernel)
		buf[n++] = 'k';
	if (!attr->exclude_hv)
		buf[n++] = 'h';
	buf[n < len ? n : len - 1] = '\0';
}

int event__fallback(const struct evdesc *ev, struct evdesc *ret)
{
	struct evdesc fb;
	char suffix[8];
	__u32 config = (__u32)ev->attr.config; /* upper half: hybrid PMU type */

	/* Like perf: only the time-proportional cycle counters have a like-for-like software
	 * substitute; cpu-clock samples the same places at a fixed rate instead of per cycle. */
	if (ev->attr.type != PERF_TYPE_HARDWARE ||
	    (config != PERF_COUNT_HW_CPU_CYCLES && config != PERF_COUNT_HW_REF_CPU_CYCLES))
		return -ENOENT;

	fb = *ev;
	fb.attr.type = PERF_TYPE_SOFTWARE;
	fb.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	/* a timer has no skid to correct */
	fb.attr.precise_ip = 0;
	level_suffix(&ev->attr, suffix, sizeof(suffix));
	snprintf(fb.name, sizeof(fb.name), "cpu-clock%s", suffix);
	*ret = fb;
	return 0;
}

static const char *ev_name(const struct evdesc *ev)
{
	return ev && ev->name[0] ? ev->name : "(unnamed)";
}

/* EACCES, EPERM: who may open it, and how to allow it. */
static void explain_permission(const struct evdesc *ev, const char *name, int err, char *buf,
			       size_t len)
{
	bool kernel = ev && !ev->attr.exclude_kernel;
	long paranoid;

	if (read_long_file("/proc/sys/kernel/perf_event_paranoid", &paranoid) < 0) {
		snprintf(buf, len,
			 "no permission to open event '%s' (%s); run as root or grant "
			 "CAP_PERFMON, or check kernel.perf_event_paranoid",
			 name, strerror(err));
		return;
	}
	if (geteuid() == 0) {
		/* root passes the paranoid check: something else is in the way */
		snprintf(buf, len,
			 "no permission to open event '%s' even as root "
			 "(kernel.perf_event_paranoid is %ld);\nin a container grant CAP_PERFMON "
			 "or run 'sysctl kernel.perf_event_paranoid=-1' on the host; a seccomp "
			 "filter or kernel lockdown may also forbid perf_event_open",
			 name, paranoid);
		return;
	}
	snprintf(buf, len,
		 "no permission to open event '%s': kernel.perf_event_paranoid is %ld%s;\n"
		 "run as root or with CAP_PERFMON, or allow it with "
		 "'sysctl kernel.perf_event_paranoid=-1'%s",
		 name, paranoid,
		 paranoid >= 3 ? " (3 and above forbid all use without CAP_PERFMON)" :
		 paranoid == 2 && kernel ? " (2 forbids kernel profiling)" : "",
		 paranoid == 2 && kernel ? ", or profile user space only with ':u'" : "");
}

/* EMFILE: the fd limit, and the one to ask for. */
static void explain_nofile(const char *name, char *buf, size_t len)
{
	struct rlimit rl = { 0, 0 };
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long want;

	getrlimit(RLIMIT_NOFILE, &rl);
	if (ncpus < 1)
		ncpus = 1;
	/* one descriptor per event per CPU; offer the hard limit, or double the soft one */
	want = rl.rlim_max != RLIM_INFINITY && rl.rlim_max > rl.rlim_cur ?
		       (unsigned long long)rl.rlim_max : (unsigned long long)rl.rlim_cur * 2;
	snprintf(buf, len,
		 "cannot open event '%s': too many open files (limit %llu; each event needs "
		 "one per CPU, %ld here);\nraise the limit with 'ulimit -n %llu' or use fewer "
		 "events or CPUs",
		 name, (unsigned long long)rl.rlim_cur, ncpus, want);
}

/* ENOENT, ENODEV, ENXIO, EOPNOTSUPP: what this machine cannot do. */
static void explain_unsupported(const struct evdesc *ev, const char *name, int err, char *buf,
				size_t len)
{
	bool hw = ev && event__is_hardware(ev);

	if (hw && !have_cpu_pmu()) {
		char suffix[8] = "";

		level_suffix(&ev->attr, suffix, sizeof(suffix));
		snprintf(buf, len,
			 "event '%s' is not supported: this machine has no hardware PMU "
			 "(virtual machine?);\nuse a software event instead, e.g. "
			 "-e cpu-clock%s",
			 name, suffix);
	} else if (err == EOPNOTSUPP && ev && ev->attr.precise_ip) {
		snprintf(buf, len,
			 "event '%s': precise sampling (precise_ip=%u) is not supported here; "
			 "remove or lower the :p modifier",
			 name, (unsigned)ev->attr.precise_ip);
	} else if (err == EOPNOTSUPP && hw) {
		snprintf(buf, len,
			 "event '%s': this PMU cannot sample it (no overflow interrupt); "
			 "count it instead, or sample cpu-clock",
			 name);
	} else if (err == ENODEV && !hw) {
		snprintf(buf, len, "event '%s': no such device; is the CPU offline or out of range?",
			 name);
	} else {
		snprintf(buf, len,
			 "event '%s' is not supported by this %s; run 'perf list' for what is available",
			 name, hw ? "CPU's PMU" : "kernel");
	}
}

const char *event__explain_open_error(const struct evdesc *ev, int err, char *buf, size_t len)
{
	const char *name = ev_name(ev);

	if (!buf || !len)
		return buf;
	if (err < 0)
		err = -err;

	switch (err) {
	case EACCES:
	case EPERM:
		explain_permission(ev, name, err, buf, len);
		break;
	case EMFILE:
		explain_nofile(name, buf, len);
		break;
	case ENOENT:
	case ENODEV:
	case ENXIO:
	case EOPNOTSUPP:
		explain_unsupported(ev, name, err, buf, len);
		break;
	case EINVAL:
		if (ev && ev->attr.precise_ip)
			snprintf(buf, len,
				 "event '%s': precise_ip=%u is not supported by this PMU; "
				 "lower the :p level (or drop it)",
				 name, (unsigned)ev->attr.precise_ip);
		else
			snprintf(buf, len,
				 "event '%s': the kernel rejected its attributes (%s); an unsupported "
				 "modifier or sampling option?\n'dmesg | grep -i perf' may say more",
				 name, strerror(err));
		break;
	case EBUSY:
		snprintf(buf, len,
			 "event '%s': the PMU counters are busy, in use by another profiler or the "
			 "NMI watchdog; stop it and retry",
			 name);
		break;
	case ESRCH:
		snprintf(buf, len, "event '%s': the target process no longer exists", name);
		break;
	case E2BIG:
		snprintf(buf, len,
			 "event '%s': the kernel is older than this program's perf_event_attr (%s)",
			 name, strerror(err));
		break;
	case EOVERFLOW:
		snprintf(buf, len,
			 "event '%s': the requested call-chain depth exceeds "
			 "kernel.perf_event_max_stack; raise it or ask for less",
			 name);
		break;
	default:
		snprintf(buf, len,
			 "cannot open event '%s': %s (errno %d); 'dmesg | grep -i perf' may say more",
			 name, strerror(err), err);
		break;
	}
	return buf;
}

const char *events__explain_mmap_error(int err, size_t pages, char *buf, size_t len)
{
	long page_kb = sysconf(_SC_PAGESIZE) / 1024;
	unsigned long long kb;
	long mlock_kb;

	if (!buf || !len)
		return buf;
	if (err < 0)
		err = -err;
	if (page_kb < 1)
		page_kb = 4;
	/* the data pages plus the control page, per CPU */
	kb = (unsigned long long)(pages + 1) * page_kb;

	if (read_long_file("/proc/sys/kernel/perf_event_mlock_kb", &mlock_kb) < 0)
		mlock_kb = -1;
	switch (err) {
	case EPERM:
		/* the kernel refuses pages beyond perf_event_mlock_kb (times the online CPUs) plus
		 * RLIMIT_MEMLOCK to users without CAP_IPC_LOCK */
		if (mlock_kb >= 0)
			snprintf(buf, len,
				 "cannot map %zu pages (%llu KiB) per ring buffer: over the locked-memory "
				 "limit, kernel.perf_event_mlock_kb is %ld per CPU;\nraise it with "
				 "'sysctl kernel.perf_event_mlock_kb=%llu' or map fewer pages with -m",
				 pages, kb, mlock_kb, kb);
		else
			snprintf(buf, len,
				 "cannot map %zu pages (%llu KiB) per ring buffer: over the locked-memory "
				 "limit;\nraise kernel.perf_event_mlock_kb to %llu or map fewer pages "
				 "with -m",
				 pages, kb, kb);
		break;
	case ENOMEM:
		snprintf(buf, len,
			 "cannot map %zu pages (%llu KiB) per ring buffer: the kernel is out of memory "
			 "for it;\nmap fewer pages with -m (kernel.perf_event_mlock_kb is %ld)",
			 pages, kb, mlock_kb);
		break;
	case EINVAL:
		snprintf(buf, len,
			 "cannot map %zu pages per ring buffer: the count must be a power of two; "
			 "fix -m",
			 pages);
		break;
	default:
		snprintf(buf, len, "cannot map %zu pages per ring buffer: %s", pages,
			 strerror(err));
		break;
	}
	return buf;
}
