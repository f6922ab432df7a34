/* The cgroup hierarchy as perf sees it: where it is mounted (v2, or a v1 controller's), and the id of a cgroup (the
 * kernel's cgroup id, which PERF_SAMPLE_CGROUP and PERF_RECORD_CGROUP carry, read as the 8-byte
 * file handle of its directory, as perf reads it). */
#ifndef PRECORD_LIB_CGROUPFS_H
#define PRECORD_LIB_CGROUPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Undo mountinfo's octal escapes (\040 for a space, \134 for a backslash) in s, in place. */
void cgroupfs__unescape(char *s);

/* Whether the comma-separated list (mount options, a /proc/PID/cgroup controller field) holds
 * tok as one of its items. */
bool cgroupfs__list_has(const char *list, const char *tok);

/* The first cgroup2 mount in /proc/self/mountinfo (v1_controller given: the first cgroup v1
 * mount with that controller, "freezer"): its mount point and its root inside the hierarchy,
 * unescaped, malloc'd. Returns 0, -ENOENT when none is mounted, -ENOMEM, or -errno of reading
 * mountinfo. */
int cgroupfs__mount(const char *v1_controller, char **ret_point, char **ret_root);

/* The first cgroup2 mount point in /proc/self/mountinfo ("/sys/fs/cgroup", or
 * "/sys/fs/cgroup/unified" on a hybrid machine) into buf. Returns 0, -ENOENT when none is
 * mounted, -ENAMETOOLONG, or -errno of reading mountinfo. */
int cgroupfs__v2_mount(char *buf, size_t len);

/* The cgroup id of the cgroup directory at path. Returns 0 or -errno (-EOVERFLOW when the
 * file system's handles are not 8-byte cgroup ids). */
int cgroupfs__id(const char *path, uint64_t *ret_id);

/* The systemd unit a cgroup path belongs to: its innermost component ending in .service or
 * .scope, else its innermost .slice, else NULL (the root, or a cgroup systemd did not make).
 * "/system.slice/nginx.service" -> "nginx.service"; "/user.slice/user-1000.slice/
 * user@1000.service/app.slice/foo.service" -> "foo.service". Written into buf (NUL-terminated,
 * cut to len); returns buf or NULL. */
const char *cgroupfs__unit(const char *path, char *buf, size_t len);

#endif
