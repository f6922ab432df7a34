/* perf's --time syntax, parsed into inclusive nanosecond ranges. Absolute times are seconds
 * with up to nine decimals, read exactly (no floating point); percentages are of the span
 * between the first and last sample, as perf computes them. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "report/timerange.h"

/* "SECONDS[.FRACTION]" into ns. Returns 0 or -EINVAL. */
static int parse_secs(const char *s, uint64_t *ret)
{
	uint64_t sec = 0, frac = 0;
	int digits = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		if (sec > (UINT64_MAX / 1000000000ULL - 9) / 10)
			return -EINVAL;
		sec = sec * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.')
		for (s++; isdigit((unsigned char)*s); s++)
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				digits++;
			}
	if (*s)
		return -EINVAL;
	for (; digits < 9; digits++)
		frac *= 10;
	*ret = sec * 1000000000ULL + frac;
	return 0;
}

/* "P%" into a fraction of 1. Returns 0 or -EINVAL. */
static int parse_pct(const char *s, double *ret)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || strcmp(end, "%") || !(v >= 0 && v <= 100))
		return -EINVAL;
	*ret = v / 100.0;
	return 0;
}

static int add(struct time_range **r, size_t *nr, uint64_t start, uint64_t end)
{
	struct time_range *n;

	if (start > end)
		return -EINVAL;
	n = realloc(*r, (*nr + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*r = n;
	n[(*nr)++] = (struct time_range){ start, end };
	return 0;
}

/* One percent item: "a%/n" (the n-th slice of a%) or "a%-b%". */
static int parse_pct_item(char *t, uint64_t first, uint64_t last, struct time_range **r,
			  size_t *nr)
{
	double span = (double)(last - first), a, b;
	char *sep;

	if ((sep = strchr(t, '/'))) {
		char *end;
		long n;

		*sep = 0;
		n = strtol(sep + 1, &end, 10);
		if (parse_pct(t, &a) < 0 || end == sep + 1 || *end || n < 1 || a * n > 1.0 + 1e-9)
			return -EINVAL;
		b = a * (double)n;
		a = b - a;
	} else if ((sep = strchr(t + 1, '-'))) {
		*sep = 0;
		if (parse_pct(t, &a) < 0 || parse_pct(sep + 1, &b) < 0 || a > b)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	/* as perf: rounded, and a slice that does not end the recording stops 1 ns short of the
	 * next one's start */
	{
		uint64_t start = first + (uint64_t)(span * a + 0.5);
		uint64_t end = first + (uint64_t)(span * b + 0.5);

		if (end > start && end != last)
			end--;
		return add(r, nr, start, end);
	}
}

/* One absolute range: "start,stop" with either side empty. */
static int parse_abs_item(char *t, struct time_range **r, size_t *nr)
{
	char *comma = strchr(t, ',');
	uint64_t start = 0, end = UINT64_MAX;

	if (!comma || strchr(comma + 1, ','))
		return -EINVAL;
	*comma = 0;
	if (*t && parse_secs(t, &start) < 0)
		return -EINVAL;
	if (comma[1] && parse_secs(comma + 1, &end) < 0)
		return -EINVAL;
	if (!*t && !comma[1])
		return -EINVAL;
	return add(r, nr, start, end);
}

int time_ranges__parse(const char *arg, uint64_t first, uint64_t last,
		       struct time_range **ret_ranges, size_t *ret_nr)
{
	_cleanup_free_ char *copy = strdup(arg ? arg : "");
	struct time_range *r = NULL;
	size_t nr = 0;
	char *save = NULL;
	int e = 0;

	if (!copy)
		return -ENOMEM;
	if (strchr(copy, '%')) {
		if (!first && !last)
			return -ENODATA;
		if (last < first)
			return -EINVAL;
		for (char *t = strtok_r(copy, ",", &save); t && !e; t = strtok_r(NULL, ",", &save))
			e = parse_pct_item(t, first, last, &r, &nr);
	} else {
		for (char *t = strtok_r(copy, " ", &save); t && !e; t = strtok_r(NULL, " ", &save))
			e = parse_abs_item(t, &r, &nr);
	}
	if (!e && !nr)
		e = -EINVAL;
	if (e) {
		free(r);
		return e;
	}
	*ret_ranges = r;
	*ret_nr = nr;
	return 0;
}

bool time_ranges__contains(const struct time_range *r, size_t nr, uint64_t t)
{
	if (!nr)
		return true;
	for (size_t i = 0; i < nr; i++)
		if (t >= r[i].start && t <= r[i].end)
			return true;
	return false;
}
