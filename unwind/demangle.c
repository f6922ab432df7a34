/* C++ demangling for symbol names: strips the ELF version suffix, then asks libstdc++'s
 * __cxa_demangle (always present since the programs link -lstdc++). Names that do not start
 * with _Z are never passed on: the demangler would accept some plain C names as types. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "demangle.h"

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
