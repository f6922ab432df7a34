/* The tracing-data walk: magic "\027\010\104tracing", a version string, endianness, long size,
 * page size, two named header files, ftrace formats, then per subsystem its name and event
 * formats (each a u64 size and the text of tracefs's format file). Only the subsystems are
 * needed here; kallsyms, printk formats and cmdlines that follow are not read. A format names
 * its fields as "\tfield:TYPE NAME[N];\toffset:O;\tsize:S;". */
#include "perf/tracing_data.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct cur {
	const uint8_t *p;
	size_t left;
};

static int take(struct cur *c, void *out, size_t n)
{
	if (n > c->left)
		return -EBADMSG;
	if (out)
		memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
	return 0;
}

static int take_str(struct cur *c, const char **ret)
{
	const uint8_t *nul = memchr(c->p, 0, c->left);

	if (!nul)
		return -EBADMSG;
	*ret = (const char *)c->p;
	return take(c, NULL, (size_t)(nul - c->p) + 1);
}

/* Skip a u64-sized blob; its bytes in *ret (may be NULL). */
static int take_blob(struct cur *c, const uint8_t **ret, size_t *ret_len)
{
	uint64_t n;

	if (take(c, &n, 8) < 0 || n > c->left)
		return -EBADMSG;
	if (ret) {
		*ret = c->p;
		*ret_len = (size_t)n;
	}
	return take(c, NULL, (size_t)n);
}

/* The value of "KEY:NUMBER;" at the start of p (p < end). */
static int number_after(const char *p, const char *end, const char *key, uint32_t *ret)
{
	size_t kl = strlen(key);
	unsigned long v = 0;
	int digits = 0;

	if ((size_t)(end - p) < kl || memcmp(p, key, kl))
		return -EBADMSG;
	for (p += kl; p < end && *p >= '0' && *p <= '9' && digits < 9; p++, digits++)
		v = v * 10 + (unsigned long)(*p - '0');
	if (!digits || p >= end || *p != ';')
		return -EBADMSG;
	*ret = (uint32_t)v;
	return 0;
}

/* Look for field in one format text. */
static int find_field(const char *fmt, size_t len, const char *field, uint32_t *ret_offset,
		      uint32_t *ret_size)
{
	const char *end = fmt + len, *line = fmt;
	size_t fl = strlen(field);

	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *semi, *name;

		if (!eol)
			eol = end;
		/* "\tfield:unsigned long prev_state;\toffset:32;\tsize:8;\tsigned:1;" */
		if (eol - line > 7 && !memcmp(line, "\tfield:", 7) &&
		    (semi = memchr(line, ';', (size_t)(eol - line)))) {
			const char *nend = semi;

			if (nend > line && nend[-1] == ']') /* an array: "char prev_comm[16]" */
				while (nend > line && *nend != '[')
					nend--;
			for (name = nend; name > line + 7 && name[-1] != ' '; name--)
				;
			if ((size_t)(nend - name) == fl && !memcmp(name, field, fl)) {
				const char *o = semi + 1;

				if (o < eol && *o == '\t')
					o++;
				if (number_after(o, eol, "offset:", ret_offset) < 0)
					return -EBADMSG;
				o = memchr(o, ';', (size_t)(eol - o)) + 1;
				if (o < eol && *o == '\t')
					o++;
				return number_after(o, eol, "size:", ret_size);
			}
		}
		line = eol + 1;
	}
	return -ENOENT;
}

int tracing_data__field(const void *payload, size_t len, const char *sys, const char *event,
			const char *field, uint32_t *ret_offset, uint32_t *ret_size)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct cur c = { payload, len };
	const char *str;
	uint32_t n;
	size_t el = strlen(event);

	if (!payload || len < sizeof(magic) || memcmp(payload, magic, sizeof(magic)))
		return -EBADMSG;
	take(&c, NULL, sizeof(magic));
	if (take_str(&c, &str) < 0 || take(&c, NULL, 2 + 4) < 0)  /* version; endian, long; page */
		return -EBADMSG;
	for (int i = 0; i < 2; i++)                                  /* header_page, header_event */
		if (take_str(&c, &str) < 0 || take_blob(&c, NULL, NULL) < 0)
			return -EBADMSG;
	if (take(&c, &n, 4) < 0)                                     /* ftrace formats */
		return -EBADMSG;
	for (uint32_t i = 0; i < n; i++)
		if (take_blob(&c, NULL, NULL) < 0)
			return -EBADMSG;
	if (take(&c, &n, 4) < 0)                                     /* subsystems */
		return -EBADMSG;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nev;
		const char *name;

		if (take_str(&c, &name) < 0 || take(&c, &nev, 4) < 0)
			return -EBADMSG;
		for (uint32_t j = 0; j < nev; j++) {
			const uint8_t *fmt;
			size_t fl;

			if (take_blob(&c, &fmt, &fl) < 0)
				return -EBADMSG;
			if (strcmp(name, sys) || fl < 7 + el || memcmp(fmt, "name: ", 6) ||
			    memcmp(fmt + 6, event, el) || (fl > 6 + el && fmt[6 + el] != '\n'))
				continue;
			return find_field((const char *)fmt, fl, field, ret_offset, ret_size);
		}
	}
	return -ENOENT;
}
