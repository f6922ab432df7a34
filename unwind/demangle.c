/* C++ demangling for symbol names: strips the ELF version suffix, then asks libstdc++'s
 * __cxa_demangle (always present since the programs link -lstdc++). Names that do not start
 * with _Z are never passed on: the demangler would accept some plain C names as types. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "unwind/demangle.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

size_t demangle__strip_version_len(const char *name)
{
	const char *at = strchr(name, '@');

	return at ? (size_t)(at - name) : strlen(name);
}

char *demangle__name(const char *name)
{
	size_t len;
	int status = 0;
	char *out;

	if (!name || name[0] != '_' || name[1] != 'Z') {
		errno = EINVAL;
		return NULL;
	}
	len = demangle__strip_version_len(name);
	_cleanup_free_ char *copy = strndup(name, len);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	out = __cxa_demangle(copy, NULL, NULL, &status);
	if (!out) {
		/* status -1: allocation failure; -2: not a valid name; -3: bad argument. */
		errno = status == -1 ? ENOMEM : EINVAL;
		return NULL;
	}
	return out;
}

/* Skips back over qualifiers that follow a parameter list; returns the new end. */
static size_t skip_qualifiers(const char *s, size_t end)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept",
					     " transaction_safe" };
	bool again = true;

	while (again) {
		again = false;
		for (size_t i = 0; i < sizeof(quals) / sizeof(quals[0]); i++) {
			size_t l = strlen(quals[i]);

			if (end >= l && !strncmp(s + end - l, quals[i], l)) {
				end -= l;
				again = true;
			}
		}
	}
	return end;
}

void demangle__strip_params(char *s)
{
	size_t len = strlen(s), end, clone = len, cut, split = 0;
	int depth = 0;

	/* GCC's clones ("f(int) [clone .cold]"): perf demangles without DMGL_PARAMS, and
	 * libiberty then never reads the clone suffix: "f". */
	while (clone > 0 && s[clone - 1] == ']') {
		char *open = NULL;

		for (size_t i = clone - 1; i > 0; i--)
			if (s[i] == '[') {
				open = s + i;
				break;
			}
		if (!open || strncmp(open, "[clone ", 7) || open == s || open[-1] != ' ')
			break;
		clone = (size_t)(open - 1 - s);
	}
	end = skip_qualifiers(s, clone);
	if (end == 0 || s[end - 1] != ')')
		return;
	/* The parameter list is the balanced (...) that ends the name. */
	cut = end;
	do {
		cut--;
		if (s[cut] == ')')
			depth++;
		else if (s[cut] == '(')
			depth--;
	} while (cut > 0 && depth > 0);
	if (depth != 0 || cut == 0)
		return;
	/* A template function's return type comes first, separated by a space outside any
	 * brackets; "operator new", "operator int" have spaces of their own, so stop there. */
	depth = 0;
	for (size_t i = 0; i < cut; i++) {
		char ch = s[i];

		if (depth == 0 && !strncmp(s + i, "operator", 8) &&
		    (i == 0 || s[i - 1] == ':' || s[i - 1] == ' '))
			break;
		if (ch == '<' || ch == '(' || ch == '[' || ch == '{')
			depth++;
		else if ((ch == '>' || ch == ')' || ch == ']' || ch == '}') && depth > 0)
			depth--;
		else if (ch == ' ' && depth == 0)
			split = i + 1;
	}
	s[cut] = '\0';
	if (split)
		memmove(s, s + split, strlen(s + split) + 1);
}

char *demangle__symbol(const char *name)
{
	static const char plt[] = "@plt";
	size_t len = name ? strlen(name) : 0, pl = sizeof(plt) - 1;
	char *d, *out;

	if (len > pl && !strcmp(name + len - pl, plt)) {
		/* perf demangles the dynsym name, then appends "@plt". */
		_cleanup_free_ char *base = strndup(name, len - pl);

		if (!base) {
			errno = ENOMEM;
			return NULL;
		}
		d = demangle__symbol(base);
		if (!d)
			return NULL;
		out = malloc(strlen(d) + pl + 1);
		if (out) {
			strcpy(out, d);
			strcat(out, plt);
		}
		free(d);
		if (!out)
			errno = ENOMEM;
		return out;
	}
	d = demangle__name(name);
	if (d)
		demangle__strip_params(d);
	return d;
}
