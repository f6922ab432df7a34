/* C++ symbol demangling through libstdc++'s __cxa_demangle. Only Itanium-mangled names (_Z...)
 * are touched; an ELF version suffix (@VER or @@VER) is stripped first, since the demangler
 * rejects it. Thread safe: __cxa_demangle keeps no shared state. */
#ifndef PRECORD_DEMANGLE_H
#define PRECORD_DEMANGLE_H

#include <stddef.h>

/* The demangled form of name, malloc'd. Returns NULL with errno EINVAL when name is not a
 * mangled C++ name (or does not demangle), ENOMEM when out of memory. ~1 us and a few mallocs
 * per call: callers cache the result. */
char *demangle__name(const char *name);

/* Shortens a demangled name in place to what perf report shows by default: no parameter
 * list, no cv/ref qualifiers after it and no return type before a template function, e.g.
 * "int max<int>(int, int)" -> "max<int>", "ns::A::f(int) const" -> "ns::A::f", and no GCC clone
 * suffix ("f(int) [clone .isra.0]" -> "f"), as libiberty prints without DMGL_PARAMS. Names that are
 * not functions ("vtable for X") are left as they are. Never fails. */
void demangle__strip_params(char *name);

/* The name perf report shows for a raw symbol name, malloc'd: the demangled name without
 * parameters (demangle__strip_params), a trailing "@plt" kept ("_Z3fooi@plt" -> "foo@plt").
 * NULL with errno EINVAL when name is not C++ (the raw name is shown), ENOMEM. */
char *demangle__symbol(const char *name);

/* Length of name without its @VERSION / @@VERSION suffix. */
size_t demangle__strip_version_len(const char *name);

#endif
