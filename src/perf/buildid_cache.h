/* perf's build-id cache (~/.debug), as perf record fills it: each file a recording names, with
 * its build id, is kept as DIR/PATH/HEX/elf (a hard link, or a copy across file systems) and
 * found by DIR/.build-id/HE/X... -> ../../PATH/HEX. perf report, and preport, then read a
 * program's symbols from there after it was rebuilt or stripped. */
#ifndef PRECORD_BUILDID_CACHE_H
#define PRECORD_BUILDID_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* Add the regular file path (absolute) with build id id (len bytes) to the cache in dir. An
 * entry already there is kept. Returns 0 or -errno. */
int buildid_cache__add(const char *dir, const char *path, const uint8_t *id, size_t len);

/* The cache of the user running us, into buf: $HOME/.debug when $HOME is an absolute path to a
 * directory of the effective user (perf takes $HOME as it is; a daemon or a sudo may pass on
 * another user's, which must not decide what this user reads or writes), else the password
 * database's home's. Returns buf, or NULL when there is none. */
const char *buildid_cache__default_dir(char *buf, size_t size);

#endif
